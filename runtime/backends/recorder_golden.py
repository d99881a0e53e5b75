"""A recorder capture in MobileGL's recorder golden format: ``index call bytes hash``.

One line per record, in apply order: its index, its call, the bytes the call carried (the
payload struct, the blobs it names and its tails) and a 64-bit FNV-1a hash (hex, 16 digits)
over the record normalised and its companions:

* the payload, with every address a record names that is not a function of the GL calls
  zeroed: an ``MGPBlobRef`` or ``MGHostSpan`` whose segment is "none" (caller memory) loses
  its offset, a host span loses its pointer; sizes are kept;
* then, for each blob the payload names (non-empty, in payload order), its size as a
  little-endian 64-bit integer and its bytes;
* then, for each tail present (``TAILS`` order), its element count as a 64-bit integer and
  its bytes (host spans in a tail normalised like the payload's).

Every layout is the tables' (``STRUCTS``, ``TAILS``); the record header and its padding are
not hashed. The two comment lines that open a golden file say what the file is.
"""

from __future__ import annotations

import struct as _struct
from functools import lru_cache

from ..schema import tables as _t
from ..schema import layouts
from ..wire.header import header_size
from ..wire.spec import align8, spec_for_opcode

__all__ = ["FNV_OFFSET", "FNV_PRIME", "fnv1a64", "golden_lines", "golden_text"]

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1
_BLOB, _SPAN = "MGPBlobRef", "MGHostSpan"
_SEG_NONE = "kMGHostSpanSegNone"
HEADER = ("# mgpipe recorder golden, in MobileGL's recorder golden format. One record per line:\n"
          "# index call bytes hash (FNV-1a 64 over the normalised payload, its blobs and tails).\n")


def fnv1a64(data: bytes, value: int = FNV_OFFSET) -> int:
    for b in data:
        value = ((value ^ b) * FNV_PRIME) & _MASK
    return value


def _u64(v: int) -> bytes:
    return _struct.pack("<Q", v)


@lru_cache(maxsize=None)
def _addresses(struct: str) -> tuple[tuple[str, int], ...]:
    """(``MGPBlobRef`` | ``MGHostSpan``, absolute offset) of every one inside ``struct``."""
    out: list[tuple[str, int]] = []
    if struct in (_BLOB, _SPAN):
        return ((struct, 0),)
    for m in _t.struct_info(struct)["members"]:
        inner = m.get("struct")
        if not inner:
            continue
        for i in range(int(m.get("count", 1))):
            base = int(m["offset"]) + i * int(m["elem_size"])
            out += [(kind, base + off) for kind, off in _addresses(inner)]
    return tuple(out)


def _field(struct: str, name: str) -> tuple[int, str]:
    f = _t.field(struct, name)
    return f.offset, "<" + f.fmt


def _normalise(struct: str, data: bytearray, base: int = 0) -> list[tuple[int, int]]:
    """Zero the addresses in ``data[base:]`` (a ``struct``); returns (offset, size) of every
    blob it names, in payload order (absolute within ``data``)."""
    none = int(_t.constant(_SEG_NONE))
    blobs: list[tuple[int, int]] = []
    for kind, off in _addresses(struct):
        at = base + off
        seg_off, seg_fmt = _field(kind, "Seg")
        (seg,) = _struct.unpack_from(seg_fmt, data, at + seg_off)
        o_off, o_fmt = _field(kind, "Offset")
        if kind == _BLOB:
            s_off, s_fmt = _field(kind, "Size")
            (size,) = _struct.unpack_from(s_fmt, data, at + s_off)
            (offset,) = _struct.unpack_from(o_fmt, data, at + o_off)
            blobs.append((offset, size))
        if seg == none:
            _struct.pack_into(o_fmt, data, at + o_off, 0)
        if kind == _SPAN:
            p = next(m for m in _t.struct_info(_SPAN)["members"] if m["name"] == "Ptr")
            data[at + int(p["offset"]): at + int(p["offset"]) + int(p["size"])] = bytes(int(p["size"]))
    return blobs


def _record_line(index: int, raw: bytes, blobs: list[tuple[int, bytes]]) -> str:
    op, _size = _struct.unpack_from("<HxxI", raw, 0)
    spec = spec_for_opcode(op)
    if spec is None:
        raise ValueError(f"record {index}: opcode {op} is no call of the tables")
    at = header_size()
    payload = bytearray(raw[at: at + spec.payload_size])
    _normalise(spec.payload, payload)
    value = fnv1a64(bytes(payload))
    carried = spec.payload_size
    for _offset, data in blobs:
        value = fnv1a64(_u64(len(data)) + data, value)
        carried += len(data)
    pos = align8(at + spec.payload_size)
    rec = layouts.view(spec.payload, bytes(raw[at: at + spec.payload_size]))
    for tail in spec.present_tails(rec):
        count = tail.count(rec)
        size = count * tail.dtype.itemsize
        body = bytearray(raw[pos: pos + size])
        if tail.element in (_BLOB, _SPAN) or _addresses_safe(tail.element):
            for i in range(count):
                _normalise(tail.element, body, i * tail.dtype.itemsize)
        value = fnv1a64(_u64(count) + bytes(body), value)
        carried += size
        pos = align8(pos + size)
    return f"{index} {spec.name} {carried} {value:016x}"


def _addresses_safe(element: str) -> bool:
    try:
        return bool(_addresses(element))
    except _t.TablesError:
        return False  # a scalar tail


def golden_lines(recorder) -> list[str]:  # type: ignore[no-untyped-def]
    """One line per captured record of ``recorder`` (a :class:`~.recorder.Recorder`)."""
    return [_record_line(i, raw, recorder.blobs.get(i, [])) for i, raw in enumerate(recorder.raw)]


def golden_text(recorder) -> str:  # type: ignore[no-untyped-def]
    return HEADER + "".join(line + "\n" for line in golden_lines(recorder))
