"""mgpipe bench: the quick mode's structural guard holds, and goes red when planted."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from mgpipe.cli import main
from mgpipe.runtime.harness.bench import guard, report
from mgpipe.runtime.harness.bench.cli import BASELINE
from mgpipe.runtime.harness.bench.measure import Cell, Sizes, census, measure_cell
from mgpipe.runtime.harness.bench.pipe import BACKENDS, TRANSPORTS
from mgpipe.runtime.harness.bench.run import QUICK, Plan, Progress, run
from mgpipe.runtime.harness.bench.strategies import STRATEGIES, BlockPush, Strategy
from mgpipe.runtime.harness.bench.workloads import WORKLOADS, BlendToggle, ViewportChurn

REPO = Path(__file__).resolve().parents[1]
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
                           "python_calls_per_draw": 1}, timing={"client_ns_per_draw": ns, "client_ns_per_draw_p50": ns, "client_ns_per_draw_min": ns})  # fmt: skip


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


def test_the_ratio_reads_the_least_disturbed_frame():
    """Load only adds CPU to a frame: two of six frames of (a) disturbed fivefold move the
    median-free figure not at all, and (d)'s lead over (a) stays what it is; a uniformly
    slower (a) -- the regression -- still moves it (test_planted_slow_a_... in a real run)."""
    from mgpipe.runtime.harness.bench.measure import Frames, summarize

    def frames(per_draw: list[float]) -> Frames:
        return Frames(client=[x * 100 for x in per_draw], client_per_draw=per_draw,
                      draws=100 * len(per_draw))  # fmt: skip

    quiet_a, busy_a = [100.0] * 6, [100.0, 500.0, 100.0, 500.0, 100.0, 500.0]
    d = summarize(frames([600.0] * 6))
    for a in (quiet_a, busy_a):
        ta = summarize(frames(a))
        assert ta["client_ns_per_draw_min"] == 100.0
        cells = [replace(_timed("W", "a", 1), timing=ta), replace(_timed("W", "d", 1), timing=d)]
        assert guard.ratios(cells) == {"W": {"d": 6.0}}
    slow = summarize(frames([400.0] * 6))
    cells = [replace(_timed("W", "a", 1), timing=slow), replace(_timed("W", "d", 1), timing=d)]
    assert guard.ratios(cells) == {"W": {"d": 1.5}}


@pytest.mark.serial  # a timing ratio / CPU budget: tests/xdist_plan.py
def test_planted_slow_a_goes_red_in_a_real_run(tmp_path: Path):
    import time

    def spin(c) -> None:
        draw = c.draw_arrays  # every draw of the workload

        def slow(*args, **kwargs) -> None:
            end = time.thread_time_ns() + 3_000_000
            while time.thread_time_ns() < end:
                pass
            draw(*args, **kwargs)

        c.draw_arrays = slow

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


_CLI_SMALL = ["bench", "--quick", "--workload", "NoChange", "--strategy", "a", "--strategy", "b",
              "--transport", "monolith"]  # fmt: skip


#: the guard's timing checks: same-run ratios, held by their own tests
#: (test_ratio_guard_is_relative_and_goes_red, test_planted_slow_a_goes_red_in_a_real_run);
#: a loaded machine can move them, so the CLI's own test does not depend on them.
TIMING_CHECKS = {"ratio-vs-a"}


@pytest.mark.serial  # a timing ratio / CPU budget: tests/xdist_plan.py
def test_cli_out_and_plot(tmp_path: Path, capsys):
    """--out DIR receives the results document, its Markdown and (--plot) the charts; the
    terminal table fits 100 columns and carries its legend."""
    out = tmp_path / "new" / "dir"
    rc = main([*_CLI_SMALL, "--out", str(out), "--plot"])
    doc = json.loads((out / "results.json").read_text())
    assert rc == (0 if doc["ok"] else 1)  # the exit status is the document's verdict
    assert [f for f in doc["findings"] if not f["ok"] and f["check"] not in TIMING_CHECKS] == []
    assert {c["strategy"] for c in doc["cells"] if c["status"] == "ok"} == {"a", "b"}
    assert "### Per cell" in (out / "RESULTS.md").read_text()
    assert sorted(p.name for p in out.iterdir()) == [
        "RESULTS.md", "bytes_per_draw.png", "cpu_per_draw.png", "hash_skip.png", "results.json"]  # fmt: skip
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split()[:5] == ["workload", "s", "transport", "backend", "client"]
    # the table and its legend (a guard finding's FAIL line, printed when a timing check this
    # test tolerates misses, is a message, not a table row)
    table = [ln for ln in lines if not ln.startswith(("FAIL ", "guard:", "mgpipe bench:"))]
    assert max(map(len, table)) <= report.WIDTH
    assert "B/draw: wire bytes per draw" in captured.out and "--json" in captured.out
    assert f"mgpipe bench: wrote {out / 'hash_skip.png'}" in captured.err
    assert set(WORKLOADS) == {"BlendToggle", "NoChange", "ViewportChurn", "MixedFrame",
                              "MinecraftFrame"}  # fmt: skip


@pytest.mark.serial  # a timing ratio / CPU budget: tests/xdist_plan.py
def test_cli_json_is_a_flag_printing_the_document(tmp_path: Path, capsys):
    rc = main([*_CLI_SMALL, "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # stdout is the document and nothing else
    assert doc["format"] == report.FORMAT
    assert rc == (0 if doc["ok"] else 1)  # the exit status is the document's verdict
    bad = [f for f in doc["findings"] if not f["ok"] and f["check"] not in TIMING_CHECKS]
    assert bad == []  # every structural fact holds; timing ratios are not this test's
    assert {f["check"] for f in doc["findings"]} & TIMING_CHECKS  # the ratios were judged
    assert "guard:" in captured.err and "census" in captured.err  # verdict and progress: stderr


def test_the_table_fits_a_terminal_with_every_row(structural_run):
    cells, _ = structural_run
    long = Cell("MixedFrame", "b", "spawn", "vulkan", "not available", "x " * 150)
    text = report.table([*cells, long]) + "\n" + report.legend()
    assert max(map(len, text.splitlines())) <= report.WIDTH
    assert "x x" in text.splitlines()[-1 - len(report.legend().splitlines())]  # wrapped, kept
    legend = " ".join(report.legend().splitlines())
    for heading, _, _ in report._COLUMNS:
        assert f"{heading}: " in legend


def _one_refusal(capsys, gate: str, text: str) -> None:
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert captured.out == "" and len(err) == 1, captured  # nothing ran: no progress line
    assert err[0].startswith(f"<command line>:1:1: {gate}: ") and text in err[0], err[0]


def test_cli_plot_without_matplotlib_is_refused_before_running(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    assert main([*_CLI_SMALL, "--out", str(tmp_path), "--plot"]) == 2
    _one_refusal(capsys, "MISSING-DEPENDENCY", "pip install 'mgpipe[plot]'")
    assert not list(tmp_path.iterdir())


def test_cli_plot_never_writes_the_committed_charts_by_default(capsys):
    charts = {p: p.stat().st_mtime_ns for p in (REPO / "bench").glob("*.png")}
    assert len(charts) == 3
    assert main([*_CLI_SMALL, "--plot"]) == 2
    _one_refusal(capsys, "BAD-ARGUMENT", "--plot needs --out DIR")
    assert {p: p.stat().st_mtime_ns for p in (REPO / "bench").glob("*.png")} == charts


def test_cli_output_paths_are_checked_before_running(tmp_path: Path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main([*_CLI_SMALL, "--out", str(afile)]) == 2
    _one_refusal(capsys, "BAD-ARGUMENT", "is not a directory")
    assert main([*_CLI_SMALL, "--out", str(afile / "x")]) == 2
    _one_refusal(capsys, "BAD-ARGUMENT", f"{afile} is not a directory")
    (tmp_path / "d" / "results.json").mkdir(parents=True)
    assert main([*_CLI_SMALL, "--out", str(tmp_path / "d")]) == 2
    _one_refusal(capsys, "BAD-ARGUMENT", "results.json is a directory, expected a file path")
    assert main([*_CLI_SMALL, "--write-baseline", "--baseline", str(afile / "b.json")]) == 2
    _one_refusal(capsys, "BAD-ARGUMENT", "--baseline")


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


# -- spawn: a real row ------------------------------------------------------------------
def _spawn_plan(**kw) -> Plan:
    return _plan(transports=["monolith", "spawn"], **kw)


def test_spawn_rows_equal_monolith_and_b_is_not_faked():
    cells, _ = run(_spawn_plan(workloads=["BlendToggle"], strategies=["a", "b", "d"]), _quiet)
    by = {(c.strategy, c.transport): c for c in cells}
    b = by[("b", "spawn")]
    assert (b.status, b.structure, b.timing) == ("not available", {}, {})
    assert b.reason.startswith("on spawn: ")
    assert by[("a", "spawn")].status == by[("d", "spawn")].status == "ok"
    findings = guard.structural(cells)
    same = [f for f in findings if f.check == "spawn-equals-monolith"]
    assert len(same) == 2 and all(f.ok for f in same), [f.line() for f in same]
    assert not _bad(findings)
    s = by[("a", "spawn")].structure
    assert s["stream_digest"] == by[("a", "monolith")].structure["stream_digest"] is not None
    assert s["csos_minted"] == 2 and s["draw_state_digest"] is None


def _extra_bind_on_spawn(c) -> None:
    """A planted defect: under spawn only, one more record per draw (a bind before it)."""
    from mgpipe.runtime.transport.spawn import SpawnTransport

    if isinstance(c.transport, SpawnTransport):
        draw = c._draw_vbo

        def twice(*values):
            rs = c.tr.rs
            c.em.emit("BindRenderState", {"Cso": c.tr.cso.bound, "Version": rs.version,
                                          "PipelineVersion": rs.pipeline_version})  # fmt: skip
            return draw(*values)

        c._draw_vbo = twice


def test_planted_spawn_divergence_goes_red():
    planted = dict(STRATEGIES, a=replace(STRATEGIES["a"], install=_extra_bind_on_spawn))
    cells, _ = run(_spawn_plan(workloads=["NoChange"], strategies=["a"], strategy_table=planted),
                   _quiet)  # fmt: skip
    bad = [f for f in guard.structural(cells) if not f.ok]
    assert [f.check for f in bad] == ["spawn-equals-monolith"]
    assert "records_per_draw" in bad[0].detail and "stream_digest" in bad[0].detail


def test_spawn_timing_reads_the_server_process():
    sizes = {"NoChange": Sizes(40, 3, 1)}
    cells, _ = run(_spawn_plan(sizes=sizes, workloads=["NoChange"], strategies=["a"],
                               timing=True), _quiet)  # fmt: skip
    t = {c.transport: c.timing for c in cells}
    assert t["spawn"]["server_scope"] == "steady frames" and t["spawn"]["frames_timed"] == 2
    assert t["spawn"]["server_ns_per_draw"] > 0 and t["spawn"]["server_frame_ns_p50"] > 0
    assert t["spawn"]["server_session_ns_per_draw"] > 0  # the child's own Report, beside it
    assert t["spawn"]["backend_ns_per_draw"] is None  # not observable from here: not faked
    assert t["monolith"]["backend_ns_per_draw"] > 0


def test_a_failed_cell_is_red():
    cells, _ = run(_plan(workloads=["NoChange"], strategies=["a"]), _quiet)
    broken = replace(cells[0], status="failed", reason="RuntimeError: planted")
    assert "cell-ran" in _bad(guard.structural([broken]))
    # a backend that reports a validation message: red too
    s = dict(cells[0].structure, backend_counters={"validation_messages": 1})
    assert _bad(guard.structural([replace(cells[0], structure=s)])) == {"backend-validation-clean"}


def test_spawn_server_summary_is_narrowed_and_checked():
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.transport.spawn import SpawnTransport

    t = SpawnTransport("recorder", config={"summary": ["stats"]})
    assert set(t.close()["summary"]) == {"stats"}
    with pytest.raises(PipeFatal, match="Hello.config.summary"):
        SpawnTransport("recorder", config={"summary": "stats"})


# -- the real backends' counters ------------------------------------------------------------
VK = {"BlendToggle": Sizes(12, 3, 1)}


def test_vulkan_blend_toggle_creates_two_pipelines_at_any_n():
    cells, extra = run(_plan(sizes=VK, workloads=["BlendToggle"], strategies=["a"],
                             backends=["vulkan"], transports=["monolith", "spawn"]), _quiet)  # fmt: skip
    assert [c.status for c in cells + extra] == ["ok"] * 3
    assert [c.structure["pipelines_created"] for c in cells + extra] == [2, 2, 2]
    assert extra[0].draws_per_frame != VK["BlendToggle"].draws
    findings = guard.structural(cells, extra)
    assert not _bad(findings), [f.line() for f in findings if not f.ok]
    checks = [f.check for f in findings]
    assert checks.count("blend-toggle-2-pipelines") == 3
    assert checks.count("dynamic-creates-no-pipeline") == 2  # monolith, both sizes
    assert "spawn-equals-monolith" in checks


def test_planted_pipeline_per_draw_goes_red_on_vulkan():
    """(a) replaced by whole-block content addressing: the real backend's count goes red."""
    planted = dict(STRATEGIES, a=replace(STRATEGIES["c"], key="a"))
    cells, extra = run(_plan(sizes=VK, workloads=["BlendToggle"], strategies=["a"],
                             backends=["vulkan"], strategy_table=planted), _quiet)  # fmt: skip
    assert cells[0].structure["pipelines_created"] == 3 * VK["BlendToggle"].draws
    bad = _bad(guard.structural(cells, extra))
    assert {"blend-toggle-2-pipelines", "pipeline-per-pipeline-state",
            "dynamic-creates-no-pipeline"} <= bad  # fmt: skip


