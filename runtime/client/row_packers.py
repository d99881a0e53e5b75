"""Tail rows packed with precompiled ``struct.Struct``s (the client's group pushes).

A group push (sampler views, sampler states, vertex buffers, shader buffers, vertex
elements) sends one tail row per unit / binding in its window. :func:`row_packer` compiles,
once per (element, members), a ``Struct`` over the element's layout from the generated
tables (``STRUCTS`` offsets and ``sizeof``: members not named, padding and alignment are
zero bytes), so a row is one C call, where filling a numpy structured array element by
element (:func:`~..schema.layouts.array`) is about 29 Python calls per element.

The bytes are the numpy path's bytes (tests/test_cliffs.py compares them, row by row and
through the encoder). A value that does not fit its member is named exactly as the numpy
path names it: the rows are handed to :func:`~..schema.layouts.array`, which raises.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..schema import layouts
from ..schema import tables as _t
from ..wire.records import format_of, layout

__all__ = ["RowPacker", "row_packer"]


class RowPacker:
    """Rows of struct ``element`` with members ``names`` (dotted paths, memory order)."""

    __slots__ = ("element", "names", "size", "pack", "zero", "dtype")

    def __init__(self, element: str, names: tuple[str, ...]) -> None:
        lay = layout(element)
        known = [f.path for f in lay.flat]
        missing = [n for n in names if n not in known]
        if missing:
            raise _t.TablesError(f"{element}: no member {missing[0]!r} to pack")
        order = [p for p in known if p in names]
        if order != list(names):  # a layout that moved a member: say so, never misplace it
            raise _t.TablesError(f"{element}: members {names} are not in memory order {order}")
        st = struct.Struct("<" + format_of(lay.flat, lay.size, 0, frozenset(names)))
        self.element, self.names, self.size = element, names, lay.size
        self.pack = st.pack  # pack(*values) -> one row's bytes
        self.zero = bytes(lay.size)  # an empty row
        self.dtype = layouts.dtype(element)

    def rows(self, rows: Sequence[Sequence[Any] | None], where: str = "") -> bytes:
        """The bytes of ``rows``: each a tuple of values in :attr:`names` order, or None
        (an empty row, every byte zero)."""
        pack, zero = self.pack, self.zero
        try:
            return b"".join([zero if r is None else pack(*r) for r in rows])
        except (struct.error, TypeError):
            layouts.array(self.dtype, [self.as_dict(r) for r in rows], where)  # names the fault
            raise

    def as_dict(self, row: Sequence[Any] | None) -> dict[str, Any]:
        """The nested dict the numpy path takes for ``row``."""
        out: dict[str, Any] = {}
        for path, v in zip(self.names, row or ()):
            *heads, leaf = path.split(".")
            d = out
            for h in heads:
                d = d.setdefault(h, {})
            d[leaf] = v
        return out


@lru_cache(maxsize=None)
def row_packer(element: str, names: tuple[str, ...]) -> RowPacker:
    return RowPacker(element, names)
