"""`mgpipe self-test`: run every negative control; each gate must go red for its own reason.

One line per control (status, name, gate, planted defect, expected message); a FAIL adds
its reason on the next line. Exit 0 when every control passes, 1 otherwise.
``--json`` prints ``{"controls": [{"name", "gate", "planted", "expected", "status"}]}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from pathlib import Path

from mgpipe.cmd_gen import add_catalogue_arg, catalogue_of, include_dirs_of
from mgpipe.gen.errors import GenError

# the generator and its controls are imported by run(), never at registration (`--help`)

EXIT_FAILED = 1


def run(args: argparse.Namespace) -> int:
    from mgpipe.gen.build import require_catalogue
    from mgpipe.gen.catalogue import is_mobilegl_tree
    from mgpipe.gen.controls import select
    from mgpipe.gen.selftest import GATE_GROUPS, Setup, private_layout_cache

    catalogue = require_catalogue(catalogue_of(args)).resolve()
    disabled = frozenset(args.disable_gate or ())
    unknown = sorted(disabled - set(GATE_GROUPS))
    if unknown:
        raise GenError("<command line>", 1, 1, "UNKNOWN-GATE",
                       f"no gate group {unknown[0]!r}, expected one of {', '.join(GATE_GROUPS)}")
    controls = select(args.k)
    if not controls:
        raise GenError("<command line>", 1, 1, "UNKNOWN-CONTROL",
                       f"no control name contains {' or '.join(map(repr, args.k))}, "
                       f"expected a substring of a control name (see docs/SELFTEST.md)")
    jobs = args.jobs if args.jobs is not None else min(2, os.cpu_count() or 1)
    t0 = time.perf_counter()
    dirs = include_dirs_of(args)
    real = is_mobilegl_tree(catalogue)
    if dirs is None and real:
        dirs = (catalogue.parent,)  # the copy's parent is a temporary directory
    with private_layout_cache(), tempfile.TemporaryDirectory(prefix="mgpipe-selftest-out-") as tmp:
        out = Path(args.out).resolve() if args.out is not None else outputs_of(catalogue, Path(tmp), dirs)
        setup = Setup(tuple(Path(d).resolve() for d in dirs) if dirs else None, out)
        return _run(args, controls, catalogue, disabled, jobs, t0, setup, real)


def outputs_of(catalogue: Path, tmp: Path, dirs) -> Path | None:  # type: ignore[no-untyped-def]
    """The outputs the stale and clean controls diff against without ``--out``: those ``gen``
    writes by default (the bundled tree's: ``generated/``). A MobileGL tree's own
    ``generated/`` is another generator's: None (those controls are N/A). The original shape
    beside the bundled outputs has no committed outputs of its own: they are generated here,
    into ``tmp``, from the unplanted tree (a tree that does not generate fails ``clean``)."""
    from mgpipe.cmd_gen import default_out
    from mgpipe.gen.catalogue import is_mobilegl_tree
    from mgpipe.gen.selftest import beside_foreign_outputs, own_outputs

    if not is_mobilegl_tree(catalogue):
        return own_outputs(catalogue, tmp, dirs) if beside_foreign_outputs(catalogue) else None
    out = default_out(catalogue)
    return None if out.resolve() == (catalogue / "generated").resolve() else out.resolve()


def _run(args, controls, catalogue, disabled, jobs, t0, setup, real) -> int:  # type: ignore[no-untyped-def]
    from mgpipe.gen.selftest import FAIL, NA, Result, Setup, baseline_of, run_controls

    print(f"self-test: {len(controls)} controls on {catalogue_of(args)}"
          f"{' (MobileGL-shaped)' if real else ''}, {jobs} worker(s)", file=sys.stderr, flush=True)
    if real:
        base = baseline_of(catalogue, setup)
        setup = Setup(setup.include_dirs, setup.out, base)
        if base:
            print(f"self-test: the unplanted tree is refused with {len(base)} error(s); each control "
                  f"is judged on what its plant adds", file=sys.stderr, flush=True)

    def progress(done: int, total: int, r: Result) -> None:
        print(f"[{done}/{total}] {r.status} {r.name} ({r.seconds:.1f} s)", file=sys.stderr, flush=True)

    results = run_controls(controls, catalogue, disabled, jobs=jobs, setup=setup, progress=progress)
    wall = time.perf_counter() - t0
    failed = [r for r in results if r.status == FAIL]
    na = [r for r in results if r.status == NA]
    if args.json:
        print(json.dumps({"controls": [r.as_json() for r in results]}, indent=2))
        for r in failed:
            print(f"FAIL {r.name}: {r.reason}", file=sys.stderr)
        for r in na:
            print(f"N/A {r.name}: {r.reason}", file=sys.stderr)
    else:
        width = max(len(r.name) for r in results)
        gwidth = max(len(r.gate) for r in results)
        for r in results:
            print(f"{r.status}  {r.name:<{width}}  {r.gate:<{gwidth}}  planted: {r.planted}  "
                  f"expected: {r.expected}")
            if r.status in (FAIL, NA):
                print(f"      reason: {r.reason}")
        note = f" (gates disabled: {', '.join(sorted(disabled))})" if disabled else ""
        napart = f", {len(na)} not applicable to this tree" if na else ""
        passed = len(results) - len(failed) - len(na)
        print(f"{passed} of {len(results)} controls passed{napart} in {wall:.1f} s{note}")
    return EXIT_FAILED if failed else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "self-test", help="plant one defect per gate in a temporary copy; each must go red by name")
    add_catalogue_arg(p)
    p.add_argument("--json", action="store_true", help="machine-readable results")
    p.add_argument("-k", action="append", metavar="NAME",
                   help="run only controls whose name contains NAME (repeatable)")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: 2, or 1 on a one-core machine)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="the outputs the stale and clean controls diff against, like gen's --out "
                        "(default: those gen writes; for the original shape beside the bundled outputs, "
                        "its own, generated into a temporary directory)")
    p.add_argument("--disable-gate", action="append", metavar="NAME", help=argparse.SUPPRESS)
    p.set_defaults(func=run)
