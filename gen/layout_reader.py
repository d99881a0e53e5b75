"""The libclang cursor walk behind :func:`mgpipe.gen.layout.read_headers`.

Only declarations whose location is a file under the include directory are collected;
system headers are skipped. Layout numbers come from libclang only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

from clang.cindex import Cursor, CursorKind, Type, TypeKind, TranslationUnit

from .errors import ErrorCollector
from .layout_model import SCALAR_CODES, Constant, Enum, Enumerator, Member, Pin, Struct, Value
from .pod import kind_of, member_problem, packing_problem, std_array

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
GENERATED_SUBDIR = "generated"


class _Scope:
    """Decides whether a cursor is declared in a file under the include directory."""

    def __init__(self, include_dir: Path, wanted: frozenset[str] = frozenset(),
                 project_dirs: tuple[Path, ...] = ()) -> None:
        self.include_dir = include_dir
        self.wanted = wanted  # declarations taken by name from the project's other headers
        self.project_dirs = project_dirs  # where those may come from (never system headers)
        self._memo: dict[str, bool] = {}
        self._project: dict[str, bool] = {}
        self._holds: dict[str, bool] = {}

    def in_dir(self, cursor: Cursor) -> bool:
        f = cursor.location.file
        if f is None:
            return False
        name = f.name
        if name not in self._memo:
            p = Path(name).resolve()
            # generated/ beside the headers holds a generator's outputs, which the headers may
            # include: they are what is being computed, never an input
            self._memo[name] = (p.is_relative_to(self.include_dir)
                                and not p.is_relative_to(self.include_dir / GENERATED_SUBDIR))
        return self._memo[name]

    def may_hold(self, scope: Cursor) -> bool:
        """Can this namespace / linkage block hold a declaration the reader takes: it opens
        in the include directory or a project directory, or in no file. One a system header
        opens holds only that header's declarations (no project header is included inside
        a system header's namespace)."""
        f = scope.location.file
        if f is None:
            return True
        name = f.name
        hit = self._holds.get(name)
        if hit is None:
            p = Path(name).resolve()
            hit = self._holds[name] = (p.is_relative_to(self.include_dir)
                                       or any(p.is_relative_to(d) for d in self.project_dirs))
        return hit

    def in_project(self, cursor: Cursor) -> bool:
        """Declared in the catalogue's directory or any of the project's include
        directories (never a system header): a type a wire member may use."""
        if self.in_dir(cursor):
            return True
        f = cursor.location.file
        if f is None or not self.project_dirs:
            return False
        if f.name not in self._project:
            p = Path(f.name).resolve()
            self._project[f.name] = any(p.is_relative_to(d) for d in self.project_dirs)
        return self._project[f.name]

    def __call__(self, cursor: Cursor) -> bool:
        if self.in_dir(cursor):
            return True
        if not self.wanted or cursor.spelling not in self.wanted:
            return False
        f = cursor.location.file
        if f is None:
            return False
        if f.name not in self._project:
            p = Path(f.name).resolve()
            self._project[f.name] = any(p.is_relative_to(d) for d in self.project_dirs)
        return self._project[f.name]


def _decls(cursor: Cursor, inside: _Scope) -> Iterator[Cursor]:
    for c in cursor.get_children():
        if c.location.is_in_system_header:
            continue  # an -isystem header's declaration: never the catalogue's, never wanted
        if c.kind in _SCOPES:
            if not inside.may_hold(c):
                continue  # a system header's namespace (std's thousands of declarations)
            yield from _decls(c, inside)
        elif c.kind in (CursorKind.STATIC_ASSERT, CursorKind.VAR_DECL) and inside.in_dir(c):
            yield c
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
    problem = member_problem(field, inside.in_project)
    t = field.type
    elem = t.get_canonical()
    dims: list[int] = []
    while True:
        if kind_of(elem) in (TypeKind.CONSTANTARRAY, TypeKind.INCOMPLETEARRAY):
            dims.append(elem.element_count if kind_of(elem) == TypeKind.CONSTANTARRAY else 0)
            elem = elem.element_type.get_canonical()
            continue
        arr = std_array(elem)
        if arr is None:
            break
        dims.append(arr[1])
        elem = arr[0].get_canonical()
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


