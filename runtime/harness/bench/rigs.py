"""The rigs a cell runs on: stage -> backend -> applier -> client, in this process or not.

* :class:`LocalRig` (``monolith``, ``inproc``): the backend (strategy-wrapped) and the
  applier live here; the census puts a probe between them, a timing pass times the
  applier per record and the backend per entry.
* :class:`SpawnRig` (``spawn``): the client runs here against a
  :class:`~mgpipe.runtime.transport.spawn.SpawnTransport`; the applier and the backend
  run in the server process, which reports its own CPU time and what the backend says
  about itself (``stats()``, ``info()``, ``stream_digest()``) once, at ``Close``.
  Nothing of the server is observable in between: no per-record timing, no probe, no
  mid-run counters.

Both answer the same questions (:meth:`counters` mid-run, :meth:`finish` at the end) so
the census and the timing pass do not care where the server runs.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import xxhash

from .pipe import Applier, Client, SpawnTransport, StageSegment, make_backend, tables
from .strategies import Strategy

__all__ = ["LocalRig", "SpawnRig", "make_rig", "backend_counters", "backend_info",
           "RING_CAPACITY", "STAGE_CAPACITY", "COUNTER_ACCESSORS", "CENSUS_SUMMARY"]  # fmt: skip

RING_CAPACITY = 32 << 20  # large enough that a frame never waits on ring space
STAGE_CAPACITY = 64 << 20  # ... nor on stage space (the waits would be transport time)
#: Where a backend keeps its counters: a mapping, a method returning one, or an object with
#: ``snapshot()``; the first that yields a mapping wins.
COUNTER_ACCESSORS = ("stats", "vulkan_stats", "counters")

_tt = time.thread_time_ns


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
            return _numbers(c)
    return {}


def _numbers(c: Mapping[str, Any]) -> dict[str, int]:
    return {str(k): int(v) for k, v in c.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}  # fmt: skip


def backend_info(backend: Any) -> dict[str, str]:
    """What the backend says it ran on (``info()``: renderer, device ...), text only."""
    info = getattr(backend, "info", None)
    got = info() if callable(info) else None
    return _texts(got)


def _texts(got: Any) -> dict[str, str]:
    if not isinstance(got, Mapping):
        return {}
    return {str(k): v if isinstance(v, str) else str(v).lower()
            for k, v in got.items() if isinstance(v, (str, bool))}  # fmt: skip


#: The Vulkan validation switch (the backend reads it when it is built).
VK_VALIDATION_ENV = "MGPIPE_VK_VALIDATION"


def timing_env() -> dict[str, str]:
    """What a timing pass builds its backend under: the Vulkan validation layer off (a
    debugging layer is neither the pipe's cost nor the backend's) unless the caller chose;
    the census keeps the caller's setting (``auto``: on where the layer is installed) and
    the guard holds its messages to zero."""
    return {} if VK_VALIDATION_ENV in os.environ else {VK_VALIDATION_ENV: "off"}


@contextmanager
def _env(extra: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: What the census asks the backend for at the end (the spawn server's config ``summary``):
#: the stream digest is cheap (xxh64 over the records and blobs as applied); the
#: recorder's recording digest would replay every record.
CENSUS_SUMMARY = ["stream_digest", "stats", "info"]


def _digest(backend: Any) -> str | None:
    fn = getattr(backend, "stream_digest", None)
    return str(fn()) if callable(fn) else None


class _Waits:
    """The client's transport waits, timed (they are transport time, not the client's)."""

    def __init__(self, client: Client) -> None:
        self.wait_ns = 0
        tr = client.transport
        wait = tr.wait_applied

        def timed_wait(*a: Any, **k: Any) -> None:
            t0 = _tt()
            try:
                wait(*a, **k)
            finally:
                self.wait_ns += _tt() - t0

        tr.wait_applied = timed_wait


class LocalRig(_Waits):
    """stage -> backend (strategy-wrapped) -> applier (timed) -> client (strategy-installed)."""

    local = True

    def __init__(self, strategy: Strategy, transport: str, backend: str, timed: bool,
                 census: bool = False) -> None:  # fmt: skip
        with _env(timing_env() if timed else {}):
            be = make_backend(backend)
        self.raw_backend = be
        # innermost: the backend's own entries timed (a strategy's server half is the pipe's)
        self.timed_backend = TimedBackend(be) if timed else None
        inner = self.timed_backend if self.timed_backend is not None else be
        self.backend = strategy.wrap_backend(inner) if strategy.wrap_backend else inner
        self.probe = Probe(self.backend) if census else None
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
        self.client = Client(sink, stage, transport=transport, ring_capacity=RING_CAPACITY,
                             reverse=self.applier.apply.reverse,  # the applier's replies
                             **strategy.client_kwargs())  # fmt: skip
        if strategy.install is not None:
            strategy.install(self.client)
        super().__init__(self.client)

    def counters(self) -> dict[str, int] | None:
        """The backend's counters now (mid-run)."""
        return backend_counters(self.backend)

    def finish(self, summary: bool = True) -> dict[str, Any]:
        """Close the client (drain, release its CSOs) and the backend; with ``summary``,
        what the backend says about itself after the teardown (as a server process
        reports it)."""
        self.client.close()
        out: dict[str, Any] = {"server_cpu_ns": None}
        if summary:
            out.update(counters=backend_counters(self.backend), info=backend_info(self.backend),
                       stream_digest=_digest(self.raw_backend))  # fmt: skip
        closer = getattr(self.raw_backend, "close", None)
        if callable(closer):
            closer()
        return out


