"""Generated immutable named records for the structs of the tables, and their struct codes.

For every struct of ``STRUCTS`` this module builds, on first use and from the tables alone:

- :func:`record_type` -- a named tuple type named like the struct (``MGPDrawInfo``), one
  field per member in layout order. Nested struct members hold records, array members
  hold tuples, every ``MGPipeHandle`` is a :class:`~.handle.Handle`, ``b8`` is an ``int``,
  floats are Python ``float``\\ s. Records are immutable, compare and hash by value.
- :func:`layout` -- a :class:`Layout`: the little-endian ``struct`` format covering exactly
  ``sizeof`` bytes (padding as ``x``, so packing writes every byte), the flat scalar list
  in memory order, and two source expressions the codec compiles: one building the record
  from a flat tuple of scalars, one flattening a record back into scalars.

:func:`zero` is the all-zero record of a struct, :func:`make` a record from a partial
nested mapping (unnamed members zero), :func:`to_plain` the nested plain-Python value
(dicts by member name, lists for arrays, ``{"Slot", "Gen"}`` for handles) that the
recorder's JSON uses.
"""

from __future__ import annotations

import math
import struct
from collections import namedtuple
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..schema import tables as _t
from ..schema.layouts import SCALAR_CODES
from .handle import Handle

__all__ = [
    "SCALAR_CODES",
    "Layout",
    "FlatScalar",
    "record_type",
    "layout",
    "zero",
    "make",
    "to_plain",
    "pack_record",
    "unpack_record",
    "is_record",
]


_HANDLE = "MGPipeHandle"
_HANDLE_MEMBERS = ("Slot", "Gen")  # in the order of Handle's fields (slot, gen)


@dataclass(frozen=True, slots=True)
class FlatScalar:
    """One scalar of a struct's flat layout: its path name, byte offset and struct code."""

    path: str  # "IndexResource.Slot", "Color[2].Res.Gen", "ColorValue[3]"
    offset: int
    code: str
    scalar: str  # the tables' scalar code (u32, f32, b8 ...)

    @property
    def size(self) -> int:
        return struct.calcsize("<" + self.code)


@dataclass(frozen=True, slots=True)
class Layout:
    """The compiled layout of one struct (see the module docstring)."""

    name: str
    size: int
    fmt: str  # no byte-order prefix; covers exactly ``size`` bytes
    flat: tuple[FlatScalar, ...]

    def build(self, var: str, start: int = 0) -> str:
        """Source of an expression building the record from ``var[start:]``."""
        return _build_expr(self.name, var, start)[0]

    def flatten(self, var: str) -> str:
        """Source of comma-separated expressions giving the record's scalars in memory order."""
        return ", ".join(_flatten_exprs(self.name, var))


@lru_cache(maxsize=None)
def _members(name: str) -> tuple[dict, ...]:
    return tuple(sorted(_t.struct_info(name)["members"], key=lambda m: int(m["offset"])))


@lru_cache(maxsize=None)
def _member_info(name: str) -> dict[str, tuple[int, str | None]]:
    """member -> (count, nested struct or None)."""
    return {m["name"]: (int(m.get("count", 1)), m.get("struct")) for m in _members(name)}


def is_record(value: object) -> bool:
    """True for a generated record (or a Handle)."""
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _newargs(self: tuple) -> tuple:
    return (tuple(self),)


@lru_cache(maxsize=None)
def record_type(name: str) -> type:
    """The named record type of struct ``name`` (``Handle`` for ``MGPipeHandle``)."""
    if name == _HANDLE:
        got = tuple(m["name"] for m in _members(name))
        if set(got) != set(_HANDLE_MEMBERS):
            raise _t.TablesError(f"{_HANDLE} members are {got}, expected {_HANDLE_MEMBERS}")
        return Handle
    fields = [m["name"] for m in _members(name)]
    base = namedtuple(name, fields)  # type: ignore[misc]
    # a tuple subclass with tuple's own constructor (``R(iterable)``): the named tuple's
    # accessors and helpers, but building a record runs no Python frame at all (the
    # decoders build thousands per second)
    ns = {k: v for k, v in vars(base).items() if k not in ("__new__", "__dict__", "__weakref__")}
    ns["__module__"] = __name__
    ns["__getnewargs__"] = _newargs
    cls = type(name, (tuple,), ns)
    cls._scalars = {  # type: ignore[attr-defined]
        m["name"]: (m.get("scalar"), m.get("struct"), int(m.get("count", 1))) for m in _members(name)
    }
    return cls


