"""The reverse channel, server half (seed 001 §8, §11.1, §11.7, §17.1; docs/REVERSE_CHANNEL.md).

- :class:`Reply` / :class:`ReplyStatus`: what an answering entry (a ``kReplySlot`` call)
  returns; the applier posts it into :class:`ReplyMailbox` (``SEG_REPLY``), slot id = the
  record's seq, slot header ``{Seq: u64, Status: u32, Size: u32}``.
- :class:`EventRing` (``SEG_EVENT``): an SPSC ring of events stamped with the seq of the
  record that caused them; lossy log lines at <= WARN, everything else lossless with the
  overflow rule (the server stops at the record boundary until the client drains; a ring
  full past the wait budget is ``Fatal{RingOverrun, "EventRing.Full"}``, never a hang).
- :class:`AnswersCaps` / :class:`BackendCaps`: the ``GetCaps`` entry a backend mixes in;
  ``CallMask`` is computed from the backend's real entry table (:data:`CAP_CALLS`).

The reply slot and event layouts are mgpipe's transport (MobileGL keeps its own in MG_Remote,
outside the MG_Pipe ABI): they are declared once, in ``catalogue/MG_Pipe/MGPipeOverlay.h``
(``MGPReplySlotHeader``, ``MGPEventRingControl``, ``MGPEventHeader``, the ``MGPEvent<Kind>``
heads, ``MGPipeEventKind``, ``MGPipeReplyStatus``, the ``kMGPipeReply*`` / ``kMGPipeEvent*``
sizes), and :func:`wire` builds every codec and offset this module and the client half
(``runtime/client/reverse.py``) use from the generated tables.
"""

from __future__ import annotations

import mmap
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, NamedTuple

from ..errors import ProtocolCorruption, RingOverrun
from ..schema import layouts
from ..schema import tables as _t

__all__ = [
    "ReplyStatus", "Reply", "ReplyMailbox", "EventKind", "Event", "EventRing", "BackendCaps",
    "AnswersCaps", "CAP_CALLS", "ACCEPTANCE", "answering_calls", "REPLY_SLOTS", "REPLY_SLOT_SIZE",
    "EVENT_RING_SIZE", "WRITEBACK_INLINE", "LOG_WARN", "LOG_ERROR", "Wire", "wire",
]  # fmt: skip

#: seconds the server waits for the client to drain a full event ring / to read a slot
FULL_BUDGET_S = 30.0
#: lossless ERROR-and-above log lines per second before the rate limiter drops them
LOG_ERRORS_PER_S = 64


def _codec(name: str) -> struct.Struct:
    """Every scalar member of the overlay struct ``name``, in memory order, as one
    ``struct.Struct`` of the struct's size (array members and padding read as pad bytes)."""
    info = _t.struct_info(name)
    fmt, cursor = "<", 0
    for m in sorted(info["members"], key=lambda m: int(m["offset"])):
        if m.get("count", 1) != 1 or not m.get("scalar"):
            continue
        f = _t.field(name, str(m["name"]))
        fmt += "x" * (f.offset - cursor) + f.fmt
        cursor = f.offset + f.size
    return struct.Struct(fmt + "x" * (int(info["size"]) - cursor))


def _word(name: str, member: str) -> tuple[int, struct.Struct]:
    """Where one scalar member of ``name`` sits and its codec (a single-word store)."""
    f = _t.field(name, member)
    return f.offset, struct.Struct("<" + f.fmt)


class Wire:
    """The reverse channel's layouts, built from one tables module (:func:`wire`)."""

    def __init__(self) -> None:
        c = _t.constant
        self.reply_slots, self.reply_slot_size = c("kMGPipeReplySlots"), c("kMGPipeReplySlotSize")
        self.reply_error_max = c("kMGPipeReplyErrorMaxBytes")
        self.event_ring_size, self.align = c("kMGPipeEventRingSize"), c("kMGPipeEventAlign")
        self.writeback_inline = c("kMGPipeEventWritebackInline")
        self.log_max = c("kMGPipeEventLogMaxBytes")
        levels = _t.enum("MGPipeLogLevel")
        self.log_warn, self.log_error = int(levels["Warn"]), int(levels["Error"])
        self.Status = IntEnum("ReplyStatus", _t.enum("MGPipeReplyStatus"), module=__name__)  # type: ignore[misc]
        self.Kind = IntEnum("EventKind", _t.enum("MGPipeEventKind"), module=__name__)  # type: ignore[misc]
        self.slot_hdr = _codec("MGPReplySlotHeader")  # Seq, Status, Size
        self.ev_hdr = _codec("MGPEventHeader")  # Kind, Flags, Size (payload bytes), Seq
        self.ev_ctl = _codec("MGPEventRingControl")  # Head, Tail, Full, Dropped
        self.ctl_size = self.ev_ctl.size
        self.head = _word("MGPEventRingControl", "Head")
        self.tail = _word("MGPEventRingControl", "Tail")
        self.full = _word("MGPEventRingControl", "Full")
        self.dropped = _word("MGPEventRingControl", "Dropped")
        structs = _t.tables().STRUCTS
        #: the fixed payload head of each kind: MGPEvent<Kind> where the overlay declares one
        self.body = {k: _codec(f"MGPEvent{k.name}") if f"MGPEvent{k.name}" in structs
                     else struct.Struct("<") for k in self.Kind}  # fmt: skip
        self.range = _codec("MGPEventRange")
        self.format_row = _codec("MGPFormatCapabilityRow")


