"""The lean path: the floor the runtime's per-draw cost is measured against (issue 20).

A second implementation of the two steady-state scenes' draw loops (``blend-toggle``,
``viewport-churn``), written for speed over the same generated tables, that emits
byte-identical records:

- :class:`LeanClient` takes over a project :class:`~..client.api.Client` after its setup
  (the block bytes, the widened counters, the bound CSO, the CSO cache's content map, the
  dynamic chunks last pushed, the stage segment) and runs the loop itself: the same
  argument checks, the same block writes and counter bumps, the same transition cache
  (bound CSO x the pipeline writes since the last draw), the same content lookup (xxh64
  over the pipeline subset, byte-confirmed) on a miss, the same dynamic pushes through the
  same stage, the same records packed by the tables' packers, one sink call per record;
- :class:`LeanServer` takes over the project :class:`~..server.applier.Applier`'s tables
  and applies the records those loops send (BindRenderState, SetDynamicState, the direct
  DrawVbo) with the same refusals for what those calls can carry wrong (size, tail,
  handle, draw budgets), handing each record to the same recorder backend; any other
  record, or any other shape of these, goes to the project applier (its working block
  first brought up to date).

What the lean path leaves out is what these loops never exercise (a log past
``PIPE_LOG_LIMIT``, a CSO to mint, persistent maps, client arrays, transform feedback,
the emitter's per-call counters); a miss it cannot serve is :class:`LeanMiss`, never a
different record. :func:`equal_streams` is the check that both paths sent the same bytes.
"""

from __future__ import annotations

import collections
import struct
import sys
import time
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import xxhash

from ..budgets import budgets
from ..client.api import _DRAW_MODES, _U32, Client
from ..client.cso_cache import gather_chunks
from ..client.render_block import BUMP, PIPE_LOG_LIMIT
from ..client.setter_rows import KITS
from ..errors import HandleRefused, ProtocolCorruption
from ..schema import tables as _t
from ..server.working_state import VERSION_MASK
from ..wire.compiled import packer
from ..wire.header import header_size, record_align
from ..wire.records import layout
from ..wire.spec import call_spec
from ..transport.ring import _DATA_PARKED, _HEAD, _PUB, _TAIL
from .scenes.core import _setup, blend_rep, blend_setup, viewport_rep

__all__ = [
    "LeanClient",
    "LeanServer",
    "LeanMiss",
    "LOOPS",
    "run",
    "cpu_per_draw",
    "paired",
    "calls_per_draw",
    "opcodes_per_draw",
    "floor_us",
    "ring_floor_us",
    "LEAN_BOUND",
    "FLOOR_BOUND",
    "equal_streams",
]


class LeanMiss(RuntimeError):
    """The lean path met a state it does not serve (a CSO it would have to mint)."""


Door = Callable[..., None]
#: ``make(size, pack, prefix) -> door``: ``door(*values)`` writes one record with
#: ``pack(buf, offset, *prefix, *values)`` and sends it; ``make.send(size)``: the door of a
#: ready record (:class:`scratch_doors`, :class:`ring_doors`)
DoorMaker = Any


def _door(make: DoorMaker, call: str, names: tuple[str, ...],
          tail: tuple[str, ...] | None = None) -> Door:  # fmt: skip
    pk = packer(call, names, tail)
    if pk.direct is None:
        raise _t.TablesError(f"{call}: the lean path packs in memory order only")
    return make(pk.size, pk.direct, pk.prefix)


class scratch_doors:  # noqa: N801 -- named for what it makes
    """Doors that pack into one scratch record and hand the sink a read-only view of it
    (the monolith's shape); :meth:`send` hands it a ready record."""

    def __init__(self, sink: Callable[[Any], Any]) -> None:
        self.sink = sink
        self._scratch = bytearray(256)
        self._ro = memoryview(self._scratch).toreadonly()

    def __call__(self, size: int, pack: Callable[..., None], prefix: tuple) -> Door:
        scratch, ro, sink = self._scratch, self._ro, self.sink
        if size > len(scratch):
            raise LeanMiss(f"a {size} B record: past the lean scratch")

        def door(*values: Any) -> None:
            pack(scratch, 0, *prefix, *values)
            sink(ro[:size])

        return door

    def send(self, size: int) -> Callable[[bytes], Any]:
        return self.sink


