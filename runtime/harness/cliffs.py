"""The cliffs off the steady state (issue 20), measured side by side in one process.

Four client streams, each a loop of draws after a setup the measurement leaves out:

- ``steady``: the blend toggle (enable / draw / disable / draw): two CSOs, every draw a
  transition-cache hit and a 12-byte bind;
- ``minted``: every draw a sample mask the CSO cache no longer holds (a cycle of twice
  ``kMGPipeCsoCacheCapacity`` values, so the least recently used entry is always the one
  the next draw wants): every draw mints a CSO and evicts one (``CreateRenderState`` +
  ``DeleteRenderState`` + bind + the new CSO's empty dynamic push);
- ``rebind``: ``units`` texture units hold a texture; every draw rebinds unit 0 (two
  textures alternate), the push following what changed: one row;
- ``window``: as ``rebind``, but every draw rebinds unit 0 and the last bound unit, so the
  sampler group's window is every bound unit: ``units`` rows per push.

:func:`cpu_per_draw` is process CPU per draw (the difference of a run of ``n2`` and one of
``n1`` draws, best of ``repeat``), on the client side (the sink applies nothing:
:class:`~.measure._ClientOnly`); :func:`shape` counts records (by call) and Python calls
(``call`` + ``c_call`` profile events) per draw over the same loop.

:func:`reference` swaps in, for a measurement, the paths these cliffs had before issue 20:
a mint and an eviction through the dict-based encoder (``Emitter.emit``) and group rows
filled element by element into numpy structured arrays. Both send the same bytes
(tests/test_cliffs.py compares the streams), so the two columns of
``benchmarks/cliffs.py`` measure one stream two ways.
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..client.api import GL_TRIANGLES, Client
from ..client.cso_cache import RenderStateCsoCache, _Cso
from ..client.row_packers import RowPacker
from ..schema import layouts
from ..wire.handle import NULL
from ..schema import tables as _t
from ..wire.stage import StageSegment
from .measure import _ClientOnly
from .runner import STAGE_CAPACITY

__all__ = ["STREAMS", "make", "cpu_per_draw", "shape", "reference", "encoder_mint",
           "encoder_evict", "numpy_rows"]

#: a loop body: draws ``n`` more times on the client the setup returned
Loop = Callable[[int], None]


def _client() -> Client:
    stage = StageSegment(STAGE_CAPACITY)
    c = Client(_ClientOnly(stage), stage)
    vb = c.create_buffer(bytes(36))
    c.use_program(c.create_program({0: b"vs", 4: b"fs"}))
    c.vertex_attrib_pointer(0, vb, 3, stride=12)
    return c


def _steady(c: Client, units: int) -> Loop:
    def loop(n: int) -> None:
        for _ in range(n // 2):
            c.enable("Blend")
            c.draw_arrays(GL_TRIANGLES, 0, 3)
            c.disable("Blend")
            c.draw_arrays(GL_TRIANGLES, 0, 3)

    loop(4)  # both CSOs minted, both transitions known
    return loop


def _minted(c: Client, units: int) -> Loop:
    cycle = 2 * int(_t.constant("kMGPipeCsoCacheCapacity"))
    rs, k = c.state, [0]

    def loop(n: int) -> None:
        i = k[0]
        for _ in range(n):
            rs.set_sample_mask_value(1 + i % cycle)  # never 0: the initial mask is all ones
            c.draw_arrays(GL_TRIANGLES, 0, 3)
            i += 1
        k[0] = i

    loop(cycle)  # the cache full: from here on every draw mints and evicts
    return loop


def _textures(c: Client, units: int) -> list[Any]:
    from .scenes.render import nearest

    tex = [c.create_texture("2d", 4, 4) for _ in range(2)]
    smp = nearest(c)
    for unit in range(units):
        c.bind_texture(unit, tex[unit % 2])
        c.bind_sampler(unit, smp)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    return tex


def _rebind(c: Client, units: int) -> Loop:
    tex, k = _textures(c, units), [0]

    def loop(n: int) -> None:
        i = k[0]
        for _ in range(n):
            i += 1
            c.bind_texture(0, tex[i % 2])
            c.draw_arrays(GL_TRIANGLES, 0, 3)
        k[0] = i

    loop(4)
    return loop


def _window(c: Client, units: int) -> Loop:
    tex, k, last = _textures(c, units), [0], units - 1

    def loop(n: int) -> None:
        i = k[0]
        for _ in range(n):
            i += 1
            c.bind_texture(0, tex[i % 2])
            c.bind_texture(last, tex[(i + last) % 2])
            c.draw_arrays(GL_TRIANGLES, 0, 3)
        k[0] = i

    loop(4)
    return loop


STREAMS: dict[str, Callable[[Client, int], Loop]] = {
    "steady": _steady, "minted": _minted, "rebind": _rebind, "window": _window,
}  # fmt: skip


def make(stream: str, units: int = 1) -> tuple[Client, Loop]:
    """A client set up for ``stream`` and its loop."""
    c = _client()
    return c, STREAMS[stream](c, units)


def cpu_per_draw(stream: str, units: int = 1, n1: int = 200, n2: int = 1000,
                 repeat: int = 3) -> float:  # fmt: skip
    """Microseconds of process CPU per draw of ``stream`` (best of ``repeat``)."""
    c, loop = make(stream, units)
    best = float("inf")
    try:
        for _ in range(repeat):
            t0 = time.process_time_ns()
            loop(n1)
            t1 = time.process_time_ns()
            loop(n2)
            t2 = time.process_time_ns()
            best = min(best, ((t2 - t1) - (t1 - t0)) / (n2 - n1) / 1e3)
    finally:
        c.close()
    return best


def shape(stream: str, units: int = 1, n: int = 256) -> dict[str, Any]:
    """Records per draw (by call), wire bytes per draw and Python calls per draw."""
    c, loop = make(stream, units)
    em = c.em
    try:
        loop(8)  # warm
        records, wire, by_call, draws = em.records, em.wire_bytes, Counter(em.by_call), c.draws
        count = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "call" or event == "c_call":
                count[0] += 1

        # a collection inside the window counts its finalisers' calls (CI saw 4 extra calls
        # in 256 draws): collect first and hold the collector off (tests/test_cliffs.py plants it)
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        sys.setprofile(profile)
        try:
            loop(n)
        finally:
            sys.setprofile(None)
            if was_enabled:
                gc.enable()
        d = c.draws - draws
        return {
            "draws": d,
            "records_per_draw": (em.records - records) / d,
            "wire_bytes_per_draw": (em.wire_bytes - wire) / d,
            "by_call": {k: v / d for k, v in sorted((em.by_call - by_call).items())},
            "python_calls_per_draw": count[0] / d,
            "csos_minted": c.csos_minted,
        }
    finally:
        c.close()


# -- the reference: the paths before issue 20 (same bytes) ------------------------------------
def encoder_mint(self: RenderStateCsoCache, key: Any, data: bytes) -> _Cso:
    """:meth:`RenderStateCsoCache._mint` with ``CreateRenderState`` through ``Emitter.emit``."""
    if len(self._map) >= self.capacity:
        self._evict()
    handle = self._alloc.alloc()
    self._emit("CreateRenderState", {"Cso": handle, "BaseCso": NULL, "ChunkMask": self._mask_all},
               blob=data)  # fmt: skip
    entry = self._map[key] = _Cso(handle, key, data)
    self._lru[entry] = None
    self.stats.minted += 1
    self._after_bind = True
    return entry


def encoder_evict(self: RenderStateCsoCache) -> None:
    """:meth:`RenderStateCsoCache._evict` with ``DeleteRenderState`` through ``Emitter.emit``."""
    it = iter(self._lru)
    victim = next(it)
    if victim is self._bound:
        victim = next(it, victim)
    del self._map[victim.key]
    del self._lru[victim]
    victim.dead = True
    self._emit("DeleteRenderState", {"Handle": victim.handle, "Kind": self._kind})
    self._alloc.free(victim.handle)
    if victim is self._bound:
        self._bound, self.bound = None, NULL
    self.stats.evictions += 1


def numpy_rows(self: RowPacker, rows: Any, where: str = "") -> bytes:
    """:meth:`RowPacker.rows` through :func:`~..schema.layouts.array` (element by element)."""
    return layouts.array(self.dtype, [self.as_dict(r) for r in rows], where).tobytes()


@contextmanager
def reference() -> Iterator[None]:
    """Inside: mints / evictions through the encoder and group rows through numpy."""
    saved = (RenderStateCsoCache._mint, RenderStateCsoCache._evict, RowPacker.rows)
    RenderStateCsoCache._mint = encoder_mint  # type: ignore[method-assign]
    RenderStateCsoCache._evict = encoder_evict  # type: ignore[method-assign]
    RowPacker.rows = numpy_rows  # type: ignore[method-assign]
    try:
        yield
    finally:
        RenderStateCsoCache._mint, RenderStateCsoCache._evict, RowPacker.rows = saved  # type: ignore[method-assign]
