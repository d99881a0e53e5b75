"""The wire codec: one record per call (seed 001 §4; layouts from the generated tables).

Record = ``MGPWireRecHeader{Op, Flags, Size}`` + payload + tails. Each tail (a ``TAILS``
row of the call, in order) starts at the next 8-byte boundary and is present only when
its condition holds; its element count is the payload's count field, or exactly 1.
``Size`` includes the header and is a multiple of 8. ``Flags`` is ring framing: the
encoder writes 0 and the decoder ignores it (R-17).

:class:`Encoder` refuses a client bug (a tail whose length disagrees with its count
field, a count over its bound, a blob on a call without ``kHasBlob``) with
``ValueError`` naming the call. :class:`Decoder` validates every byte it relies on before
it touches it and refuses with ``ProtocolCorruption(reason)`` only:

=====================================  =================================
fault                                   reason
=====================================  =================================
fewer bytes than a header               ``Wire.Header``
Size < header, not 8-aligned, > bytes   ``Wire.Size``
Op 0 (wrap pad) or not a catalogue row  ``Wire.Op``
Size below the fixed record, or not     ``<Call>.Size``
exactly it for a non-kVarTail call
count over its bound, or a window       ``<Call>.<CountField>``
Start + Count past its bound
tails do not fill Size exactly          ``<Call>.Tail``
blob outside SEG_STAGE                  ``<Call>.Blob``
semantic checks (seed 002 §1)           ``SetShaderBuffers.Class``,
                                        ``Present.FrameSerial``,
                                        ``ImageView.Access``,
                                        ``SetVertexAttribDefaults.Count``
=====================================  =================================

The decoded payload and tails are zero-copy numpy views over the record buffer (valid
while the buffer is); the blob is a view into the stage segment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..errors import ProtocolCorruption
from ..schema import layouts
from ..schema import tables as _t
from .header import RECORD_ALIGN, header_size, pack_header, read_header
from .stage import StageSegment
from .spec import CallSpec, TailSpec, align8, call_spec, spec_for_opcode

__all__ = ["Encoder", "Decoder", "Decoded", "tails_by_element", "IMAGE_ACCESS_MAX"]

#: ``MGPImageView::Access``: 0 read-only, 1 write-only, 2 read-write (seed 002 §1).
IMAGE_ACCESS_MAX = 2
_IMAGE_VIEW = "MGPImageView"
_ACCESS = "Access"

TailInput = np.ndarray | Sequence[Mapping[str, Any]] | Sequence[int] | bytes


class Decoded(NamedTuple):
    op: int
    name: str
    payload: np.void
    tails: tuple[np.ndarray, ...]  # the PRESENT tails, in TAILS order
    blob: memoryview | None  # the first MGPBlobRef of a kHasBlob call, else None
    size: int


def tails_by_element(decoded: Decoded) -> dict[str, np.ndarray]:
    """The present tails of ``decoded`` keyed by element name (unique within a call)."""
    spec = call_spec(decoded.name)
    return {t.element: arr for t, arr in zip(spec.present_tails(decoded.payload), decoded.tails)}


def _layout(spec: CallSpec, tails: Sequence[tuple[TailSpec, int]]) -> tuple[list[int], int]:
    """Offsets of each present tail and the record's Size."""
    cursor = spec.header_size + spec.payload_size
    offsets = []
    for t, count in tails:
        cursor = align8(cursor)
        offsets.append(cursor)
        cursor += count * t.dtype.itemsize
    return offsets, align8(cursor)


class Encoder:
    """Client side: builds records; stages ``kHasBlob`` bytes into ``stage``."""

    def __init__(self, stage: StageSegment) -> None:
        self.stage = stage
        self.encoded = 0

    def encode(
        self,
        call: str,
        payload: Mapping[str, Any] | np.void | None = None,
        tails: Sequence[TailInput] = (),
        blob: bytes | bytearray | memoryview | None = None,
    ) -> bytes:
        spec = call_spec(call)
        holder = np.zeros(1, spec.dtype)
        rec = holder[0]
        if isinstance(payload, np.void):
            if payload.dtype != spec.dtype:
                raise ValueError(f"{call}: payload record is {payload.dtype}, not {spec.payload}")
            holder[0] = payload
        elif payload is not None:
            layouts.fill(rec, payload, call)
        if blob is not None:
            if not spec.blob_paths:
                raise ValueError(f"{call}: not a kHasBlob call, cannot carry a blob")
            offset, size, seg = self.stage.stage(blob)
            ref = layouts.get_path(rec, spec.blob_paths[0])
            layouts.fill(ref, {"Offset": offset, "Size": size, "Seg": seg}, f"{call}.Blob")
        present = spec.present_tails(rec)
        if len(tails) != len(present):
            names = ", ".join(t.element for t in present) or "none"
            raise ValueError(f"{call}: {len(tails)} tails given, present tails are: {names}")
        arrays: list[np.ndarray] = []
        counted: list[tuple[TailSpec, int]] = []
        for t, rows in zip(present, tails):
            arr = layouts.array(t.dtype, rows, f"{call}.{t.element}")
            count = t.count(rec)
            if len(arr) != count:
                raise ValueError(
                    f"{call}: tail {t.element} has {len(arr)} elements but "
                    f"{t.count_field or 'the record'} says {count}"
                )
            if t.bound is not None and count > t.bound:
                raise ValueError(f"{call}: {t.count_field} = {count} exceeds its bound {t.bound}")
            arrays.append(arr)
            counted.append((t, count))
        offsets, size = _layout(spec, counted)
        out = bytearray(size)
        out[: spec.header_size] = pack_header(spec.opcode, 0, size)
        out[spec.header_size : spec.header_size + spec.payload_size] = rec.tobytes()
        for off, arr in zip(offsets, arrays):
            raw = arr.tobytes()
            out[off : off + len(raw)] = raw
        self.encoded += 1
        return bytes(out)


