"""What the spawn server accepts in ``Hello`` beyond the control schema's JSON types, and
where its log goes.

:func:`hello_segments` and :func:`hello_config` check every field a client sends (a
hostile client may send anything the schema's types allow) and raise
``ProtocolMismatch("Hello.<field>")``, which the server sends as a ``Fatal`` before it
exits -- never a traceback:

- ``segments``: exactly the command and stage segments, each ``{"seg": int, "size": int}``
  once; the command ring's capacity a power of two in ``[MIN_RING, MAX_SEGMENT]``, the
  stage's size a multiple of ``kMGPipeRecordAlign`` in ``[1, MAX_SEGMENT]`` (no float, no
  bool: a size of 65536.5 is refused, not truncated);
- ``config``: only the keys :data:`CONFIG` names, each of its type.

**The log** is the server's own: its path is the server process's environment variable
:data:`SERVE_LOG_ENV` (what whoever starts the server configures; the spawn transport
sets it in the child's environment from its own ``config["log"]``), never a field of the
client's ``Hello``. :func:`log_line` escapes every character that is not printable, so a
client's ``tag`` cannot inject a line.
"""

from __future__ import annotations

import os
from typing import Any

from ..schema import tables as _t
from ..wire.stage import stage_align
from .framing import ProtocolMismatch

__all__ = ["SERVE_LOG_ENV", "CONFIG", "MIN_RING", "MAX_SEGMENT", "hello_segments",
           "hello_config", "log_line", "append_log"]  # fmt: skip

#: the server's log file (its own environment; one line per start, one per fatal).
SERVE_LOG_ENV = "MGPIPE_SERVE_LOG"
#: Hello.config key -> its JSON type.
CONFIG: dict[str, type | tuple[type, ...]] = {"backend": str, "tag": str, "summary": list,
                                               "capture": bool}  # fmt: skip
MIN_RING = 4096
MAX_SEGMENT = 1 << 34


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def hello_segments(segments: Any) -> dict[int, int]:
    """``{seg id: size}`` of a well-formed segment table (see the module)."""
    seg_cmd, seg_stage = int(_t.constant("kMGPipeSegCmd")), int(_t.constant("kMGPipeSegStage"))
    out: dict[int, int] = {}
    for row in segments:
        if not isinstance(row, dict) or set(row) != {"seg", "size"}:
            raise ProtocolMismatch("Hello.segments")
        seg, size = row["seg"], row["size"]
        if not _int(seg) or not _int(size) or seg in out:
            raise ProtocolMismatch("Hello.segments")
        out[seg] = size
    seg_reply, seg_event = int(_t.constant("kMGPipeSegReply")), int(_t.constant("kMGPipeSegEvent"))
    if set(out) != {seg_cmd, seg_stage, seg_reply, seg_event}:
        raise ProtocolMismatch("Hello.segments")
    ring, stage = out[seg_cmd], out[seg_stage]
    if not MIN_RING <= ring <= MAX_SEGMENT or ring & (ring - 1):
        raise ProtocolMismatch("Hello.segments.Cmd")
    if not 1 <= stage <= MAX_SEGMENT or stage % stage_align():
        raise ProtocolMismatch("Hello.segments.Stage")
    for seg, name in ((seg_reply, "Reply"), (seg_event, "Event")):
        if not 1 <= out[seg] <= MAX_SEGMENT or out[seg] % stage_align():
            raise ProtocolMismatch(f"Hello.segments.{name}")
    return out


def hello_config(config: dict[str, Any]) -> dict[str, Any]:
    for key, value in config.items():
        typ = CONFIG.get(key)
        if typ is None or not isinstance(value, typ) or (typ is not bool and isinstance(value, bool)):
            raise ProtocolMismatch(f"Hello.config.{key}")
    if not all(isinstance(v, str) for v in config.get("summary", [])):
        raise ProtocolMismatch("Hello.config.summary")
    return dict(config)


def log_line(text: str) -> str:
    """``text`` with every non-printable character escaped (one line, whatever it holds)."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256
                   else f"\\u{ord(c):04x}" for c in text)  # fmt: skip


def append_log(text: str) -> None:
    """One line to the server's own log (:data:`SERVE_LOG_ENV`); nothing when unset or
    when the path cannot be written (a log is never a reason to fail)."""
    path = os.environ.get(SERVE_LOG_ENV)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(log_line(text) + "\n")
    except OSError:
        pass
