"""GPU-side time per frame on GLES: ``GL_EXT_disjoint_timer_query``, measured by the GPU.

A ``GL_TIME_ELAPSED_EXT`` query is begun at a frame's first rendering verb (clear or
draw: :meth:`GlesGpuTimer.frame_begin`; uploads and object creation before it are not in
the frame's time) and ended at its ``Present``
(:meth:`GlesGpuTimer.frame_end`). Results are read without waiting, oldest first, at a
later ``Present`` (a frame later at the earliest), and at :meth:`close` (which then waits:
the context is going away). Before a round of results is taken, ``GL_GPU_DISJOINT_EXT`` is
read: if the GPU reported a disjoint event (clock change, ...), the results of that round
are dropped and counted (``dropped_disjoint``), never reported. A result longer than the
wall-clock time from its ``glBeginQueryEXT`` to its read cannot be the frame's and is
dropped and counted too (``dropped_implausible``): Mesa's llvmpipe answers the first
time-elapsed query of a context from a start time of zero (the result is the host's
uptime).

The entry points are loaded like the backend's other extension entries
(:mod:`.gl`, eglGetProcAddress) and go through a :class:`~.gl.CountedGL` of their own: the
timer's calls are instrumentation and never change the backend's ``gl_calls``.

Without the extension (or its entry points) the timer makes no call and
:attr:`GlesGpuTimer.available` is ``"gpu time not available: <reason>"``.
"""

from __future__ import annotations

import ctypes
import time
from collections import deque

from OpenGL.GLES2.EXT.disjoint_timer_query import (GL_GPU_DISJOINT_EXT, GL_QUERY_RESULT_AVAILABLE_EXT,
                                                   GL_QUERY_RESULT_EXT, GL_TIME_ELAPSED_EXT)  # fmt: skip

from .gl import CountedGL, has_entry

__all__ = ["GlesGpuTimer", "EXTENSION", "ENTRIES", "AVAILABLE"]

EXTENSION = "GL_EXT_disjoint_timer_query"
ENTRIES = ("glGenQueriesEXT", "glDeleteQueriesEXT", "glBeginQueryEXT", "glEndQueryEXT",
           "glGetQueryObjectuivEXT", "glGetQueryObjectui64vEXT")  # fmt: skip
AVAILABLE = "available"


def availability(extensions: set[str]) -> str:
    if EXTENSION not in extensions:
        return f"gpu time not available: {EXTENSION} missing"
    missing = [e for e in ENTRIES if not has_entry(e)]
    if missing:
        return f"gpu time not available: {EXTENSION} listed but {', '.join(missing)} not exported"
    return AVAILABLE


class GlesGpuTimer:
    def __init__(self, extensions: set[str]) -> None:
        self.available = availability(extensions)
        self.gl = CountedGL()
        self._free: list[int] = []
        self._all: list[int] = []
        self._active: int | None = None
        self._begun = 0  # wall-clock ns at the active query's begin
        self._pending: deque[tuple[int, int, int]] = deque()  # (query, begun, frame), in order
        self.frame_ns: list[int] = []
        self.frame_index: list[int] = []  # the presented frame (0, 1, ...) each result timed
        self.dropped_disjoint = 0
        self.dropped_implausible = 0
        self.frames_ended = 0
        self._u = ctypes.c_uint(0)
        self._u64 = ctypes.c_uint64(0)

    @property
    def on(self) -> bool:
        return self.available == AVAILABLE

    def frame_begin(self) -> None:
        """A frame's first entry: open its query (once per frame)."""
        if self._active is not None or not self.on:
            return
        if not self._free:
            ids = (ctypes.c_uint * 4)()
            self.gl.glGenQueriesEXT(4, ids)
            self._free.extend(ids)
            self._all.extend(ids)
        self._active = self._free.pop()
        self._begun = time.monotonic_ns()
        self.gl.glBeginQueryEXT(GL_TIME_ELAPSED_EXT, self._active)

    def frame_end(self) -> None:
        """The frame's ``Present``: close its query, then take what earlier frames left."""
        if not self.on:
            return
        self.frame_begin()  # a frame with no entry before its Present still has a query
        self.gl.glEndQueryEXT(GL_TIME_ELAPSED_EXT)
        self._pending.append((self._active, self._begun, self.frames_ended))  # type: ignore[arg-type]
        self._active = None
        self.frames_ended += 1
        self.collect(wait=False)

    def _ready(self, q: int) -> bool:
        self.gl.glGetQueryObjectuivEXT(q, GL_QUERY_RESULT_AVAILABLE_EXT, ctypes.byref(self._u))
        return bool(self._u.value)

    def collect(self, wait: bool) -> None:
        """Read the ended queries whose results are there (``wait``: all of them), in order;
        a round that saw a disjoint event is dropped."""
        got = []
        while self._pending and (wait or self._ready(self._pending[0][0])):
            q, begun, frame = self._pending.popleft()
            self.gl.glGetQueryObjectui64vEXT(q, GL_QUERY_RESULT_EXT, ctypes.byref(self._u64))
            got.append((int(self._u64.value), time.monotonic_ns() - begun, frame))
            self._free.append(q)
        if not got:
            return
        if int(self.gl.glGetIntegerv(GL_GPU_DISJOINT_EXT)):
            self.dropped_disjoint += len(got)
            return
        for ns, wall, frame in got:
            if ns > wall:
                self.dropped_implausible += 1
            else:
                self.frame_ns.append(ns)
                self.frame_index.append(frame)

    def close(self) -> None:
        """Before the context goes: a frame never presented is not timed; the rest are read."""
        if not self.on:
            return
        if self._active is not None:
            self.gl.glEndQueryEXT(GL_TIME_ELAPSED_EXT)
            self._free.append(self._active)
            self._active = None
        self.collect(wait=True)
        if self._all:
            ids = (ctypes.c_uint * len(self._all))(*self._all)
            self.gl.glDeleteQueriesEXT(len(self._all), ids)
            self._all, self._free = [], []
