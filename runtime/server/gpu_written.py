"""``OnGpuWritten`` from the server (seed 001 §8.1, 003 §2 / §4.3; docs/REVERSE_CHANNEL.md).

The client adds every range bound at a writable storage / atomic-counter point to its
GPU-written pending set at each draw and dispatch, conservatively: it cannot tell what the
shader writes. The server can: the program it executes declares the points it writes.
After a draw or dispatch the backend calls :func:`emit_bindings_written` with the points its
program writes; every buffer the record's ``WritableMask`` names (a set bit with a buffer
bound there) gets one ``OnGpuWritten(res, ranges)`` in command order -- the bound ranges of
the points written, or no range at all where the program writes none of them (the client's
guess narrows to nothing for that buffer). Transform-feedback targets and pack-buffer
readbacks name their written ranges directly (:func:`emit_ranges`).

Ranges are ``(offset, size)`` pairs in bytes; a binding of ``kMGPipeWholeBuffer`` (or size
0) is resolved against the server's own buffer size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..schema import tables as _t
from .handle_fields import table_of

__all__ = ["emit_bindings_written", "emit_ranges", "writable_rows"]


def _bit(words: Sequence[int], point: int) -> bool:
    return 0 <= point < 32 * len(words) and bool(words[point >> 5] >> (point & 31) & 1)


def writable_rows(ctx: Any,
                  masks: dict[int, Sequence[int]]) -> list[tuple[int, int, Any, int, int]]:
    """``(class, point, handle, offset, size)`` of every buffer bound at a point whose
    ``WritableMask`` bit is set (``masks``: class -> the last record's mask words)."""
    whole = int(_t.constant("kMGPipeWholeBuffer"))
    table = ctx.tables[table_of("Buffer")]
    out = []
    for cls in (int(_t.constant("kMGPipeShaderBufferClassShaderStorage")),
                int(_t.constant("kMGPipeShaderBufferClassAtomicCounter"))):  # fmt: skip
        words = masks.get(cls, ())
        if not any(words):
            continue
        window = ctx.windows.get(f"SetShaderBuffers[{cls}]") or ()
        for point, row in enumerate(window):
            if row is None or row.Res.is_null or not _bit(words, point):
                continue
            buf = table.resolve(row.Res, f"{ctx.call}.WritableMask[{point}]").backend
            off, size = int(row.Offset), int(row.Size)
            if not size or size == whole:
                size = max(int(getattr(buf, "size", 0)) - off, 0)
            out.append((cls, point, row.Res, off, size))
    return out


def emit_bindings_written(ctx: Any, masks: dict[int, Sequence[int]],
                          written: Iterable[tuple[int, int]]) -> int:  # fmt: skip
    """One ``OnGpuWritten`` per buffer the record's ``WritableMask`` names: the ranges of the
    ``written`` ``(class, point)`` pairs, none for the points the program does not write.
    Returns the number of events pushed."""
    rows = writable_rows(ctx, masks)
    if not rows:
        return 0
    wrote = set(written)
    per: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for cls, point, h, off, size in rows:
        got = per.setdefault((int(h.slot), int(h.gen)), [])
        if (cls, point) in wrote and size > 0:
            got.append((off, size))
    for handle, ranges in per.items():  # window order: deterministic
        ctx.events.gpu_written(handle, ranges)
    return len(per)


def emit_ranges(ctx: Any, handle: Any, ranges: Iterable[tuple[int, int]]) -> None:
    """``OnGpuWritten(res, ranges)`` for a writer that knows its bytes (a capture's target,
    a pack-buffer readback)."""
    h = (int(handle.slot), int(handle.gen)) if hasattr(handle, "slot") else tuple(handle)
    ctx.events.gpu_written(h, [(int(o), int(s)) for o, s in ranges if int(s) > 0])
