"""Gates on the wire vocabulary itself: POD-only wire types and names C++ can carry.

``WIRE-POD`` refuses any struct in the catalogue headers (every one is in the tables the
runtime executes, so every one is a wire struct) that is a union or packed, and any member
that is not a fixed-width scalar, a catalogue enum, another catalogue struct or a
fixed-size array of those (what is wrong is decided by :mod:`mgpipe.gen.pod`).

``NAME-RESERVED`` refuses a call, struct or member name that is a C++ keyword or an
identifier C++ reserves to the implementation (``__x`` anywhere, ``_X``, and ``_x`` at
namespace scope): the generated headers declare every one of them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mgpipe.gen.catalogue import Loc

if TYPE_CHECKING:
    from mgpipe.gen.ctx import Ctx

#: C++17 keywords and alternative tokens ([lex.key], [lex.digraph]).
CPP_KEYWORDS: frozenset[str] = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t
class compl const constexpr const_cast continue decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long mutable
namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual
void volatile wchar_t while xor xor_eq
""".split())


def name_problem(name: str, namespace_scope: bool) -> str | None:
    """Why C++ cannot take ``name`` as an identifier here, or None."""
    if name in CPP_KEYWORDS:
        return "a C++ keyword"
    if "__" in name:
        return "reserved to the C++ implementation (it contains '__')"
    if re.match(r"_[A-Z]", name):
        return "reserved to the C++ implementation (an underscore and a capital letter)"
    if namespace_scope and name.startswith("_"):
        return "reserved to the C++ implementation at namespace scope (a leading underscore)"
    return None


def gate_wire_pod(ctx: Ctx) -> None:
    """WIRE-POD: wire structs are PODs of fixed-width scalars, never packed, never unions."""
    for s in ctx.lay.structs.values():
        if s.pod is not None and s.kind == "union":
            ctx.err(Loc(s.path, s.line, s.col), "WIRE-POD",
                    f"{s.pod} is in the catalogue headers, expected only structs: a union's "
                    f"bytes have no one meaning on the wire")
        elif s.pod is not None:
            ctx.err(Loc(s.path, s.line, s.col), "WIRE-POD",
                    f"{s.name}: {s.pod}, expected the natural alignment of its members")
        if s.name == ctx.vocab.host_span_struct:
            continue  # its members are the transport's (a pointer in one process)
        for m in s.members:
            if m.pod is not None:
                ctx.err(Loc(s.path, m.line, m.col), "WIRE-POD",
                        f"{s.name}::{m.name} is {m.pod}, expected a fixed-width scalar, a "
                        f"catalogue enum, a catalogue struct or a fixed-size array of those")


def gate_names(ctx: Ctx) -> None:
    """NAME-RESERVED: call, struct and member names are identifiers C++ leaves to us."""
    for row in ctx.cat.calls:
        tok = row.name
        why = name_problem(tok.text, namespace_scope=True)
        if why:
            ctx.err(tok.loc, "NAME-RESERVED",
                    f"call name {tok.text!r} is {why}, expected a plain identifier")
    for s in ctx.lay.structs.values():
        why = name_problem(s.name, namespace_scope=True)
        if why:
            ctx.err(Loc(s.path, s.line, s.col), "NAME-RESERVED",
                    f"struct name {s.name!r} is {why}, expected a plain identifier")
        for m in s.members:
            why = None if m.name.startswith("(") else name_problem(m.name, namespace_scope=False)
            if why:
                ctx.err(Loc(s.path, m.line, m.col), "NAME-RESERVED",
                        f"member name {s.name}::{m.name} is {why}, expected a plain identifier")


__all__ = ["CPP_KEYWORDS", "gate_names", "gate_wire_pod", "name_problem"]
