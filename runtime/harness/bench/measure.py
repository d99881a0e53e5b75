"""Run one cell -- (workload, strategy, transport, backend) -- and measure it.

Two kinds of pass, each on a fresh rig (:mod:`.rigs`: stage, backend, applier, client):

* the **census** (untimed, instrumented): records and bytes (the client's emitter counts
  them; a probe before the backend splits the bytes per call), CSOs minted, the CSO
  cache's counters (version-check answers, hashes, ...), Python calls per draw on the
  client thread (``sys.setprofile``, over the first steady frame), the backend's
  counters, the workload's own ground truth and the digest of the working block every
  draw saw (a probe between the applier and the backend);
* the **timing** passes (clean): CPU time per thread (``time.thread_time_ns``) per frame.
  The server's time is the sum, over records, of the time spent in the applier (decode +
  apply + backend) on whichever thread applies (the caller's in monolith, the apply
  thread in inproc), of which the backend's is the time inside its entries; the
  client's is its thread's time minus the server's share of it and minus transport
  waits. One timer read is subtracted per timed call. The cyclic garbage collector runs
  between frames, never inside a timed one (its pauses would land on whichever strategy
  happened to allocate last, and grow with what a recording backend keeps).

Frame 0 carries the setup (object creation, first CSOs); per-draw figures and the frame
percentiles are over the steady frames 1..F-1.

Under ``spawn`` the server runs in its own process. Its CPU per frame is its process
CPU clock (all its threads; the clock its own Report reads) read from here at each
frame's end, after the frame is drained; the Report's whole-session figure (from
``Welcome`` to the end of its drain, frame 0 and the teardown included) is kept beside
it, and stands in where the clock cannot be read. The backend's share, the probe's
per-call bytes, the working-block digest and the steady backend counters are not
observable there (``None``); the backend's final counters and its stream digest (the
recorder's) are, and the guard holds them equal to monolith's.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from .pipe import Client
from .rigs import backend_counters, implemented_calls, make_rig
from .strategies import Strategy
from .workloads import Workload

__all__ = [
    "Sizes",
    "Cell",
    "Frames",
    "measure_cell",
    "time_cell",
    "summarize",
    "timer_cost_ns",
    "backend_counters",
    "RENDER_STATE_CALLS",
]

#: Records that carry render state, for the render-state share of the bytes.
RENDER_STATE_CALLS = ("CreateRenderState", "BindRenderState", "DeleteRenderState",
                      "SetDynamicState", "SetResidualValueState")  # fmt: skip

_tt = time.thread_time_ns


@dataclass(frozen=True)
class Sizes:
    draws: int  # per frame
    frames: int  # frame 0 is warm-up
    repeats: int  # timing passes


@dataclass
class Cell:
    workload: str
    strategy: str
    transport: str
    backend: str
    status: str = "ok"  # ok | not available | failed
    reason: str = ""
    draws_per_frame: int = 0
    frames: int = 0
    steady_draws: int = 0
    structure: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.workload, self.strategy, self.transport, self.backend)


def timer_cost_ns(samples: int = 20000) -> float:
    """CPU cost of one ``thread_time_ns`` read (median of five batches)."""
    runs = []
    for _ in range(5):
        t0 = _tt()
        for _ in range(samples):
            _tt()
        runs.append((_tt() - t0) / (samples + 1))
    return statistics.median(runs)


def _cso_stats(client: Client) -> dict[str, int]:
    s = getattr(client.tr.cso, "stats", None)
    if s is None or not is_dataclass(s):
        return {}
    return {k: int(v) for k, v in asdict(s).items() if isinstance(v, int)}


def _set_hashes(client: Client) -> int:
    """Hashes the set-hash suppressors computed (``kVarTail`` set calls)."""
    return int(getattr(getattr(client.tr, "sup", None), "hashes", 0))


def _delta(after: Mapping[str, int], before: Mapping[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in sorted(after)}


def census(workload: Callable[..., Workload], strategy: Strategy, transport: str, backend: str,
           sizes: Sizes, seed: int) -> dict[str, Any]:  # fmt: skip
    """The untimed instrumented pass (see the module docstring)."""
    rig = make_rig(strategy, transport, backend, timed=False, census=True)
    c, wl = rig.client, workload(sizes.draws, seed, track=True, backend_calls=rig.implemented)
    calls = Counter()

    in_server = rig.in_server

    def profile(frame: Any, event: str, arg: Any) -> None:
        if not in_server[0]:  # monolith applies on this thread: not the client's calls
            calls[event] += 1

    wl.setup(c)
    wl.frame(c, 0)
    c.present()
    minted0, stats0, draws0, sets0 = c.csos_minted, _cso_stats(c), c.draws, _set_hashes(c)
    counters0 = rig.counters()
    em, probe = c.em, rig.probe
    sent0 = (em.records, em.wire_bytes, em.staged_bytes, Counter(em.by_call))
    if probe is not None:
        probe.counting = True
    hops = 0  # the census sink wrapper's own call, once per record applied on this thread
    profiled = 0  # draws of the one profiled frame (the first steady one)
    for i in range(1, sizes.frames):
        if i > 1:
            wl.frame(c, i)
            c.present()
            continue
        a0, p0 = rig.applied_here, c.draws
        gc.collect()  # no finalizer of an earlier cell's garbage runs inside the count
        gc.disable()
        sys.setprofile(profile)
        try:
            wl.frame(c, i)
        finally:
            sys.setprofile(None)
            gc.enable()
        hops += rig.applied_here - a0
        profiled = c.draws - p0
        c.present()
    steady = c.draws - draws0
    minted, stats, sets = c.csos_minted, _cso_stats(c), _set_hashes(c)
    if probe is not None:
        probe.counting = False  # the frames only, not the teardown
    records, ring, staged = (em.records - sent0[0], em.wire_bytes - sent0[1],
                             em.staged_bytes - sent0[2])  # fmt: skip
    by_call = {k: v for k, v in sorted((em.by_call - sent0[3]).items())}
    counters = rig.counters()  # the end of the last frame (None: not observable)
    final = rig.finish()  # after the teardown, as the backend reports itself
    d = max(steady, 1)
    nbytes = None if probe is None else dict(sorted(probe.nbytes.items()))
    steady_counters = None if counters is None else _delta(counters, counters0 or {})
    return {
        "steady_draws": steady,
        "records_per_draw": records / d,
        "wire_bytes_per_draw": (ring + staged) / d,
        "ring_bytes_per_draw": ring / d,
        "stage_bytes_per_draw": staged / d,
        "render_state_bytes_per_draw": (
            None if nbytes is None else sum(nbytes.get(k, 0) for k in RENDER_STATE_CALLS) / d
        ),
        "records_by_call": by_call,
        "bytes_by_call": nbytes,
        "csos_minted": minted,
        "csos_minted_steady": minted - minted0,
        "cso_stats": stats,
        "cso_stats_steady": _delta(stats, stats0),
        "set_hashes_per_draw": (sets - sets0) / d,
        "python_calls_per_draw": (calls["call"] - hops) / max(profiled, 1),
        "c_calls_per_draw": calls["c_call"] / max(profiled, 1),
        "pipeline_states_seen": len(wl.pipeline_seen),
        "blocks_seen": len(wl.blocks_seen),
        "backend_info": final["info"],
        "backend_counters": final["counters"],
        "backend_counters_steady": steady_counters,
        "stream_digest": final["stream_digest"],
        "pipelines_created": final["counters"].get("pipelines_created"),
        "gl_calls_per_draw": (
            None
            if steady_counters is None or "gl_calls" not in steady_counters
            else steady_counters["gl_calls"] / d
        ),
        "draw_state_digest": None if probe is None else probe.digest.hexdigest(),
    }


@dataclass
class Frames:
    """Raw per-frame figures of the steady frames of one or more timing passes (and, for a
    server in its own process, its CPU per whole session and that session's draws)."""

    client: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)
    backend: list[float] = field(default_factory=list)
    client_per_draw: list[float] = field(default_factory=list)
    draws: int = 0
    session_server_ns: int = 0
    session_draws: int = 0


