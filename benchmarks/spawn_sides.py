"""CPU per draw on each side of the pipe, records per second and doorbell knocks per 1,000
draws, for monolith, inproc and spawn (the server process reports its own CPU time).

    python benchmarks/spawn_sides.py [-n N]

- monolith: one thread does both sides; its process CPU is the client column.
- inproc: both sides share this process; the apply thread's CPU is read with
  ``time.thread_time_ns`` inside it, the client column is the process total minus it.
Each row is the run (of three) with the least CPU on both sides together.

- spawn: the client column is this process's CPU; the server column is the ``cpu_ns`` the
  child reports (its CPU since ``Welcome``). Start-up is outside both windows.

Knocks are doorbell signals that found the other side parked (client->server,
server->client): condition-variable notifies for inproc, one-byte socket sends for spawn.
"""

from __future__ import annotations

import argparse
import threading
import time

from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.harness.runner import STAGE_CAPACITY
from mgpipe.runtime.harness.scenes import SCENES
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.transport.inproc import InprocTransport
from mgpipe.runtime.transport.monolith import MonolithTransport
from mgpipe.runtime.transport.spawn import SpawnTransport
from mgpipe.runtime.wire.stage import StageSegment


def sides_header() -> str:
    return (f"{'scene':<15} {'transport':<9} {'draws':>6} {'records':>8} {'client us/d':>11} "
            f"{'server us/d':>11} {'records/s':>10} {'knocks c>s':>10} {'knocks s>c':>10}")  # fmt: skip


def _local(scene: str, transport: str, n: int) -> tuple:
    stage = StageSegment(STAGE_CAPACITY)
    applier = Applier(Recorder(), stage)
    server_ns = [0]
    if transport == "monolith":
        t = MonolithTransport(applier.apply)
    else:

        def sink(rec: memoryview) -> None:  # runs on the apply thread
            t0 = time.thread_time_ns()
            applier.apply(rec)
            server_ns[0] += time.thread_time_ns() - t0

        t = InprocTransport(sink, 1 << 20)
    c = Client(None, stage, transport=t, reverse=applier.apply.reverse)  # type: ignore[arg-type]
    c0, w0 = time.process_time_ns(), time.perf_counter()
    SCENES[scene].run(c, n)
    c.close()
    c1, w1 = time.process_time_ns(), time.perf_counter()
    knocks = ((t.ring.data_bell.notifies, t.ring.space_bell.notifies)
              if transport == "inproc" else (0, 0))  # fmt: skip
    server = server_ns[0] if transport == "inproc" else None
    client = (c1 - c0) - (server or 0)
    return c.draws, c.records, client, server, w1 - w0, knocks


def _spawn(scene: str, n: int) -> tuple:
    t = SpawnTransport("recorder", stage_capacity=STAGE_CAPACITY)
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    c0, w0 = time.process_time_ns(), time.perf_counter()
    SCENES[scene].run(c, n)
    c.tr.cso.release_all()
    t.wait_applied()
    c1, w1 = time.process_time_ns(), time.perf_counter()
    report = t.close()
    assert report is not None and report["applied_seq"] == c.records
    return (c.draws, c.records, c1 - c0, report["cpu_ns"], w1 - w0,
            (t.bell.knocks, report["knocks"]))  # fmt: skip


def sides(scene: str, transport: str, n: int, runs: int = 3) -> str:
    """One row: the run (of ``runs``) with the least CPU on both sides together."""
    best = min(((_spawn(scene, n) if transport == "spawn" else _local(scene, transport, n))
                for _ in range(runs)), key=lambda r: r[2] + (r[3] or 0))  # fmt: skip
    draws, records, client_ns, server_ns, wall, (k_cs, k_sc) = best
    d = max(draws, 1)
    server = f"{server_ns / d / 1e3:>11.1f}" if server_ns is not None else f"{'(in client)':>11}"
    return (f"{scene:<15} {transport:<9} {draws:>6} {records:>8} {client_ns / d / 1e3:>11.1f} "
            f"{server} {records / wall:>10.0f} {k_cs * 1000 / d:>10.1f} {k_sc * 1000 / d:>10.1f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-n", type=int, default=500, help="scene repetitions (default 500)")
    args = ap.parse_args()
    print(sides_header())
    for scene in ("blend-toggle", "viewport-churn"):
        for transport in ("monolith", "inproc", "spawn"):
            print(sides(scene, transport, args.n))


if __name__ == "__main__":
    main()