def test_backend_facts_against_the_baseline_go_red(tmp_path: Path):
    cells, _ = run(_plan(sizes=VK, workloads=["BlendToggle"], strategies=["a"],
                         backends=["gles"]), _quiet)  # fmt: skip
    facts = guard.backend_facts(cells)
    assert facts["BlendToggle/a/gles"]["gl_calls_per_draw"] > 1
    base = tmp_path / "base.json"
    doc = guard.baseline_doc(cells)
    base.write_text(json.dumps(doc))
    assert not _bad(guard.against_baseline(cells, base))
    doc["backends"]["BlendToggle/a/gles"]["gl_calls_per_draw"] -= 1  # one GL call fewer, planted
    base.write_text(json.dumps(doc))
    assert "baseline-gl_calls_per_draw" in _bad(guard.against_baseline(cells, base))


def test_b_is_not_run_on_a_cso_keyed_backend_and_the_guard_sees_why():
    cells, _ = run(_plan(sizes=VK, workloads=["BlendToggle"], strategies=["a", "b"],
                         backends=["vulkan"]), _quiet)  # fmt: skip
    b = {c.strategy: c for c in cells}["b"]
    assert b.status == "not available" and b.reason.startswith("on vulkan: ")
    # planted: (b) forced onto Vulkan draws with one pipeline where (a) needs two: red
    planted = dict(STRATEGIES, b=replace(STRATEGIES["b"], binds_no_cso=False))
    cells, _ = run(_plan(sizes=VK, workloads=["BlendToggle"], strategies=["a", "b"],
                         backends=["vulkan"], strategy_table=planted), _quiet)  # fmt: skip
    bad = [f for f in guard.structural(cells) if not f.ok]
    assert [f.check for f in bad] == ["same-backend-work-as-a"]
    assert "pipelines_created 1 against 2" in bad[0].detail


