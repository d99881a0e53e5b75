"""The one door from the runtime to the generated tables module.

The runtime never keeps a layout, an opcode or a constant of its own: it reads them
from ``mgpipe.generated.pipe_tables`` (interface: ``docs/TABLES.md``). The module is
imported lazily, on the first call to :func:`tables`, so importing a runtime module
never requires the generator to have run.

``MGPIPE_TABLES_MODULE`` names a different module to import instead (a dotted name on
``sys.path``); it is read once, at the first :func:`tables` call.
"""

from __future__ import annotations

import importlib
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

__all__ = [
    "DEFAULT_MODULE",
    "ENV_VAR",
    "TablesError",
    "Field",
    "Packer",
    "tables",
    "struct_info",
    "field",
    "packer",
    "enum",
    "enum_members",
    "image_access_max",
    "constant",
    "call_name",
]

DEFAULT_MODULE = "mgpipe.generated.pipe_tables"
ENV_VAR = "MGPIPE_TABLES_MODULE"

#: struct-module codes for the scalar codes docs/TABLES.md lists (the wire is little-endian).
_SCALAR_FORMAT: dict[str, str] = {
    "u8": "B", "u16": "H", "u32": "I", "u64": "Q",
    "i8": "b", "i16": "h", "i32": "i", "i64": "q",
    "f32": "f", "f64": "d", "b8": "?",
}  # fmt: skip

_module: ModuleType | None = None


class TablesError(LookupError):
    """The tables module is missing, or lacks something the runtime reads from it."""


def tables() -> ModuleType:
    """The generated tables module (imported on first use, then cached)."""
    global _module
    if _module is None:
        name = os.environ.get(ENV_VAR) or DEFAULT_MODULE
        try:
            _module = importlib.import_module(name)
        except ImportError as exc:
            raise TablesError(
                f"cannot import the pipe tables module {name!r} ({exc}); "
                f"run `mgpipe gen`, or set {ENV_VAR}"
            ) from exc
    return _module


def _where() -> str:
    return getattr(tables(), "__name__", DEFAULT_MODULE)


def _is_pointer(m: dict) -> bool:
    return (
        not m.get("scalar")
        and not m.get("struct")
        and str(m.get("type", "")).rstrip().endswith("*")
    )


def struct_info(name: str) -> dict:
    """``STRUCTS[name]`` (size, align, members).

    A pointer member (a host span's address, meaningful in one process only) reads as the
    unsigned integer of its size, so every consumer sees a scalar where the wire has bytes.
    """
    module = tables()
    if _struct_cache[0] is not module:  # another tables module: start a new memo
        _struct_cache[:] = [module, {}]
    try:
        return _struct_cache[1][name]
    except KeyError:
        pass
    try:
        info = module.STRUCTS[name]
    except (AttributeError, KeyError):
        raise TablesError(f"{_where()}: STRUCTS has no struct {name!r}") from None
    if any(_is_pointer(m) for m in info["members"]):
        members = tuple(
            {**m, "scalar": f"u{8 * int(m['elem_size'])}"} if _is_pointer(m) else m
            for m in info["members"]
        )
        info = {**info, "members": members}
    _struct_cache[1][name] = info
    return info


#: [the tables module the memo is of, name -> struct_info's answer]: a hot path asks for
#: the same struct every draw, and the pointer rewrite is done once per struct
_struct_cache: list = [None, {}]


@dataclass(frozen=True, slots=True)
class Field:
    """One scalar member of a generated struct layout."""

    struct: str
    name: str
    offset: int
    size: int
    scalar: str

    @property
    def fmt(self) -> str:
        return _SCALAR_FORMAT[self.scalar]

    @property
    def max_value(self) -> int:
        """Largest value the member holds (unsigned integer scalars)."""
        return (1 << (8 * self.size)) - 1


def field(struct_name: str, member: str) -> Field:
    """The layout of scalar member ``member`` of ``struct_name``."""
    info = struct_info(struct_name)
    for m in info["members"]:
        if m["name"] == member:
            scalar = m.get("scalar")
            if m.get("count", 1) != 1 or scalar not in _SCALAR_FORMAT:
                raise TablesError(
                    f"{_where()}: {struct_name}.{member} is not a scalar member "
                    f"(scalar={scalar!r}, count={m.get('count', 1)})"
                )
            if struct.calcsize("<" + _SCALAR_FORMAT[scalar]) != m["size"]:
                raise TablesError(
                    f"{_where()}: {struct_name}.{member} has size {m['size']} "
                    f"but scalar {scalar!r}"
                )
            return Field(struct_name, member, int(m["offset"]), int(m["size"]), scalar)
    names = ", ".join(m["name"] for m in info["members"])
    raise TablesError(f"{_where()}: {struct_name} has no member {member!r} (has: {names})")


