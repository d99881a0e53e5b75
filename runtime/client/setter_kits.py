"""Per-setter patch kits: the hot setters' bytes packed straight from their arguments.

A kit is compiled once per setter, at its first call, from the setter's ``SETTERS`` row
and the ``RenderStateParameters`` layout (offsets, element counts, scalar codes: all from
the generated tables), and kept in :data:`~.setter_rows.KITS` (a setter's call reads it
with one subscript; emptied with the rows by ``clear_cache``). A setter with a kit packs
its arguments with a precompiled ``struct.Struct`` instead of writing through the numpy
view and diffing; anything the packer refuses (a float out of ``f32`` range, an enumerator
name, a value out of an integer's range) takes the setter's general path, so every result
stays the general path's byte for byte. The scalar codes are numpy's own for each dtype
(``b8`` is a byte, as the block's view writes it).

Three shapes:

- a **span** kit (:func:`span_kit`): the row writes one gapless run of dynamic bytes in
  one dynamic chunk; the packed run is compared and copied in one slice
  (:meth:`~.render_block.RenderBlock._span`, the setter as one frame). The first member written takes the
  argument tuple in every element (``glViewport`` sets every viewport); members after it
  are constants the setter names at compile time (``ScissorBoxWrittenMask``);
- a **sub-member** kit (:func:`sub_kit`): the row writes sub-members of one array of
  structs (``StencilStates.Func`` ...); each range the call writes is compared and copied
  in place, elements a call leaves alone keeping their bytes, and accounted as
  :meth:`~.render_block.RenderBlock._apply` accounts (the log's patch, per range in the
  row's own order, built only when a pipeline byte moved);
- a **scalar patch** kit (:func:`scalar_patch_kit`): the row writes whole scalar members
  (``DepthFunc``, ``PolygonModeFront``/``Back`` ...), any class; one range per member,
  through the general accounting.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..schema import tables as _t
from ..schema.layouts import SCALAR_DTYPES
from .render_block import BUMP, row_patch_plan
from .setter_rows import member, row_for, rs_struct

__all__ = ["span_kit", "scalar_span_kit", "scalar_patch_kit", "sub_kit"]



def _code(scalar: str) -> str:
    return np.dtype(SCALAR_DTYPES[scalar]).char


def _element_format(m: dict) -> str | None:
    """The struct format of one element of member ``m`` (exactly ``elem_size`` bytes), or
    None when an element nests a struct."""
    if m["scalar"]:
        fmt = _code(m["scalar"])
    else:
        parts, cursor = [], 0
        for s in sorted(_t.struct_info(m["struct"])["members"], key=lambda s: s["offset"]):
            if not s["scalar"]:
                return None
            if s["offset"] > cursor:
                parts.append(f"{s['offset'] - cursor}x")
            parts.append(f"{s['count']}{_code(s['scalar'])}")
            cursor = s["offset"] + s["size"]
        if m["elem_size"] > cursor:
            parts.append(f"{m['elem_size'] - cursor}x")
        fmt = "".join(parts)
    return fmt if struct.calcsize("<" + fmt) == m["elem_size"] else None


def _run(row: Any) -> tuple[int, int, int, int] | None:
    """(offset, end, chunk bit, bump) when ``row`` writes one gapless run of dynamic bytes
    in one dynamic chunk, in the order of its writes; else None."""
    if row is None or not row.ranges:
        return None
    plan = sorted(row_patch_plan(row))
    if any(p[2] for p in plan) or len({p[3] for p in plan}) != 1:
        return None
    if any(a[1] != b[0] for a, b in zip(plan, plan[1:])):
        return None
    bump = BUMP[row.bump]
    if bump == BUMP["kBumpConditional"]:  # no pipeline byte in the run: never the pipeline
        bump = BUMP["kBumpVersion"]
    return plan[0][0], plan[-1][1], plan[0][3], bump


def _whole_members(row: Any) -> list[dict] | None:
    """The members ``row`` writes whole, in offset order (None if a write is a sub-member
    or the writes are not in offset order)."""
    members = [member(rs_struct(), w) for w in row.writes if "." not in w]
    if len(members) != len(row.writes):
        return None
    offsets = [m["offset"] for m in members]
    return members if offsets == sorted(offsets) else None


def span_kit(setter: str, tail: Callable[[dict], Sequence[Any]] = lambda m: ()) -> tuple | None:
    """(offset, end, chunk bit, bump, pack, repeat, suffix): the run is
    ``pack(*args) * repeat + suffix``, ``args`` going to every element of the first member
    written; ``tail(first member)`` gives the values of the scalar members after it
    (constants). None when the row is not such a run."""
    row = row_for(setter, None)
    run = _run(row)
    members = _whole_members(row) if run else None
    if not members:
        return None
    first, rest = members[0], members[1:]
    fmt, values = _element_format(first), tuple(tail(first))
    if fmt is None or len(values) != len(rest):
        return None
    if any(m["count"] != 1 or not m["scalar"] for m in rest):
        return None
    suffix = struct.pack("<" + "".join(_code(m["scalar"]) for m in rest), *values)
    if struct.calcsize("<" + fmt) * first["count"] + len(suffix) != run[1] - run[0]:
        return None
    return (*run, struct.Struct("<" + fmt).pack, first["count"], suffix)


def scalar_span_kit(setter: str) -> tuple | None:
    """A span kit whose members are scalars taking one argument each, in offset order."""
    row = row_for(setter, None)
    run = _run(row)
    members = _whole_members(row) if run else None
    if not members or any(m["count"] != 1 or not m["scalar"] for m in members):
        return None
    packer = struct.Struct("<" + "".join(_code(m["scalar"]) for m in members))
    return (*run, packer.pack, 1, b"") if packer.size == run[1] - run[0] else None


def scalar_patch_kit(setter: str) -> tuple | None:
    """(row, packs, enums, plan): per write a packer and its enumerator names (or None), and
    the row's ranges; None unless every write is a whole scalar member. The patch goes
    through the general accounting (pipeline members: the log, the conditional bump)."""
    row = row_for(setter, None)
    members = _whole_members(row) if row is not None and row.writes else None
    if not members or any(m["count"] != 1 or not m["scalar"] for m in members):
        return None
    plan = row_patch_plan(row)
    if [p[0] for p in plan] != [m["offset"] for m in members]:
        return None
    packs = tuple(struct.Struct("<" + _code(m["scalar"])).pack for m in members)
    return row, packs, tuple(_enum_or_none(m["type"]) for m in members), plan


def sub_kit(setter: str) -> tuple | None:
    """(row, packs, enums, entries): per write a packer and its enumerator names (or None),
    per range of the row (offset, end, is pipeline, chunk bit, write index, element); None
    unless every write is a scalar sub-member of one array of structs."""
    row = row_for(setter, None)
    if row is None or not row.writes or any("." not in w for w in row.writes):
        return None
    heads = {w.partition(".")[0] for w in row.writes}
    if len(heads) != 1:
        return None
    m = member(rs_struct(), heads.pop())
    if not m["struct"]:
        return None
    subs = [member(m["struct"], w.partition(".")[2]) for w in row.writes]
    if any(s["count"] != 1 or not s["scalar"] for s in subs):
        return None
    plan = row_patch_plan(row)
    where = [(wi, i) for wi in range(len(subs)) for i in range(m["count"])]
    if len(where) != len(plan):
        return None
    entries = []
    for (o, e, pipe, bit), (wi, i) in zip(plan, where):
        if o != m["offset"] + i * m["elem_size"] + subs[wi]["offset"]:
            return None
        entries.append((o, e, pipe, bit, wi, i))
    packs = tuple(struct.Struct("<" + _code(s["scalar"])).pack for s in subs)
    return row, packs, tuple(_enum_or_none(s["type"]) for s in subs), tuple(entries)


def _enum_or_none(name: str) -> dict[str, int] | None:
    try:
        return dict(_t.enum(name))
    except (_t.TablesError, KeyError):
        return None
