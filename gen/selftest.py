"""`mgpipe self-test`: every gate proves it can go red, for its own reason (R-16).

For each control of :mod:`mgpipe.gen.controls`: copy the catalogue (with ``include/``) and
the ``generated/`` directory beside it into a fresh temporary tree, plant the one defect,
run the generator in-process on the copy exactly as ``mgpipe gen --check`` does (build,
render, diff) and judge the outcome:

* a gate control PASSES only when the run exits 2 with a ``: GATE: `` line carrying every
  expected text, and no error comes from a gate outside ``{gate} | also``;
* a stale control PASSES only when the run exits 1 naming every expected file ``STALE``;
* the G4 control compiles the real and a by-value comparator with ``g++`` and PASSES only
  when the real one tells -0.0 from 0.0 and two NaN payloads apart and the planted one
  misses -0.0 (no g++ is a FAIL, never a skip);
* the clean control (the control of the controls) PASSES only when the unplanted copy
  exits 0.

Anything else (another gate, another exit code, a plant that matched nothing, a crash) is
a FAIL with its reason. The copies are parsed without the layout cache, so the user's
cache is never rewritten with a temporary path.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from mgpipe.gen.controls import CLEAN, G4, GATE, STALE, Control, by_name
from mgpipe.gen.errors import EXIT_BAD_INPUT, GenError, GenErrors, exit_code_for
from mgpipe.gen.gates import GATES
from mgpipe.gen.plants import PlantError

PASS, FAIL = "PASS", "FAIL"
EXIT_STALE = 1
#: every name ``build(disabled=...)`` understands
GATE_GROUPS: tuple[str, ...] = (*(name for name, _ in GATES), "render-state")
_ERROR_LINE = re.compile(r"^(?P<loc>.+?:\d+:\d+): (?P<gate>[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*): (?P<text>.*)$")


@dataclass(frozen=True)
class Result:
    name: str
    gate: str
    planted: str
    expected: str
    status: str
    reason: str = ""
    seconds: float = 0.0

    def as_json(self) -> dict[str, str]:
        d = asdict(self)
        return {k: d[k] for k in ("name", "gate", "planted", "expected", "status")}


def expected_text(c: Control) -> str:
    if c.kind == GATE:
        extra = f" (collateral allowed: {', '.join(sorted(c.also))})" if c.also else ""
        return f"exit 2, ': {c.gate}: ' with " + " + ".join(repr(e) for e in c.expect) + extra
    if c.kind == STALE:
        return "exit 1, " + ", ".join(f"'{f}: STALE: '" for f in c.expect)
    return c.expect[0]


@contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@dataclass(frozen=True)
class Run:
    rc: int | None  # None: the generator crashed
    output: str


def copy_tree(catalogue: Path, dest: Path) -> Path:
    """``dest/<catalogue name>`` (with include/) and ``dest/generated`` beside it."""
    catalogue = Path(catalogue)
    cat = dest / catalogue.name
    shutil.copytree(catalogue, cat)
    gen = catalogue.parent / "generated"
    if gen.is_dir():
        shutil.copytree(gen, dest / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    return cat


def gen_check(cat: Path, disabled: frozenset[str]) -> Run:
    """`mgpipe gen --check` on ``cat`` in-process: exit code and everything it printed."""
    from mgpipe.cmd_gen import check
    from mgpipe.gen.build import LOCK_FILE, build
    from mgpipe.gen.lock import LockPolicy
    from mgpipe.gen.render import render_all

    out = io.StringIO()
    try:
        built = build(cat, disabled=disabled, use_cache=False,
                      lock=LockPolicy(cat.parent / "generated"))
        files = {cat.parent / "generated" / o.name: o.text for o in render_all(built.model)}
        files[cat / LOCK_FILE] = built.lock_text
        return Run(EXIT_STALE if check(files, out) else 0, out.getvalue())
    except (GenError, GenErrors) as exc:
        return Run(exit_code_for(exc, out), out.getvalue())
    except Exception as exc:  # noqa: BLE001 - a crash is a verdict, not an escape
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        if disabled:  # the defect the disabled gate would refuse reached the model builder
            return Run(None, f"with {', '.join(sorted(disabled))} disabled the defect reached the "
                             f"model builder ({tb})")
        return Run(None, f"generator crashed: {tb}")


def _error_lines(output: str) -> list[tuple[str, str]]:
    out = []
    for line in output.splitlines():
        m = _ERROR_LINE.match(line)
        if m:
            out.append((m["gate"], line))
    return out


def judge_gate(c: Control, run: Run) -> str | None:
    """None when ``run`` is ``c``'s gate refusing for its own reason, else why not."""
    if run.rc != EXIT_BAD_INPUT:
        return f"{_outcome(run)}, expected exit 2 with {c.gate}"
    errors = _error_lines(run.output)
    others = [line for gate, line in errors if gate != c.gate and gate not in c.also]
    if others:
        return f"failed for another reason: {others[0]}"
    mine = [line for gate, line in errors if gate == c.gate]
    if not mine:
        return f"no ': {c.gate}: ' line (the gate did not fire): {_first(run.output)}"
    if not any(all(e in line for e in c.expect) for line in mine):
        return f"{c.gate} fired without {' + '.join(map(repr, c.expect))}: {mine[0]}"
    return None