class WireHandle(Handle):
    """A :class:`Handle` built by the decoders (``WireHandle((slot, gen))``, no Python
    frame); equal to, hashing like and printing as the ``Handle`` of the same value."""

    __slots__ = ()
    __new__ = tuple.__new__  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (Handle, (self[0], self[1]))  # unpickles as the Handle of the same value


WireHandle.__name__ = WireHandle.__qualname__ = "Handle"


def _flat(name: str, base: int = 0, prefix: str = "") -> list[FlatScalar]:
    out: list[FlatScalar] = []
    for m in _members(name):
        count = int(m.get("count", 1))
        elem = int(m["elem_size"])
        for i in range(count):
            off = base + int(m["offset"]) + i * elem
            path = prefix + m["name"] + (f"[{i}]" if count > 1 else "")
            if m.get("struct"):
                out += _flat(m["struct"], off, path + ".")
            elif m.get("scalar") in SCALAR_CODES:
                out.append(FlatScalar(path, off, SCALAR_CODES[m["scalar"]], m["scalar"]))
            else:
                raise _t.TablesError(f"{name}.{m['name']}: neither a scalar nor a struct")
    return out


def format_of(flat: list[FlatScalar] | tuple[FlatScalar, ...], size: int, start: int = 0,
              keep: frozenset[str] | None = None) -> str:  # fmt: skip
    """A struct format for ``flat`` from byte ``start`` to ``size``: scalars (only ``keep``
    ones, when given; the others become padding) and zero padding between them."""
    parts, cursor = [], start
    for f in flat:
        if f.offset < cursor:
            raise _t.TablesError(f"{f.path} overlaps the member before it")
        if f.offset > cursor:
            parts.append(f"{f.offset - cursor}x")
        parts.append(f.code if keep is None or f.path in keep else f"{f.size}x")
        cursor = f.offset + f.size
    if cursor > size:
        raise _t.TablesError(f"members overrun the struct size {size}")
    if size > cursor:
        parts.append(f"{size - cursor}x")
    return "".join(parts)


@lru_cache(maxsize=None)
def layout(name: str) -> Layout:
    """The compiled :class:`Layout` of struct ``name`` (checked against ``sizeof``)."""
    size = int(_t.struct_info(name)["size"])
    flat = tuple(_flat(name))
    fmt = format_of(flat, size)
    if struct.calcsize("<" + fmt) != size:
        raise _t.TablesError(f"{name}: format {fmt!r} is not {size} bytes")
    record_type(name)
    return Layout(name, size, fmt, flat)


def type_name(name: str) -> str:
    """The identifier the compiled source uses for struct ``name``'s record type."""
    return "Handle" if name == _HANDLE else f"R_{name}"


def namespace_for(names: set[str]) -> dict[str, Any]:
    """Globals the compiled source needs for the record types of ``names`` (nested included)."""
    ns: dict[str, Any] = {"Handle": WireHandle}
    todo = list(names)
    while todo:
        n = todo.pop()
        if type_name(n) in ns:
            continue
        ns[type_name(n)] = record_type(n)
        todo += [m["struct"] for m in _members(n) if m.get("struct")]
    return ns


def _build_expr(name: str, var: str, start: int) -> tuple[str, int]:
    """(expression source, scalars consumed) building struct ``name`` from ``var[start:]``."""
    i = start
    if name == _HANDLE:
        order = [m["name"] for m in _members(name)]
        idx = {n: i + k for k, n in enumerate(order)}
        return f"Handle(({var}[{idx['Slot']}], {var}[{idx['Gen']}]))", 2
    parts = []
    for m in _members(name):
        count = int(m.get("count", 1))
        if m.get("struct"):
            elems = []
            for _ in range(count):
                src, n = _build_expr(m["struct"], var, i)
                elems.append(src)
                i += n
            parts.append(elems[0] if count == 1 else "(" + ", ".join(elems) + ",)")
        elif count == 1:
            parts.append(f"{var}[{i}]")
            i += 1
        else:
            parts.append(f"{var}[{i}:{i + count}]")
            i += count
    return f"{type_name(name)}(({', '.join(parts)},))", i - start


def _flatten_exprs(name: str, var: str) -> list[str]:
    if name == _HANDLE:
        order = [m["name"] for m in _members(name)]
        return [f"{var}.{'slot' if n == 'Slot' else 'gen'}" for n in order]
    out: list[str] = []
    for m in _members(name):
        count = int(m.get("count", 1))
        ref = f"{var}.{m['name']}"
        if m.get("struct"):
            if count == 1:
                out += _flatten_exprs(m["struct"], ref)
            else:
                for k in range(count):
                    out += _flatten_exprs(m["struct"], f"{ref}[{k}]")
        elif count == 1:
            out.append(ref)
        else:
            out.append(f"*{ref}")
    return out