# -- the Minecraft-like frame: a draw costs what changed, not what is bound ---------------------
#: records per draw of MinecraftFrame/(a) on the recorder over the census's 2 steady frames
#: of 128 draws: per draw one DrawVbo, one SetGlobalConstants (the chunk offset) and one
#: SetSamplerViews (the rebind); a BindRenderState at each blend toggle (the chunk row moves
#: every 8 draws: 1/8 per draw); a Present per frame (2 / 256)
MINECRAFT_RECORDS_PER_DRAW = 3 + 1 / 8 + 2 / 256


def _minecraft(units: int) -> dict:
    wl = WORKLOADS["MinecraftFrame"].with_units(units)
    return census(wl, STRATEGIES["a"], "monolith", "recorder", Sizes(128, 3, 1), 1)


def test_minecraft_frame_per_draw_cost_follows_what_changed_not_what_is_bound():
    """One texture rebind per draw at 1 and at 64 bound units: the same records, the same
    Python calls and the same wire bytes per draw (the issue's "done when")."""
    one, many = _minecraft(1), _minecraft(64)
    assert one["steady_draws"] == many["steady_draws"] == 2 * 128
    assert one["csos_minted"] == many["csos_minted"] == 2  # blend on / off
    assert one["records_per_draw"] == MINECRAFT_RECORDS_PER_DRAW
    assert one["records_by_call"] == many["records_by_call"]
    for key in ("records_per_draw", "python_calls_per_draw", "wire_bytes_per_draw"):
        assert one[key] == many[key], (key, one[key], many[key])


