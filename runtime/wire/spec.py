"""Per-call wire layout, derived once from the generated tables (``CALLS``, ``STRUCTS``, ``TAILS``).

A record is ``MGPWireRecHeader`` + the payload struct + the call's tails (``TAILS`` rows
in order): each present tail starts at the next 8-byte boundary, holds ``count`` elements
(the payload's count field, or exactly one) and the record's ``Size`` is rounded up to 8.
Nothing here is a layout of its own: sizes, opcodes, bounds and conditions are the
tables', the dtypes are :mod:`.layouts`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..schema import layouts
from ..schema import tables as _t
from .header import PAD_OP, record_align, header_size

__all__ = [
    "TailSpec",
    "CallSpec",
    "call_spec",
    "spec_for_opcode",
    "all_specs",
    "align8",
    "WINDOW_START",
]

_BLOB_REF = "MGPBlobRef"
_IMAGE_VIEW = "MGPImageView"
# A binding-point window: a payload with a ``Start`` member and a tail counted by ``Count``
# covers points [Start, Start + Count), which must stay within the tail's bound.
WINDOW_START = "Start"
_WINDOW_COUNT = "Count"


def _member(payload: Any, name: str) -> Any:
    """Member ``name`` of a payload: a generated record or a numpy record."""
    return payload[name] if isinstance(payload, np.void) else getattr(payload, name)


def align8(n: int) -> int:
    return n + (-n % record_align())


@dataclass(frozen=True, slots=True)
class TailSpec:
    """One ``TAILS`` row of a call."""

    call: str
    element: str
    dtype: np.dtype
    count_field: str | None
    bound: int | None
    cond_field: str | None
    cond_value: int
    when: str  # kAlways | kWhenSet | kWhenClear
    windowed: bool  # Start + count must stay within bound (binding-point windows)

    @property
    def reason(self) -> str:
        """The ``ProtocolCorruption`` reason of a count over its bound."""
        return f"{self.call}.{self.count_field or self.element}"

    def present(self, payload: Any) -> bool:
        if self.cond_field is None or self.when == "kAlways":
            return True
        is_set = (int(_member(payload, self.cond_field)) & self.cond_value) != 0
        return is_set if self.when == "kWhenSet" else not is_set

    def count(self, payload: Any) -> int:
        return 1 if self.count_field is None else int(_member(payload, self.count_field))

    def start(self, payload: Any) -> int:
        """First binding point of a windowed tail (0 for any other tail)."""
        return int(_member(payload, WINDOW_START)) if self.windowed else 0


@dataclass(frozen=True, slots=True)
class CallSpec:
    """Everything the codec needs to know about one call."""

    opcode: int
    name: str
    payload: str
    dtype: np.dtype
    cls: str
    flags: frozenset[str]
    wait_class: str
    tails: tuple[TailSpec, ...]
    blob_paths: tuple[layouts.Path, ...]  # MGPBlobRef members the decoder checks (kHasBlob)
    image_view_paths: tuple[layouts.Path, ...]  # MGPImageView members of the payload
    header_size: int
    fixed_size: int  # header + payload, aligned: the whole record of a non-kVarTail call

    @property
    def payload_size(self) -> int:
        return self.dtype.itemsize

    @property
    def has_blob(self) -> bool:
        return "kHasBlob" in self.flags

    @property
    def var_tail(self) -> bool:
        return "kVarTail" in self.flags

    @property
    def optional(self) -> bool:
        return "kOptional" in self.flags

    def present_tails(self, payload: Any) -> tuple[TailSpec, ...]:
        return tuple(t for t in self.tails if t.present(payload))


def _tail_spec(call: str, payload: str, row: dict) -> TailSpec:
    dt = layouts.element_dtype(row["element"], row.get("scalar"))
    if dt.itemsize != int(row["elem_size"]):
        raise _t.TablesError(
            f"TAILS {call}/{row['element']}: elem_size {row['elem_size']} but dtype is "
            f"{dt.itemsize} B"
        )
    members = {m["name"] for m in layouts.struct_members(payload)}
    for f in (row["count_field"], row["cond_field"]):
        if f is not None and f not in members:
            raise _t.TablesError(f"TAILS {call}: {payload} has no member {f!r}")
    return TailSpec(
        call=call,
        element=row["element"],
        dtype=dt,
        count_field=row["count_field"],
        bound=row["bound"],
        cond_field=row["cond_field"],
        cond_value=int(row["cond_value"]),
        when=row["when"],
        windowed=row["count_field"] == _WINDOW_COUNT
        and row["bound"] is not None
        and WINDOW_START in members
        and row["when"] == "kAlways",
    )


@lru_cache(maxsize=None)
def _specs() -> tuple[dict[str, CallSpec], dict[int, CallSpec]]:
    mod = _t.tables()
    hdr = header_size()
    by_name: dict[str, CallSpec] = {}
    for row in mod.CALLS:
        name, payload = row["name"], row["payload"]
        if int(row["opcode"]) == PAD_OP:
            raise _t.TablesError(f"call {name} has the wrap-pad opcode {PAD_OP}")
        dt = layouts.dtype(payload)
        tails = tuple(_tail_spec(name, payload, r) for r in mod.TAILS if r["call"] == name)
        flags = frozenset(row["flags"])
        if bool(tails) != ("kVarTail" in flags):
            raise _t.TablesError(f"{name}: kVarTail flag and TAILS rows disagree")
        by_name[name] = CallSpec(
            opcode=int(row["opcode"]),
            name=name,
            payload=payload,
            dtype=dt,
            cls=row["class"],
            flags=flags,
            wait_class=row["wait_class"],
            tails=tails,
            blob_paths=layouts.paths_of(payload, _BLOB_REF) if "kHasBlob" in flags else (),
            image_view_paths=layouts.paths_of(payload, _IMAGE_VIEW),
            header_size=hdr,
            fixed_size=align8(hdr + dt.itemsize),
        )
    by_op = {s.opcode: s for s in by_name.values()}
    return by_name, by_op


def call_spec(name: str) -> CallSpec:
    """The spec of call ``name``; ValueError for a name the catalogue does not have."""
    try:
        return _specs()[0][name]
    except KeyError:
        raise ValueError(f"unknown call {name!r}") from None


def spec_for_opcode(opcode: int) -> CallSpec | None:
    return _specs()[1].get(opcode)


def all_specs() -> tuple[CallSpec, ...]:
    """Every call, in opcode order."""
    return tuple(sorted(_specs()[0].values(), key=lambda s: s.opcode))
