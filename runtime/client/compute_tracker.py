"""The tracker's pushes for issue 19 (a mixin of :class:`~.tracker.Tracker`): the image
units (``SetShaderImages``), the transform-feedback targets (``SetStreamOutputTargets``),
the storage / atomic-counter writable mask's narrowing by the program's reflection, and the
GPU-written pending set (see :mod:`.compute`)."""

from __future__ import annotations

import json
from typing import Any

from ..schema import layouts
from ..schema import tables as _t
from ..wire.handle import Handle
from .row_packers import RowPacker, row_packer

__all__ = ["TrackerCompute", "ATOMIC_BLOCK"]

#: the storage block glslang's relaxed rules make of an ``atomic_uint`` at GL binding N
ATOMIC_BLOCK = "gl_AtomicCounterBlock_"
_APPEND = 0xFFFFFFFF



def image_rows() -> RowPacker:
    """SetShaderImages' rows (``MGPImageView``), one precompiled ``Struct``."""
    return row_packer("MGPImageView", ("Res.Slot", "Res.Gen", "Unit", "InternalFormat", "Layer",
                                       "Level", "Layered", "Access"))  # fmt: skip

class TrackerCompute:
    em: Any
    program: Any
    buffer_bindings: dict
    sup: Any
    _pushed: dict

    def _init_compute(self) -> None:
        #: image unit -> (texture, level, layered, layer, GL access token, GL format)
        self.images: dict[int, tuple] = {}
        #: buffer handle -> merged [start, end) ranges a draw / dispatch may have written
        self.gpu_pending: dict[Handle, list[tuple[int, int]]] = {}
        #: buffer handle -> the seq of the last record whose guess added it (compute.py)
        self.gpu_guess_seq: dict[Handle, int] = {}
        self.xfb: Any = None  # the bound TransformFeedback (compute.py)
        self._access = _t.enum("MGPipeImageAccess")

    # -- what the program writes -------------------------------------------------------
    def readonly_points(self, cls: str) -> set[int]:
        """Binding points of class ``cls`` ("storage") the program in use declares
        ``readonly`` in every stage (an atomic counter is always written)."""
        prog = self.program
        if prog is None or cls != "storage":
            return set()
        key = ("readonly", prog.handle)
        hit = self._pushed.get(key)
        if hit is None:
            try:
                rows = json.loads(prog.reflection or b"{}").get("storage", ())
            except ValueError:
                rows = ()
            ro: dict[int, bool] = {}
            for r in rows:
                if str(r.get("name", "")).startswith(ATOMIC_BLOCK):
                    continue
                b = int(r.get("binding", -1))
                ro[b] = ro.get(b, True) and bool(r.get("readonly"))
            hit = self._pushed[key] = {b for b, v in ro.items() if v}
        return hit

    def note_gpu_writes(self, seq: int = 0) -> None:
        """Every range bound at a writable storage / atomic-counter point joins the
        pending set (the client cannot tell what the shader writes: it says it may)."""
        key = (self.gen, self.program.handle if self.program is not None else None,
               tuple(b[0].size for b in self.buffer_bindings.values()))
        ranges = self._pushed.get("writable_ranges")
        if ranges is None or ranges[0] != key:  # recomputed only when a binding moved
            ro = self.readonly_points("storage")
            rows = []
            for (cls, i), (buf, off, size) in self.buffer_bindings.items():
                if cls == "uniform" or (cls == "storage" and i in ro):
                    continue
                end = off + (size if size else max(buf.size - off, 0))
                if end > off:
                    rows.append((buf.handle, off, end))
            ranges = self._pushed["writable_ranges"] = (key, rows)
        pend, guess = self.gpu_pending, self.gpu_guess_seq
        for h, off, end in ranges[1]:
            guess[h] = seq
            old = pend.get(h)
            if old is not None and any(a <= off and end <= b for a, b in old):
                continue  # already pending: the common repeated launch costs a compare
            pend[h] = _merge((old or []) + [(off, end)])

    def clear_pending(self, res: Handle, start: int, end: int) -> None:
        """The client wrote ``[start, end)`` of ``res``: those bytes are known again."""
        old = self.gpu_pending.get(res)
        if not old:
            return
        out = []
        for a, b in old:
            if b <= start or a >= end:
                out.append((a, b))
                continue
            if a < start:
                out.append((a, start))
            if b > end:
                out.append((end, b))
        if out:
            self.gpu_pending[res] = out
        else:
            del self.gpu_pending[res]

    # -- images ----------------------------------------------------------------------
    def _push_images(self) -> None:
        """One SetShaderImages over units [0, highest bound + 1) (an unbound unit: a null
        row); nothing while no unit was ever bound."""
        units = self.images
        if not units and self._pushed.get("images") is None:
            return
        count = max(units, default=-1) + 1
        names = {0x88B8: "ReadOnly", 0x88B9: "WriteOnly", 0x88BA: "ReadWrite"}
        rows = []
        for u in range(count):  # members in memory order (the row packer checks)
            b = units.get(u)
            if b is None:
                rows.append((0, 0, u, 0, 0, 0, 0, 0))  # a null row names its unit
                continue
            tex, level, layered, layer, acc, fmt = b
            rows.append((tex.handle[0], tex.handle[1], u, fmt, layer, level, int(layered),
                         self._access[names[acc]]))  # fmt: skip
        head = {"Start": 0, "Count": count}
        tail = image_rows().rows(rows, "SetShaderImages")
        digest = self.sup.offer("SetShaderImages", head, (tail,))
        if digest is not None:
            self.em.emit("SetShaderImages", dict(head, ContentHash=digest), (tail,))
        self._pushed["images"] = count

    # -- transform feedback targets ----------------------------------------------------
    def _push_stream_output(self) -> None:
        """SetStreamOutputTargets: the bound object's targets (ranges, then per target the
        byte offset to write at: 0 at a span's first push, append after that); Generation
        moves with every push that changed them."""
        xfb = self.xfb
        if xfb is None:
            return
        top = int(_t.constant("kMGPipeMaxStreamOutputTargets"))
        live = xfb.active
        count = (max(xfb.targets, default=-1) + 1) if live else 0
        rows, offsets = [], []
        for i in range(count):
            t = xfb.targets.get(i)
            rows.append({"Res": t[0].handle, "Offset": t[1], "Size": t[2]} if t else {})
            offsets.append(_APPEND if xfb.append else 0)
        key = (xfb.lifetime, live, xfb.spans,
               tuple((r.get("Res"), r.get("Offset"), r.get("Size")) for r in rows))
        if self._pushed.get("stream_output") == key:
            return
        if count > top:
            raise ValueError(f"{count} transform feedback targets (at most {top})")
        gen = int(self._pushed.get("stream_output_gen", 0)) + 1
        tail = layouts.array(layouts.dtype("MGPBufferRange"), rows)
        import numpy as np

        self.em.emit("SetStreamOutputTargets", {"Count": count, "Generation": gen,
                                                "ContentHash": 0},
                     (tail, np.array(offsets, np.uint32)))  # fmt: skip
        self._pushed["stream_output"] = key
        self._pushed["stream_output_gen"] = gen
        if live:
            xfb.append = True  # a later push in this span must not restart the targets


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
