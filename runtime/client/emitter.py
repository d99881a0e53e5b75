"""The client's one way out: encode a record, submit it, count it, wait if its class asks."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..schema import tables as _t
from ..transport.base import Transport
from ..wire.codec import Encoder
from ..wire.stage import BlobRef, StageSegment

__all__ = ["Emitter"]


class Emitter:
    """Encoder + transport + counters; a barrier after every call whose wait class asks."""

    def __init__(self, transport: Transport, stage: StageSegment) -> None:
        self.transport = transport
        self.stage = stage
        self.encoder = Encoder(stage)
        self.records = 0
        self.wire_bytes = 0
        self.staged_bytes = 0  # blob bytes that went through SEG_STAGE, not the ring
        self.by_call: Counter[str] = Counter()
        mod = _t.tables()
        self._wait = {c["name"]: c["wait_class"] for c in mod.CALLS}

    def room(self, nbytes: int) -> None:
        """Make ``nbytes`` of stage space (drain, then rewind: the stage reset rule)."""
        if self.stage.free < nbytes + 8:
            self.transport.wait_applied()
            self.stage.reset()

    def stage_bytes(self, data: bytes) -> BlobRef:
        self.staged_bytes += len(data)
        return self.stage.stage(data)

    def emit(
        self, call: str, payload: dict[str, Any] | None = None, tails: tuple = (),
        blob: bytes | None = None,
    ) -> int:  # fmt: skip
        if blob is not None:
            self.room(len(blob))
            self.staged_bytes += len(blob)
        rec = self.encoder.encode(call, payload, tails, blob)
        seq = self.transport.submit(rec)
        self.records += 1
        self.wire_bytes += len(rec)
        self.by_call[call] += 1
        if self._wait[call] != "kWaitNone":
            self.transport.wait_applied(seq)
        return seq