def _tokens(c: Cursor, first: int = 8) -> list[str]:
    """The cursor's first ``first`` tokens (a pin reads at most eight: a static assertion's
    extent can run through a long message, and every token is a Python object)."""
    return [t.spelling for t in islice(c.get_tokens(), first)]


def _sizeof_pin(toks: list[str]) -> tuple[str, int] | None:
    """``static_assert(sizeof(T) == N, ...)`` -> (T, N)."""
    if toks[:4] != ["static_assert", "(", "sizeof", "("] or len(toks) < 8:
        return None
    name, close, eq, num = toks[4], toks[5], toks[6], toks[7]
    if close != ")" or eq != "==" or not _IDENT.match(name):
        return None
    try:
        return name, int(num.rstrip("uUlL"), 0)
    except ValueError:
        return None


def _macro_pin(toks: list[str]) -> tuple[str, int] | None:
    """``M(T, N)`` -> (T, N)."""
    if len(toks) < 6 or toks[1] != "(" or toks[3] != "," or not _IDENT.match(toks[2]):
        return None
    try:
        return toks[2], int(toks[4].rstrip("uUlL"), 0)
    except ValueError:
        return None


def collect_pins(tu: TranslationUnit, inside: _Scope, display: Display,
                 pin_macros: tuple[str, ...]) -> dict[str, Pin]:
    """Every size the headers pin: a ``pin_macros`` instantiation ``M(T, N)`` or a
    ``static_assert(sizeof(T) == N)``, in a file under the include directory."""
    pins: dict[str, Pin] = {}
    for c in tu.cursor.get_children():
        if c.kind == CursorKind.MACRO_INSTANTIATION and c.spelling in pin_macros and inside.in_dir(c):
            got = _macro_pin(_tokens(c))
            if got:
                loc = c.location
                pins.setdefault(got[0], Pin(got[0], got[1], display(loc.file.name), loc.line,
                                            loc.column, c.spelling))
    return pins


def collect(
    tu: TranslationUnit, include_dir: Path, display: Display, errors: ErrorCollector,
    wanted: frozenset[str] = frozenset(), project_dirs: tuple[Path, ...] = (),
    pin_macros: tuple[str, ...] = (),
) -> tuple[dict[str, Struct], dict[str, Enum], dict[str, Constant], dict[str, Pin], dict[str, Value]]:
    """Structs, enums and anonymous-enum constants declared under ``include_dir`` (and the
    ``wanted`` names from the project's other headers), the sizes the headers pin and the
    constexpr integers they define."""
    from .evaluate import evaluate

    structs: dict[str, Struct] = {}
    enums: dict[str, Enum] = {}
    constants: dict[str, Constant] = {}
    values: dict[str, Value] = {}
    seen: set[tuple[str, int, int]] = set()
    inside = _Scope(include_dir, wanted, project_dirs)
    pins = collect_pins(tu, inside, display, pin_macros) if pin_macros else {}

    def duplicate(kind: str, name: str, first: tuple[str, int], at: Cursor, path: str) -> None:
        errors.error(path, at.location.line, at.location.column, "HEADER-DUPLICATE",
                     f"{kind} {name!r} is declared again (first at {first[0]}:{first[1]}), "
                     f"expected one name per {kind}")  # fmt: skip

    for c in _decls(tu.cursor, inside):
        if c.kind == CursorKind.STATIC_ASSERT:
            got = _sizeof_pin(_tokens(c))
            if got and got[0] not in pins:
                loc = c.location
                pins[got[0]] = Pin(got[0], got[1], display(loc.file.name), loc.line, loc.column,
                                   "static_assert")
            continue
        if c.kind == CursorKind.VAR_DECL:
            got_values = evaluate(c)
            if got_values is not None and c.spelling not in values:
                loc = c.location
                values[c.spelling] = Value(c.spelling, got_values, display(loc.file.name),
                                           loc.line, loc.column)
            continue
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
    return structs, enums, constants, pins, values


__all__ = ["collect", "collect_pins", "scalar_code"]