def test_minecraft_frame_is_not_available_where_its_calls_are_missing():
    wl = WORKLOADS["MinecraftFrame"]
    assert wl.unavailable_on(None) is None  # the client has every call it makes
    assert "SetGlobalConstants" in wl.unavailable_on(frozenset({"DrawVbo"}))
    assert wl.unavailable_on(frozenset(wl.NEEDS)) is None


def _pin_fences(monkeypatch: pytest.MonkeyPatch, done: bool) -> None:
    """Vulkan's fence timing, fixed: ``FrameRing.poll`` sees every submission finished
    (``done``) or none (a GPU that is always behind). Unpinned, whether lavapipe has
    finished the setup frame when the first steady submit polls depends on the machine's
    load, and with it whether the setup frame's deferred destroys (64 units: 63 more)
    land inside the steady window: the 1-vs-64 comparison failed once that way."""
    from mgpipe.runtime.backends.vulkan.lifetime import FrameRing

    def finished(self) -> int:
        self._wait_through(self.serial - 1)
        return self.completed

    def behind(self) -> int:
        return self.completed

    monkeypatch.setattr(FrameRing, "poll", finished if done else behind)


def _minecraft_work(backend: str, units: int, sizes: Sizes = Sizes(64, 3, 1)) -> dict:
    """The records, Python calls and driver work (GL calls, vkCmdSet*, submits,
    pipelines, deferred destroys) per draw of MinecraftFrame/(a) on monolith at ``units``
    bound units (counts only: no time, no GPU figure)."""
    wl = WORKLOADS["MinecraftFrame"].with_units(units)
    s = census(wl, STRATEGIES["a"], "monolith", backend, sizes, 1)
    steady = dict(s["backend_counters_steady"] or {})
    assert steady.get("validation_messages", 0) == 0
    return {"records": s["records_per_draw"], "python": s["python_calls_per_draw"],
            "by_call": s["records_by_call"], **{k: v for k, v in steady.items()
            if not any(t in k for t in ("ns", "ms", "time", "gpu", "last_frame"))}}  # fmt: skip


