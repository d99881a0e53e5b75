"""The reverse channel, client half (seed 001 §8, §11.6, §11.7, §17.1; docs/REVERSE_CHANNEL.md).

:class:`ReverseLink` is what the client reads back through: the reply mailbox
(``SEG_REPLY``: a reply is read only once ``applied_seq`` proves its record left the
applier), the event ring (``SEG_EVENT``: drained at every wait-loop iteration and at the
drain points of §11.7, each event handed to the handler registered for its kind), the caps
mirror (:class:`CapsMirror`, one ``GetCaps`` snapshot), and the counters: blocking round
trips per call, the time the client stalled in them, present-credit waits.

Every wait is bounded (``budget`` seconds, :class:`BarrierTimeout`) and drains the event
ring while it waits, so a server stopped on a full ring resumes (§11.7's overflow rule).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..errors import BarrierTimeout, ProtocolCorruption
from ..schema import layouts
from ..schema import tables as _t
from ..server import reverse as _rv
from ..server.reverse import Event, EventRing, ReplyMailbox, read_events, wire

__all__ = ["ReverseLink", "CapsMirror", "link_for"]

#: seconds one wait chunk lasts before the event ring is drained again
CHUNK_S = 0.002
BUDGET_S = 30.0


class CapsMirror:
    """The client's copy of one ``GetCaps`` answer (docs/REVERSE_CHANNEL.md §3)."""

    def __init__(self, data: bytes) -> None:
        size = int(_t.struct_info("MGPCaps")["size"])
        if len(data) < size:
            raise ProtocolCorruption("GetCaps.ReadbackReplyShort")
        rec = layouts.view("MGPCaps", bytearray(data[:size]))
        self.dynamic: dict[str, Any] = layouts.to_dict(rec["Dynamic"], json_safe=True)
        self.call_mask = int(rec["CallMask"])

        def blob(name: str) -> bytes:
            ref = rec[name]
            off, n = int(ref["Offset"]), int(ref["Size"])
            if int(ref["Seg"]) != int(_t.constant("kMGPipeSegReply")) or off + n > len(data):
                raise ProtocolCorruption(f"GetCaps.{name}")
            return data[off : off + n]

        fmt, row = blob("FormatCapabilities"), wire().format_row
        if len(fmt) % row.size:
            raise ProtocolCorruption("GetCaps.FormatCapabilities")
        self.formats = dict(row.iter_unpack(fmt))
        self.renderer = blob("RendererInfo").decode("utf-8", "replace")
        ri = rec["RendererInfo"]
        mask = data[int(ri["Offset"]) + int(ri["Size"]) :]
        ops = _t.tables().OPCODE
        if len(mask) != -(-(max(ops.values()) + 1) // 8):
            raise ProtocolCorruption("GetCaps.EntryMask")
        self.calls = frozenset(n for n, op in ops.items() if mask[op >> 3] >> (op & 7) & 1)
        self._bits = _t.enum("MGPCapBit")

    def has_cap(self, name: str) -> bool:
        return bool(self.call_mask & int(self._bits[name]))

    def has_call(self, name: str) -> bool:
        return name in self.calls


class ReverseLink:
    """Replies, events, caps and the round-trip counters of one client."""

    def __init__(self, transport: Any, mailbox: ReplyMailbox, events: EventRing, *,
                 budget: float = BUDGET_S) -> None:  # fmt: skip
        self.transport = transport
        self.mailbox = mailbox
        self.events = events
        self.budget = budget
        self.handlers: dict[EventKind, Callable[[Event], None]] = {}
        self.last_event_seq = 0
        self.events_seen: Counter[str] = Counter()
        #: blocking round trips (a wait on the server that an answer or a barrier needs)
        self.round_trips: Counter[str] = Counter()
        self.stall_ns = 0
        self.credit_waits = 0
        self.credit_stall_ns = 0
        if getattr(transport, "monolith", False) or type(transport).__name__ == "MonolithTransport":
            events.on_full = self.drain  # monolith: the server's thread is this one

    # -- events ----------------------------------------------------------------
    def drain(self) -> int:
        evs, self.last_event_seq = read_events(self.events, self.last_event_seq,
                                               self.transport.emit_seq)  # fmt: skip
        for ev in evs:
            self.events_seen[ev.kind.name] += 1
            h = self.handlers.get(ev.kind)
            if h is not None:
                h(ev)
        return len(evs)

    # -- waits -----------------------------------------------------------------
    def _wait(self, seq: int) -> None:
        t = self.transport
        if t.applied_seq >= seq:
            self.drain()
            return
        spawn_wait = getattr(t, "wait_polling", None)
        if spawn_wait is not None:
            spawn_wait(seq, self._poll)
        else:
            deadline = time.monotonic() + self.budget
            while True:
                self.drain()
                try:
                    t.wait_applied(seq, CHUNK_S)
                    break
                except BarrierTimeout:
                    if time.monotonic() > deadline:
                        raise
        self.drain()

    def _poll(self) -> bool:
        if self.events.full or self.events.ctl()[0] != self.events.ctl()[1]:
            self.drain()
        return False

    def wait(self, seq: int, call: str) -> None:
        """A blocking round trip: record ``seq`` applied (draining meanwhile)."""
        t0 = time.perf_counter_ns()
        self._wait(seq)
        self.stall_ns += time.perf_counter_ns() - t0
        self.round_trips[call] += 1

    def credit_wait(self, seq: int) -> None:
        t0 = time.perf_counter_ns()
        if self.transport.applied_seq < seq:
            self.credit_waits += 1
        self._wait(seq)
        self.credit_stall_ns += time.perf_counter_ns() - t0

    def answer(self, seq: int, call: str) -> tuple[_rv.ReplyStatus, bytes]:
        """Wait for record ``seq`` and read its reply (ERROR is ``<Call>.ReplyError``)."""
        self.wait(seq, call)
        if getattr(self.transport, "lost", False):  # the server's named refusal, here
            reason = getattr(self.transport, "lost_reason", None)
            raise reason if reason is not None else ProtocolCorruption(f"{call}.ReplyMissing")
        status, data = self.mailbox.take(seq, self.transport.applied_seq, call)
        if status == _rv.ReplyStatus.ERROR:
            raise ProtocolCorruption(f"{call}.ReplyError")
        return status, data

    def stats(self) -> dict[str, int]:
        return {"round_trips": sum(self.round_trips.values()), "stall_ns": self.stall_ns,
                "credit_waits": self.credit_waits, "credit_stall_ns": self.credit_stall_ns,
                "events": sum(self.events_seen.values()),
                "events_dropped": self.events.dropped}  # fmt: skip


def link_for(transport: Any, sink: Any, reverse: Any = None) -> ReverseLink | None:
    """The link over the transport's segments (spawn), the applier's (in-process: the sink
    is ``applier.apply``) or an explicit ``(mailbox, events)``; None where there is none."""
    if reverse is None:
        reverse = getattr(transport, "reverse", None)
    if reverse is None:
        reverse = getattr(sink, "reverse", None)  # ``applier.apply`` carries its segments
    if reverse is None:
        owner = getattr(sink, "__self__", None)
        if owner is not None and hasattr(owner, "mailbox") and hasattr(owner, "events"):
            reverse = (owner.mailbox, owner.events)
    if reverse is None:
        return None
    mailbox, events = reverse
    return ReverseLink(transport, mailbox, events)
