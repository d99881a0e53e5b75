"""The wire codec: one record per call (seed 001 §4; layouts from the generated tables).

Record = ``MGPWireRecHeader{Op, Flags, Size}`` + payload + tails. Each tail (a ``TAILS``
row of the call, in order) starts at the next 8-byte boundary and is present only when
its condition holds; its element count is the payload's count field, or exactly 1.
``Size`` includes the header and is a multiple of 8. ``Flags`` is ring framing: the
encoder writes 0 and the decoder ignores it (R-17).

:class:`Encoder` builds a record from a nested dict (or a record) and refuses a client bug
(a tail whose length disagrees with its count field, a count over its bound, a blob on a
call without ``kHasBlob``) with ``ValueError`` naming the call; the hot paths use the
compiled :func:`~.compiled.packer` instead. :class:`Decoder` copies the record's bytes
once, validates every byte it relies on before it touches it, and refuses with
``ProtocolCorruption(reason)`` only:

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

A decoded record (:class:`Decoded`) is immutable: the payload is a generated named
record (:mod:`.records`), the tails are tuples, the blob is a copy. It never refers to
the buffer it came from (docs/BACKENDS.md).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..errors import ProtocolCorruption
from ..schema import layouts
from ..schema.tables import image_access_max
from .compiled import decoder_for
from .header import PAD_OP, record_align, header_size, pack_header
from .records import is_record, layout, make, pack_record, unpack_record
from .spec import TailSpec, align8, call_spec, spec_for_opcode
from .stage import StageSegment

__all__ = ["Encoder", "Decoder", "Decoded", "WireDecoded", "tails_by_element", "IMAGE_ACCESS_MAX"]

TailInput = np.ndarray | Sequence[Any] | bytes


def __getattr__(name: str) -> object:
    # IMAGE_ACCESS_MAX (``MGPipeImageAccess``'s last member): from the tables on first use
    if name == "IMAGE_ACCESS_MAX":
        return image_access_max()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Decoded(NamedTuple):
    op: int
    name: str
    payload: Any  # the payload's generated named record
    tails: tuple[tuple[Any, ...], ...]  # the PRESENT tails, in TAILS order
    blob: bytes | None  # the first MGPBlobRef of a kHasBlob call (a copy), else None
    size: int


class WireDecoded(Decoded):
    """A :class:`Decoded` as the decoders build it (``WireDecoded((op, ...))``: no Python
    frame); it is a ``Decoded`` in every respect but the constructor."""

    __slots__ = ()
    __new__ = tuple.__new__  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (Decoded, tuple(self))  # unpickles as the Decoded of the same value


WireDecoded.__name__ = WireDecoded.__qualname__ = "Decoded"


def tails_by_element(decoded: Decoded) -> dict[str, tuple[Any, ...]]:
    """The present tails of ``decoded`` keyed by element name (unique within a call)."""
    spec = call_spec(decoded.name)
    present = [t for t in spec.tails if t.present(decoded.payload)]
    return {t.element: arr for t, arr in zip(present, decoded.tails)}


def _element_bytes(t: TailSpec, item: Any, where: str) -> bytes:
    """One tail element's bytes: a record, a nested dict, or a scalar (a scalar tail)."""
    if is_record(item):
        return pack_record(t.element, item)
    try:
        if t.dtype.names is None:
            return struct.pack("<" + _scalar_code(t), item)
        if isinstance(item, Mapping):
            return pack_record(t.element, make(t.element, item, where))
    except (struct.error, ValueError, TypeError, OverflowError):
        pass  # the layouts path below names the fault (or converts what it accepts)
    return layouts.array(t.dtype, [item], where).tobytes()


def _tail_bytes(t: TailSpec, rows: TailInput, where: str) -> tuple[bytes, int]:
    """(bytes, element count) of one tail given as an ndarray, raw bytes or a sequence."""
    if isinstance(rows, (np.ndarray, bytes, bytearray, memoryview)):
        arr = layouts.array(t.dtype, rows, where)
        return arr.tobytes(), len(arr)
    items = list(rows)
    return b"".join(_element_bytes(t, it, f"{where}[{i}]") for i, it in enumerate(items)), len(items)


def _scalar_code(t: TailSpec) -> str:
    from .compiled import _scalar_code as code

    return code(t)


def _payload_bytes(spec: Any, payload: Any, call: str) -> bytes:
    """The payload's bytes from a record, a numpy record, a nested dict or nothing."""
    if payload is None:
        return bytes(spec.payload_size)
    if is_record(payload):
        return pack_record(spec.payload, payload)
    if isinstance(payload, np.void):
        if payload.dtype != spec.dtype:
            raise ValueError(f"{call}: payload record is {payload.dtype}, not {spec.payload}")
        return payload.tobytes()
    try:
        return pack_record(spec.payload, make(spec.payload, payload, call))
    except (struct.error, ValueError, TypeError, OverflowError):
        pass  # the layouts path names the fault (or converts what it accepts)
    rec = np.zeros(1, spec.dtype)[0]
    layouts.fill(rec, payload, call)
    return rec.tobytes()