class ring_doors:  # noqa: N801
    """Doors that pack straight into ``ring``'s next bytes (the project :class:`Ring`'s
    layout and control words), commit and publish as its producer: the fast case (the
    record fits before the end, the ring has room) inline, any other through the ring;
    :meth:`send` is the door of a ready record (copied, not packed)."""

    def __init__(self, ring: Any, publish_every: int = 1) -> None:
        self.ring, self.every = ring, publish_every

    def __call__(self, size: int, pack: Callable[..., None], prefix: tuple) -> Door:
        return self._make(size, pack, prefix)

    def send(self, size: int) -> Callable[[bytes], Any]:
        return self._make(size, None, ())

    def _make(self, size: int, pack: Callable[..., None] | None, prefix: tuple) -> Door:
        ring, every = self.ring, self.every
        buf, ctl, mask, cap = ring._buf, ring._ctl, ring._mask, ring.capacity
        head, tail, pub, parked = _HEAD, _TAIL, _PUB, _DATA_PARKED
        ring_bell = ring.data_bell.ring

        def door(*values: Any) -> None:
            w = ring._write
            pos = w & mask
            if size <= cap - pos and w - ctl[tail] + size <= cap:
                if pack is None:
                    buf[pos : pos + size] = values[0]
                else:
                    pack(buf, pos, *prefix, *values)
                ring._write = w = w + size
                seq = ring.emit_seq = ring.emit_seq + 1
            else:  # a wrap pad or a wait for space: the ring's own path
                view = ring.reserve(size)
                if pack is None:
                    view[:] = values[0]
                else:
                    pack(view, 0, *prefix, *values)
                seq = ring.commit()
                w = ring._write
            if seq - ctl[pub] >= every:
                ctl[head] = w
                ctl[pub] = seq
                if ctl[parked]:
                    ring_bell()

        return door


#: the members the lean doors pack (in memory order: one C call per record): a bind's,
#: and a direct draw's payload and one draw range
_BIND_NAMES = ("Cso.Slot", "Cso.Gen", "Version", "PipelineVersion")
_DRAW_NAMES = (("Mode", "IndexSize", "InstanceCount", "StartInstance", "RestartIndex",
                "IndexResource.Slot", "IndexResource.Gen", "NumDraws"),
               ("Start", "Count", "IndexBias"))  # fmt: skip


def _cap_patch(client: Client, cap: str, enabled: bool) -> tuple:
    """(slice, bytearray) stores of the capability write, and the row's bump group."""
    rs = client.tr.rs
    row = rs._row("SetCapability", cap, "CapabilityInput")
    patch = rs._derive(row, lambda: rs._write_cap(row, None, enabled))
    if not all(pipe for _, _, _, pipe, _ in patch):
        raise LeanMiss(f"SetCapability {cap}: not a pipeline-only write")
    offs = [o for o, e, _, _, _ in patch]
    one = all(e - o == 1 for o, e, _, _, _ in patch)
    steps = {b - a for a, b in zip(offs, offs[1:])}
    if one and len(steps) <= 1:  # one strided slice does it
        step = steps.pop() if steps else 1
        sl = slice(offs[0], offs[-1] + 1, step)
        stores = ((sl, bytearray(b"".join(b for _, _, b, _, _ in patch))),)
    else:
        stores = tuple((slice(o, e), bytearray(b)) for o, e, b, _, _ in patch)
    return stores, BUMP[row.bump]


