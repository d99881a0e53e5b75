"""The spawn lane: the same tests as the inproc lane, the server in its own process.

Every test here takes ``lane`` (``inproc`` / ``spawn``); ``tests/spawn_lane.py`` fails
the run when the two lanes' names differ or when a spawn test leaves no proof, in the
child's own log, that a child ran it. The gate's own negative controls are at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mgpipe.runtime.client.api import GL_NO_ERROR
from mgpipe.runtime.harness.runner import SCENES, run_scene
from spawn_lane import Lane, lane_problems

_MONOLITH: dict[str, str | None] = {}


def _monolith_digest(scene: str) -> str | None:
    if scene not in _MONOLITH:
        _MONOLITH[scene] = run_scene(scene, "recorder", "monolith").recording_digest
    return _MONOLITH[scene]


@pytest.mark.parametrize("scene", list(SCENES))
def test_scene_recording_equals_monolith(lane: Lane, scene: str) -> None:
    res = lane.run_scene(scene)
    assert res.recording_digest is not None
    assert res.recording_digest == _monolith_digest(scene)
    assert not getattr(res.client.transport, "lost", False)


def test_every_record_applied_exactly_once(lane: Lane) -> None:
    res = lane.run_scene("viewport-churn", 300)
    t = res.client.transport
    assert t.applied_seq == t.emit_seq == res.records
    report = getattr(t, "report", None)
    if report is not None:  # the child counted the same records itself
        assert report["applied_seq"] == res.records


def test_present_and_reset_status_on_a_live_device(lane: Lane) -> None:
    res = lane.run_scene("clear-present", 3)
    assert res.client.frame_serial == 3
    assert res.client.get_graphics_reset_status() == GL_NO_ERROR
    assert not res.client.device_lost


# -- the gate itself can go red ------------------------------------------------------
def _keys(*names: str) -> set[tuple]:
    return {("test_x.py", n, ()) for n in names}


def test_gate_same_names_goes_red_on_a_missing_spawn_test() -> None:
    keys = {"inproc": _keys("a", "b"), "spawn": _keys("a")}
    problems = lane_problems(keys, {}, "", os.getpid())
    assert problems and "collected for inproc only" in problems[0]
    assert lane_problems({"inproc": _keys("a"), "spawn": _keys("a")}, {}, "", 1) == []


def test_gate_arm_proof_goes_red_on_a_spawn_test_that_ran_in_process() -> None:
    keys = {"inproc": _keys("a"), "spawn": _keys("a")}
    me = os.getpid()
    log = f"serve transport=spawn backend=recorder pid=4242 tag=t[spawn]\n"
    assert lane_problems(keys, {"t[spawn]": [4242]}, log, me) == []
    # claimed spawn, but no child was started (the transport ran in this process)
    assert "started no server process" in lane_problems(keys, {"t[spawn]": []}, log, me)[0]
    # claimed spawn with this process's own pid: not a child
    own = f"serve transport=spawn backend=recorder pid={me} tag=t[spawn]\n"
    assert "no transport=spawn line" in lane_problems(keys, {"t[spawn]": [me]}, own, me)[0]
    # a child pid the log never saw (its log line names another test)
    other = "serve transport=spawn backend=recorder pid=4242 tag=u[spawn]\n"
    assert lane_problems(keys, {"t[spawn]": [4242]}, other, me)


_PLANTED = """
import pytest
from mgpipe.runtime.transport.inproc import InprocTransport


def test_claims_spawn_but_runs_in_process(lane):
    t = InprocTransport(lambda rec: None, 1 << 12)  # no child: the arm proof must fail
    lane.note(t)
    t.close()


@pytest.mark.parametrize("lane", ["inproc"], indirect=True)
def test_only_in_one_lane(lane):
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadgroup"]],
                         ids=["serial", "xdist"])  # fmt: skip
def test_gate_fails_a_run_with_planted_defects(tmp_path: Path, workers: list[str]) -> None:
    """The hooks, not only the function: a run whose spawn test ran in-process and whose
    lanes differ in name exits non-zero, naming both defects -- also under pytest-xdist
    (ci/run's form), where each worker hands its problems to the controller."""
    tests_dir = Path(__file__).parent
    (tmp_path / "conftest.py").write_text((tests_dir / "conftest.py").read_text())
    (tmp_path / "test_planted.py").write_text(textwrap.dedent(_PLANTED))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(tests_dir), os.environ.get("PYTHONPATH", "")])
    )
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *workers, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "claimed spawn but started no server process" in out
    assert "collected for inproc only" in out
