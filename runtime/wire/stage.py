"""The blob stage segment, ``SEG_STAGE`` (seed 001 §11.1).

Bulk bytes a record does not carry inline (``kHasBlob`` blobs: render-state chunks,
vertex-element arrays, sampler parameters, SPIR-V, sub-data bytes ...) are staged here
by the client and named from the payload by an ``MGPBlobRef{Offset, Size, Seg}`` whose
``Seg`` is ``CONSTANTS["kMGPipeSegStage"]``.

- Allocation is a bump pointer over a fixed-capacity buffer (a ``bytearray`` by
  default; any writable buffer works, e.g. a shared-memory mapping); every allocation
  starts on an 8-byte boundary.
- The server reads through :meth:`StageSegment.view`, which checks the reference against
  the segment (its id and its capacity: a peer process cannot see the client's bump
  pointer) and refuses with ``ProtocolCorruption("<what>")``.

**The reset rule.** :meth:`StageSegment.reset` rewinds the bump pointer, so later
stagings overwrite earlier bytes. The client may reset only when every record that
names a staged byte has been applied — after ``transport.wait_applied()`` (always true
right after a monolith ``submit``). Views the decoder hands out (``Decoded.blob``) are
valid only while the record is being applied; a server that keeps bytes copies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import PipeFatal, ProtocolCorruption
from ..schema import tables as _t

__all__ = ["STAGE_ALIGN", "stage_align", "DEFAULT_CAPACITY", "StageOverflow", "StageSegment", "stage_seg_id"]

def stage_align() -> int:
    """Allocation granularity of the segment (``kMGPipeRecordAlign``; ``STAGE_ALIGN``)."""
    return int(_t.constant("kMGPipeRecordAlign"))


def __getattr__(name: str) -> int:
    if name == "STAGE_ALIGN":  # read from the tables on first use, not at import
        return stage_align()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
#: ``SEG_STAGE`` default size (seed 001 §11.1: 32 MiB).
DEFAULT_CAPACITY = 32 << 20

_SEG_STAGE = "kMGPipeSegStage"


def stage_seg_id() -> int:
    """``kMGPipeSegStage`` from the tables."""
    return _t.constant(_SEG_STAGE)


class StageOverflow(PipeFatal):
    """A staging that does not fit the segment's remaining space (flush, wait, reset)."""

    def __init__(self, reason: str) -> None:
        super().__init__("StageOverflow", reason)


BlobRef = tuple[int, int, int]
#: what :meth:`StageSegment.stage` copies as it is (anything else: its bytes, through a view)
_RAW = frozenset((bytes, bytearray))


def _ref_fields(ref: Any) -> BlobRef:
    """``(Offset, Size, Seg)`` of a tuple, a mapping or an ``MGPBlobRef`` record."""
    if hasattr(ref, "Offset"):  # an MGPBlobRef record
        return int(ref.Offset), int(ref.Size), int(ref.Seg)
    if isinstance(ref, tuple) and len(ref) == 3:
        return int(ref[0]), int(ref[1]), int(ref[2])
    if isinstance(ref, Mapping):
        return int(ref["Offset"]), int(ref["Size"]), int(ref["Seg"])
    return int(ref["Offset"]), int(ref["Size"]), int(ref["Seg"])