class LeanClient:
    """The scenes' loops over a project client's state (see the module docstring)."""

    def __init__(self, client: Client, doors: DoorMaker) -> None:
        tr = client.tr
        rs, cso = tr.rs, tr.cso
        if cso._bound is None or client._client_arrays or client._persistent or tr.xfb:
            raise LeanMiss("the lean path starts from a bound CSO and plain draws")
        self.buf = rs._buf
        self.vw, self.pvw, self._mask = rs.version_wide, rs.pipeline_version_wide, rs._mask
        self.dyn_dirty = rs.dyn_dirty
        self.log: tuple = ()
        self.bound = cso._bound.handle
        self.last_pv, self.last_v = cso._last_pv, cso._last_v
        self.trans: dict[tuple, tuple[int, int]] = {}
        self.content = {k: (e.subset, e.handle) for k, e in cso._map.items()}
        self.pipe_chunks = tuple((o, o + n) for o, n in cso._pipe_chunks)
        self.dyn_chunks = cso._dyn_chunks
        #: one-chunk mask -> (index, offset, end): the lean path's own (a second
        #: implementation: a control that empties the cache's leaves this one standing)
        self._dyn_one = {bit: (i, o, e) for i, (o, e, bit) in enumerate(self.dyn_chunks)}
        self.pushed = list(cso._pushed_dyn)
        self.stage = client.em.stage
        self._room = client.em.room
        self._limits = client._draw_limits
        self.restart = rs.restart_index
        self._bind = _door(doors, "BindRenderState", _BIND_NAMES)
        self._dyn = _door(doors, "SetDynamicState",
                          ("ChunkMask", "Version", "Blob.Offset", "Blob.Size", "Blob.Seg"))  # fmt: skip
        pk = packer("DrawVbo", *_DRAW_NAMES)
        #: draw records remembered by their values (the project's draw doors do the same)
        self._draw_pack, self._draws = pk.pack_into, {}
        self._draw_buf = bytearray(pk.size)
        self._draw = doors.send(pk.size)
        self._caps: dict[tuple[str, bool], tuple] = {}
        for cap in ("Blend",):
            for on in (True, False):
                self._caps[cap, on] = (*_cap_patch(client, cap, on), (cap, on))
        kit = KITS["SetViewport"]
        if not kit:
            raise LeanMiss("SetViewport has no kit")
        o, e, bit, bump, pack, repeat, suffix = kit  # glViewport writes every viewport
        self._vp = (slice(o, e), bit, bump, pack, repeat, suffix)

    # -- state ----------------------------------------------------------------
    def enable(self, cap: str) -> None:
        self._cap(self._caps[cap, True])

    def disable(self, cap: str) -> None:
        self._cap(self._caps[cap, False])

    def _cap(self, c: tuple) -> None:
        buf = self.buf
        stores, bump, token = c
        for sl, v in stores:
            if buf[sl] != v:
                break
        else:
            return
        for sl, v in stores:
            buf[sl] = v
        if self.log is not None:  # past the project's limit the log gives up (a hash)
            self.log = self.log + (token,) if len(self.log) < PIPE_LOG_LIMIT else None
        if bump:
            self.vw += 1
            if bump >= 2:
                self.pvw += 1

    def viewport(self, x: float, y: float, w: float, h: float) -> None:
        if not (x - x) == (y - y) == (w - w) == (h - h) == 0:
            raise ValueError("viewport: not finite")
        sl, bit, bump, pack, repeat, suffix = self._vp
        data = pack(x, y, w, h) * repeat + suffix
        buf = self.buf
        if buf[sl] == data:
            return
        buf[sl] = data
        self.dyn_dirty |= bit
        if bump:
            self.vw += 1
            if bump == 3:
                self.pvw += 1

    # -- the draw -------------------------------------------------------------
    def draw_arrays(self, mode: int, first: int, count: int) -> None:
        mi, mv = self._limits
        if not (mode in _DRAW_MODES and 0 <= (first | count) <= _U32 and 1 <= mi
                and count <= mv):  # fmt: skip
            raise ValueError("draw_arrays: arguments")
        mask = self._mask
        if self.pvw != self.last_pv:
            log, self.log = self.log, ()
            src = self.bound
            target = None if log is None else self.trans.get((src, log))
            if target is None:
                target = self._by_content()
                if log is not None:
                    self.trans[src, log] = target
            if target != src:
                self._bind(target[0], target[1], self.vw & mask,
                     self.pvw & mask)  # fmt: skip
                self.bound = target
        if self.dyn_dirty and self.vw != self.last_v:
            self._push_dynamic()
        self.last_pv, self.last_v = self.pvw, self.vw
        key = (mode, first, count, self.restart)
        record = self._draws.get(key)
        if record is None:
            self._draw_pack(self._draw_buf, 0, mode, 0, 1, 0, self.restart, 0, 0, 1, first,
                            count, 0)  # fmt: skip
            record = self._draws[key] = bytes(self._draw_buf)
        self._draw(record)

    def _by_content(self) -> tuple[int, int]:
        buf = self.buf
        data = b"".join([buf[o:e] for o, e in self.pipe_chunks])
        hit = self.content.get(xxhash.xxh64_intdigest(data))
        if hit is None or hit[0] != data:
            raise LeanMiss("a pipeline state with no CSO yet")
        return hit[1]

    def _push_dynamic(self) -> None:
        buf, prev, dirty = self.buf, self.pushed, self.dyn_dirty
        self.dyn_dirty = 0
        one = self._dyn_one.get(dirty)
        if one is not None:  # one chunk (the loops' viewport): its bytes are the blob
            i, o, e = one
            data = buf[o:e]
            if data == prev[i]:
                return
            prev[i] = data
            mask = dirty
        else:  # several chunks (never in these loops): the project's gather
            mask, data = gather_chunks(buf, dirty, prev, self.dyn_chunks)
            if not mask:
                return
        stage = self.stage
        if stage.limit - stage.used < len(data) + stage.granule:
            self._room(len(data))
        off, n, seg = stage.stage(data)
        self._dyn(mask, self.vw & self._mask, off, n, seg)


