"""The ``mgpipe bench`` command body: plan from the arguments, run, report, guard."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

from . import credit, floor, guard, plot, report
from .pipe import BACKENDS, TRANSPORTS
from .run import FULL, QUICK, QUICK_LANES, REPORT_BACKENDS, REPORT_TRANSPORTS, Plan, run
from .strategies import STRATEGIES
from .workloads import WORKLOADS

__all__ = ["cli_run", "BASELINE"]

#: The committed baseline --quick is held against.
BASELINE = Path(__file__).with_name("baseline_quick.json")
#: what --out DIR receives: the results document (the full matrix) and its Markdown tables
RESULTS_JSON, RESULTS_MD = "results.json", "RESULTS.md"


def _writable(path: Path, what: str, refuse: Callable[..., int]) -> int:
    """Refuse, before any work, a file path that cannot be written: its nearest existing
    ancestor must be a writable directory, and the path itself must not be a directory."""
    if path.is_dir():
        return refuse(f"{what} {path} is a directory, expected a file path")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return refuse(f"{what} {path}: {parent} is not a directory, expected a writable directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        return refuse(f"{what} {path}: {parent} is not writable, expected a writable directory")
    return 0


def _outputs(args: argparse.Namespace) -> list[Path]:
    """The files this run will write into --out DIR."""
    if args.out is None:
        return []
    names = [RESULTS_JSON, RESULTS_MD] + (list(plot.CHARTS) if args.plot else [])
    return [args.out / n for n in names]


def _check(
    names: list[str] | None, known: list[str], what: str, refuse: Callable[[str], int]
) -> int:
    for n in names or ():
        if n not in known:
            return refuse(f"unknown {what} {n!r}, expected one of: {', '.join(known)}")
    return 0


def cli_run(args: argparse.Namespace, refuse: Callable[[str], int]) -> int:
    for names, known, what in (
        (args.workload, list(WORKLOADS), "workload"),
        (args.strategy, list(STRATEGIES), "strategy"),
        (args.transport, sorted(set(TRANSPORTS) | set(REPORT_TRANSPORTS)), "transport"),
        (args.backend, sorted(set(BACKENDS) | set(REPORT_BACKENDS)), "backend"),
    ):
        if _check(names, known, what, refuse):
            return 2
    if args.write_baseline and not args.quick:
        return refuse("--write-baseline needs --quick (the baseline is the quick run's)")
    runs = getattr(args, "runs", 5)
    if runs < 1:
        return refuse(f"--runs {runs}, expected a count of at least 1")
    if args.plot and args.out is None:
        return refuse("--plot needs --out DIR, expected the directory the charts go to "
                      "(the committed ones are bench/: --out bench)")  # fmt: skip
    if args.plot and (why := plot.missing()):
        return refuse(f"--plot needs matplotlib ({why}), expected it installed: "
                      "pip install 'mgpipe[plot]'", "MISSING-DEPENDENCY")  # fmt: skip
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        return refuse(f"--out {args.out} is not a directory, expected a directory")
    for path in _outputs(args):
        if _writable(path, "--out", refuse):
            return 2
    plan = Plan(
        sizes=QUICK if args.quick else FULL,
        workloads=args.workload or tuple(WORKLOADS),
        strategies=args.strategy or tuple(STRATEGIES),
        transports=args.transport,
        backends=args.backend,
        seed=args.seed,
        lanes=QUICK_LANES if args.quick else None,
    )
    baseline = args.baseline or BASELINE
    if args.quick and not args.write_baseline and not baseline.is_file():
        return refuse(
            f"{baseline}: no such baseline file, expected a committed baseline "
            "(write one with --quick --write-baseline)"
        )
    if args.write_baseline and _writable(baseline, "--baseline", refuse):
        return 2
    cells, extra = run(plan)
    findings = guard.structural(cells, extra)
    if args.write_baseline:
        docs = [guard.baseline_doc(cells)]
        for i in range(1, runs):
            print(f"mgpipe bench: baseline run {i + 1} of {runs}", file=sys.stderr)
            again, extra_again = run(plan)
            findings += guard.structural(again, extra_again)
            docs.append(guard.baseline_doc(again))
        merged, unstable = guard.merge_baselines(docs)
        if unstable:
            return refuse(f"--write-baseline: {unstable}, expected the same structure in every "
                          "run (nothing written)", "BASELINE-UNSTABLE")  # fmt: skip
        baseline.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
        print(f"mgpipe bench: wrote {baseline.name} (ratios: median of {runs} run(s))",
              file=sys.stderr)  # fmt: skip
    elif args.quick:
        findings += guard.against_baseline(cells, baseline)
    # the lean floor: the draw path against the lean path and a 20-call floor (issue 20)
    lean_doc = floor.report(400 if args.quick else 4000, 1 if args.quick else 3)
    findings += floor.findings(lean_doc)
    meta = {"mode": "quick" if args.quick else "full", "seed": args.seed,
            "python": platform.python_version(),
            "sizes": {w: vars(s) for w, s in plan.sizes.items()}}  # fmt: skip
    doc = report.results_doc(cells, extra, findings, meta)
    # present credit: frames in flight and client stall per frame at credit 0 and 1
    doc["present_credit"] = credit.report(frames=8 if args.quick else 24)
    doc["lean_floor"] = lean_doc
    if args.json:
        sys.stdout.write(report.dump(doc))
    else:
        print(report.table(cells))
        print()
        print(report.legend())
        print()
        print(report.headline(cells))
        print()
        print(credit.text(doc["present_credit"]))
        print()
        print(floor.text(doc["lean_floor"]))
        print()
    # the guard's verdict: stdout beside the table, stderr beside the JSON document
    print(
        report.findings_text(findings, args.verbose), file=sys.stderr if args.json else sys.stdout
    )
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / RESULTS_JSON).write_text(report.dump(doc))
        (args.out / RESULTS_MD).write_text(report.markdown(doc))
        written = [args.out / RESULTS_JSON, args.out / RESULTS_MD]
        if args.plot:
            written += plot.plot(doc, args.out)
        for p in written:
            print(f"mgpipe bench: wrote {p}", file=sys.stderr)
    return 0 if doc["ok"] else 1
