"""The client render-state CSO cache (seed 001 §2.3 / §5.3, seed 004 §4.5.2).

Identity = xxh64 of the pipeline subset, gathered through ``RENDER_STATE["pipeline_chunks"]``
(the dynamic half never mints a CSO). The fetch order, run at validate time:

1. the pipeline version unchanged -> reuse the bound handle, **zero hashing** (a
   *version-check answer*);
2. changed -> the **transition cache**: the bound CSO remembers, per sequence of pipeline
   writes made since it was bound (the setters' patches, :attr:`RenderState.pipe_log`),
   which CSO that sequence led to. Applying the same writes to the same bytes gives the
   same bytes, so a hit binds with no gather and no hash (toggling between known states);
3. otherwise hash the subset -> probe: a hit is confirmed by comparing the 396 subset
   bytes (a hash collision can never bind the wrong state) and sends ``BindRenderState``
   (12 B payload); a miss mints a ``RenderStateCso`` handle and sends
   ``CreateRenderState`` (blob = every pipeline chunk in order, ``ChunkMask`` =
   all ones: every bit of the Uint32), then bind;
4. the version moved -> ``SetDynamicState`` with only the dynamic chunks whose bytes
   changed since the last push (``ChunkMask`` bit i = dynamic chunk i; blob = those
   chunks' bytes in bit order). Only chunks a setter dirtied are compared.

The versions compared are the render state's widened counters (``version_wide``,
``pipeline_version_wide``): the wire's ``Uint16`` counters wrap, and 65,536 setter calls
between two draws must cause an extra push, never a missed one.

Capacity is ``kMGPipeCsoCacheCapacity``; evicting the least recently used entry sends
``DeleteRenderState`` and then frees its slot. Both records of a mint and an eviction leave
through the emitter's compiled door (:meth:`~.emitter.Emitter.fast`: one ``pack_into`` per
record), as binds and dynamic pushes do. ``whole_block=True`` is the negative
control of seed 001 Appendix A bit 63: identity over all 1168 bytes, checked whenever
``m_version`` moves, so every distinct viewport mints a CSO.

:class:`CsoStats` counts hashes, transition hits, byte compares, content hits and
version-check answers (``reuses``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import xxhash

from ..schema import tables as _t
from ..schema.kinds import handle_kinds
from ..wire.handle import NULL, Handle
from .render_state import RenderState
from .slots import SlotAllocator

__all__ = ["CsoEmitter", "CsoStats", "RenderStateCsoCache"]

#: transitions a CSO remembers before it forgets them all (bounded memory)
_TRANSITIONS_PER_CSO = 256


class CsoEmitter(Protocol):
    """What the cache sends through (:class:`~.emitter.Emitter` is one)."""

    def emit(self, call: str, payload: dict[str, Any] | None = None, tails: tuple = (),
             blob: bytes | None = None) -> int: ...  # fmt: skip

    def fast(self, call: str, names: Any, tail_names: Any = None,
             tail_count: int = 1) -> Callable[..., int]: ...  # fmt: skip

    def stage_blob(self, data: bytes) -> tuple[int, int, int]: ...

    def room(self, nbytes: int) -> None: ...

    stage: Any  # the StageSegment it stages into


@dataclass
class CsoStats:
    minted: int = 0
    hits: int = 0  # content-addressed hits (hash, then byte compare)
    hashes: int = 0
    binds: int = 0
    dynamic_pushes: int = 0
    evictions: int = 0
    reuses: int = 0  # version-check answers: validations answered by rule 1 (no hash)
    transition_hits: int = 0  # answered by the transition cache (no gather, no hash)
    byte_compares: int = 0  # subset compares confirming a content-addressed hit
    collisions: int = 0  # hash equal, bytes not: minted as a new CSO


class _Cso:
    """One cached CSO: its handle, subset bytes and outgoing transitions (its recency is
    its place in the cache's ``_lru``; it hashes by identity, the ``_lru`` key)."""

    __slots__ = ("handle", "key", "subset", "transitions", "dead")

    def __init__(self, handle: Handle, key: Any, subset: bytes) -> None:
        self.handle = handle
        self.key = key
        self.subset = subset
        self.transitions: dict[tuple, _Cso] = {}
        self.dead = False


def gather_chunks(block: bytearray, dirty: int, prev: list, chunks: tuple) -> tuple[int, bytes]:
    """(mask, blob) of the ``dirty`` chunks (``(offset, end, bit)`` each) of ``block`` whose
    bytes differ from ``prev`` (their bytes last pushed, by index: updated here), in chunk
    order; (0, b"") when none moved."""
    mask, parts = 0, []
    for i, (o, e, bit) in enumerate(chunks):
        if dirty & bit:
            chunk = block[o:e]
            if chunk != prev[i]:
                prev[i] = chunk
                mask |= bit
                parts.append(chunk)
    return mask, b"".join(parts)


class RenderStateCsoCache:
    #: slots: the draws run :meth:`validate`'s body inline for this class (api.py), so a
    #: ``validate`` set on one instance would never be called -- it is refused instead
    __slots__ = (
        "_after_bind", "_alloc", "_bind_fast", "_bound", "_create_fast", "_delete_fast",
        "_dyn_all", "_dyn_chunks", "_dyn_fast", "_dyn_one", "_emit", "_kind", "_last_pv",
        "_last_v", "_lru", "_map", "_mask_all", "_pipe_chunks", "_pushed_dyn", "_room",
        "_rule2", "_stage", "_stage_blob", "_transitions", "_whole_block", "bound",
        "capacity", "quiet_version", "stats",
    )  # fmt: skip

    def __init__(
        self,
        emitter: CsoEmitter,
        *,
        whole_block: bool = False,
        capacity: int | None = None,
        allocator: SlotAllocator | None = None,
        transition_cache: bool = True,
    ) -> None:
        rs = _t.tables().RENDER_STATE
        self._transitions = self._whole_block = False
        self.transition_cache = transition_cache  # both switches set _rule2
        self._emit = emitter.emit
        self._stage_blob = emitter.stage_blob
        #: the dynamic push stages in its own frame (``stage_blob``'s room rule, inline)
        self._stage, self._room = emitter.stage, emitter.room
        self._bind_fast = emitter.fast(
            "BindRenderState", ("Cso.Slot", "Cso.Gen", "Version", "PipelineVersion"))
        self._dyn_fast = emitter.fast(
            "SetDynamicState", ("ChunkMask", "Version", "Blob.Offset", "Blob.Size", "Blob.Seg"))
        #: a mint and an eviction on the compiled door too (one C call per record): with more
        #: distinct pipeline states than the capacity every draw makes both
        self._create_fast = emitter.fast(
            "CreateRenderState", ("Cso.Slot", "Cso.Gen", "BaseCso.Slot", "BaseCso.Gen",
                                  "ChunkMask", "Blob.Offset", "Blob.Size", "Blob.Seg"))  # fmt: skip
        self._delete_fast = emitter.fast("DeleteRenderState", ("Handle.Slot", "Handle.Gen", "Kind"))
        self.whole_block = whole_block
        self.capacity = capacity if capacity is not None else _t.constant("kMGPipeCsoCacheCapacity")
        self._alloc = allocator or SlotAllocator("RenderStateCso")
        self._kind = handle_kinds()["RenderStateCso"]  # MGPHandleOnly.Kind of a delete
        self._pipe_chunks: tuple[tuple[int, int], ...] = tuple(rs["pipeline_chunks"])
        self._dyn_chunks: tuple[tuple[int, int, int], ...] = tuple(
            (o, o + n, 1 << i) for i, (o, n) in enumerate(rs["dynamic_chunks"]))  # fmt: skip
        self._dyn_all = (1 << len(self._dyn_chunks)) - 1
        #: a one-chunk dirty mask -> (index, offset, end): :meth:`validate` looks it up
        self._dyn_one: dict[int, tuple[int, int, int]] = {
            bit: (i, o, e) for i, (o, e, bit) in enumerate(self._dyn_chunks)}  # fmt: skip
        #: every chunk: MobileGL's ABI has no ``...ChunkMaskAll`` constant, "all ones" is
        #: the largest value of the Uint32 ``ChunkMask``
        self._mask_all = _t.field("MGPRenderStateDesc", "ChunkMask").max_value
        self._map: dict[Any, _Cso] = {}  # key -> entry, in mint order (teardown's order)
        #: the same entries (by identity), least recently used first: a use moves its entry to the
        #: end, so eviction takes the first one that is not bound (O(1), never a scan)
        self._lru: OrderedDict[_Cso, None] = OrderedDict()
        self._bound: _Cso | None = None
        self.bound: Handle = NULL
        self._last_pv: int | None = None
        self._last_v: int | None = None
        #: the ``version_wide`` at which :meth:`validate` would only count a reuse (None:
        #: it must run); a draw compares it and skips the call
        self.quiet_version: int | None = None
        self._pushed_dyn: list[bytes] | None = None  # bytes of each dynamic chunk last pushed
        self._after_bind = False  # a bind went since the last dynamic push
        self.stats = CsoStats()

    # -- the subsets --------------------------------------------------------
    def pipeline_subset(self, block: bytes | bytearray | memoryview) -> bytes:
        return b"".join([block[o : o + n] for o, n in self._pipe_chunks])

    @property
    def live(self) -> int:
        return len(self._map)

    # -- validate -----------------------------------------------------------
    @property
    def whole_block(self) -> bool:
        """The negative control: a CSO per distinct whole block (no rule 2, no subset)."""
        return self._whole_block

    @whole_block.setter
    def whole_block(self, on: bool) -> None:
        self._whole_block = bool(on)
        self._rule2 = self._transitions and not self._whole_block

    @property
    def transition_cache(self) -> bool:
        """False: rule 2 is skipped (every pipeline change gathers and hashes; a measurement
        switch, ``mgpipe bench`` strategy (e))."""
        return self._transitions

    @transition_cache.setter
    def transition_cache(self, on: bool) -> None:
        self._transitions = bool(on)
        self._rule2 = self._transitions and not self._whole_block

    def validate(self, rs: RenderState) -> None:
        """Push what moved since the last validate (seed 001 §5.3 order).

        With a CSO bound and ``rs.version_wide`` where the last validate left it, nothing
        moved (every setter that moves a byte bumps ``version_wide``, a pipeline byte
        ``pipeline_version_wide`` too): the answer is rule 1, ``stats.reuses += 1`` and
        nothing else -- the draws make that test themselves (:attr:`quiet_version`) and skip
        the call. A bound CSO with the transition cache on (``_rule2``, one test for both
        switches) answers here; anything else in :meth:`_answer_pipeline`."""
        bound = self._bound
        if bound is not None and self._rule2:
            if rs.pipeline_version_wide != self._last_pv:
                log = rs.pipe_log  # the pipeline writes since the last look (take them)
                rs.pipe_log = ()
                rs._log_n = 0
                try:  # no log (past its limit): None, never a key
                    target = bound.transitions[log]
                except KeyError:
                    target = None
                if target is None or target.dead:
                    self._by_content(rs, log)
                else:
                    stats = self.stats
                    stats.transition_hits += 1
                    self._lru.move_to_end(target)
                    if target is not bound:
                        self.bound = h = target.handle
                        m = rs._mask  # the counters in the wire's width
                        self._bind_fast(h[0], h[1], rs.version_wide & m,
                                        rs.pipeline_version_wide & m)  # fmt: skip
                        self._bound = target
                        stats.binds += 1
            else:
                self.stats.reuses += 1
        else:
            self._answer_pipeline(rs, bound)
        v = rs.version_wide
        dirty = rs.dyn_dirty
        prev = self._pushed_dyn
        if (dirty and v != self._last_v) or prev is None:
            # SetDynamicState of the dirty chunks whose bytes moved since their last push: a
            # one-chunk mask (a viewport, a blend colour ...) is looked up, its chunk's
            # bytes the blob; any other gathered (:func:`gather_chunks`)
            rs.dyn_dirty = 0
            try:
                if prev is None:  # the first push: every chunk
                    raise KeyError(dirty)
                i, o, e = self._dyn_one[dirty]
            except KeyError:  # several chunks (or the first push), gathered
                if prev is None:
                    dirty = self._dyn_all
                    prev = self._pushed_dyn = [b""] * len(self._dyn_chunks)
                dirty, data = gather_chunks(rs._buf, dirty, prev, self._dyn_chunks)
            else:
                data = rs._buf[o:e]
                if data == prev[i]:
                    dirty = 0
                else:
                    prev[i] = data
            if dirty:
                stage = self._stage  # stage_blob's room rule, inline
                n = len(data)
                if stage.limit - stage.used < n + stage.granule:
                    self._room(n)
                off, size, seg = stage.stage(data)
                self._dyn_fast(dirty, v & rs._mask, off, size, seg)
                self.stats.dynamic_pushes += 1
                self._after_bind = False
        if self._after_bind:  # MobileGL follows a new CSO's bind with its dynamic state, empty too
            self._after_bind = False
            self._push_empty_dynamic(rs)
        self._last_pv = rs.pipeline_version_wide
        self._last_v = self.quiet_version = v  # every answer leaves a CSO bound

    def _answer_pipeline(self, rs: RenderState, bound: _Cso | None) -> None:
        """The pipeline's answer with no CSO bound, the transition cache off or the whole
        block the key: rule 1, else rule 3 (the log is still taken, and kept for the bound
        CSO's transitions only with the cache on)."""
        if self._whole_block:
            if bound is None or rs.version_wide != self._last_v:
                self._by_content(rs, None)
            else:
                self.stats.reuses += 1
        elif bound is None or rs.pipeline_version_wide != self._last_pv:
            log = rs.pipe_log
            rs.pipe_log = ()
            rs._log_n = 0
            self._by_content(rs, log if self._transitions else None)
        else:
            self.stats.reuses += 1

    def _by_content(self, rs: RenderState, log: tuple | None) -> None:
        """Rule 3: gather, hash, byte-confirm (or mint), bind; remember the transition."""
        block = rs._buf
        data = bytes(block) if self._whole_block else self.pipeline_subset(block)
        self.stats.hashes += 1
        key: Any = xxhash.xxh64_intdigest(data)
        entry = self._map.get(key)
        if entry is not None:
            self.stats.byte_compares += 1
            if entry.subset != data:  # a collision: never bind the wrong state
                self.stats.collisions += 1
                key = (key, data)
                entry = self._map.get(key)
        if entry is None:
            entry = self._mint(key, data)
        else:
            self.stats.hits += 1
            self._lru.move_to_end(entry)
        src = self._bound
        if src is not None and log is not None and not self._whole_block:
            if len(src.transitions) >= _TRANSITIONS_PER_CSO:
                src.transitions.clear()
            src.transitions[log] = entry
        if entry is not src:  # same CSO as bound: the working block already holds it
            self._bind(entry, rs)

    def _mint(self, key: Any, data: bytes) -> _Cso:
        if len(self._map) >= self.capacity:
            self._evict()
        handle = self._alloc.alloc()
        subset = data if not self._whole_block else self.pipeline_subset(data)
        off, size, seg = self._stage_blob(subset)  # no base CSO: every chunk in the blob
        self._create_fast(handle[0], handle[1], NULL[0], NULL[1], self._mask_all, off, size, seg)
        entry = self._map[key] = _Cso(handle, key, data)
        self._lru[entry] = None
        self.stats.minted += 1
        self._after_bind = True  # the new CSO's bind is followed by its dynamic state
        return entry

    def _evict(self) -> None:
        """The least recently used entry other than the bound one (the bound one at
        capacity 1)."""
        it = iter(self._lru)
        victim = next(it)
        if victim is self._bound:
            victim = next(it, victim)
        del self._map[victim.key]
        del self._lru[victim]
        victim.dead = True
        h = victim.handle
        self._delete_fast(h[0], h[1], self._kind)
        self._alloc.free(victim.handle)
        if victim is self._bound:
            self._bound, self.bound = None, NULL
        self.stats.evictions += 1

    def _bind(self, entry: _Cso, rs: RenderState) -> None:
        h = entry.handle
        m = rs._mask
        self._bind_fast(h[0], h[1], rs.version_wide & m, rs.pipeline_version_wide & m)
        self._bound, self.bound = entry, h
        self.stats.binds += 1

    def _push_empty_dynamic(self, rs: RenderState) -> None:
        """``SetDynamicState`` with ``ChunkMask`` 0 and an empty blob: after the bind of a newly
        minted CSO whose dynamic chunks all stayed (MobileGL's frontend sends it)."""
        off, size, seg = self._stage_blob(b"")
        self._dyn_fast(0, rs.version_wide & rs._mask, off, size, seg)
        self.stats.dynamic_pushes += 1

    # -- teardown -----------------------------------------------------------
    def release_all(self) -> None:
        """Delete every cached CSO (context teardown)."""
        for entry in list(self._map.values()):
            entry.dead = True
            h = entry.handle
            self._delete_fast(h[0], h[1], self._kind)
            self._alloc.free(entry.handle)
        self._map.clear()
        self._lru.clear()
        self._bound, self.bound = None, NULL
        self._last_pv = self._last_v = self.quiet_version = None
