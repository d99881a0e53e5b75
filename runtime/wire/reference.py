"""The reference decoder: the wire rules written plainly over numpy views (the fuzz oracle).

The production decoder (:mod:`.codec`) is compiled per call for speed; this one walks
the same tables one rule at a time and is the differential oracle the decoder fuzzer
compares it against (same refusal reason, or the same decoded values). It is never on
a hot path.

The wire rules (seed 001 §4; layouts from the generated tables):

Record = ``MGPWireRecHeader{Op, Flags, Size}`` + payload + tails. Each tail (a ``TAILS``
row of the call, in order) starts at the next 8-byte boundary and is present only when
its condition holds; its element count is the payload's count field, or exactly 1.
``Size`` includes the header and is a multiple of 8. ``Flags`` is ring framing: the
encoder writes 0 and the decoder ignores it (R-17).

:class:`ReferenceDecoder` validates every byte it relies on before it touches it and
refuses with ``ProtocolCorruption(reason)`` only, with the reasons of :mod:`.codec`'s fault
table (the fuzzer's differential oracle holds the two to the same contract).

The decoded payload and tails are zero-copy numpy views over the record buffer (valid
while the buffer is); the blob is a view into the stage segment.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..errors import ProtocolCorruption
from ..schema import layouts
from ..schema import tables as _t
from .header import record_align, header_size, read_header
from .stage import StageSegment
from .spec import CallSpec, align8, call_spec, spec_for_opcode

__all__ = ["ReferenceDecoder", "RefDecoded", "IMAGE_ACCESS_MAX", "image_access_max",
           "OracleMismatch", "differential"]  # fmt: skip



image_access_max = _t.image_access_max  # the one helper (runtime/schema/tables.py)


def __getattr__(name: str) -> object:
    # IMAGE_ACCESS_MAX: read from the tables on first use, never at import
    if name == "IMAGE_ACCESS_MAX":
        return image_access_max()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_IMAGE_VIEW = "MGPImageView"
_HOST_SPAN = "MGHostSpan"
_ACCESS = "Access"


class RefDecoded(NamedTuple):
    op: int
    name: str
    payload: np.void
    tails: tuple[np.ndarray, ...]  # the PRESENT tails, in TAILS order
    blob: memoryview | None  # the first MGPBlobRef of a kHasBlob call, else None
    size: int


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


class ReferenceDecoder:
    """The reference decoder: validates a record, then returns zero-copy numpy views of it."""

    def __init__(self, stage: StageSegment) -> None:
        self.stage = stage
        self.decoded = 0
        self._hdr = header_size()

    def decode(self, record: memoryview | bytes | bytearray) -> RefDecoded:
        mv = _as_bytes_view(record)
        hdr = self._hdr
        if len(mv) < hdr:
            raise ProtocolCorruption("Wire.Header")
        op, _flags, size = read_header(mv)
        if size < hdr or size % record_align() or size > len(mv):
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
        return RefDecoded(spec.opcode, name, payload, tails, blob, size)

    def blob_views(self, decoded: RefDecoded) -> dict[str, memoryview]:
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
            if t.element == _HOST_SPAN:
                self._check_host_spans(spec, out[-1])
            cursor = end
        if align8(cursor) != size:
            raise ProtocolCorruption(f"{spec.name}.Tail")
        return tuple(out)

    def _check_host_spans(self, spec: CallSpec, spans: np.ndarray) -> None:
        """Seed 001 §17.1 R-2: no pointer on the wire; the bytes in SEG_STAGE, or the
        server's index mirror (``kMGHostSpanSegFromServerIndexMirror``, nothing staged)."""
        mirror = _t.constant("kMGHostSpanSegFromServerIndexMirror")
        for x in spans:
            if int(x["Ptr"]):
                raise ProtocolCorruption(f"{spec.name}.MGHostSpan.Ptr")
            if int(x["Seg"]) != mirror:
                self.stage.view((int(x["Offset"]), int(x["Size"]), int(x["Seg"])),
                                f"{spec.name}.MGHostSpan")  # fmt: skip

    def _blobs(self, spec: CallSpec, payload: np.void) -> memoryview | None:
        if not spec.blob_paths:
            return None
        what = f"{spec.name}.Blob"
        views = [self.stage.view(layouts.get_path(payload, p), what) for p in spec.blob_paths]
        return views[0]

    @staticmethod
    def _check_image_views(spec: CallSpec, payload: np.void, tails: tuple[np.ndarray, ...]) -> None:
        for p in spec.image_view_paths:
            if int(layouts.get_path(payload, p)[_ACCESS]) > image_access_max():
                raise ProtocolCorruption("ImageView.Access")
        for t, arr in zip(spec.present_tails(payload), tails):
            if t.element == _IMAGE_VIEW and arr.size and (
                int(arr[_ACCESS].max()) > image_access_max()
            ):
                raise ProtocolCorruption("ImageView.Access")


