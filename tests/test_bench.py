"""mgpipe bench: the quick mode's structural guard holds, and goes red when planted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mgpipe.cli import main
from mgpipe.runtime.harness.bench import guard
from mgpipe.runtime.harness.bench.cli import BASELINE
from mgpipe.runtime.harness.bench.measure import Cell, Sizes, census, measure_cell
from mgpipe.runtime.harness.bench.pipe import BACKENDS, TRANSPORTS
from mgpipe.runtime.harness.bench.run import QUICK, Plan, Progress, run
from mgpipe.runtime.harness.bench.strategies import STRATEGIES, BlockPush, Strategy
from mgpipe.runtime.harness.bench.workloads import WORKLOADS, BlendToggle, ViewportChurn

SMALL = {w: Sizes(s.draws // 2 if w != "MixedFrame" else 200, 3, 1) for w, s in QUICK.items()}


def _quiet(n: int) -> Progress:
    import io

    return Progress(n, io.StringIO())


def _plan(**kw) -> Plan:
    base = dict(sizes=SMALL, transports=["monolith"], backends=["recorder"], timing=False)
    base.update(kw)
    return Plan(**base)


def _bad(findings: list[guard.Finding]) -> set[str]:
    return {f.check for f in findings if not f.ok}


@pytest.fixture(scope="module")
def structural_run() -> tuple[list[Cell], list[Cell]]:
    return run(_plan(), _quiet)


def test_quick_structural_guard_holds(structural_run):
    cells, extra = structural_run
    findings = guard.structural(cells, extra)
    assert findings and not _bad(findings), [f.line() for f in findings if not f.ok]
    checks = {f.check for f in findings}
    assert {
        "cso-per-pipeline-state",
        "dynamic-mints-none",
        "blend-toggle-2-csos",
        "cso-per-distinct-block",
        "a-bytes-le-tenth-of-b",
        "same-state-every-draw",
        "blend-toggle-no-steady-hash",
        "transition-off",
    } <= checks


def test_facts_users_rely_on(structural_run):
    cells, extra = structural_run
    by = {(c.workload, c.strategy): c.structure for c in cells if c.status == "ok"}
    # BlendToggle: exactly 2 CSOs at two sizes; the dynamic churn mints nothing.
    assert by[("BlendToggle", "a")]["csos_minted"] == 2
    assert [c.structure["csos_minted"] for c in extra] == [2]
    assert extra[0].draws_per_frame != SMALL["BlendToggle"].draws
    assert by[("ViewportChurn", "a")]["csos_minted"] == 1
    # (c) mints one CSO per draw when every draw's block is new.
    bt = by[("BlendToggle", "c")]
    assert bt["csos_minted"] == bt["blocks_seen"] == SMALL["BlendToggle"].draws * 3
    # (b) ships the whole block: at least its 1168 bytes per draw on the wire.
    assert by[("NoChange", "b")]["render_state_bytes_per_draw"] >= 1168
    assert by[("NoChange", "a")]["render_state_bytes_per_draw"] == 0
    # (d) makes a record per setter: BlendToggle sets 7 values per draw.
    assert by[("BlendToggle", "d")]["records_by_call"]["SetDynamicState"] >= 6 * by[
        ("BlendToggle", "d")]["steady_draws"]  # fmt: skip


def test_structure_matches_committed_baseline(structural_run):
    cells, _ = structural_run
    doc = json.loads(BASELINE.read_text())
    quick = [c for c in run(_plan(sizes=QUICK, workloads=["NoChange", "BlendToggle"]), _quiet)[0]]
    findings = guard.against_baseline(quick, BASELINE)
    assert findings and not _bad(findings), [f.line() for f in findings if not f.ok]
    assert "BlendToggle/a" in doc["structure"]


def test_planted_per_draw_minting_goes_red():
    """(a) replaced by a strategy that mints a CSO per distinct block: three checks go red."""
    planted = dict(STRATEGIES, a=replace(STRATEGIES["c"], key="a"))
    cells, extra = run(
        _plan(workloads=["BlendToggle"], strategies=["a"], strategy_table=planted), _quiet
    )
    bad = _bad(guard.structural(cells, extra))
    assert {"cso-per-pipeline-state", "blend-toggle-2-csos", "dynamic-mints-none"} <= bad


def test_planted_heavy_a_breaks_the_bytes_claim():
    planted = dict(STRATEGIES, b=replace(STRATEGIES["a"], key="b"))
    cells, extra = run(_plan(workloads=["NoChange"], strategies=["a", "b"], strategy_table=planted),
                       _quiet)  # fmt: skip
    assert "a-bytes-le-tenth-of-b" in _bad(guard.structural(cells, extra))


class _StaleBlock(BlockPush):
    """A planted (b) that ships the first block it ever saw, forever."""

    def validate(self, rs) -> None:
        self.first = getattr(self, "first", rs.block_bytes())
        self._emit("SetResidualValueState", {}, blob=self.first)


def test_planted_transition_cache_in_e_goes_red():
    """(e) that still answers from the transition cache: red (the switch is load-bearing)."""
    planted = dict(STRATEGIES, e=replace(STRATEGIES["a"], key="e"))
    cells, extra = run(_plan(workloads=["BlendToggle"], strategies=["e"], strategy_table=planted),
                       _quiet)  # fmt: skip
    assert "transition-off" in _bad(guard.structural(cells, extra))
    honest, _ = run(_plan(workloads=["BlendToggle"], strategies=["a", "e"]), _quiet)
    by = {c.strategy: c.structure["cso_stats_steady"] for c in honest}
    assert by["a"]["transition_hits"] > 0 and by["a"]["hashes"] == 0
    assert by["e"]["transition_hits"] == 0 and by["e"]["hashes"] == by["a"]["transition_hits"]


def test_planted_wrong_state_goes_red():
    planted = dict(STRATEGIES, b=replace(STRATEGIES["b"], install=lambda c: setattr(
        c.tr, "cso", _StaleBlock(c.em.emit))))  # fmt: skip
    cells, extra = run(_plan(workloads=["ViewportChurn"], strategies=["a", "b"],
                             strategy_table=planted), _quiet)  # fmt: skip
    assert "same-state-every-draw" in _bad(guard.structural(cells, extra))


def _timed(workload: str, strategy: str, ns: float) -> Cell:
    return Cell(workload, strategy, "monolith", "recorder", draws_per_frame=1,
                structure={"records_per_draw": 1, "wire_bytes_per_draw": 1,
                           "python_calls_per_draw": 1}, timing={"client_ns_per_draw": ns, "client_ns_per_draw_p50": ns})  # fmt: skip


def test_ratio_guard_is_relative_and_goes_red(tmp_path: Path):
    base = tmp_path / "base.json"
    base.write_text(json.dumps(guard.baseline_doc([_timed("W", "a", 100), _timed("W", "d", 600)])))
    # a machine twice as slow everywhere: the same ratio, green
    assert not _bad(guard.against_baseline([_timed("W", "a", 200), _timed("W", "d", 1200)], base))
    # (a) lost more than RATIO_SLACK of its lead over (d): red
    slow_a = 100 * guard.RATIO_SLACK * 1.5
    assert "ratio-vs-a" in _bad(
        guard.against_baseline([_timed("W", "a", slow_a), _timed("W", "d", 600)], base)
    )


def test_planted_slow_a_goes_red_in_a_real_run(tmp_path: Path):
    import time

    def spin(c) -> None:
        validate = c.tr.cso.validate  # runs before every draw

        def slow(rs) -> None:
            end = time.thread_time_ns() + 3_000_000
            while time.thread_time_ns() < end:
                pass
            validate(rs)

        c.tr.cso.validate = slow

    sizes = {"BlendToggle": Sizes(16, 3, 1)}
    honest, _ = run(
        _plan(sizes=sizes, workloads=["BlendToggle"], strategies=["a", "b"], timing=True), _quiet
    )
    base = tmp_path / "base.json"
    base.write_text(json.dumps(guard.baseline_doc(honest)))
    planted = dict(STRATEGIES, a=replace(STRATEGIES["a"], install=spin))
    slow, _ = run(_plan(sizes=sizes, workloads=["BlendToggle"], strategies=["a", "b"], timing=True,
                        strategy_table=planted), _quiet)  # fmt: skip
    assert "ratio-vs-a" in _bad(guard.against_baseline(slow, base))


def test_workloads_are_deterministic_and_seeded():
    sizes, a = Sizes(8, 2, 1), STRATEGIES["a"]
    one = census(BlendToggle, a, "monolith", "recorder", sizes, seed=7)
    two = census(BlendToggle, a, "monolith", "recorder", sizes, seed=7)
    other = census(BlendToggle, a, "monolith", "recorder", sizes, seed=8)
    assert one["draw_state_digest"] == two["draw_state_digest"] != other["draw_state_digest"]


def test_unavailable_rows_are_reported_not_faked():
    cells, _ = run(_plan(workloads=["NoChange"], strategies=["a"], transports=None,
                         backends=None), _quiet)  # fmt: skip
    missing = {(c.transport, c.backend) for c in cells if c.status == "not available"}
    for b in ("gles", "vulkan"):
        assert (b not in BACKENDS) == (("*", b) in missing)
    assert ("spawn" not in TRANSPORTS) == (("spawn", "*") in missing)
    assert all(not c.timing for c in cells if c.status != "ok")
    off = Strategy("e", "x", "x", unavailable=lambda: "no switch")
    cell = measure_cell(ViewportChurn, off, "monolith", "recorder", Sizes(4, 2, 1), 1)
    assert (cell.status, cell.reason, cell.structure) == ("not available", "no switch", {})


def test_cli_refuses_a_missing_baseline_before_running(tmp_path: Path, capsys):
    assert main(["bench", "--quick", "--baseline", str(tmp_path / "none.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "none.json: no such baseline file" in captured.err


def test_cli_refuses_unknown_names(capsys):
    assert main(["bench", "--workload", "Nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown workload 'Nope'" in err[0] and "BlendToggle" in err[0]


def test_cli_json_and_plot(tmp_path: Path, capsys):
    out = tmp_path / "r.json"
    rc = main(["bench", "--quick", "--workload", "NoChange", "--strategy", "a", "--strategy", "b",
               "--transport", "monolith", "--json", str(out), "--plot", str(tmp_path)])  # fmt: skip
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["ok"] and {c["strategy"] for c in doc["cells"] if c["status"] == "ok"} == {"a", "b"}
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "bytes_per_draw.png", "cpu_per_draw.png", "hash_skip.png"]  # fmt: skip
    assert "client ns/d" in capsys.readouterr().out
    assert set(WORKLOADS) == {"BlendToggle", "NoChange", "ViewportChurn", "MixedFrame"}


def test_backend_counters_are_read_where_backends_keep_them():
    from mgpipe.runtime.harness.bench.measure import backend_counters

    class Gl:
        def stats(self):
            return {"gl_calls": 7, "draws": 2, "renderer": "x"}

    class Snap:
        def snapshot(self):
            return {"pipelines_created": 2, "device": "gpu", "validation": True}

    class Vk:
        counters = Snap()

    assert backend_counters(Gl()) == {"gl_calls": 7, "draws": 2}
    assert backend_counters(Vk()) == {"pipelines_created": 2}
    assert backend_counters(object()) == {}