@lru_cache(maxsize=None)
def implemented_calls(backend: str) -> frozenset[str]:
    """The calls backend ``backend`` implements (from a local instance, made once)."""
    be = make_backend(backend)
    try:
        table = Applier(be, StageSegment(1 << 12)).table
        return frozenset(k for k, v in table.items() if v is not None)
    finally:
        closer = getattr(be, "close", None)
        if callable(closer):
            closer()


class SpawnRig(_Waits):
    """The client here, the applier and backend in the server process (``spawn``)."""

    local = False
    probe = None
    timed_backend = None
    in_server = (False,)
    applied_here = 0

    def __init__(self, strategy: Strategy, backend: str, census: bool) -> None:
        if strategy.wrap_backend is not None:
            raise ValueError(f"strategy ({strategy.key}) has a server half in this process")
        self.implemented = implemented_calls(backend)
        self.transport = SpawnTransport(
            backend, ring_capacity=RING_CAPACITY, stage_capacity=STAGE_CAPACITY,
            config={"summary": CENSUS_SUMMARY if census else []},
            env=None if census else timing_env())  # fmt: skip
        # Linux's process CPU clock id (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED))
        self._clock: int | None = (~self.transport.child_pid << 3) | 2
        self.client = Client(None, self.transport.stage, transport=self.transport,  # type: ignore[arg-type]
                             **strategy.client_kwargs())  # fmt: skip
        if strategy.install is not None:
            strategy.install(self.client)
        super().__init__(self.client)

    def counters(self) -> dict[str, int] | None:
        return None  # the server process reports once, at Close

    def server_clock_ns(self) -> int | None:
        """The server process's CPU time so far, all its threads: its process CPU clock
        (the clock its own Report reads), read from here through the clock id
        ``clock_getcpuclockid`` gives for its pid; None where the system has none."""
        if self._clock is None:
            return None
        try:
            return time.clock_gettime_ns(self._clock)
        except OSError:
            self._clock = None
            return None

    def drain(self, settle_s: float = 1.0) -> None:
        """Wait until the server has applied every record and parked (the frame's end, for
        its clock: a running process's CPU clock, read from another, moves in scheduler
        ticks; once it blocks, its time is booked). ``settle_s`` bounds the wait for the
        park (a measurement aid, not a liveness rule: a late park only shifts time to
        the next frame)."""
        t = self.transport
        t.wait_applied()
        bell, end = t.bell, time.monotonic() + settle_s
        while not t.lost and not bell.page.load(bell.peer_parked) and time.monotonic() < end:
            time.sleep(0)
        time.sleep(0)  # the park's flag goes up just before its poll blocks

    def finish(self, summary: bool = True) -> dict[str, Any]:
        """Close the client; the server's Report (its CPU since ``Welcome``, its summary)."""
        self.client.close()
        report = self.transport.report
        if self.transport.lost or report is None:
            raise RuntimeError(f"spawn server lost: {self.transport.lost_reason}")
        if int(report["applied_seq"]) != self.client.records:
            raise RuntimeError(f"spawn server applied {report['applied_seq']} of "
                               f"{self.client.records} records")  # fmt: skip
        summary = report.get("summary", {})
        digest = summary.get("stream_digest")
        return {"counters": _numbers(summary.get("stats") or {}),
                "info": _texts(summary.get("info")),
                "stream_digest": None if digest is None else str(digest),
                "server_cpu_ns": int(report["cpu_ns"])}  # fmt: skip


def make_rig(strategy: Strategy, transport: str, backend: str, timed: bool,
             census: bool = False) -> LocalRig | SpawnRig:  # fmt: skip
    if transport == "spawn":
        return SpawnRig(strategy, backend, census)
    return LocalRig(strategy, transport, backend, timed, census)


class TimedBackend:
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


class Probe:
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