_wire: list = [None, None]


def wire() -> Wire:
    """The :class:`Wire` of the current tables module (built once per module)."""
    module = _t.tables()
    if _wire[0] is not module:
        _wire[:] = [module, Wire()]
    return _wire[1]


#: the table-built names this module exports (PEP 562: read on first use, never at import)
_LAZY = {
    "ReplyStatus": lambda w: w.Status, "EventKind": lambda w: w.Kind,
    "REPLY_SLOTS": lambda w: w.reply_slots, "REPLY_SLOT_SIZE": lambda w: w.reply_slot_size,
    "EVENT_RING_SIZE": lambda w: w.event_ring_size, "WRITEBACK_INLINE": lambda w: w.writeback_inline,
    "LOG_WARN": lambda w: w.log_warn, "LOG_ERROR": lambda w: w.log_error,
}  # fmt: skip


def __getattr__(name: str) -> Any:
    try:
        get = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return get(wire())


@dataclass(frozen=True)
class Reply:
    """An answering entry's answer: a status and its bytes (empty unless OK)."""

    status: "ReplyStatus"
    data: bytes = b""
    reason: str = ""

    @staticmethod
    def ok(data: bytes = b"") -> "Reply":
        return Reply(wire().Status.OK, bytes(data))

    @staticmethod
    def declined(reason: str = "") -> "Reply":
        return Reply(wire().Status.DECLINED, b"", reason)

    @staticmethod
    def error(reason: str) -> "Reply":
        w = wire()
        return Reply(w.Status.ERROR, reason.encode()[: w.reply_error_max], reason)


#: ``kReplySlot`` calls whose slot carries an *acceptance* (seed 001 §17.1: read inside the
#: verb's existing wait): an entry may return None (accepted, nothing posted, the client
#: reads nothing) or a Reply (posted).
ACCEPTANCE = frozenset({"ResourceCreate", "ResourceRespecify", "SetTextureParams",
                        "ResourceSubData"})  # fmt: skip


def answering_calls() -> frozenset[str]:
    """The calls whose row carries ``kReplySlot`` (the applier posts their reply)."""
    return frozenset(str(c["name"]) for c in _t.tables().CALLS if "kReplySlot" in c["flags"])


