"""Bench output: the JSON results document and the terminal tables.

The JSON is deterministic in shape (sorted keys, cells in run order) and carries no
timestamp or path; timing values naturally differ run to run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

from .guard import Finding, ratios
from .measure import Cell
from .strategies import STRATEGIES

__all__ = [
    "results_doc",
    "dump",
    "table",
    "legend",
    "headline",
    "findings_text",
    "markdown",
    "WIDTH",
]

FORMAT = "mgpipe-bench-results/1"


def results_doc(cells: Sequence[Cell], extra: Sequence[Cell], findings: Sequence[Finding],
                meta: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    return {
        "format": FORMAT,
        "meta": meta,
        "strategies": {k: {"name": s.name, "doc": s.doc} for k, s in STRATEGIES.items()},
        "cells": [asdict(c) for c in cells],
        "other_sizes": [asdict(c) for c in extra],
        "client_ratio_vs_a": ratios(cells),
        "findings": [asdict(f) for f in findings],
        "ok": all(f.ok for f in findings),
    }


def dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, indent=1, allow_nan=False) + "\n"


def _n(v: Any, fmt: str = "{:.0f}") -> str:
    return "-" if v is None else fmt.format(v)


#: marks a server figure that is a server process's whole session (its Report), not
#: the steady frames (see ``measure``)
SESSION_MARK = "*"

#: The terminal table: (heading, width, what it is); at most :data:`WIDTH` columns. The
#: legend is the third field; the full matrix (frame percentiles, the backend's share,
#: skip counts, set hashes, records by call) is the results document's.
_COLUMNS = (
    ("workload", 13, "the workload (bench/README.md)"),
    ("s", 1, "the strategy: " + " ".join(f"({k}) {v.name}" for k, v in STRATEGIES.items())),
    ("transport", 9, "monolith | inproc | spawn"),
    ("backend", 8, "recorder | gles | vulkan"),
    ("client", 7, "client CPU ns per draw"),
    ("server", 7, f"server CPU ns per draw ({SESSION_MARK}: the server process's whole session)"),
    ("B/draw", 7, "wire bytes per draw (ring + stage)"),
    ("rec/d", 5, "records per draw"),
    ("CSOs", 5, "render-state CSOs minted"),
    ("hashes", 6, "subset hashes computed"),
    ("py/d", 4, "Python calls per draw on the client thread"),
    ("pipes", 5, "Vulkan pipelines created"),
    ("GL/d", 5, "GL calls per draw"),
)  # fmt: skip
#: the widest line :func:`table` and :func:`legend` print (a terminal's 100 columns)
WIDTH = 100


def skip_counts(stats: dict[str, int]) -> tuple[int, int | None, int]:
    """(version check, transition cache, hash) answers from the CSO cache's counters."""
    version = stats.get("reuses", stats.get("version_hits", 0))
    transition = stats.get("transition_hits")
    return version, transition, stats.get("hashes", 0)


def _server(t: dict[str, Any]) -> str:
    mark = SESSION_MARK if t.get("server_scope", "steady frames") != "steady frames" else ""
    return _n(t.get("server_ns_per_draw")) + (mark if t.get("server_ns_per_draw") else "")


def _pipe_ns(t: dict[str, Any]) -> float | None:
    """client + server - backend per draw, where the server's split is known."""
    if not t or t.get("pipe_server_ns_per_draw") is None:
        return None
    return t["client_ns_per_draw"] + t["pipe_server_ns_per_draw"]


def _row(c: Cell) -> list[str]:
    s, t = c.structure, c.timing
    return [
        c.workload, c.strategy, c.transport, c.backend,
        _n(t.get("client_ns_per_draw")), _server(t),
        _n(s["wire_bytes_per_draw"], "{:.1f}"), _n(s["records_per_draw"], "{:.2f}"),
        str(s["csos_minted"]), str(s["cso_stats"].get("hashes", 0)),
        _n(s["python_calls_per_draw"], "{:.0f}"),
        _n(s.get("pipelines_created")), _n(s.get("gl_calls_per_draw"), "{:.1f}"),
    ]  # fmt: skip


def _line(fields: Sequence[str]) -> str:
    return " ".join(f"{x:>{w}}" if i > 3 else f"{x:<{w}}"
                    for i, (x, (_, w, _)) in enumerate(zip(fields, _COLUMNS))).rstrip()  # fmt: skip


def table(cells: Iterable[Cell]) -> str:
    """One row per cell, at most :data:`WIDTH` columns; a row that did not run gives its
    status and reason, wrapped under the measurement columns."""
    import textwrap

    head = _line([n for n, _, _ in _COLUMNS])
    lines = [head, "-" * len(head)]
    indent = sum(w + 1 for _, w, _ in _COLUMNS[:4])
    for c in cells:
        if c.status == "ok":
            lines.append(_line(_row(c)))
            continue
        text = textwrap.wrap(f"{c.status}: {c.reason}", WIDTH - indent) or [c.status]
        lines.append(
            _line([c.workload, c.strategy, c.transport, c.backend]).ljust(indent) + text[0]
        )
        lines += [" " * indent + x for x in text[1:]]
    return "\n".join(lines)


def legend() -> str:
    """What each column of :func:`table` is, and where the rest of the matrix is."""
    import textwrap

    parts = [f"{n}: {doc}" for n, _, doc in _COLUMNS] + ["-: not measured in this row"]
    lines = textwrap.wrap("; ".join(parts) + ".", WIDTH, break_on_hyphens=False)
    lines += textwrap.wrap("The full matrix (the backend's share, frame p50 / p99, how (a) "
                           "answered each re-selection, records by call) is the results "
                           "document: --json, or --out DIR for DIR/results.json.", WIDTH)  # fmt: skip
    return "\n".join(lines)