@lru_cache(maxsize=None)
def _codec(name: str) -> tuple[struct.Struct, Any, Any]:
    """(Struct, unpack(buf, off) -> record, flatten(record) -> tuple) of struct ``name``."""
    lay = layout(name)
    ns = namespace_for({name})
    st = struct.Struct("<" + lay.fmt)
    ns["_unpack"] = st.unpack_from
    src = (
        f"def unpack(buf, off=0):\n    v = _unpack(buf, off)\n    return {lay.build('v')}\n"
        f"def flatten(r):\n    return ({lay.flatten('r')},)\n"
    )
    exec(compile(src, f"<mgpipe record {name}>", "exec"), ns)
    return st, ns["unpack"], ns["flatten"]


def unpack_record(name: str, buf: Any, offset: int = 0) -> Any:
    """The record of struct ``name`` at ``offset`` of ``buf``."""
    return _codec(name)[1](buf, offset)


def pack_record(name: str, rec: Any) -> bytes:
    """The bytes of record ``rec`` of struct ``name`` (padding zero)."""
    st, _, flatten = _codec(name)
    return st.pack(*flatten(rec))


@lru_cache(maxsize=None)
def zero(name: str) -> Any:
    """The all-zero record of struct ``name``."""
    return unpack_record(name, bytes(layout(name).size))


def make(name: str, values: Mapping[str, Any] | None = None, where: str = "") -> Any:
    """A record of ``name`` from a partial nested mapping (members not named are zero)."""
    base = zero(name)
    if not values:
        return base
    if name == _HANDLE and isinstance(values, Handle):
        return values
    fields = base._fields
    where = where or name
    updates: dict[str, Any] = {}
    info = _member_info(name)
    for key, value in values.items():
        if key not in info:
            raise ValueError(f"{where}.{key}: no such member (has: {', '.join(fields)})")
        count, sub = info[key]
        if count == 1:
            updates[key] = _coerce_one(sub, value, f"{where}.{key}")
        else:
            items = list(value)
            if len(items) > count:
                raise ValueError(f"{where}.{key}: {len(items)} values for an array of {count}")
            old = getattr(base, key)
            items = [_coerce_one(sub, v, f"{where}.{key}[{i}]") for i, v in enumerate(items)]
            updates[key] = tuple(items) + tuple(old[len(items) :])
    return base._replace(**updates) if name != _HANDLE else Handle(**{
        "slot": updates.get("Slot", 0), "gen": updates.get("Gen", 0)})  # fmt: skip


def _coerce_one(sub: str | None, value: Any, where: str) -> Any:
    if sub is None:
        return int(value) if isinstance(value, bool) else value
    if is_record(value):
        return value
    if isinstance(value, Mapping):
        return make(sub, value, where)
    raise ValueError(f"{where}: expected a mapping or a record, got {type(value).__name__}")


def _float_out(x: float, code: str, json_safe: bool) -> Any:
    if json_safe and not math.isfinite(x):
        return "0x" + struct.pack("<" + code, x).hex()
    return x


def to_plain(value: Any, json_safe: bool = False) -> Any:
    """A nested plain-Python value of a record (or tuple of records).

    With ``json_safe`` a NaN / infinite float becomes the hex of its little-endian bytes.
    """
    if isinstance(value, Handle):
        return {"Slot": value.slot, "Gen": value.gen}
    scalars = getattr(type(value), "_scalars", None)
    if scalars is not None:
        out = {}
        for key, v in zip(value._fields, value):
            scalar, sub, count = scalars[key]
            if sub is not None:
                out[key] = to_plain(v, json_safe) if count == 1 else [to_plain(e, json_safe) for e in v]
            elif scalar in ("f32", "f64"):
                code = SCALAR_CODES[scalar]
                out[key] = (_float_out(v, code, json_safe) if count == 1
                            else [_float_out(e, code, json_safe) for e in v])  # fmt: skip
            else:
                out[key] = v if count == 1 else list(v)
        return out
    if isinstance(value, tuple):
        return [to_plain(e, json_safe) for e in value]
    return value


def __getattr__(name: str) -> type:
    """Record types by struct name (so a record pickles: its class resolves here)."""
    if name.startswith("__") or name not in _t.tables().STRUCTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return record_type(name)
