"""The lean path (runtime/harness/lean.py): the floor the draw path is measured against.

What a user of the benchmark relies on: the lean path sends exactly the project's records
(so the ratio compares the same work), and the project's per-draw shape -- records, bytes
Python calls and bytecode instructions per steady-state draw -- stays where it was
measured. Timings are not
asserted here (benchmarks/draw_path.py prints them, same-run ratios).
"""

from __future__ import annotations

import pytest

from mgpipe.runtime.harness import lean

#: per scene: (records per draw, wire bytes per draw, Python calls per draw on the client,
#: the most it may take): measured at the commit that added this test, since the compiled
#: toggles and span setters and the dynamic push in validate's frame 11.5 -> 10.5 and
#: 21.0 -> 14.0; since the draw runs validate and the stage copy in its frame
#: (runtime/client/inline.py) 9.5 and 12.0
SHAPE = {
    "blend-toggle": (2.0, 104.0, 9.5),
    "viewport-churn": (2.0, 120.0, 12.0),
}
CALLS_BOUND = 25.0  # issue 20: calls per draw <= 25 on both scenes


@pytest.mark.parametrize("transport", ["monolith", "inproc"])
@pytest.mark.parametrize("scene", sorted(lean.LOOPS))
def test_the_lean_path_sends_the_projects_records_byte_for_byte(scene: str, transport: str) -> None:
    _, draws, project = lean.run(scene, "project", "round", 60, transport)
    _, lean_draws, fast = lean.run(scene, "lean", "round", 60, transport)
    assert draws == lean_draws and len(project) >= draws
    assert lean.equal_streams(project, fast) is None


