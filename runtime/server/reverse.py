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

The reply slot and event layouts are mgpipe's transport (MobileGL keeps them in MG_Remote,
outside the MG_Pipe ABI the tables carry); this module is their one declaration and the
client half (``runtime/client/reverse.py``) imports them from here.
"""

from __future__ import annotations

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
    "EVENT_RING_SIZE", "LOG_WARN", "LOG_ERROR",
]  # fmt: skip

#: ``SEG_REPLY``: 8 slots of 2 MiB (seed 001 §11.1, ID-47); ``SEG_EVENT``: 256 KiB.
REPLY_SLOTS = 8
REPLY_SLOT_SIZE = 2 << 20
EVENT_RING_SIZE = 256 << 10
#: seconds the server waits for the client to drain a full event ring / to read a slot
FULL_BUDGET_S = 30.0
#: lossless ERROR-and-above log lines per second before the rate limiter drops them
LOG_ERRORS_PER_S = 64
LOG_WARN, LOG_ERROR = 3, 4

_SLOT_HDR = struct.Struct("<QII")  # Seq, Status, Size
_EV_HDR = struct.Struct("<HHIQ")  # Kind, Flags, Size (payload bytes), Seq
_EV_CTL = struct.Struct("<QQII")  # head, tail (byte counts, never reset), full, dropped
_EV_CTL_SIZE = 64
_EV_ALIGN = 16


class ReplyStatus(IntEnum):
    OK = 0
    DECLINED = 1
    ERROR = 2


@dataclass(frozen=True)
class Reply:
    """An answering entry's answer: a status and its bytes (empty unless OK)."""

    status: ReplyStatus
    data: bytes = b""
    reason: str = ""

    @staticmethod
    def ok(data: bytes = b"") -> "Reply":
        return Reply(ReplyStatus.OK, bytes(data))

    @staticmethod
    def declined(reason: str = "") -> "Reply":
        return Reply(ReplyStatus.DECLINED, b"", reason)

    @staticmethod
    def error(reason: str) -> "Reply":
        return Reply(ReplyStatus.ERROR, reason.encode()[:256], reason)


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

    def __init__(self, buf: memoryview | bytearray | None = None, slots: int = REPLY_SLOTS,
                 slot_size: int = REPLY_SLOT_SIZE) -> None:  # fmt: skip
        self.slots, self.slot_size = slots, slot_size
        self.buf = memoryview(buf if buf is not None else bytearray(slots * slot_size)).cast("B")
        if len(self.buf) < slots * slot_size:
            raise ValueError(f"SEG_REPLY: {len(self.buf)} bytes for {slots} x {slot_size}")
        #: the largest answer one slot holds
        self.capacity = slot_size - _SLOT_HDR.size
        self.posted = 0

    @staticmethod
    def size(slots: int = REPLY_SLOTS, slot_size: int = REPLY_SLOT_SIZE) -> int:
        return slots * slot_size

    def _base(self, seq: int) -> int:
        return (seq % self.slots) * self.slot_size

    # -- server --------------------------------------------------------------
    def post(self, seq: int, reply: Reply, call: str) -> None:
        if seq <= 0:
            raise ProtocolCorruption(f"{call}.ReplyToNoSlot")
        if not isinstance(reply.status, ReplyStatus):
            raise ProtocolCorruption(f"{call}.ReplyStatusInvalid")
        n = len(reply.data)
        if n > self.capacity:
            raise ProtocolCorruption(f"{call}.ReplyTooLarge")
        base = self._base(seq)
        self.buf[base + _SLOT_HDR.size : base + _SLOT_HDR.size + n] = reply.data
        _SLOT_HDR.pack_into(self.buf, base, seq, int(reply.status), n)  # the header last
        self.posted += 1

    # -- client --------------------------------------------------------------
    def take(self, seq: int, applied_seq: int, call: str) -> tuple[ReplyStatus, bytes]:
        """The answer to record ``seq``; read only once ``applied_seq`` proves it applied."""
        if applied_seq < seq:
            raise ProtocolCorruption(f"{call}.ReplyMissing")
        base = self._base(seq)
        got, status, n = _SLOT_HDR.unpack_from(self.buf, base)
        if got != seq:
            raise ProtocolCorruption(f"{call}.ReplyMismatched")
        if status not in ReplyStatus._value2member_map_:
            raise ProtocolCorruption(f"{call}.ReplyStatusInvalid")
        if n > self.capacity:
            raise ProtocolCorruption(f"{call}.ReplyTooLarge")
        data = bytes(self.buf[base + _SLOT_HDR.size : base + _SLOT_HDR.size + n])
        _SLOT_HDR.pack_into(self.buf, base, 0, 0, 0)  # read once: a second take is Mismatched
        return ReplyStatus(status), data


