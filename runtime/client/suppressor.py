"""Set-hash suppressors for the ``kVarTail`` ``set_*`` calls (seed 001 §5.4, seed 004 §5.4).

Each emission hashes the resolved set (xxh64 over the fixed-prefix values and every tail's
bytes) and is skipped when the hash equals the last one sent on the same slot. A slot is
a call name, plus the buffer class for ``SetShaderBuffers`` (seed 002: one slot per
class, ``kMGPipeShaderBufferClassCount`` of them). The hash rides in the payload's
``ContentHash`` member where the payload has one.

The calls suppressed are exactly the ``kVarTail`` rows of ``CALLS`` whose class is
``kCtxState`` (the ``set_*`` / ``bind_*`` state calls), plus ``SetFramebufferState``
(``MGPFramebufferState::ContentHash`` is both the render-pass memo key and an emission
suppressor, seed 001 §4.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import xxhash

from ..schema import tables as _t

__all__ = ["suppressed_calls", "has_content_hash", "SetHashSuppressor"]

_CONTENT_HASH = "ContentHash"
_PER_CLASS = "SetShaderBuffers"
_EXTRA = ("SetFramebufferState",)


@lru_cache(maxsize=None)
def suppressed_calls() -> tuple[str, ...]:
    mod = _t.tables()
    var = tuple(
        c["name"] for c in mod.CALLS if "kVarTail" in c["flags"] and c["class"] == "kCtxState"
    )
    return var + tuple(n for n in _EXTRA if n in mod.OPCODE)


@lru_cache(maxsize=None)
def has_content_hash(call: str) -> bool:
    payload = _t.tables().CALL_BY_OPCODE[_t.tables().OPCODE[call]]["payload"]
    return any(m["name"] == _CONTENT_HASH for m in _t.struct_info(payload)["members"])


def _bytes(part: Any) -> bytes:
    if isinstance(part, np.ndarray | np.void):
        return part.tobytes()
    if isinstance(part, (bytes, bytearray, memoryview)):
        return bytes(part)
    if hasattr(part, "pack"):  # a Handle: its wire bytes
        return bytes(part.pack())
    return repr(part).encode()


class SetHashSuppressor:
    """Last-sent set hash per slot; :meth:`offer` answers emit (the hash) or skip (None)."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, int], int] = {}
        self.emitted = 0
        self.skipped = 0
        self.hashes = 0

    @staticmethod
    def slot(call: str, payload: dict[str, Any]) -> tuple[str, int]:
        if call == _PER_CLASS:
            cls = int(payload["Class"])
            if not 0 <= cls < _t.constant("kMGPipeShaderBufferClassCount"):
                raise ValueError(f"{call}: buffer class {cls} out of range")
            return call, cls
        return call, 0

    @staticmethod
    def set_hash(call: str, payload: dict[str, Any], tails: Sequence[Any]) -> int:
        h = xxhash.xxh64()
        h.update(call.encode())
        for k in sorted(payload):
            if k != _CONTENT_HASH:
                h.update(k.encode() + b"=" + _bytes(payload[k]) + b";")
        for t in tails:
            h.update(b"|" + _bytes(t))
        return h.intdigest()

    def offer(self, call: str, payload: dict[str, Any], tails: Sequence[Any] = ()) -> int | None:
        """The set hash if the record must be sent (and remember it), else None (skip)."""
        if call not in suppressed_calls():
            raise ValueError(
                f"{call} is not a suppressed set call ({', '.join(suppressed_calls())})"
            )
        self.hashes += 1
        key = self.slot(call, payload)
        digest = self.set_hash(call, payload, tails)
        if self._last.get(key) == digest:
            self.skipped += 1
            return None
        self._last[key] = digest
        self.emitted += 1
        return digest

    def forget(self, call: str | None = None) -> None:
        """Drop remembered hashes (all, or one call's) so the next offer is sent."""
        if call is None:
            self._last.clear()
        else:
            self._last = {k: v for k, v in self._last.items() if k[0] != call}
