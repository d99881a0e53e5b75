"""The ``gles`` backend table: GLES 3 over EGL (PyOpenGL), Espryt's shape.

Entries are named like the calls (``backend.DrawVbo(ctx, decoded)``); a call without an
entry here is a null entry, i.e. ``Fatal{UnimplementedCall, "<Call>"}``. Entries that only
record state return at once (the server context already holds it): the GL work happens at
the verbs, which run :class:`~.sync.RenderStateSync` against the working render-state
block, then bind program / vertex input and draw, clear or read.

The EGL context is made on the first entry, on the thread that applies records (the
caller's thread under ``monolith``, the apply thread under ``inproc``). ``gl.counts`` counts
every GL call; :meth:`GlesBackend.stats` reports them with the sync gate counters.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from ...schema import tables as _t
from .egl import EglContext, EglError
from .errors import DriverRefused
from .framebuffer import Framebuffers, GlFramebuffer
from .gl import GL, CountedGL, gl_string, has_entry
from .answers import GlesAnswers
from .gpu_timer import GlesGpuTimer
from .indirect import GlesDrawsMixin
from .bindings import Binder, GlSampler, GlSamplerView, apply_texture_params, make_sampler
from .compute import ComputeEntries
from .program import GlProgram, build_program
from .resources import (
    PIXEL_FORMATS,
    GlBuffer,
    GlRenderbuffer,
    GlTexture,
    Limits,
    Resources,
)
from .readback import read_rect
from .sync import RenderStateSync
from .vertex import INDEX_DTYPES, VertexInput, parse_layout

__all__ = ["GlesBackend"]


def _staged(ctx: Any, ref: Any, what: str, writable: bool = False) -> memoryview:
    """The stage bytes an ``MGPBlobRef`` record names (bounds-checked by the segment)."""
    return ctx.stage.view((ref.Offset, ref.Size, ref.Seg), what, writable=writable)


def _state_only(ctx: Any, d: Any) -> None:
    """The applier already holds what this record says; GL reads it at the next verb."""
    return None


class GlesBackend(GlesAnswers, ComputeEntries, GlesDrawsMixin):
    """One context's GLES backend (see the module docstring; the answers:
    :class:`~.answers.GlesAnswers`; issue 19's compute, image, barrier, transform-feedback
    and patch entries: :class:`~.compute.ComputeEntries`; indirect and client-memory draws:
    :class:`~.indirect.GlesDrawsMixin`)."""

    # state the applier keeps; the verbs read it
    CreateRenderState = staticmethod(_state_only)
    BindRenderState = staticmethod(_state_only)
    SetDynamicState = staticmethod(_state_only)
    DeleteRenderState = staticmethod(_state_only)
    SetPixelPackState = staticmethod(_state_only)
    # pushed at a scene's first validate (MobileGL's sequence); the applier holds them and
    # LaunchGrid reads the dispatch program, the driver takes patch sizes at PatchParameter
    BindShaderState = staticmethod(_state_only)
    SetDispatchProgram = staticmethod(_state_only)
    SetPatchState = staticmethod(_state_only)
    SetContextValues = staticmethod(_state_only)

    def __init__(self) -> None:
        self.gl = CountedGL()
        self.egl: EglContext | None = None
        self.frames = 0
        self.frame_gl_calls: list[int] = []
        self._frame_start = 0
        self.draws = 0
        self._restart_flag = int(_t.enum("MGPDrawFlagBit")["kDrawPrimitiveRestart"])
        self._indirect_flag = int(_t.enum("MGPDrawFlagBit")["kDrawIsIndirect"])
        self._user_flag = int(_t.enum("MGPDrawFlagBit")["kDrawHasUserIndices"])
        self._clear_whole = _t.constant("kMGPipeClearKindWhole")  # glClear(mask)
        self._program = 0
        self._bound_program: GlProgram | None = None
        self._bound_handle: Any = None
        self._attrib_defaults: dict[int, tuple] = {}
        self.gpu: GlesGpuTimer | None = None  # made with the context
        self._frame_open = False  # the GPU timer's query of this frame is begun

    # -- life --------------------------------------------------------------------------
    def _start(self) -> None:
        self.egl = EglContext()
        self.platform = self.egl.platform
        gl = self.gl

        def geti(name: int) -> int:
            return int(np.asarray(gl.glGetIntegerv(name)).reshape(-1)[0])

        self.version = gl_string(gl, GL.GL_VERSION)
        self.renderer = gl_string(gl, GL.GL_RENDERER)
        exts = set(gl_string(gl, GL.GL_EXTENSIONS).split())
        major = geti(GL.GL_MAJOR_VERSION) * 10 + geti(GL.GL_MINOR_VERSION)
        self.gles_version, self.exts = major, frozenset(exts)
        self.limits = Limits(geti(GL.GL_MAX_TEXTURE_SIZE), geti(GL.GL_MAX_RENDERBUFFER_SIZE),
                             geti(GL.GL_MAX_DRAW_BUFFERS), geti(GL.GL_MAX_VERTEX_ATTRIBS))  # fmt: skip
        indexed = (major >= 32 or "GL_OES_draw_buffers_indexed" in exts) and all(
            has_entry(f) for f in ("glEnablei", "glColorMaski", "glBlendFuncSeparatei"))  # fmt: skip
        self.res = Resources(gl, self.limits)
        self.fbs = Framebuffers(gl, self.limits.max_draw_buffers)
        self.vtx = VertexInput(gl, self.limits.max_vertex_attribs)
        self.sync = RenderStateSync(gl, indexed)
        self.binder = Binder(gl)
        self._max_aniso = 0.0
        if "GL_EXT_texture_filter_anisotropic" in exts:
            from OpenGL.GLES2.EXT import texture_filter_anisotropic as an

            self._max_aniso = float(np.asarray(gl.glGetFloatv(
                an.GL_MAX_TEXTURE_MAX_ANISOTROPY_EXT)).reshape(-1)[0])  # fmt: skip
        self._base_vertex = major >= 32 and has_entry("glDrawElementsBaseVertex") and has_entry(
            "glDrawElementsInstancedBaseVertex")  # fmt: skip
        self._pack_alignment = 4  # GL's initial value
        self.gpu = GlesGpuTimer(exts)

    def _ready(self) -> None:
        if self.egl is None:
            self._start()

    def _open_frame(self) -> None:
        """The frame's first rendering verb (clear or draw) opens its GPU timer query."""
        self.gpu.frame_begin()  # type: ignore[union-attr]
        self._frame_open = True

    def close(self) -> None:
        """Read the GPU timer's last frames, then destroy the context (every GL object goes
        with it). Under ``inproc`` the apply thread has released the context at its exit; if
        it cannot be made current here, the unread frames stay unreported."""
        if self.egl is not None:
            if self.gpu is not None:
                try:
                    if threading.get_ident() != self.egl.thread:
                        self.egl.make_current()
                    self.gpu.close()
                except EglError:
                    pass
            self.egl.destroy()
            self.egl = None

    def read_default_framebuffer(self) -> tuple[int, int, bytes] | None:
        """The default framebuffer's colour (width, height, RGBA rows bottom-up), read
        outside the wire and outside the counts: PyOpenGL is called directly, never
        through ``self.gl``, and the framebuffer binding and pack alignment are put back.
        None when no default framebuffer was ever made (nothing was drawn)."""
        fb = self.fbs.default if self.egl is not None else None
        if fb is None:
            return None
        if threading.get_ident() != self.egl.thread:  # inproc: the apply thread has ended
            self.egl.make_current()
        w, h = fb.width, fb.height
        out = (ctypes.c_ubyte * (w * h * 4))()
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fb.name)
        GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
        GL.glReadPixels(0, 0, w, h, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, out)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, self._pack_alignment)
        GL.glReadBuffer(fb.read_buffer if fb.read_buffer >= 0 else GL.GL_COLOR_ATTACHMENT0)
        if self.fbs.bound >= 0:
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.fbs.bound)
        return w, h, bytes(out)

    def gpu_stats(self) -> dict[str, Any]:
        """``gpu_time`` (``"available"`` or ``"gpu time not available: <reason>"``),
        ``gpu_ns_per_frame`` (frames read so far, in order; ``gpu_frame_index``: which
        presented frame each is), ``gpu_dropped_disjoint`` and
        ``gpu_dropped_implausible``."""
        g = self.gpu
        if g is None:
            return {"gpu_time": "gpu time not available: no context yet", "gpu_ns_per_frame": [],
                    "gpu_frame_index": [],
                    "gpu_dropped_disjoint": 0, "gpu_dropped_implausible": 0}  # fmt: skip
        return {"gpu_time": g.available, "gpu_ns_per_frame": list(g.frame_ns),
                "gpu_frame_index": list(g.frame_index),
                "gpu_dropped_disjoint": g.dropped_disjoint,
                "gpu_dropped_implausible": g.dropped_implausible}  # fmt: skip

    def stats(self) -> dict[str, int | float | str]:
        """Flat counters: GL calls, draws, frames, the sync gate (``sync_<gate>``) and the
        GPU timer (``gpu_time`` availability, ``gpu_frames``, ``gpu_ns_total``,
        ``gpu_dropped_disjoint``, ``gpu_dropped_implausible``; its own GL calls are not in
        ``gl_calls``)."""
        out: dict[str, int | float | str] = {
            "gl_calls": self.gl.total(),
            "draws": self.draws,
            "frames": self.frames,
            "gl_calls_last_frame": self.frame_gl_calls[-1] if self.frame_gl_calls else 0,
        }
        if hasattr(self, "sync"):
            out.update((f"sync_{k}", v) for k, v in sorted(self.sync.stats.items()))
        g = self.gpu_stats()
        out.update(gpu_time=g["gpu_time"], gpu_frames=len(g["gpu_ns_per_frame"]),
                   gpu_ns_total=sum(g["gpu_ns_per_frame"]),
                   gpu_dropped_disjoint=g["gpu_dropped_disjoint"],
                   gpu_dropped_implausible=g["gpu_dropped_implausible"])  # fmt: skip
        return out

    def info(self) -> dict[str, Any]:
        """Which driver ran, and every GL call by name."""
        return {"renderer": getattr(self, "renderer", ""), "version": getattr(self, "version", ""),
                "egl_platform": getattr(self, "platform", ""),
                "gl_calls_by_name": dict(sorted(self.gl.counts.items())),
                "gl_calls_per_frame": list(self.frame_gl_calls)}  # fmt: skip

    # -- resources -----------------------------------------------------------------------
    def ResourceCreate(self, ctx: Any, d: Any) -> None:
        self._ready()
        obj = ctx.resolved["Resource"]
        obj.backend = self.res.create(obj.kind, int(d.payload.Target), d.name)

    def ResourceRespecify(self, ctx: Any, d: Any) -> None:
        self._ready()
        res = ctx.resolved["Resource"].backend
        had = (getattr(res, "name", 0), getattr(res, "levels", 0))
        self.res.respecify(res, d.payload, d.name)
        if isinstance(res, GlTexture):
            self.binder.disturbed()  # the active unit's binding moved
            moved = had != (res.name, res.levels)  # new storage: a new GL texture name
            if moved and res.levels and res.params is not None:
                apply_texture_params(self.gl, res, res.params, d.name)
            self.binder.serial += 1

    def ResourceSubData(self, ctx: Any, d: Any) -> None:
        self._ready()
        regions = d.tails[0] if d.tails else ()
        blob = d.blob if d.blob is not None else memoryview(b"")
        res = ctx.resolved["Res"].backend
        if isinstance(res, GlTexture):
            self.binder.disturbed()  # bound on the active unit
        self.res.sub_data(res, d.payload, regions, blob, d.name)

    def ResourceDestroy(self, ctx: Any, d: Any) -> None:
        self._ready()
        obj = ctx.resolved["Handle"]
        self._forget_resource(obj.backend)
        self.res.destroy(obj.backend)
        obj.backend = None

    def _forget_resource(self, res: object) -> None:
        if isinstance(res, GlBuffer):
            self.vtx.forget_buffer(res)
            self.binder.forget_buffer(res.name)
        elif isinstance(res, GlTexture):
            self.binder.forget_texture(res.name)
        self.binder.serial += 1

    def ObjectDeath(self, ctx: Any, d: Any) -> None:
        """A death no wire delete preceded (a framebuffer): release its GL object. After a
        wire delete the server hands ``None`` (the delete entry released it)."""
        obj = ctx.resolved.get("Handle")
        res = getattr(obj, "backend", None)
        if res is None:
            return
        self._ready()
        if isinstance(res, GlFramebuffer):
            self.fbs.destroy(res)
        elif isinstance(res, GlProgram):
            self._forget_program(res)
        elif isinstance(res, GlSampler):
            self.binder.forget_sampler(res.name)
            self.gl.glDeleteSamplers(1, [res.name])
        elif isinstance(res, GlSamplerView):
            pass
        else:
            self._forget_resource(res)
            self.res.destroy(res)
        obj.backend = None

    # -- vertex input ----------------------------------------------------------------------
    def CreateVertexElements(self, ctx: Any, d: Any) -> None:
        self._ready()
        obj = ctx.resolved["Cso"]
        obj.backend = parse_layout(d.payload, bytes(d.blob or b""), d.name)
        if ctx.vertex_elements == obj.handle:  # a re-issued create of the bound layout
            self.vtx.set_layout(obj.backend)

    def BindVertexElements(self, ctx: Any, d: Any) -> None:
        self._ready()
        self.vtx.set_layout(ctx.resolved["Handle"].backend)

    def DeleteVertexElements(self, ctx: Any, d: Any) -> None:
        """glDeleteVertexArrays: the layout is a parse of its blob (no GL object); deleting
        the bound one leaves no attribute enabled, as GL's unbinding does."""
        self._ready()
        obj = ctx.resolved["Handle"]
        if obj.backend is not None and self.vtx.layout is obj.backend:
            self.vtx.set_layout(())
        obj.backend = None

    def SetVertexBuffers(self, ctx: Any, d: Any) -> None:
        self._ready()
        start = int(d.payload.Start)
        rows: dict[int, tuple[GlBuffer, int, int] | None] = {}
        tail = d.tails[0] if d.tails else ()
        for i, row in enumerate(tail):
            obj = ctx.resolved.get(f"MGPVertexBuffer[{i}].Res")
            buf = getattr(obj, "backend", None)
            rows[start + i] = (buf, int(row.Offset), int(row.Stride)) if isinstance(
                buf, GlBuffer) else None  # fmt: skip
        self.vtx.set_buffers(start, rows)

    def SetIndexBuffer(self, ctx: Any, d: Any) -> None:
        self._ready()  # the draw names its index resource; nothing to bind ahead of it

    # -- shader state ----------------------------------------------------------------------
    def CreateShaderState(self, ctx: Any, d: Any) -> None:
        self._ready()
        p = d.payload
        mask = int(p.StageMask)
        stages = {i: bytes(_staged(ctx, p.Spirv[i], f"{d.name}.Spirv"))
                  for i in range(len(p.Spirv)) if mask >> i & 1}  # fmt: skip
        reflection = bytes(_staged(ctx, p.Reflection, f"{d.name}.Reflection"))
        ctx.resolved["Cso"].backend = build_program(self.gl, stages, reflection, d.name,
                                                    version=self.gles_version, exts=self.exts)

    def SetDrawProgram(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved.get("Handle")
        prog = getattr(obj, "backend", None)
        self._bound_program = prog if isinstance(prog, GlProgram) else None
        self._bound_handle = getattr(obj, "handle", None)

    def SetVertexAttribDefaults(self, ctx: Any, d: Any) -> None:
        """Generic attribute values (glVertexAttrib{4f,I4i,I4ui}v): what a program input
        reads when no array feeds it. GL keeps them per context, so they are set here.
        ``ValueClass`` is one of the tables' ``kMGPipeAttribValueClass*``."""
        self._ready()
        c = _t.constant
        gl = self.gl
        rows = d.tails[0] if d.tails else ()
        applied = self._attrib_defaults
        for r in rows:
            loc, vc = int(r.Location), int(r.ValueClass)
            if loc >= self.limits.max_vertex_attribs:
                continue  # beyond the driver's attributes: no program can read it
            if vc == c("kMGPipeAttribValueClassFloat"):
                key = (vc, tuple(int(x) for x in r.FloatView))
                fn, dt = gl.glVertexAttrib4fv, np.float32
            elif vc == c("kMGPipeAttribValueClassInt"):
                key = (vc, tuple(int(x) for x in r.IntView))
                fn, dt = gl.glVertexAttribI4iv, np.int32
            elif vc == c("kMGPipeAttribValueClassUint"):
                key = (vc, tuple(int(x) for x in r.UintView))
                fn, dt = gl.glVertexAttribI4uiv, np.uint32
            else:
                raise DriverRefused(f"{d.name}.ValueClass", f"attribute {loc}: class {vc}")
            if applied.get(loc) == key:
                continue
            fn(loc, np.array(key[1], np.uint32).view(dt))
            applied[loc] = key

    # -- shader resources --------------------------------------------------------------
    def SetGlobalConstants(self, ctx: Any, d: Any) -> None:
        """The program's default-block bytes for ``(ShaderCso, Version)``: uploaded into the
        program's own uniform buffer at its next draw."""
        self._ready()
        p = d.payload
        self.binder.globals[p.ShaderCso] = (int(p.Version), bytes(d.blob or b""))

    def _binding_moved(self, ctx: Any, d: Any) -> None:
        self.binder.serial += 1

    SetSamplerViews = _binding_moved
    BindSamplerStates = _binding_moved
    SetProgramBindings = _binding_moved

    def CreateSamplerState(self, ctx: Any, d: Any) -> None:
        self._ready()
        obj = ctx.resolved["Cso"]
        old = obj.backend
        obj.backend = make_sampler(self.gl, bytes(d.blob or b""), f"{d.name}.Parameters",
                                   self._max_aniso)  # fmt: skip
        if isinstance(old, GlSampler):
            self.binder.forget_sampler(old.name)
            self.gl.glDeleteSamplers(1, [old.name])
        self.binder.serial += 1

    def DeleteSamplerState(self, ctx: Any, d: Any) -> None:
        self._ready()
        obj = ctx.resolved["Handle"]
        if isinstance(obj.backend, GlSampler):
            self.binder.forget_sampler(obj.backend.name)
            self.gl.glDeleteSamplers(1, [obj.backend.name])
        obj.backend = None
        self.binder.serial += 1

    def CreateSamplerView(self, ctx: Any, d: Any) -> None:
        self._ready()
        ctx.resolved["Cso"].backend = GlSamplerView(d.payload)
        self.binder.serial += 1

    def DeleteSamplerView(self, ctx: Any, d: Any) -> None:
        ctx.resolved["Handle"].backend = None
        self.binder.serial += 1

    def SetTextureParams(self, ctx: Any, d: Any) -> None:
        self._ready()
        tex = getattr(ctx.resolved.get("Res"), "backend", None)
        if not isinstance(tex, GlTexture):
            raise DriverRefused(f"{d.name}.Res", "not a texture")
        if tex.levels:
            apply_texture_params(self.gl, tex, d.payload, d.name)
        else:  # no storage yet: applied once the storage is made
            tex.params = d.payload
        self.binder.disturbed()  # the active unit's binding moved
        self.binder.serial += 1

    def GenerateMipmap(self, ctx: Any, d: Any) -> None:
        self._ready()
        tex = getattr(ctx.resolved.get("Res"), "backend", None)
        if not isinstance(tex, GlTexture) or not tex.levels:
            raise DriverRefused(f"{d.name}.Res", "not a texture with storage")
        self.binder.disturbed()
        self.gl.glBindTexture(tex.target, tex.name)
        self.gl.glGenerateMipmap(tex.target)
        self.res._check(d.name)

    def DeleteShaderState(self, ctx: Any, d: Any) -> None:
        self._ready()
        obj = ctx.resolved["Handle"]
        if isinstance(obj.backend, GlProgram):
            self._forget_program(obj.backend)
            obj.backend = None

    def _forget_program(self, prog: GlProgram) -> None:
        if self._program == prog.name:
            self._program = 0
        if self._bound_program is prog:
            self._bound_program = None
        self.binder.forget_program(prog)
        self.gl.glDeleteProgram(prog.name)

    # -- framebuffers ------------------------------------------------------------------------
    def SetFramebufferState(self, ctx: Any, d: Any) -> None:
        self._ready()
        p = d.payload
        if int(p.IsDefault):
            fb = self.fbs.default_framebuffer(int(p.Width), int(p.Height), d.name)
            self.fbs.bind(fb)
        else:
            obj = ctx.resolved["Fbo"]
            if not isinstance(obj.backend, GlFramebuffer):
                obj.backend = self.fbs.create()
            fb = obj.backend
            self.fbs.update(fb, p, ctx.resolved, d.name)
        self.sync.set_surface(fb.width, fb.height)

    # -- verbs ---------------------------------------------------------------------------------
    def _sync(self, ctx: Any) -> None:
        ws = ctx.render_state
        self.sync.sync(ws.data, ws.version, ws.view())

    def Clear(self, ctx: Any, d: Any) -> None:
        self._ready()
        if not self._frame_open:  # checked here: no extra Python call per draw
            self._open_frame()
        p = d.payload
        kind = int(p.Kind)
        self._sync(ctx)
        gl = self.gl
        if kind == self._clear_whole:
            gl.glClear(int(p.BufferMask))
            self._gl_errors(ctx)  # OnGlError ordered after this clear
            return
        c = _t.constant
        index = int(p.DrawBufferIndex)
        if kind == c("kMGPipeClearKindColor"):
            if not 0 <= index < int(c("kMGMaxDrawBuffers")):  # GL_INVALID_VALUE past the last
                raise DriverRefused(f"{d.name}.DrawBufferIndex", f"{index}: glClearBuffer names "
                                    "one draw buffer")  # fmt: skip
            bits = [int(x) & 0xFFFFFFFF for x in p.ColorValue]
            vc = int(p.ValueClass)
            if vc == c("kMGPipeClearValueClassFloat"):
                gl.glClearBufferfv(GL.GL_COLOR, index, np.array(bits, np.uint32).view(np.float32))
            elif vc == c("kMGPipeClearValueClassInt"):
                gl.glClearBufferiv(GL.GL_COLOR, index, np.array(bits, np.uint32).view(np.int32))
            elif vc == c("kMGPipeClearValueClassUint"):
                gl.glClearBufferuiv(GL.GL_COLOR, index, np.array(bits, np.uint32))
            else:
                raise DriverRefused(f"{d.name}.ValueClass", f"{vc}: no clear value class")
        elif kind == c("kMGPipeClearKindDepth"):
            gl.glClearBufferfv(GL.GL_DEPTH, 0, np.array([float(p.DepthValue)], np.float32))
        elif kind == c("kMGPipeClearKindStencil"):
            gl.glClearBufferiv(GL.GL_STENCIL, 0, np.array([int(p.StencilValue)], np.int32))
        elif kind == c("kMGPipeClearKindDepthStencil"):
            gl.glClearBufferfi(GL.GL_DEPTH_STENCIL, 0, float(p.DepthValue), int(p.StencilValue))
        else:
            raise DriverRefused(f"{d.name}.Kind", f"{kind}: no clear kind")
        self._gl_errors(ctx)  # OnGlError ordered after this clear

    def Blit(self, ctx: Any, d: Any) -> None:
        """``glBlitFramebuffer`` from the read framebuffer to the draw framebuffer (an MSAA
        resolve when the read one is multisampled); scissor and the rest of the pushed
        state apply as GL applies them."""
        self._ready()
        if not self._frame_open:
            self._open_frame()
        p = d.payload
        fbs = []
        for field in ("ReadFbo", "DrawFbo"):
            obj = ctx.resolved.get(field)
            fb = getattr(obj, "backend", None)
            h = getattr(p, field)
            if fb is None and (obj is None or obj is ctx.default_framebuffer or h.is_null
                               or obj.handle == ctx.default_framebuffer.handle):  # fmt: skip
                fb = self.fbs.default
            if not isinstance(fb, GlFramebuffer):
                raise DriverRefused(f"{d.name}.{field}", "no framebuffer made for it yet")
            fbs.append(fb)
        self._sync(ctx)
        gl = self.gl
        gl.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, fbs[0].name)
        gl.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, fbs[1].name)
        gl.glBlitFramebuffer(int(p.SrcX0), int(p.SrcY0), int(p.SrcX1), int(p.SrcY1),
                             int(p.DstX0), int(p.DstY0), int(p.DstX1), int(p.DstY1),
                             int(p.Mask), int(p.Filter))  # fmt: skip
        bound = self.fbs.bound if self.fbs.bound >= 0 else 0
        gl.glBindFramebuffer(GL.GL_FRAMEBUFFER, bound)
        self.res._check(d.name)

    def DrawVbo(self, ctx: Any, d: Any) -> None:
        self._ready()
        if not self._frame_open:  # checked here: no extra Python call per draw
            self._open_frame()
        p = d.payload
        what = d.name
        prog = self._bound_program
        if prog is None:
            raise DriverRefused(f"{what}.ShaderCso", "a draw with no linked program bound")
        self._sync(ctx)
        gl = self.gl
        if prog.name != self._program:
            gl.glUseProgram(prog.name)
            self._program = prog.name
        base_instance = int(p.StartInstance)
        self.vtx.apply(what, base_instance)  # instanced attributes start base_instance in
        if prog.binds:
            self.binder.bind(ctx, self._bound_handle, prog, self.res.epoch, base_instance, what)
        if int(p.Flags) & self._indirect_flag:  # MGPDrawIndirect commands (indirect.py)
            self.draw_indirect(ctx, d, prog)
            self._gl_errors(ctx)  # OnGlError ordered after this draw, never after Present
            return
        mode, instances = int(p.Mode), max(int(p.InstanceCount), 1)
        size = int(p.IndexSize)
        ranges = d.tails[0] if d.tails else ()
        if size:
            ib = (self.user_index_buffer(ctx, d, what) if int(p.Flags) & self._user_flag
                  else getattr(ctx.resolved.get("IndexResource"), "backend", None))  # fmt: skip
            if not isinstance(ib, GlBuffer) or size not in INDEX_DTYPES:
                raise DriverRefused(f"{what}.IndexResource", f"an indexed draw ({size}-byte indices) "
                                    "with no index buffer")  # fmt: skip
            restart = None
            if int(p.Flags) & self._restart_flag:
                restart = int(p.RestartIndex)
            ibs = None if int(p.Flags) & self._user_flag else ctx.last.get("SetIndexBuffer")
            base = int(ibs.Offset) if ibs is not None else 0  # SetIndexBuffer.Offset, bytes
            if base % size:
                raise DriverRefused("SetIndexBuffer.Offset", f"{base} bytes is not a multiple "
                                    f"of the {size}-byte index")  # fmt: skip
            base //= size  # in indices: the same after a rewrite to 32 bits
            if restart is not None and restart != (1 << (8 * size)) - 1:  # GLES: fixed only
                ib, size, restart = self.restart_rewrite(ib, size, restart, what), 4, 0xFFFFFFFF
            self.vtx.bind_index_buffer(ib)
            gl_type = INDEX_DTYPES[size][0]
            for r in ranges:
                start, count, bias = int(r.Start) + base, int(r.Count), int(r.IndexBias)
                top = self.vtx.max_index(ib, size, start, count, restart, what)
                if top >= 0 and top + bias < 0:
                    raise DriverRefused(f"{what}.IndexBias", f"index {top} + base vertex {bias} "
                                        "is negative")  # fmt: skip
                self.vtx.check_range(top + bias if top >= 0 else top, instances, self.res.epoch,
                                     what, base_instance)  # fmt: skip
                ptr = ctypes.c_void_p(start * size)
                if bias:
                    if not self._base_vertex:
                        raise DriverRefused(f"{what}.IndexBias", "the driver exports no "
                                            "glDrawElementsBaseVertex (GLES 3.2)")  # fmt: skip
                    if instances > 1:
                        gl.glDrawElementsInstancedBaseVertex(mode, count, gl_type, ptr, instances,
                                                             bias)  # fmt: skip
                    else:
                        gl.glDrawElementsBaseVertex(mode, count, gl_type, ptr, bias)
                elif instances > 1:
                    gl.glDrawElementsInstanced(mode, count, gl_type, ptr, instances)
                else:
                    gl.glDrawElements(mode, count, gl_type, ptr)
        else:
            for r in ranges:
                start, count = int(r.Start), int(r.Count)
                self.vtx.check_range(start + count - 1, instances, self.res.epoch, what,
                                     base_instance)  # fmt: skip
                if instances > 1:
                    gl.glDrawArraysInstanced(mode, start, count, instances)
                else:
                    gl.glDrawArrays(mode, start, count)
        self.draws += len(ranges)
        self.note_gpu_written(ctx, prog)  # what the draw may have written (issue 19)
        self._gl_errors(ctx)  # OnGlError ordered after this draw, never after Present

    def Flush(self, ctx: Any, d: Any) -> None:
        """``glFlush``: what was issued goes to the driver; nothing waits."""
        self._ready()
        self.gl.glFlush()

    def Present(self, ctx: Any, d: Any) -> None:
        self._ready()
        self.gpu.frame_end()  # type: ignore[union-attr]
        self._frame_open = False
        self.gl.glFlush()
        self.frames += 1
        self._gl_errors(ctx)  # OnGlError, ordered after this record (never a Fatal)
        self.tick(ctx, present=True)  # retire; the non-present fence tick counts from here
        total = self.gl.total()
        self.frame_gl_calls.append(total - self._frame_start)  # GL calls issued this frame
        self._frame_start = total