def timing_pass(workload: Callable[..., Workload], strategy: Strategy, transport: str,
                backend: str, sizes: Sizes, seed: int, tcost: float, into: Frames) -> None:  # fmt: skip
    """One clean timed pass; appends its steady frames to ``into``."""
    in_thread = transport == "monolith"
    rig = make_rig(strategy, transport, backend, timed=True)
    c, wl = rig.client, workload(sizes.draws, seed, backend_calls=rig.implemented)
    wl.setup(c)
    tb = rig.timed_backend
    local = rig.local
    for i in range(sizes.frames):
        gc.collect()  # between frames: a collection never lands inside a timed frame
        gc.disable()
        w0, d0 = rig.wait_ns, c.draws
        if local:
            s0, a0, b0, e0 = rig.server_ns, rig.applied, tb.ns, tb.calls
        else:
            v0 = rig.server_clock_ns()  # the server is idle here (drained below)
        try:
            t0 = _tt()
            wl.frame(c, i)
            c.present()
            t1 = _tt()
        finally:
            gc.enable()
        client = (t1 - t0) - (rig.wait_ns - w0) - tcost
        if local:
            records, entries = rig.applied - a0, tb.calls - e0
            raw = rig.server_ns - s0  # one timer read per record, two per backend entry inside
            server = raw - tcost * (records + 2 * entries)
            backend = tb.ns - b0 - tcost * entries
            if in_thread:
                client -= raw + tcost * records
        else:
            rig.drain()  # after t1: a transport wait, never the client's time
            v1 = rig.server_clock_ns()
            server = None if v0 is None or v1 is None else v1 - v0
        if i:  # frame 0 is warm-up
            into.client.append(client)
            if local:
                into.server.append(server)
                into.backend.append(backend)
            elif server is not None:
                into.server.append(server)
            into.client_per_draw.append(client / max(c.draws - d0, 1))
            into.draws += c.draws - d0
    done = rig.finish(summary=False)
    if done["server_cpu_ns"] is not None:  # the server process's own CPU, whole session
        into.session_server_ns += done["server_cpu_ns"]
        into.session_draws += c.draws


