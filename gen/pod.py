"""What makes a wire type a POD of fixed-width scalars (seed 001 section 4: "never a pointer").

libclang side of the WIRE-POD gate: :func:`member_problem` names what is wrong with one
struct member's type (``None`` when it is a fixed-width scalar, a catalogue enum, a
catalogue struct, or a fixed-size array of those); :func:`packing_problem` names a packing
attribute or ``#pragma pack`` that changed a struct's alignment. The gate itself
(:mod:`mgpipe.gen.wiregates`) only reports what is recorded here.
"""

from __future__ import annotations

from collections.abc import Callable

from clang.cindex import Cursor, CursorKind, Type, TypeKind

#: Scalar kinds whose width is the same on every platform MGPipe targets (LP64 and LLP64).
FIXED_WIDTH: frozenset[TypeKind] = frozenset({
    TypeKind.BOOL, TypeKind.CHAR_U, TypeKind.UCHAR, TypeKind.CHAR_S, TypeKind.SCHAR,
    TypeKind.CHAR16, TypeKind.CHAR32, TypeKind.USHORT, TypeKind.SHORT, TypeKind.UINT,
    TypeKind.INT, TypeKind.ULONGLONG, TypeKind.LONGLONG, TypeKind.FLOAT, TypeKind.DOUBLE,
})  # fmt: skip
_INTEGERS = FIXED_WIDTH - {TypeKind.BOOL, TypeKind.FLOAT, TypeKind.DOUBLE}

#: Type kinds by what a user calls them.
_NAMED: dict[TypeKind, str] = {
    TypeKind.POINTER: "a pointer", TypeKind.BLOCKPOINTER: "a pointer",
    TypeKind.LVALUEREFERENCE: "a reference", TypeKind.RVALUEREFERENCE: "a reference",
    TypeKind.MEMBERPOINTER: "a member pointer", TypeKind.LONGDOUBLE: "long double",
    TypeKind.INT128: "__int128", TypeKind.UINT128: "unsigned __int128",
    TypeKind.FLOAT128: "__float128", TypeKind.HALF: "half", TypeKind.COMPLEX: "a complex number",
    TypeKind.VECTOR: "a vector type", TypeKind.EXTVECTOR: "a vector type",
    TypeKind.ATOMIC: "an _Atomic type", TypeKind.IBM128: "__ibm128", TypeKind.LONG: "long (32 bits on LLP64, 64 on LP64)",
    TypeKind.ULONG: "unsigned long (32 bits on LLP64, 64 on LP64)",
    TypeKind.WCHAR: "wchar_t (16 or 32 bits by platform)", TypeKind.NULLPTR: "std::nullptr_t",
    TypeKind.FUNCTIONPROTO: "a function", TypeKind.FUNCTIONNOPROTO: "a function",
    TypeKind.INCOMPLETEARRAY: "an array without a size",
    TypeKind.VARIABLEARRAY: "an array without a fixed size",
    TypeKind.DEPENDENTSIZEDARRAY: "an array without a fixed size",
}  # fmt: skip
#: Kinds newer than the Python bindings (libclang's CXTypeKind numbers).
_RAW_NAMES: dict[int, str] = {32: "_Float16", 39: "__bf16"}


def kind_of(t: Type) -> TypeKind | None:
    """``t.kind``, or None for a kind the Python bindings do not know (``_Float16``)."""
    try:
        return t.kind
    except ValueError:
        return None


def describe(t: Type) -> str:
    """What a type is, in words, for a refusal."""
    k = kind_of(t)
    if k is None:
        return _RAW_NAMES.get(t._kind_id, f"a type libclang cannot name (kind {t._kind_id})")
    return _NAMED.get(k, f"type {t.spelling}")


#: the C library's fixed-width typedefs: ``long`` reached through one of them is the width
#: the name says on every platform (``std::uint64_t`` is ``unsigned long`` on LP64 only)
FIXED_WIDTH_TYPEDEFS = frozenset(f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64))


