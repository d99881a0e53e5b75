"""The SPSC command ring (seed 001 §4, §11.2, §11.3, §11.6).

One byte ring over a caller-supplied buffer (a ``bytearray`` by default; any writable
buffer works, e.g. a shared-memory mapping). Capacity is a power of two. Cursors are
monotonic byte counts that never reset, masked by ``capacity - 1``:

- producer: ``_write`` (committed, private) and ``head`` (published to the consumer);
- consumer: ``_read`` (popped, private) and ``tail`` (released back to the producer).

Every record starts with ``MGPWireRecHeader{Op, Flags, Size}`` (layout from the
tables); ``Size`` includes the header and is a multiple of :data:`RECORD_ALIGN`. ``Op``
0 is the wrap pad: :meth:`Ring.try_reserve` emits one when a record would straddle the
end of the buffer, and the consumer skips it (pads never reach a sink and are not
counted in any sequence number). One record may be at most ``capacity // 2`` bytes;
larger ones are refused with :class:`RingOverrun` (R-10: never split).

Sequence numbers are record ordinals: ``emit_seq`` counts committed records,
``applied_seq`` counts records the consumer has released (§11.6: no seq on the wire).

Two :class:`Doorbell` objects carry the parked-flag protocol of §11.3: ``data_bell``
(producer -> consumer, rung by :meth:`Ring.publish`) and ``space_bell`` (consumer ->
producer, rung by :meth:`Ring.release`; serves space back-pressure and
:meth:`Ring.wait_applied`). A bell rings only when its waiter is parked.

**Shared memory.** Both the record bytes and the shared cursors may live in memory the
caller provides, so producer and consumer can be two processes over one mapping:

- ``buffer``: ``capacity`` bytes for the records (e.g. an ``mmap`` slice);
- ``control``: :data:`CONTROL_SIZE` bytes (8-aligned) holding, as little-endian ``u64``
  slots in the order of :data:`CONTROL_SLOTS`, ``head``, ``tail``, ``published_seq``,
  ``applied_seq``, the two bells' parked flags (count of parked waiters) and ``dead``;
- ``attach=False`` (the creator) zeroes the control area; ``attach=True`` (the peer)
  takes its private cursors from it;
- ``data_bell`` / ``space_bell``: doorbells to use instead of the in-process ones (a
  cross-process transport passes bells that wake the other process; their ``parked``
  state should live in the control area's flag slots, as the default bells' does).

Each shared slot has one writer (``head``, ``published_seq``: the producer; ``tail``,
``applied_seq``: the consumer), written only after the bytes it publishes. An aligned
8-byte store is single-copy atomic on x86-64 and AArch64; Python issues no fences, so a
transport across processes on a weakly ordered CPU adds its own barrier at publish.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from ..errors import BarrierTimeout, ProtocolCorruption, RingOverrun
from ..schema import tables as _t
from ..wire.header import PAD_OP, record_align, check_record, header_size, pack_header, read_header
from ..wire.records import layout
from .doorbell import DEFAULT_SPIN_S, Doorbell

__all__ = ["DEFAULT_TIMEOUT_S", "CONTROL_SLOTS", "CONTROL_SIZE", "RELEASE_EVERY", "Ring"]

#: The control area's u64 slots, in order (see the module docstring).
CONTROL_SLOTS = ("head", "tail", "published_seq", "applied_seq", "data_parked",
                 "space_parked", "dead")  # fmt: skip
CONTROL_SIZE = 8 * len(CONTROL_SLOTS)
_HEAD, _TAIL, _PUB, _APPLIED, _DATA_PARKED, _SPACE_PARKED, _DEAD = range(len(CONTROL_SLOTS))

#: applied records between two releases of ``tail`` / ``applied_seq`` by :meth:`Ring.drain`
#: (§11.6: "the consumer updates appliedSeq every 64 records"; it also releases whenever
#: it leaves the drain and while the producer is parked waiting on it)
RELEASE_EVERY = 64

#: Budget of an ordinary verb / capacity wait (seed 001 §17.1: 30 s -> BarrierTimeout).
DEFAULT_TIMEOUT_S = 30.0


def _overrun_reason(op: int | None, size: int) -> str:
    name = _t.call_name(op) if op is not None else None
    return name if name is not None else f"{size}B"


class Ring:
    """Single-producer single-consumer record ring (see the module docstring)."""

    def __init__(
        self,
        capacity: int,
        buffer: bytearray | memoryview | None = None,
        *,
        spin_s: float = DEFAULT_SPIN_S,
        control: bytearray | memoryview | None = None,
        attach: bool = False,
        data_bell: Doorbell | None = None,
        space_bell: Doorbell | None = None,
    ) -> None:
        hdr = header_size()
        if capacity < 2 * hdr or capacity & (capacity - 1):
            raise ValueError(f"ring capacity {capacity} is not a power of two >= {2 * hdr}")
        if buffer is None:
            buffer = bytearray(capacity)
        view = memoryview(buffer).cast("B")
        if view.readonly or len(view) < capacity:
            raise ValueError(f"ring buffer must be writable and hold {capacity} bytes")
        self.capacity = capacity
        self.max_record = capacity // 2
        self._align = record_align()
        hl = layout("MGPWireRecHeader")
        paths = [f.path for f in hl.flat]
        self._hunpack = struct.Struct("<" + hl.fmt).unpack_from
        self._i_op, self._i_size = paths.index("Op"), paths.index("Size")
        self._mask = capacity - 1
        self._hdr_size = hdr
        self._buf = view[:capacity]
        self._ro = self._buf.toreadonly()
        if control is None:
            control = bytearray(CONTROL_SIZE)
        ctl = memoryview(control).cast("B")
        if ctl.readonly or len(ctl) < CONTROL_SIZE:
            raise ValueError(f"ring control area must be writable and hold {CONTROL_SIZE} bytes")
        self._ctl = ctl[:CONTROL_SIZE].cast("Q")
        if not attach:
            for i in range(len(CONTROL_SLOTS)):
                self._ctl[i] = 0
        # producer side (private cursors; the shared ones are in the control area)
        self._write = self._ctl[_HEAD]
        self._pending: tuple[int, int] | None = None  # (pad bytes, record bytes)
        self.emit_seq = self._ctl[_PUB]
        #: the producer's copy of ``published_seq`` (what it last published: only it writes
        #: the slot), and how far ``_write`` may run with no look at ``tail``: the end of
        #: its lap or of the space released when last looked (:meth:`_refill`), whichever
        #: is nearer -- both only ever behind the truth (``tail`` and laps only grow)
        self._published = self.emit_seq
        self._end = 0
        # consumer side
        self._read = self._ctl[_TAIL]
        self._popped = self._ctl[_APPLIED]
        self.corrupt: str | None = None
        self.data_bell = data_bell or Doorbell(spin_s, flags=self._ctl, slot=_DATA_PARKED)
        self.space_bell = space_bell or Doorbell(spin_s, flags=self._ctl, slot=_SPACE_PARKED)
        #: set by the consumer's owner to stop :meth:`drain` before its next record
        self.halted = False
        #: records :meth:`drain` applies between two releases (§11.6: "every 64")
        self.release_every = RELEASE_EVERY

    # -- the shared cursors (control area) -----------------------------------
    @property
    def head(self) -> int:
        """Bytes published by the producer (monotonic)."""
        return self._ctl[_HEAD]

    @head.setter
    def head(self, value: int) -> None:
        self._ctl[_HEAD] = value

    @property
    def tail(self) -> int:
        """Bytes released by the consumer (monotonic)."""
        return self._ctl[_TAIL]

    @tail.setter
    def tail(self, value: int) -> None:
        self._ctl[_TAIL] = value

    @property
    def published_seq(self) -> int:
        return self._ctl[_PUB]

    @published_seq.setter
    def published_seq(self, value: int) -> None:
        self._ctl[_PUB] = self._published = value

    @property
    def applied_seq(self) -> int:
        return self._ctl[_APPLIED]

    @applied_seq.setter
    def applied_seq(self, value: int) -> None:
        self._ctl[_APPLIED] = value

    @property
    def dead(self) -> bool:
        return bool(self._ctl[_DEAD])

    # -- producer -----------------------------------------------------------
    def _need(self, size: int) -> int:
        """Bytes the next reservation of ``size`` takes (pad included)."""
        to_end = self.capacity - (self._write & self._mask)
        return size if size <= to_end else to_end + size

    def _fits(self, size: int) -> bool:
        return (self._write - self.tail) + self._need(size) <= self.capacity

    def _refill(self, w: int) -> int:
        """Look at ``tail`` once: the new :attr:`_end` for the write cursor ``w`` (a
        door's test is ``w + size <= _end``; past it, this, then :meth:`reserve`)."""
        end = self._ctl[_TAIL] + self.capacity
        lap = (w | self._mask) + 1  # the end of w's lap: a record never straddles it
        self._end = end = lap if lap < end else end
        return end

    def _check_size(self, size: int, op: int | None) -> None:
        if size > self.max_record:
            raise RingOverrun(_overrun_reason(op, size))
        if size < self._hdr_size or size % self._align:
            raise ValueError(f"record size {size} is not a multiple of {self._align} >= header")

    def try_reserve(self, size: int, op: int | None = None) -> memoryview | None:
        """A writable view of ``size`` contiguous bytes for the next record, or None if full.

        ``op`` only names the record in a :class:`RingOverrun`. The caller writes the whole
        record (header included) into the view, then calls :meth:`commit`. A new reservation
        abandons an uncommitted one.
        """
        if size > self.max_record or size < self._hdr_size or size % self._align:
            self._check_size(size, op)
        cap = self.capacity
        w = self._write
        pos = w & self._mask
        to_end = cap - pos
        need = size if size <= to_end else to_end + size
        if (w - self._ctl[_TAIL]) + need > cap:
            return None
        if need != size:
            self._buf[pos : pos + self._hdr_size] = pack_header(PAD_OP, 0, to_end)
            pos = 0
        self._pending = (need - size, size)
        return self._buf[pos : pos + size]

    def reserve(
        self, size: int, op: int | None = None, timeout: float = DEFAULT_TIMEOUT_S
    ) -> memoryview:
        """:meth:`try_reserve`, waiting (bounded) for the consumer to release space."""
        view = self.try_reserve(size, op)
        if view is None:
            self.publish()  # the consumer can only free what it can see
            if not self.space_bell.wait(lambda: self._fits(size), timeout):
                raise BarrierTimeout("Ring.Space")
            view = self.try_reserve(size, op)
            assert view is not None
        return view

    def commit(self) -> int:
        """Commit the reserved record (its header must describe it); returns its seq."""
        if self._pending is None:
            raise RuntimeError("Ring.commit() without a reservation")
        pad, size = self._pending
        hv = self._hunpack(self._buf, (self._write + pad) & self._mask)
        if hv[self._i_op] == PAD_OP or hv[self._i_size] != size:
            raise ProtocolCorruption("Ring.Emit.Header")
        self._pending = None
        self._write += pad + size
        self.emit_seq += 1
        return self.emit_seq

    def publish(self) -> None:
        """Make every committed record visible (release ``head``); ring if the consumer is parked."""
        ctl = self._ctl
        ctl[_HEAD] = self._write
        ctl[_PUB] = self._published = self.emit_seq
        if ctl[_DATA_PARKED]:  # the parked-flag protocol: ring only a parked waiter
            self.data_bell.ring()

    def emit(
        self, record: bytes | bytearray | memoryview, timeout: float = DEFAULT_TIMEOUT_S
    ) -> int:
        """Reserve, copy and commit one whole record (not published); returns its seq."""
        view = memoryview(record).cast("B")
        op, _flags, size = check_record(view)
        self.reserve(size, op, timeout)[:] = view
        return self.commit()

    def wait_applied(self, seq: int, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until ``applied_seq >= seq`` (publishing first); BarrierTimeout otherwise."""
        if seq > self.emit_seq:
            raise ValueError(f"seq {seq} was never emitted (emit_seq {self.emit_seq})")
        if seq > self.published_seq:
            self.publish()
        if not self.space_bell.wait(lambda: self.applied_seq >= seq, timeout):
            raise BarrierTimeout("Ring.Applied")

    # -- consumer -----------------------------------------------------------
    def _corrupt(self, reason: str = "Ring.Header") -> ProtocolCorruption:
        self.corrupt = reason
        return ProtocolCorruption(self.corrupt)

    def peek(self) -> memoryview | None:
        """A read-only view of the next record (pads skipped), or None when none is published."""
        if self.corrupt is not None:
            raise ProtocolCorruption(self.corrupt)
        while True:
            avail = self._ctl[_HEAD] - self._read
            if avail <= 0:
                return None
            pos = self._read & self._mask
            to_end = self.capacity - pos
            if avail < self._hdr_size or to_end < self._hdr_size:
                raise self._corrupt()
            op, _flags, size = read_header(self._buf, pos)
            if (
                size < self._hdr_size
                or size % self._align
                or size > avail
                or size > self.max_record
                or size > to_end
                or (op == PAD_OP and size != to_end)
            ):
                raise self._corrupt()
            if op != PAD_OP:
                return self._ro[pos : pos + size]
            self._read += size

    def pop(self) -> memoryview | None:
        """:meth:`peek` and take the record; its view stays valid until :meth:`release`."""
        rec = self.peek()
        if rec is not None:
            self._read += len(rec)
            self._popped += 1
        return rec

    def release(self) -> None:
        """Hand every popped record's bytes back and advance ``applied_seq``."""
        ctl = self._ctl
        ctl[_TAIL] = self._read
        ctl[_APPLIED] = self._popped
        if ctl[_SPACE_PARKED]:
            self.space_bell.ring()

    def drain(self, sink: Callable[[memoryview], object]) -> int:
        """Hand every published record to ``sink`` in order (what :meth:`pop`, ``sink``
        and :meth:`release` do, in one frame with the cursors in locals): the number
        handed. Pads are skipped; a header no producer writes marks the ring corrupt as
        :meth:`peek` does. Applied records are released every :attr:`release_every`,
        at once while the producer is parked on ``space_bell`` (a wait for space or for
        ``applied_seq``), and whenever the drain leaves (dry, halted, corrupt or raising):
        a released record is always one the sink returned from (§11.6). A sink that
        raises leaves its record popped and not released; once :attr:`halted` is set, no
        further record is handed."""
        if self.corrupt is not None:
            raise ProtocolCorruption(self.corrupt)
        ctl, buf, ro, cap, mask = self._ctl, self._buf, self._ro, self.capacity, self._mask
        hdr, align, most, unpack = self._hdr_size, self._align, self.max_record, self._hunpack
        i_op, i_size, every = self._i_op, self._i_size, self.release_every
        r, popped = self._read, self._popped
        first, due = popped, popped + every
        head = ctl[_HEAD]
        try:
            while True:
                avail = head - r
                if avail <= 0:
                    head = ctl[_HEAD]  # what was published while these were applied
                    if head - r <= 0:
                        return popped - first
                    continue
                pos = r & mask
                to_end = cap - pos
                if avail < hdr or to_end < hdr:
                    raise self._corrupt()
                h = unpack(buf, pos)
                op, size = h[i_op], h[i_size]
                if (size < hdr or size % align or size > avail or size > most or size > to_end
                        or (op == PAD_OP and size != to_end)):  # fmt: skip
                    raise self._corrupt()
                if op == PAD_OP:
                    r += size
                    continue
                if self.halted:  # the consumer was told to stop: this one stays published
                    return popped - first
                try:
                    sink(ro[pos : pos + size])
                except BaseException:
                    self._read, self._popped = r + size, popped + 1  # popped, not released
                    raise
                r += size
                popped += 1
                if popped >= due or ctl[_SPACE_PARKED]:
                    self._read, self._popped = r, popped
                    self.release()
                    due = popped + every
        finally:
            if ctl[_APPLIED] != popped:  # every record the sink returned from
                ctl[_TAIL] = r
                ctl[_APPLIED] = popped
                if ctl[_SPACE_PARKED]:
                    self.space_bell.ring()
            if self._popped <= popped:  # (a raising sink's record stays popped)
                self._read, self._popped = r, popped

    def wait_readable(self, timeout: float = DEFAULT_TIMEOUT_S) -> bool:
        """Consumer wait for published bytes; False on timeout."""
        return self.data_bell.wait(lambda: self.head != self._read, timeout)

    # -- both ---------------------------------------------------------------
    def kill(self) -> None:
        """Death state: wake every parked waiter on both bells."""
        self._ctl[_DEAD] = 1
        self.data_bell.kill()
        self.space_bell.kill()

    @property
    def used(self) -> int:
        """Bytes committed and not yet released (pads included)."""
        return self._write - self.tail