def _pct(xs: list[float], q: float) -> float | None:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else None


def summarize(f: Frames) -> dict[str, Any]:
    d = max(f.draws, 1)
    out: dict[str, Any] = {
        "client_ns_per_draw": sum(f.client) / d,
        "client_ns_per_draw_p50": _pct(f.client_per_draw, 0.50),
        # the least disturbed frame (load only ever adds CPU time): the ratio guard's figure
        "client_ns_per_draw_min": min(f.client_per_draw) if f.client_per_draw else None,
        "client_frame_ns_p50": _pct(f.client, 0.50),
        "client_frame_ns_p99": _pct(f.client, 0.99),
        "frames_timed": len(f.client),
        "server_scope": "steady frames",
        "server_ns_per_draw": sum(f.server) / d,
        "backend_ns_per_draw": sum(f.backend) / d,
        "pipe_server_ns_per_draw": (sum(f.server) - sum(f.backend)) / d,
        "server_frame_ns_p50": _pct(f.server, 0.50),
        "server_frame_ns_p99": _pct(f.server, 0.99),
    }
    if f.session_draws:  # a server process: no backend share; its Report's whole session
        out.update(backend_ns_per_draw=None, pipe_server_ns_per_draw=None,
                   server_session_ns_per_draw=f.session_server_ns / f.session_draws)  # fmt: skip
        if len(f.server) != len(f.client):  # its clock unreadable from here: the Report's
            out.update(server_scope="server process, whole session",
                       server_ns_per_draw=out["server_session_ns_per_draw"],
                       server_frame_ns_p50=None, server_frame_ns_p99=None)  # fmt: skip
    return out


def measure_cell(workload: Callable[..., Workload], strategy: Strategy, transport: str,
                 backend: str, sizes: Sizes, seed: int) -> Cell:  # fmt: skip
    """The cell with its census (timing passes are the runner's, interleaved)."""
    cell = Cell(workload.name, strategy.key, transport, backend, draws_per_frame=sizes.draws,
                frames=sizes.frames)  # fmt: skip
    why = strategy.unavailable() or strategy.unavailable_on(transport, backend)
    needs = getattr(workload, "unavailable_on", None)  # a stream of calls a backend may lack
    if not why and needs is not None:
        why = needs(implemented_calls(backend))
    if why:
        cell.status, cell.reason = "not available", why
        return cell
    try:
        cell.structure = census(workload, strategy, transport, backend, sizes, seed)
        cell.steady_draws = cell.structure["steady_draws"]
    except Exception as exc:  # a backend that cannot start here: one line, not a traceback
        cell.status, cell.reason = "failed", f"{type(exc).__name__}: {exc}".splitlines()[0]
    return cell


def time_cell(cell: Cell, workload: Callable[..., Workload], strategy: Strategy, sizes: Sizes,
              seed: int, tcost: float, into: Frames) -> None:  # fmt: skip
    """One timing pass of an ``ok`` cell (a failure marks the cell failed)."""
    if cell.status != "ok":
        return
    try:
        timing_pass(workload, strategy, cell.transport, cell.backend, sizes, seed, tcost, into)
    except Exception as exc:
        cell.status, cell.reason = "failed", f"{type(exc).__name__}: {exc}".splitlines()[0]