def test_negative_control_a_lean_record_that_differs_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lean client whose counters run ahead by one sends other BindRenderState bytes:
    the identity check names the first record that differs."""
    real = lean.LeanClient.__init__

    def ahead(self: lean.LeanClient, *a: object) -> None:
        real(self, *a)
        self.vw += 1

    _, _, project = lean.run("blend-toggle", "project", "round", 10)
    monkeypatch.setattr(lean.LeanClient, "__init__", ahead)
    _, _, fast = lean.run("blend-toggle", "lean", "round", 10)
    diff = lean.equal_streams(project, fast)
    assert diff is not None and diff.startswith("record 0: ")
    assert (
        lean.equal_streams(project, project[:-1]) == f"{len(project)} records != {len(project) - 1}"
    )


@pytest.mark.parametrize("scene", sorted(SHAPE))
def test_the_draw_paths_shape_per_steady_state_draw(scene: str) -> None:
    records, nbytes, calls = SHAPE[scene]
    _, draws, recs = lean.run(scene, "project", "round", 100)
    assert len(recs) / draws == records
    assert sum(map(len, recs)) / draws == nbytes
    got = lean.calls_per_draw(scene, "project", "client", 20, 100)
    assert got <= calls <= CALLS_BOUND, (scene, got)


def test_negative_control_one_more_frame_per_toggle_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """glEnable back through the Client's own method (one frame more per toggle, half a
    call per draw): the calls pin goes red."""
    from mgpipe.runtime.client.api import Client

    real = Client.__init__

    def layered(self: Client, *a: object, **k: object) -> None:
        real(self, *a, **k)
        del self.enable, self.disable  # the class's methods: a frame between

    monkeypatch.setattr(Client, "__init__", layered)
    got = lean.calls_per_draw("blend-toggle", "project", "client", 20, 100)
    assert got > SHAPE["blend-toggle"][2], got


def test_negative_control_validate_as_a_call_again_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """glDrawArrays as written (the draw's validate, the CSO cache's and the stage copy
    each a call: the inliner's work undone): the calls pin goes red on both scenes."""
    from mgpipe.runtime.client.api import Client

    monkeypatch.setattr(Client, "draw_arrays", Client.draw_arrays.__wrapped__)
    for scene in sorted(SHAPE):
        got = lean.calls_per_draw(scene, "project", "client", 20, 100)
        assert got > SHAPE[scene][2], (scene, got)


#: per scene and side: the most bytecode instructions the project may execute per draw,
#: as a multiple of the lean path's in the same run (measured at the commit that added
#: this: 1.65 / 1.50 blend-toggle, 1.39 / 1.35 viewport-churn, client / round; since the
#: server's record memo, the doors' cell counters and the one-test validate: 1.57 / 1.19
#: and 1.36 / 1.15; since the lean server captures as the project's handlers do and the
#: client's one-frame setters: 1.54 / 1.19 and 1.30 / 0.97 -- the project's server below
#: the lean one's; a ratio, so a CPython whose instructions differ moves both sides)
OPCODE_RATIO = {
    ("blend-toggle", "client"): 1.58,
    ("blend-toggle", "round"): 1.22,
    ("viewport-churn", "client"): 1.33,
    ("viewport-churn", "round"): 1.00,
}


def _opcode_ratio(scene: str, side: str) -> float:
    project, fast = (lean.opcodes_per_draw(scene, path, side, 20, 60) for path in lean.PATHS)
    assert fast > 0
    return project / fast


@pytest.mark.parametrize("scene, side", sorted(OPCODE_RATIO))
def test_the_projects_instructions_per_draw_stay_near_the_lean_paths(scene: str,
                                                                      side: str) -> None:  # fmt: skip
    got = _opcode_ratio(scene, side)
    assert got <= OPCODE_RATIO[scene, side], (scene, side, got)


def test_negative_control_a_forgotten_patch_check_turns_the_instructions_red(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """glEnable's remembered patch stored range by range (no one-call check remembered:
    the general loop over the eight one-byte ranges): the instructions pin goes red."""
    from mgpipe.runtime.client import render_block

    monkeypatch.setattr(render_block, "_check", lambda patch: None)
    got = _opcode_ratio("blend-toggle", "client")
    assert got > OPCODE_RATIO["blend-toggle", "client"], got


def test_negative_control_a_looped_dynamic_push_turns_the_instructions_red(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The viewport's one-chunk push through the loop over every dynamic chunk (the
    dirty mask's lookup emptied): the instructions pin goes red."""
    from mgpipe.runtime.client.cso_cache import RenderStateCsoCache

    real = RenderStateCsoCache.__init__

    def looped(self: RenderStateCsoCache, *a: object, **k: object) -> None:
        real(self, *a, **k)
        self._dyn_one = {}

    monkeypatch.setattr(RenderStateCsoCache, "__init__", looped)
    got = _opcode_ratio("viewport-churn", "client")
    assert got > OPCODE_RATIO["viewport-churn", "client"], got


def test_the_floor_is_twenty_calls() -> None:
    assert 0 < lean.floor_us(20, n=2000, repeat=1) < lean.floor_us(200, n=2000, repeat=1)


def test_the_ring_floor_writes_and_drains_the_tables_records() -> None:
    """The ring hand-off floor runs over the tables' own packers (a layout that moved a
    member out of memory order would make it a TablesError, not a cheaper loop)."""
    for part in ("both", "produce", "drain"):
        assert lean.ring_floor_us(n=2000, repeat=1, part=part) > 0
    with pytest.raises(ValueError, match="part 'half'"):
        lean.ring_floor_us(part="half")


def test_the_bench_reports_the_floor_and_guards_the_identity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mgpipe.runtime.harness.bench import floor

    doc = floor.report(40, 1)
    assert [f.ok for f in floor.findings(doc)] == [True, True]
    assert {(r["scene"], r["side"]) for r in doc["rows"]} == {
        (s, side) for s in lean.LOOPS for side in lean.SIDES
    }
    assert all(r["project_us"] > 0 and r["lean_us"] > 0 for r in doc["rows"])
    assert "x lean" in floor.text(doc)
    # control: a lean path that sends other bytes is a red lean-identical finding
    real = lean.LeanClient.__init__

    def ahead(self: lean.LeanClient, *a: object) -> None:
        real(self, *a)
        self.vw += 1

    monkeypatch.setattr(lean.LeanClient, "__init__", ahead)
    bad = [f for f in floor.findings(floor.report(40, 1)) if not f.ok]
    assert [f.check for f in bad] == ["lean-identical", "lean-identical"]
    assert bad[0].detail.startswith("record 0: ")
