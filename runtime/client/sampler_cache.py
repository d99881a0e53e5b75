"""The content-addressed sampler-state cache (D-F2): equal ``SamplerParameters`` bytes share
one ``SamplerCso``.

256 entries (:data:`CAPACITY`), refcounted: a sampler object the application holds and a
texture whose built-in sampler (its ``glTexParameter`` state, ``SetTextureParams.BuiltinSampler``)
is the entry each hold a reference. An entry with references is never evicted; an entry a
built-in sampler points at is never evicted while it does. When every entry is referenced
and a new parameter set arrives, the cache mints anyway (over capacity) and counts it in
``stats.over_capacity_mints`` (MobileGL's ``OverCapacityMints``). Eviction (least recently
used unreferenced entry) sends ``DeleteSamplerState`` + ``ObjectDeath``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..wire.handle import Handle

__all__ = ["CAPACITY", "SamplerCache", "SamplerCacheStats"]

CAPACITY = 256


@dataclass
class SamplerCacheStats:
    minted: int = 0
    hits: int = 0
    evictions: int = 0
    over_capacity_mints: int = 0


@dataclass
class _Entry:
    handle: Handle
    key: bytes
    refs: int = 0
    builtin_refs: int = 0
    tick: int = 0


class SamplerCache:
    """``acquire(bytes) -> Handle`` (mints on a miss), ``release(handle)``."""

    def __init__(self, mint: Callable[[bytes], Handle], kill: Callable[[Handle], None],
                 capacity: int = CAPACITY) -> None:  # fmt: skip
        self._mint, self._kill = mint, kill
        self.capacity = capacity
        self._by_key: dict[bytes, _Entry] = {}
        self._by_handle: dict[Handle, _Entry] = {}
        self._tick = 0
        self.stats = SamplerCacheStats()

    def __len__(self) -> int:
        return len(self._by_key)

    def acquire(self, params: bytes, *, builtin: bool = False) -> Handle:
        self._tick += 1
        e = self._by_key.get(params)
        if e is None:
            if len(self._by_key) >= self.capacity and not self._evict():
                self.stats.over_capacity_mints += 1
            e = _Entry(self._mint(params), params)
            self._by_key[params] = self._by_handle[e.handle] = e
            self.stats.minted += 1
        else:
            self.stats.hits += 1
        e.tick = self._tick
        if builtin:
            e.builtin_refs += 1
        else:
            e.refs += 1
        return e.handle

    def release(self, handle: Handle, *, builtin: bool = False) -> None:
        e = self._by_handle.get(handle)
        if e is None:
            return
        if builtin:
            e.builtin_refs = max(e.builtin_refs - 1, 0)
        else:
            e.refs = max(e.refs - 1, 0)

    def refs(self, handle: Handle) -> tuple[int, int]:
        e = self._by_handle[handle]
        return e.refs, e.builtin_refs

    def __contains__(self, handle: object) -> bool:
        return handle in self._by_handle

    def _evict(self) -> bool:
        free = [e for e in self._by_key.values() if not e.refs and not e.builtin_refs]
        if not free:
            return False
        victim = min(free, key=lambda e: e.tick)
        self.drop(victim.handle)
        self.stats.evictions += 1
        return True

    def drop(self, handle: Handle) -> None:
        """Forget the entry and send its death."""
        e = self._by_handle.pop(handle)
        del self._by_key[e.key]
        self._kill(handle)
