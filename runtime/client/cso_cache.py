"""The client render-state CSO cache (seed 001 §2.3 / §5.3, seed 004 §4.5.2).

Identity = xxh64 of the pipeline subset, gathered through ``RENDER_STATE["pipeline_chunks"]``
(the dynamic half never mints a CSO). The fetch order, run at validate time:

1. ``m_pipelineStateVersion`` unchanged -> reuse the bound handle, **zero hashing**;
2. changed -> hash the subset -> probe: hit sends ``BindRenderState`` (12 B payload);
   miss mints a ``RenderStateCso`` handle and sends ``CreateRenderState`` (blob = every
   pipeline chunk in order, ``ChunkMask`` = ``kMGPipeRenderStateChunkMaskAll``), then bind;
3. ``m_version`` moved -> ``SetDynamicState`` with only the dynamic chunks whose bytes
   changed since the last push (``ChunkMask`` bit i = dynamic chunk i; blob = those
   chunks' bytes in bit order).

Capacity is ``kMGPipeCsoCacheCapacity``; evicting the least recently used entry sends
``DeleteRenderState`` and then frees its slot. ``whole_block=True`` is the negative
control of seed 001 Appendix A bit 63: identity over all 1168 bytes, checked whenever
``m_version`` moves, so every distinct viewport mints a CSO.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import xxhash

from ..schema import tables as _t
from ..wire.handle import NULL, Handle
from .render_state import RenderState
from .slots import SlotAllocator

__all__ = ["Emit", "CsoStats", "RenderStateCsoCache"]

#: ``emit(call, payload, tails=(), blob=None)`` — encodes and submits one record.
Emit = Callable[..., Any]


@dataclass
class CsoStats:
    minted: int = 0
    hits: int = 0
    hashes: int = 0
    binds: int = 0
    dynamic_pushes: int = 0
    evictions: int = 0
    reuses: int = 0  # validations answered by rule 1 (no hash)


class RenderStateCsoCache:
    def __init__(
        self,
        emit: Emit,
        *,
        whole_block: bool = False,
        capacity: int | None = None,
        allocator: SlotAllocator | None = None,
    ) -> None:
        rs = _t.tables().RENDER_STATE
        self._emit = emit
        self.whole_block = whole_block
        self.capacity = capacity if capacity is not None else _t.constant("kMGPipeCsoCacheCapacity")
        self._alloc = allocator or SlotAllocator("RenderStateCso")
        self._pipe_chunks: tuple[tuple[int, int], ...] = tuple(rs["pipeline_chunks"])
        self._dyn_chunks: tuple[tuple[int, int], ...] = tuple(rs["dynamic_chunks"])
        self._mask_all = _t.constant("kMGPipeRenderStateChunkMaskAll")
        self._map: OrderedDict[int, Handle] = OrderedDict()
        self.bound: Handle = NULL
        self._last_pv: int | None = None
        self._last_v: int | None = None
        self._pushed_dyn: list[bytes] | None = None  # bytes of each dynamic chunk last pushed
        self.stats = CsoStats()

    # -- the subsets --------------------------------------------------------
    def pipeline_subset(self, block: bytes | memoryview) -> bytes:
        return b"".join(bytes(block[o : o + n]) for o, n in self._pipe_chunks)

    def _identity(self, block: bytes | memoryview) -> int:
        self.stats.hashes += 1
        data = bytes(block) if self.whole_block else self.pipeline_subset(block)
        return xxhash.xxh64_intdigest(data)

    @property
    def live(self) -> int:
        return len(self._map)

    # -- validate -----------------------------------------------------------
    def validate(self, rs: RenderState) -> None:
        """Push what moved since the last validate (seed 001 §5.3 order)."""
        block = rs.block
        trigger = rs.version if self.whole_block else rs.pipeline_version
        last = self._last_v if self.whole_block else self._last_pv
        if self.bound.is_null or trigger != last:
            key = self._identity(block)
            handle = self._map.get(key)
            if handle is None:
                handle = self._mint(key, block)
            else:
                self.stats.hits += 1
                self._map.move_to_end(key)
            if handle != self.bound:  # same CSO as bound: the working block already holds it
                self._bind(handle, rs)
        else:
            self.stats.reuses += 1
        if rs.version != self._last_v or self._pushed_dyn is None:
            self._push_dynamic(block, rs.version)
        self._last_pv, self._last_v = rs.pipeline_version, rs.version

    def _mint(self, key: int, block: memoryview) -> Handle:
        if len(self._map) >= self.capacity:
            self._evict()
        handle = self._alloc.alloc()
        self._emit(
            "CreateRenderState",
            {"Cso": handle, "BaseCso": NULL, "ChunkMask": self._mask_all},
            blob=self.pipeline_subset(block),
        )
        self._map[key] = handle
        self.stats.minted += 1
        return handle

    def _evict(self) -> None:
        for key, victim in self._map.items():
            if victim != self.bound:
                break
        else:  # pragma: no cover - capacity 1 with the bound entry: evict it anyway
            key, victim = next(iter(self._map.items()))
        del self._map[key]
        self._emit("DeleteRenderState", {"Res": victim})
        self._alloc.free(victim)
        if victim == self.bound:
            self.bound = NULL
        self.stats.evictions += 1

    def _bind(self, handle: Handle, rs: RenderState) -> None:
        self._emit(
            "BindRenderState",
            {"Cso": handle, "Version": rs.version, "PipelineVersion": rs.pipeline_version},
        )
        self.bound = handle
        self.stats.binds += 1

    def _push_dynamic(self, block: memoryview, version: int) -> None:
        now = [bytes(block[o : o + n]) for o, n in self._dyn_chunks]
        prev = self._pushed_dyn
        mask, parts = 0, []
        for i, chunk in enumerate(now):
            if prev is None or prev[i] != chunk:
                mask |= 1 << i
                parts.append(chunk)
        self._pushed_dyn = now
        if not mask:
            return
        self._emit("SetDynamicState", {"ChunkMask": mask, "Version": version}, blob=b"".join(parts))
        self.stats.dynamic_pushes += 1

    # -- teardown -----------------------------------------------------------
    def release_all(self) -> None:
        """Delete every cached CSO (context teardown)."""
        for handle in list(self._map.values()):
            self._emit("DeleteRenderState", {"Res": handle})
            self._alloc.free(handle)
        self._map.clear()
        self.bound = NULL
        self._last_pv = self._last_v = None
