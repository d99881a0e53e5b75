"""`mgpipe self-test`: every gate is seen red for its own reason, and green when unplanted.

The whole self-test runs once on each tree (as a user runs it, `python -m mgpipe self-test
--json`, timed): the bundled catalogue (catalogue/MG_Pipe, the default) and the original
shape (`--catalogue catalogue`, diffed against its own outputs, generated on the fly); each
control is then its own test case on each. Further cases prove the verdicts mean
something: switching a gate off turns its control FAIL by name, and a plant that matches
nothing, a defect caught by the wrong gate, a comparator regression or a missing g++ all
FAIL rather than pass.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time

import pytest

from mgpipe import cli
from mgpipe.gen import CATALOGUE_DIR, ORIGINAL_DIR, REPO_ROOT, controls, g4_verify
from mgpipe.gen.controls import CONTROLS, Control
from mgpipe.gen.gates import GATES
from mgpipe.gen.plants import Sub
from mgpipe.gen.selftest import FAIL, NA, PASS, run_control

NAMES = [c.name for c in CONTROLS]
#: controls of lists only MobileGL's tree has: N/A on the bundled catalogue, by name and
#: reason (tests/test_real_tree.py runs them on the snapshot)
MOBILEGL_ONLY = {"documented-count", "ownership-phase", "ownership-record-supplied", "chunk-table",
                 "ownership-field", "ownership-missing", "ownership-twice", "ownership-forward",
                 "verify-list", "verb-stamp-missing", "dirty-surface-twice",
                 "subsystem-deps", "fatal-family-twice", "any-size-pin", "any-coverage-call",
                 "any-coverage-accessor", "any-fill-points"}
#: controls N/A on the bundled tree, by name and reason: the plants written against the
#: original shape's text (``shapes=("bundled",)``); G4's runs (its headers declare VecBase)
BUNDLED_NA = {c.name: r"its plant is written against the original-shape catalogue's text"
              for c in CONTROLS if c.shapes == ("bundled",) and c.edits}
#: controls N/A on the original shape besides MOBILEGL_ONLY: plants written against the bundled
#: tree's text (``shapes=("overlay",)``) or a MobileGL-shaped tree's file names (``("mobilegl",)``)
ORIGINAL_NA = {**{c.name: r"its plant is written against the bundled MG_Pipe catalogue's text"
                  for c in CONTROLS if c.shapes == ("overlay",)},
               **{c.name: r"its plant is written against the MobileGL-shaped catalogue's text"
                  for c in CONTROLS if c.shapes == ("mobilegl",)}}
#: CPU seconds of one whole run (children included): a budget per control (45 s for the 96
#: controls of before; ~17-30 s measured then, ~32-54 s for 114 on a loaded machine)
CPU_LIMIT_S = 0.6 * len(NAMES)


def _digest() -> dict[str, bytes]:
    return {str(p): p.read_bytes() for d in ("catalogue", "generated")
            for p in sorted((REPO_ROOT / d).rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module", params=["bundled", "original"])
def full_run(request) -> dict:
    before = _digest()
    t0 = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    where = [] if request.param == "bundled" else ["--catalogue", "catalogue"]
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "self-test", "--json", *where],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - t0
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    print(f"\nmgpipe self-test: {len(NAMES)} controls, wall {wall:.1f} s, CPU {cpu:.1f} s")
    doc = json.loads(proc.stdout)
    reasons = dict(re.findall(r"^FAIL (\S+): (.*)$", proc.stderr, re.M))
    return {"rc": proc.returncode, "doc": doc, "reasons": reasons, "wall": wall, "cpu": cpu,
            "stderr": proc.stderr, "untouched": _digest() == before, "tree": request.param}


@pytest.mark.parametrize("name", NAMES)
def test_control_passes(full_run: dict, name: str) -> None:
    row = next(r for r in full_run["doc"]["controls"] if r["name"] == name)
    if full_run["tree"] == "original" and name in MOBILEGL_ONLY:
        assert row["status"] == NA, row
        assert re.search(rf"^N/A {re.escape(name)}: not applicable: the catalogue('s vocabulary)? "
                         rf"(has|defines) no ",
                         full_run["stderr"], re.M)
        return
    if full_run["tree"] == "original" and name in ORIGINAL_NA:
        assert row["status"] == NA, row
        assert re.search(rf"^N/A {re.escape(name)}: not applicable: {ORIGINAL_NA[name]}",
                         full_run["stderr"], re.M), full_run["stderr"][-2000:]
        return
    if full_run["tree"] == "bundled" and name in BUNDLED_NA:
        assert row["status"] == NA, row
        assert re.search(rf"^N/A {re.escape(name)}: not applicable: {BUNDLED_NA[name]}",
                         full_run["stderr"], re.M), full_run["stderr"][-2000:]
        return
    assert row["status"] == PASS, full_run["reasons"].get(name, full_run["stderr"][-2000:])


def test_the_bundled_tree_hosts_its_stale_lock_and_clean_controls(full_run: dict) -> None:
    """On the default tree the controls that need its outputs and its lock run (none of
    them N/A): the diff gate, the lock's gates, the control of the controls."""
    if full_run["tree"] != "bundled":
        return
    status = {r["name"]: r["status"] for r in full_run["doc"]["controls"]}
    assert ORIGINAL_NA  # the bundled tree's own stale control
    for name in ("stale-hand-edit", "g4-float-bits", *ORIGINAL_NA, "any-append-only-moved", "any-lock-opcode-edited", "any-lock-missing",
                 "clean"):
        assert status[name] == PASS, (name, full_run["reasons"].get(name))


