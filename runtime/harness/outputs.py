"""What ``mgpipe run --out DIR`` writes per scene, and the progress bar of ``run all``.

- ``DIR/<scene>.png``: the scene's read-back images side by side, GL orientation
  (:mod:`.png`); a scene that reads nothing back is given its default framebuffer, read
  outside the measured part (``run_scene(capture=True)``); a backend that renders no
  pixels (the recorder) writes no PNG;
- ``DIR/<scene>.stats.json``: :func:`scene_stats` (draws, records, wire bytes, CSOs minted,
  and for a backend that counts driver calls its GL call totals), sorted keys;
- ``DIR/<scene>.json``: the recording, for a backend that keeps one (the recorder).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import IO, Any

from .png import encode
from .runner import SceneResult

__all__ = ["scene_stats", "write_outputs", "Progress"]


def scene_stats(res: SceneResult, backend: str, transport: str) -> dict[str, Any]:
    doc = dict(res.summary(), backend=backend, transport=transport)
    stats = getattr(res.backend, "stats", None)
    if stats is not None:
        be = stats()
        doc["backend_stats"] = be
        if "gl_calls" in be:
            doc["gl_calls"] = be["gl_calls"]
            doc["gl_calls_per_draw"] = round(be["gl_calls"] / res.draws, 3) if res.draws else None
    info = getattr(res.backend, "info", None)
    if info is not None:
        doc.update(info())
    doc["images"] = [[i.width, i.height] for i in res.images]
    return doc


def write_outputs(out: Path, res: SceneResult, backend: str, transport: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if res.images:
        p = out / f"{res.name}.png"
        p.write_bytes(encode(res.images))
        written.append(p)
    p = out / f"{res.name}.stats.json"
    p.write_text(json.dumps(scene_stats(res, backend, transport), sort_keys=True, indent=1) + "\n")
    written.append(p)
    to_json = getattr(res.backend, "to_json", None)
    if to_json is not None:
        p = out / f"{res.name}.json"
        p.write_text(to_json())
        written.append(p)
    return written


class Progress:
    """One step per finished item on ``stream`` (stderr): ``[#####.....] 5/17 name 0.4 s``,
    redrawn in place on a terminal, one line per step anywhere else (a log, a pipe)."""

    def __init__(self, total: int, stream: IO[str] | None = None, width: int = 24) -> None:
        self.total, self.width = total, width
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self._t0 = time.monotonic()
        try:
            self.tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False

    def step(self, name: str) -> None:
        self.done += 1
        now = time.monotonic()
        took, self._t0 = now - self._t0, now
        fill = self.width * self.done // max(self.total, 1)
        bar = "#" * fill + "." * (self.width - fill)
        line = f"[{bar}] {self.done}/{self.total} {name:<20} {took:6.1f} s"
        if self.tty:
            end = "\n" if self.done == self.total else ""
            self.stream.write(f"\r{line}{end}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
