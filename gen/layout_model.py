"""Plain data produced by :mod:`mgpipe.gen.layout` (frozen dataclasses, JSON round-trip).

Sizes and offsets are bytes, positions 1-based ``line``/``col`` in ``path`` (shown
relative to the display root, never absolute for catalogue headers).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Scalar codes of :attr:`Member.scalar`.
SCALAR_CODES: tuple[str, ...] = (
    "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64", "b8",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Member:
    """A direct data member of a struct, in declaration order.

    ``type`` is the spelling as written (``Uint32``, ``MGPipeHandle``, ``Float[4]``).
    For an array, ``count`` is the total element count (multidimensional arrays are
    flattened, ``dims`` keeps the extents) and ``scalar``/``struct``/``enum`` describe the
    innermost element; ``elem_size`` is that element's size. ``count`` is 1 and ``dims``
    empty when the member is not an array.
    """

    name: str
    offset: int
    size: int
    type: str
    scalar: str | None
    struct: str | None
    enum: str | None
    count: int
    elem_size: int
    dims: tuple[int, ...]
    line: int
    col: int
    pod: str | None = None  # why the type cannot travel on the wire (WIRE-POD), or None


@dataclass(frozen=True, slots=True)
class Struct:
    name: str
    kind: str  # "struct" | "class" | "union"
    size: int
    align: int
    path: str
    line: int
    col: int
    members: tuple[Member, ...]
    pod: str | None = None  # a union, or packing that moved the alignment (WIRE-POD), or None

    def member(self, name: str) -> Member:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(f"{self.name} has no member {name!r}")


@dataclass(frozen=True, slots=True)
class Enumerator:
    name: str
    value: int
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class Enum:
    name: str
    scoped: bool
    underlying: str | None  # scalar code of the underlying integer type
    path: str
    line: int
    col: int
    enumerators: tuple[Enumerator, ...]

    def values(self) -> dict[str, int]:
        return {e.name: e.value for e in self.enumerators}


@dataclass(frozen=True, slots=True)
class Constant:
    """An enumerator of an anonymous enum: a named integer constant."""

    name: str
    value: int
    path: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class Pin:
    """A size the headers themselves pin: ``MGP_ASSERT_POD(T, N)`` or
    ``static_assert(sizeof(T) == N, ...)``, located where it is written."""

    struct: str
    size: int
    path: str
    line: int
    col: int
    form: str  # the macro name, or "static_assert"


@dataclass(frozen=True, slots=True)
class Value:
    """A ``constexpr`` integer (or array of integers) the headers define, as libclang
    evaluates it: ``kMGPipeRenderStateChunkBoundaries`` -> its 16 offsets."""

    name: str
    values: tuple[int, ...]
    path: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class FlatMember:
    """A leaf of :func:`flatten`: ``path`` like ``StencilStates[1].Ref``, absolute offset."""

    path: str
    offset: int
    size: int
    scalar: str | None
    type: str
    count: int
    member: Member


@dataclass(frozen=True)
class Layouts:
    """Everything libclang told us about the catalogue headers."""

    structs: dict[str, Struct] = field(default_factory=dict)
    enums: dict[str, Enum] = field(default_factory=dict)
    constants: dict[str, Constant] = field(default_factory=dict)
    headers: tuple[str, ...] = ()
    fingerprint: str = ""
    pins: dict[str, Pin] = field(default_factory=dict)  # struct -> the size its header pins
    values: dict[str, Value] = field(default_factory=dict)  # constexpr integers by name
    #: compile errors located only in a previous generator's outputs the headers include
    #: (path, line, col, text): reported as HEADER-COMPILE, layouts read all the same
    output_errors: tuple[tuple[str, int, int, str], ...] = ()

    def struct(self, name: str) -> Struct:
        return self.structs[name]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Layouts:
        def member(d: dict[str, Any]) -> Member:
            return Member(**{**d, "dims": tuple(d["dims"])})

        structs = {
            k: Struct(**{**v, "members": tuple(member(m) for m in v["members"])})
            for k, v in data["structs"].items()
        }
        enums = {
            k: Enum(**{**v, "enumerators": tuple(Enumerator(**e) for e in v["enumerators"])})
            for k, v in data["enums"].items()
        }
        constants = {k: Constant(**v) for k, v in data["constants"].items()}
        pins = {k: Pin(**v) for k, v in data.get("pins", {}).items()}
        values = {k: Value(**{**v, "values": tuple(v["values"])}) for k, v in data.get("values", {}).items()}
        return cls(structs, enums, constants, tuple(data["headers"]), data["fingerprint"], pins, values,
                   tuple(tuple(e) for e in data.get("output_errors", ())))  # type: ignore[misc]


def flatten(
    layouts: Layouts,
    struct: Struct | str,
    prefix: str = "",
    base: int = 0,
    *,
    expand_scalar_arrays: bool = True,
) -> list[FlatMember]:
    """Expand ``struct`` into leaf members with absolute offsets, in declaration order.

    Nested struct members recurse (``Outer.Inner``); arrays expand per element
    (``StencilStates[1].Ref``, multidimensional as ``M[1][2]``). With
    ``expand_scalar_arrays=False`` an array of scalars stays one leaf (``BlendColor``
    with ``count`` 4). ``prefix`` is prepended (``"Rs."`` gives ``Rs.Mode``) and ``base``
    added to every offset.
    """
    s = layouts.structs[struct] if isinstance(struct, str) else struct
    out: list[FlatMember] = []
    for m in s.members:
        name = f"{prefix}{m.name}"
        at = base + m.offset
        if m.struct is None and (m.count == 1 or not expand_scalar_arrays):
            out.append(FlatMember(name, at, m.size, m.scalar, m.type, m.count, m))
            continue
        for i in range(m.count):
            elem = name + _index_suffix(i, m.dims)
            off = at + i * m.elem_size
            if m.struct is not None and m.struct in layouts.structs:
                out.extend(
                    flatten(
                        layouts,
                        layouts.structs[m.struct],
                        elem + ".",
                        off,
                        expand_scalar_arrays=expand_scalar_arrays,
                    )
                )
            else:
                out.append(FlatMember(elem, off, m.elem_size, m.scalar, m.type, 1, m))
    return out


def _index_suffix(flat: int, dims: tuple[int, ...]) -> str:
    if not dims:
        return ""
    idx: list[int] = []
    for extent in reversed(dims):
        idx.append(flat % extent)
        flat //= extent
    return "".join(f"[{i}]" for i in reversed(idx))


__all__ = [
    "Constant", "Enum", "Enumerator", "FlatMember", "Layouts", "Member", "Pin", "SCALAR_CODES", "Value",
    "Struct", "flatten",
]  # fmt: skip