def _index(struct_name: str, path: str) -> int:
    """Position of member ``path`` in the tuple ``Struct(layout fmt).unpack_from`` gives."""
    return [f.path for f in layout(struct_name).flat].index(path)


def _getter(struct_name: str, paths: tuple[str, ...]) -> Callable[[tuple], tuple]:
    """The members ``paths`` out of an unpacked ``struct_name`` tuple, in one C call."""
    return itemgetter(*[_index(struct_name, p) for p in paths])


class LeanServer:
    """The three calls of the loops, applied lean; the rest through ``applier``."""

    def __init__(self, applier: Any) -> None:
        self._applier = applier
        self.ctx = ctx = applier.ctx
        self._backend = be = applier.backend
        self._rows = applier.tables["RenderStateCso"].rows
        self._res_rows = applier.tables["Resource"].rows
        self._hsize, self._align = header_size(), record_align()
        hdr = [(f.offset, f.path) for f in layout("MGPWireRecHeader").flat]
        fmt = layout("MGPWireRecHeader").fmt
        self._hdr = struct.Struct("<" + fmt).unpack_from
        names = [p for _, p in hdr]
        self._op_i, self._size_i = names.index("Op"), names.index("Size")
        self._pipe: bytes | None = None  # a bound CSO's subset not yet in the working block
        b = budgets()
        self._max_inst, self._max_verts = b.draw_instances, b.draw_vertices
        ops = _t.tables().OPCODE
        self._by_op: dict[int, Callable[[bytes, int], Any]] = {
            ops["BindRenderState"]: self._bind_rs,
            ops["SetDynamicState"]: self._set_dyn,
            ops["DrawVbo"]: self._draw_vbo,
        }
        for call, fn in (("BindRenderState", "_bind_sz"), ("SetDynamicState", "_dyn_sz")):
            setattr(self, fn, call_spec(call).fixed_size)

        def payload(call: str) -> Callable[..., tuple]:
            return struct.Struct("<" + layout(call_spec(call).payload).fmt).unpack_from

        self._bind_p, self._dyn_p = payload("BindRenderState"), payload("SetDynamicState")
        self._bind_g = _getter(call_spec("BindRenderState").payload,
                               ("Cso.Slot", "Cso.Gen", "Version", "PipelineVersion"))  # fmt: skip
        self._dyn_g = _getter(
            call_spec("SetDynamicState").payload,
            ("ChunkMask", "Version", "Blob.Offset", "Blob.Size", "Blob.Seg"),
        )
        di = call_spec("DrawVbo").payload
        self._draw_p = struct.Struct("<" + layout(di).fmt).unpack_from
        self._draw_fixed = call_spec("DrawVbo").fixed_size
        self._di = _getter(di, ("Flags", "NumDraws", "InstanceCount", "IndexResource.Slot",
                                "IndexResource.Gen"))  # fmt: skip
        ranges = next(t.element for t in call_spec("DrawVbo").tails if t.when == "kWhenClear")
        self._range = struct.Struct("<" + layout(ranges).fmt)
        self._count_i = _index(ranges, "Count")
        self._tail_at = self._draw_fixed + (-self._draw_fixed % self._align)
        #: the recorder's captures in their lean form (docs/BACKENDS.md §3), as the
        #: project's handlers call them
        self._rec_bind = be.BindRenderState.lean_form(ctx)
        self._rec_draw = be.DrawVbo.lean_form(ctx)
        self._rec_dyn = be.SetDynamicState.lean_form(ctx)
        self._dyn_plans: dict[int, tuple] = {}
        self._accepted: set[bytes] = set()  # plain draws already checked, by their bytes
        self._ws = ctx.render_state
        self._view = ctx.stage.view

    def apply(self, record: Any) -> Any:
        raw = record if type(record) is bytes else bytes(record)
        try:
            h = self._hdr(raw, 0)
        except struct.error:
            raise ProtocolCorruption("Wire.Header") from None
        op, size = h[self._op_i], h[self._size_i]
        if size < self._hsize or size % self._align or len(raw) < size:
            raise ProtocolCorruption("Wire.Size")
        fn = self._by_op.get(op)
        if fn is None:
            return self._slow(raw)
        ctx = self.ctx
        ctx.seq += 1  # its events follow ctx.seq (EventRing.follows)
        return fn(raw, size)

    __call__ = apply

    def _slow(self, raw: bytes) -> Any:
        if self._pipe is not None:
            self._ws.scatter_pipeline(self._pipe)
            self._pipe = None
        return self._applier.apply(raw)

    def _bind_rs(self, raw: bytes, size: int) -> Any:
        if size != self._bind_sz:
            raise ProtocolCorruption("BindRenderState.Size")
        slot, gen, version, pv = self._bind_g(self._bind_p(raw, self._hsize))
        e = self._rows.get(slot)
        if e is None or not e.live or e.gen != gen or not slot:
            self.ctx.seq -= 1
            return self._slow(raw)  # its refusal, by name
        ctx = self.ctx
        self._pipe = e.obj.data["pipeline"]
        ctx.render_state_cso = e.obj.handle
        ctx.render_state_version, ctx.pipeline_version = version, pv
        return self._rec_bind(raw)

    def _set_dyn(self, raw: bytes, size: int) -> Any:
        if size != self._dyn_sz:
            raise ProtocolCorruption("SetDynamicState.Size")
        mask, version, off, n, seg = self._dyn_g(self._dyn_p(raw, self._hsize))
        try:
            total, plan = self._dyn_plans[mask]
        except KeyError:
            self.ctx.seq -= 1
            out = self._slow(raw)  # the first of a mask: the applier checks and scatters
            self._dyn_plans[mask] = self._ws._dyn_plans[mask]
            return out
        if n != total:
            raise ProtocolCorruption("SetDynamicState.Blob")
        blob = self._view((off, n, seg), "SetDynamicState.Blob")
        data = self._ws.data
        for o, e, a, b in plan:
            data[o:e] = blob[a:b]
        if plan:
            ws = self._ws
            ws.version = (ws.version + 1) & VERSION_MASK
            ws.scatters += 1
        ctx = self.ctx
        ctx.dynamic_version = version
        self._rec_dyn(raw, off, bytes(blob) if n else b"")

    def _draw_vbo(self, raw: bytes, size: int) -> Any:
        if raw in self._accepted:  # these bytes passed every check below (budgets fixed)
            return self._rec_draw(raw)
        if size < self._draw_fixed:
            raise ProtocolCorruption("DrawVbo.Size")
        v = self._draw_p(raw, self._hsize)
        flags, n, inst, islot, igen = self._di(v)
        if flags or n != 1 or islot or igen:  # another shape: the applier's
            self.ctx.seq -= 1
            return self._slow(raw)
        c = self._tail_at
        if c + self._range.size + (-(c + self._range.size) % self._align) != size:
            raise ProtocolCorruption("DrawVbo.Tail")
        count = self._range.unpack_from(raw, c)[self._count_i]
        inst = inst if inst > 1 else 1
        if inst > self._max_inst or count * inst > self._max_verts:
            self.ctx.seq -= 1
            return self._slow(raw)  # the budget's refusal, by name
        if len(self._accepted) < 4096:
            self._accepted.add(raw)
        return self._rec_draw(raw)


