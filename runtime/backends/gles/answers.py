"""The gles backend's answers (docs/REVERSE_CHANNEL.md): caps, fences, queries, readbacks,
copies, persistent maps -- the mixin :class:`GlesAnswers` of :class:`~.backend.GlesBackend`.

- ``ReadPixels`` / ``GetTextureImage``: tight (``PACK_ALIGNMENT`` 1, no row length / skips),
  rows bottom-up; the client scatters with its own pack state. ``GetTextureImage`` reads a
  texture level through a scratch framebuffer (GLES has no glGetTexImage). Readable pairs:
  GLES 3.0's colour pairs (RGBA / UNSIGNED_BYTE, RGBA / FLOAT, RGBA_INTEGER / INT, UINT),
  plus the implementation's ``GL_IMPLEMENTATION_COLOR_READ_FORMAT / TYPE``; depth and
  stencil reads need ``GL_NV_read_depth`` / ``GL_NV_read_stencil`` and are refused by name
  without them.
- ``ReadPixelsToBuffer`` / ``GetTextureImageToBuffer``: ``glReadPixels`` into the buffer
  bound as ``GL_PIXEL_PACK_BUFFER`` (``RowStride`` as ``PACK_ROW_LENGTH``), then
  ``EvReadbackDone``; nothing waits. ``ResourceReadback``: ``glMapBufferRange(READ)``.
- ``ResourceCopyRegion``: buffers by ``glCopyBufferSubData``; textures by
  ``glCopyImageSubData`` where the context has it, else through a scratch framebuffer and
  ``glCopyTexSubImage2D`` (colour). ``CopyFramebufferToTexture``: ``glCopyTex(Sub)Image2D``
  from the bound read framebuffer. A buffer the GPU wrote has its server mirror re-read
  (the mirror answers index-range checks).
- Fences: ``glFenceSync`` per ``FenceCreate`` (retired per fence, never by frame count);
  ``FenceStatus`` / ``FenceWait`` by ``glClientWaitSync``; ``FenceWaitServer`` by
  ``glWaitSync``. Queries: ``GL_ANY_SAMPLES_PASSED(_CONSERVATIVE)`` (GLES 3 has no
  ``GL_SAMPLES_PASSED``: refused by name), ``GL_TIME_ELAPSED`` / ``GL_TIMESTAMP`` through
  ``GL_EXT_disjoint_timer_query``. :meth:`GlesAnswers.tick` (every 64 records, at Present)
  flushes, retires what finished and pushes ``EvFenceSignaled`` / ``EvQueryResult``; it also
  inserts the non-present fence tick (8 ms since the last Present or 4096 records).
- A GL error the driver raises is the record's ordered ``OnGlError`` (never a Fatal): the
  driver is asked after every draw, clear, readback and query, and at Present, so an
  error carries the sequence number of the verb that raised it.
- ``MapPersistent``: DECLINED (tier T2: the client pushes blocks as ResourceSubData).
"""

from __future__ import annotations

import ctypes
import struct
import time
from typing import Any

import numpy as np

from ...server.reverse import AnswersCaps, BackendCaps, Reply
from .errors import DriverRefused
from .gl import GL, has_entry
from .gpu_timer import AVAILABLE
from .readback import read_rect
from .resources import PIXEL_FORMATS, READ_FORMATS, GlBuffer, GlTexture

__all__ = ["GlesAnswers"]

GL_SAMPLES_PASSED, GL_ANY_SAMPLES_PASSED = 0x8914, 0x8C2F
GL_ANY_SAMPLES_PASSED_CONSERVATIVE, GL_TIME_ELAPSED, GL_TIMESTAMP = 0x8D6A, 0x88BF, 0x8E28
GL_QUERY_RESULT, GL_QUERY_RESULT_AVAILABLE = 0x8866, 0x8867
GL_SYNC_GPU_COMMANDS_COMPLETE, GL_SYNC_FLUSH_COMMANDS_BIT = 0x9117, 0x1
GL_ALREADY_SIGNALED, GL_TIMEOUT_EXPIRED, GL_CONDITION_SATISFIED, GL_WAIT_FAILED = (
    0x911A, 0x911B, 0x911C, 0x911D)  # fmt: skip
