"""numpy dtypes built from the generated ``STRUCTS`` layouts (private to the client side).

Every offset, size and count comes from the tables; bytes no member covers (padding)
stay in the dtype's itemsize and are never named.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import tables as _t

__all__ = ["struct_dtype"]

_SCALAR = {
    "u8": "<u1", "u16": "<u2", "u32": "<u4", "u64": "<u8",
    "i8": "<i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
    "f32": "<f4", "f64": "<f8", "b8": "?",
}  # fmt: skip


@lru_cache(maxsize=None)
def struct_dtype(name: str) -> np.dtype:
    """The little-endian structured dtype of ``STRUCTS[name]``."""
    info = _t.struct_info(name)
    names, formats, offsets = [], [], []
    for m in info["members"]:
        if m.get("struct"):
            elem: np.dtype | str = struct_dtype(m["struct"])
        elif m.get("scalar") in _SCALAR:
            elem = _SCALAR[m["scalar"]]
        else:
            raise _t.TablesError(f"{name}.{m['name']}: no scalar or struct element type")
        count = int(m.get("count", 1))
        names.append(m["name"])
        formats.append(elem if count == 1 else (elem, (count,)))
        offsets.append(int(m["offset"]))
    dt = np.dtype(
        {"names": names, "formats": formats, "offsets": offsets, "itemsize": int(info["size"])}
    )
    if dt.itemsize != info["size"]:
        raise _t.TablesError(f"{name}: dtype is {dt.itemsize} B, layout says {info['size']}")
    return dt
