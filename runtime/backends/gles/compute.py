"""Issue 19's GLES entries (a mixin of :class:`~.backend.GlesBackend`): compute launches,
memory barriers, shader images, transform feedback and patch parameters, GLES 3.1 / 3.2
natively.

* ``LaunchGrid``: the dispatch program (``SetDispatchProgram``; it must have a compute
  stage, and the record's block size must be the one the shader declares: GLES takes the
  block size from the shader) with its buffers, images, samplers and uniforms bound as a
  draw binds them; ``glDispatchCompute`` or, ``IsIndirect``, ``glDispatchComputeIndirect``
  at ``IndirectOffset`` of ``IndirectBuffer`` (bounds-checked: 12 bytes, 4-aligned).
* ``MemoryBarrier``: ``glMemoryBarrier`` / ``glMemoryBarrierByRegion`` with GL's bits as
  the record carries them (GLES defines the same bits).
* ``BindShaderImage``: ``glBindImageTexture`` with the call's arguments at the call;
  ``SetShaderImages`` keeps the window every draw / dispatch binds its image uniforms from
  (:meth:`~.bindings.Binder._bind_images`).
* Transform feedback: ``BindStreamOutput`` / ``DeleteStreamOutput`` keep one GL object
  per lifetime id; ``BeginStreamOutput`` binds the snapshot's targets and the capture
  program, begins a ``GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN`` query and the capture;
  ``Pause`` / ``Resume`` as GL; one buffer takes every varying interleaved, several take
  one varying each (GL_SEPARATE_ATTRIBS: what ESSL can say without gl_NextBuffer); ``EndStreamOutput`` ends both and holds the driver's count
  to the client's accounting (a difference is ``DriverRefused{EndStreamOutput.
  PrimitivesWritten}``). A layout with holes (what GL spells gl_SkipComponents; ESSL has no
  spelling for it) is captured packed into a scratch buffer and scattered into the target
  at the end by ``glCopyBufferSubData``, one copy per captured varying, so the holes keep
  the target's bytes. ``SetStreamOutputTargets`` is state: the snapshot at Begin is what
  GLES binds.
* ``PatchParameter``: ``glPatchParameteri(GL_PATCH_VERTICES, n)`` (GLES 3.2 or
  GL_EXT_tessellation_shader; else refused by name).

Every buffer a launch, draw or capture may write is marked ``gpu_dirty`` (its host mirror,
read for index-range checks, is re-read before it is trusted again).
"""

from __future__ import annotations

import ctypes
import json
from typing import Any

import numpy as np

from ...server.gpu_written import emit_bindings_written, emit_ranges
from ...server.handle_fields import table_of
from .errors import DriverRefused
from .gl import GL, has_entry
from .program import GlProgram
from .resources import GlBuffer, GlTexture

__all__ = ["ComputeEntries"]

GL_PATCH_VERTICES = 0x8E72
_XFB_PRIMS = int(GL.GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN)
_VERTS_PER_PRIM = {int(GL.GL_POINTS): 1, int(GL.GL_LINES): 2, int(GL.GL_TRIANGLES): 3}


def _obj(ctx: Any, kind: str, h: Any, where: str) -> Any:
    return ctx.tables[table_of(kind)].resolve(h, where)