def test_progress_lines_as_it_goes(full_run: dict) -> None:
    lines = re.findall(r"^\[(\d+)/(\d+)\] (PASS|FAIL|N/A) (\S+) \(", full_run["stderr"], re.M)
    assert [int(d) for d, _, _, _ in lines] == list(range(1, len(NAMES) + 1))
    assert {n for _, _, _, n in lines} == set(NAMES)


def test_every_control_passes_and_exit_is_0(full_run: dict) -> None:
    assert full_run["rc"] == 0, full_run["stderr"][-2000:]


def test_json_shape(full_run: dict) -> None:
    doc = full_run["doc"]
    assert list(doc) == ["controls"]
    assert [r["name"] for r in doc["controls"]] == NAMES
    for r in doc["controls"]:
        assert set(r) == {"name", "gate", "planted", "expected", "status"}
        assert r["status"] in (PASS, FAIL, NA)
        assert all(isinstance(v, str) and v for v in r.values())


@pytest.mark.serial  # a CPU budget: tests/xdist_plan.py (2 workers inflate CPU time ~1.3x)
def test_cpu_time(full_run: dict) -> None:
    assert full_run["cpu"] < CPU_LIMIT_S, f"self-test took {full_run['cpu']:.1f} CPU s"


def test_the_control_of_the_controls_is_listed() -> None:
    clean = controls.by_name("clean")
    assert clean.kind == controls.CLEAN and not clean.edits


#: gate -> (test file, test) planting its defect: FIELD-MASK needs 129 PipeInputs fields, a
#: model grown past the mask rather than a catalogue edit
CONTROLLED_IN_PYTEST = {
    "FIELD-MASK": ("tests/test_generator.py", "test_a_field_set_past_the_fill_mask_is_refused_by_name"),
}


def test_every_gate_has_a_control() -> None:
    """Every gate name the generator can emit is some control's gate."""
    emitted: set[str] = set()
    for src in (REPO_ROOT / "gen").glob("*.py"):
        if src.name in ("controls.py", "selftest.py", "g4check.py", "plants.py"):
            continue
        if src.name == "lockhistory.py":  # git history, not a catalogue: controls in test_lock.py
            continue
        emitted |= set(re.findall(r'"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)"', src.read_text()))
    # a gate whose plant is not a catalogue edit has its control as a test, named here
    for gate, (path, test) in CONTROLLED_IN_PYTEST.items():
        assert f"def {test}(" in (REPO_ROOT / path).read_text(), (gate, path, test)
    assert emitted - {c.gate for c in CONTROLS} - set(CONTROLLED_IN_PYTEST) == set()

    from mgpipe.gen.realgates import GATES as REAL_GATES

    groups = {name for name, _ in GATES} | {"render-state"} | {n for n, _ in REAL_GATES}
    groups |= {"ownership", "verb-stamps"}
    assert groups - {c.registry for c in CONTROLS} == set()


