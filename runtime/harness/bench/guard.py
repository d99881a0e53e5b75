"""The regression guard: exact structural facts, and timing only as same-run ratios.

Structural facts (independent of the machine) are checked on every cell that ran:

* ``(a)`` mints exactly one CSO per distinct pipeline configuration the workload's draws
  ran under (the workload's own count): BlendToggle exactly 2 at every size;
* the dynamic half mints nothing: no CSO is minted by ``(a)`` in a steady frame;
* BlendToggle's steady re-selections under ``(a)`` are answered without a hash (where
  the cache has a transition cache); ``(e)`` answers none from it;
* ``(c)`` mints one CSO per distinct whole block (the workload's own count; where that
  count exceeds the cache capacity and values recur, at least that many);
* steady-state wire bytes per draw of ``(a)`` are at most a tenth of ``(b)``'s where the
  workload's dynamic half stands still between draws (NoChange, MixedFrame);
* every strategy delivers the same working block to every draw as ``(a)``;
* a backend that counts pipelines creates 2 for BlendToggle under ``(a)``;
* records and bytes per draw equal the committed baseline's; Python calls per draw do
  not exceed it.

Timing: for each workload, ``client ns/draw of s / client ns/draw of (a)`` (median
steady frame of each) is compared
with the same ratio in the baseline; red when it falls below ``baseline / RATIO_SLACK``
(mgpipe's lead over ``s`` shrunk more than threefold: a shared 2-core machine moves a
same-run ratio by up to ~2x). No absolute time is ever a threshold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .measure import Cell
from .pipe import tables

__all__ = ["Finding", "structural", "ratios", "against_baseline", "baseline_doc", "RATIO_SLACK"]

RATIO_SLACK = 3.0
#: Workloads whose dynamic half stands still between most draws (the bytes claim).
QUIET_DYNAMIC = ("NoChange", "MixedFrame")
#: The cells the baseline pins (the rows every machine runs).
BASE_TRANSPORT, BASE_BACKEND = "monolith", "recorder"


@dataclass(frozen=True)
class Finding:
    check: str
    where: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.check}: {self.where}: {self.detail}"


def _ok(cells: Iterable[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "ok"]


def _where(c: Cell) -> str:
    return f"{c.workload}/{c.strategy}/{c.transport}/{c.backend}"


def structural(cells: Iterable[Cell], extra_sizes: Iterable[Cell] = ()) -> list[Finding]:
    out: list[Finding] = []
    cells = _ok(cells)
    cap = tables.constant("kMGPipeCsoCacheCapacity")
    by = {c.key: c for c in cells}
    for c in cells + _ok(extra_sizes):
        s, w = c.structure, _where(c)
        if c.strategy == "a":
            out.append(Finding("cso-per-pipeline-state", w, s["csos_minted"] == s["pipeline_states_seen"],
                               f"minted {s['csos_minted']}, pipeline states {s['pipeline_states_seen']}"))  # fmt: skip
            out.append(Finding("dynamic-mints-none", w, s["csos_minted_steady"] == 0,
                               f"{s['csos_minted_steady']} minted in steady frames"))  # fmt: skip
            if c.workload == "BlendToggle":
                out.append(Finding("blend-toggle-2-csos", w, s["csos_minted"] == 2,
                                   f"minted {s['csos_minted']} at {c.draws_per_frame} draws/frame"))  # fmt: skip
                if s.get("pipelines_created") is not None:
                    out.append(Finding("blend-toggle-2-pipelines", w, s["pipelines_created"] == 2,
                                       f"created {s['pipelines_created']}"))  # fmt: skip
        steady = s.get("cso_stats_steady", {})
        if c.strategy == "a" and c.workload == "BlendToggle" and "transition_hits" in steady:
            out.append(Finding("blend-toggle-no-steady-hash", w, steady.get("hashes", 0) == 0,
                               f"{steady.get('hashes', 0)} hashes, {steady['transition_hits']} "
                               "transition-cache answers in steady frames"))  # fmt: skip
        if c.strategy == "e":
            out.append(Finding("transition-off", w, steady.get("transition_hits", 0) == 0,
                               f"{steady.get('transition_hits', 0)} transition-cache answers"))  # fmt: skip
        if c.strategy == "c":
            n, m = s["blocks_seen"], s["csos_minted"]
            ok = m == n if n <= cap else m >= n
            out.append(Finding("cso-per-distinct-block", w, ok,
                               f"minted {m}, distinct blocks {n} (capacity {cap})"))  # fmt: skip
    for c in cells:
        a = by.get((c.workload, "a", c.transport, c.backend))
        if a is None or c.strategy == "a":
            continue
        da, dc = a.structure["draw_state_digest"], c.structure["draw_state_digest"]
        if da is not None and dc is not None:
            out.append(Finding("same-state-every-draw", _where(c), da == dc,
                               "working block at every draw " + ("matches" if da == dc else "differs from") + " (a)"))  # fmt: skip
        if c.strategy == "b" and c.workload in QUIET_DYNAMIC:
            ba, bb = a.structure["wire_bytes_per_draw"], c.structure["wire_bytes_per_draw"]
            out.append(Finding("a-bytes-le-tenth-of-b", _where(a), ba * 10 <= bb,
                               f"(a) {ba:.1f} B/draw, (b) {bb:.1f} B/draw"))  # fmt: skip
    return out


def ratios(cells: Iterable[Cell]) -> dict[str, dict[str, float]]:
    """``{workload: {strategy: client ns/draw of s / of (a)}}`` on the baseline rows."""
    out: dict[str, dict[str, float]] = {}
    rows = [c for c in _ok(cells) if (c.transport, c.backend) == (BASE_TRANSPORT, BASE_BACKEND)
            and c.timing]  # fmt: skip
    key = "client_ns_per_draw_p50"  # the median frame: one disturbed frame does not move it
    base = {c.workload: c.timing[key] for c in rows if c.strategy == "a"}
    for c in rows:
        if c.strategy != "a" and base.get(c.workload):
            out.setdefault(c.workload, {})[c.strategy] = c.timing[key] / base[c.workload]
    return out


def baseline_doc(cells: Iterable[Cell]) -> dict[str, Any]:
    """What ``--write-baseline`` commits: per-draw structure and the same-run ratios."""
    cells = list(cells)
    structure = {}
    for c in _ok(cells):
        if (c.transport, c.backend) == (BASE_TRANSPORT, BASE_BACKEND):
            s = c.structure
            structure[f"{c.workload}/{c.strategy}"] = {
                "draws_per_frame": c.draws_per_frame,
                "records_per_draw": round(s["records_per_draw"], 6),
                "wire_bytes_per_draw": round(s["wire_bytes_per_draw"], 6),
                "python_calls_per_draw": round(s["python_calls_per_draw"], 6),
            }
    rat = {
        w: {k: round(v, 4) for k, v in sorted(r.items())} for w, r in sorted(ratios(cells).items())
    }
    return {"format": "mgpipe-bench-baseline/1", "structure": dict(sorted(structure.items())),
            "client_ratio_vs_a": rat}  # fmt: skip


def against_baseline(cells: Iterable[Cell], baseline: Path) -> list[Finding]:
    cells = list(cells)
    doc = json.loads(baseline.read_text())
    now = baseline_doc(cells)
    out: list[Finding] = []
    where = str(baseline.name)
    for key, want in doc["structure"].items():
        got = now["structure"].get(key)
        if got is None or got["draws_per_frame"] != want["draws_per_frame"]:
            continue  # not run this time (or at another size): nothing to compare
        for m in ("records_per_draw", "wire_bytes_per_draw"):
            out.append(Finding(f"baseline-{m}", f"{key}", got[m] == want[m],
                               f"{got[m]} now, {want[m]} in {where}"))  # fmt: skip
        out.append(Finding("baseline-python-calls", key,
                           got["python_calls_per_draw"] <= want["python_calls_per_draw"],
                           f"{got['python_calls_per_draw']} now, at most {want['python_calls_per_draw']} "
                           f"in {where}"))  # fmt: skip
    for wl, per in doc["client_ratio_vs_a"].items():
        for s, r0 in per.items():
            r = now["client_ratio_vs_a"].get(wl, {}).get(s)
            if r is None:
                continue
            out.append(Finding("ratio-vs-a", f"{wl}/{s}", r >= r0 / RATIO_SLACK,
                               f"client ns/draw {s}/(a) = {r:.2f} now, {r0:.2f} in {where} "
                               f"(red below {r0 / RATIO_SLACK:.2f})"))  # fmt: skip
    return out
