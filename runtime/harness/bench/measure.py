"""Run one cell -- (workload, strategy, transport, backend) -- and measure it.

Two kinds of pass, each on a fresh stage / backend / applier / client:

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
"""

from __future__ import annotations

import gc
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

import xxhash

from .pipe import Applier, Client, StageSegment, make_backend, tables
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
    "RENDER_STATE_CALLS",
]

RING_CAPACITY = 32 << 20  # large enough that a frame never waits on ring space
STAGE_CAPACITY = 64 << 20  # ... nor on stage space (the waits would be transport time)
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


class _Rig:
    """stage -> backend (strategy-wrapped) -> applier (timed) -> client (strategy-installed)."""

    def __init__(self, strategy: Strategy, transport: str, backend: str, timed: bool,
                 census: bool = False) -> None:  # fmt: skip
        be = make_backend(backend)
        self.raw_backend = be
        # innermost: the backend's own entries timed (a strategy's server half is the pipe's)
        self.timed_backend = _TimedBackend(be) if timed else None
        inner = self.timed_backend if self.timed_backend is not None else be
        self.backend = strategy.wrap_backend(inner) if strategy.wrap_backend else inner
        self.probe = _Probe(self.backend) if census else None
        if self.probe is not None:
            self.backend = self.probe
        stage = StageSegment(STAGE_CAPACITY)
        self.applier = Applier(self.backend, stage)
        #: the calls the backend implements (a workload leaves out what it cannot take)
        self.implemented = frozenset(k for k, v in self.applier.table.items() if v is not None)
        self.server_ns = 0
        self.applied = 0
        apply = self.applier.apply

        def timed_apply(rec: Any) -> object:
            t0 = _tt()
            try:
                return apply(rec)
            finally:
                self.server_ns += _tt() - t0
                self.applied += 1

        self.in_server = [False]
        self.applied_here = 0
        me = threading.get_ident()

        def census_apply(rec: Any) -> object:
            here = threading.get_ident() == me
            self.in_server[0] = here
            try:
                return apply(rec)
            finally:
                self.in_server[0] = False
                self.applied_here += here

        sink = timed_apply if timed else census_apply if census else apply
        self.client = Client(sink, stage, transport=transport,
                             ring_capacity=RING_CAPACITY, **strategy.client_kwargs())  # fmt: skip
        if strategy.install is not None:
            strategy.install(self.client)
        self.wait_ns = 0
        tr = self.client.transport
        wait = tr.wait_applied

        def timed_wait(*a: Any, **k: Any) -> None:
            t0 = _tt()
            try:
                wait(*a, **k)
            finally:
                self.wait_ns += _tt() - t0

        tr.wait_applied = timed_wait

    def close(self) -> None:
        self.client.close()
        closer = getattr(self.raw_backend, "close", None)
        if callable(closer):
            closer()


#: Where a backend keeps its counters: a mapping, a method returning one, or an object with
#: ``snapshot()``; the first that yields a mapping wins.
COUNTER_ACCESSORS = ("stats", "vulkan_stats", "counters")


def backend_counters(backend: Any) -> dict[str, int]:
    """The backend's own counters (integers only), e.g. ``gl_calls``, ``pipelines_created``."""
    for name in COUNTER_ACCESSORS:
        c = getattr(backend, name, None)
        if c is None:
            continue
        if hasattr(c, "snapshot"):
            c = c.snapshot()
        elif callable(c):
            c = c()
        if isinstance(c, Mapping):
            return {str(k): int(v) for k, v in c.items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)}  # fmt: skip
    return {}


def backend_info(backend: Any) -> dict[str, str]:
    """What the backend says it ran on (``info()``: renderer, device ...), text only."""
    info = getattr(backend, "info", None)
    got = info() if callable(info) else None
    return (
        {str(k): v for k, v in got.items() if isinstance(v, str)}
        if isinstance(got, Mapping)
        else {}
    )


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


class _TimedBackend:
    """Timing-pass backend wrapper: CPU ns spent inside the backend's entries (``ns``, over
    ``calls`` entries), so the server's time splits into the pipe's and the backend's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.ns = 0
        self.calls = 0
        for row in tables.tables().CALLS:
            name = str(row["name"])
            entry = getattr(inner, name, None)
            if entry is not None:
                setattr(self, name, self._wrap(entry))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _wrap(self, entry: Callable[[Any, Any], object]) -> Callable[[Any, Any], object]:
        def timed(ctx: Any, d: Any) -> object:
            t0 = _tt()
            try:
                return entry(ctx, d)
            finally:
                self.ns += _tt() - t0
                self.calls += 1

        return timed


class _Probe:
    """Census-only backend wrapper between the applier and the backend.

    Every entry the backend implements is wrapped: while ``counting``, the record's bytes
    (its ring size plus its blob) are tallied per call; at every draw the working block's
    xxh64 joins :attr:`digest`. Entries the backend leaves null stay null.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.digest = xxhash.xxh64()
        self.counting = False
        self.nbytes: Counter[str] = Counter()
        for row in tables.tables().CALLS:
            name = str(row["name"])
            entry = getattr(inner, name, None)
            if entry is not None:
                setattr(self, name, self._wrap(name, entry))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _wrap(self, name: str, entry: Callable[[Any, Any], object]) -> Callable[[Any, Any], object]:
        nbytes, draw = self.nbytes, name == "DrawVbo"

        def probed(ctx: Any, d: Any) -> object:
            if self.counting:
                nbytes[name] += d.size + (len(d.blob) if d.blob is not None else 0)
            if draw:
                self.digest.update(xxhash.xxh64_digest(bytes(ctx.render_state.data)))
            return entry(ctx, d)

        return probed


