"""The CSO cache's LRU (issue 20): eviction takes the least recently used entry that is not
bound -- the entry whose last use is the oldest -- without scanning the cache: the victim found
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
    deletes against the oracle: the live entry, the bound one aside, whose last use (the
    validate that left it bound) is the oldest, kept here from the outside. -> problems."""
    problems: list[str] = []
    last_use: dict = {}  # handle -> the step that last left it bound
    for step, value in enumerate(seq):
        live = [e.handle for e in cache._map.values()]
        deletes_before = cache.stats.evictions
        others = [h for h in live if h != cache.bound] or live
        want = min(others, key=last_use.__getitem__) if live else None
        rs.set_sample_mask_value(value)
        cache.validate(rs)
        last_use[cache.bound] = step
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
        del self._lru[victim]
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
    (the key map and the recency order: ``values()``, ``items()``, ``keys()``, ``iter``) --
    what a scan for the least recently used entry must do, whichever container it walks."""

    def __init__(self) -> None:
        self.on = False
        self.entries = 0

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
    """Counts, not times: the entries an eviction visits, in either container (a scan of
    all 64 visits 64 each time)."""
    visits, evictions = _evict_visits(monkeypatch)
    assert visits.entries <= 2 * evictions, visits.entries


def _scan_map(self) -> None:  # type: ignore[no-untyped-def]
    """A scan of every entry for the smallest recency rank but the bound one's (O(n))."""
    rank = {e: i for i, e in enumerate(self._lru)}
    victims = [e for e in self._map.values() if e is not self._bound] or list(self._map.values())
    victim = min(victims, key=rank.__getitem__)
    del self._map[victim.key]
    del self._lru[victim]
    victim.dead = True
    self._emit("DeleteRenderState", {"Handle": victim.handle, "Kind": self._kind})
    self._alloc.free(victim.handle)
    self.stats.evictions += 1


def _scan_lru(self) -> None:  # type: ignore[no-untyped-def]
    """A scan of the recency order's whole length (the same victim, O(n))."""
    victim = [e for e in self._lru if e is not self._bound][0]
    del self._map[victim.key]
    del self._lru[victim]
    victim.dead = True
    self._emit("DeleteRenderState", {"Handle": victim.handle, "Kind": self._kind})
    self._alloc.free(victim.handle)
    self.stats.evictions += 1


@pytest.mark.parametrize("plant", [_scan_map, _scan_lru], ids=["min-rank-over-map", "full-lru"])
def test_planted_full_scan_eviction_is_caught(monkeypatch, plant) -> None:  # type: ignore[no-untyped-def]
    """The control: a min-rank scan of every entry, and a full walk of the recency
    order, each pick the right victim (the LRU oracle passes them) but visit 64 entries."""
    visits, evictions = _evict_visits(monkeypatch, plant)
    assert visits.entries > 2 * evictions
    assert visits.entries >= (_t.constant("kMGPipeCsoCacheCapacity") - 1) * evictions
