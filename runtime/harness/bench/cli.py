"""The ``mgpipe bench`` command body: plan from the arguments, run, report, guard."""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable
from pathlib import Path

from . import guard, report
from .pipe import BACKENDS, TRANSPORTS
from .run import FULL, QUICK, QUICK_LANES, REPORT_BACKENDS, REPORT_TRANSPORTS, Plan, run
from .strategies import STRATEGIES
from .workloads import WORKLOADS

__all__ = ["cli_run", "BASELINE"]

#: The committed baseline --quick is held against.
BASELINE = Path(__file__).with_name("baseline_quick.json")


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
    cells, extra = run(plan)
    findings = guard.structural(cells, extra)
    if args.write_baseline:
        baseline.write_text(json.dumps(guard.baseline_doc(cells), indent=1, sort_keys=True) + "\n")
        print(f"mgpipe bench: wrote {baseline.name}", file=sys.stderr)
    elif args.quick:
        findings += guard.against_baseline(cells, baseline)
    print(report.table(cells))
    print()
    print(report.headline(cells))
    print()
    print(report.findings_text(findings, args.verbose))
    meta = {"mode": "quick" if args.quick else "full", "seed": args.seed,
            "python": platform.python_version(),
            "sizes": {w: vars(s) for w, s in plan.sizes.items()}}  # fmt: skip
    doc = report.results_doc(cells, extra, findings, meta)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.dump(doc))
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(report.markdown(doc))
    if args.plot is not None:
        from .plot import plot

        for p in plot(doc, args.plot):
            print(f"chart: {p}")
    return 0 if doc["ok"] else 1
