"""Issue 20's transport cliffs, pinned by structural counts (never by absolute timings):

- the spawn server compiles nothing after ``Welcome`` (serve.prepare);
- inproc knocks a parked apply thread once per park, not once per publish;
- the spawn server makes one private copy of an upload's bytes per record, and the decoded
  blob is that copy (the decoder copies nothing on top).

Each pin has a negative control that plants the defect back and sees the check go red.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mgpipe.runtime.transport.doorbell import Doorbell

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("transport_cliffs",
                                               ROOT / "benchmarks" / "transport_cliffs.py")  # fmt: skip
tc = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(tc)  # type: ignore[union-attr]


# -- 1. nothing compiled after Welcome -----------------------------------------------------------
def _compiles_after_welcome(lazy: bool) -> int:
    return int(tc.spawn_server(200, lazy=lazy)["compiles"])


def test_the_spawn_server_compiles_nothing_after_welcome() -> None:
    assert _compiles_after_welcome(lazy=False) == 0


def test_control_a_lazy_server_compiles_inside_the_frames() -> None:
    """Planted: serve.prepare off -> the handlers and decoders compile after Welcome."""
    assert _compiles_after_welcome(lazy=True) > 20


def test_prepare_compiles_what_apply_would_and_keeps_its_refusals() -> None:
    from mgpipe.runtime.backends.recorder import Recorder
    from mgpipe.runtime.errors import ProtocolCorruption
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.transport.serve import prepare
    from mgpipe.runtime.wire.spec import all_specs
    from mgpipe.runtime.wire.stage import StageSegment

    a = Applier(Recorder(), StageSegment(1 << 16))
    ready = prepare(a)
    assert ready == len(a._handlers) == len({s.opcode for s in all_specs()})
    with pytest.raises(ProtocolCorruption, match="Wire.Op"):  # no catalogue row: as before
        a._compile(0xFFFF)


# -- 2. inproc knocks ----------------------------------------------------------------------------
def test_inproc_knocks_a_parked_apply_thread_once_per_park() -> None:
    k = tc.inproc_knocks(1000)
    assert k["server_parked"] and k["draws"] == 1000
    assert k["all"] <= 2.0, k  # one wake-up for the whole burst, not one per record


def test_control_an_always_knocking_doorbell_goes_red() -> None:
    with tc.planted_always_knock():
        k = tc.inproc_knocks(1000)
    assert k["server_parked"]
    assert k["all"] > 2.0 and k["data"] >= 500, k  # the check above would fail


def _waiter_sees(bell: Doorbell, box: list[int], target: int) -> list[bool]:
    out: list[bool] = []
    th = threading.Thread(target=lambda: out.append(bell.wait(lambda: box[0] >= target, 10.0)))
    th.start()
    deadline = time.monotonic() + 5
    while not bell.parked and time.monotonic() < deadline:
        time.sleep(0.001)
    for _ in range(target):
        box[0] += 1  # publish, then ring: as Ring.release does
        bell.ring()
    th.join(10.0)
    return out


def test_a_waiter_for_a_later_seq_is_knocked_only_when_it_is_reached() -> None:
    bell = Doorbell(spin_s=0)
    assert _waiter_sees(bell, [0], 50) == [True]
    assert bell.notifies == 1  # not one per release before the target


def test_no_wakeup_is_lost_across_many_short_parks() -> None:
    bell, box, n = Doorbell(spin_s=0), [0], 300
    seen: list[int] = []

    def consumer() -> None:
        for i in range(1, n + 1):
            assert bell.wait(lambda i=i: box[0] >= i, 10.0)
            seen.append(i)

    th = threading.Thread(target=consumer)
    th.start()
    for _ in range(n):
        box[0] += 1
        bell.ring()
        if box[0] % 7 == 0:
            time.sleep(0.0005)  # let the consumer park now and then
    th.join(20.0)
    assert not th.is_alive() and seen == list(range(1, n + 1))


# -- 3. upload copies ----------------------------------------------------------------------------
def test_the_spawn_server_copies_an_upload_once() -> None:
    cp = tc.server_copies()
    assert cp["copies"] == 1 and cp["copied_bytes"] == tc.W * tc.H * 4, cp
    assert cp["decoded_blob_is_the_copy"] == 1, cp  # the decoder's bytes() copied nothing


def test_control_a_stage_copying_at_every_view_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the stage never follows the record (a fresh copy per view, as before)."""
    from mgpipe.runtime.transport.serve import CopyingStage

    monkeypatch.setattr(CopyingStage, "follow", lambda self, ctx: None)
    cp = tc.server_copies()
    assert cp["copies"] >= 2 and cp["decoded_blob_is_the_copy"] == 0, cp  # the pin: red


def test_control_a_decoder_reading_views_copies_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the decoder reads the stage's memoryviews (no DecoderStage door): its
    ``bytes(view)`` is a second copy, and the decoded blob is not the driver's bytes."""
    from mgpipe.runtime.transport.serve import CopyingStage

    monkeypatch.setattr(CopyingStage, "for_decoder", lambda self: self)
    cp = tc.server_copies()
    assert cp["decoded_blob_is_the_copy"] == 0, cp  # the pin above would fail


def test_the_benchmark_runs_quick() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "transport_cliffs.py"),
                          "--quick"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ratio 500 / 5000" in out.stdout and "ratio spawn / monolith" in out.stdout