def _as_bytes_view(record: Any) -> memoryview:
    mv = record if isinstance(record, memoryview) else memoryview(record)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv


Check = Callable[[np.void], bool]


@lru_cache(maxsize=None)
def _semantic_checks() -> dict[str, tuple[tuple[str, Check], ...]]:
    """Record-local semantic rules of seed 002 §1: call -> ((reason, holds?), ...)."""
    class_count = _t.constant("kMGPipeShaderBufferClassCount")
    return {
        "SetShaderBuffers": (("SetShaderBuffers.Class", lambda p: int(p["Class"]) < class_count),),
        "Present": (("Present.FrameSerial", lambda p: int(p["FrameSerial"]) != 0),),
        "SetVertexAttribDefaults": (
            (
                "SetVertexAttribDefaults.Count",
                lambda p: int(p["Count"]) == int(p["Mask"]).bit_count(),
            ),
        ),
    }


class Decoder:
    """Server side: validates a record, then returns zero-copy views of it."""

    def __init__(self, stage: StageSegment) -> None:
        self.stage = stage
        self.decoded = 0
        self._hdr = header_size()

    def decode(self, record: memoryview | bytes | bytearray) -> Decoded:
        mv = _as_bytes_view(record)
        hdr = self._hdr
        if len(mv) < hdr:
            raise ProtocolCorruption("Wire.Header")
        op, _flags, size = read_header(mv)
        if size < hdr or size % RECORD_ALIGN or size > len(mv):
            raise ProtocolCorruption("Wire.Size")
        spec = spec_for_opcode(op)
        if spec is None:
            raise ProtocolCorruption("Wire.Op")
        name = spec.name
        if size < spec.fixed_size or (not spec.var_tail and size != spec.fixed_size):
            raise ProtocolCorruption(f"{name}.Size")
        payload = np.frombuffer(mv, spec.dtype, count=1, offset=hdr)[0]
        tails = self._tails(spec, mv, payload, size)
        blob = self._blobs(spec, payload)
        for reason, holds in _semantic_checks().get(name, ()):
            if not holds(payload):
                raise ProtocolCorruption(reason)
        self._check_image_views(spec, payload, tails)
        self.decoded += 1
        return Decoded(spec.opcode, name, payload, tails, blob, size)

    def blob_views(self, decoded: Decoded) -> dict[str, memoryview]:
        """Every ``MGPBlobRef`` of a ``kHasBlob`` payload, by path (``"Spirv[2]"``)."""
        spec = call_spec(decoded.name)
        return {
            layouts.path_name(p): self.stage.view(
                layouts.get_path(decoded.payload, p), f"{spec.name}.Blob"
            )
            for p in spec.blob_paths
        }

    def _tails(
        self, spec: CallSpec, mv: memoryview, payload: np.void, size: int
    ) -> tuple[np.ndarray, ...]:
        cursor = spec.header_size + spec.payload_size
        out: list[np.ndarray] = []
        for t in spec.tails:
            if not t.present(payload):
                continue
            count = t.count(payload)
            if t.bound is not None:
                start = t.start(payload)
                if count > t.bound or start + count > t.bound:
                    raise ProtocolCorruption(t.reason)
            cursor = align8(cursor)
            end = cursor + count * t.dtype.itemsize
            if end > size:
                raise ProtocolCorruption(f"{spec.name}.Tail")
            if count:
                out.append(np.frombuffer(mv, t.dtype, count=count, offset=cursor))
            else:
                out.append(np.zeros(0, t.dtype))
            cursor = end
        if align8(cursor) != size:
            raise ProtocolCorruption(f"{spec.name}.Tail")
        return tuple(out)

    def _blobs(self, spec: CallSpec, payload: np.void) -> memoryview | None:
        if not spec.blob_paths:
            return None
        what = f"{spec.name}.Blob"
        views = [self.stage.view(layouts.get_path(payload, p), what) for p in spec.blob_paths]
        return views[0]

    @staticmethod
    def _check_image_views(spec: CallSpec, payload: np.void, tails: tuple[np.ndarray, ...]) -> None:
        for p in spec.image_view_paths:
            if int(layouts.get_path(payload, p)[_ACCESS]) > IMAGE_ACCESS_MAX:
                raise ProtocolCorruption("ImageView.Access")
        for t, arr in zip(spec.present_tails(payload), tails):
            if t.element == _IMAGE_VIEW and arr.size and int(arr[_ACCESS].max()) > IMAGE_ACCESS_MAX:
                raise ProtocolCorruption("ImageView.Access")
