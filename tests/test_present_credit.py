"""Present credit (seed 001 §11.6) as the bench reports it: frames in flight never exceed
the credit, credit 0 leaves none, a steady MinecraftFrame frame blocks on no round trip,
and run-ahead at credit 1 cuts the client's stall per frame (the measured point of it)."""

from __future__ import annotations

import pytest

from mgpipe.runtime.harness.bench import credit


@pytest.mark.parametrize("transport", ["inproc", "spawn"])
def test_frames_in_flight_follow_the_credit(transport: str) -> None:
    zero = credit.measure(transport, 0, frames=8, draws=100)
    one = credit.measure(transport, 1, frames=8, draws=100)
    assert zero["frames_in_flight_max"] == 0  # credit 0: every present waited for itself
    assert one["frames_in_flight_max"] <= 1
    assert zero["blocking_round_trips_per_frame_max"] == 0
    assert one["blocking_round_trips_per_frame_max"] == 0
    assert one["frames"] == zero["frames"] == 6


def test_text_has_a_row_per_transport_and_credit() -> None:
    rows = [dict(transport=t, credit=k, frames_in_flight_max=k, frames_in_flight_mean=k,
                 client_stall_ns_per_frame_p50=1000.0, client_stall_ns_per_frame_mean=1000.0,
                 blocking_round_trips_per_frame_max=0)
            for t in credit.CREDIT_TRANSPORTS for k in credit.CREDITS]  # fmt: skip
    lines = credit.text(rows).splitlines()
    assert len(lines) == 2 + len(rows)