class Packer:
    """Packs / unpacks chosen scalar members of one struct at their real offsets.

    Values go in and come out in the order the member names were given, whatever
    their order in memory; bytes the members leave uncovered are written as zero.
    """

    __slots__ = ("struct_name", "fields", "size", "_codec", "_to_mem", "_from_mem", "_in_order")

    def __init__(self, struct_name: str, members: Sequence[str]) -> None:
        self.struct_name = struct_name
        self.fields: tuple[Field, ...] = tuple(field(struct_name, m) for m in members)
        self.size: int = int(struct_info(struct_name)["size"])
        by_offset = sorted(range(len(self.fields)), key=lambda i: self.fields[i].offset)
        fmt, cursor = "<", 0
        for i in by_offset:
            f = self.fields[i]
            if f.offset < cursor:
                raise TablesError(f"{_where()}: {struct_name}.{f.name} overlaps a member")
            fmt += "x" * (f.offset - cursor) + f.fmt
            cursor = f.offset + f.size
        if cursor > self.size:
            raise TablesError(f"{_where()}: {struct_name} members overrun its size")
        fmt += "x" * (self.size - cursor)
        self._codec = struct.Struct(fmt)
        self._to_mem = tuple(by_offset)  # memory position -> caller position
        self._from_mem = tuple(by_offset.index(i) for i in range(len(by_offset)))
        self._in_order = self._to_mem == tuple(range(len(by_offset)))

    def pack_into(self, buf: bytearray | memoryview, offset: int, *values: int) -> None:
        if self._in_order:
            self._codec.pack_into(buf, offset, *values)
        else:
            self._codec.pack_into(buf, offset, *(values[i] for i in self._to_mem))

    def pack(self, *values: int) -> bytes:
        if self._in_order:
            return self._codec.pack(*values)
        return self._codec.pack(*(values[i] for i in self._to_mem))

    def unpack_from(self, buf: bytes | bytearray | memoryview, offset: int = 0) -> tuple:
        raw = self._codec.unpack_from(buf, offset)
        if self._in_order:
            return raw
        return tuple(raw[i] for i in self._from_mem)


def packer(struct_name: str, members: Sequence[str]) -> Packer:
    return Packer(struct_name, members)


def enum(name: str) -> dict[str, int]:
    """``ENUMS[name]`` (enumerator -> value)."""
    try:
        return tables().ENUMS[name]
    except (AttributeError, KeyError):
        raise TablesError(f"{_where()}: ENUMS has no enum {name!r}") from None


def enum_members(name: str) -> dict[str, int]:
    """``ENUMS[name]`` without its sentinels: the count member (named ``Count`` or
    ``...Count``, holding the largest value) and ``Unknown`` (a negative value)."""
    values = enum(name)
    top = max(values.values(), default=0)
    return {
        k: v
        for k, v in values.items()
        if not (k.endswith("Count") and v == top) and not (k == "Unknown" and v < 0)
    }


def image_access_max() -> int:
    """The largest legal ``MGPImageView::Access``: the last ``MGPipeImageAccess`` member
    (``ReadOnly``, ``WriteOnly``, ``ReadWrite``; seed 002 §1). The compiled decoder and the
    reference decoder both refuse a larger value (ProtocolCorruption)."""
    return max(enum_members("MGPipeImageAccess").values())


def constant(name: str) -> int:
    """``CONSTANTS[name]``."""
    try:
        return int(tables().CONSTANTS[name])
    except (AttributeError, KeyError):
        raise TablesError(f"{_where()}: CONSTANTS has no constant {name!r}") from None


def call_name(opcode: int) -> str | None:
    """The catalogue name of ``opcode``, or None when the catalogue has no such row."""
    row = getattr(tables(), "CALL_BY_OPCODE", {}).get(opcode)
    return None if row is None else str(row["name"])