class EventKind(IntEnum):
    """``SEG_EVENT`` record kinds (0 pads to the end of the ring)."""

    Pad = 0
    GlError = 1
    QueryResult = 2
    FenceSignaled = 3
    ReadbackDone = 4
    GpuWritten = 5
    BufferWriteback = 6
    LogLine = 7


#: fixed payload heads per kind (a variable part follows for GpuWritten / BufferWriteback /
#: LogLine)
_EV_BODY = {
    EventKind.GlError: struct.Struct("<I"),
    EventKind.QueryResult: struct.Struct("<IIQ"),  # slot, gen, value
    EventKind.FenceSignaled: struct.Struct("<II"),
    EventKind.ReadbackDone: struct.Struct("<Q"),
    EventKind.GpuWritten: struct.Struct("<III"),  # slot, gen, range count; then (u64, u64)*
    EventKind.BufferWriteback: struct.Struct("<IIQ"),  # slot, gen, offset; then bytes
    EventKind.LogLine: struct.Struct(""),  # level in Flags; the text is the payload
}
_RANGE = struct.Struct("<QQ")
#: inline BufferWriteback bytes (larger writebacks go through a readback)
WRITEBACK_INLINE = 4096


class Event(NamedTuple):
    kind: EventKind
    seq: int
    flags: int
    values: tuple
    data: bytes = b""


