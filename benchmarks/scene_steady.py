"""Steady-state CPU per draw of the two steady scenes, per transport and side, through the
public API only (``Client``, ``run_scene``), so the same file measures any tree:

    python benchmarks/scene_steady.py            # this tree: one JSON line

Client side: the scene against a sink that drops every record in C; round trip: the
recorder through ``run_scene`` (spawn adds the server's own CPU from its report). Each
figure is the difference of a run of N and one of N/4 repetitions per draw, best of
three, after one warm run. To compare with an earlier commit, run this file in that tree
too, in alternating processes, and keep each side's minimum.
"""

from __future__ import annotations

import collections
import json
import time

from mgpipe.runtime.client.api import Client
from mgpipe.runtime.harness.runner import STAGE_CAPACITY, run_scene
from mgpipe.runtime.harness.scenes import SCENES
from mgpipe.runtime.wire.stage import StageSegment

SIZES = (("blend-toggle", 2000), ("viewport-churn", 4000))


def _client(scene: str, transport: str, n: int) -> tuple[int, int]:
    stage = StageSegment(STAGE_CAPACITY)
    c = Client(collections.deque(maxlen=0).append, stage, transport=transport)
    t0 = time.process_time_ns()
    with c:
        SCENES[scene].run(c, n)
    return time.process_time_ns() - t0, c.draws


def _round(scene: str, transport: str, n: int) -> tuple[int, int]:
    t0 = time.process_time_ns()
    r = run_scene(scene, "recorder", transport, n)
    cpu = time.process_time_ns() - t0
    if transport == "spawn":
        cpu += (r.transport_report or {}).get("cpu_ns", 0)
    return cpu, r.draws


def main() -> None:
    out = {}
    for scene, n2 in SIZES:
        n1 = n2 // 4
        for transport in ("monolith", "inproc", "spawn"):
            for side, run in (("client", _client), ("round", _round)):
                if transport == "spawn" and side == "client":
                    continue  # the client's sink is the server process
                run(scene, transport, n1)  # warm: programs, codecs, handlers
                best = None
                for _ in range(3):
                    a, da = run(scene, transport, n1)
                    b, db = run(scene, transport, n2)
                    us = (b - a) / (db - da) / 1e3
                    best = us if best is None else min(best, us)
                out[f"{scene}/{transport}/{side}"] = round(best, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
