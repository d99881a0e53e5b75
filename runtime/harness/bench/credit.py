"""Present credit in the bench (seed 001 §11.6): frames in flight and the client's stall.

:func:`measure` runs the MinecraftFrame stream on one transport at a present credit and
reads, at every steady frame's ``present()`` return, the presents still unapplied (frames
in flight: at most ``credit`` by construction, at credit 0 always 0) and the time the
client spent blocked that frame (credit waits + blocking round trips, the reverse link's
clocks), plus the blocking round trips per frame. :func:`report` runs credit 0 and 1 on
inproc and spawn (a real second thread / process: monolith has no flight), :func:`text`
is its table.
"""

from __future__ import annotations

from typing import Any

from ...client.api import Client
from ...server.applier import Applier
from ...wire.stage import StageSegment
from ..runner import STAGE_CAPACITY
from .workloads import MinecraftFrame

__all__ = ["measure", "report", "text", "CREDITS", "CREDIT_TRANSPORTS"]

CREDITS = (0, 1)
CREDIT_TRANSPORTS = ("inproc", "spawn")


def _client(transport: str, backend: str, credit: int) -> Client:
    if transport == "spawn":
        from ...transport.spawn import SpawnTransport

        t = SpawnTransport(backend, stage_capacity=STAGE_CAPACITY)
        return Client(None, t.stage, transport=t, present_credit=credit)  # type: ignore[arg-type]
    from ...backends.registry import make_backend

    stage = StageSegment(STAGE_CAPACITY)
    ap = Applier(make_backend(backend), stage)
    return Client(ap.apply, stage, transport=transport, present_credit=credit)


def _p50(xs: list[float]) -> float | None:
    s = sorted(xs)
    return s[len(s) // 2] if s else None


def measure(transport: str, credit: int, *, backend: str = "recorder", frames: int = 12,
            draws: int = 200) -> dict[str, Any]:  # fmt: skip
    c = _client(transport, backend, credit)
    w = MinecraftFrame(draws)
    w.setup(c)
    link = c.link
    assert link is not None  # every transport here carries the reverse channel
    inflight: list[int] = []
    stall: list[float] = []
    trips: list[int] = []
    try:
        for i in range(frames):
            s0 = link.credit_stall_ns + link.stall_ns
            r0 = sum(link.round_trips.values())
            w.frame(c, i)
            c.present()
            applied = c.transport.applied_seq
            if i >= 2:  # warm-up: setup's uploads and the first regions
                inflight.append(sum(1 for s in c._present_seqs if s > applied))
                stall.append(link.credit_stall_ns + link.stall_ns - s0)
                trips.append(sum(link.round_trips.values()) - r0)
    finally:
        c.close()
    return {"transport": transport, "credit": credit, "frames": len(inflight),
            "draws_per_frame": draws,
            "frames_in_flight_max": max(inflight, default=0),
            "frames_in_flight_mean": sum(inflight) / max(len(inflight), 1),
            "client_stall_ns_per_frame_p50": _p50(stall),
            "client_stall_ns_per_frame_mean": sum(stall) / max(len(stall), 1),
            "blocking_round_trips_per_frame_max": max(trips, default=0)}  # fmt: skip


def report(frames: int = 12, draws: int = 200) -> list[dict[str, Any]]:
    return [measure(t, k, frames=frames, draws=draws) for t in CREDIT_TRANSPORTS for k in CREDITS]


def text(rows: list[dict[str, Any]]) -> str:
    out = ["present credit (MinecraftFrame, recorder): frames in flight at present, "
           "client stall / frame",
           f"{'transport':<10} {'credit':>6} {'in flight max':>13} {'mean':>6} "
           f"{'stall p50 us':>12} {'stall mean us':>13} {'trips/frame':>11}"]  # fmt: skip
    for r in rows:
        p50 = r["client_stall_ns_per_frame_p50"]
        out.append(f"{r['transport']:<10} {r['credit']:>6} {r['frames_in_flight_max']:>13} "
                   f"{r['frames_in_flight_mean']:>6.2f} "
                   f"{(p50 or 0) / 1e3:>12.1f} {r['client_stall_ns_per_frame_mean'] / 1e3:>13.1f} "
                   f"{r['blocking_round_trips_per_frame_max']:>11}")  # fmt: skip
    return "\n".join(out)
