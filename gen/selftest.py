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
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from mgpipe.gen.cache import LAYOUT_DIR_ENV
from mgpipe.gen.catalogue import is_mobilegl_tree
from mgpipe.gen.controls import CLEAN, G4, GATE, STALE, Control, by_name
from mgpipe.gen.errors import EXIT_BAD_INPUT, GenError, GenErrors, exit_code_for
from mgpipe.gen.gates import GATES
from mgpipe.gen.realgates import GATES as REAL_GATES
from mgpipe.gen.plants import PlantError

PASS, FAIL, NA = "PASS", "FAIL", "N/A"
EXIT_STALE = 1
#: every name ``build(disabled=...)`` understands
GATE_GROUPS: tuple[str, ...] = tuple(dict.fromkeys((
    *(name for name, _ in GATES), "render-state", *(name for name, _ in REAL_GATES), "ownership",
    "verb-stamps")))
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
    follow_on: tuple[str, ...] = ()  # errors that followed a root cause (not printed)


def copy_tree(catalogue: Path, dest: Path, out: Path | None = None) -> Path:
    """``dest/<catalogue name>`` (with include/) and ``dest/generated`` beside it: the
    outputs ``out`` names, else ``generated/`` beside the catalogue."""
    catalogue = Path(catalogue)
    cat = dest / catalogue.name
    shutil.copytree(catalogue, cat, ignore=shutil.ignore_patterns("__pycache__"))
    gen = Path(out) if out is not None else catalogue.parent / "generated"
    if gen.is_dir() and (out is not None or not is_mobilegl_tree(catalogue)):
        shutil.copytree(gen, dest / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    return cat


@dataclass(frozen=True)
class Setup:
    """What every control of one run shares: the tree's include directories (absolute, so
    the copy compiles against the original's out-of-tree headers), whether there are
    outputs to diff, and the refusals of the unplanted tree (its baseline: a control is
    judged on what its plant adds)."""

    include_dirs: tuple[Path, ...] | None = None
    out: Path | None = None
    baseline: frozenset[str] = frozenset()


def gen_check(cat: Path, disabled: frozenset[str], setup: Setup | None = None) -> Run:
    """`mgpipe gen --check` on ``cat`` in-process: exit code and everything it printed.

    A MobileGL-shaped tree is diffed only against outputs ``--out`` named (its own
    ``generated/`` holds another generator's files); without them the run is the build."""
    from mgpipe.cmd_gen import check
    from mgpipe.gen.build import LOCK_FILE, build
    from mgpipe.gen.lock import LockPolicy
    from mgpipe.gen.render import render_all

    setup = setup or Setup()
    out = io.StringIO()
    try:
        real = is_mobilegl_tree(cat)
        private = bool(os.environ.get(LAYOUT_DIR_ENV))  # self-test's own layout cache only
        built = build(cat, disabled=disabled, use_cache=private,
                      lock=None if real and setup.out is None else LockPolicy(cat.parent / "generated"),
                      include_dirs=setup.include_dirs)
        if real and setup.out is None:
            return Run(0, out.getvalue())
        files = {cat.parent / "generated" / o.name: o.text for o in render_all(built.model)}
        if built.lock_text:
            files[cat / LOCK_FILE] = built.lock_text
        return Run(EXIT_STALE if check(files, out) else 0, out.getvalue())
    except (GenError, GenErrors) as exc:
        # a MobileGL tree's headers compile its previous outputs, which refuse some defects
        # themselves (HEADER-COMPILE); the gate's own line then follows that root cause
        follow = tuple(str(e) for e in exc.follow_on) if isinstance(exc, GenErrors) else ()
        return Run(exit_code_for(exc, out), out.getvalue(), follow)
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


def judge_gate(c: Control, run: Run, baseline: frozenset[str] = frozenset(),
               expect: tuple[str, ...] | None = None) -> str | None:
    """None when ``run`` is ``c``'s gate refusing for its own reason, else why not. Lines of
    the unplanted tree's own refusals (``baseline``) are not the plant's."""
    expect = c.expect if expect is None else expect
    if run.rc != EXIT_BAD_INPUT:
        return f"{_outcome(run)}, expected exit 2 with {c.gate}"
    errors = [(g, line) for g, line in _error_lines(run.output) if line not in baseline]
    others = [line for gate, line in errors if gate != c.gate and gate not in c.also]
    if others:
        return f"failed for another reason: {others[0]}"
    mine = [line for gate, line in errors if gate == c.gate]
    roots = {g for g, _ in errors}
    if not mine and roots and roots <= ({c.gate} | c.also):
        # the plant's root cause is a documented collateral: the gate's own verdict follows it
        mine = [line for gate, line in _error_lines("\n".join(run.follow_on)) if gate == c.gate]
    if not mine:
        return f"no ': {c.gate}: ' line (the gate did not fire): {_first(run.output)}"
    if not any(all(e in line for e in expect) for line in mine):
        return f"{c.gate} fired without {' + '.join(map(repr, expect))}: {mine[0]}"
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
        n = len(_error_lines(run.output))
        return f"the unplanted copy: {_outcome(run)}{f' ({n} errors)' if n > 1 else ''}, expected exit 0"
    return None


def _outcome(run: Run) -> str:
    if run.rc is None:
        return run.output  # "generator crashed: <exception>"
    return f"gen --check exited {run.rc} ({_first(run.output)})"


def _first(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[0] if lines else "(no output)"


def run_control(name: str, catalogue: Path, disabled: frozenset[str] = frozenset(),
                setup: Setup | None = None) -> Result:
    """Run one control in a fresh temporary tree; never raises."""
    from mgpipe.gen.sites import NotApplicable

    c = by_name(name)
    setup = setup or Setup()
    if setup.include_dirs is None and is_mobilegl_tree(Path(catalogue)):
        # the copy sits in a temporary directory: the original's out-of-tree includes
        setup = Setup((Path(catalogue).resolve().parent,), setup.out, setup.baseline)
    if setup.out is None and not is_mobilegl_tree(Path(catalogue)) and beside_foreign_outputs(Path(catalogue)):
        setup = Setup(setup.include_dirs, own_outputs(Path(catalogue)), setup.baseline)
    t0 = time.perf_counter()
    status = FAIL
    with tempfile.TemporaryDirectory(prefix="mgpipe-selftest-") as tmp:
        tree = Path(tmp).resolve()
        try:
            reason = _run_in(c, Path(catalogue).resolve(), tree, disabled, setup)
        except NotApplicable as exc:
            reason, status = f"not applicable: {exc}", NA
        except PlantError as exc:
            reason = f"the plant did not apply: {exc}"
        except Exception as exc:  # noqa: BLE001
            reason = "self-test crashed: " + traceback.format_exception_only(type(exc), exc)[-1].strip()
    if not reason:
        status = PASS
    return Result(c.name, c.gate, c.planted, expected_text(c), status,
                  reason or "", round(time.perf_counter() - t0, 3))


def beside_foreign_outputs(catalogue: Path) -> bool:
    """An original-shape catalogue whose neighbour ``generated/`` is the bundled tree's
    outputs (``mgpipe.gen.ORIGINAL_DIR`` in a checkout or an install), not its own."""
    from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR

    beside = (Path(catalogue).resolve().parent / "generated").resolve()
    return beside == GENERATED_DIR.resolve() and Path(catalogue).resolve() != CATALOGUE_DIR.resolve()


_OWN_OUTPUTS: dict[Path, Path] = {}


def own_outputs(catalogue: Path, into: Path | None = None,
                include_dirs: tuple[Path, ...] | None = None) -> Path:
    """The outputs the unplanted ``catalogue`` generates, written into ``into`` (default: a
    directory of this process, made once per catalogue and removed at exit). A tree that
    does not generate leaves it empty: its clean control says why."""
    import atexit

    from mgpipe.gen.build import build
    from mgpipe.gen.render import render_all

    catalogue = Path(catalogue).resolve()
    if into is None:
        if catalogue in _OWN_OUTPUTS:
            return _OWN_OUTPUTS[catalogue]
        into = Path(tempfile.mkdtemp(prefix="mgpipe-selftest-own-"))
        atexit.register(shutil.rmtree, into, True)
        _OWN_OUTPUTS[catalogue] = into
    try:
        model = build(catalogue, include_dirs=include_dirs, use_cache=False).model
    except (GenError, GenErrors):
        return into
    for o in render_all(model):
        (into / o.name).write_text(o.text, encoding="utf-8")
    return into


def _run_in(c: Control, catalogue: Path, tree: Path, disabled: frozenset[str],
            setup: Setup) -> str | None:
    from mgpipe.gen.sites import NotApplicable

    if c.kind in (STALE, G4) and is_mobilegl_tree(catalogue) and setup.out is None:
        raise NotApplicable("the tree's generated/ is another generator's; --out names mgpipe's outputs")
    cat = copy_tree(catalogue, tree, setup.out)
    needs_generated = c.kind in (STALE, CLEAN) and not (is_mobilegl_tree(catalogue) and setup.out is None)
    if needs_generated and not (tree / "generated").is_dir():
        return f"no generated/ directory beside {catalogue}, expected the committed outputs"
    facts: dict[str, str] = {}
    for edit in c.edits:
        if c.shapes and not shapes_of(catalogue) & set(c.shapes):
            raise NotApplicable(f"its plant is written against the "
                                f"{', '.join(SHAPE_WORDS.get(x, x) for x in c.shapes)} catalogue's text")
        got = edit.run(tree, cat.name)
        facts.update(got or {})
    with _cwd(tree):
        if c.kind == G4:
            from mgpipe.gen.g4check import judge_g4
            return judge_g4(cat, tree, disabled, setup.include_dirs)
        run = gen_check(cat, disabled, setup)
    if c.kind == GATE:
        return judge_gate(c, run, setup.baseline, tuple(e.format(**facts) for e in c.expect))
    if c.kind == STALE:
        return judge_stale(c, run, cat.name)
    if c.kind == CLEAN:
        return judge_clean(run)
    return f"unknown control kind {c.kind!r}"


#: how a reason names a tree shape ("bundled" is the original shape's internal name)
SHAPE_WORDS = {"bundled": "original-shape", "mobilegl": "MobileGL-shaped", "overlay": "bundled MG_Pipe"}


def shapes_of(catalogue: Path) -> set[str]:
    """The shape names a control's ``shapes`` is matched against: the tree's shape, plus
    ``overlay`` for a MobileGL-shaped tree carrying mgpipe's overlay (the bundled tree)."""
    from mgpipe.gen.build import OVERLAY_HEADER

    shape = shape_of(catalogue)
    return {shape, "overlay"} if shape == "mobilegl" and (Path(catalogue) / OVERLAY_HEADER).is_file() else {shape}


def shape_of(catalogue: Path) -> str:
    return "mobilegl" if is_mobilegl_tree(catalogue) else "bundled"


def baseline_of(catalogue: Path, setup: Setup) -> frozenset[str]:
    """The unplanted tree's own refusals, line by line (empty for a tree that generates)."""
    with tempfile.TemporaryDirectory(prefix="mgpipe-selftest-") as tmp:
        tree = Path(tmp).resolve()
        cat = copy_tree(Path(catalogue).resolve(), tree, setup.out)
        with _cwd(tree):
            run = gen_check(cat, frozenset(), Setup(setup.include_dirs, None))
    return frozenset(line for _, line in _error_lines(run.output)) if run.rc == EXIT_BAD_INPUT else frozenset()


def run_controls(controls: list[Control], catalogue: Path, disabled: frozenset[str] = frozenset(),
                 jobs: int = 2, setup: Setup | None = None,
                 progress: Callable[[int, int, Result], None] | None = None) -> list[Result]:
    """Every control's result, in table order; ``jobs`` > 1 runs them in a process pool.
    ``progress(done, total, result)`` is called as each control finishes."""
    setup = setup or Setup()
    names = [c.name for c in controls]
    done = 0
    with private_layout_cache():
        return _run_all(controls, names, catalogue, disabled, jobs, setup, progress)


@contextmanager
def private_layout_cache() -> Iterator[None]:
    """Layout entries of planted copies go to a temporary directory of this run (shared by
    its workers), never to the user's cache; an enclosing one is reused."""
    if os.environ.get(LAYOUT_DIR_ENV):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="mgpipe-selftest-layouts-") as layouts:
        os.environ[LAYOUT_DIR_ENV] = layouts
        try:
            yield
        finally:
            os.environ.pop(LAYOUT_DIR_ENV, None)


def _run_all(controls, names, catalogue, disabled, jobs, setup, progress):  # type: ignore[no-untyped-def]
    done = 0

    def tick(r: Result) -> Result:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(names), r)
        return r

    if jobs <= 1 or len(names) <= 1:
        return [tick(run_control(n, catalogue, disabled, setup)) for n in names]
    # the slowest controls first, so the two workers finish together
    slow = {STALE: 0, G4: 1, CLEAN: 2}
    order = sorted(range(len(names)), key=lambda i: slow.get(controls[i].kind, 3))
    pool = ProcessPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(run_control, names[i], catalogue, disabled, setup): i for i in order}
        results: dict[int, Result] = {}
        for fut in as_completed(futures):
            results[futures[fut]] = tick(fut.result())
    except KeyboardInterrupt:  # Ctrl-C: leave now, not after the pending controls
        _abandon(pool)
        raise
    pool.shutdown(wait=True)
    return [results[i] for i in range(len(names))]


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Drop the pending controls and stop the workers running the others."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        if proc.is_alive():
            proc.terminate()
    for proc in workers:
        proc.join(timeout=5)


__all__ = ["FAIL", "GATE_GROUPS", "NA", "PASS", "Result", "Setup", "baseline_of", "beside_foreign_outputs",
           "copy_tree", "own_outputs",
           "gen_check", "private_layout_cache", "run_control", "run_controls", "shape_of"]
