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
* every strategy delivers the same working block to every draw as ``(a)``, and the
  backend does the same work for it: as many GL calls per draw, as many pipelines (but
  ``(c)``);
* a backend that counts pipelines (Vulkan) creates, where every draw runs one program,
  vertex layout and render pass, one pipeline per CSO: under ``(a)`` one per pipeline
  configuration, so BlendToggle exactly 2 at every size, and none in a steady frame
  (the dynamic churn creates none); under ``(c)`` one per distinct whole block;
* ``spawn`` equals ``monolith`` on every structural number: records and bytes per draw
  (per call too), CSOs and the CSO cache's counters, and what the backend in the server
  process reports at the end (pipelines created, GL calls, the recorder's stream
  digest: the same records and blobs applied, in the same order);
* a backend that counts its validation messages (Vulkan, the census run under the
  caller's ``MGPIPE_VK_VALIDATION``) has none;
* every cell that was meant to run ran (a ``failed`` cell is red; "not available" is not);
* records and bytes per draw equal the committed baseline's; Python calls per draw do
  not exceed it; the real backends' GL calls per draw, pipelines and ``vkCmdSet*`` calls
  per draw (monolith) equal it.

Timing: for each workload, ``client ns/draw of s / client ns/draw of (a)`` (the least
disturbed steady frame of each, over every interleaved timing pass) is compared
with the same ratio in the baseline; red when it falls below ``baseline / RATIO_SLACK``
(mgpipe's lead over ``s`` shrunk more than threefold: a shared 2-core machine moves a
same-run ratio by up to ~2x). No absolute time is ever a threshold.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .measure import Cell
from .pipe import tables
from .workloads import WORKLOADS

__all__ = ["Finding", "structural", "ratios", "against_baseline", "baseline_doc",
           "merge_baselines", "backend_facts", "RATIO_SLACK"]  # fmt: skip

RATIO_SLACK = 3.0
#: Workloads whose dynamic half stands still between most draws (the bytes claim).
QUIET_DYNAMIC = ("NoChange", "MixedFrame")
#: The cells the baseline pins (the rows every machine runs).
BASE_TRANSPORT, BASE_BACKEND = "monolith", "recorder"
#: What spawn must reproduce of monolith (the census's structural keys) ...
SAME_ON_SPAWN = ("steady_draws", "records_per_draw", "wire_bytes_per_draw",
                 "ring_bytes_per_draw", "stage_bytes_per_draw", "records_by_call",
                 "csos_minted", "csos_minted_steady", "cso_stats", "cso_stats_steady",
                 "set_hashes_per_draw", "pipeline_states_seen", "blocks_seen",
                 "stream_digest", "pipelines_created")  # fmt: skip
#: ... and of the backend's own final counters (those that count work, not time).
SAME_COUNTERS = ("pipelines_created", "pipelines_live", "render_passes", "cmd_set_total",
                 "draws", "frames", "gl_calls", "records", "verbs", "raw_bytes")  # fmt: skip


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
    cells, extra_sizes = list(cells), list(extra_sizes)
    out = [Finding("cell-ran", _where(c), False, c.reason)
           for c in cells + extra_sizes if c.status == "failed"]  # fmt: skip
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
        out += _pipelines(c)
        msgs = (s.get("backend_counters") or {}).get("validation_messages")
        if msgs is not None:
            out.append(Finding("backend-validation-clean", w, msgs == 0,
                               f"{msgs} validation messages"))  # fmt: skip
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
    out += [_same_as_monolith(c, by[(c.workload, c.strategy, "monolith", c.backend)])
            for c in cells if c.transport == "spawn"
            and (c.workload, c.strategy, "monolith", c.backend) in by]  # fmt: skip
    for c in cells:
        a = by.get((c.workload, "a", c.transport, c.backend))
        if a is None or c.strategy == "a":
            continue
        da, dc = a.structure["draw_state_digest"], c.structure["draw_state_digest"]
        if da is not None and dc is not None:
            out.append(Finding("same-state-every-draw", _where(c), da == dc,
                               "working block at every draw " + ("matches" if da == dc else "differs from") + " (a)"))  # fmt: skip
        out += _same_backend_work(c, a)
        if c.strategy == "b" and c.workload in QUIET_DYNAMIC:
            ba, bb = a.structure["wire_bytes_per_draw"], c.structure["wire_bytes_per_draw"]
            out.append(Finding("a-bytes-le-tenth-of-b", _where(a), ba * 10 <= bb,
                               f"(a) {ba:.1f} B/draw, (b) {bb:.1f} B/draw"))  # fmt: skip
    return out


def _pipelines(c: Cell) -> list[Finding]:
    """The pipeline facts of a backend that counts its pipelines (see the module doc)."""
    s, w = c.structure, _where(c)
    made = s.get("pipelines_created")
    if made is None or not WORKLOADS[c.workload].single_program:
        return []
    out = []
    if c.strategy == "a":
        out.append(Finding("pipeline-per-pipeline-state", w, made == s["pipeline_states_seen"],
                           f"created {made}, pipeline states {s['pipeline_states_seen']} "
                           "(one program, layout and pass)"))  # fmt: skip
        if c.workload == "BlendToggle":
            out.append(Finding("blend-toggle-2-pipelines", w, made == 2,
                               f"created {made} at {c.draws_per_frame} draws/frame"))  # fmt: skip
        steady = s.get("backend_counters_steady")
        if steady is not None:  # observable where the backend runs in this process
            n = steady.get("pipelines_created", 0)
            out.append(Finding("dynamic-creates-no-pipeline", w, n == 0,
                               f"{n} created in steady frames"))  # fmt: skip
    if c.strategy == "c":
        out.append(Finding("pipeline-per-block-cso", w, made == s["csos_minted"],
                           f"created {made}, CSOs {s['csos_minted']}"))  # fmt: skip
    return out


def _same_backend_work(c: Cell, a: Cell) -> list[Finding]:
    """The backend does the same work for ``c`` as for (a): as many GL calls per draw, and
    as many pipelines (but under (c), whose CSOs are per block by design)."""
    s, sa, diff, n = c.structure, a.structure, [], 0
    keys = ["gl_calls_per_draw"] + (["pipelines_created"] if c.strategy != "c" else [])
    for k in keys:
        if s.get(k) is not None or sa.get(k) is not None:
            n += 1
            if s.get(k) != sa.get(k):
                diff.append(f"{k} {s.get(k)} against {sa.get(k)}")
    if not n:
        return []
    return [
        Finding(
            "same-backend-work-as-a",
            _where(c),
            not diff,
            "; ".join(diff) or f"{n} backend counts equal (a)'s",
        )
    ]


def _same_as_monolith(c: Cell, mono: Cell) -> Finding:
    s, m = c.structure, mono.structure
    keys = [k for k in SAME_ON_SPAWN if s.get(k) is not None or m.get(k) is not None]
    diff = [k for k in keys if s.get(k) != m.get(k)]
    sc, mc = s.get("backend_counters") or {}, m.get("backend_counters") or {}
    counters = [k for k in SAME_COUNTERS if k in sc or k in mc]
    diff += [f"counter {k}" for k in counters if sc.get(k) != mc.get(k)]
    compared = len(keys) + len(counters)
    return Finding("spawn-equals-monolith", _where(c), not diff,
                   f"{compared} structural numbers equal"
                   if not diff else "differs from monolith in " + ", ".join(diff))  # fmt: skip


def ratios(cells: Iterable[Cell]) -> dict[str, dict[str, float]]:
    """``{workload: {strategy: client ns/draw of s / of (a)}}`` on the baseline rows."""
    out: dict[str, dict[str, float]] = {}
    rows = [c for c in _ok(cells) if (c.transport, c.backend) == (BASE_TRANSPORT, BASE_BACKEND)
            and c.timing]  # fmt: skip
    # the least disturbed of every timed frame (min of N, thread CPU time): a busy machine
    # only ever adds to a frame's CPU (cache misses, a preempted timer read), so the minimum
    # is the figure load moves least; the median of six moved NoChange b/(a) below its floor
    key = "client_ns_per_draw_min"
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
            "backends": backend_facts(cells), "client_ratio_vs_a": rat}  # fmt: skip


