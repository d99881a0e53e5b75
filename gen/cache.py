"""The generator's on-disk cache: libclang layouts and black-formatted tables.

Entries live in ``$MGPIPE_CACHE_DIR`` (default ``~/.cache/mgpipe``), named
``<kind>-<xxh64 key>.<ext>``; the key covers everything the entry depends on, so an entry is
never stale, only unused. The directory is safe to delete at any time (the next run
recomputes what it needs). Each kind keeps at most :data:`MAX_ENTRIES` entries: storing one
more removes the least recently used (a hit refreshes an entry's time), so the directory stays
a few megabytes however many catalogues and versions pass through it.
"""

from __future__ import annotations

import os
from pathlib import Path

#: entries kept per kind (layout JSON ~0.1 MB, formatted tables ~0.25 MB each)
MAX_ENTRIES = 16


def cache_dir() -> Path:
    env = os.environ.get("MGPIPE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "mgpipe"


#: a directory for the layout entries alone (self-test points it at a private temporary
#: directory, so its planted copies never write to the user's cache)
LAYOUT_DIR_ENV = "MGPIPE_LAYOUT_CACHE_DIR"


def entry(kind: str, key: str, ext: str) -> Path:
    private = os.environ.get(LAYOUT_DIR_ENV) if kind == "layout" else None
    return (Path(private) if private else cache_dir()) / f"{kind}-{key}.{ext}"


def read(path: Path) -> str | None:
    """An entry's text (refreshing its time), or None when absent or unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
        os.utime(path)
        return text
    except (OSError, ValueError):
        return None


def write(path: Path, text: str) -> None:
    """Store an entry atomically, then prune its kind; an unwritable cache is not an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        prune(path.parent, path.name.split("-", 1)[0])
    except OSError:
        pass


def prune(directory: Path, kind: str, keep: int = MAX_ENTRIES) -> int:
    """Remove all but the ``keep`` most recently used entries of ``kind``; returns how many."""
    entries = []
    for p in directory.glob(f"{kind}-*"):
        try:
            entries.append((p.stat().st_mtime_ns, p))
        except OSError:
            continue
    entries.sort(reverse=True)
    removed = 0
    for _, p in entries[keep:]:
        try:
            p.unlink()
            removed += 1
        except OSError:
            pass
    return removed


__all__ = ["LAYOUT_DIR_ENV", "MAX_ENTRIES", "cache_dir", "entry", "prune", "read", "write"]
