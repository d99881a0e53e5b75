"""Death and slowness told apart without a timeout (seed 001 §15.3; seed 004 P6 latch).

A killed server is seen as hangup / EOF: the client latches device-lost and nothing
blocks. A stopped server is only slow: the client waits and resumes when it continues.
Every bound below belongs to the test harness (a thread join), never to the product.

``MGPIPE_SPAWN_FULL=1`` runs the 100-point kill sweep; CI runs a quick form of it.
"""

from __future__ import annotations

import functools
import os
import random
import signal
import threading
import time

import pytest

from mgpipe.runtime.client.api import (
    EGL_CONTEXT_LOST,
    GL_NO_ERROR,
    GL_UNKNOWN_CONTEXT_RESET,
    Client,
)
from mgpipe.runtime.harness.runner import SCENES, run_scene
from mgpipe.runtime.transport.spawn import SpawnTransport

FULL = os.environ.get("MGPIPE_SPAWN_FULL") == "1"
HARNESS_BOUND_S = 60.0  # a trial that takes longer is a hang (the harness's bound)


def _client() -> tuple[Client, SpawnTransport]:
    t = SpawnTransport()
    return Client(None, t.stage, transport=t), t  # type: ignore[arg-type]


def _bounded(fn) -> threading.Thread:
    th = threading.Thread(target=fn, daemon=True)
    th.start()
    th.join(HARNESS_BOUND_S)
    assert not th.is_alive(), "the client hung"
    return th


def test_sigkill_latches_device_lost_and_nothing_blocks() -> None:
    c, t = _client()
    SCENES["blend-toggle"].run(c, 5)
    assert not c.device_lost and c.get_graphics_reset_status() == GL_NO_ERROR
    os.kill(t.child_pid, signal.SIGKILL)
    out: dict[str, object] = {}

    def after_death() -> None:
        SCENES["blend-toggle"].run(c, 50)  # a full ring's worth of calls: no wait blocks
        out["present"] = c.present()
        out["seq"] = t.emit_seq
        c.draw_arrays(4, 0, 3)
        out["seq2"] = t.emit_seq
        c.close()

    _bounded(after_death)
    assert t.lost and t.lost_reason is not None and t.lost_reason.kind == "DeviceLost"
    assert out["present"] == EGL_CONTEXT_LOST
    assert c.get_graphics_reset_status() == GL_UNKNOWN_CONTEXT_RESET
    assert out["seq2"] == out["seq"]  # later calls are no-ops: nothing is emitted
    assert t.child.returncode == -signal.SIGKILL


def test_sigstop_is_slowness_the_client_waits_and_resumes_on_sigcont() -> None:
    c, t = _client()
    SCENES["blend-toggle"].run(c, 3)
    os.kill(t.child_pid, signal.SIGSTOP)
    done = threading.Event()
    result: dict[str, object] = {}

    def frame() -> None:
        for _ in range(2):  # present credit 1: the second present waits for the first
            for _ in range(3):
                c.enable("Blend")
                c.draw_arrays(4, 0, 3)
            result["present"] = c.present()
        done.set()

    th = threading.Thread(target=frame, daemon=True)
    try:
        th.start()
        assert not done.wait(0.5)  # stopped: the present waits ...
        assert not t.lost  # ... and is not declared dead
    finally:
        os.kill(t.child_pid, signal.SIGCONT)
    th.join(HARNESS_BOUND_S)
    assert done.is_set() and not t.lost
    assert isinstance(result["present"], int) and result["present"] != EGL_CONTEXT_LOST
    c.close()
    assert t.report is not None and t.report["applied_seq"] == t.emit_seq


def _kill_at(record: int) -> tuple[bool, object, int]:
    """Run blend-toggle through spawn; SIGKILL the server when record ``record`` is submitted."""
    t = SpawnTransport()

    def killing(send):  # the point is a record boundary of the scene, on either door
        @functools.wraps(send)  # a door still counts in its own cell
        def send_and_maybe_kill(*args):
            before = t.emit_seq
            seq = send(*args)
            if t.emit_seq != before and t.emit_seq == record:  # this record really went out
                os.kill(t.child_pid, signal.SIGKILL)
            return seq

        return send_and_maybe_kill

    t.submit = killing(t.submit)  # type: ignore[method-assign]
    t.put = killing(t.put)  # type: ignore[method-assign]
    door = t.door  # the emitter's compiled doors: each one wrapped as it is made
    t.door = lambda *a: killing(door(*a))  # type: ignore[method-assign]
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]  # binds the doors now
    out: dict[str, object] = {}

    def trial() -> None:
        SCENES["blend-toggle"].run(c, 40)  # ends with a present
        c.close()
        out["present"] = c.present()  # a call after the death was seen

    _bounded(trial)
    return t.lost, out["present"], c.get_graphics_reset_status()


def test_kill_the_server_at_random_points_of_a_scene_run() -> None:
    total = run_scene("blend-toggle", "recorder", "monolith", 40).records
    rng = random.Random(0x5EED)
    trials = 100 if FULL else 8
    points = sorted(rng.randrange(1, total + 1) for _ in range(trials))
    for point in points:
        lost, present, status = _kill_at(point)
        assert lost, f"killed at record {point}: not reported"
        assert present == EGL_CONTEXT_LOST, point
        assert status == GL_UNKNOWN_CONTEXT_RESET, point