def test_k_selects_by_substring(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["self-test", "-k", "append-only", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["controls"]] == ["append-only-moved", "append-only-deleted",
                                                    "any-append-only-moved"]
    assert [r["status"] for r in doc["controls"]] == [NA, NA, PASS]  # the default tree: MG_Pipe


def test_plain_output_one_line_per_control(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["self-test", "--catalogue", str(ORIGINAL_DIR), "-k", "wait-class", "-j", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(controls.select(["wait-class"])) + 1  # the controls + the summary
    assert lines[0].startswith("PASS  wait-class-reply-slot") and "kWaitNone" in lines[0]
    assert "expected: exit 2, ': WAIT-CLASS: '" in lines[0]


@pytest.mark.parametrize("tree, group, name, gate", [
    ("original", "wait-class", "wait-class-reply-slot", "WAIT-CLASS"),
    ("original", "append-only", "append-only-moved", "APPEND-ONLY"),
    ("original", "ownership", "ownership-two", "OWNERSHIP"),
    ("original", "field-lists", "field-missing", "FIELD-MISSING"),
    ("original", "call-tokens", "unknown-flag", "UNKNOWN-FLAG"),
    ("original", "render-state", "setter-both-writes-dynamic", "SETTER-CONSISTENCY"),
    ("original", "wire-pod", "pod-pointer", "WIRE-POD"),
    ("original", "names", "name-keyword-call", "NAME-RESERVED"),
    ("bundled", "append-only", "any-append-only-moved", "APPEND-ONLY"),
    ("bundled", "wait-class", "any-wait-class-reply", "WAIT-CLASS"),
])
def test_disabling_a_gate_turns_its_control_fail(
    capsys: pytest.CaptureFixture[str], tree: str, group: str, name: str, gate: str
) -> None:
    where = str(ORIGINAL_DIR if tree == "original" else CATALOGUE_DIR)
    assert cli.main(["self-test", "--catalogue", where, "-k", name, "-j", "1", "--disable-gate", group]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if name in line)
    assert line.startswith(f"FAIL  {name}") and gate in line
    reason = next(line for line in out.splitlines() if line.strip().startswith("reason:"))
    assert "crashed" not in reason and gate in reason  # the gate is off: never a crash
    if group in ("render-state", "wire-pod", "names") or tree == "bundled" and group == "append-only":
        # nothing else sees these defects (a row swap under an unedited lock: only the diff)
        assert reason.strip().startswith("reason: gen --check exited 1 (") and ": STALE: " in reason
        assert reason.endswith(f"expected exit 2 with {gate}")


def test_unknown_gate_group_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["self-test", "--disable-gate", "no-such-gate"]) == 2
    assert ": UNKNOWN-GATE: " in capsys.readouterr().err


def _with(monkeypatch: pytest.MonkeyPatch, control: Control) -> None:
    monkeypatch.setattr(controls, "CONTROLS", (*CONTROLS, control))


def test_a_plant_that_matches_nothing_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _with(monkeypatch, Control("bogus", "WAIT-CLASS", "nothing", ("x",),
                               (Sub("PipeCalls.def", "X(NoSuchCall,", "kNone", "kHasBlob"),), shapes=()))
    r = run_control("bogus", CATALOGUE_DIR)
    assert r.status == FAIL and "did not apply" in r.reason and "NoSuchCall" in r.reason


def test_a_defect_caught_by_another_gate_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _with(monkeypatch, Control("wrong-gate", "WAIT-CLASS", "a bad flag", ("Flush",),
                               (Sub("PipeCalls.def", "X(Flush,", "kNone", "kHasBlobb"),), shapes=()))
    r = run_control("wrong-gate", CATALOGUE_DIR)
    assert r.status == FAIL and "another reason" in r.reason and "UNKNOWN-FLAG" in r.reason


def test_g4_control_fails_when_the_real_comparator_compares_floats_by_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    how = g4_verify._how
    monkeypatch.setattr(g4_verify, "_how", lambda m, listed: "value" if m.is_float and m.count == 1
                        and m.struct is None else how(m, listed))
    r = run_control("g4-float-bits", ORIGINAL_DIR)  # where G4 applies (see BUNDLED_NA)
    assert r.status == FAIL and "real comparator" in r.reason


def test_g4_control_without_gxx_is_a_fail_not_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    import mgpipe.gen.g4check as g4check

    monkeypatch.setattr(g4check.shutil, "which", lambda _name: None)
    r = run_control("g4-float-bits", ORIGINAL_DIR)
    assert r.status == FAIL and "g++ not found" in r.reason


def test_self_test_leaves_the_catalogue_untouched(full_run: dict) -> None:
    assert full_run["untouched"]


def test_catalogue_dir_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["self-test", "--catalogue", str(CATALOGUE_DIR), "-k", "clean", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["controls"][0]["status"] == PASS


def test_adding_a_call_is_a_catalogue_change_only(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """Append a valid call to a copy of the bundled tree, regenerate, and the whole
    self-test is still green: no control (and no count) assumes which call comes last or
    how many there are. In MobileGL's shape a call is its row and the documented count
    (MGP_CALL_LIST_DOCUMENTED_COUNT) that MobileGL keeps beside the list."""
    from mgpipe.gen.plants import AppendRow
    from mgpipe.gen.sites import SetValue

    from conftest import copy_bundled

    cat, out = copy_bundled(tmp_path)
    AppendRow("PipeCalls.def", "MGP_CALL_LIST",
              "X(SelfTestAdded, MGPFlush, kCtxState, kNone, kWaitNone)").run(tmp_path / "catalogue", cat.name)
    SetValue("MGP_CALL_LIST_DOCUMENTED_COUNT", "{rows}").run(tmp_path / "catalogue", cat.name)
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert "L(SelfTestAdded," in (cat / "PipeCalls.lock").read_text()
    assert cli.main(["self-test", "--catalogue", str(cat), "--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["controls"]] == NAMES
    assert all(r["status"] == (NA if r["name"] in BUNDLED_NA else PASS) for r in doc["controls"]), [
        r for r in doc["controls"] if r["status"] != (NA if r["name"] in BUNDLED_NA else PASS)]


def test_the_documented_controls_table_lists_every_control() -> None:
    from mgpipe.gen.control_docs import PROTECTS, markdown_table

    assert set(PROTECTS) == set(NAMES)
    doc = (REPO_ROOT / "docs" / "SELFTEST.md").read_text()
    assert doc.endswith(markdown_table()), "docs/SELFTEST.md: run python -m mgpipe.gen.control_docs"