def judge_stale(c: Control, run: Run, catalogue_name: str) -> str | None:
    if run.rc != EXIT_STALE:
        return f"{_outcome(run)}, expected exit 1 (stale)"
    names = [f.format(catalogue=catalogue_name) for f in c.expect]
    missing = [f for f in names if f"{f}: STALE: " not in run.output]
    if missing:
        return f"gen --check did not name {', '.join(missing)} as STALE: {_first(run.output)}"
    return None


def judge_clean(run: Run) -> str | None:
    if run.rc != 0:
        return f"the unplanted copy: {_outcome(run)}, expected exit 0"
    return None


def _outcome(run: Run) -> str:
    if run.rc is None:
        return run.output  # "generator crashed: <exception>"
    return f"gen --check exited {run.rc} ({_first(run.output)})"


def _first(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[0] if lines else "(no output)"


def run_control(name: str, catalogue: Path, disabled: frozenset[str] = frozenset()) -> Result:
    """Run one control in a fresh temporary tree; never raises."""
    c = by_name(name)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mgpipe-selftest-") as tmp:
        tree = Path(tmp).resolve()
        try:
            reason = _run_in(c, Path(catalogue).resolve(), tree, disabled)
        except PlantError as exc:
            reason = f"the plant did not apply: {exc}"
        except Exception as exc:  # noqa: BLE001
            reason = "self-test crashed: " + traceback.format_exception_only(type(exc), exc)[-1].strip()
    return Result(c.name, c.gate, c.planted, expected_text(c), FAIL if reason else PASS,
                  reason or "", round(time.perf_counter() - t0, 3))


def _run_in(c: Control, catalogue: Path, tree: Path, disabled: frozenset[str]) -> str | None:
    cat = copy_tree(catalogue, tree)
    needs_generated = c.kind in (STALE, CLEAN)
    if needs_generated and not (tree / "generated").is_dir():
        return f"no generated/ directory beside {catalogue}, expected the committed outputs"
    for edit in c.edits:
        edit.run(tree, cat.name)
    with _cwd(tree):
        if c.kind == G4:
            from mgpipe.gen.g4check import judge_g4
            return judge_g4(cat, tree, disabled)
        run = gen_check(cat, disabled)
    if c.kind == GATE:
        return judge_gate(c, run)
    if c.kind == STALE:
        return judge_stale(c, run, cat.name)
    if c.kind == CLEAN:
        return judge_clean(run)
    return f"unknown control kind {c.kind!r}"


def run_controls(controls: list[Control], catalogue: Path, disabled: frozenset[str] = frozenset(),
                 jobs: int = 2) -> list[Result]:
    """Every control's result, in table order; ``jobs`` > 1 runs them in a process pool."""
    names = [c.name for c in controls]
    if jobs <= 1 or len(names) <= 1:
        return [run_control(n, catalogue, disabled) for n in names]
    # the slowest controls first, so the two workers finish together
    slow = {STALE: 0, G4: 1, CLEAN: 2}
    order = sorted(range(len(names)), key=lambda i: slow.get(controls[i].kind, 3))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {i: pool.submit(run_control, names[i], catalogue, disabled) for i in order}
        return [futures[i].result() for i in range(len(names))]


__all__ = ["FAIL", "GATE_GROUPS", "PASS", "Result", "copy_tree", "gen_check", "run_control",
           "run_controls"]
