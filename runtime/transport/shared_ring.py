"""The command ring over a shared segment: the same :class:`~..ring.Ring`, with its
published cursors in the control page (seed 001 §11.1 ``SEG_CMD``, §11.2).

``SEG_CMD`` = one :data:`~.control_page.PAGE_SIZE` control page + the record bytes.
Each process builds its own :class:`SharedRing` over its own mapping of that segment,
in one role:

- ``"producer"`` (the client) stores ``head`` and reads ``tail`` / ``applied_seq``;
- ``"consumer"`` (the server) reads ``head`` and stores ``tail`` / ``applied_seq``.

A role never stores a word the other role owns. The consumer takes records only with
:meth:`SharedRing.pop_copy`: it loads ``head`` once, reads each header once into
integers, checks them, and copies the body once; the record it returns is rebuilt from
those integers, so a peer that rewrites the ring meanwhile cannot make the server see
two different values of one field (copy, then check).
"""

from __future__ import annotations

from ..errors import ProtocolCorruption
from ..wire.header import PAD_OP, RECORD_ALIGN, pack_header, read_header
from .ring import Ring
from .control_page import APPLIED, HEAD, PAGE_SIZE, TAIL, ControlPage

__all__ = ["SharedRing", "segment_size"]

_OWNED = {"producer": {"head"}, "consumer": {"tail", "applied_seq"}}


def segment_size(capacity: int) -> int:
    """Bytes of a ``SEG_CMD`` holding a ring of ``capacity`` bytes."""
    return PAGE_SIZE + capacity


class _Word:
    """A ring cursor that lives in the control page."""

    def __init__(self, name: str, offset: int) -> None:
        self.name = name
        self.offset = offset

    def __get__(self, obj: "SharedRing", owner: type | None = None) -> int:
        return obj._page.load(self.offset)

    def __set__(self, obj: "SharedRing", value: int) -> None:
        if self.name in obj._owned:
            obj._page.store(self.offset, value)
        elif value != obj._page.load(self.offset) and obj._ready:
            raise RuntimeError(f"the {obj.role} never stores {self.name}")


class SharedRing(Ring):
    """A :class:`Ring` over a ``SEG_CMD`` mapping (control page + ``capacity`` bytes)."""

    head = _Word("head", HEAD)
    tail = _Word("tail", TAIL)
    applied_seq = _Word("applied_seq", APPLIED)

    def __init__(
        self, segment: memoryview, capacity: int, role: str, data_bell, space_bell
    ) -> None:
        if role not in _OWNED:
            raise ValueError(f"ring role {role!r} (expected producer or consumer)")
        if len(segment) < segment_size(capacity):
            raise ValueError(f"SEG_CMD of {len(segment)} B cannot hold a {capacity} B ring")
        self.role = role
        self._owned = _OWNED[role]
        self._ready = False
        self._page = ControlPage(segment[:PAGE_SIZE])
        super().__init__(capacity, segment[PAGE_SIZE : PAGE_SIZE + capacity])
        self.data_bell = data_bell
        self.space_bell = space_bell
        self._ready = True

    def pop_copy(self) -> bytes | None:
        """The next record as an immutable copy (pads skipped), or None when none is published.

        Every header is read once and checked; a header no correct producer writes marks
        the ring corrupt (``ProtocolCorruption("Ring.Header")``), for good.
        """
        if self.corrupt is not None:
            raise ProtocolCorruption(self.corrupt)
        hdr = self._hdr_size
        mask = self._mask
        cap = self.capacity
        head = self.head
        while True:
            avail = head - self._read
            if avail <= 0:
                return None
            pos = self._read & mask
            to_end = cap - pos
            if avail < hdr or to_end < hdr:
                raise self._corrupt()
            op, flags, size = read_header(self._buf, pos)
            if (
                size < hdr
                or size % RECORD_ALIGN
                or size > avail
                or size > self.max_record
                or size > to_end
                or (op == PAD_OP and size != to_end)
            ):
                raise self._corrupt()
            self._read += size
            if op != PAD_OP:
                self._popped += 1
                return pack_header(op, flags, size) + bytes(self._buf[pos + hdr : pos + size])
