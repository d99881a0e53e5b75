"""The client's one way out: encode a record, submit it, count it, wait if its class asks.

Two doors: :meth:`Emitter.emit` builds any record from a nested dict (the cold calls:
creates, deletes, state that changed), and :meth:`Emitter.fast` compiles, once, a writer
for a hot call of fixed shape (``DrawVbo``, ``BindRenderState``, ``SetDynamicState``) that
packs straight into the transport (the ring, or the monolith's scratch record) with one
``struct.pack_into``.

Waits follow the wait class (``CALLS[*]["wait_class"]``), with one rule of seed 002 §2.5:
the buffer half of ``ResourceSubData`` is fire-and-forget (only the texture half waits).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from operator import attrgetter, mul
from types import CellType
from typing import Any

from ..schema import tables as _t
from ..transport.base import Transport, door_cell
from ..wire.codec import Encoder
from ..wire.compiled import packer
from ..wire.stage import BlobRef, StageSegment

__all__ = ["Emitter"]

_NO_WAIT = "kWaitNone"
_first = attrgetter("cell_contents")
_SUBDATA = "ResourceSubData"  # its buffer half never waits (seed 002 §2.5)


class Emitter:
    """Encoder + transport + counters; a barrier after every call whose wait class asks."""

    def __init__(self, transport: Transport, stage: StageSegment) -> None:
        self.transport = transport
        self.stage = stage
        self.encoder = Encoder(stage)
        # the general door's counts; each compiled door keeps its own record count in a
        # cell (one list store in its frame), summed only when asked
        self._records = 0
        self._wire_bytes = 0
        self._by_call: Counter[str] = Counter()
        self._doors: list[tuple[str, int, CellType]] = []  # (call, record size, count cell)
        self._cells: list[CellType] = []  # the doors' count cells, and their record sizes
        self._sizes: list[int] = []
        self._staged0 = stage.staged  # what was staged before this emitter
        mod = _t.tables()
        self._wait = {c["name"]: c["wait_class"] != _NO_WAIT for c in mod.CALLS}
        #: kWaitPresent calls: the client's present credit decides their wait, not this door
        self._present = frozenset(c["name"] for c in mod.CALLS if c["wait_class"] == "kWaitPresent")
        #: ``waiter(seq, call)``: a blocking wait (the reverse link's, which drains the event
        #: ring and counts the round trip), or the transport's own
        self.waiter: Callable[[int, str], None] = lambda seq, call: self.transport.wait_applied(seq)
        self._buffer_target = _t.enum("MGPipeResourceTarget")["Buffer"]

    # -- what went out ------------------------------------------------------------
    @property
    def records(self) -> int:  # no Python frame below this one (it is read per setter by
        # the bench's per-setter strategy)
        return self._records + sum(map(_first, self._cells))

    @property
    def wire_bytes(self) -> int:
        return self._wire_bytes + sum(map(mul, self._sizes, map(_first, self._cells)))

    @property
    def by_call(self) -> Counter[str]:
        """Records per call (a new Counter: reading it is not on any hot path)."""
        out = Counter(self._by_call)
        for call, _, cell in self._doors:
            if cell.cell_contents:
                out[call] += cell.cell_contents
        return out

    def room(self, nbytes: int) -> None:
        """Make ``nbytes`` of stage space (drain, then rewind: the stage reset rule)."""
        stage = self.stage
        need = nbytes + stage.granule
        if stage.free < need:
            self.waiter(self.transport.emit_seq, "Stage.Drain")
            if stage.limit - stage.base >= need:
                stage.reset()
            else:  # larger than a frame's region: the whole segment (this frame drains)
                stage.widen()

    @property
    def staged_bytes(self) -> int:
        """Blob bytes that went through SEG_STAGE, not the ring (the stage counts them)."""
        return self.stage.staged - self._staged0

    def stage_bytes(self, data: bytes) -> BlobRef:
        return self.stage.stage(data)

    def stage_blob(self, data: bytes) -> BlobRef:
        """Stage a blob a fast record names (room first: the stage reset rule)."""
        stage = self.stage
        if stage.limit - stage.used < len(data) + stage.granule:  # :meth:`room`'s test inline
            self.room(len(data))
        return stage.stage(data)

    def fast(self, call: str, names: Sequence[str], tail_names: Sequence[str] | None = None,
             tail_count: int = 1, tail_element: str | None = None,
             memo: int = 0) -> Callable[..., None]:  # fmt: skip
        """A compiled ``emit(*values)`` for ``call``, values in the order of ``names`` then,
        per tail element, ``tail_names``; it returns nothing (the record's seq is the
        transport's ``emit_seq`` after it). Calls that wait never take this door.

        ``memo`` > 0: the door remembers up to that many records by their values and
        sends a remembered one without packing it (for records whose values repeat, such
        as draws; only when every packed member is an integer -- equal values, equal
        bytes -- and the transport's door can)."""
        if self._wait[call]:
            raise ValueError(f"{call} waits after it is sent: use emit()")
        pk = packer(call, tuple(names), None if tail_names is None else tuple(tail_names),
                    tail_count, tail_element)  # fmt: skip
        size = pk.size
        if pk.direct is not None:  # one C call per record: the header's values lead
            pack, prefix = pk.direct, pk.prefix
        else:
            pack, prefix = pk.pack_into, ()
        door = getattr(self.transport, "door", None)
        if memo and (pk.direct is None or any(c in pk.direct.__self__.format for c in "efd")):
            memo = 0  # a float member: -0.0 == 0.0 as a key, not as bytes
        if door is not None:  # the transport packs, sends and counts in one frame
            emit = door(size, pack, prefix, memo) if memo else door(size, pack, prefix)
        else:
            put, sent = self.transport.put, 0

            def emit(*values: Any) -> None:
                nonlocal sent
                put(size, pack, prefix + values)
                sent += 1

        cell = door_cell(emit)  # the door's record count
        self._doors.append((call, size, cell))
        self._cells.append(cell)
        self._sizes.append(size)

        #: True when ``names`` are in the payload's memory order: one C call per record
        #: (a layout that moved a member makes it False, and the hot path one frame slower)
        emit.direct = pk.direct is not None  # type: ignore[attr-defined]
        return emit

    @property
    def last_cell(self) -> CellType:
        """The record-count cell of the door :meth:`fast` made last (the door's own: a
        caller that wraps the door it was given still counts in it)."""
        return self._cells[-1]

    def emit(
        self, call: str, payload: dict[str, Any] | None = None, tails: tuple = (),
        blob: bytes | None = None, *, wait: bool = True,
    ) -> int:  # fmt: skip
        """Encode, submit, count; then wait if the call's class asks (``wait=False``: the
        caller reads the reply itself)."""
        if blob is not None:
            self.room(len(blob))
        rec = self.encoder.encode(call, payload, tails, blob)
        seq = self.transport.submit(rec)
        self._records += 1
        self._wire_bytes += len(rec)
        self._by_call[call] += 1
        if wait and self._wait[call] and call not in self._present and not (
                call == _SUBDATA and payload is not None
                and payload.get("Target") == self._buffer_target):  # fmt: skip
            self.waiter(seq, call)
        return seq
