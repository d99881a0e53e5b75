"""The CSO cache's LRU (issue 20): eviction takes the least recently used entry that is not
bound -- the entry of the smallest tick -- without scanning the cache: the victim found
from the front of a recency order that every use keeps, O(1) whatever the capacity."""

from __future__ import annotations

import random

import pytest

from mgpipe.runtime.client import cso_cache
from mgpipe.runtime.client.cso_cache import RenderStateCsoCache
from mgpipe.runtime.client.render_state import RenderState
from mgpipe.runtime.schema import tables as _t

from test_cso_cache import Capture


def _drive(cache: RenderStateCsoCache, rs: RenderState, seq: list[int]) -> list[str]:
    """Validate each state of ``seq``; before every eviction, check the victim the cache
    deletes against the oracle (the smallest tick but the bound entry's). -> problems."""
    problems: list[str] = []
    for step, value in enumerate(seq):
        entries = list(cache._map.values())
        deletes_before = cache.stats.evictions
        others = [e for e in entries if e is not cache._bound] or entries
        want = min(others, key=lambda e: e.tick).handle if entries else None
        rs.set_sample_mask_value(value)
        cache.validate(rs)
        if cache.stats.evictions != deletes_before:
            got = next(c[1]["Handle"] for c in reversed(cache._emit.__self__.calls)
                       if c[0] == "DeleteRenderState")  # fmt: skip
            if got != want:
                problems.append(f"step {step}: evicted {got}, the least recently used is {want}")
    return problems


def test_eviction_takes_the_least_recently_used_under_a_random_mix() -> None:
    capacity = _t.constant("kMGPipeCsoCacheCapacity")
    rng = random.Random(20)
    seq = [rng.randrange(capacity * 2) for _ in range(2_000)]  # recurring values: hits and misses
    cache = RenderStateCsoCache(Capture())
    assert _drive(cache, RenderState(), seq) == []
    assert cache.stats.evictions > 500 and cache.stats.hits > 500  # both paths exercised
    assert len(cache._lru) == cache.live == capacity


def test_planted_eviction_of_the_oldest_minted_is_caught(monkeypatch) -> None:
    """The control: a FIFO (the first minted, whatever was used since) fails the oracle."""

    def fifo(self) -> None:
        victim = next(e for e in self._map.values() if e is not self._bound)
        del self._map[victim.key]
        del self._lru[id(victim)]
        victim.dead = True
        self._emit("DeleteRenderState", {"Handle": victim.handle, "Kind": self._kind})
        self._alloc.free(victim.handle)
        self.stats.evictions += 1

    monkeypatch.setattr(RenderStateCsoCache, "_evict", fifo)
    capacity = _t.constant("kMGPipeCsoCacheCapacity")
    rng = random.Random(20)
    seq = [rng.randrange(capacity * 2) for _ in range(2_000)]
    assert _drive(RenderStateCsoCache(Capture()), RenderState(), seq) != []


class _Visits:
    """What an eviction touches: entries yielded by any iteration of the cache's containers
    (the key map and the recency order: ``values()``, ``items()``, ``keys()``, ``iter``) and
    reads of an entry's ``tick`` -- what a scan for the least recently used entry must do,
    whichever container it walks and however it compares."""

    def __init__(self) -> None:
        self.on = False
        self.entries = 0
        self.ticks = 0

    def counting(self, base: type) -> type:
        visits = self

        def counted(it):  # type: ignore[no-untyped-def]
            for v in it:
                if visits.on:
                    visits.entries += 1
                yield v

        class Counting(base):  # type: ignore[misc,valid-type]
            def values(self):  # type: ignore[no-untyped-def]
                return counted(super().values())

            def items(self):  # type: ignore[no-untyped-def]
                return counted(super().items())

            def keys(self):  # type: ignore[no-untyped-def]
                return counted(super().keys())

            def __iter__(self):  # type: ignore[no-untyped-def]
                return counted(super().__iter__())

        return Counting


def _evict_visits(monkeypatch, plant=None) -> tuple[_Visits, int]:  # type: ignore[no-untyped-def]
    """Visits per eviction over 128 validates that each mint and evict (capacity 64)."""
    visits = _Visits()

    class CountingCso(cso_cache._Cso):
        __slots__ = ()

        def __getattribute__(self, name: str):  # type: ignore[no-untyped-def]
            if name == "tick" and visits.on:
                visits.ticks += 1
            return object.__getattribute__(self, name)

    monkeypatch.setattr(cso_cache, "_Cso", CountingCso)
    if plant is not None:
        monkeypatch.setattr(RenderStateCsoCache, "_evict", plant)
    evict = RenderStateCsoCache._evict

    def watched(self) -> None:  # type: ignore[no-untyped-def]
        visits.on = True
        try:
            evict(self)
        finally:
            visits.on = False

    monkeypatch.setattr(RenderStateCsoCache, "_evict", watched)
    capacity = _t.constant("kMGPipeCsoCacheCapacity")
    cache, rs = RenderStateCsoCache(Capture()), RenderState()
    cache._map = visits.counting(dict)(cache._map)
    cache._lru = visits.counting(cso_cache.OrderedDict)(cache._lru)
    for i in range(capacity * 3):  # every validate past the first 64 mints and evicts
        rs.set_sample_mask_value(i)
        cache.validate(rs)
    assert cache.stats.evictions == 2 * capacity
    return visits, cache.stats.evictions


def test_an_eviction_looks_at_two_entries_at_most(monkeypatch) -> None:
    """Counts, not times: the entries an eviction visits, in either container, and the ticks
    it reads (a scan of all 64 visits 64 each time)."""
    visits, evictions = _evict_visits(monkeypatch)
    assert visits.entries <= 2 * evictions, visits.entries
    assert visits.ticks == 0


def _scan_map(self) -> None:  # type: ignore[no-untyped-def]
    """The old eviction: the smallest tick among all entries but the bound one (O(n))."""
    victims = [e for e in self._map.values() if e is not self._bound] or list(self._map.values())
    victim = min(victims, key=lambda e: e.tick)
    del self._map[victim.key]
    del self._lru[id(victim)]
    victim.dead = True
    self._emit("DeleteRenderState", {"Handle": victim.handle, "Kind": self._kind})
    self._alloc.free(victim.handle)
    self.stats.evictions += 1


def _scan_lru(self) -> None:  # type: ignore[no-untyped-def]
    """A scan of the recency order's whole length (the same victim, O(n))."""
    victim = [e for e in self._lru.values() if e is not self._bound][0]
    del self._map[victim.key]
    del self._lru[id(victim)]
    victim.dead = True
    self._emit("DeleteRenderState", {"Handle": victim.handle, "Kind": self._kind})
    self._alloc.free(victim.handle)
    self.stats.evictions += 1


@pytest.mark.parametrize("plant", [_scan_map, _scan_lru], ids=["min-tick-over-map", "full-lru"])
def test_planted_full_scan_eviction_is_caught(monkeypatch, plant) -> None:  # type: ignore[no-untyped-def]
    """The control: the old min-tick scan of every entry, and a full walk of the recency
    order, each pick the right victim (the LRU oracle passes them) but visit 64 entries."""
    visits, evictions = _evict_visits(monkeypatch, plant)
    assert visits.entries > 2 * evictions
    assert visits.entries >= (_t.constant("kMGPipeCsoCacheCapacity") - 1) * evictions