# -- the loops and their runs ---------------------------------------------------------
#: scene -> (setup on a project client, one repetition on either client, draws per rep);
#: the repetitions are the scenes' own loops (``scenes/core.py``)
LOOPS: dict[str, tuple[Callable[[Any], None], Callable[[Any, int], None], int]] = {
    "blend-toggle": (blend_setup, blend_rep, 2),
    "viewport-churn": (_setup, viewport_rep, 1),
}
PATHS = ("project", "lean")
SIDES = ("client", "round")
#: repetitions the project client runs before a lean one takes over (every CSO minted)
WARM = 4


TRANSPORTS = ("monolith", "inproc", "spawn")
#: issue 20's bounds: project / lean path; and x the 20-call floor (:func:`floor_us`), per
#: side -- what benchmarks/draw_path.py and the bench's floor table print against
LEAN_BOUND = 1.5
FLOOR_BOUND = {"client": 4.0, "round": 10.0}
#: the profile function :func:`calls_per_draw` sets around the measured loop only
_PROFILE: Callable[..., None] | None = None
#: the trace function :func:`opcodes_per_draw` sets around the measured loop only
_TRACE: Callable[..., Any] | None = None


def run(scene: str, path: str, side: str, n: int,
        transport: str = "monolith") -> tuple[int, int, list[bytes]]:  # fmt: skip
    """``n`` repetitions of ``scene``'s loop after its setup and :data:`WARM` project
    repetitions: (CPU ns of the ``n``, draws, the records the ``n`` applied).

    CPU: this process's (every thread: inproc's apply thread counts), plus on ``spawn`` and
    ``side="round"`` the server's own (its report); the ``n`` end when every record has
    been applied. Records: on ``side="round"`` in this process (monolith, inproc); the
    client side's sink (a C call that drops the record) applies nothing and keeps nothing,
    and spawn's records stay in the child (its client side is this process's CPU alone).
    On spawn the lean client writes the server's ring and the server is the project's
    (the lean path has no server process of its own)."""
    from ..backends.recorder import Recorder
    from ..server.applier import Applier
    from ..transport.spawn import SpawnTransport
    from ..wire.stage import StageSegment
    from .runner import STAGE_CAPACITY

    setup, rep, per = LOOPS[scene]
    if side not in SIDES:
        raise ValueError(f"side {side!r} is not one of {SIDES}")
    if path not in PATHS:
        raise ValueError(f"path {path!r} is not one of {PATHS}")
    applier = spawned = None
    if transport == "spawn":
        spawned = SpawnTransport("recorder", stage_capacity=STAGE_CAPACITY)
        stage, sink = spawned.stage, None
        client = Client(None, stage, transport=spawned)  # type: ignore[arg-type]
    elif transport in ("monolith", "inproc"):
        stage = StageSegment(STAGE_CAPACITY)
        if side == "round":
            applier = Applier(Recorder(), stage)
            sink = applier.apply
        else:  # the sink does nothing, in C (these loops read nothing back)
            sink = collections.deque(maxlen=0).append
        client = Client(sink, stage, transport=transport)
    else:
        raise ValueError(f"transport {transport!r} is not one of {TRANSPORTS}")
    t = client.em.transport
    try:
        setup(client)
        for i in range(WARM):
            rep(client, i)
        if transport != "monolith":
            t.wait_applied()
        mark = len(applier.backend.raw) if applier is not None else 0
        c: Any = client
        if path == "lean" and transport == "monolith":
            c = LeanClient(client, scratch_doors(LeanServer(applier).apply if applier else sink))
        elif path == "lean":
            if transport == "inproc" and applier is not None:
                t._sink = LeanServer(applier).apply  # the apply thread reads it per record
            c = LeanClient(client, ring_doors(t.ring, t._publish_every))
        t0 = time.process_time_ns()
        if _PROFILE is not None:
            sys.setprofile(_PROFILE)
        if _TRACE is not None:
            sys.settrace(_TRACE)
        try:
            for i in range(WARM, WARM + n):
                rep(c, i)
        finally:
            sys.setprofile(None)
            sys.settrace(None)
        if transport != "monolith":
            t.wait_applied()
        cpu = time.process_time_ns() - t0
        records = applier.backend.raw[mark:] if applier is not None else []
    finally:
        client.close()
    if spawned is not None and side == "round":  # the server's CPU since Welcome: the
        cpu += spawned.report["cpu_ns"]  # fixed part cancels in cpu_per_draw's difference
    return cpu, n * per, records


