"""The CSO cache's LRU (issue 20): eviction takes the least recently used entry that is not
bound -- the entry of the smallest tick -- without scanning the cache: the victim found
from the front of a recency order that every use keeps, O(1) whatever the capacity."""

from __future__ import annotations

import random

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


def test_an_eviction_looks_at_two_entries_at_most(monkeypatch) -> None:
    """Counts, not times: the entries an eviction reads from the recency order (a scan of
    all 64 read 64 each time)."""
    reads = []

    class Counting(cso_cache.OrderedDict):  # type: ignore[misc]
        def values(self):  # type: ignore[no-untyped-def]
            def gen():
                for v in super(Counting, self).values():
                    reads.append(v)
                    yield v
            return gen()

    monkeypatch.setattr(cso_cache, "OrderedDict", Counting)
    capacity = _t.constant("kMGPipeCsoCacheCapacity")
    cache, rs = RenderStateCsoCache(Capture()), RenderState()
    for i in range(capacity * 3):  # every validate past the first 64 mints and evicts
        rs.set_sample_mask_value(i)
        cache.validate(rs)
    assert cache.stats.evictions == 2 * capacity
    assert len(reads) <= 2 * cache.stats.evictions, len(reads)
