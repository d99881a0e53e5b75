"""The socket doorbell under stress (seed 001 §11.3): no lost wakeup, nothing lost, nothing
applied twice, with random pauses on both sides and a ring small enough that both sides
park again and again.

``MGPIPE_SPAWN_FULL=1`` pushes 2,000,000 records; CI pushes a quick form.
"""

from __future__ import annotations

import os
import random
import struct
import sys
import threading
import time
from pathlib import Path

import pytest

from mgpipe.runtime.transport.spawn import SpawnTransport
from mgpipe.runtime.wire.header import make_record

FULL = os.environ.get("MGPIPE_SPAWN_FULL") == "1"
PEER = Path(__file__).with_name("spawn_stress_peer.py")
HARNESS_BOUND_S = 900.0 if FULL else 120.0


def _stress(records: int, seed: int, plant: str = "", bound_s: float = HARNESS_BOUND_S) -> dict:
    rng = random.Random(seed)
    t = SpawnTransport(ring_capacity=1 << 12, server_argv=[sys.executable, str(PEER)],
                       publish_every=1 << 30,  # publishes only where this test says
                       config={"seed": seed, "pause_every": 500, "plant": plant})  # fmt: skip
    out: dict = {}

    def produce() -> None:
        seq_pack = struct.Struct("<Q").pack
        for i in range(1, records + 1):
            t.submit(make_record(1, seq_pack(i)))  # a full ring publishes and parks
            r = rng.randrange(1000)
            if r < 300:
                t.flush()
            elif r == 999:
                time.sleep(rng.random() * 2e-4)  # a producer pause
            elif r == 998:
                t.wait_applied(rng.randrange(1, i + 1))  # a barrier somewhere behind
        t.wait_applied()
        out["applied_before_close"] = t.applied_seq
        out["report"] = t.close()

    th = threading.Thread(target=produce, daemon=True)
    th.start()
    th.join(bound_s)
    out["hung"] = th.is_alive()
    if out["hung"]:
        before = t.applied_seq
        time.sleep(1.0)  # a slow stream moves in a second; a lost wakeup never does
        out["stuck"] = t.applied_seq == before < t.emit_seq
        t.child.kill()  # death unblocks the client: it latches device-lost
        th.join(bound_s)
        out["unblocked_by_kill"] = not th.is_alive() and t.lost
        return out
    out["client_knocks"] = t.bell.knocks
    out["client_parks"] = t.bell.parks
    return out


@pytest.mark.serial  # timing: a stalled worker loses the race it measures (tests/xdist_plan.py)
def test_doorbell_stress_random_pauses_both_sides(record_property) -> None:
    records = 2_000_000 if FULL else 40_000
    out = _stress(records, seed=0xB311)
    assert not out["hung"], "a wakeup was lost: the stream hung"
    report = out["report"]
    assert out["applied_before_close"] == records  # appliedSeq exact
    assert report["applied_seq"] == records
    assert report["summary"] == {"count": records, "bad": -1}  # nothing lost, none twice
    # both directions really parked and were knocked awake
    assert out["client_parks"] > 0 and report["parks"] > 0
    assert out["client_knocks"] > 0 and report["knocks"] > 0
    record_property("spawn_stress_records", records)
    record_property(
        "spawn_stress_knocks", f"client {out['client_knocks']} server {report['knocks']}"
    )


def _window_run(plant: str) -> int:
    """One record published while the server sits in its (held open) window between seeing
    an empty ring and raising its parked flag; the client then makes no wait of its own (a
    wait knocks again) for 2 s. Returns the records the server applied by then."""
    t = SpawnTransport(server_argv=[sys.executable, str(PEER)],
                       config={"seed": 1, "pause_every": 1 << 30, "plant": plant,
                               "window_s": 1.5})  # fmt: skip
    try:
        time.sleep(0.3)  # the server is in its window: flag down, ring seen empty
        t.submit(make_record(1, struct.pack("<Q", 1)))
        t.flush()  # published; the flag is down, so no knock
        time.sleep(2.5)
        return t.applied_seq
    finally:
        t.child.kill()
        t.abandon(grace=0.0)


@pytest.mark.serial  # timing: the window is 1.5 s wide (tests/xdist_plan.py)
def test_a_record_published_inside_the_parking_window_is_applied_by_the_recheck() -> None:
    assert _window_run("") == 1


@pytest.mark.serial
def test_negative_control_a_waiter_without_the_recheck_loses_that_wakeup() -> None:
    """The same window with the re-check after raising the flag removed: the server parks
    with the record unseen and nothing knocks it (the lost wakeup the re-check closes)."""
    assert _window_run("no-recheck") == 0
