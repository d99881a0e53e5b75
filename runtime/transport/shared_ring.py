"""The command ring over a shared segment (seed 001 §11.1 ``SEG_CMD``, §11.2).

``SEG_CMD`` = one :data:`~.control_page.PAGE_SIZE` control page (the ring's control area
at its start) + the record bytes. Each process builds its own :class:`SharedRing` over
its own mapping of that segment: the client as ``"producer"`` (it creates the ring and
zeroes the control area), the server as ``"consumer"`` (it attaches to it).

The consumer takes records only with :meth:`SharedRing.drain_copy` (or its one-record
:meth:`SharedRing.pop_copy`): it loads ``head`` into a local (again only once it has
caught up with it), reads each header once into integers, checks them, and copies the
body once; the record it hands is rebuilt from those integers, so a peer that rewrites
the ring meanwhile cannot make the server see two different values of one field (copy,
then check).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import struct

from ..errors import ProtocolCorruption
from ..schema import tables as _t
from ..wire.header import PAD_OP, record_align
from .control_page import PAGE_SIZE
from .ring import _HEAD, CONTROL_SIZE, Ring

__all__ = ["SharedRing", "segment_size"]


def _header_codec() -> tuple[struct.Struct, tuple[int, int, int]]:
    """``MGPWireRecHeader`` as one ``struct.Struct`` in memory order (padding zero on
    pack) and where ``Op``, ``Flags``, ``Size`` sit in its unpacked tuple."""
    fields = [_t.field("MGPWireRecHeader", m) for m in ("Op", "Flags", "Size")]
    order = sorted(range(3), key=lambda i: fields[i].offset)
    fmt, cursor = "<", 0
    for i in order:
        fmt += "x" * (fields[i].offset - cursor) + fields[i].fmt
        cursor = fields[i].offset + fields[i].size
    fmt += "x" * (_t.struct_info("MGPWireRecHeader")["size"] - cursor)
    where = tuple(order.index(i) for i in range(3))
    return struct.Struct(fmt), where  # type: ignore[return-value]


def segment_size(capacity: int) -> int:
    """Bytes of a ``SEG_CMD`` holding a ring of ``capacity`` bytes."""
    return PAGE_SIZE + capacity


class SharedRing(Ring):
    """A :class:`Ring` over a ``SEG_CMD`` mapping (control page + ``capacity`` bytes)."""

    def __init__(self, segment: memoryview, capacity: int, role: str, data_bell: Any,
                 space_bell: Any) -> None:  # fmt: skip
        if role not in ("producer", "consumer"):
            raise ValueError(f"ring role {role!r} (expected producer or consumer)")
        if len(segment) < segment_size(capacity):
            raise ValueError(f"SEG_CMD of {len(segment)} B cannot hold a {capacity} B ring")
        self.role = role
        self._hcodec, self._hwhere = _header_codec()
        super().__init__(capacity, segment[PAGE_SIZE : PAGE_SIZE + capacity],
                         control=segment[:CONTROL_SIZE], attach=role == "consumer",
                         data_bell=data_bell, space_bell=space_bell)  # fmt: skip

    def pop_copy(self) -> bytes | None:
        """The next record as an immutable copy (pads skipped), or None when none is
        published (:meth:`drain_copy` for one record, nothing released: the caller
        releases once it has applied it)."""
        got: list[bytes] = []
        self.drain_copy(got.append, 0, 1)
        return got[0] if got else None

    def drain_copy(self, apply: Callable[[bytes], object], release_every: int,
                   limit: int = 0) -> int:  # fmt: skip
        """Hand ``apply`` every published record (``limit`` > 0: at most that many) as an
        immutable copy, pads skipped, in one frame with the cursors in locals: the number
        handed (0: nothing was published). ``release_every`` > 0: ``tail`` /
        ``appliedSeq`` are released every that many records and once more when it runs
        dry (never for a record whose ``apply`` raised); 0: never (the caller releases).

        Every header is read once into integers and checked, and the body copied once; the
        record handed is rebuilt from those integers. A header no correct producer writes
        marks the ring corrupt (``ProtocolCorruption("Ring.Header")``), for good, and so
        does a ``head`` no producer can publish -- behind this side's read cursor or more
        than ``capacity`` bytes ahead of it (``ProtocolCorruption("Ring.Cursor")``): a
        waiter that took it for "nothing yet" would spin on it without ever parking.
        """
        if self.corrupt is not None:
            raise ProtocolCorruption(self.corrupt)
        hdr, mask, cap, most = self._hdr_size, self._mask, self.capacity, self.max_record
        unpack, pack = self._hcodec.unpack_from, self._hcodec.pack
        i_op, _flags, i_size = self._hwhere
        align, buf, ctl = record_align(), self._buf, self._ctl
        r, popped = self._read, self._popped  # the cursors in locals, stored at each exit
        first = popped
        due = popped + release_every if release_every else -1  # 0: never released here
        head = ctl[_HEAD]
        try:
            while True:
                avail = head - r
                if avail <= 0:
                    if avail < 0:
                        raise self._corrupt("Ring.Cursor")
                    head = ctl[_HEAD]  # what was published meanwhile
                    if head == r:
                        if release_every and popped + release_every != due:  # dry: release
                            self._read, self._popped = r, popped  # applied (a raise: none)
                            self.release()
                        return popped - first
                    continue
                if avail > cap:
                    raise self._corrupt("Ring.Cursor")
                pos = r & mask
                to_end = cap - pos
                if avail < hdr or to_end < hdr:
                    raise self._corrupt()
                raw = unpack(buf, pos)  # the one read of this header
                op, size = raw[i_op], raw[i_size]
                if (size < hdr or size % align or size > avail or size > most or size > to_end
                        or (op == PAD_OP and size != to_end)):  # fmt: skip
                    raise self._corrupt()
                r += size
                if op == PAD_OP:
                    continue
                popped += 1
                apply(pack(*raw) + buf[pos + hdr : pos + size])  # the one body read (a copy)
                if popped == due:
                    self._read, self._popped = r, popped
                    self.release()
                    due = popped + release_every
                if popped - first == limit:
                    return limit
        finally:
            self._read, self._popped = r, popped
