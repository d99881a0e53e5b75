"""numpy structured dtypes for every struct of the generated tables (``STRUCTS``).

Each dtype is built from the libclang layout the tables carry: explicit member
``offsets`` and ``itemsize`` = the struct's ``sizeof``, so padding bytes exist (and
stay zero in a record built here) exactly where the C++ compiler leaves them. Nested
structs nest; arrays are subarray dtypes. Everything is little-endian.

``b8`` (C++ ``bool``) is carried as ``u1`` (an unsigned byte), never as numpy
``bool_``: a byte that is not 0/1 on the wire must decode, round-trip bit-exactly and
never crash a reader. :func:`to_dict` gives such members back as ``int``; :func:`fill`
accepts ``True``/``False`` as well.

Helpers: :func:`dtype`, :func:`zeros`, :func:`from_dict`, :func:`fill`,
:func:`to_dict`, :func:`view`, :func:`array`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from . import tables as _t

__all__ = [
    "SCALAR_CODES",
    "SCALAR_DTYPES",
    "scalar_dtype",
    "dtype",
    "element_dtype",
    "zeros",
    "from_dict",
    "fill",
    "to_dict",
    "view",
    "array",
    "struct_members",
    "Path",
    "paths_of",
    "get_path",
    "path_name",
]

#: Scalar codes of docs/TABLES.md -> struct-module codes (``b8`` is an unsigned byte). The
#: one place these are spelt: the numpy dtypes below and the wire codec derive from it.
SCALAR_CODES: dict[str, str] = {
    "u8": "B", "u16": "H", "u32": "I", "u64": "Q",
    "i8": "b", "i16": "h", "i32": "i", "i64": "q",
    "f32": "f", "f64": "d", "b8": "B",
}  # fmt: skip

#: The same codes as little-endian numpy dtype strings.
SCALAR_DTYPES: dict[str, str] = {k: np.dtype("<" + v).str for k, v in SCALAR_CODES.items()}


def scalar_dtype(code: str) -> np.dtype:
    try:
        return np.dtype(SCALAR_DTYPES[code])
    except KeyError:
        raise _t.TablesError(f"unknown scalar code {code!r}") from None


def struct_members(name: str) -> tuple[dict, ...]:
    """``STRUCTS[name]["members"]`` (offset order as the tables list them)."""
    return tuple(_t.struct_info(name)["members"])


@lru_cache(maxsize=None)
def dtype(name: str) -> np.dtype:
    """The structured dtype of struct ``name`` (cached)."""
    info = _t.struct_info(name)
    names, formats, offsets = [], [], []
    for m in info["members"]:
        if m.get("struct"):
            base = dtype(m["struct"])
        elif m.get("scalar"):
            base = scalar_dtype(m["scalar"])
        else:
            raise _t.TablesError(f"{name}.{m['name']} has neither a scalar nor a struct type")
        if base.itemsize != int(m["elem_size"]):
            raise _t.TablesError(
                f"{name}.{m['name']}: element is {m['elem_size']} B in the tables, "
                f"{base.itemsize} B as {base}"
            )
        count = int(m.get("count", 1))
        names.append(m["name"])
        formats.append(base if count == 1 else (base, (count,)))
        offsets.append(int(m["offset"]))
    dt = np.dtype(
        {"names": names, "formats": formats, "offsets": offsets, "itemsize": int(info["size"])}
    )
    return dt


def element_dtype(element: str, scalar: str | None = None) -> np.dtype:
    """The dtype of a tail element: a scalar code, else the struct named ``element``."""
    return scalar_dtype(scalar) if scalar else dtype(element)


def zeros(name: str) -> np.void:
    """A zeroed, writable record of struct ``name`` (padding included)."""
    return np.zeros(1, dtype(name))[0]


def view(name: str, buf: Any, offset: int = 0) -> np.void:
    """A zero-copy record of struct ``name`` over ``buf`` at ``offset`` (writable iff buf is)."""
    return np.frombuffer(buf, dtype(name), count=1, offset=offset)[0]


def from_dict(name: str, values: Mapping[str, Any] | None = None) -> np.void:
    """A record of ``name`` filled from a nested dict (missing members stay zero)."""
    rec = zeros(name)
    if values:
        fill(rec, values, name)
    return rec


def _is_handle_like(value: object) -> bool:
    return hasattr(value, "pack") and hasattr(value, "slot") and hasattr(value, "gen")


def _assign_struct(container: Any, key: Any, dt: np.dtype, value: Any, where: str) -> None:
    """Fill the nested struct ``container[key]`` (of ``dt``) from ``value``."""
    if isinstance(value, Mapping):
        fill(container[key], value, where)
        return
    if _is_handle_like(value):
        value = value.pack()
    if isinstance(value, np.void) and value.dtype == dt:
        container[key] = value
        return
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != dt.itemsize:
            raise ValueError(f"{where}: {len(raw)} bytes for a {dt.itemsize}-byte struct")
        container[key] = np.frombuffer(raw, dt, count=1)[0]
        return
    raise ValueError(f"{where}: expected a dict, a record or bytes, got {type(value).__name__}")


def _assign(rec: np.void, member: str, value: Any, where: str) -> None:
    dt = rec.dtype.fields[member][0]
    base = dt.base
    if dt.shape:  # an array member
        arr = rec[member]
        if isinstance(value, np.ndarray) and value.dtype == dt.base and value.shape == dt.shape:
            arr[...] = value
            return
        items = list(value) if not isinstance(value, (bytes, bytearray)) else list(value)
        if len(items) > dt.shape[0]:
            raise ValueError(f"{where}: {len(items)} values for an array of {dt.shape[0]}")
        for i, item in enumerate(items):
            if base.names:
                _assign_struct(arr, i, base, item, f"{where}[{i}]")
            else:
                _set_scalar(arr, i, base, item, f"{where}[{i}]")
        return
    if base.names:
        _assign_struct(rec, member, base, value, where)
    else:
        _set_scalar(rec, member, base, value, where)


def _set_scalar(container: Any, key: Any, dt: np.dtype, value: Any, where: str) -> None:
    if isinstance(value, bool):
        value = int(value)
    try:
        if dt.kind in "ui":
            if isinstance(value, float) or not isinstance(value, (int, np.integer)):
                raise TypeError
            info = np.iinfo(dt)
            if not info.min <= int(value) <= info.max:
                raise OverflowError
        container[key] = value
    except (OverflowError, TypeError, ValueError):
        raise ValueError(f"{where}: {value!r} does not fit {dt}") from None


def fill(rec: np.void, values: Mapping[str, Any], where: str = "") -> np.void:
    """Write ``values`` (nested dict by member name) into the writable record ``rec``."""
    fields = rec.dtype.fields or {}
    for member, value in values.items():
        place = f"{where}.{member}" if where else member
        if member not in fields:
            raise ValueError(f"{place}: no such member (has: {', '.join(fields)})")
        _assign(rec, member, value, place)
    return rec


def _scalar_out(x: Any, json_safe: bool) -> Any:
    if isinstance(x, np.floating):
        f = float(x)
        if json_safe and not math.isfinite(f):
            return "0x" + x.astype(x.dtype.newbyteorder("<")).tobytes().hex()
        return f
    return int(x)


def to_dict(rec: np.void | np.ndarray, json_safe: bool = False) -> Any:
    """A nested plain-Python value: dicts by member name, lists for arrays, int/float scalars.

    With ``json_safe`` a NaN/inf float becomes the hex string of its little-endian bytes,
    so the result is strict JSON and keeps the float's bits.
    """
    dt = rec.dtype
    if dt.names:
        if isinstance(rec, np.ndarray) and rec.shape:
            return [to_dict(r, json_safe) for r in rec]
        return {n: to_dict(rec[n], json_safe) for n in dt.names}
    if isinstance(rec, np.ndarray) and rec.shape:
        return [_scalar_out(x, json_safe) for x in rec]
    if isinstance(rec, np.ndarray):
        return _scalar_out(rec[()], json_safe)
    return _scalar_out(rec, json_safe)


def array(dt: np.dtype, rows: Iterable[Any] | np.ndarray | bytes, where: str = "") -> np.ndarray:
    """A 1-D array of ``dt`` from an ndarray, raw bytes, dicts (structs) or scalars."""
    if isinstance(rows, np.ndarray):
        if rows.dtype == dt:
            return rows.reshape(-1)
        if rows.dtype.itemsize == dt.itemsize and rows.dtype.names and dt.names:
            return rows.reshape(-1).view(dt)
        raise ValueError(f"{where}: array of {rows.dtype} where {dt} was expected")
    if isinstance(rows, (bytes, bytearray, memoryview)):
        raw = bytes(rows)
        if len(raw) % dt.itemsize:
            raise ValueError(f"{where}: {len(raw)} bytes is not a whole number of {dt.itemsize}")
        return np.frombuffer(raw, dt).copy()
    items = list(rows)
    out = np.zeros(len(items), dt)
    for i, item in enumerate(items):
        if dt.names:
            _assign_struct(out, i, dt, item, f"{where}[{i}]")
        else:
            _set_scalar(out, i, dt, item, f"{where}[{i}]")
    return out


Path = tuple[str | int, ...]


@lru_cache(maxsize=None)
def paths_of(name: str, target: str) -> tuple[Path, ...]:
    """Every place inside struct ``name`` whose type is struct ``target``, in layout order.

    A path is a tuple of member names and array indices, e.g. ``("Color", 3, "Res")``;
    ``paths_of("MGPipeHandle", "MGPipeHandle") == ((),)``.
    """
    if name == target:
        return ((),)
    out: list[Path] = []
    for m in struct_members(name):
        sub = m.get("struct")
        if not sub:
            continue
        inner = paths_of(sub, target)
        count = int(m.get("count", 1))
        for i in range(count):
            head: Path = (m["name"],) if count == 1 else (m["name"], i)
            out.extend(head + p for p in inner)
    return tuple(out)


def get_path(rec: Any, path: Path) -> Any:
    """``rec[path[0]][path[1]]...`` (a view for struct members)."""
    for key in path:
        rec = rec[key]
    return rec


def path_name(path: Path) -> str:
    """``("Color", 3, "Res")`` -> ``"Color[3].Res"``."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out