def _differ(one: dict, many: dict) -> dict:
    return {k: (one.get(k), many.get(k)) for k in sorted(set(one) | set(many))
            if one.get(k) != many.get(k)}  # fmt: skip


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_minecraft_frame_backend_work_per_draw_is_the_same_at_1_and_64_units(backend, monkeypatch):
    """The real backends too: the same records, Python calls and driver work (GL calls,
    vkCmdSet*, submits, pipelines) per draw whatever the number of bound units. Counts,
    not times; on Vulkan with the fence timing pinned (:func:`_pin_fences`)."""
    if backend == "vulkan":  # the setup frame retired before the steady window, always
        _pin_fences(monkeypatch, done=True)
    one, many = _minecraft_work(backend, 1), _minecraft_work(backend, 64)
    assert _differ(one, many) == {}
    if backend == "gles":
        assert one["gl_calls"] > 0


def test_vulkan_fence_timing_moves_the_deferred_destroys_so_the_comparison_pins_it(monkeypatch):
    """Why the 1-vs-64 test pins the fences: at 64 units the steady window's deferred
    destroys differ between a GPU that is always done at a poll and one always behind
    (the setup frame's 63 extra objects retire inside the window or before it) -- a
    load-dependent count the comparison must not read unpinned."""
    _pin_fences(monkeypatch, done=True)
    done = _minecraft_work("vulkan", 64)
    _pin_fences(monkeypatch, done=False)
    behind = _minecraft_work("vulkan", 64)
    assert done["records"] == behind["records"] and done["by_call"] == behind["by_call"]
    assert "deferred_destroyed" in _differ(done, behind), _differ(done, behind)


