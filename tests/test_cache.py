"""The layout/black cache: bounded, least recently used evicted, safe to delete."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mgpipe.gen import CATALOGUE_DIR, cache
from mgpipe.gen.build import build


def test_each_kind_keeps_at_most_max_entries_evicting_the_least_recently_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path))
    paths = []
    for i in range(cache.MAX_ENTRIES + 5):
        p = cache.entry("black", f"{i:016x}", "py")
        cache.write(p, f"entry {i}")
        os.utime(p, ns=(i * 10**9, i * 10**9))  # a clear age order
        paths.append(p)
    cache.write(cache.entry("layout", "0" * 16, "json"), "{}")  # another kind is not pruned by it
    assert cache.read(paths[5]) == "entry 5"  # a hit refreshes: entry 5 becomes the newest
    cache.write(cache.entry("black", "f" * 16, "py"), "one more")
    kept = sorted(p.name for p in tmp_path.glob("black-*"))
    assert len(kept) == cache.MAX_ENTRIES
    assert paths[5].name in kept and paths[0].name not in kept and paths[6].name not in kept
    assert len(list(tmp_path.glob("layout-*"))) == 1


def test_the_cache_is_safe_to_delete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path / "c"))
    first = build(CATALOGUE_DIR).model
    assert any((tmp_path / "c").glob("layout-*.json"))
    shutil.rmtree(tmp_path / "c")
    assert build(CATALOGUE_DIR).model == first
    shutil.rmtree(tmp_path / "c")
    (tmp_path / "c").write_text("a file where the cache directory should be")
    assert build(CATALOGUE_DIR).model == first  # an unusable cache is only slower
