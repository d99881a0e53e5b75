"""A recorder capture in MobileGL's recorder golden format: ``index call bytes hash``.

One line per record MobileGL's recorder would see, in apply order: its index, its call, the
bytes the call carried and a 64-bit FNV-1a hash (hex, 16 digits) over the record normalised
and its companions. MobileGL records at three doors, and each door has its own rule for what
the bytes and the hash cover; which door a call leaves through is decided here the way
MobileGL's frontend decides it:

* **the interface tables** (every call not named below). The payload, with every address a
  record names that is not a function of the GL calls zeroed: an ``MGPBlobRef`` or
  ``MGHostSpan`` whose segment is "none" (caller memory) loses its offset, a host span loses its
  pointer; sizes are kept. Then, for a ``kHasBlob`` call, each blob the payload names (in payload
  order, an empty one too): its size as a little-endian 64-bit integer and its bytes; then, for
  a ``kVarTail`` call, each tail present (``TAILS`` order): its element count as a 64-bit
  integer and its bytes (host spans in a tail normalised like the payload's). Bytes: the
  payload, the blobs and the tails. (MobileGL's table calls have one tail each; a call whose
  ``TAILS`` has two rows, ``SetShaderBuffers`` or ``SetStreamOutputTargets``, hashes both here.)
* **the verb session** (every call of class :data:`VERB_CLASS`): the payload normalised, then
  each tail present with its size IN BYTES as the 64-bit prefix (the session sees tails as
  byte spans, not element arrays). A blob a verb names is staged by the session first: that is
  a line of its own, ``StageBytes`` (its size, the hash of its bytes), before the verb's line.
* **the route escapes** (:func:`route_escapes`, the tables' ``MGPipeRouteEscape``: the calls
  MobileGL's monolith hands past the tables).
  Bytes: the payload alone. Hash: the payload normalised, then what the escape hashes beside
  it: ``ResourceRespecify`` its respecified level (the desc's two scope members when
  ``HasRespecifiedLevel``, else a 64-bit zero) and whether it carried initial bytes (64-bit
  1 / 0); ``CreateShaderState`` its linked stage count and the stages (``Uint32`` each, the bit
  indices of ``StageMask``); ``SetProgramBindings`` its tails' bytes with no count prefix;
  ``ResourceFlushRange`` the bytes flushed (counted in its bytes too); ``MapPersistent`` the
  mapped size and seed bytes.

MobileGL's monolith hands ``glBufferData``'s bytes to the respecify escape itself; mgpipe's wire
carries them as the ``ResourceSubData`` that follows the ``ResourceRespecify`` (the descriptor
has no carrier for them). So a buffer respecify with defined content followed at once by a
sub-data of the same buffer covering the whole of it, in one region, is one line: the
respecify's, with "initial bytes" set (:func:`golden_lines` ``fold_initial_bytes``).

Every layout, flag and class is the tables' (``STRUCTS``, ``TAILS``, ``CALLS``), and so are the
escapes' call names (``ENUMS["MGPipeRouteEscape"]``, the catalogue overlay's list of MobileGL's
routing). The record header and its padding are not hashed. The comment lines that open a
golden file say what the file is.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass
from functools import lru_cache

from ..schema import tables as _t
from ..schema import layouts
from ..wire.header import header_size
from ..wire.spec import CallSpec, align8, spec_for_opcode

__all__ = [
    "ESCAPES", "ESCAPE_ENUM", "route_escapes", "FNV_OFFSET", "FNV_PRIME", "STAGE_BYTES", "VERB_CLASS", "GoldenLine",
    "fnv1a64", "golden_lines", "golden_records", "golden_text", "parse_golden",
]  # fmt: skip

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1
_BLOB, _SPAN = "MGPBlobRef", "MGHostSpan"
_SEG_NONE = "kMGHostSpanSegNone"
#: the class of the calls MobileGL emits through its verb session
VERB_CLASS = "kCtxVerb"
#: the line the verb session writes for a blob it stages
STAGE_BYTES = "StageBytes"
#: the enum naming the calls MobileGL's monolith routes around its interface tables
ESCAPE_ENUM = "MGPipeRouteEscape"


def route_escapes() -> frozenset[str]:
    """The route escapes: the members of the tables' ``MGPipeRouteEscape`` (the overlay's
    list of MobileGL's ``MGPipeRouteEscapes`` rows), each a call of ``CALLS``; a member
    that names no call is a named table error. Tables that declare no such enum (the
    original-shape catalogue, which predates MobileGL's routing) route no call around
    their rows: every record is a table or verb line there."""
    calls = {str(row["name"]) for row in _t.tables().CALLS}
    if ESCAPE_ENUM not in _t.tables().ENUMS:
        return frozenset()
    names = frozenset(_t.enum_members(ESCAPE_ENUM))
    stray = sorted(names - calls)
    if stray:
        raise _t.TablesError(f"{ESCAPE_ENUM}: {', '.join(stray)} name no call of CALLS")
    return names


def __getattr__(name: str) -> object:
    # ESCAPES: read from the tables on first use, never at import
    if name == "ESCAPES":
        return route_escapes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


HEADER = ("# mgpipe recorder golden, in MobileGL's recorder golden format. One record per line:\n"
          "# index call bytes hash (FNV-1a 64 over the normalised payload, its blobs and tails).\n")


def fnv1a64(data: bytes, value: int = FNV_OFFSET) -> int:
    for b in data:
        value = ((value ^ b) * FNV_PRIME) & _MASK
    return value


def _u64(v: int) -> bytes:
    return _struct.pack("<Q", v)


@dataclass(frozen=True)
class GoldenLine:
    """One line of a golden: the record (``record``: its index in the capture, -1 for none) it
    stands for, and what the line says."""

    call: str
    nbytes: int
    hash: int
    record: int = -1

    def text(self, index: int) -> str:
        return f"{index} {self.call} {self.nbytes} {self.hash:016x}"


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


def _addresses_safe(element: str) -> bool:
    try:
        return bool(_addresses(element))
    except _t.TablesError:
        return False  # a scalar tail


@dataclass
class _Record:
    """One captured record, parsed: the pieces every door hashes a share of."""

    spec: CallSpec
    payload: bytes  # normalised
    view: object  # the payload as captured (numpy record)
    blobs: list[bytes]  # one per MGPBlobRef the payload names, in payload order ("" if empty)
    tails: list[tuple[int, bytes]]  # (count, normalised bytes) per tail present


def _parse(index: int, raw: bytes, captured: list[tuple[int, bytes]]) -> _Record:
    op, _size = _struct.unpack_from("<HxxI", raw, 0)
    spec = spec_for_opcode(op)
    if spec is None:
        raise ValueError(f"record {index}: opcode {op} is no call of the tables")
    at = header_size()
    payload = bytearray(raw[at: at + spec.payload_size])
    refs = _normalise(spec.payload, payload)
    kept = iter(data for _offset, data in captured)
    blobs = [next(kept, b"") if size else b"" for _offset, size in refs] if spec.has_blob else []
    pos = align8(at + spec.payload_size)
    rec = layouts.view(spec.payload, bytes(raw[at: at + spec.payload_size]))
    tails = []
    for tail in spec.present_tails(rec):
        count = tail.count(rec)
        size = count * tail.dtype.itemsize
        body = bytearray(raw[pos: pos + size])
        if tail.element in (_BLOB, _SPAN) or _addresses_safe(tail.element):
            for i in range(count):
                _normalise(tail.element, body, i * tail.dtype.itemsize)
        tails.append((count, bytes(body)))
        pos = align8(pos + size)
    return _Record(spec, bytes(payload), rec, blobs, tails)


def _table_line(r: _Record, index: int) -> list[GoldenLine]:
    value, carried = fnv1a64(r.payload), r.spec.payload_size
    for data in r.blobs:
        value = fnv1a64(_u64(len(data)) + data, value)
        carried += len(data)
    for count, body in r.tails if r.spec.var_tail else ():
        value = fnv1a64(_u64(count) + body, value)
        carried += len(body)
    return [GoldenLine(r.spec.name, carried, value, index)]


def _verb_lines(r: _Record, index: int) -> list[GoldenLine]:
    staged = [GoldenLine(STAGE_BYTES, len(data), fnv1a64(data), -1) for data in r.blobs if data]
    value, carried = fnv1a64(r.payload), r.spec.payload_size
    for _count, body in r.tails:
        value = fnv1a64(_u64(len(body)) + body, value)
        carried += len(body)
    return staged + [GoldenLine(r.spec.name, carried, value, index)]


def _scalar(r: _Record, name: str) -> int:
    return int(r.view[name])  # type: ignore[index]


def _escape_line(r: _Record, index: int, initial_bytes: bool) -> list[GoldenLine]:
    name, value, carried = r.spec.name, fnv1a64(r.payload), r.spec.payload_size
    if name == "ResourceRespecify":
        if _scalar(r, "HasRespecifiedLevel"):
            fields = (_t.field(r.spec.payload, m) for m in ("RespecifiedUploadTarget", "RespecifiedLevel"))
            level = b"".join(r.payload[f.offset: f.offset + f.size] for f in fields)
        else:
            level = _u64(0)  # no level: the escape hashes a null companion as a 64-bit zero
        value = fnv1a64(level + _u64(1 if initial_bytes else 0), value)
    elif name == "CreateShaderState":
        mask = _scalar(r, "StageMask")
        stages = [i for i in range(mask.bit_length()) if mask >> i & 1]
        value = fnv1a64(_u64(len(stages)) + b"".join(_struct.pack("<I", s) for s in stages), value)
    elif name == "SetProgramBindings":
        value = fnv1a64(b"".join(body for _count, body in r.tails), value)
    elif name == "ResourceFlushRange":
        data = b"".join(r.blobs) + b"".join(body for _count, body in r.tails)
        value = fnv1a64(data, value)
        carried += _scalar(r, "Size")
    elif name == "MapPersistent":
        data = b"".join(r.blobs)
        value = fnv1a64(_u64(len(data)) + data, value)
        carried += len(data)
    return [GoldenLine(name, carried, value, index)]


def _folds_into(resp: _Record, sub: _Record) -> bool:
    """``sub`` (a ResourceSubData) is ``resp``'s (a buffer ResourceRespecify's) initial bytes."""
    buffer = _t.enum("MGPipeResourceTarget")["Buffer"]
    if sub.spec.name != "ResourceSubData" or _scalar(resp, "Target") != buffer:
        return False
    if not _scalar(resp, "HasDefinedContent") or _scalar(sub, "Target") != buffer:
        return False
    box = sub.view["UnionBox"]  # type: ignore[index]
    same = sub.view["Res"].tobytes() == resp.view["Resource"].tobytes()  # type: ignore[index]
    whole = int(box["X"]) == 0 and int(box["W"]) == _scalar(resp, "Width")
    return same and whole and _scalar(sub, "RegionCount") == 0 and len(b"".join(sub.blobs)) == _scalar(resp, "Width")


def golden_records(recorder, *, fold_initial_bytes: bool = True) -> list[GoldenLine]:  # type: ignore[no-untyped-def]
    """The lines of ``recorder`` (a :class:`~.recorder.Recorder`, or anything with ``raw`` and
    ``blobs``), each naming the captured record it stands for."""
    parsed = [_parse(i, raw, recorder.blobs.get(i, [])) for i, raw in enumerate(recorder.raw)]
    out: list[GoldenLine] = []
    skip = -1
    escapes = route_escapes()
    for i, r in enumerate(parsed):
        if i == skip:
            continue
        if r.spec.name in escapes:
            initial = (fold_initial_bytes and r.spec.name == "ResourceRespecify" and i + 1 < len(parsed)
                       and _folds_into(r, parsed[i + 1]))  # fmt: skip
            if initial:
                skip = i + 1
            out += _escape_line(r, i, initial)
        elif r.spec.cls == VERB_CLASS:
            out += _verb_lines(r, i)
        else:
            out += _table_line(r, i)
    return out


def golden_lines(recorder, *, fold_initial_bytes: bool = True) -> list[str]:  # type: ignore[no-untyped-def]
    """One line per record MobileGL's recorder would see, for the capture of ``recorder``."""
    return [g.text(i) for i, g in enumerate(golden_records(recorder, fold_initial_bytes=fold_initial_bytes))]


def golden_text(recorder, **kw) -> str:  # type: ignore[no-untyped-def]
    return HEADER + "".join(line + "\n" for line in golden_lines(recorder, **kw))


def parse_golden(text: str) -> list[tuple[int, str, int, int]]:
    """The lines of a golden file: (index, call, bytes, hash); comment lines skipped."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        index, call, nbytes, value = line.split()
        out.append((int(index), call, int(nbytes), int(value, 16)))
    return out
