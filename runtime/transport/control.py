"""Control messages (seed 001 §11.4 ``CtrlMsg``): the rare, variable-size traffic.

A message is a frame payload ``[u16 tag][u16 0][canonical JSON object]``. Each message
kind declares its fields and their JSON types (:data:`SCHEMA`); encoding and decoding
both refuse an undeclared field, a missing one or a wrong type
(``ProtocolMismatch("<Kind>.<field>")``); decoding refuses text that is not JSON
(``"<Kind>.Json"``) and JSON nested too deep to parse (``"<Kind>.Depth"``).
Rule G (seed 004): no declared field is a process-local handle -- no descriptor number,
pid, address or EGL value; descriptors cross only through ``SCM_RIGHTS`` beside a frame.

Tags only ever get appended.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from .framing import ProtocolMismatch

__all__ = ["CONTROL_ABI", "Message", "SCHEMA", "TAGS", "encode", "decode"]

_TAG = struct.Struct("<HH")
#: Version of this control protocol (``Hello.abi`` / ``Welcome.abi``).
CONTROL_ABI = 1

#: kind -> {field: JSON type}.  ``Hello`` and ``Welcome`` carry the segment table as
#: ``[{"seg": id, "size": bytes}]`` in the order their descriptors travel.
SCHEMA: dict[str, dict[str, type | tuple[type, ...]]] = {
    "Hello": {"abi": int, "fingerprint": str, "config": dict, "segments": list},
    "Welcome": {"abi": int, "fingerprint": str, "segments": list, "backend": str},
    "Fatal": {"kind": str, "reason": str},
    "Close": {"report": bool},
    "Report": {"applied_seq": int, "cpu_ns": int, "knocks": int, "parks": int,
               "summary": dict},  # fmt: skip
}
#: kind -> wire tag (append only).
TAGS: dict[str, int] = {"Hello": 1, "Welcome": 2, "Fatal": 3, "Close": 4, "Report": 5}
_KIND_OF = {tag: kind for kind, tag in TAGS.items()}


@dataclass(frozen=True)
class Message:
    kind: str
    body: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.body[name]


def _check(kind: str, body: dict[str, Any]) -> None:
    fields = SCHEMA[kind]
    for name in body:
        if name not in fields:
            raise ProtocolMismatch(f"{kind}.{name}")
    for name, typ in fields.items():
        value = body.get(name)
        if (
            name not in body
            or not isinstance(value, typ)
            or isinstance(value, bool) != (typ is bool)
        ):
            raise ProtocolMismatch(f"{kind}.{name}")


def encode(kind: str, /, **body: Any) -> bytes:
    if kind not in TAGS:
        raise ValueError(f"unknown control message {kind!r}")
    _check(kind, body)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return _TAG.pack(TAGS[kind], 0) + text.encode()


def decode(payload: bytes) -> Message:
    """The message in a frame payload; ProtocolMismatch names what is wrong."""
    if len(payload) < _TAG.size:
        raise ProtocolMismatch("Ctrl.Short")
    tag, zero = _TAG.unpack_from(payload)
    kind = _KIND_OF.get(tag)
    if kind is None or zero:
        raise ProtocolMismatch("Ctrl.Tag")
    try:
        body = json.loads(payload[_TAG.size :])
    except ValueError:
        raise ProtocolMismatch(f"{kind}.Json") from None
    except RecursionError:  # nested past the interpreter's stack: refused by name
        raise ProtocolMismatch(f"{kind}.Depth") from None
    if not isinstance(body, dict):
        raise ProtocolMismatch(f"{kind}.Json")
    _check(kind, body)
    return Message(kind, body)