class OracleMismatch(AssertionError):
    """The production decoder and the reference disagree on one record."""


def _outcome(decode: Callable[[bytes], Any], record: bytes) -> tuple[str, Any]:
    try:
        return "ok", decode(record)
    except ProtocolCorruption as exc:
        return "refused", exc.reason


def _carried(struct_name: str, raw: bytes) -> bytes:
    """``raw`` as a decoded record carries it (floats through one unpack / pack)."""
    from .records import pack_record, unpack_record

    return pack_record(struct_name, unpack_record(struct_name, raw))


def differential(fast: Any, reference: ReferenceDecoder, record: bytes) -> str:
    """Decode ``record`` with both decoders; "refused:<reason>" or "decoded:<call>" when
    they agree, :class:`OracleMismatch` naming the difference when they do not (a bounds
    check missing from one of them shows up here, not only as a crash)."""
    from .records import pack_record

    kind_f, got = _outcome(fast.decode, record)
    kind_r, want = _outcome(reference.decode, record)
    if kind_f != kind_r:
        raise OracleMismatch(f"decoder {kind_f} ({_brief(got)}), reference {kind_r} ({_brief(want)})")
    if kind_f == "refused":
        if got != want:
            raise OracleMismatch(f"refusal reasons differ: {got!r} vs reference {want!r}")
        return f"refused:{got}"
    spec = call_spec(want.name)
    if (got.op, got.name, got.size) != (want.op, want.name, want.size):
        raise OracleMismatch(f"header differs: {got[:2]}/{got.size} vs {want[:2]}/{want.size}")
    if pack_record(spec.payload, got.payload) != _carried(spec.payload, want.payload.tobytes()):
        raise OracleMismatch(f"{want.name}: payload differs")
    present = spec.present_tails(want.payload)
    if len(got.tails) != len(want.tails):
        raise OracleMismatch(f"{want.name}: {len(got.tails)} tails vs {len(want.tails)}")
    for t, g, w in zip(present, got.tails, want.tails):
        if len(g) != len(w):
            raise OracleMismatch(f"{want.name}.{t.element}: {len(g)} elements vs {len(w)}")
        if t.dtype.names:
            if any(pack_record(t.element, a) != _carried(t.element, b.tobytes()) for a, b in zip(g, w)):
                raise OracleMismatch(f"{want.name}.{t.element}: elements differ")
        elif t.dtype.kind != "f" and list(g) != [x.item() for x in w]:
            raise OracleMismatch(f"{want.name}.{t.element}: values differ")
    if (got.blob is None) != (want.blob is None) or (
        got.blob is not None and bytes(got.blob) != bytes(want.blob)
    ):
        raise OracleMismatch(f"{want.name}: blob differs")
    return f"decoded:{want.name}"


def _brief(value: Any) -> str:
    return value if isinstance(value, str) else getattr(value, "name", type(value).__name__)