class ComputeEntries:
    """Issue 19's entries (see the module docstring)."""

    gl: Any
    binder: Any
    res: Any
    _program: int

    def _c19(self) -> dict[str, Any]:
        st = self.__dict__.get("_c19_state")
        if st is None:
            st = self.__dict__["_c19_state"] = {"xfb": {}, "span": None, "spans": [],
                                                "dispatches": 0}  # fmt: skip
        return st

    # -- compute -------------------------------------------------------------------
    def LaunchGrid(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        p, what = d.payload, d.name
        h = ctx.dispatch_program
        if h.is_null:
            raise DriverRefused(f"{what}.ShaderCso", "no dispatch program bound")
        prog = _obj(ctx, "ShaderCso", h, f"{what}.ShaderCso").backend
        if not isinstance(prog, GlProgram) or not prog.compute:
            raise DriverRefused(f"{what}.ShaderCso", "the dispatch program has no compute stage")
        block = (int(p.BlockX), int(p.BlockY), int(p.BlockZ))
        declared = tuple(int(v) for v in prog.reflection.get("workgroup", ()))
        if declared and block != declared:
            raise DriverRefused(f"{what}.Block", f"{block}: GLES launches the shader's own "
                                f"block size {declared}")  # fmt: skip
        gl = self.gl
        if prog.name != self._program:
            gl.glUseProgram(prog.name)
            self._program = prog.name
        if prog.binds:
            self.binder.bind(ctx, h, prog, self.res.epoch, 0, what)
        if int(p.IsIndirect):
            buf = getattr(ctx.resolved.get("IndirectBuffer"), "backend", None)
            if not isinstance(buf, GlBuffer):
                raise DriverRefused(f"{what}.IndirectBuffer", "an indirect launch with no buffer")
            off = int(p.IndirectOffset)
            if off % 4 or off + 12 > buf.size:
                raise DriverRefused(f"{what}.IndirectOffset", f"[{off}, {off + 12}) of a buffer "
                                    f"of {buf.size} bytes (4-aligned, inside)")  # fmt: skip
            gl.glBindBuffer(GL.GL_DISPATCH_INDIRECT_BUFFER, buf.name)
            gl.glDispatchComputeIndirect(off)
        else:
            gl.glDispatchCompute(int(p.GridX), int(p.GridY), int(p.GridZ))
        self.note_gpu_written(ctx, prog)
        self._c19()["dispatches"] += 1

    def note_gpu_written(self, ctx: Any, prog: GlProgram) -> None:
        """A draw or launch of ``prog`` left: the buffers it may have written are marked
        ``gpu_dirty`` (the host mirror is re-read before it is trusted) and every buffer the
        record's ``WritableMask`` names gets its ``OnGpuWritten`` (:mod:`...server.gpu_written`)."""
        for b in self.binder.writable_buffers(prog):
            b.gpu_dirty = True
        binder = self.binder
        if binder.writable:
            written = [(binder.cls_storage, b) for _n, b in prog.storage]
            written += [(binder.cls_atomic, pt) for _n, pt, _b in prog.atomic]
            emit_bindings_written(ctx, binder.writable, written)

    def MemoryBarrier(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        bits = int(d.payload.Bits) & 0xFFFFFFFF
        if int(d.payload.ByRegion):
            self.gl.glMemoryBarrierByRegion(bits)
        else:
            self.gl.glMemoryBarrier(bits)

    # -- images ----------------------------------------------------------------------
    def BindShaderImage(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        p = d.payload
        unit = int(p.Unit)
        if p.Res.is_null:
            self.gl.glBindImageTexture(unit, 0, 0, False, 0, GL.GL_READ_ONLY, GL.GL_RGBA8)
            self.binder.bound_image(unit, None)
        else:
            tex = getattr(ctx.resolved.get("Res"), "backend", None)
            if not isinstance(tex, GlTexture) or not tex.levels:
                raise DriverRefused(f"{d.name}.Res", "not a texture with storage")
            args = (tex.name, int(p.Level), bool(p.Layered), int(p.Layer), int(p.Access),
                    int(p.Format))  # fmt: skip
            self.gl.glBindImageTexture(unit, *args)
            err = int(self.gl.glGetError())
            if err:
                raise DriverRefused(f"{d.name}", f"glBindImageTexture{(unit,) + args}: GL error "
                                    f"0x{err:04x}")  # fmt: skip
            self.binder.bound_image(unit, args)
        self.binder.serial += 1

    def SetShaderBuffers(self, ctx: Any, d: Any) -> None:
        """The window is the applier's; the class's WritableMask says which points a draw
        or dispatch may write (what is marked GPU-written after it)."""
        p = d.payload
        self.binder.writable[int(p.Class)] = [int(w) for w in p.WritableMask]
        self.binder.serial += 1

    def SetShaderImages(self, ctx: Any, d: Any) -> None:
        self.binder.serial += 1  # the window moved: the next bind re-checks every unit

    # -- tessellation ------------------------------------------------------------------
    def PatchParameter(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        p = d.payload
        if int(p.Pname) != GL_PATCH_VERTICES:
            raise DriverRefused(f"{d.name}.Pname", f"0x{int(p.Pname):04x} (GL_PATCH_VERTICES)")
        if not has_entry("glPatchParameteri"):
            raise DriverRefused(d.name, "the driver exports no glPatchParameteri (neither "
                                "GLES 3.2 nor GL_EXT_tessellation_shader)")  # fmt: skip
        self.gl.glPatchParameteri(GL_PATCH_VERTICES, int(p.Value))
        err = int(self.gl.glGetError())
        if err:
            raise DriverRefused(f"{d.name}.Value", f"{int(p.Value)} vertices: GL error 0x{err:04x}")

    # -- transform feedback ----------------------------------------------------------------
    def _xfb_name(self, lifetime: int) -> int:
        if lifetime == 0:
            return 0
        objs = self._c19()["xfb"]
        name = objs.get(lifetime)
        if name is None:
            name = objs[lifetime] = int(self.gl.glGenTransformFeedbacks(1))
        return name

    def BindStreamOutput(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        self.gl.glBindTransformFeedback(GL.GL_TRANSFORM_FEEDBACK,
                                        self._xfb_name(int(d.payload.LifetimeId)))  # fmt: skip

    def DeleteStreamOutput(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        name = self._c19()["xfb"].pop(int(d.payload.LifetimeId), None)
        if name:
            self.gl.glDeleteTransformFeedbacks(1, [name])

    def SetStreamOutputTargets(self, ctx: Any, d: Any) -> None:
        return None  # state: the Begin snapshot is what GLES binds

    def BeginStreamOutput(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        p, what, gl = d.payload, d.name, self.gl
        st = self._c19()
        if st["span"] is not None:
            raise DriverRefused(what, "a capture is already running")
        prog = getattr(ctx.resolved.get("CaptureProgram"), "backend", None)
        if not isinstance(prog, GlProgram) or prog.xfb is None:
            raise DriverRefused(f"{what}.CaptureProgram", "the program captures nothing")
        mode = int(p.PrimitiveMode)
        if mode not in _VERTS_PER_PRIM:
            raise DriverRefused(f"{what}.PrimitiveMode", f"0x{mode:04x}")
        layout = prog.xfb
        # one GL capture point per buffer the layout names, in buffer order (GL's point k
        # takes the k-th varying group: all of them interleaved, or one when separate)
        targets = []
        for k, index in enumerate(sorted(layout.strides)):
            stride = layout.strides[index]
            vs = [v for v in layout.varyings if v.buffer == index]
            t = p.Targets[index]
            buf = getattr(ctx.resolved.get(f"Targets[{index}].Res"), "backend", None)
            if not isinstance(buf, GlBuffer):
                raise DriverRefused(f"{what}.Targets[{index}].Res", "no buffer to capture into")
            off, size = int(t.Offset), int(t.Size) or buf.size - int(t.Offset)
            if off % 4 or off < 0 or off + size > buf.size:
                raise DriverRefused(f"{what}.Targets[{index}]", f"[{off}, {off + size}) of a "
                                    f"buffer of {buf.size} bytes")  # fmt: skip
            packed = sum(4 * v.components for v in vs)
            tight = packed == stride and all(
                v.offset == sum(4 * u.components for u in vs[:i]) for i, v in enumerate(vs))
            targets.append({"point": k, "buf": buf, "res": t.Res, "off": off, "size": size,
                            "stride": stride,
                            "packed": packed, "varyings": vs, "scratch": 0 if tight else -1})  # fmt: skip
        gl.glBindTransformFeedback(GL.GL_TRANSFORM_FEEDBACK, self._xfb_name(int(p.LifetimeId)))
        for t in targets:
            if t["scratch"]:  # holes: capture packed, scatter at the end
                room = max((t["size"] // t["stride"]) * t["packed"], 4)
                t["scratch"] = int(gl.glGenBuffers(1))
                gl.glBindBuffer(GL.GL_TRANSFORM_FEEDBACK_BUFFER, t["scratch"])
                gl.glBufferData(GL.GL_TRANSFORM_FEEDBACK_BUFFER, room, None, GL.GL_STREAM_COPY)
                gl.glBindBufferRange(GL.GL_TRANSFORM_FEEDBACK_BUFFER, t["point"], t["scratch"], 0,
                                     room)  # fmt: skip
            else:
                gl.glBindBufferRange(GL.GL_TRANSFORM_FEEDBACK_BUFFER, t["point"], t["buf"].name,
                                     t["off"], t["size"])  # fmt: skip
        if prog.name != self._program:
            gl.glUseProgram(prog.name)
            self._program = prog.name
        query = int(gl.glGenQueries(1))
        gl.glBeginQuery(_XFB_PRIMS, query)
        gl.glBeginTransformFeedback(mode)
        err = int(gl.glGetError())
        if err:
            gl.glEndQuery(_XFB_PRIMS)
            gl.glDeleteQueries(1, [query])
            for t in targets:
                if t["scratch"]:
                    gl.glDeleteBuffers(1, [t["scratch"]])
            raise DriverRefused(what, f"glBeginTransformFeedback: GL error 0x{err:04x}")
        st["span"] = {"prog": prog, "mode": mode, "query": query, "targets": targets}

    def PauseStreamOutput(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        if self._c19()["span"] is None:
            raise DriverRefused(d.name, "no capture running")
        self.gl.glPauseTransformFeedback()

    def ResumeStreamOutput(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        span = self._c19()["span"]
        if span is None:
            raise DriverRefused(d.name, "no capture running")
        if span["prog"].name != self._program:  # GL resumes with the program it began with
            self.gl.glUseProgram(span["prog"].name)
            self._program = span["prog"].name
        self.gl.glResumeTransformFeedback()

    def EndStreamOutput(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        p, what, gl = d.payload, d.name, self.gl
        st = self._c19()
        span = st["span"]
        if span is None:
            raise DriverRefused(what, "no capture running")
        st["span"] = None
        gl.glEndTransformFeedback()
        gl.glEndQuery(_XFB_PRIMS)
        out = np.zeros(1, np.uint32)
        gl.glGetQueryObjectuiv(span["query"], GL.GL_QUERY_RESULT, out)
        gl.glDeleteQueries(1, [span["query"]])
        written = int(out[0])
        per = _VERTS_PER_PRIM[span["mode"]]
        st["spans"].append({"client": int(p.PrimitivesWritten), "driver": written,
                            "vertices": int(p.CapturedVertices)})  # fmt: skip
        try:
            for t in span["targets"]:
                if t["scratch"]:
                    self._scatter(t, written * per)
        finally:
            for t in span["targets"]:
                if t["scratch"]:
                    gl.glDeleteBuffers(1, [t["scratch"]])
                t["buf"].gpu_dirty = True
                # OnGpuWritten: the driver's primitives, from the target's offset
                emit_ranges(ctx, t["res"], [(t["off"], min(written * per * t["stride"],
                                                           t["size"]))])  # fmt: skip
        if written != int(p.PrimitivesWritten) or written * per != int(p.CapturedVertices):
            raise DriverRefused(f"{what}.PrimitivesWritten", f"the client counted "
                                f"{int(p.PrimitivesWritten)} primitives ({int(p.CapturedVertices)} "
                                f"vertices), the driver wrote {written}")  # fmt: skip

    def _scatter(self, t: dict, vertices: int) -> None:
        """A target's packed scratch into the target at the layout's offsets: one copy per
        captured varying per vertex, so the holes keep the target's own bytes."""
        gl = self.gl
        gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, t["scratch"])
        gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, t["buf"].name)
        src, spans = 0, []
        for v in t["varyings"]:
            spans.append((src, v.offset, 4 * v.components))
            src += 4 * v.components
        for i in range(vertices):
            for s_off, d_off, n in spans:
                gl.glCopyBufferSubData(GL.GL_COPY_READ_BUFFER, GL.GL_COPY_WRITE_BUFFER,
                                       i * t["packed"] + s_off, t["off"] + i * t["stride"] + d_off,
                                       n)  # fmt: skip
        gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, 0)
        gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, 0)
        err = int(gl.glGetError())
        if err:
            raise DriverRefused("EndStreamOutput.Scatter", f"glCopyBufferSubData: GL error 0x{err:04x}")

    def compute_stats(self) -> dict[str, Any]:
        """Launches so far and every capture span's (client, driver) primitive counts."""
        st = self._c19()
        return {"dispatches": st["dispatches"], "xfb_spans": list(st["spans"])}