def test_planted_per_bound_unit_work_goes_red_on_vulkan(monkeypatch):
    """The control: a Vulkan backend whose texture rebind retires an object for every
    bound unit (a view re-made per bound texture at each rebind: work that follows what
    is bound, not what changed) fails the comparison, by the counter's name."""
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend

    rebind = VulkanBackend.SetSamplerViews

    def per_unit(self, ctx, d):
        rebind(self, ctx, d)
        for row in ctx.windows["SetSamplerViews"]:
            if row is not None and not (row.Texture.is_null and row.View.is_null):
                self.r.ring.defer(lambda: None)

    monkeypatch.setattr(VulkanBackend, "SetSamplerViews", per_unit)
    _pin_fences(monkeypatch, done=True)
    diff = _differ(_minecraft_work("vulkan", 1), _minecraft_work("vulkan", 64))
    assert set(diff) == {"deferred_destroyed"}, diff


def _doc(ratio: float, records: float = 1.0) -> dict:
    return {"format": "mgpipe-bench-baseline/1", "backends": {},
            "structure": {"NoChange/a": {"draws_per_frame": 4, "records_per_draw": records}},
            "client_ratio_vs_a": {"NoChange": {"b": ratio}}}  # fmt: skip


def test_baseline_ratios_are_the_median_of_the_runs():
    # one disturbed run (a slow (a): 1.2; a slow (b): 40) moves neither side of the bar
    merged, unstable = guard.merge_baselines([_doc(4.8), _doc(1.2), _doc(4.6), _doc(40.0),
                                              _doc(4.7)])  # fmt: skip
    assert unstable is None
    assert merged["client_ratio_vs_a"] == {"NoChange": {"b": 4.7}}
    assert merged["structure"] == _doc(0)["structure"]
    # control: a single run is its own value, however disturbed it was
    assert guard.merge_baselines([_doc(40.0)])[0]["client_ratio_vs_a"]["NoChange"]["b"] == 40.0


def test_baseline_runs_with_different_structure_are_named():
    merged, unstable = guard.merge_baselines([_doc(4.8), _doc(4.8, records=2.0)])
    assert unstable == "run 2's structure differs from run 1's at NoChange/a"


def test_cli_write_baseline_over_runs(tmp_path: Path, capsys):
    out = tmp_path / "b.json"
    assert main([*_CLI_SMALL, "--write-baseline", "--runs", "0", "--baseline", str(out)]) == 2
    _one_refusal(capsys, "BAD-ARGUMENT", "--runs 0, expected a count of at least 1")
    assert not out.exists()
    small = [*_CLI_SMALL, "--backend", "recorder"]
    assert main([*small, "--write-baseline", "--runs", "2", "--baseline", str(out)]) == 0
    err = capsys.readouterr().err
    assert "baseline run 2 of 2" in err and "median of 2 run(s)" in err
    doc = json.loads(out.read_text())
    assert set(doc["client_ratio_vs_a"]) == {"NoChange"} and doc["client_ratio_vs_a"]["NoChange"]["b"] > 0
