"""The server's working ``RenderStateParameters`` (seed 001 §5.3, §10.1).

One block per context. ``BindRenderState`` scatters the bound CSO's pipeline-subset
chunks into it; ``SetDynamicState`` scatters the dynamic chunks its ``ChunkMask`` names.
The chunk tables are ``RENDER_STATE["pipeline_chunks"]`` / ``["dynamic_chunks"]``.

Blob conventions (both halves, ``CreateRenderState`` and ``SetDynamicState``):

- bit *i* of ``ChunkMask`` names chunk *i* of the half (ascending offset order);
- the blob is the concatenation of the named chunks' bytes, in bit order;
- ``kMGPipeRenderStateChunkMaskAll`` (all ones: the ``ChunkMask`` member's largest value)
  names every chunk of the half, as does the mask with exactly the half's chunk bits set
  (MobileGL's ``(1 << kMGPipe*ChunkCount) - 1``);
- a set bit beyond the half's chunk count (other than all-ones) is
  ``ProtocolCorruption("<Call>.ChunkMask")``; a blob whose length is not the sum of the
  named chunks' lengths is ``ProtocolCorruption("<Call>.Blob")``.

A CSO object stores its full pipeline subset (every pipeline chunk, in chunk order); a
partial ``CreateRenderState`` mask takes the unnamed chunks from ``BaseCso``.

``version`` is a ``Uint16`` that moves (wrapping) every time a scatter writes the block:
the Espryt early-out input.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import ProtocolCorruption
from ..schema import layouts
from ..schema import tables as _t

__all__ = [
    "chunk_tables",
    "mask_all",
    "selected_chunks",
    "pipeline_subset_size",
    "build_pipeline_subset",
    "WorkingRenderState",
    "VERSION_MASK",
    "scatter_pipeline_source",
    "scatter_dynamic_source",
    "scatter_pending_source",
    "pending_subset_test",
    "scatter_namespace",
]

#: ``version`` is a Uint16.
VERSION_MASK = 0xFFFF

Chunks = tuple[tuple[int, int], ...]


@lru_cache(maxsize=None)
def chunk_tables() -> tuple[str, int, Chunks, Chunks]:
    """(struct name, size, pipeline chunks, dynamic chunks) from ``RENDER_STATE``."""
    rs = _t.tables().RENDER_STATE
    pipe = tuple((int(o), int(n)) for o, n in rs["pipeline_chunks"])
    dyn = tuple((int(o), int(n)) for o, n in rs["dynamic_chunks"])
    size = int(rs["size"])
    if int(_t.struct_info(rs["struct"])["size"]) != size:
        raise _t.TablesError("RENDER_STATE size disagrees with STRUCTS")
    return rs["struct"], size, pipe, dyn


@lru_cache(maxsize=None)
def mask_all() -> int:
    """``kMGPipeRenderStateChunkMaskAll``, checked to be all ones in both halves'
    ``ChunkMask`` (``MGPRenderStateDesc``, ``MGPDynamicState``)."""
    value = _t.constant("kMGPipeRenderStateChunkMaskAll")
    for struct in ("MGPRenderStateDesc", "MGPDynamicState"):
        if _t.field(struct, "ChunkMask").max_value != value:
            raise _t.TablesError(
                f"kMGPipeRenderStateChunkMaskAll is not {struct}.ChunkMask's all ones"
            )
    return value


def selected_chunks(mask: int, chunks: Chunks, what: str) -> Chunks:
    """The chunks ``mask`` names (see the module docstring)."""
    if mask == mask_all():
        return chunks
    if mask >> len(chunks):
        raise ProtocolCorruption(f"{what}.ChunkMask")
    return tuple(c for i, c in enumerate(chunks) if mask >> i & 1)


def pipeline_subset_size() -> int:
    return sum(n for _, n in chunk_tables()[2])


def build_pipeline_subset(
    mask: int, blob: memoryview | bytes, base: bytes | None, what: str
) -> bytes:
    """The full pipeline subset a ``CreateRenderState`` describes (chunk order)."""
    _, _, pipe, _ = chunk_tables()
    chosen = selected_chunks(mask, pipe, what)
    if sum(n for _, n in chosen) != len(blob):
        raise ProtocolCorruption(f"{what}.Blob")
    if len(chosen) != len(pipe) and base is None:
        raise ProtocolCorruption(f"{what}.BaseCso")
    out = bytearray(base if base is not None else pipeline_subset_size())
    src, dst = 0, 0
    chosen_set = set(chosen)
    raw = bytes(blob)
    for chunk in pipe:
        n = chunk[1]
        if chunk in chosen_set:
            out[dst : dst + n] = raw[src : src + n]
            src += n
        dst += n
    return bytes(out)


class WorkingRenderState:
    """One context's working block plus its ``Uint16`` version.

    ``BindRenderState`` (:meth:`scatter_pipeline`) is lazy: it keeps the bound subset and
    moves the version; the subset is scattered into the block when :attr:`data` (or
    :meth:`view`) is next read, from chunks split once per subset (bytearrays: a slice
    store from a bytearray copies once, from ``bytes`` twice). The pipeline and dynamic
    chunks are disjoint (checked), so a dynamic scatter never waits for a pending one.
    Read :attr:`data` afresh after records were applied (it brings the block up to date).
    """

    #: distinct CSO subsets whose split chunks are kept (a churn of CSOs cannot grow it)
    SPLIT_CACHE = 256

    def __init__(self) -> None:
        self.struct, self.size, self.pipeline_chunks, self.dynamic_chunks = chunk_tables()
        self._data = bytearray(self.size)
        self._mv = memoryview(self._data)  # a store through it copies from bytes once
        plan, src = [], 0
        for off, n in self.pipeline_chunks:
            plan.append((off, off + n, src, src + n))
            src += n
        self._pipe_plan = tuple(plan)  # (block offset, end, subset offset, end) per chunk
        self._subset_size = src
        self._pipe_slices = tuple(slice(o, e) for o, e, _, _ in plan)
        self._dyn_plans: dict[int, tuple[int, tuple]] = {}  # ChunkMask -> (blob size, plan)
        #: one-chunk mask -> the block's slice (a generated handler's store)
        self._dyn_slices: dict[int, slice] = {}
        self._pending: bytes | None = None  # a bound subset not yet in the block
        self._split: dict[bytes, tuple[bytearray, ...]] = {}
        spans = sorted(self.pipeline_chunks + self.dynamic_chunks)
        if any(o + n > o2 for (o, n), (o2, _) in zip(spans, spans[1:])):
            raise _t.TablesError("RENDER_STATE pipeline and dynamic chunks overlap")
        self.version = 0
        self.scatters = 0

    @property
    def data(self) -> bytearray:
        """The working block (brought up to date with the last bound subset)."""
        if self._pending is not None:
            self._flush()
        return self._data

    def _flush(self) -> None:
        subset, self._pending = self._pending, None
        chunks = self._split.get(subset)
        if chunks is None:
            if len(self._split) >= self.SPLIT_CACHE:
                self._split.clear()
            chunks = self._split[subset] = tuple(
                bytearray(subset[a:b]) for _, _, a, b in self._pipe_plan)  # fmt: skip
        data = self._data
        for s, chunk in zip(self._pipe_slices, chunks):
            data[s] = chunk

    def _bump(self) -> None:
        self.version = (self.version + 1) & VERSION_MASK
        self.scatters += 1

    def scatter_pipeline(self, subset: bytes) -> None:
        """Write a CSO's full pipeline subset (chunk order) into the block (lazily: see
        the class docstring; the version moves now)."""
        if len(subset) != self._subset_size:
            raise ValueError(f"a pipeline subset is {self._subset_size} bytes, not {len(subset)}")
        self._pending = subset if type(subset) is bytes else bytes(subset)
        self.version = (self.version + 1) & VERSION_MASK
        self.scatters += 1

    def scatter_dynamic(self, mask: int, blob: memoryview | bytes, what: str) -> None:
        """``SetDynamicState``: the chunks ``mask`` names, concatenated in ``blob``."""
        try:
            total, plan = self._dyn_plans[mask]
        except KeyError:
            chosen = selected_chunks(mask, self.dynamic_chunks, what)
            plan, src = [], 0
            for off, n in chosen:
                plan.append((off, off + n, src, src + n))
                src += n
            total, plan = self._dyn_plans[mask] = (src, tuple(plan))
            if len(plan) == 1:
                self._dyn_slices[mask] = slice(plan[0][0], plan[0][1])
        if total != len(blob):
            raise ProtocolCorruption(f"{what}.Blob")
        if not plan:
            return
        mv = self._mv
        if len(plan) == 1:
            o, e, _, _ = plan[0]
            mv[o:e] = blob
        else:
            for o, e, a, b in plan:
                mv[o:e] = blob[a:b]
        self.version = (self.version + 1) & VERSION_MASK
        self.scatters += 1

    def pipeline_subset(self) -> bytes:
        if self._pending is not None:
            return self._pending
        return b"".join(bytes(self._data[o : o + n]) for o, n in self.pipeline_chunks)

    def view(self) -> np.void:
        """A writable ``RenderStateParameters`` record over the block (zero-copy)."""
        return layouts.view(self.struct, self.data)

    def reset(self) -> None:
        self._pending = None
        self._data[:] = bytes(self.size)
        self._bump()


def scatter_namespace(rs: WorkingRenderState) -> dict[str, object]:
    """The globals the ``scatter_*_source`` lines read: the block ``_rs`` (one per context,
    for the context's life), its memoryview ``_rs_mv`` and one-chunk slices ``_rs_dyn``."""
    return {"_rs": rs, "_rs_mv": rs._mv, "_rs_dyn": rs._dyn_slices}


def scatter_pending_source(subset: str, ind: str) -> list[str]:
    """Lines keeping a full ``bytes`` subset as the pending bind and moving the version (the
    lazy :meth:`WorkingRenderState.scatter_pipeline` of a subset already checked)."""
    return [
        f"{ind}_rs._pending = {subset}",
        f"{ind}_rs.version = (_rs.version + 1) & {VERSION_MASK}",
        f"{ind}_rs.scatters += 1",
    ]


def pending_subset_test(subset: str) -> str:
    """The source test that ``subset`` may be kept as the pending bind as it is: a full
    ``bytes`` subset (anything else goes through :meth:`WorkingRenderState.scatter_pipeline`)."""
    return f"type({subset}) is bytes and len({subset}) == {pipeline_subset_size()}"


def scatter_pipeline_source(subset: str, ind: str) -> list[str]:
    """Lines doing ``_rs.scatter_pipeline(subset)`` inline (a generated handler's push): the
    lazy bind of a full ``bytes`` subset, anything else through the method."""
    return [
        f"{ind}_sub = {subset}",
        f"{ind}if {pending_subset_test('_sub')}:",
        *scatter_pending_source("_sub", ind + "    "),
        f"{ind}else:",
        f"{ind}    _rs.scatter_pipeline(_sub)",
    ]


def scatter_dynamic_source(mask: str, blob: str, what: str, ind: str) -> list[str]:
    """Lines doing ``_rs.scatter_dynamic(mask, blob, what)`` inline (a generated handler's
    push): a mask already planned as one chunk is one store of the blob through the
    block's memoryview, which refuses (``ValueError``, nothing written) a blob that is not
    the chunk's size; anything else (a first mask, several chunks, a blob of another size:
    its refusal by name) goes through the method."""
    return [
        f"{ind}try:",
        f"{ind}    _rs_mv[_rs_dyn[{mask}]] = {blob}",
        f"{ind}except (KeyError, ValueError):",
        f"{ind}    _rs.scatter_dynamic({mask}, {blob}, {what})",
        f"{ind}else:",
        f"{ind}    _rs.version = (_rs.version + 1) & {VERSION_MASK}",
        f"{ind}    _rs.scatters += 1",
    ]