class StageSegment:
    """A bump-allocated ``SEG_STAGE`` (see the module docstring for the reset rule)."""

    def __init__(
        self, capacity: int = DEFAULT_CAPACITY, buffer: bytearray | memoryview | None = None
    ) -> None:
        align = self._align = stage_align()
        if capacity <= 0 or capacity % align:
            raise ValueError(f"stage capacity {capacity} is not a positive multiple of {align}")
        if buffer is None:
            buffer = bytearray(capacity)
        mv = memoryview(buffer).cast("B")
        if mv.readonly or len(mv) < capacity:
            raise ValueError(f"stage buffer must be writable and hold {capacity} bytes")
        self.capacity = capacity
        #: the most a blob takes of the window past its own bytes (its end rounded up to
        #: the alignment, ``kMGPipeRecordAlign``): a room rule asks ``n + granule`` per blob
        self.granule = align
        self.seg = stage_seg_id()
        self._seg_none = _t.constant("kMGHostSpanSegNone")
        self._buf = mv[:capacity]
        self._ro = self._buf.toreadonly()
        self.used = 0
        self._high = 0  # the highest ``used`` before the last rewind (:attr:`high_water`)
        #: bytes staged through :meth:`stage` since construction (the client's
        #: ``staged_bytes``)
        self.staged = 0
        self.resets = 0
        #: the bump allocator's window [base, limit): the whole segment, or one frame's
        #: region under present credit (the client's rule, :meth:`region`)
        self.base = 0
        self.limit = capacity
        #: the window is the whole segment (a frame whose bytes may lie anywhere)
        self.wide = True

    def stage(self, data: bytes | bytearray | memoryview) -> BlobRef:
        """Copy ``data`` in; returns its ``(Offset, Size, Seg)``."""
        if data.__class__ not in _RAW:
            data = memoryview(data).cast("B")  # a typed view: its bytes
        offset = self.used
        size = len(data)
        end = offset + size
        if end > self.limit:
            raise StageOverflow(f"Stage.{size}B")
        self._buf[offset:end] = data
        # the window's ends are multiples of the alignment: the rounded end stays inside
        self.used = end + (-end % self._align)
        self.staged += size
        return offset, size, self.seg

    def view(self, ref: Any, what: str = "Blob", writable: bool = False) -> memoryview:
        """The bytes ``ref`` names; ``ProtocolCorruption(what)`` when out of the segment.

        ``ref`` is an ``(Offset, Size, Seg)`` tuple, a dict or an ``MGPBlobRef`` record
        (decoded, or numpy). An
        empty reference (``Size == 0``) is legal with ``Seg`` = this segment or
        ``kMGHostSpanSegNone`` and ``Offset`` within the segment. The view is read-only
        unless ``writable`` (a server filling a staged destination, e.g. ``ReadPixels.Dst``).
        """
        offset, size, seg = ref if type(ref) is tuple else _ref_fields(ref)
        if offset < 0 or size < 0 or offset > self.capacity or size > self.capacity - offset:
            raise ProtocolCorruption(what)
        if seg != self.seg and not (size == 0 and seg == self._seg_none):
            raise ProtocolCorruption(what)
        return (self._buf if writable else self._ro)[offset : offset + size]

    def write_at(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Put ``data`` at ``offset`` (a replay restoring the bytes a record named)."""
        end = offset + len(data)
        if offset < 0 or end > self.capacity:
            raise StageOverflow(f"Stage.{len(data)}B")
        self._buf[offset:end] = data

    @property
    def high_water(self) -> int:
        """The most of the segment ever in use (a rewind keeps its mark)."""
        return max(self._high, self.used)

    def _rewind(self) -> None:
        self._high = self.high_water

    def reset(self) -> None:
        """Rewind the bump pointer to the window's base (only once everything staged in the
        window has been applied)."""
        self._rewind()
        self.used = self.base
        self.resets += 1

    def region(self, index: int, count: int) -> None:
        """Bump within region ``index`` of ``count`` equal regions (present credit: frame k
        stages into region k mod (credit + 1), free once present k - credit - 1 applied)."""
        size = self.capacity // count // self._align * self._align
        self._rewind()
        self.base, self.limit, self.wide = index * size, index * size + size, count == 1
        self.used = self.base
        self.resets += 1

    def widen(self) -> None:
        """The whole segment, from 0 (everything staged has been applied)."""
        self._rewind()
        self.base, self.limit, self.wide, self.used = 0, self.capacity, True, 0
        self.resets += 1

    @property
    def free(self) -> int:
        return self.limit - self.used