def census(workload: Callable[..., Workload], strategy: Strategy, transport: str, backend: str,
           sizes: Sizes, seed: int) -> dict[str, Any]:  # fmt: skip
    """The untimed instrumented pass (see the module docstring)."""
    rig = _Rig(strategy, transport, backend, timed=False, census=True)
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
    counters0 = backend_counters(rig.backend)
    em, probe = c.em, rig.probe
    sent0 = (em.records, em.wire_bytes, em.staged_bytes, Counter(em.by_call))
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
    probe.counting = False  # the frames only, not the teardown
    records, ring, staged = (em.records - sent0[0], em.wire_bytes - sent0[1],
                             em.staged_bytes - sent0[2])  # fmt: skip
    by_call = {k: v for k, v in sorted((em.by_call - sent0[3]).items())}
    counters = backend_counters(rig.backend)
    info = backend_info(rig.backend)
    digest = probe.digest.hexdigest()
    rig.close()
    d = max(steady, 1)
    rs_bytes = sum(probe.nbytes[k] for k in RENDER_STATE_CALLS)
    return {
        "steady_draws": steady,
        "records_per_draw": records / d,
        "wire_bytes_per_draw": (ring + staged) / d,
        "ring_bytes_per_draw": ring / d,
        "stage_bytes_per_draw": staged / d,
        "render_state_bytes_per_draw": rs_bytes / d,
        "records_by_call": by_call,
        "bytes_by_call": dict(sorted(probe.nbytes.items())),
        "csos_minted": minted,
        "csos_minted_steady": minted - minted0,
        "cso_stats": stats,
        "cso_stats_steady": _delta(stats, stats0),
        "set_hashes_per_draw": (sets - sets0) / d,
        "python_calls_per_draw": (calls["call"] - hops) / max(profiled, 1),
        "c_calls_per_draw": calls["c_call"] / max(profiled, 1),
        "pipeline_states_seen": len(wl.pipeline_seen),
        "blocks_seen": len(wl.blocks_seen),
        "backend_info": info,
        "backend_counters": counters,
        "backend_counters_steady": _delta(counters, counters0),
        "pipelines_created": counters.get("pipelines_created"),
        "gl_calls_per_draw": (
            None
            if "gl_calls" not in counters
            else (counters["gl_calls"] - counters0.get("gl_calls", 0)) / d
        ),
        "draw_state_digest": digest,
    }


@dataclass
class Frames:
    """Raw per-frame figures of the steady frames of one or more timing passes."""

    client: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)
    backend: list[float] = field(default_factory=list)
    client_per_draw: list[float] = field(default_factory=list)
    draws: int = 0


def timing_pass(workload: Callable[..., Workload], strategy: Strategy, transport: str,
                backend: str, sizes: Sizes, seed: int, tcost: float, into: Frames) -> None:  # fmt: skip
    """One clean timed pass; appends its steady frames to ``into``."""
    in_thread = transport == "monolith"
    rig = _Rig(strategy, transport, backend, timed=True)
    c, wl = rig.client, workload(sizes.draws, seed, backend_calls=rig.implemented)
    wl.setup(c)
    tb = rig.timed_backend
    for i in range(sizes.frames):
        gc.collect()  # between frames: a collection never lands inside a timed frame
        gc.disable()
        s0, a0, w0, d0 = rig.server_ns, rig.applied, rig.wait_ns, c.draws
        b0, e0 = tb.ns, tb.calls
        try:
            t0 = _tt()
            wl.frame(c, i)
            c.present()
            t1 = _tt()
        finally:
            gc.enable()
        records, entries = rig.applied - a0, tb.calls - e0
        raw = rig.server_ns - s0  # one timer read per record, two per backend entry inside
        server = raw - tcost * (records + 2 * entries)
        backend = tb.ns - b0 - tcost * entries
        client = (t1 - t0) - (rig.wait_ns - w0) - tcost
        if in_thread:
            client -= raw + tcost * records
        if i:  # frame 0 is warm-up
            into.client.append(client)
            into.server.append(server)
            into.backend.append(backend)
            into.client_per_draw.append(client / max(c.draws - d0, 1))
            into.draws += c.draws - d0
    rig.close()


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else 0.0


def summarize(f: Frames) -> dict[str, Any]:
    d = max(f.draws, 1)
    return {
        "client_ns_per_draw": sum(f.client) / d,
        "client_ns_per_draw_p50": _pct(f.client_per_draw, 0.50),
        "server_ns_per_draw": sum(f.server) / d,
        "backend_ns_per_draw": sum(f.backend) / d,
        "pipe_server_ns_per_draw": (sum(f.server) - sum(f.backend)) / d,
        "client_frame_ns_p50": _pct(f.client, 0.50),
        "client_frame_ns_p99": _pct(f.client, 0.99),
        "server_frame_ns_p50": _pct(f.server, 0.50),
        "server_frame_ns_p99": _pct(f.server, 0.99),
        "frames_timed": len(f.client),
    }


def measure_cell(workload: Callable[..., Workload], strategy: Strategy, transport: str,
                 backend: str, sizes: Sizes, seed: int) -> Cell:  # fmt: skip
    """The cell with its census (timing passes are the runner's, interleaved)."""
    cell = Cell(workload.name, strategy.key, transport, backend, draws_per_frame=sizes.draws,
                frames=sizes.frames)  # fmt: skip
    why = strategy.unavailable()
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