def headline(cells: Sequence[Cell]) -> str:
    """Client ns/draw of each strategy over (a), per workload (monolith / recorder)."""
    rat = ratios(cells)
    keys = [k for k in STRATEGIES if k != "a"]
    lines = ["client ns/draw relative to (a)'s, monolith / recorder:"]
    for wl, per in rat.items():
        lines.append(f"  {wl:<14}" + "".join(f"{'(' + k + ') ' + _n(per.get(k), '{:.2f}x'):>14}"
                                             for k in keys))  # fmt: skip
    return "\n".join(lines)


def findings_text(findings: Iterable[Finding], verbose: bool = False) -> str:
    fs = list(findings)
    bad = [f for f in fs if not f.ok]
    lines = [f.line() for f in (fs if verbose else bad)]
    lines.append(
        f"guard: {len(fs) - len(bad)}/{len(fs)} checks hold" + ("" if not bad else " -- RED")
    )
    return "\n".join(lines)


def _md_table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _skip_rates(s: dict[str, Any]) -> list[str]:
    v, t, h = skip_counts(s.get("cso_stats_steady", {}))
    total = v + (t or 0) + h
    pct = (lambda x: "-" if x is None else f"{100 * x / total:.1f}%") if total else (lambda x: "-")
    return [str(total), pct(v), pct(t), pct(h)]


def markdown(doc: dict[str, Any]) -> str:
    """The results document as Markdown tables (what bench/RESULTS.md holds)."""
    cells = [c for c in doc["cells"]]
    names = {k: v["name"] for k, v in doc["strategies"].items()}
    lines = [f"Mode: {doc['meta']['mode']}, seed {doc['meta']['seed']}, Python "
             f"{doc['meta']['python']}; sizes (draws/frame, frames, timing passes): "
             + ", ".join(f"{w} {s['draws']}/{s['frames']}/{s['repeats']}"
                         for w, s in doc["meta"]["sizes"].items()), ""]  # fmt: skip
    seen = {}
    for c in cells:
        if c["status"] == "ok" and c["structure"].get("backend_info"):
            seen.setdefault(c["backend"], c["structure"]["backend_info"])
    for b, info in sorted(seen.items()):
        lines.append(f"Backend {b}: " + ", ".join(f"{k} {v}" for k, v in sorted(info.items()) if v))
    lines += ["", "### Per cell", ""]
    head = ["workload", "strategy", "transport", "backend", "client ns/draw", "server ns/draw",
            "of which backend", "pipe ns/draw (client + server - backend)",
            "client frame p50 / p99 (us)", "server frame p50 / p99 (us)", "wire B/draw",
            "render-state B/draw", "records/draw", "CSOs", "hashes", "set hashes/draw",
            "Python calls/draw",
            "pipelines created", "GL calls/draw"]  # fmt: skip
    rows = []
    for c in cells:
        if c["status"] != "ok":
            rows.append([c["workload"], c["strategy"], c["transport"], c["backend"],
                         f"{c['status']}: {c['reason']}"] + [""] * (len(head) - 5))  # fmt: skip
            continue
        s, t = c["structure"], c["timing"]
        us = lambda k: "-" if t.get(k) is None else f"{t[k] / 1e3:.0f}"  # noqa: E731
        rows.append([
            c["workload"], f"({c['strategy']}) {names.get(c['strategy'], '')}", c["transport"],
            c["backend"], _n(t.get("client_ns_per_draw")), _server(t),
            _n(t.get("backend_ns_per_draw")),
            _n(_pipe_ns(t)),
            f"{us('client_frame_ns_p50')} / {us('client_frame_ns_p99')}",
            f"{us('server_frame_ns_p50')} / {us('server_frame_ns_p99')}",
            f"{s['wire_bytes_per_draw']:.1f}", _n(s["render_state_bytes_per_draw"], "{:.1f}"),
            f"{s['records_per_draw']:.2f}", str(s["csos_minted"]), str(s["cso_stats"].get("hashes", 0)),
            _n(s.get("set_hashes_per_draw"), "{:.2f}"), f"{s['python_calls_per_draw']:.0f}",
            _n(s.get("pipelines_created")), _n(s.get("gl_calls_per_draw"), "{:.1f}"),
        ])  # fmt: skip
    lines += _md_table(head, rows)
    lines += [
        "",
        "Spawn rows: the server's CPU is the server process's own (all its threads), per "
        "steady frame; the backend's share is not observable there. "
        f"{SESSION_MARK}: where its clock cannot be read from here, the whole session "
        "its Report gives (frame 0 and the teardown included).",
    ]
    lines += ["", "### Client ns/draw relative to (a) (monolith / recorder, median frame)", ""]
    keys = [k for k in doc["strategies"] if k != "a"]
    lines += _md_table(["workload"] + [f"({k}) {names[k]}" for k in keys],
                       [[w] + [_n(per.get(k), "{:.2f}x") for k in keys]
                        for w, per in doc["client_ratio_vs_a"].items()])  # fmt: skip
    lines += ["", "### How (a) answered each render-state re-selection (steady frames)", ""]
    lines += _md_table(["workload", "transport", "backend", "selections", "version check",
                        "transition cache", "hash (+ byte confirm)"],
                       [[c["workload"], c["transport"], c["backend"]] + _skip_rates(c["structure"])
                        for c in cells if c["status"] == "ok" and c["strategy"] == "a"])  # fmt: skip
    bad = [f for f in doc["findings"] if not f["ok"]]
    lines += [
        "",
        f"### Guard: {len(doc['findings']) - len(bad)}/{len(doc['findings'])} checks hold",
        "",
    ]
    lines += [f"- FAIL {f['check']}: {f['where']}: {f['detail']}" for f in bad]
    return "\n".join(lines) + "\n"