def _pad(n: int) -> int:
    return -(-n // _EV_ALIGN) * _EV_ALIGN


class EventRing:
    """``SEG_EVENT``: control words then a power-of-two data ring (both halves share it).

    Server: :meth:`push` and the typed helpers (``ctx.events.gl_error(code)`` ...), each
    stamped with :attr:`seq` (the applier sets it to the record being applied). Client:
    :meth:`drain` (in ``runtime/client/reverse.py``'s reader, through :func:`read_events`).
    """

    def __init__(self, buf: memoryview | bytearray | None = None,
                 size: int = EVENT_RING_SIZE) -> None:  # fmt: skip
        whole = memoryview(buf if buf is not None else bytearray(_EV_CTL_SIZE + size)).cast("B")
        self.buf = whole[: _EV_CTL_SIZE + size]  # a shared segment is rounded up to pages
        cap = len(self.buf) - _EV_CTL_SIZE
        if cap <= 0 or cap & (cap - 1):
            raise ValueError(f"SEG_EVENT: {len(self.buf)} bytes (64 + a power of two)")
        self.capacity = cap
        self.seq = 0
        #: called once when a lossless event finds the ring full (monolith: the client's
        #: drain, on this thread; spawn: ring the reverse doorbell)
        self.on_full: Callable[[], None] | None = None
        self.budget = FULL_BUDGET_S
        self.pushed = 0
        self.stalls = 0
        self._err_window = (0.0, 0)

    # -- control words -------------------------------------------------------
    @staticmethod
    def segment_size(size: int = EVENT_RING_SIZE) -> int:
        return _EV_CTL_SIZE + size

    def ctl(self) -> tuple[int, int, int, int]:
        return _EV_CTL.unpack_from(self.buf, 0)

    def _store(self, off: int, fmt: str, value: int) -> None:
        struct.pack_into(fmt, self.buf, off, value)

    @property
    def full(self) -> bool:
        return bool(self.ctl()[2])

    @property
    def dropped(self) -> int:
        return self.ctl()[3]

    # -- server --------------------------------------------------------------
    def push(self, kind: EventKind, body: bytes, *, flags: int = 0, lossless: bool = True) -> bool:
        """Append one event (False: a lossy one dropped on a full ring)."""
        total = _EV_HDR.size + _pad(len(body))
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
                self._store(20, "<I", dropped + 1)
                return False
            if not deadline:
                self.stalls += 1
                self._store(16, "<I", 1)  # eventRingFull: apply stops at this boundary
                deadline = time.monotonic() + self.budget
                if self.on_full is not None:
                    self.on_full()
                    continue
            if time.monotonic() > deadline:
                raise RingOverrun("EventRing.Full")
            time.sleep(0.0002)
        if to_end < total:  # a pad to the end of the ring, then the event at 0
            _EV_HDR.pack_into(self.buf, _EV_CTL_SIZE + pos, EventKind.Pad, 0, to_end - 16, 0)
            head += to_end
            pos = 0
        at = _EV_CTL_SIZE + pos
        _EV_HDR.pack_into(self.buf, at, int(kind), flags, len(body), self.seq)
        self.buf[at + _EV_HDR.size : at + _EV_HDR.size + len(body)] = body
        self._store(0, "<Q", head + total)  # publish after the bytes
        self.pushed += 1
        return True

    def gl_error(self, code: int) -> None:
        self.push(EventKind.GlError, _EV_BODY[EventKind.GlError].pack(code))

    def query_result(self, handle: tuple[int, int], value: int) -> None:
        self.push(EventKind.QueryResult, _EV_BODY[EventKind.QueryResult].pack(
            handle[0], handle[1], value))  # fmt: skip

    def fence_signalled(self, handle: tuple[int, int]) -> None:
        self.push(EventKind.FenceSignaled, _EV_BODY[EventKind.FenceSignaled].pack(*handle))

    def readback_done(self, seq: int) -> None:
        self.push(EventKind.ReadbackDone, _EV_BODY[EventKind.ReadbackDone].pack(seq))

    def gpu_written(self, handle: tuple[int, int], ranges: Iterable[tuple[int, int]]) -> None:
        rs = list(ranges)
        self.push(EventKind.GpuWritten, _EV_BODY[EventKind.GpuWritten].pack(
            handle[0], handle[1], len(rs)) + b"".join(_RANGE.pack(o, s) for o, s in rs))  # fmt: skip

    def buffer_writeback(self, handle: tuple[int, int], offset: int, data: bytes) -> None:
        if len(data) > WRITEBACK_INLINE:
            raise ProtocolCorruption("EventRing.BufferWriteback.TooLarge")
        self.push(EventKind.BufferWriteback, _EV_BODY[EventKind.BufferWriteback].pack(
            handle[0], handle[1], offset) + bytes(data))  # fmt: skip

    def log(self, level: int, text: str) -> bool:
        body = text.encode("utf-8", "replace")[:1024]
        if level <= LOG_WARN:
            return self.push(EventKind.LogLine, body, flags=level, lossless=False)
        now = time.monotonic()
        start, n = self._err_window
        if now - start >= 1.0:
            start, n = now, 0
        if n >= LOG_ERRORS_PER_S:  # the rate limiter: counted as dropped
            self._store(20, "<I", self.dropped + 1)
            return False
        self._err_window = (start, n + 1)
        return self.push(EventKind.LogLine, body, flags=level)


def read_events(ring: EventRing, last_seq: int, emit_seq: int) -> tuple[list[Event], int]:
    """Client side: every published event, checked (named faults, never a hang); advances
    the tail and clears ``eventRingFull``. Returns (events, the last event seq seen)."""
    buf, cap = ring.buf, ring.capacity
    head, tail, full, _ = ring.ctl()
    if head < tail or head - tail > cap or head % _EV_ALIGN:
        raise ProtocolCorruption("EventRing.Head")
    out: list[Event] = []
    while tail < head:
        pos = tail & (cap - 1)
        to_end = cap - pos
        at = _EV_CTL_SIZE + pos
        kind, flags, size, seq = _EV_HDR.unpack_from(buf, at)
        if kind == EventKind.Pad:
            if size != to_end - 16:
                raise ProtocolCorruption("EventRing.Pad")
            tail += to_end
            continue
        if kind not in EventKind._value2member_map_:
            raise ProtocolCorruption("EventRing.Kind")
        k = EventKind(kind)
        total = _EV_HDR.size + _pad(size)
        if total > to_end or tail + total > head:
            raise ProtocolCorruption(f"EventRing.{k.name}.Size")
        if seq < last_seq or seq > emit_seq:
            raise ProtocolCorruption(f"EventRing.{k.name}.Seq")
        body = bytes(buf[at + 16 : at + 16 + size])
        head_fmt = _EV_BODY[k]
        if len(body) < head_fmt.size:
            raise ProtocolCorruption(f"EventRing.{k.name}.Size")
        values = head_fmt.unpack_from(body, 0)
        rest = body[head_fmt.size :]
        if k == EventKind.GpuWritten:
            if len(rest) != values[2] * _RANGE.size:
                raise ProtocolCorruption("EventRing.GpuWritten.Size")
            rest = b""
            values = values + tuple(_RANGE.iter_unpack(body[head_fmt.size :]))
        elif k not in (EventKind.BufferWriteback, EventKind.LogLine) and rest:
            raise ProtocolCorruption(f"EventRing.{k.name}.Size")
        out.append(Event(k, seq, flags, values, rest))
        last_seq = seq
        tail += total
    struct.pack_into("<Q", buf, 8, tail)
    if full:
        struct.pack_into("<I", buf, 16, 0)
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
_FORMAT_ROW = struct.Struct("<II")


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
    formats = b"".join(_FORMAT_ROW.pack(f, fl) for f, fl in sorted(caps.formats))
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