class ReplyMailbox:
    """``SEG_REPLY`` over ``buf`` (a bytearray in-process, shared memory for spawn)."""

    def __init__(self, buf: memoryview | bytearray | None = None, slots: int | None = None,
                 slot_size: int | None = None) -> None:  # fmt: skip
        self._w = w = wire()
        slots = w.reply_slots if slots is None else slots
        slot_size = w.reply_slot_size if slot_size is None else slot_size
        self._hdr = w.slot_hdr
        self.slots, self.slot_size = slots, slot_size
        # in-process: anonymous memory, committed page by page as replies touch it (a zeroed
        # bytearray would make every applier 16 MiB resident before its first answer)
        self.buf = memoryview(buf if buf is not None else mmap.mmap(-1, slots * slot_size)).cast("B")
        if len(self.buf) < slots * slot_size:
            raise ValueError(f"SEG_REPLY: {len(self.buf)} bytes for {slots} x {slot_size}")
        #: the largest answer one slot holds
        self.capacity = slot_size - self._hdr.size
        self.posted = 0

    @staticmethod
    def size(slots: int | None = None, slot_size: int | None = None) -> int:
        w = wire()
        return (w.reply_slots if slots is None else slots) * (
            w.reply_slot_size if slot_size is None else slot_size)  # fmt: skip

    def _base(self, seq: int) -> int:
        return (seq % self.slots) * self.slot_size

    # -- server --------------------------------------------------------------
    def post(self, seq: int, reply: Reply, call: str) -> None:
        if seq <= 0:
            raise ProtocolCorruption(f"{call}.ReplyToNoSlot")
        if not isinstance(reply.status, self._w.Status):
            raise ProtocolCorruption(f"{call}.ReplyStatusInvalid")
        n = len(reply.data)
        if n > self.capacity:
            raise ProtocolCorruption(f"{call}.ReplyTooLarge")
        base, hdr = self._base(seq), self._hdr
        self.buf[base + hdr.size : base + hdr.size + n] = reply.data
        hdr.pack_into(self.buf, base, seq, int(reply.status), n)  # the header last
        self.posted += 1

    # -- client --------------------------------------------------------------
    def take(self, seq: int, applied_seq: int, call: str) -> tuple["ReplyStatus", bytes]:
        """The answer to record ``seq``; read only once ``applied_seq`` proves it applied."""
        if applied_seq < seq:
            raise ProtocolCorruption(f"{call}.ReplyMissing")
        base, hdr, status_enum = self._base(seq), self._hdr, self._w.Status
        got, status, n = hdr.unpack_from(self.buf, base)
        if got != seq:
            raise ProtocolCorruption(f"{call}.ReplyMismatched")
        if status not in status_enum._value2member_map_:
            raise ProtocolCorruption(f"{call}.ReplyStatusInvalid")
        if n > self.capacity:
            raise ProtocolCorruption(f"{call}.ReplyTooLarge")
        data = bytes(self.buf[base + hdr.size : base + hdr.size + n])
        hdr.pack_into(self.buf, base, 0, 0, 0)  # read once: a second take is Mismatched
        return status_enum(status), data


class Event(NamedTuple):
    kind: "EventKind"
    seq: int
    flags: int
    values: tuple
    data: bytes = b""


