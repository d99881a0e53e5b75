"""The ``vulkan`` backend table: one entry per catalogue call the backend implements.

Every entry takes the server context and the decoded record; the applier has already
resolved handles, kept the bindings and windows and scattered the render-state chunks
into the working block. State calls therefore only touch what Vulkan needs at once
(render targets on ``SetFramebufferState``, pipelines retired on ``DeleteRenderState`` /
``DeleteShaderState``); the verbs (``DrawVbo``, ``Clear``, ``ReadPixels``, ``Present``)
read the pushed state and drive :class:`~.renderer.VulkanRenderer`.

Options (constructor, else environment): ``device`` (``MGPIPE_VK_DEVICE``),
``validation`` (``MGPIPE_VK_VALIDATION``), ``width`` / ``height`` of the default
framebuffer.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any

import numpy as np

from ...schema import layouts
from ...schema import tables as _t
from ...server.handle_fields import table_of
from ...wire.handle import Handle
from .counters import Counters
from .errors import VulkanRefused
from .pipelines import VertexLayout
from .renderer import DrawCall, VulkanRenderer
from .resources import VkBufferResource, VkTextureResource
from .shaders import ShaderProgram
from .targets import RenderTarget
from .vk_enums import GL, UnsupportedEnum, topology, vertex_format

__all__ = ["VulkanBackend"]

_TYPE_SIZE = {GL.FLOAT: 4, GL.UNSIGNED_BYTE: 1, GL.BYTE: 1, GL.SHORT: 2, GL.UNSIGNED_SHORT: 2,
              GL.INT: 4, GL.UNSIGNED_INT: 4, GL.HALF_FLOAT: 2}  # fmt: skip
_STATE_ONLY = (
    "BindRenderState", "SetDynamicState", "CreateRenderState", "BindVertexElements",
    "DeleteVertexElements", "SetIndexBuffer", "SetDrawProgram",
    "BindShaderState", "SetPixelPackState", "SetSamplerViews", "BindSamplerStates",
    "ObjectDeath", "SetContextValues", "SetTextureParams",
    "SetPatchState",
)  # fmt: skip


def _obj(ctx: Any, kind: str, h: Handle, what: str) -> Any:
    """The live server object a handle names."""
    return ctx.tables[table_of(kind)].resolve(h, what)


def _floats(bits: tuple[int, ...]) -> tuple[float, ...]:
    """u32 words that carry float bits -> the floats."""
    return struct.unpack(f"<{len(bits)}f", struct.pack(f"<{len(bits)}I", *bits))


class VulkanBackend:
    """The backend object the applier builds its table from (see the module)."""

    def __init__(self, *, width: int = 640, height: int = 480, device: str | int | None = None,
                 validation: str | bool | None = None) -> None:  # fmt: skip
        self.r = VulkanRenderer(width, height, device=device, validation=validation)
        self.counters = Counters(self.r)
        self._targets: dict[Any, tuple[int, RenderTarget]] = {}
        self._target_ids = 0
        self._vbufs: list[tuple[int, VkBufferResource, int]] = []
        self._programs: dict[Handle, ShaderProgram] = {}
        self._live: dict[int, Any] = {}  # id -> every backend object not yet destroyed
        for name in _STATE_ONLY:
            setattr(self, name, _noop)

    @property
    def dev(self) -> Any:
        return self.r.dev

    # -- resources ---------------------------------------------------------------
    def ResourceCreate(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Resource"]
        if obj.kind == "Buffer":
            obj.backend = self._keep(VkBufferResource(self.dev, self.r.ring.defer))
        else:
            obj.backend = self._keep(
                VkTextureResource(self.dev, self.r.ring.defer, self.r.depth_format)
            )

    def _keep(self, thing: Any) -> Any:
        self._live[id(thing)] = thing
        return thing

    def _drop(self, thing: Any) -> None:
        self._live.pop(id(thing), None)

    def ResourceRespecify(self, ctx: Any, d: Any) -> None:
        obj, p = ctx.resolved["Resource"], d.payload
        if obj.backend is None:
            self.ResourceCreate(ctx, d)
        if isinstance(obj.backend, VkBufferResource):
            obj.backend.respecify(p.Width)
        else:  # attached targets read the new image through the resource
            obj.backend.respecify(p.InternalFormat, p.Width, p.Height, p.Levels,
                                  whole=not p.HasRespecifiedLevel)  # fmt: skip

    def _forget_targets_of(self, res: Any) -> None:
        for key in [k for k, (_, t) in self._targets.items() if t.uses(res)]:
            self.r.forget_target(self._targets.pop(key)[1])

    def ResourceSubData(self, ctx: Any, d: Any) -> None:
        res, p = ctx.resolved["Res"].backend, d.payload
        blob = d.blob or b""
        if isinstance(res, VkBufferResource):
            res.write(p.UnionBox.X, blob[: p.UnionBox.W], self.r.ring.completed)
            return
        regions = []
        for row in d.tails[0] if d.tails else ():
            w, h, off, stride = row.W, row.H, row.SrcOffset, row.SrcRowStride
            rows = b"".join(blob[off + i * stride : off + i * stride + w * 4] for i in range(h))
            regions.append((row.X, row.Y, w, h, rows))
        if regions:
            cmd = self.r.cmd_outside_pass()
            res.record_upload(cmd, p.Level, regions, self.r.ring.serial)

    def ResourceDestroy(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        if obj.backend is not None:
            self._forget_targets_of(obj.backend)
            obj.backend.destroy()
            self._drop(obj.backend)
            obj.backend = None

    # -- shader and render-state CSOs --------------------------------------------
    def CreateShaderState(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Cso"]
        blobs = obj.data.get("blobs") or {}
        mask = d.payload.StageMask
        spirv = {i: bytes(blobs.get(f"Spirv[{i}]", b"")) for i in range(len(d.payload.Spirv))}
        spirv = {i: b for i, b in spirv.items() if mask >> i & 1 and b}
        program = ShaderProgram(self.dev, spirv, bytes(blobs.get("Reflection", b"")))
        old = self._programs.get(obj.handle)
        if old is not None:  # a re-issued create on a live handle replaces the program
            self._retire_program(obj.handle, old)
        self._programs[obj.handle] = obj.backend = self._keep(program)

    def _retire_program(self, handle: Handle, program: ShaderProgram) -> None:
        self.r.memo.retire(handle)
        self._programs.pop(handle, None)
        self._drop(program)
        self.r.ring.defer(program.destroy)

    def DeleteShaderState(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        self.r.memo.retire(obj.handle)
        if obj.backend is not None:
            self._retire_program(obj.handle, obj.backend)

    def DeleteRenderState(self, ctx: Any, d: Any) -> None:
        self.r.memo.retire(ctx.resolved["Handle"].handle)

    def CreateVertexElements(self, ctx: Any, d: Any) -> None:
        obj, p = ctx.resolved["Cso"], d.payload
        na, nb = p.AttributeCount, p.BindingPointCount
        raw = d.blob or b""
        adt, bdt = layouts.dtype("MGPVertexAttribWire"), layouts.dtype("MGPVertexBindingPointWire")
        attrs = np.frombuffer(raw, adt, count=na)
        binds = np.frombuffer(raw, bdt, count=nb, offset=na * adt.itemsize)
        vattrs, strides = [], {}
        for loc, a in enumerate(attrs):
            if not int(a["Enabled"]):
                continue
            gl_type, size, b = int(a["Type"]), int(a["Size"]), int(a["BindingIndex"])
            vattrs.append((loc, b, vertex_format(gl_type, size, bool(a["Normalized"])),
                           int(a["Offset"])))  # fmt: skip
            strides.setdefault(b, size * _TYPE_SIZE[gl_type])  # GL stride 0: tightly packed
        vbinds = tuple((b, int(binds[b]["Stride"]) or tight, int(binds[b]["Divisor"]) > 0)
                       for b, tight in sorted(strides.items()))  # fmt: skip
        obj.backend = VertexLayout(vbinds, tuple(vattrs))

    # -- framebuffers --------------------------------------------------------------
    def SetFramebufferState(self, ctx: Any, d: Any) -> None:
        p = d.payload
        if p.IsDefault:
            self.r.resize_default(p.Width, p.Height)
            self.r.set_target(self.r.default, 0)
            return
        key = (p.Fbo, p.ContentHash)
        entry = self._targets.get(key)
        if entry is None:
            none = _surface_none()
            colors, read, draw = [], 0, {}
            for i, s in enumerate(p.Color):
                if s.Kind != none and p.DrawBuffers[i] >= 0:
                    res = _obj(ctx, "Texture", s.Res, f"SetFramebufferState.Color[{i}]")
                    if p.ReadSurface.Kind != none and res.handle == p.ReadSurface.Res:
                        read = len(colors)
                    draw[i] = len(colors)
                    colors.append(res.backend)
            depth = None
            for name in ("Depth", "Stencil"):  # one packed depth-stencil image serves both
                surface = getattr(p, name)
                if depth is None and surface.Kind != none:
                    depth = _obj(ctx, "Texture", surface.Res, f"SetFramebufferState.{name}").backend
            target = RenderTarget(self.dev, p.Width, p.Height, colors, depth, [], self.r.ring.defer)
            target.read_index, target.draw_index = read, draw
            self._target_ids += 1
            entry = self._targets[key] = (self._target_ids, target)
        self.r.set_target(entry[1], entry[0])

    # -- verbs ----------------------------------------------------------------------
    def DrawVbo(self, ctx: Any, d: Any) -> None:
        p = d.payload
        shader_h = ctx.draw_program
        shader = _obj(ctx, "ShaderCso", shader_h, "DrawVbo.Program").backend
        vertex = _obj(ctx, "VertexElementsCso", ctx.vertex_elements, "DrawVbo.VertexElements").backend
        serial = self.r.ring.serial
        buffers = [(i, res.use(serial), off) for i, res, off in self._vbufs]
        index = None
        size = p.IndexSize
        if size:
            ib = _obj(ctx, "Buffer", p.IndexResource, "DrawVbo.IndexResource").backend
            index = (ib.use(serial), size)
        block = ctx.render_state.view()
        restart = bool(size) and bool(p.Flags & _draw_flag("kDrawPrimitiveRestart"))
        if p.Flags & _draw_flag("kDrawIsIndirect"):  # MGPDrawIndirect rows, no MGPDrawRange
            raise VulkanRefused("DrawVbo.Flags", f"{p.Flags:#x}: indirect draws are not implemented")
        ranges = [(r.Start, r.Count, r.IndexBias) for r in d.tails[0]]  # the first present tail
        dc = DrawCall(ctx.render_state_cso, shader_h, shader, vertex, buffers, index,
                      topology(p.Mode), restart, ranges, max(p.InstanceCount, 1))  # fmt: skip
        self.r.draw(dc, block, ctx.render_state.version)

    def SetVertexBuffers(self, ctx: Any, d: Any) -> None:
        """Resolve the whole window once per change (a draw only reads the list)."""
        out = []
        for i, row in enumerate(ctx.windows["SetVertexBuffers"]):
            if not row.Res.is_null:
                res = _obj(ctx, "Buffer", row.Res, f"SetVertexBuffers.MGPVertexBuffer[{i}]")
                out.append((i, res.backend, row.Offset))
        self._vbufs = out

    def ApplierReset(self, ctx: Any, d: Any) -> None:
        """Bindings and windows are back to nothing bound (the applier reset them)."""
        self._vbufs = []
        self.SetVertexAttribDefaults(ctx, d)
        self.r.set_target(self.r.default, 0)

    def SetVertexAttribDefaults(self, ctx: Any, d: Any) -> None:
        window = ctx.windows["SetVertexAttribDefaults"]
        views = _attrib_views()
        values = []
        for row in window:
            if not (row.Location or row.ValueClass or any(row.FloatView) or any(row.IntView)
                    or any(row.UintView)):  # fmt: skip  # never written: GL's (0, 0, 0, 1)
                values.append((0.0, 0.0, 0.0, 1.0))
                continue
            view = views.get(int(row.ValueClass))
            if view is None:
                raise VulkanRefused("SetVertexAttribDefaults.MGPAttribValue.ValueClass",
                                    f"{int(row.ValueClass)} is no value class")  # fmt: skip
            values.append(_floats(getattr(row, view)))  # the value's bits, as the old Bits
        self.r.set_attrib_defaults(values)

    def Clear(self, ctx: Any, d: Any) -> None:
        """``glClear`` (``kMGPipeClearKindWhole``: ``BufferMask`` names the buffers) and the
        ``glClearBuffer`` forms (``Color``: one draw buffer, float values; ``Depth``,
        ``Stencil``, ``DepthStencil``); the values travel in the record."""
        p = d.payload
        kind = int(p.Kind)
        kinds = _clear_kinds()
        only = None
        if kind in (kinds["Whole"], kinds["Color"]):
            if p.ValueClass != _t.constant("kMGPipeClearValueClassFloat"):
                raise VulkanRefused("Clear.ValueClass", f"{p.ValueClass}: the colour attachments "
                                    "are normalized or float: they clear to floats")  # fmt: skip
        if kind == kinds["Whole"]:
            mask = int(p.BufferMask)
            color = _floats(p.ColorValue) if mask & GL.COLOR_BUFFER_BIT else None
            depth = p.DepthValue if mask & GL.DEPTH_BUFFER_BIT else None
            stencil = p.StencilValue if mask & GL.STENCIL_BUFFER_BIT else None
        elif kind == kinds["Color"]:
            only = self.r.target.draw_index.get(int(p.DrawBufferIndex))
            if only is None:  # the draw buffer is GL_NONE (or past the last): nothing to clear
                return
            color, depth, stencil = _floats(p.ColorValue), None, None
        elif kind in (kinds["Depth"], kinds["Stencil"], kinds["DepthStencil"]):
            color = None
            depth = p.DepthValue if kind != kinds["Stencil"] else None
            stencil = p.StencilValue if kind != kinds["Depth"] else None
        else:
            raise VulkanRefused("Clear.Kind", f"{kind} is no kMGPipeClearKind")
        self.r.clear(ctx.render_state.view(), color, depth, stencil, only)  # type: ignore[arg-type]

    def ReadPixels(self, ctx: Any, d: Any) -> None:
        """RGBA / UNSIGNED_BYTE rows of ``Box``, GL orientation, into the staged destination
        (``DstOffset`` / ``DstSize`` in the stage segment), with the pushed pack alignment
        (other pack state is refused by name, not ignored)."""
        p = d.payload
        if (p.Format, p.Type) != (GL.RGBA, GL.UNSIGNED_BYTE):
            raise UnsupportedEnum("ReadPixels.Format",
                                  f"format {p.Format:#x} type {p.Type:#x} (RGBA / UNSIGNED_BYTE only)")  # fmt: skip
        align = 4  # GL's initial pack alignment
        pushed = ctx.last.get("SetPixelPackState")
        if pushed is not None:
            pack = pushed.Pack
            if any((pack.RowLength, pack.SkipPixels, pack.SkipRows, pack.SwapBytes, pack.LSBFirst)):
                raise VulkanRefused("ReadPixels.PixelPack", f"pack state {pack} beyond alignment")
            align = pack.Alignment
        if align not in (1, 2, 4, 8):
            raise VulkanRefused("ReadPixels.PixelPack", f"pack alignment {align}")
        box = p.Box
        w, h = box.W, box.H
        row = w * 4
        stride = -(-row // align) * align
        ref = (p.DstOffset, p.DstSize, ctx.stage.seg)  # the stage's own bytes: no Seg travels
        dst = ctx.stage.view(ref, "ReadPixels.Dst", writable=True)
        if h and len(dst) < stride * (h - 1) + row:
            raise VulkanRefused("ReadPixels.Dst", f"{len(dst)} bytes for {w}x{h}, row stride {stride}")
        if not w or not h:
            return
        data = self.r.read_pixels(self.r.target.read_index, box.X, box.Y, w, h)
        for y in range(h):
            dst[y * stride : y * stride + row] = data[y * row : (y + 1) * row]

    def Present(self, ctx: Any, d: Any) -> None:
        self.r.present()

    def Flush(self, ctx: Any, d: Any) -> None:
        """``glFlush``: what was recorded goes to the queue; nothing waits."""
        self.r.flush()

    def vulkan_stats(self) -> dict[str, Any]:
        """The counters, plus how many validation messages are waiting (not consumed)."""
        return dict(self.counters.snapshot(), validation_messages=len(self.dev.messages))

    def stats(self) -> dict[str, int | float | str]:
        """Flat counters (docs/BACKENDS.md §6): pipelines, ``vkCmdSet*`` (total and
        ``cmd_set_<name>``), tail gate hits, passes, draws, frames, per-frame CPU, GPU time
        (``gpu_time`` availability, ``gpu_frames``, ``gpu_ns_total``)."""
        return self.counters.flat(len(self.dev.messages))

    def gpu_stats(self) -> dict[str, Any]:
        """``gpu_time`` (``"available"`` or ``"gpu time not available: <reason>"``) and
        ``gpu_ns_per_frame`` (presented frames whose submissions have retired, in order)."""
        snap = self.counters.snapshot()
        return {"gpu_time": snap["gpu_time"], "gpu_ns_per_frame": snap["gpu_ns_per_frame"]}

    def info(self) -> dict[str, Any]:
        """Which device ran, and whether the validation layer watched it."""
        return {"vulkan_device": self.dev.name, "vulkan_validation": self.dev.validation}

    def read_default_framebuffer(self) -> tuple[int, int, bytes]:
        """The default framebuffer's colour (width, height, RGBA rows bottom-up), read
        outside the wire and outside the counts (:meth:`~.renderer.VulkanRenderer.read_uncounted`)."""
        d = self.r.default
        return d.width, d.height, self.r.read_uncounted(d)

    # -- lifetime ---------------------------------------------------------------------
    def snapshot(self) -> np.ndarray:
        return self.r.snapshot()

    def close(self) -> None:
        for _, t in self._targets.values():
            self.r.forget_target(t)
        self._targets.clear()
        self.r.finish()
        for thing in list(self._live.values()):  # what the client never deleted
            thing.destroy()
        self._live.clear()
        self.r.close()
        self.r.dev.close()


@lru_cache(maxsize=None)
def _surface_none() -> int:
    """``MGPSurface.Kind`` of an empty attachment point (``kMGPipeSurfaceKindNone``, which
    MobileGL defines as ``MGPipeKind::None``)."""
    return int(_t.enum("MGPipeKind")["None"])


@lru_cache(maxsize=None)
def _clear_kinds() -> dict[str, int]:
    """``kMGPipeClearKind<Name>`` -> value, by name (MGPClear's discriminant constants)."""
    prefix = "kMGPipeClearKind"
    return {k[len(prefix):]: int(v) for k, v in _t.tables().CONSTANTS.items() if k.startswith(prefix)}


@lru_cache(maxsize=None)
def _attrib_views() -> dict[int, str]:
    """``MGPAttribValue.ValueClass`` -> the member holding the value (MobileGL numbers the
    value class as ``kMGPipeClearValueClass*``)."""
    return {_t.constant(f"kMGPipeClearValueClass{c}"): f"{c}View" for c in ("Float", "Int", "Uint")}


@lru_cache(maxsize=None)
def _draw_flag(name: str) -> int:
    return int(_t.enum("MGPDrawFlagBit")[name])


def _noop(ctx: Any, d: Any) -> None:
    return None


