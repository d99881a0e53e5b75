"""A warm ``mgpipe gen --check``: the answer of the last clean check, when nothing it read
has changed since.

A check that finds every output up to date (and a ``gen`` that leaves the catalogue as it
found it) records, in the generator's cache (:mod:`mgpipe.gen.cache`, kind ``gencheck``),
the xxh64 of each output it planned under a key: the xxh64 of everything the answer depends
on -- every file of the catalogue directory and of each include directory (content, not
times), every file of the generator itself (``mgpipe.gen``, ``mgpipe.templates``, the
command modules), the installed distributions (their ``*.dist-info`` names: a new black,
libclang or Jinja2 is a new key), ``MGPIPE_CLANG_ARGS``, the interpreter, the working
directory and the command line's own choices. The next check computes the key from the
inputs alone -- no lark, pydantic, libclang or Jinja2 -- and, when an entry exists and
every planned output still hashes as recorded, answers "up to date" without building the
model. Any difference (an input edited, an output touched, a file missing, no entry)
builds in full, so a stale output is always reported by the full check with its diff and
every gate runs on whatever changed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import xxhash

from . import cache

KIND = "gencheck"
FORMAT = "mgpipe-gen-check/1"
_SKIP_DIRS = frozenset({"__pycache__", ".git"})


def _tree(h: xxhash.xxh64, tag: str, root: Path) -> None:
    """Every regular file under ``root`` (sorted relative names, then contents)."""
    h.update(f"{tag}\0{root}\0".encode())
    if root.is_file():
        h.update(root.read_bytes())
        return
    files: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        rel = os.path.relpath(dirpath, root)
        for name in filenames:
            if not name.endswith((".pyc", ".tmp")):
                files.append((os.path.normpath(os.path.join(rel, name)), os.path.join(dirpath, name)))
    for rel, full in sorted(files):
        try:
            data = Path(full).read_bytes()
        except OSError:
            data = b"\xffunreadable"
        h.update(rel.encode() + b"\0" + len(data).to_bytes(8, "little") + data)


def _generator_dirs() -> list[Path]:
    from . import TEMPLATES_DIR

    here = Path(__file__).resolve().parent
    mgpipe_pkg = Path(sys.modules["mgpipe"].__file__ or here).resolve().parent
    return [here, TEMPLATES_DIR, mgpipe_pkg]


def _distributions(h: xxhash.xxh64) -> None:
    for entry in sys.path:
        try:
            names = sorted(n for n in os.listdir(entry or ".") if n.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
        h.update(f"{entry}\0{chr(10).join(names)}\0".encode())


def key(catalogue: Path, out: Path, include_dirs: tuple[Path, ...] | None, mobilegl: bool,
        disabled: frozenset[str], init_lock: bool) -> str:  # fmt: skip
    """The fingerprint of every input of a check of ``catalogue`` against ``out``."""
    h = xxhash.xxh64()
    choices = (FORMAT, os.getcwd(), str(catalogue), str(out), sorted(disabled), init_lock,
               [str(d) for d in include_dirs] if include_dirs is not None else None,
               os.environ.get("MGPIPE_CLANG_ARGS", ""), sys.version, sys.platform,
               sys.executable)  # fmt: skip
    h.update(repr(choices).encode())
    _tree(h, "catalogue", catalogue)
    dirs = include_dirs if include_dirs is not None else (
        (catalogue.resolve().parent,) if mobilegl else ())
    for i, d in enumerate(dirs):
        _tree(h, f"include {i}", Path(d))
    for d in _generator_dirs():
        _tree(h, "generator", d)
    _distributions(h)
    return h.hexdigest()


def _digest(data: bytes) -> str:
    return xxhash.xxh64(data).hexdigest()


def lookup(k: str) -> int | None:
    """The number of outputs the recorded clean check of key ``k`` planned, when every one
    of them still hashes as recorded; None: build in full."""
    text = cache.read(cache.entry(KIND, k, "json"))
    if text is None:
        return None
    try:
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            return None
        files = doc["files"]
        for path, want in files:
            try:
                if _digest(Path(path).read_bytes()) != want:
                    return None
            except OSError:
                return None
        return len(files)
    except (ValueError, KeyError, TypeError):
        return None


def record(k: str, files: dict[Path, str]) -> None:
    """Remember that the outputs ``files`` (path -> text) answered key ``k`` up to date."""
    doc = {"format": FORMAT,
           "files": [[str(p), _digest(t.encode("utf-8"))] for p, t in files.items()]}  # fmt: skip
    cache.write(cache.entry(KIND, k, "json"), json.dumps(doc))


__all__ = ["FORMAT", "KIND", "key", "lookup", "record"]