def cpu_per_draw(scene: str, path: str, side: str, n1: int, n2: int, repeat: int = 3,
                 transport: str = "monolith") -> float:  # fmt: skip
    """Microseconds of process CPU per steady-state draw: the difference of a run of
    ``n2`` and one of ``n1`` repetitions, best of ``repeat``."""
    best = None
    for _ in range(repeat):
        a, da, _ = run(scene, path, side, n1, transport)
        b, db, _ = run(scene, path, side, n2, transport)
        us = (b - a) / (db - da) / 1e3
        best = us if best is None else min(best, us)
    assert best is not None
    return best


#: a difference of two runs that is not positive is noise larger than the signal (the
#: shared machine paused the longer run's process): it is measured again, this many times
_TRIES = 5


def paired(
    scene: str, side: str, n1: int, n2: int, repeat: int = 3, transport: str = "monolith"
) -> tuple[float, float, float]:
    """(project us/draw, lean us/draw, project / lean): ``repeat`` rounds, each measuring
    the project and then the lean path (the difference of a run of ``n2`` and one of
    ``n1`` repetitions); the times are each path's best, the ratio is the median of the
    rounds' own ratios (a slow stretch of the machine hits both sides of one ratio)."""
    rounds = []
    for _ in range(repeat):
        us = []
        for path in PATHS:
            for _ in range(_TRIES):
                a, da, _ = run(scene, path, side, n1, transport)
                b, db, _ = run(scene, path, side, n2, transport)
                if b > a:
                    break
            else:
                raise RuntimeError(f"{scene}/{path}/{side}: a run of {n2} repetitions never "
                                   f"took longer than one of {n1} in {_TRIES} tries")
            us.append((b - a) / (db - da) / 1e3)
        rounds.append(us)
    ratios = sorted(p / q for p, q in rounds)
    return min(p for p, _ in rounds), min(q for _, q in rounds), ratios[len(ratios) // 2]


def _events_per_draw(hook: str, scene: str, path: str, side: str, n1: int,
                     n2: int) -> float:  # fmt: skip
    """Events of the interpreter hook ``hook`` (``"profile"``: ``call`` + ``c_call``;
    ``"trace"``: ``opcode``) per steady-state draw, monolith, on this thread: the
    difference of a run of ``n2`` and one of ``n1`` repetitions (the loops only)."""
    if hook not in ("profile", "trace"):
        raise ValueError(f"hook {hook!r} is not profile or trace")

    def measure(n: int) -> tuple[int, int]:
        count = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "call" or event == "c_call":
                count[0] += 1

        def trace(frame: Any, event: str, arg: Any) -> Any:
            frame.f_trace_opcodes = True
            if event == "opcode":
                count[0] += 1
            return trace

        global _PROFILE, _TRACE
        if hook == "profile":
            _PROFILE = profile
        else:
            _TRACE = trace
        try:
            _, draws, _ = run(scene, path, side, n)
        finally:
            _PROFILE = _TRACE = None
        return count[0], draws

    a, da = measure(n1)
    b, db = measure(n2)
    return (b - a) / (db - da)


def calls_per_draw(scene: str, path: str, side: str, n1: int, n2: int) -> float:
    """Python calls (``call`` + ``c_call`` profile events) per steady-state draw, monolith:
    the difference of a run of ``n2`` and one of ``n1`` repetitions (the loops only)."""
    return _events_per_draw("profile", scene, path, side, n1, n2)


def opcodes_per_draw(scene: str, path: str, side: str, n1: int, n2: int) -> float:
    """Bytecode instructions executed per steady-state draw (``sys.settrace`` opcode events
    on this thread), monolith, as :func:`calls_per_draw` counts calls. Deterministic where
    CPU time is not: the figure a change to the hot path moves, the same on a busy machine
    as on a quiet one (bound to the CPython version)."""
    return _events_per_draw("trace", scene, path, side, n1, n2)


def floor_us(calls: int = 20, n: int = 100_000, repeat: int = 5) -> float:
    """Microseconds of ``calls`` calls of an empty Python function (best of ``repeat``)."""
    src = "def f():\n    pass\ndef loop(n):\n    for _ in range(n):\n" + ("        f()\n" * calls)
    ns: dict[str, Any] = {}
    exec(compile(src, "<lean floor>", "exec"), ns)
    best = None
    for _ in range(repeat):
        t0 = time.process_time_ns()
        ns["loop"](n)
        us = (time.process_time_ns() - t0) / n / 1e3
        best = us if best is None else min(best, us)
    assert best is not None
    return best


def ring_floor_us(n: int = 100_000, repeat: int = 5, batch: int = 256,
                  part: str = "both") -> float:  # fmt: skip
    """Microseconds per draw of the least a ring transport adds to a draw of these loops
    (best of ``repeat``): its two records -- the BindRenderState packed by the tables'
    packer, the DrawVbo a remembered record copied (both as a blend-toggle draw of the
    project sends them) -- written into a ring buffer with the write cursor moved
    (``part="produce"``: this alone), then drained in the same thread (each header read,
    a view of the record handed to a sink that does nothing; ``"drain"``: this alone),
    ``batch`` draws at a time. Nothing is checked, nothing published or parked, no second
    thread: no ring transport does less per draw, so the lean client plus this is a floor
    for the inproc rows (both parts in one process) and, with the produce part, for
    spawn's client."""
    if part not in ("both", "produce", "drain"):
        raise ValueError(f"part {part!r} is not both, produce or drain")
    bind = packer("BindRenderState", _BIND_NAMES)
    if bind.direct is None:
        raise _t.TablesError("ring floor: BindRenderState's packer is not in memory order")
    _, _, sent = run("blend-toggle", "project", "round", 2)  # a steady draw's two records
    hdr = layout("MGPWireRecHeader")
    unpack = struct.Struct("<" + hdr.fmt).unpack_from
    op_i = [f.path for f in hdr.flat].index("Op")
    size_i = [f.path for f in hdr.flat].index("Size")
    draw_op = call_spec("DrawVbo").opcode
    record = next(r for r in reversed(sent) if unpack(r, 0)[op_i] == draw_op)
    # the bind's values (Cso, Version, PipelineVersion) vary per draw as the counters do
    src = (
        "def produce():\n"
        "    w = 0\n"
        "    for v in range(batch):\n"
        "        pack(buf, w, *prefix, 1, 1, v, v)\n"
        "        w += bsize\n"
        "        buf[w : w + dsize] = record\n"
        "        w += dsize\n"
        "    return w\n"
        "def drain(w):\n"
        "    r = 0\n"
        "    while r < w:\n"
        "        size = unpack(buf, r)[size_i]\n"
        "        sink(ro[r : r + size])\n"
        "        r += size\n"
        "def both(rounds, w):\n"
        "    for _ in range(rounds):\n"
        "        drain(produce())\n"
        "def only_produce(rounds, w):\n"
        "    for _ in range(rounds):\n"
        "        produce()\n"
        "def only_drain(rounds, w):\n"
        "    for _ in range(rounds):\n"
        "        drain(w)\n"
    )
    buf = bytearray((bind.size + len(record)) * batch)
    ns: dict[str, Any] = {
        "pack": bind.direct, "prefix": bind.prefix, "bsize": bind.size, "record": record,
        "dsize": len(record), "batch": batch, "buf": buf, "ro": memoryview(buf).toreadonly(),
        "unpack": unpack, "size_i": size_i, "sink": lambda view: None,
    }  # fmt: skip
    exec(compile(src, "<lean ring floor>", "exec"), ns)  # noqa: S102 - our own loops
    loop = ns[{"both": "both", "produce": "only_produce", "drain": "only_drain"}[part]]
    full = ns["produce"]()  # the records a drain alone reads, written once
    rounds = max(n // batch, 1)
    best = None
    for _ in range(repeat):
        t0 = time.process_time_ns()
        loop(rounds, full)
        us = (time.process_time_ns() - t0) / (rounds * batch) / 1e3
        best = us if best is None else min(best, us)
    assert best is not None
    return best


def equal_streams(a: list[bytes], b: list[bytes]) -> str | None:
    """None when the two record lists are byte-identical, else where they first differ."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"record {i}: {x.hex()} != {y.hex()}"
    if len(a) != len(b):
        return f"{len(a)} records != {len(b)}"
    return None