GL_TIMEOUT_IGNORED = 0xFFFFFFFFFFFFFFFF
GL_INVALID_VALUE, GL_INVALID_OPERATION = 0x0501, 0x0502
GL_DEPTH_COMPONENT, GL_STENCIL_INDEX, GL_DEPTH_STENCIL = 0x1902, 0x1901, 0x84F9
#: the non-present fence tick (seed 001 §11.8)
TICK_S, TICK_RECORDS = 0.008, 4096
_WAIT = {GL_TIMEOUT_EXPIRED: 0, GL_CONDITION_SATISFIED: 1, GL_ALREADY_SIGNALED: 2}


def _bpp(fmt: int, typ: int) -> int:
    from ...client.pixels import PixelFormatError, pixel_size

    try:
        return pixel_size(fmt, typ)
    except PixelFormatError:
        return 0


class GlesAnswers(AnswersCaps):
    """Entries that answer (and the copies and fences around them); see the module."""

    # -- caps --------------------------------------------------------------------------
    def caps_snapshot(self) -> BackendCaps:
        self._ready()  # type: ignore[attr-defined]
        gl = self.gl  # type: ignore[attr-defined]

        def geti(name: int) -> int:
            return int(np.asarray(gl.glGetIntegerv(name)).reshape(-1)[0])

        lim = self.limits  # type: ignore[attr-defined]
        dynamic = {"MaxTextureSize": lim.max_texture_size,
                   "MaxRenderbufferSize": lim.max_renderbuffer_size,
                   "MaxDrawBuffers": lim.max_draw_buffers, "MaxColorAttachments": lim.max_draw_buffers,
                   "MaxVertexAttribs": lim.max_vertex_attribs,
                   "MaxSamples": geti(GL.GL_MAX_SAMPLES),
                   "Max3DTextureSize": geti(GL.GL_MAX_3D_TEXTURE_SIZE),
                   "MaxArrayTextureLayers": geti(GL.GL_MAX_ARRAY_TEXTURE_LAYERS),
                   "MaxCubeMapTextureSize": geti(GL.GL_MAX_CUBE_MAP_TEXTURE_SIZE),
                   "MaxTextureImageUnits": geti(GL.GL_MAX_TEXTURE_IMAGE_UNITS),
                   "MaxCombinedTextureImageUnits": geti(GL.GL_MAX_COMBINED_TEXTURE_IMAGE_UNITS),
                   "MaxUniformBufferBindings": geti(GL.GL_MAX_UNIFORM_BUFFER_BINDINGS),
                   "MaxUniformBlockSize": geti(GL.GL_MAX_UNIFORM_BLOCK_SIZE),
                   "UniformBufferOffsetAlignment": geti(GL.GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT)}  # fmt: skip
        bits = ["kCapOcclusionQuery"]
        if self._timer_entries():
            bits.append("kCapTimerQuery")
        formats = tuple((int(k), 1) for k in sorted(PIXEL_FORMATS))
        return BackendCaps(dynamic, tuple(bits), formats,
                           f"{self.renderer} | {self.version}")  # type: ignore[attr-defined]

    def _timer_entries(self) -> bool:
        return self.gpu is not None and self.gpu.available == AVAILABLE and all(  # type: ignore[attr-defined]
            has_entry(e) for e in ("glQueryCounterEXT", "glGetInteger64vEXT"))  # fmt: skip

    # -- errors --------------------------------------------------------------------------
    def _gl_errors(self, ctx: Any) -> None:
        """Every error the driver flagged since the last check: ``OnGlError``, in order."""
        gl = self.gl  # type: ignore[attr-defined]
        for _ in range(8):  # GL keeps at most one flag per error kind
            err = int(gl.glGetError())
            if not err:
                return
            ctx.events.gl_error(err)

    # -- readbacks -----------------------------------------------------------------------
    def _readable(self, fmt: int, typ: int, what: str) -> int:
        gl = self.gl  # type: ignore[attr-defined]
        bpp = _bpp(fmt, typ)
        if fmt in (GL_DEPTH_COMPONENT, GL_STENCIL_INDEX, GL_DEPTH_STENCIL):
            ext = {GL_DEPTH_COMPONENT: "GL_NV_read_depth", GL_STENCIL_INDEX: "GL_NV_read_stencil",
                   GL_DEPTH_STENCIL: "GL_NV_read_depth_stencil"}[fmt]  # fmt: skip
            if ext not in self._extensions():
                raise DriverRefused(f"{what}.Format", f"format 0x{fmt:04x}: GLES 3 reads depth / "
                                    f"stencil only with {ext}")  # fmt: skip
        elif (fmt, typ) not in READ_FORMATS:
            impl = (int(np.asarray(gl.glGetIntegerv(GL.GL_IMPLEMENTATION_COLOR_READ_FORMAT)).reshape(-1)[0]),
                    int(np.asarray(gl.glGetIntegerv(GL.GL_IMPLEMENTATION_COLOR_READ_TYPE)).reshape(-1)[0]))  # fmt: skip
            if (fmt, typ) != impl:
                raise DriverRefused(f"{what}.Format", f"format 0x{fmt:04x} type 0x{typ:04x}: "
                                    "not a GLES 3 read pair for this surface")  # fmt: skip
        if not bpp:
            raise DriverRefused(f"{what}.Format", f"format 0x{fmt:04x} type 0x{typ:04x}")
        return bpp

    def _extensions(self) -> set[str]:
        ext = getattr(self, "_ext_set", None)
        if ext is None:
            from .gl import gl_string

            ext = self._ext_set = set(gl_string(self.gl, GL.GL_EXTENSIONS).split())  # type: ignore[attr-defined]
        return ext

    def _neutral_pack(self) -> None:
        if self._pack_alignment != 1:  # type: ignore[has-type]
            self.gl.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)  # type: ignore[attr-defined]
            self._pack_alignment = 1

    def _read_tight(self, x: int, y: int, w: int, h: int, fmt: int, typ: int, bpp: int) -> bytes:
        """Tight rows of ``(x, y, w, h)``; only the part a framebuffer can have is read (GL
        leaves the rest undefined; Mesa crashed in glReadPixels at y = 2^31 - 1)."""
        self._neutral_pack()
        lim = self.limits  # type: ignore[attr-defined]
        top = max(lim.max_texture_size, lim.max_renderbuffer_size)
        out = bytearray(w * h * bpp)
        read_rect(self.gl, memoryview(out), x, y, w, h, fmt, typ, bpp, 1, (top, top))
        return bytes(out)

    def ReadPixels(self, ctx: Any, d: Any) -> Reply:
        """The bound read surface's ``Box``, tight (see the module)."""
        self._ready()  # type: ignore[attr-defined]
        p = d.payload
        fmt, typ = int(p.Format), int(p.Type)
        bpp = self._readable(fmt, typ, d.name)
        b = p.Box
        w, h = int(b.W), int(b.H)
        if int(p.DstSize) != w * h * bpp:
            raise DriverRefused(f"{d.name}.DstSize", f"{int(p.DstSize)} bytes for a tight "
                                f"{w}x{h} of {bpp}")  # fmt: skip
        if w * h * bpp > getattr(ctx, "reply_capacity", w * h * bpp):
            raise DriverRefused(f"{d.name}.Box", f"{w}x{h} of {bpp} bytes is more than the "
                                f"{ctx.reply_capacity}-byte answer")  # fmt: skip
        self._bind_read(ctx, d.name)
        data = self._read_tight(int(b.X), int(b.Y), w, h, fmt, typ, bpp)
        self._restore_fb()
        self._gl_errors(ctx)
        return Reply.ok(data)

    def _scratch_fb(self) -> int:
        fb = getattr(self, "_scratch", 0)
        if not fb:
            ids = (ctypes.c_uint * 1)()
            self.gl.glGenFramebuffers(1, ids)  # type: ignore[attr-defined]
            fb = self._scratch = int(ids[0])
        return fb

    def _attach_read(self, tex: GlTexture, level: int, layer: int, target: int, what: str) -> None:
        """Bind the scratch framebuffer for reading with ``tex``'s level / layer / face."""
        gl = self.gl  # type: ignore[attr-defined]
        gl.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._scratch_fb())
        fmt = int(getattr(tex, "internal_format", 0))
        point = (GL.GL_DEPTH_STENCIL_ATTACHMENT if fmt == int(GL.GL_DEPTH24_STENCIL8) else
                 GL.GL_DEPTH_ATTACHMENT if fmt in (int(GL.GL_DEPTH_COMPONENT16), int(GL.GL_DEPTH_COMPONENT24),
                                                   int(GL.GL_DEPTH_COMPONENT32F)) else GL.GL_COLOR_ATTACHMENT0)  # fmt: skip
        if int(tex.target) in (int(GL.GL_TEXTURE_2D_ARRAY), int(GL.GL_TEXTURE_3D)):
            gl.glFramebufferTextureLayer(GL.GL_READ_FRAMEBUFFER, point, tex.name, level, layer)
        else:
            face = target if target else int(tex.target)
            gl.glFramebufferTexture2D(GL.GL_READ_FRAMEBUFFER, point, face, tex.name, level)
        if point == GL.GL_COLOR_ATTACHMENT0:
            gl.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
        st = int(gl.glCheckFramebufferStatus(GL.GL_READ_FRAMEBUFFER))
        if st != GL.GL_FRAMEBUFFER_COMPLETE:
            self._restore_fb()
            raise DriverRefused(f"{what}.Res", f"level {level} is not readable "
                                f"(framebuffer status 0x{st:04x})")  # fmt: skip

    def _restore_fb(self) -> None:
        bound = self.fbs.bound if self.fbs.bound >= 0 else 0  # type: ignore[attr-defined]
        self.gl.glBindFramebuffer(GL.GL_FRAMEBUFFER, bound)  # type: ignore[attr-defined]

    def _texture(self, ctx: Any, key: str, what: str) -> GlTexture:
        tex = getattr(ctx.resolved.get(key), "backend", None)
        if not isinstance(tex, GlTexture) or not tex.levels:
            raise DriverRefused(f"{what}.{key}", "not a texture with storage")
        return tex

    def GetTextureImage(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        p = d.payload
        tex = self._texture(ctx, "Res", d.name)
        fmt, typ = int(p.Format), int(p.Type)
        bpp = self._readable(fmt, typ, d.name)
        b = p.Box
        w, h, depth = int(b.W), int(b.H), max(int(b.D), 1)
        parts = []
        for layer in range(int(b.Z), int(b.Z) + depth):
            self._attach_read(tex, int(p.Level), layer, int(p.Target), d.name)
            parts.append(self._read_tight(int(b.X), int(b.Y), w, h, fmt, typ, bpp))
        self._restore_fb()
        self._gl_errors(ctx)
        return Reply.ok(b"".join(parts))

    def _buffer(self, ctx: Any, key: str, what: str) -> GlBuffer:
        buf = getattr(ctx.resolved.get(key), "backend", None)
        if not isinstance(buf, GlBuffer):
            raise DriverRefused(f"{what}.{key}", "not a buffer")
        return buf

    def _map_read(self, buf: GlBuffer, offset: int, size: int) -> bytes:
        gl = self.gl  # type: ignore[attr-defined]
        gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, buf.name)
        ptr = gl.glMapBufferRange(GL.GL_COPY_READ_BUFFER, offset, size, GL.GL_MAP_READ_BIT)
        addr = ptr if isinstance(ptr, int) else getattr(ptr, "value", None)
        if not addr:
            gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, 0)
            raise DriverRefused("ResourceReadback.Map", "glMapBufferRange returned no pointer")
        data = ctypes.string_at(addr, size)
        gl.glUnmapBuffer(GL.GL_COPY_READ_BUFFER)
        gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, 0)
        return data

    def _gpu_wrote(self, buf: GlBuffer, offset: int, size: int) -> None:
        """The GPU wrote ``buf``: the server mirror (index-range checks) is re-read."""
        if size and len(buf.mirror) >= offset + size:
            buf.mirror[offset : offset + size] = self._map_read(buf, offset, size)
        buf.serial += 1

    def ResourceReadback(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        p = d.payload
        buf = self._buffer(ctx, "Res", d.name)
        off, size = int(p.Offset), int(p.Size)
        if off + size > buf.size:
            ctx.events.gl_error(GL_INVALID_VALUE)
            return Reply.declined("range outside the buffer")
        return Reply.ok(self._map_read(buf, off, size) if size else b"")

    def _pack_into(self, ctx: Any, d: Any, read: Any) -> None:
        """A readback into the PACK buffer ``Dst`` at ``DstBase`` / ``RowStride``."""
        p = d.payload
        src = p.Src
        fmt, typ = int(src.Format), int(src.Type)
        bpp = self._readable(fmt, typ, d.name)
        buf = self._buffer(ctx, "Dst", d.name)
        if int(p.SwapGroup):
            raise DriverRefused(f"{d.name}.SwapGroup", "GLES has no PACK_SWAP_BYTES")
        w, h = int(src.Box.W), int(src.Box.H)
        stride, base = int(p.RowStride), int(p.DstBase)
        if stride % bpp or stride < w * bpp:
            raise DriverRefused(f"{d.name}.RowStride", f"{stride} for rows of {w} x {bpp} bytes")
        end = base + stride * (h - 1) + w * bpp if h else base
        if end > buf.size:
            ctx.events.gl_error(GL_INVALID_OPERATION)
            return
        gl = self.gl  # type: ignore[attr-defined]
        self._neutral_pack()
        gl.glPixelStorei(GL.GL_PACK_ROW_LENGTH, stride // bpp)
        gl.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, buf.name)
        read(w, h, fmt, typ, ctypes.c_void_p(base))
        gl.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, 0)
        gl.glPixelStorei(GL.GL_PACK_ROW_LENGTH, 0)
        self._gl_errors(ctx)
        self._gpu_wrote(buf, base, end - base)
        dst = d.payload.Dst
        ctx.events.gpu_written((dst.slot, dst.gen), [(base, end - base)])  # OnGpuWritten
        ctx.events.readback_done(ctx.seq)

    def ReadPixelsToBuffer(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        b = d.payload.Src.Box
        self._pack_into(ctx, d, lambda w, h, f, t, ptr: self.gl.glReadPixels(  # type: ignore[attr-defined]
            int(b.X), int(b.Y), w, h, f, t, ptr))  # fmt: skip

    def GetTextureImageToBuffer(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        src = d.payload.Src
        tex = self._texture(ctx, "Src.Res", d.name)
        if max(int(src.Box.D), 1) != 1:
            raise DriverRefused(f"{d.name}.Box", "one layer per pack-buffer readback")

        def read(w: int, h: int, f: int, t: int, ptr: Any) -> None:
            self._attach_read(tex, int(src.Level), int(src.Box.Z), int(src.Target), d.name)
            self.gl.glReadPixels(int(src.Box.X), int(src.Box.Y), w, h, f, t, ptr)  # type: ignore[attr-defined]
            self._restore_fb()

        self._pack_into(ctx, d, read)

    # -- copies --------------------------------------------------------------------------
    def ResourceCopyRegion(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        p = d.payload
        gl = self.gl  # type: ignore[attr-defined]
        src, dst = ctx.resolved["Src"].backend, ctx.resolved["Dst"].backend
        box = p.SrcBox
        if isinstance(src, GlBuffer) and isinstance(dst, GlBuffer):
            so, do, n = int(box.X), int(p.DstX), int(box.W)
            if so < 0 or do < 0 or so + n > src.size or do + n > dst.size or (
                    src is dst and so < do + n and do < so + n):  # fmt: skip
                ctx.events.gl_error(GL_INVALID_VALUE)
                return
            gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, src.name)
            gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, dst.name)
            gl.glCopyBufferSubData(GL.GL_COPY_READ_BUFFER, GL.GL_COPY_WRITE_BUFFER, so, do, n)
            gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, 0)
            gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, 0)
            self._gl_errors(ctx)
            if len(dst.mirror) >= do + n and len(src.mirror) >= so + n:
                dst.mirror[do : do + n] = src.mirror[so : so + n]
            dst.serial += 1
            return
        if not (isinstance(src, GlTexture) and isinstance(dst, GlTexture)):
            raise DriverRefused(f"{d.name}.Src", "a copy between two buffers or two textures")
        w, h, depth = int(box.W), int(box.H), max(int(box.D), 1)
        if has_entry("glCopyImageSubData"):
            gl.glCopyImageSubData(src.name, src.target, int(p.SrcLevel), int(box.X), int(box.Y),
                                  int(box.Z), dst.name, dst.target, int(p.DstLevel), int(p.DstX),
                                  int(p.DstY), int(p.DstZ), w, h, depth)  # fmt: skip
        else:
            restore = self._unscissored()
            for i in range(depth):
                self._attach_read(src, int(p.SrcLevel), int(box.Z) + i, 0, d.name)
                gl.glBindTexture(dst.target, dst.name)
                if int(dst.target) in (int(GL.GL_TEXTURE_2D_ARRAY), int(GL.GL_TEXTURE_3D)):
                    gl.glCopyTexSubImage3D(dst.target, int(p.DstLevel), int(p.DstX), int(p.DstY),
                                           int(p.DstZ) + i, int(box.X), int(box.Y), w, h)  # fmt: skip
                else:
                    gl.glCopyTexSubImage2D(dst.target, int(p.DstLevel), int(p.DstX), int(p.DstY),
                                           int(box.X), int(box.Y), w, h)  # fmt: skip
            self._restore_fb()
            self.binder.disturbed()  # type: ignore[attr-defined]
        self._gl_errors(ctx)

    def _unscissored(self) -> Any:
        """GL's copies ignore the scissor; the driver's copy path may not: off around it."""
        gl = self.gl  # type: ignore[attr-defined]
        on = bool(gl.glIsEnabled(GL.GL_SCISSOR_TEST))
        if on:
            gl.glDisable(GL.GL_SCISSOR_TEST)
        return lambda: gl.glEnable(GL.GL_SCISSOR_TEST) if on else None

    def _bind_read(self, ctx: Any, what: str) -> None:
        """``GL_READ_FRAMEBUFFER`` = the server's read framebuffer binding."""
        from ...server.handle_fields import table_of
        from .framebuffer import GlFramebuffer

        h = ctx.read_framebuffer
        if h == ctx.default_framebuffer.handle:
            fb = self.fbs.default  # type: ignore[attr-defined]
        else:
            fb = getattr(ctx.tables[table_of("Framebuffer")].resolve(h, f"{what}.ReadFbo"),
                         "backend", None)  # fmt: skip
        if not isinstance(fb, GlFramebuffer):
            raise DriverRefused(f"{what}.ReadFbo", "no framebuffer made for it yet")
        self.gl.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, fb.name)  # type: ignore[attr-defined]

    def CopyFramebufferToTexture(self, ctx: Any, d: Any) -> None:
        """``glCopyTex(Sub)Image2D`` from the read framebuffer binding (scissor off)."""
        self._ready()  # type: ignore[attr-defined]
        self._bind_read(ctx, d.name)
        restore = self._unscissored()
        p = d.payload
        tex = self._texture(ctx, "Dst", d.name)
        gl = self.gl  # type: ignore[attr-defined]
        target = int(p.Target) or int(tex.target)
        gl.glBindTexture(tex.target, tex.name)
        if int(p.SubImage):
            gl.glCopyTexSubImage2D(target, int(p.Level), int(p.XOffset), int(p.YOffset),
                                   int(p.X), int(p.Y), int(p.Width), int(p.Height))  # fmt: skip
        else:
            restore()
            raise DriverRefused(f"{d.name}.SubImage", "glCopyTexImage2D respecifies storage the "
                                "client's ResourceRespecify owns: send SubImage = 1")  # fmt: skip
        restore()
        self._restore_fb()
        self.binder.disturbed()  # type: ignore[attr-defined]
        self._gl_errors(ctx)

    # -- fences --------------------------------------------------------------------------
    def _fences(self) -> dict[int, Any]:
        live = getattr(self, "_live_fences", None)
        if live is None:
            live = self._live_fences = {}
            self._live_queries: dict[int, Any] = {}
            self._last_tick = time.monotonic()
            self._tick_seq = 0
            self._tick_fence: tuple[Any, int] | None = None
            self.retired_seq = 0
        return live

    def FenceCreate(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Handle"]
        obj.backend = self.gl.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0)  # type: ignore[attr-defined]
        obj.data["signalled"] = False
        self._fences()[id(obj)] = (obj, d.payload.Handle)

    def _fence_done(self, obj: Any, timeout_ns: int = 0, flush: bool = False) -> int:
        """0 / 1 / 2 (timeout, satisfied, already) by ``glClientWaitSync``."""
        if obj.data.get("signalled"):
            return 2
        r = int(self.gl.glClientWaitSync(obj.backend, GL_SYNC_FLUSH_COMMANDS_BIT if flush else 0,  # type: ignore[attr-defined]
                                         timeout_ns))  # fmt: skip
        if r == GL_WAIT_FAILED:
            raise DriverRefused("FenceWait.Sync", "glClientWaitSync: GL_WAIT_FAILED")
        res = _WAIT.get(r, 0)
        if res:
            obj.data["signalled"] = True
        return res

    def FenceStatus(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        return Reply.ok(struct.pack("<I", 1 if self._fence_done(ctx.resolved["Handle"],
                                                                0, True) else 0))  # fmt: skip

    def FenceWait(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        t = int(d.payload.TimeoutNs)
        return Reply.ok(struct.pack("<I", self._fence_done(ctx.resolved["Fence"], t, True)))

    def FenceWaitServer(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Fence"]
        self.gl.glWaitSync(obj.backend, 0, GL_TIMEOUT_IGNORED)  # type: ignore[attr-defined]
        self._gl_errors(ctx)

    def FenceDestroy(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Handle"]
        self._fences().pop(id(obj), None)
        if obj.backend is not None:
            self.gl.glDeleteSync(obj.backend)  # type: ignore[attr-defined]
            obj.backend = None

    # -- queries -------------------------------------------------------------------------
    def QueryCreate(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        kind = int(d.payload.Kind)
        if kind == GL_SAMPLES_PASSED:
            raise DriverRefused(f"{d.name}.Kind", "GLES 3 has no GL_SAMPLES_PASSED (any-samples "
                                "queries only)")  # fmt: skip
        if kind in (GL_TIME_ELAPSED, GL_TIMESTAMP) and not self._timer_entries():
            raise DriverRefused(f"{d.name}.Kind", "no GL_EXT_disjoint_timer_query")
        if kind not in (GL_ANY_SAMPLES_PASSED, GL_ANY_SAMPLES_PASSED_CONSERVATIVE,
                        GL_TIME_ELAPSED, GL_TIMESTAMP):  # fmt: skip
            raise DriverRefused(f"{d.name}.Kind", f"query kind 0x{kind:04x}")
        ids = (ctypes.c_uint * 1)()
        ext = kind in (GL_TIME_ELAPSED, GL_TIMESTAMP)
        (self.gl.glGenQueriesEXT if ext else self.gl.glGenQueries)(1, ids)  # type: ignore[attr-defined]
        obj = ctx.resolved["Query"]
        obj.backend = int(ids[0])
        obj.data["kind"] = kind
        self._fences()

    def _qtarget(self, kind: int, what: str) -> tuple[int, bool]:
        if kind == GL_TIME_ELAPSED:
            if self.gpu is not None and self.gpu.available == AVAILABLE:  # type: ignore[attr-defined]
                raise DriverRefused(f"{what}.Kind", "the backend's frame timer holds GLES's one "
                                    "active GL_TIME_ELAPSED query (frames are timed)")  # fmt: skip
            return kind, True
        return kind, False

    def QueryBegin(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Query"]
        kind, ext = self._qtarget(int(obj.data["kind"]), d.name)
        obj.data.pop("value", None)
        (self.gl.glBeginQueryEXT if ext else self.gl.glBeginQuery)(kind, obj.backend)  # type: ignore[attr-defined]
        self._gl_errors(ctx)

    def QueryEnd(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Query"]
        kind, ext = self._qtarget(int(obj.data["kind"]), d.name)
        (self.gl.glEndQueryEXT if ext else self.gl.glEndQuery)(kind)  # type: ignore[attr-defined]
        self._gl_errors(ctx)
        self._fences()
        self._live_queries[id(obj)] = (obj, d.payload.Query)

    def QueryCounter(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Query"]
        obj.data.pop("value", None)
        self.gl.glQueryCounterEXT(obj.backend, GL_TIMESTAMP)  # type: ignore[attr-defined]
        self._gl_errors(ctx)
        self._fences()
        self._live_queries[id(obj)] = (obj, d.payload.Query)

    def _query_value(self, obj: Any, wait: bool) -> int | None:
        if "value" in obj.data:
            return obj.data["value"]
        gl = self.gl  # type: ignore[attr-defined]
        ext = int(obj.data["kind"]) in (GL_TIME_ELAPSED, GL_TIMESTAMP)
        out = (ctypes.c_uint * 1)()
        if not wait:
            (gl.glGetQueryObjectuivEXT if ext else gl.glGetQueryObjectuiv)(
                obj.backend, GL_QUERY_RESULT_AVAILABLE, out)  # fmt: skip
            if not out[0]:
                return None
        if ext:
            out64 = (ctypes.c_uint64 * 1)()
            gl.glGetQueryObjectui64vEXT(obj.backend, GL_QUERY_RESULT, out64)
            value = int(out64[0])
        else:
            gl.glGetQueryObjectuiv(obj.backend, GL_QUERY_RESULT, out)
            value = int(out[0])
        obj.data["value"] = value
        return value

    def QueryAvailable(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        self.gl.glFlush()  # type: ignore[attr-defined]
        return Reply.ok(struct.pack("<I", self._query_value(ctx.resolved["Handle"], False) is not None))

    def QueryResult(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        v = self._query_value(ctx.resolved["Query"], bool(d.payload.Wait))
        return Reply.ok(struct.pack("<IIQ", v is not None, 0, v or 0))

    def QueryTimestamp(self, ctx: Any, d: Any) -> Reply:
        self._ready()  # type: ignore[attr-defined]
        if not self._timer_entries():
            raise DriverRefused(f"{d.name}.Timer", "no GL_EXT_disjoint_timer_query")
        out = (ctypes.c_int64 * 1)()
        self.gl.glGetInteger64vEXT(GL_TIMESTAMP, out)  # type: ignore[attr-defined]
        value = int(out[0]) & (2**64 - 1)
        if not value:  # no GPU clock reads 0: NVIDIA's GLES 3.2 answers GetInteger64v so
            value = self._counter_now()  # a counter query, waited, is the GPU time instead
            self.timestamp_counter_reads = getattr(self, "timestamp_counter_reads", 0) + 1
        return Reply.ok(struct.pack("<Q", value))

    def _counter_now(self) -> int:
        """The GPU time once every earlier command has run (``glQueryCounterEXT``, waited):
        later than GL_TIMESTAMP's "commands reached the GL" time, never earlier."""
        gl = self.gl  # type: ignore[attr-defined]
        ids = (ctypes.c_uint * 1)()
        gl.glGenQueriesEXT(1, ids)
        try:
            gl.glQueryCounterEXT(ids[0], GL_TIMESTAMP)
            out = (ctypes.c_uint64 * 1)()
            gl.glGetQueryObjectui64vEXT(ids[0], GL_QUERY_RESULT, out)
            value = int(out[0])
        finally:
            gl.glDeleteQueriesEXT(1, ids)
        if not value:
            raise DriverRefused("QueryTimestamp.Timer", "the driver reads 0 for GL_TIMESTAMP "
                                "and for a timestamp counter")  # fmt: skip
        return value

    def QueryDestroy(self, ctx: Any, d: Any) -> None:
        self._ready()  # type: ignore[attr-defined]
        obj = ctx.resolved["Handle"]
        self._fences()
        self._live_queries.pop(id(obj), None)
        ids = (ctypes.c_uint * 1)(int(obj.backend))
        ext = int(obj.data.get("kind", 0)) in (GL_TIME_ELAPSED, GL_TIMESTAMP)
        (self.gl.glDeleteQueriesEXT if ext else self.gl.glDeleteQueries)(1, ids)  # type: ignore[attr-defined]
        obj.backend = None

    # -- tick (every 64 records, at Present) ---------------------------------------------
    def tick(self, ctx: Any, present: bool = False) -> None:
        """Retire what finished (per fence / per query) and say so; the non-present fence
        tick. Its own GL calls go through a counter of their own (pipe machinery, like the
        frame timer's: the backend's ``gl_calls`` stay the frame's)."""
        if self.egl is None:  # type: ignore[attr-defined]
            return
        live = self._fences()
        gl = self._tick_gl
        if live or self._live_queries:
            gl.glFlush()
        for key, (obj, h) in list(live.items()):
            if obj.backend is not None and not obj.data.get("signalled") and self._fence_done(obj):
                ctx.events.fence_signalled((h.slot, h.gen))
            if obj.data.get("signalled"):
                live.pop(key)
        for key, (obj, h) in list(self._live_queries.items()):
            v = self._query_value(obj, False) if obj.backend is not None else None
            if v is not None:
                ctx.events.query_result((h.slot, h.gen), v)
                self._live_queries.pop(key)
        now = time.monotonic()
        tf = self._tick_fence
        if tf is not None and int(gl.glClientWaitSync(tf[0], 0, 0)) in (
                GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED):  # fmt: skip
            self.retired_seq = tf[1]  # every record up to it has retired on the GPU
            gl.glDeleteSync(tf[0])
            self._tick_fence = tf = None
        if present:  # a Present is the frame's own retirement point: the clock restarts
            self._last_tick, self._tick_seq = now, ctx.seq
            return
        if tf is None and (now - self._last_tick > TICK_S or ctx.seq - self._tick_seq >= TICK_RECORDS):
            self._tick_fence = (gl.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0), ctx.seq)
            self._last_tick, self._tick_seq = now, ctx.seq

    @property
    def _tick_gl(self) -> Any:
        gl = getattr(self, "_tick_counted", None)
        if gl is None:
            from .gl import CountedGL

            gl = self._tick_counted = CountedGL()
        return gl

    # -- persistent maps (tier T2) -------------------------------------------------------
    def MapPersistent(self, ctx: Any, d: Any) -> Reply:
        return Reply.declined("tier T2: the client pushes the mapped bytes")

    def ResourceFlushRange(self, ctx: Any, d: Any) -> None:
        """Under tier T2 the flushed bytes arrived as ResourceSubData before this record;
        the entry checks the range (GL_INVALID_VALUE past the buffer, as GL)."""
        self._ready()  # type: ignore[attr-defined]
        buf = self._buffer(ctx, "Res", d.name)
        p = d.payload
        if int(p.Offset) + int(p.Size) > buf.size:
            ctx.events.gl_error(GL_INVALID_VALUE)