class Encoder:
    """Client side: builds records; stages ``kHasBlob`` bytes into ``stage``."""

    def __init__(self, stage: StageSegment) -> None:
        self.stage = stage
        self.encoded = 0

    def encode(
        self,
        call: str,
        payload: Mapping[str, Any] | Any = None,
        tails: Sequence[TailInput] = (),
        blob: bytes | bytearray | memoryview | None = None,
    ) -> bytes:
        spec = call_spec(call)
        raw = bytearray(_payload_bytes(spec, payload, call))
        if blob is not None:
            if not spec.blob_paths:
                raise ValueError(f"{call}: not a kHasBlob call, cannot carry a blob")
            offset, size, seg = self.stage.stage(blob)
            at = _blob_offsets(spec.payload, layouts.path_name(spec.blob_paths[0]))
            for (off, code), value in zip(at, (offset, size, seg)):
                struct.pack_into("<" + code, raw, off, value)
        rec = unpack_record(spec.payload, raw)
        present = spec.present_tails(rec)
        if len(tails) != len(present):
            names = ", ".join(t.element for t in present) or "none"
            raise ValueError(f"{call}: {len(tails)} tails given, present tails are: {names}")
        cursor = spec.header_size + spec.payload_size
        parts: list[tuple[int, bytes]] = []
        for t, rows in zip(present, tails):
            data, n = _tail_bytes(t, rows, f"{call}.{t.element}")
            count = t.count(rec)
            if n != count:
                raise ValueError(
                    f"{call}: tail {t.element} has {n} elements but "
                    f"{t.count_field or 'the record'} says {count}"
                )
            if t.bound is not None and count > t.bound:
                raise ValueError(f"{call}: {t.count_field} = {count} exceeds its bound {t.bound}")
            cursor = align8(cursor)
            parts.append((cursor, data))
            cursor += len(data)
        size = align8(cursor)
        out = bytearray(size)
        out[: spec.header_size] = pack_header(spec.opcode, 0, size)
        out[spec.header_size : spec.header_size + spec.payload_size] = raw
        for off, data in parts:
            out[off : off + len(data)] = data
        self.encoded += 1
        return bytes(out)



@lru_cache(maxsize=None)
def _blob_offsets(payload: str, path: str) -> tuple[tuple[int, str], ...]:
    """(offset, struct code) of ``<path>.Offset``, ``.Size``, ``.Seg`` in the payload."""
    flat = {f.path: f for f in layout(payload).flat}
    return tuple((flat[f"{path}.{m}"].offset, flat[f"{path}.{m}"].code)
                 for m in ("Offset", "Size", "Seg"))  # fmt: skip


class Decoder:
    """Server side: copies a record once, validates it, returns an immutable :class:`Decoded`."""

    def __init__(self, stage: StageSegment) -> None:
        self.stage = stage
        self.decoded = 0
        self._hdr = header_size()
        self._fns: dict[int, Callable[[bytes, int], Decoded]] = {}
        self._read_header = _header_reader()

    def function(self, op: int) -> Callable[[bytes, int], Decoded] | None:
        """The compiled decoder of opcode ``op`` (None for no catalogue row)."""
        fn = self._fns.get(op)
        if fn is None:
            spec = spec_for_opcode(op)
            if spec is None or op == PAD_OP:
                return None
            fn = self._fns[op] = decoder_for(spec.name, self.stage.view, WireDecoded)
        return fn

    def decode(self, record: memoryview | bytes | bytearray) -> Decoded:
        raw = record if type(record) is bytes else bytes(record)
        if len(raw) < self._hdr:
            raise ProtocolCorruption("Wire.Header")
        op, size = self._read_header(raw)
        if size < self._hdr or size % record_align() or size > len(raw):
            raise ProtocolCorruption("Wire.Size")
        fn = self.function(op)
        if fn is None:
            raise ProtocolCorruption("Wire.Op")
        d = fn(raw, size)
        self.decoded += 1
        return d

    def blob_views(self, decoded: Decoded) -> dict[str, memoryview]:
        """Every ``MGPBlobRef`` of a ``kHasBlob`` payload, by path (``"Spirv[2]"``)."""
        spec = call_spec(decoded.name)
        out = {}
        for p in spec.blob_paths:
            ref = decoded.payload
            for key in p:
                ref = ref[key] if isinstance(key, int) else getattr(ref, key)
            out[layouts.path_name(p)] = self.stage.view(
                (ref.Offset, ref.Size, ref.Seg), f"{spec.name}.Blob"
            )
        return out


def _header_reader() -> Callable[[bytes], tuple[int, int]]:
    """``read(raw) -> (op, size)`` compiled from the header layout of the tables."""
    lay = layout("MGPWireRecHeader")
    names = [f.path for f in lay.flat]
    st = struct.Struct("<" + lay.fmt)
    i_op, i_size = names.index("Op"), names.index("Size")
    unpack = st.unpack_from

    def read(raw: bytes) -> tuple[int, int]:
        v = unpack(raw)
        return v[i_op], v[i_size]

    return read
