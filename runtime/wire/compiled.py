"""Per-call decoders and record packers, compiled from the tables (the codec's generated part).

:func:`decoder_for` renders, for one call, the Python source of a function
``decode(raw, size) -> Decoded`` from the call's spec (payload layout, ``TAILS`` rows, blob
and image-view paths, the record-local semantic rules) and compiles it once: one
``struct.unpack_from`` for the payload, one per tail (or ``iter_unpack`` for a run of
elements), the checks in the order of the wire rules (see :mod:`.codec`), then the
immutable records. ``raw`` is the record's bytes (a ``bytes`` snapshot: the caller copies
the ring out once; nothing here reads a live buffer twice).

:func:`packer` renders a record writer for a call whose shape is fixed at build time
(header + payload + at most one tail of a fixed count): one ``struct.pack_into`` that writes
every byte of the record (members the caller does not name, padding and alignment are
written as zero), straight into a ring reservation.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import ProtocolCorruption
from ..schema import tables as _t
from .header import record_align, header_size
from .records import FlatScalar, format_of, layout, namespace_for
from .spec import WINDOW_START, CallSpec, TailSpec, align8, call_spec

__all__ = ["IMAGE_ACCESS_MAX", "image_access_max", "semantic_rules", "decoder_for", "Packer",
           "packer"]  # fmt: skip



image_access_max = _t.image_access_max  # the one helper (runtime/schema/tables.py)


def __getattr__(name: str) -> object:
    # IMAGE_ACCESS_MAX: read from the tables on first use, never at import
    if name == "IMAGE_ACCESS_MAX":
        return image_access_max()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_IMAGE_VIEW = "MGPImageView"
_HOST_SPAN = "MGHostSpan"  # seed 001 §17.1 R-2: never a pointer, bytes in SEG_STAGE
_ACCESS = "Access"
_HEADER = "MGPWireRecHeader"


@lru_cache(maxsize=None)
def semantic_rules() -> dict[str, tuple[tuple[str, Callable[[Any], bool]], ...]]:
    """Record-local semantic rules of seed 002 §1: call -> ((reason, holds(payload)), ...)."""
    class_count = _t.constant("kMGPipeShaderBufferClassCount")
    return {
        "SetShaderBuffers": (("SetShaderBuffers.Class", lambda p: p.Class < class_count),),
        "Present": (("Present.FrameSerial", lambda p: p.FrameSerial != 0),),
        "SetVertexAttribDefaults": (
            ("SetVertexAttribDefaults.Count", lambda p: p.Count == p.Mask.bit_count()),
        ),
    }


def _attr(var: str, path: tuple) -> str:
    out = var
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else f".{key}"
    return out


def _tail_source(spec: CallSpec, k: int, t: TailSpec) -> list[str]:
    """Lines decoding tail ``k`` into ``t{k}`` (appended to ``tails`` when present)."""
    lines: list[str] = []
    ind = "    "
    if t.cond_field is not None and t.when != "kAlways":
        test = "!=" if t.when == "kWhenSet" else "=="
        lines.append(f"    if p.{t.cond_field} & {t.cond_value} {test} 0:")
        ind = "        "
    n = f"p.{t.count_field}" if t.count_field else "1"
    lines.append(f"{ind}n = {n}")
    if t.bound is not None:
        start = f"p.{WINDOW_START}"
        cond = f"n > {t.bound}" + (f" or {start} + n > {t.bound}" if t.windowed else "")
        lines.append(f"{ind}if {cond}:")
        lines.append(f"{ind}    raise _PC({t.reason!r})")
    lines.append(f"{ind}c += -c % {record_align()}")
    esize = t.dtype.itemsize
    lines.append(f"{ind}e = c + n * {esize}")
    lines.append(f"{ind}if e > size:")
    lines.append(f"{ind}    raise _PC({spec.name + '.Tail'!r})")
    if t.dtype.names is None:  # a scalar tail: one unpack of n scalars
        sc = _scalar_code(t)
        lines.append(f"{ind}t{k} = _unpack_n('<%d{sc}' % n, raw, c)")
    else:
        one = layout(t.element).build("x")
        lines.append(f"{ind}if n == 1:")
        lines.append(f"{ind}    x = _E{k}(raw, c)")
        lines.append(f"{ind}    t{k} = ({one},)")
        lines.append(f"{ind}else:")
        lines.append(f"{ind}    t{k} = tuple([{one} for x in _EI{k}(raw[c:e])])")
        if t.element == _HOST_SPAN:  # Ptr null; the bytes named in SEG_STAGE or the
            # server's index mirror (kMGHostSpanSegFromServerIndexMirror: no bytes travel)
            mirror = _t.constant("kMGHostSpanSegFromServerIndexMirror")
            lines.append(f"{ind}for x in t{k}:")
            lines.append(f"{ind}    if x.Ptr:")
            lines.append(f"{ind}        raise _PC({spec.name + '.MGHostSpan.Ptr'!r})")
            lines.append(f"{ind}    if x.Seg != {mirror}:")
            lines.append(f"{ind}        _view((x.Offset, x.Size, x.Seg), "
                         f"{spec.name + '.MGHostSpan'!r})")
        if t.element == _IMAGE_VIEW:
            lines.append(f"{ind}for x in t{k}:")
            lines.append(f"{ind}    if x.{_ACCESS} > {image_access_max()}:")
            lines.append(f"{ind}        views_bad = True")
    lines.append(f"{ind}tails += (t{k},)")
    lines.append(f"{ind}c = e")
    return lines


def _scalar_code(t: TailSpec) -> str:
    from .records import SCALAR_CODES

    for row in _t.tables().TAILS:
        if row["call"] == t.call and row["element"] == t.element and row.get("scalar"):
            return SCALAR_CODES[row["scalar"]]
    raise _t.TablesError(f"TAILS {t.call}/{t.element}: a scalar tail without a scalar code")


@lru_cache(maxsize=None)
def decoder_source(name: str) -> str:
    """The source of the decoder of call ``name``."""
    spec = call_spec(name)
    hdr = header_size()
    lines = [
        "def decode(raw, size):",
        f"    if size < {spec.fixed_size}:" if spec.var_tail else f"    if size != {spec.fixed_size}:",
        f"        raise _PC({name + '.Size'!r})",
        "    v = _P(raw, %d)" % hdr,
        f"    p = {layout(spec.payload).build('v')}",
        "    tails = ()",
    ]  # fmt: skip
    if spec.tails:
        lines.append(f"    c = {hdr + spec.payload_size}")
        image_tails = any(t.element == _IMAGE_VIEW for t in spec.tails)
        if image_tails:
            lines.append("    views_bad = False")
        for k, t in enumerate(spec.tails):
            lines += _tail_source(spec, k, t)
        lines.append(f"    if c + (-c % {record_align()}) != size:")
        lines.append(f"        raise _PC({name + '.Tail'!r})")
    blob = "None"
    if spec.blob_paths:
        what = f"{name}.Blob"
        for i, path in enumerate(spec.blob_paths):
            r = _attr("p", path)
            # the stage's own acceptance, inline where it surely accepts (see
            # decoder_namespace); anything else asks the stage, which refuses by name
            lines.append(f"    bo, bs, bg = {r}.Offset, {r}.Size, {r}.Seg")
            lines.append("    if bg == _stage_seg and 0 <= bo <= _stage_cap and "
                         "0 <= bs <= _stage_cap - bo:")
            lines.append(f"        b{i} = _stage_ro[bo : bo + bs]")
            lines.append("    else:")
            lines.append(f"        b{i} = _view((bo, bs, bg), {what!r})")
        blob = "bytes(b0)"
    for i, (reason, _) in enumerate(semantic_rules().get(name, ())):
        lines.append(f"    if not _rule{i}(p):")
        lines.append(f"        raise _PC({reason!r})")
    for path in spec.image_view_paths:
        lines.append(f"    if {_attr('p', path)}.{_ACCESS} > {image_access_max()}:")
        lines.append("        raise _PC('ImageView.Access')")
    if spec.tails and any(t.element == _IMAGE_VIEW for t in spec.tails):
        lines.append("    if views_bad:")
        lines.append("        raise _PC('ImageView.Access')")
    lines.append(f"    return Decoded(({spec.opcode}, {name!r}, p, tails, {blob}, size))")
    return "\n".join(lines) + "\n"


class _NativeNew(tuple):
    """A base whose ``__new__`` is tuple's own slot: a record type deriving from it (first)
    builds with no Python-level ``__new__`` dispatch (about half the cost of a type whose
    own ``__new__ = tuple.__new__`` is looked up per construction)."""

    __slots__ = ()
    __new__ = tuple.__new__  # type: ignore[assignment]


@lru_cache(maxsize=None)
def native(cls: type) -> type:
    """``cls`` built at tuple's native cost: a subclass of it (same name, same fields,
    pickling and comparing as ``cls`` does) whose constructor is tuple's slot. ``cls``
    itself when it is not a ``tuple.__new__``-constructed tuple subclass."""
    if not issubclass(cls, tuple) or cls.__new__ is not tuple.__new__:
        return cls
    out = type(cls.__name__, (_NativeNew, cls), {"__slots__": (), "__module__": cls.__module__})
    out.__qualname__ = cls.__qualname__
    return out


def _stage_facts(view: Callable[..., memoryview]) -> tuple[Any, int, Any]:
    """(segment id, capacity, read-only view) of the stage whose bound ``view`` this is --
    fixed for the segment's life -- or (None, 0, None): no inline acceptance (any other
    ``view`` callable is asked for every blob)."""
    from .stage import StageSegment

    owner = getattr(view, "__self__", None)
    if type(owner) is StageSegment and getattr(view, "__func__", None) is StageSegment.view:
        return owner.seg, owner.capacity, owner._ro
    return None, 0, None


def decoder_namespace(name: str, view: Callable[..., memoryview], decoded_type: type) -> dict:
    """The globals the decoder source of call ``name`` reads.

    ``view(ref, what)`` resolves a blob reference (the stage segment's ``view``);
    ``decoded_type((op, name, payload, tails, blob, size))`` builds the result (built at
    tuple's native cost: :func:`native`). A blob the stage surely accepts (its segment,
    within its capacity) is sliced inline from the stage's read-only view; any other is
    ``view``'s to accept or refuse.
    """
    spec = call_spec(name)
    ns: dict[str, Any] = dict(namespace_for({spec.payload}))
    for t in spec.tails:  # tail element types and their unpackers
        if t.dtype.names is not None:
            ns.update(namespace_for({t.element}))
    for k, t in enumerate(spec.tails):
        if t.dtype.names is not None:
            st = struct.Struct("<" + layout(t.element).fmt)
            ns[f"_E{k}"], ns[f"_EI{k}"] = st.unpack_from, st.iter_unpack
    for i, (_, rule) in enumerate(semantic_rules().get(name, ())):
        ns[f"_rule{i}"] = rule
    seg, cap, ro = _stage_facts(view)
    ns.update(
        _P=struct.Struct("<" + layout(spec.payload).fmt).unpack_from,
        _PC=ProtocolCorruption,
        _view=view,
        _stage_seg=seg,
        _stage_cap=cap,
        _stage_ro=ro,
        _unpack_n=struct.unpack_from,
        Decoded=native(decoded_type),
    )
    ns["Handle"] = native(ns["Handle"])
    return ns


def decoder_for(name: str, view: Callable[..., memoryview], decoded_type: type) -> Callable:
    """The compiled ``decode(raw, size) -> Decoded`` of call ``name`` (see
    :func:`decoder_namespace` for ``view`` and ``decoded_type``)."""
    ns = decoder_namespace(name, view, decoded_type)
    exec(compile(decoder_source(name), f"<mgpipe decode {name}>", "exec"), ns)
    return ns["decode"]


# -- packers --------------------------------------------------------------------
@dataclass(frozen=True)
class Packer:
    """A compiled writer of one call's records of a fixed shape.

    ``pack_into(buf, offset, *values)`` writes the whole record (``size`` bytes, header
    included) with ``values`` in the order of ``names``; ``tail_count`` elements of the
    first tail follow the payload when ``tail_names`` were given.
    """

    call: str
    opcode: int
    size: int
    names: tuple[str, ...]
    pack_into: Callable[..., None]
    #: when ``names`` are in memory order: ``direct(buf, off, *prefix, *values)`` is the
    #: same write with no Python frame in between (``prefix`` = the header's values)
    direct: Callable[..., None] | None = None
    prefix: tuple[int, ...] = ()


def _flat_at(struct_name: str, base: int, prefix: str) -> list[FlatScalar]:
    return [FlatScalar(prefix + f.path, base + f.offset, f.code, f.scalar)
            for f in layout(struct_name).flat]  # fmt: skip


@lru_cache(maxsize=None)
def packer(call: str, names: tuple[str, ...], tail_names: tuple[str, ...] | None = None,
           tail_count: int = 1, tail_element: str | None = None) -> Packer:  # fmt: skip
    """A :class:`Packer` for ``call``: payload members ``names`` (paths such as
    ``"IndexResource.Slot"``), and ``tail_count`` elements of the call's first present tail
    with members ``tail_names`` (paths prefixed ``"<i>."`` per element, e.g. ``"0.Count"``);
    ``tail_element`` names the tail instead (the record's only present one: e.g. DrawVbo's
    ``MGPDrawIndirect`` under ``kDrawIsIndirect``)."""
    spec = call_spec(call)
    hdr = header_size()
    flat = [FlatScalar("$" + f.path, f.offset, f.code, f.scalar) for f in layout(_HEADER).flat]
    flat += _flat_at(spec.payload, hdr, "")
    size = spec.fixed_size
    if tail_names is not None:
        if not spec.tails:
            raise ValueError(f"{call} has no tail")
        t = spec.tails[0] if spec.tails[0].when == "kAlways" else next(
            x for x in spec.tails if x.when != "kWhenSet")  # fmt: skip
        if tail_element is not None:
            t = next(x for x in spec.tails if x.element == tail_element)
        cursor = align8(hdr + spec.payload_size)
        for i in range(tail_count):
            flat += _flat_at(t.element, cursor + i * t.dtype.itemsize, f"{i}.")
        size = align8(cursor + tail_count * t.dtype.itemsize)
    elif spec.var_tail:
        raise ValueError(f"{call} has tails: name the tail members")
    wanted = set(names) | {f"{i}.{n}" for i in range(tail_count) for n in (tail_names or ())}
    wanted_all = list(names) + [f"{i}.{n}" for i in range(tail_count) for n in (tail_names or ())]
    known = {f.path for f in flat}
    missing = [n for n in wanted_all if n not in known]
    if missing:
        raise _t.TablesError(f"{call}: no member {missing[0]!r} to pack")
    hdr_paths = {"$Op": spec.opcode, "$Flags": 0, "$Size": size}
    keep = frozenset(wanted | set(hdr_paths))
    fmt = format_of(flat, size, 0, keep)
    st = struct.Struct("<" + fmt)
    mem_order = [f.path for f in flat if f.path in keep]
    args = [f"a{i}" for i in range(len(wanted_all))]
    by_path = dict(zip(wanted_all, args))
    call_args = [str(hdr_paths[p]) if p in hdr_paths else by_path[p] for p in mem_order]
    src = (f"def pack_into(buf, off, {', '.join(args)}):\n"
           f"    _pi(buf, off, {', '.join(call_args)})\n")  # fmt: skip
    ns: dict[str, Any] = {"_pi": st.pack_into}
    exec(compile(src, f"<mgpipe pack {call}>", "exec"), ns)
    hdr_order = [p for p in mem_order if p in hdr_paths]
    in_order = mem_order[: len(hdr_order)] == hdr_order and (
        mem_order[len(hdr_order) :] == wanted_all)  # fmt: skip
    return Packer(call, spec.opcode, size, tuple(wanted_all), ns["pack_into"],
                  st.pack_into if in_order else None,
                  tuple(hdr_paths[p] for p in hdr_order))  # fmt: skip