def _through_fixed_typedef(t: Type) -> bool:
    """Does the (element) type reach its canonical type through a fixed-width typedef?"""
    for _ in range(16):
        while kind_of(t) in (TypeKind.CONSTANTARRAY, TypeKind.ELABORATED):
            t = t.element_type if kind_of(t) == TypeKind.CONSTANTARRAY else t.get_named_type()
        if kind_of(t) != TypeKind.TYPEDEF:
            return False
        decl = t.get_declaration()
        if decl.spelling in FIXED_WIDTH_TYPEDEFS:
            return True
        t = decl.underlying_typedef_type
    return False


def std_array(t: Type) -> tuple[Type, int] | None:
    """``std::array<T, N>`` (through any alias) -> (T, N); None for anything else. It is
    a fixed-size array with the layout of ``T[N]``, which MobileGL's headers spell
    ``Array<T, N>``."""
    c = t.get_canonical()
    if kind_of(c) != TypeKind.RECORD:
        return None
    decl = c.get_declaration()
    if decl.spelling != "array" or c.get_num_template_arguments() != 2:
        return None
    parent = decl.semantic_parent
    while parent is not None and parent.kind == CursorKind.NAMESPACE and parent.spelling != "std":
        parent = parent.semantic_parent
    if parent is None or parent.spelling != "std":
        return None
    elem = c.get_template_argument_type(0)
    n = c.get_size() // max(elem.get_canonical().get_size(), 1) if elem.get_canonical().get_size() > 0 else 0
    return elem, n


def member_problem(field: Cursor, inside: Callable[[Cursor], bool]) -> str | None:
    """Why ``field`` cannot travel on the wire, or None. ``inside`` tells whether a
    declaration is one of the catalogue's own headers."""
    if field.is_bitfield():
        return "a bit-field"
    t = field.type.get_canonical()
    sugared = field.type
    while True:
        if kind_of(t) == TypeKind.CONSTANTARRAY:
            t = t.element_type.get_canonical()
            continue
        arr = std_array(t)
        if arr is None:
            break
        sugared = arr[0]
        t = arr[0].get_canonical()
    k = kind_of(t)
    if k in FIXED_WIDTH:
        return None
    if k in (TypeKind.LONG, TypeKind.ULONG) and (_through_fixed_typedef(field.type)
                                                 or _through_fixed_typedef(sugared)):
        return None
    if k == TypeKind.POINTER and kind_of(t.get_pointee().get_canonical()) in (
            TypeKind.FUNCTIONPROTO, TypeKind.FUNCTIONNOPROTO):
        return "a function pointer"
    if k == TypeKind.ENUM:
        decl = t.get_declaration()
        if not inside(decl):
            return f"enum {decl.spelling}, which the catalogue headers do not declare"
        if kind_of(decl.enum_type.get_canonical()) not in _INTEGERS:
            return f"enum {decl.spelling} over {describe(decl.enum_type.get_canonical())}"
        return None
    if k == TypeKind.RECORD:
        decl = t.get_declaration()
        anonymous = decl.is_anonymous() or not decl.spelling
        if decl.kind == CursorKind.UNION_DECL:
            return "an anonymous union" if anonymous else f"union {decl.spelling}"
        if anonymous:
            return "an anonymous struct"
        if not inside(decl):
            return f"struct {decl.spelling}, which the catalogue headers do not declare"
        return None
    return describe(t)


def _natural_align(t: Type) -> int:
    t = t.get_canonical()
    while kind_of(t) == TypeKind.CONSTANTARRAY:
        t = t.element_type.get_canonical()
    return max(t.get_align(), 1)


def packing_problem(decl: Cursor) -> str | None:
    """A packing attribute or ``#pragma pack`` (or ``alignas``) that moved the struct's
    alignment or a member's offset away from what its member types need, or None."""
    t = decl.type
    fields = [f for f in t.get_fields() if not f.is_bitfield()]
    natural = max((_natural_align(f.type) for f in fields), default=1)
    if t.get_align() != natural:
        return (f"alignof({decl.spelling}) is {t.get_align()} but its members need {natural}: "
                f"a packing attribute, #pragma pack or alignas changed it")
    for f in fields:
        need = _natural_align(f.type)
        if (f.get_field_offsetof() // 8) % need:
            return (f"member {f.spelling} sits at offset {f.get_field_offsetof() // 8}, not a "
                    f"multiple of its alignment {need}: the struct is packed")
    return None


__all__ = ["std_array", "FIXED_WIDTH", "describe", "kind_of", "member_problem", "packing_problem"]
