"""The libclang cursor walk behind :func:`mgpipe.gen.layout.read_headers`.

Only declarations whose location is a file under the include directory are collected;
system headers are skipped. Layout numbers come from libclang only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from clang.cindex import Cursor, CursorKind, Type, TypeKind, TranslationUnit

from .errors import ErrorCollector
from .layout_model import SCALAR_CODES, Constant, Enum, Enumerator, Member, Struct
from .pod import kind_of, member_problem, packing_problem

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RECORD_KINDS = {
    CursorKind.STRUCT_DECL: "struct",
    CursorKind.CLASS_DECL: "class",
    CursorKind.UNION_DECL: "union",
}
_SCOPES = {CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC, CursorKind.UNEXPOSED_DECL}
_ALIASES = {CursorKind.TYPEDEF_DECL, CursorKind.TYPE_ALIAS_DECL}
_UNSIGNED = {
    TypeKind.CHAR_U, TypeKind.UCHAR, TypeKind.USHORT, TypeKind.UINT, TypeKind.ULONG,
    TypeKind.ULONGLONG, TypeKind.CHAR16, TypeKind.CHAR32,
}  # fmt: skip
_SIGNED = {
    TypeKind.CHAR_S, TypeKind.SCHAR, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG,
    TypeKind.LONGLONG, TypeKind.WCHAR,
}  # fmt: skip

Display = Callable[[str], str]


class _Scope:
    """Decides whether a cursor is declared in a file under the include directory."""

    def __init__(self, include_dir: Path) -> None:
        self.include_dir = include_dir
        self._memo: dict[str, bool] = {}

    def __call__(self, cursor: Cursor) -> bool:
        f = cursor.location.file
        if f is None:
            return False
        name = f.name
        if name not in self._memo:
            self._memo[name] = Path(name).resolve().is_relative_to(self.include_dir)
        return self._memo[name]


def _decls(cursor: Cursor, inside: _Scope) -> Iterator[Cursor]:
    for c in cursor.get_children():
        if c.kind in _SCOPES:
            yield from _decls(c, inside)
        elif not inside(c):
            continue
        elif c.kind in _RECORD_KINDS:
            yield c
            yield from _decls(c, inside)
        elif c.kind == CursorKind.ENUM_DECL:
            yield c
        elif c.kind in _ALIASES:
            yield from _decls(c, inside)  # `typedef struct { ... } Name;`


def scalar_code(t: Type) -> str | None:
    """``u8 … f64 b8`` for an integer/float/bool/enum type (through typedefs), else None."""
    c = t.get_canonical()
    kind = kind_of(c)
    if kind == TypeKind.ENUM:
        return scalar_code(c.get_declaration().enum_type)
    size = c.get_size()
    if kind == TypeKind.BOOL:
        code = f"b{8 * size}"
    elif kind == TypeKind.FLOAT:
        code = "f32"
    elif kind == TypeKind.DOUBLE:
        code = "f64"
    elif kind in _UNSIGNED:
        code = f"u{8 * size}"
    elif kind in _SIGNED:
        code = f"i{8 * size}"
    else:
        return None
    return code if code in SCALAR_CODES else None


def _name(decl: Cursor) -> str | None:
    name = decl.spelling
    return name if _IDENT.match(name or "") else None


def _spelling(text: str, problem: str | None) -> str:
    """A name or type spelling fit for the tables: an anonymous record's spelling carries
    the absolute path of its header, so it is replaced by what the record is."""
    if "(anonymous" in text or "(unnamed" in text or "/" in text:
        return f"({problem or 'anonymous'})"
    return text


def _member(field: Cursor, owner: str, inside: _Scope) -> Member:
    loc = field.location
    problem = member_problem(field, inside)
    t = field.type
    elem = t.get_canonical()
    dims: list[int] = []
    while kind_of(elem) in (TypeKind.CONSTANTARRAY, TypeKind.INCOMPLETEARRAY):
        dims.append(elem.element_count if kind_of(elem) == TypeKind.CONSTANTARRAY else 0)
        elem = elem.element_type.get_canonical()
    count = 1
    for d in dims:
        count *= d
    struct = enum = None
    if kind_of(elem) == TypeKind.RECORD:
        struct = _name(elem.get_declaration())
    elif kind_of(elem) == TypeKind.ENUM:
        enum = _name(elem.get_declaration())
    return Member(
        name=field.spelling if _IDENT.match(field.spelling or "") else "(anonymous)",
        offset=max(field.get_field_offsetof(), 0) // 8,
        size=max(t.get_size(), 0),
        type=_spelling(t.spelling, problem),
        scalar=scalar_code(elem),
        struct=struct,
        enum=enum,
        count=count,
        elem_size=max(elem.get_size(), 0),
        dims=tuple(dims),
        line=loc.line,
        col=loc.column,
        pod=problem,
    )


def _struct(c: Cursor, name: str, path: str, inside: _Scope) -> Struct | None:
    t = c.type
    size, align = t.get_size(), t.get_align()
    if size < 0 or align < 0:
        return None  # dependent (template) or otherwise layout-less
    members = tuple(_member(f, name, inside) for f in t.get_fields())
    loc = c.location
    kind = _RECORD_KINDS[c.kind]
    # alignment is judged only over wire-able members (a reference has no natural alignment)
    pod = (f"union {name}" if kind == "union"
           else packing_problem(c) if all(m.pod is None for m in members) else None)
    return Struct(name, kind, size, align, path, loc.line, loc.column, members, pod)


def _enumerators(c: Cursor, underlying: str | None) -> list[Enumerator]:
    out = []
    for e in c.get_children():
        if e.kind != CursorKind.ENUM_CONSTANT_DECL:
            continue
        value = e.enum_value
        if underlying is not None and underlying.startswith("u") and value < 0:
            value &= (1 << int(underlying[1:])) - 1
        out.append(Enumerator(e.spelling, value, e.location.line, e.location.column))
    return out


def collect(
    tu: TranslationUnit, include_dir: Path, display: Display, errors: ErrorCollector
) -> tuple[dict[str, Struct], dict[str, Enum], dict[str, Constant]]:
    """Structs, enums and anonymous-enum constants declared under ``include_dir``."""
    structs: dict[str, Struct] = {}
    enums: dict[str, Enum] = {}
    constants: dict[str, Constant] = {}
    seen: set[tuple[str, int, int]] = set()
    inside = _Scope(include_dir)

    def duplicate(kind: str, name: str, first: tuple[str, int], at: Cursor, path: str) -> None:
        errors.error(path, at.location.line, at.location.column, "HEADER-DUPLICATE",
                     f"{kind} {name!r} is declared again (first at {first[0]}:{first[1]}), "
                     f"expected one name per {kind}")  # fmt: skip

    for c in _decls(tu.cursor, inside):
        if not c.is_definition():
            continue
        loc = c.location
        path = display(loc.file.name)
        key = (path, loc.line, loc.column)
        if key in seen:
            continue
        seen.add(key)
        name = _name(c)
        if c.kind in _RECORD_KINDS:
            if name is None:
                continue
            s = _struct(c, name, path, inside)
            if s is None:
                continue
            if name in structs:
                duplicate("struct", name, (structs[name].path, structs[name].line), c, path)
                continue
            structs[name] = s
            continue
        underlying = scalar_code(c.enum_type)
        items = _enumerators(c, underlying)
        if name is None:
            for e in items:
                if e.name in constants:
                    first = constants[e.name]
                    errors.error(path, e.line, e.col, "HEADER-DUPLICATE",
                                 f"constant {e.name!r} is declared again (first at "
                                 f"{first.path}:{first.line}), expected one name per constant")  # fmt: skip
                    continue
                constants[e.name] = Constant(e.name, e.value, path, e.line, e.col)
            continue
        if name in enums:
            duplicate("enum", name, (enums[name].path, enums[name].line), c, path)
            continue
        enums[name] = Enum(
            name, c.is_scoped_enum(), underlying, path, loc.line, loc.column, tuple(items)
        )
    return structs, enums, constants


__all__ = ["collect", "scalar_code"]