def merge_baselines(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
    """One baseline from several runs' :func:`baseline_doc`: the structure and backend
    counts are exact facts and must be equal in every run (else the second value names the
    first that differs); each same-run ratio is the median of the runs that measured it, so
    one disturbed run neither raises nor lowers the bar the guard holds later runs to."""
    first = docs[0]
    for i, d in enumerate(docs[1:], start=2):
        for part in ("structure", "backends"):
            if d[part] != first[part]:
                key = next(k for k in sorted(set(d[part]) | set(first[part]))
                           if d[part].get(k) != first[part].get(k))  # fmt: skip
                return first, f"run {i}'s {part} differs from run 1's at {key}"
    rat: dict[str, dict[str, float]] = {}
    for w in sorted({w for d in docs for w in d["client_ratio_vs_a"]}):
        keys = sorted({s for d in docs for s in d["client_ratio_vs_a"].get(w, {})})
        rat[w] = {s: round(statistics.median(v for d in docs
                                             if (v := d["client_ratio_vs_a"].get(w, {}).get(s))
                                             is not None), 4)
                  for s in keys}  # fmt: skip
    return {**first, "client_ratio_vs_a": rat}, None


def backend_facts(cells: Iterable[Cell]) -> dict[str, dict[str, Any]]:
    """The real backends' exact counts on monolith (steady counters are observable there):
    GL calls per draw (GLES), pipelines created and ``vkCmdSet*`` calls per draw (Vulkan)."""
    out: dict[str, dict[str, Any]] = {}
    for c in _ok(cells):
        steady = c.structure.get("backend_counters_steady")
        if c.transport != BASE_TRANSPORT or c.backend == BASE_BACKEND or steady is None:
            continue
        d = max(c.structure["steady_draws"], 1)
        facts: dict[str, Any] = {}
        if c.structure.get("gl_calls_per_draw") is not None:
            facts["gl_calls_per_draw"] = round(c.structure["gl_calls_per_draw"], 6)
        if c.structure.get("pipelines_created") is not None:
            facts["pipelines_created"] = c.structure["pipelines_created"]
        if "cmd_set_total" in steady:
            facts["cmd_set_per_draw"] = round(steady["cmd_set_total"] / d, 6)
        if facts:
            out[f"{c.workload}/{c.strategy}/{c.backend}"] = {"draws_per_frame": c.draws_per_frame,
                                                            **facts}  # fmt: skip
    return dict(sorted(out.items()))


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
    for key, want in doc.get("backends", {}).items():
        got = now["backends"].get(key)
        if got is None or got["draws_per_frame"] != want["draws_per_frame"]:
            continue  # that backend did not run here (or at another size)
        for m in sorted(set(want) - {"draws_per_frame"}):
            out.append(Finding(f"baseline-{m}", key, got.get(m) == want[m],
                               f"{got.get(m)} now, {want[m]} in {where}"))  # fmt: skip
    for wl, per in doc["client_ratio_vs_a"].items():
        for s, r0 in per.items():
            r = now["client_ratio_vs_a"].get(wl, {}).get(s)
            if r is None:
                continue
            out.append(Finding("ratio-vs-a", f"{wl}/{s}", r >= r0 / RATIO_SLACK,
                               f"client ns/draw {s}/(a) = {r:.2f} now, {r0:.2f} in {where} "
                               f"(red below {r0 / RATIO_SLACK:.2f})"))  # fmt: skip
    return out
