"""The two gates the spawn lane carries (seed 004 P6): same names, and proof it really spawned.

A lane test takes the ``lane`` fixture (params ``inproc`` and ``spawn``) and builds its
transports with ``lane.transport(...)`` / ``lane.run_scene(...)``.

1. **Same names.** The set of lane tests collected for ``spawn`` must equal the set for
   ``inproc`` name for name (a differing set means the lane quietly runs less).
2. **Arm proof.** Every ``spawn`` lane test must leave, in the server's OWN log (written
   by the child process), a ``transport=spawn`` line tagged with the test's id whose pid
   is the child the transport started and not this process. A test that claimed spawn
   but ran in-process leaves no such line.

:func:`lane_problems` computes both from the collected keys, the claims and the log;
``pytest_sessionfinish`` fails the run when it names any problem.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

LANES = ("inproc", "spawn")
_LINE = re.compile(r"^serve transport=(\S+) backend=\S* pid=(\d+) tag=(.*)$")


@dataclass
class LaneState:
    log: Path | None = None
    keys: dict[str, set[tuple]] = field(default_factory=lambda: {lane: set() for lane in LANES})
    claims: dict[str, list[int]] = field(default_factory=dict)  # spawn nodeid -> child pids


STATE = LaneState()


def lane_problems(keys: dict[str, set[tuple]], claims: dict[str, list[int]], log_text: str,
                  own_pid: int) -> list[str]:  # fmt: skip
    """Every way the two gates fail (empty: both hold)."""
    problems = []
    missing = keys["inproc"] ^ keys["spawn"]
    for key in sorted(missing, key=repr):
        have = "inproc" if key in keys["inproc"] else "spawn"
        problems.append(f"lane names differ: {key} is collected for {have} only")
    logged: dict[str, set[int]] = {}
    for line in log_text.splitlines():
        m = _LINE.match(line)
        if m and m.group(1) == "spawn":
            logged.setdefault(m.group(3), set()).add(int(m.group(2)))
    for nodeid, pids in sorted(claims.items()):
        seen = logged.get(nodeid, set())
        if not pids:
            problems.append(f"{nodeid}: claimed spawn but started no server process")
        for pid in pids:
            if pid == own_pid or pid not in seen:
                problems.append(f"{nodeid}: claimed spawn but the server log has no "
                                f"transport=spawn line from child pid {pid}")  # fmt: skip
    return problems


def lane_key(item: pytest.Item) -> tuple | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "lane" not in callspec.params:
        return None
    others = tuple(sorted((k, repr(v)) for k, v in callspec.params.items() if k != "lane"))
    return (str(item.path.name), item.originalname, others)


class Lane:
    """What a lane test builds its transports with."""

    def __init__(self, name: str, nodeid: str, log: Path) -> None:
        self.name = name
        self.nodeid = nodeid
        self.log = log
        self.child_pids: list[int] = []

    @property
    def spawn_config(self) -> dict[str, Any]:
        return {"log": str(self.log), "tag": self.nodeid}

    def note(self, transport: Any) -> Any:
        pid = getattr(transport, "child_pid", None)
        if pid is not None:
            self.child_pids.append(pid)
        return transport

    def run_scene(self, scene: str, n: int | None = None, **kw: Any) -> Any:
        from mgpipe.runtime.harness.runner import run_scene

        cfg = self.spawn_config if self.name == "spawn" else None
        res = run_scene(scene, "recorder", self.name, n, spawn_config=cfg, **kw)
        self.note(res.client.transport)
        return res


def collect_lane_keys(items: list[pytest.Item]) -> None:
    for item in items:
        key = lane_key(item)
        if key is not None:
            STATE.keys[item.callspec.params["lane"]].add(key)


@pytest.fixture(params=LANES)
def lane(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    if STATE.log is None:
        STATE.log = tmp_path_factory.getbasetemp() / "spawn-server.log"
        STATE.log.touch()
    ln = Lane(request.param, request.node.nodeid, STATE.log)
    yield ln
    if ln.name == "spawn":
        STATE.claims[ln.nodeid] = ln.child_pids


#: the key a pytest-xdist worker hands its problems back under (``workeroutput``)
WORKER_KEY = "spawn_lane_problems"


def check_session(session: pytest.Session) -> None:
    """Both gates over what this process ran. Under pytest-xdist each worker collects the
    whole set (gate 1 holds per worker) and checks the claims of the tests it ran against
    its own log; its problems travel back to the controller (:class:`XdistLane`), which
    reports them and fails the run exactly as a serial run does."""
    config = session.config
    problems = XDIST.problems
    if STATE.claims or any(STATE.keys.values()):
        text = STATE.log.read_text() if STATE.log is not None else ""
        keys = STATE.keys
        if any("::" in str(a) for a in config.args):  # single tests picked by id
            keys = {lane: set() for lane in LANES}
        problems = problems + lane_problems(keys, STATE.claims, text, os.getpid())
    if hasattr(config, "workeroutput"):  # an xdist worker: the controller reports them
        config.workeroutput[WORKER_KEY] = problems
        return
    if problems:
        rep = config.pluginmanager.get_plugin("terminalreporter")
        for p in problems:
            if rep is not None:
                rep.write_line(f"SPAWN-LANE: {p}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class XdistLane:
    """The controller's side under pytest-xdist: every worker's problems, gathered as each
    worker goes down (registered only where the xdist plugin is loaded)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        out = getattr(node, "workeroutput", None) or {}
        self.problems.extend(p for p in out.get(WORKER_KEY, []) if p not in self.problems)


XDIST = XdistLane()


def configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(XDIST, "spawn-lane-xdist")
