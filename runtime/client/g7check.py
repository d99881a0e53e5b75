"""The G7 setter-consistency checker (seed 000 §2.5, seed 001 §5.3, seed 004 §4.5.2).

Reusable by the test and by its negative controls. It walks ``RenderState``'s public
``set_*`` methods against ``SETTERS`` and, for one row and one argument tuple, states the
facts a backend relies on, every finding naming the setter (and arm):

- pipeline-subset bytes (gathered through ``RENDER_STATE["pipeline_chunks"]``) changed
  ⟺ ``m_pipelineStateVersion`` moved;
- dynamic-subset bytes changed ⇒ ``m_version`` moved;
- the pipeline version never moves without ``m_version``;
- the same call again (bitwise-equal) moves nothing.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from ..schema import tables as _t
from .render_state import Arg, RenderState, SetterRow, method_name, setter_rows

__all__ = [
    "unpaired",
    "setter_params",
    "call_setter",
    "check_setter",
    "check_stencil_func",
    "subset_changed",
]

Factory = Callable[[], RenderState]


def public_setters(cls: type = RenderState) -> list[str]:
    return sorted(n for n, v in inspect.getmembers(cls) if n.startswith("set_") and callable(v))


def unpaired(cls: type = RenderState) -> list[str]:
    """A ``set_*`` method SETTERS does not list, or a SETTERS setter with no method."""
    wanted = {method_name(r.setter): r.setter for r in setter_rows()}
    have = set(public_setters(cls))
    out = [
        f"{cls.__name__}.{m}: public setter not listed in SETTERS"
        for m in sorted(have - set(wanted))
    ]
    out += [
        f"{s}: SETTERS row has no method {m}" for m, s in sorted(wanted.items()) if m not in have
    ]
    return out


def setter_params(cls: type, row: SetterRow) -> tuple[tuple[str, Arg], ...]:
    """(name, Arg) of each parameter of the row's method, ``self`` excluded."""
    return _params(cls, method_name(row.setter))


@lru_cache(maxsize=None)
def _params(cls: type, method: str) -> tuple[tuple[str, Arg], ...]:
    fn = getattr(cls, method)
    hints = typing.get_type_hints(fn, include_extras=True)
    out = []
    for name in list(inspect.signature(fn).parameters)[1:]:
        meta = [m for m in getattr(hints.get(name), "__metadata__", ()) if isinstance(m, Arg)]
        if not meta:
            raise TypeError(f"{cls.__name__}.{method}: parameter {name!r} has no Arg annotation")
        out.append((name, meta[0]))
    return tuple(out)


def call_setter(rs: RenderState, row: SetterRow, args: Sequence[Any]) -> None:
    """Call the row's method; ``args`` are every argument but the arm, which the row supplies."""
    params = setter_params(type(rs), row)
    it = iter(args)
    full = [row.arm if a.kind == "arm" else next(it) for _, a in params]
    getattr(rs, method_name(row.setter))(*full)


def subset_changed(before: bytes, after: bytes, which: str) -> bool:
    """Whether any byte of ``RENDER_STATE[which]`` (``pipeline_chunks`` / ``dynamic_chunks``) moved."""
    return any(before[o : o + n] != after[o : o + n] for o, n in _t.tables().RENDER_STATE[which])


def _step(rs: RenderState, row: SetterRow, args: Sequence[Any]) -> tuple[bool, bool, bool, bool]:
    b, v, pv = rs.block_bytes(), rs.version, rs.pipeline_version
    call_setter(rs, row, args)
    a = rs.block_bytes()
    return (
        subset_changed(b, a, "pipeline_chunks"),
        subset_changed(b, a, "dynamic_chunks"),
        rs.pipeline_version != pv,
        rs.version != v,
    )


def _judge(label: str, pipe: bool, dyn: bool, pv: bool, v: bool) -> list[str]:
    out = []
    if pipe and not pv:
        out.append(
            f"{label}: pipeline-subset bytes changed but m_pipelineStateVersion did not move"
        )
    if pv and not pipe:
        out.append(f"{label}: m_pipelineStateVersion moved but no pipeline-subset byte changed")
    if dyn and not v:
        out.append(f"{label}: dynamic-subset bytes changed but m_version did not move")
    if pv and not v:
        out.append(f"{label}: m_pipelineStateVersion moved without m_version")
    return out


def check_setter(rs_factory: Factory, row: SetterRow, args: Sequence[Any]) -> list[str]:
    """Drive ``row``'s setter once with ``args`` (and once more, bitwise-equal); findings."""
    rs = rs_factory()
    out = _judge(row.label, *_step(rs, row, args))
    b, v, pv = rs.block_bytes(), rs.version, rs.pipeline_version
    call_setter(rs, row, args)
    if rs.block_bytes() != b:
        out.append(f"{row.label}: the same call twice wrote different bytes")
    if (rs.version, rs.pipeline_version) != (v, pv):
        out.append(f"{row.label}: a bitwise-equal call moved a version (no guard)")
    return out


def check_stencil_func(rs_factory: Factory, row: SetterRow | None = None) -> list[str]:
    """Group C: only Ref changes -> pipeline version stays; then Func changes -> it moves."""
    row = row or next(r for r in setter_rows() if r.setter == "SetStencilFunc")
    rs = rs_factory()
    funcs = _t.enum("DepthTestFunc")
    f0 = int(rs.p["StencilStates"]["Func"][0])
    f1 = next(v for v in funcs.values() if v != f0)
    mask = int(rs.p["StencilStates"]["ValueMask"][0])
    out: list[str] = []
    ref = int(rs.p["StencilStates"]["Ref"][0]) + 1
    pipe, dyn, pv, v = _step(rs, row, ("FrontAndBack", f0, ref, mask))
    if pv or pipe:
        out.append(f"{row.label}: only Ref changed but the pipeline version moved")
    if not (dyn and v):
        out.append(f"{row.label}: Ref changed but m_version did not move")
    out += _judge(row.label, pipe, dyn, pv, v)
    pipe, dyn, pv, v = _step(rs, row, ("FrontAndBack", f1, ref, mask))
    if not (pipe and pv):
        out.append(f"{row.label}: Func changed but the pipeline version did not move")
    out += _judge(row.label, pipe, dyn, pv, v)
    return out
