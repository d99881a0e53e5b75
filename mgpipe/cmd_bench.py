"""``mgpipe bench``: the pipe's cost per draw beside the designs it replaces.

The harness lives in ``mgpipe.runtime.harness.bench``; this module is its command line.
The runtime is imported only when the command runs (``mgpipe gen`` never needs it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mgpipe.refusal import refusal


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="measure client/server CPU, bytes and CSOs per draw for each render-state strategy",
        description="Runs the bench workloads under every strategy, transport and registered "
        "backend; prints a table (or, with --json, the results document), checks the "
        "structural guard; exit 1 when the guard is red. Progress goes to stderr.",
    )
    p.add_argument("--quick", action="store_true",
                   help="the CI form: tiny sizes (ci/run's phase table gives its time)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print the results document (the full matrix) instead of the table")  # fmt: skip
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="write DIR/results.json (the full matrix) and DIR/RESULTS.md")  # fmt: skip
    p.add_argument("--plot", action="store_true",
                   help="also write the PNG charts into --out DIR (needs matplotlib: mgpipe[plot])")  # fmt: skip
    p.add_argument("--workload", action="append", help="only this workload (repeatable)")
    p.add_argument("--strategy", action="append", help="only this strategy key a..e (repeatable)")
    p.add_argument("--transport", action="append", help="only this transport (repeatable)")
    p.add_argument("--backend", action="append", help="only this backend (repeatable)")
    p.add_argument("--seed", type=int, default=1, help="workload seed (default 1)")
    p.add_argument("--baseline", type=Path, default=None,
                   help="baseline to hold --quick against (default: the committed one)")  # fmt: skip
    p.add_argument("--write-baseline", action="store_true",
                   help="write the structure and ratios as the baseline (with --quick)")  # fmt: skip
    p.add_argument("--runs", type=int, default=5, metavar="N",
                   help="with --write-baseline: run N times; the structure must be the same in "
                        "every run, each ratio is the median of the N (default 5)")  # fmt: skip
    p.add_argument(
        "--verbose", action="store_true", help="print every guard check, not only failures"
    )
    p.set_defaults(func=run)


def _refuse(what: str, gate: str = "BAD-ARGUMENT") -> int:
    """A bad argument: the one-line refusal (``<command line>:1:1: BAD-ARGUMENT: ...``)."""
    raise refusal(gate, what)


def run(args: argparse.Namespace) -> int:
    from mgpipe.runtime.harness.bench import cli_run

    return cli_run(args, _refuse)