def _pad(n: int, align: int) -> int:
    return -(-n // align) * align


class EventRing:
    """``SEG_EVENT``: control words then a power-of-two data ring (both halves share it).

    Server: :meth:`push` and the typed helpers (``ctx.events.gl_error(code)`` ...), each
    stamped with the record being applied: :attr:`seq`, or the ``seq`` of the applier
    context it :attr:`follows`. Client:
    :meth:`drain` (in ``runtime/client/reverse.py``'s reader, through :func:`read_events`).
    """

    def __init__(self, buf: memoryview | bytearray | None = None,
                 size: int | None = None) -> None:  # fmt: skip
        self._w = w = wire()
        size = w.event_ring_size if size is None else size
        ctl = w.ctl_size
        whole = memoryview(buf if buf is not None else bytearray(ctl + size)).cast("B")
        self.buf = whole[: ctl + size]  # a shared segment is rounded up to pages
        cap = len(self.buf) - ctl
        if cap <= 0 or cap & (cap - 1):
            raise ValueError(f"SEG_EVENT: {len(self.buf)} bytes ({ctl} + a power of two)")
        self.capacity = cap
        self.seq = 0
        #: an applier's context: where set, its ``seq`` (the record being applied) stamps
        #: the events in place of :attr:`seq` (the applier then moves one counter a record)
        self.follows: Any = None
        #: called once when a lossless event finds the ring full (monolith: the client's
        #: drain, on this thread; spawn: ring the reverse doorbell)
        self.on_full: Callable[[], None] | None = None
        self.budget = FULL_BUDGET_S
        self.pushed = 0
        self.stalls = 0
        self._err_window = (0.0, 0)

    # -- control words -------------------------------------------------------
    @staticmethod
    def segment_size(size: int | None = None) -> int:
        w = wire()
        return w.ctl_size + (w.event_ring_size if size is None else size)

    def ctl(self) -> tuple[int, int, int, int]:
        return self._w.ev_ctl.unpack_from(self.buf, 0)

    def _store(self, word: tuple[int, struct.Struct], value: int) -> None:
        word[1].pack_into(self.buf, word[0], value)

    @property
    def full(self) -> bool:
        return bool(self.ctl()[2])

    @property
    def dropped(self) -> int:
        return self.ctl()[3]

    # -- server --------------------------------------------------------------
    def push(self, kind: "EventKind", body: bytes, *, flags: int = 0, lossless: bool = True) -> bool:
        """Append one event (False: a lossy one dropped on a full ring)."""
        w = self._w
        hdr, ctl = w.ev_hdr, w.ctl_size
        total = hdr.size + _pad(len(body), w.align)
        if total > self.capacity // 2:
            raise ProtocolCorruption(f"EventRing.{kind.name}.TooLarge")
        deadline = 0.0
        while True:
            head, tail, _, dropped = self.ctl()
            pos = head & (self.capacity - 1)
            to_end = self.capacity - pos
            need = total + (to_end if to_end < total else 0)
            if head + need - tail <= self.capacity:
                break
            if not lossless:
                self._store(w.dropped, dropped + 1)
                return False
            if not deadline:
                self.stalls += 1
                self._store(w.full, 1)  # eventRingFull: apply stops at this boundary
                deadline = time.monotonic() + self.budget
                if self.on_full is not None:
                    self.on_full()
                    continue
            if time.monotonic() > deadline:
                raise RingOverrun("EventRing.Full")
            time.sleep(0.0002)
        if to_end < total:  # a pad to the end of the ring, then the event at 0
            hdr.pack_into(self.buf, ctl + pos, w.Kind.Pad, 0, to_end - hdr.size, 0)
            head += to_end
            pos = 0
        at = ctl + pos
        seq = self.seq if self.follows is None else self.follows.seq
        hdr.pack_into(self.buf, at, int(kind), flags, len(body), seq)
        self.buf[at + hdr.size : at + hdr.size + len(body)] = body
        self._store(w.head, head + total)  # publish after the bytes
        self.pushed += 1
        return True

    def gl_error(self, code: int) -> None:
        k = self._w.Kind.GlError
        self.push(k, self._w.body[k].pack(code))

    def query_result(self, handle: tuple[int, int], value: int) -> None:
        k = self._w.Kind.QueryResult
        self.push(k, self._w.body[k].pack(handle[0], handle[1], value))

    def fence_signalled(self, handle: tuple[int, int]) -> None:
        k = self._w.Kind.FenceSignaled
        self.push(k, self._w.body[k].pack(*handle))

    def readback_done(self, seq: int) -> None:
        k = self._w.Kind.ReadbackDone
        self.push(k, self._w.body[k].pack(seq))

    def gpu_written(self, handle: tuple[int, int], ranges: Iterable[tuple[int, int]]) -> None:
        w, rs = self._w, list(ranges)
        k = w.Kind.GpuWritten
        self.push(k, w.body[k].pack(handle[0], handle[1], len(rs))
                  + b"".join(w.range.pack(o, s) for o, s in rs))  # fmt: skip

    def buffer_writeback(self, handle: tuple[int, int], offset: int, data: bytes) -> None:
        w = self._w
        if len(data) > w.writeback_inline:
            raise ProtocolCorruption("EventRing.BufferWriteback.TooLarge")
        k = w.Kind.BufferWriteback
        self.push(k, w.body[k].pack(handle[0], handle[1], offset) + bytes(data))

    def log(self, level: int, text: str) -> bool:
        w = self._w
        body = text.encode("utf-8", "replace")[: w.log_max]
        if level <= w.log_warn:
            return self.push(w.Kind.LogLine, body, flags=level, lossless=False)
        now = time.monotonic()
        start, n = self._err_window
        if now - start >= 1.0:
            start, n = now, 0
        if n >= LOG_ERRORS_PER_S:  # the rate limiter: counted as dropped
            self._store(w.dropped, self.dropped + 1)
            return False
        self._err_window = (start, n + 1)
        return self.push(w.Kind.LogLine, body, flags=level)


def read_events(ring: EventRing, last_seq: int, emit_seq: int) -> tuple[list[Event], int]:
    """Client side: every published event, checked (named faults, never a hang); advances
    the tail and clears ``eventRingFull``. Returns (events, the last event seq seen)."""
    w = ring._w
    buf, cap, hdr, ctl, kinds = ring.buf, ring.capacity, w.ev_hdr, w.ctl_size, w.Kind
    head, tail, full, _ = ring.ctl()
    if head < tail or head - tail > cap or head % w.align:
        raise ProtocolCorruption("EventRing.Head")
    out: list[Event] = []
    while tail < head:
        pos = tail & (cap - 1)
        to_end = cap - pos
        at = ctl + pos
        kind, flags, size, seq = hdr.unpack_from(buf, at)
        if kind == kinds.Pad:
            if size != to_end - hdr.size:
                raise ProtocolCorruption("EventRing.Pad")
            tail += to_end
            continue
        if kind not in kinds._value2member_map_:
            raise ProtocolCorruption("EventRing.Kind")
        k = kinds(kind)
        total = hdr.size + _pad(size, w.align)
        if total > to_end or tail + total > head:
            raise ProtocolCorruption(f"EventRing.{k.name}.Size")
        if seq < last_seq or seq > emit_seq:
            raise ProtocolCorruption(f"EventRing.{k.name}.Seq")
        body = bytes(buf[at + hdr.size : at + hdr.size + size])
        head_fmt = w.body[k]
        if len(body) < head_fmt.size:
            raise ProtocolCorruption(f"EventRing.{k.name}.Size")
        values = head_fmt.unpack_from(body, 0)
        rest = body[head_fmt.size :]
        if k == kinds.GpuWritten:
            if len(rest) != values[2] * w.range.size:
                raise ProtocolCorruption("EventRing.GpuWritten.Size")
            rest = b""
            values = values + tuple(w.range.iter_unpack(body[head_fmt.size :]))
        elif k not in (kinds.BufferWriteback, kinds.LogLine) and rest:
            raise ProtocolCorruption(f"EventRing.{k.name}.Size")
        out.append(Event(k, seq, flags, values, rest))
        last_seq = seq
        tail += total
    ring._store(w.tail, tail)
    if full:
        ring._store(w.full, 0)
    return out, last_seq


# -- caps ---------------------------------------------------------------------
#: MGPCapBit name -> the calls whose entries it stands for (a claimed bit is published only
#: when every one of them has a non-null entry in the backend's real table).
CAP_CALLS: dict[str, tuple[str, ...]] = {
    "kCapOcclusionQuery": ("QueryCreate", "QueryBegin", "QueryEnd", "QueryAvailable",
                           "QueryResult", "QueryDestroy"),
    "kCapTimerQuery": ("QueryCreate", "QueryBegin", "QueryEnd", "QueryAvailable", "QueryResult",
                       "QueryDestroy", "QueryCounter", "QueryTimestamp"),
    "kCapResidentSubData": ("BufferSubDataResident",),
    "kCapXfbPrimitivesQuery": ("QueryCreate", "QueryBegin", "QueryEnd", "QueryResult"),
}  # fmt: skip


@dataclass(frozen=True)
class BackendCaps:
    """What a backend supplies for ``GetCaps`` (docs/REVERSE_CHANNEL.md §3)."""

    dynamic: dict[str, Any] = field(default_factory=dict)
    cap_bits: tuple[str, ...] = ()
    formats: tuple[tuple[int, int], ...] = ()
    renderer: str = ""


def call_mask(caps: BackendCaps, table: dict[str, Any]) -> int:
    bits = _t.enum("MGPCapBit")
    mask = 0
    for name in caps.cap_bits:
        if name not in bits:
            raise ValueError(f"caps_snapshot: {name!r} is no MGPCapBit")
        if all(table.get(c) is not None for c in CAP_CALLS.get(name, ())):
            mask |= int(bits[name])
    return mask


def entry_mask(table: dict[str, Any]) -> bytes:
    """One bit per opcode (bit set: a non-null entry), ceil(max opcode + 1 / 8) bytes."""
    ops = _t.tables().OPCODE
    n = max(ops.values()) + 1
    out = bytearray(-(-n // 8))
    for name, op in ops.items():
        if table.get(name) is not None:
            out[op >> 3] |= 1 << (op & 7)
    return bytes(out)


def encode_caps(caps: BackendCaps, table: dict[str, Any]) -> bytes:
    """The ``GetCaps`` answer: ``MGPCaps`` + FormatCapabilities + RendererInfo + entry mask."""
    size = int(_t.struct_info("MGPCaps")["size"])
    rec = layouts.from_dict("MGPCaps", {"Dynamic": dict(caps.dynamic),
                                        "CallMask": call_mask(caps, table)})  # fmt: skip
    formats = b"".join(wire().format_row.pack(f, fl) for f, fl in sorted(caps.formats))
    renderer = caps.renderer.encode("utf-8")
    seg = int(_t.constant("kMGPipeSegReply"))
    rec["FormatCapabilities"]["Offset"], rec["FormatCapabilities"]["Size"] = size, len(formats)
    rec["FormatCapabilities"]["Seg"] = seg
    rec["RendererInfo"]["Offset"] = size + len(formats)
    rec["RendererInfo"]["Size"], rec["RendererInfo"]["Seg"] = len(renderer), seg
    return rec.tobytes() + formats + renderer + entry_mask(table)


class AnswersCaps:
    """Mixin: the ``GetCaps`` entry over the backend's ``caps_snapshot()``."""

    def caps_snapshot(self) -> BackendCaps:  # pragma: no cover - each backend defines it
        raise NotImplementedError

    def GetCaps(self, ctx: Any, d: Any) -> Reply:
        from ..backends.base import build_table

        return Reply.ok(encode_caps(self.caps_snapshot(), build_table(self)))
