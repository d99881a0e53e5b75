"""Hypothesis strategies for valid wire records of every call (shared by the wire tests).

Everything is derived from the generated tables: member scalar ranges from STRUCTS,
tails / counts / bounds / conditions from TAILS, blob refs from the payload layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from mgpipe.runtime.schema import layouts
from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.wire.stage import StageSegment
from mgpipe.runtime.wire.codec import IMAGE_ACCESS_MAX
from mgpipe.runtime.wire.spec import CallSpec, all_specs

ALL_CALLS = tuple(s.name for s in all_specs())
SPECIAL_FLOATS = (-0.0, 0.0, math.nan, math.inf, -math.inf)
MAX_TAIL = 5  # elements per generated tail (bounds are tested separately)


def scalar_strategy(code: str) -> st.SearchStrategy[Any]:
    if code in ("f32", "f64"):
        width = 32 if code == "f32" else 64
        return st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(width=width))
    info = np.iinfo(layouts.scalar_dtype(code))
    return st.integers(int(info.min), int(info.max))


def struct_strategy(name: str) -> st.SearchStrategy[dict[str, Any]]:
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for m in layouts.struct_members(name):
        base = struct_strategy(m["struct"]) if m.get("struct") else scalar_strategy(m["scalar"])
        count = int(m.get("count", 1))
        fields[m["name"]] = base if count == 1 else st.lists(base, min_size=count, max_size=count)
    return st.fixed_dictionaries(fields)


@dataclass
class Case:
    """One valid call: what to hand the encoder and what the decoder must give back."""

    call: str
    payload: np.void  # exact expected payload bytes
    tails: list[np.ndarray]
    blob: bytes | None


def _fix_access(arr: np.ndarray | np.void, draw: Any) -> None:
    arr["Access"] = draw(st.integers(0, IMAGE_ACCESS_MAX))


@st.composite
def cases(draw: Any, spec: CallSpec, stage: StageSegment) -> Case:
    """A valid record of ``spec`` (blobs already staged into ``stage``, except the first)."""
    p = layouts.from_dict(spec.payload, draw(struct_strategy(spec.payload)))
    # counts consistent with the tails we will generate; windows within their bound
    for tail in spec.tails:
        if tail.count_field is not None:
            hi = min(tail.bound if tail.bound is not None else MAX_TAIL, MAX_TAIL)
            p[tail.count_field] = draw(st.integers(0, hi))
            if tail.windowed:
                p["Start"] = draw(st.integers(0, tail.bound - int(p[tail.count_field])))
    # record-local semantic rules
    if spec.name == "SetShaderBuffers":
        p["Class"] = draw(st.integers(0, t.constant("kMGPipeShaderBufferClassCount") - 1))
    if spec.name == "Present":
        p["FrameSerial"] = draw(st.integers(1, 2**64 - 1))
    if spec.name == "SetVertexAttribDefaults":
        bits = draw(st.lists(st.integers(0, 31), max_size=MAX_TAIL, unique=True))
        p["Mask"] = sum(1 << b for b in bits)
        p["Count"] = len(bits)
    for path in spec.image_view_paths:
        _fix_access(layouts.get_path(p, path), draw)
    # blobs: the first comes through encode(blob=...), the others are staged here
    blob = None
    for i, path in enumerate(spec.blob_paths):
        data = draw(st.binary(max_size=48))
        ref = layouts.get_path(p, path)
        if i == 0:
            blob = data
            continue
        off, size, seg = stage.stage(data) if draw(st.booleans()) else (0, 0, 0)
        layouts.fill(ref, {"Offset": off, "Size": size, "Seg": seg})
    tails = []
    for tail in spec.present_tails(p):
        n = tail.count(p)
        raw = draw(st.binary(min_size=n * tail.dtype.itemsize, max_size=n * tail.dtype.itemsize))
        arr = np.frombuffer(raw, tail.dtype).copy()
        if tail.element == "MGPImageView":
            for i in range(n):
                arr[i]["Access"] = draw(st.integers(0, IMAGE_ACCESS_MAX))
        if tail.element == "MGHostSpan":  # no pointer; bytes staged, or the index mirror
            for i in range(n):
                if draw(st.booleans()):
                    off, size, seg = stage.stage(draw(st.binary(max_size=48)))
                else:
                    off, size = draw(st.integers(0, 2**40)), draw(st.integers(0, 2**40))
                    seg = t.constant("kMGHostSpanSegFromServerIndexMirror")
                arr[i]["Ptr"], arr[i]["Seg"], arr[i]["Offset"], arr[i]["Size"] = 0, seg, off, size
        tails.append(arr)
    return Case(spec.name, p, tails, blob)


def tail_input(arr: np.ndarray, mode: int) -> Any:
    """The same tail as an ndarray, a list of dicts / ints, or raw bytes."""
    if mode == 0:
        return arr
    if mode == 1:
        return layouts.to_dict(arr) if arr.dtype.names else [int(x) for x in arr]
    return arr.tobytes()
