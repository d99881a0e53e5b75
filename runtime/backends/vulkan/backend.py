"""The ``vulkan`` backend table: one entry per catalogue call the backend implements.

Every entry takes the server context and the decoded record; the applier has already
resolved handles, kept the bindings and windows and scattered the render-state chunks
into the working block. State calls therefore only touch what Vulkan needs at once
(render targets on ``SetFramebufferState``, pipelines retired on ``DeleteRenderState`` /
``DeleteShaderState``); the verbs (``DrawVbo``, ``Clear``, ``ReadPixels``, ``Blit``,
``Present``) read the pushed state and drive :class:`~.renderer.VulkanRenderer`.

Shader resources (:mod:`.descriptors`): a program's set layouts come from its reflection
record; every record that moves a binding (``SetSamplerViews``, ``BindSamplerStates``,
``SetShaderBuffers``, ``SetProgramBindings``, ``SetTextureParams``, sampler and sampler-view
CSOs, a respecify) bumps the bindings serial, and a draw rebuilds its program's
descriptor sets only when that serial or the resources' epoch (a buffer renamed, an image
replaced or flipped) moved -- and writes new sets only when the resolved handles differ.
The default block (``SetGlobalConstants``) lives in the uniform ring at a dynamic offset.
A program keeps its recent sets by resolved bindings (:data:`SET_CACHE`): bindings that
alternate between a few values (a texture rebind per draw) reuse their sets, never
allocating or writing one per draw. Compute, storage buffers and images, memory barriers
(:mod:`.compute`) and transform feedback and tessellation (:mod:`.stream_output`) are
mixins of the backend class.
Textures (:mod:`.resources`, :mod:`.formats`): every target and the formats of the
format table with their texel sizes; ``GenerateMipmap`` blits; multisampled
renderbuffers resolve by ``Blit``. What cannot be executed is a named refusal at the
record (:class:`~.errors.VulkanRefused` / ``UnsupportedEnum``), never another picture.

The answers of the reverse channel (docs/REVERSE_CHANNEL.md) are mixins: fences
(:mod:`.fences`, per-submission retirement, the non-present tick), queries
(:mod:`.queries`, VkQueryPools), readbacks / caps / maps (:mod:`.answers` over
:mod:`.readbacks`) and copies (:mod:`.copies`); a GL rule a record breaks is an ordered
``OnGlError`` event (:class:`~.errors.GlError`), never a crash.

Options (constructor, else environment): ``device`` (``MGPIPE_VK_DEVICE``),
``validation`` (``MGPIPE_VK_VALIDATION``), ``width`` / ``height`` of the default
framebuffer.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import numpy as np
import vulkan as vk

from ...schema import layouts
from ...schema import tables as _t
from ...server.handle_fields import table_of
from ...server.program_bindings import program_overrides
from ...wire.handle import Handle
from .compute import ComputeEntries
from .stream_output import GL_PATCHES, StreamOutputEntries
from .counters import Counters
from .answers import AnswerEntries
from .copies import CopyEntries, scissored_blit
from .errors import VulkanRefused
from .fences import FenceEntries
from .queries import QueryEntries
from .pipelines import VertexLayout
from .renderer import DrawCall, VulkanRenderer
from .descriptors import (ATOMIC_BLOCK, DescriptorAllocator, SamplerObject, UniformRing,
                          default_parameters)  # fmt: skip
from .memory import GpuBuffer
from .formats import vk_info
from .indirect import VulkanDrawsMixin
from .renderer import IntColor
from .resources import (
    BUFFER_USAGE,
    EPOCH,
    SamplerView,
    VkBufferResource,
    VkTextureResource,
    tex_default_view,
)
from .shaders import ShaderProgram
from ..limits import clear_depth
from .limits import (VertexRanges, check_binding, check_buffer, check_framebuffer, check_texture,
                     check_sub_data, check_upload, check_vertex_elements, readback_box)
from .targets import GENERAL, RenderTarget, full_barrier, init_general, with_layout
from .vk_enums import GL, UnsupportedEnum, topology, vertex_format

__all__ = ["VulkanBackend", "SET_CACHE"]

#: descriptor sets kept per program, by resolved bindings (least recently drawn with leaves)
SET_CACHE = 16

_PATCH_LIST = vk.VK_PRIMITIVE_TOPOLOGY_PATCH_LIST

_TYPE_SIZE = {GL.FLOAT: 4, GL.UNSIGNED_BYTE: 1, GL.BYTE: 1, GL.SHORT: 2, GL.UNSIGNED_SHORT: 2,
              GL.INT: 4, GL.UNSIGNED_INT: 4, GL.HALF_FLOAT: 2}  # fmt: skip
_STATE_ONLY = (
    "BindRenderState", "SetDynamicState", "CreateRenderState", "BindVertexElements",
    "DeleteVertexElements", "SetIndexBuffer", "SetDrawProgram",
    "BindShaderState", "SetDispatchProgram", "SetPixelPackState", "SetContextValues",
    "SetPatchState",
)  # fmt: skip


def _stencil(value: int) -> int:
    """A clear's stencil value as GL takes it: masked to the buffer's 8 stencil bits (every
    depth-stencil format here has 8), so any 32-bit value, negative included, is one."""
    return int(value) & 0xFF


def _obj(ctx: Any, kind: str, h: Handle, what: str) -> Any:
    """The live server object a handle names."""
    return ctx.tables[table_of(kind)].resolve(h, what)


def _floats(bits: tuple[int, ...]) -> tuple[float, ...]:
    """u32 words that carry float bits -> the floats."""
    return struct.unpack(f"<{len(bits)}f", struct.pack(f"<{len(bits)}I", *bits))


class VulkanBackend(FenceEntries, QueryEntries, AnswerEntries, CopyEntries, ComputeEntries,
                    StreamOutputEntries, VulkanDrawsMixin):
    """The backend object the applier builds its table from (see the module)."""

    def __init__(self, *, width: int = 640, height: int = 480, device: str | int | None = None,
                 validation: str | bool | None = None, dev: Any = None) -> None:  # fmt: skip
        """``dev``: a :class:`~.device.VulkanDevice` to borrow (its instance and device are
        the caller's: :meth:`close` destroys only what this backend made on it)."""
        self._borrowed_dev = dev is not None
        self.r = VulkanRenderer(width, height, dev=dev, device=device, validation=validation)
        self.counters = Counters(self.r)
        self._targets: dict[Any, tuple[int, RenderTarget]] = {}
        self._target_ids = 0
        self._vbufs: list[tuple[int, VkBufferResource, int]] = []
        self._programs: dict[Handle, ShaderProgram] = {}
        self._live: dict[int, Any] = {}  # id -> every backend object not yet destroyed
        self.descriptors = DescriptorAllocator(self.dev, self.r.ring.defer)
        self.uniforms = UniformRing(self.dev, self.r.ring.defer)
        self._default_sampler: SamplerObject | None = None
        self._globals: dict[Handle, tuple[int, bytes]] = {}  # ShaderCso -> (Version, bytes)
        self.widened_index_buffers = 0
        self.blits = 0
        self.line_loops = 0
        self.resolves = 0
        self._fbs: dict[Any, RenderTarget] = {}  # Fbo handle -> its last pushed target
        self._read_target: RenderTarget | None = None  # None: the default framebuffer
        self._bind_serial = 0  # bumped by every record that moves a shader-resource binding
        self._sets: dict[Handle, tuple[Any, ...]] = {}  # program -> (serial, epoch, key, sets)
        self._query_init()
        # program -> its recent sets by resolved key (a binding that alternates between a few
        # values reuses its sets: no allocation, no write), valid for (program, epoch, deaths)
        self._set_cache: dict[Handle, tuple[tuple, OrderedDict]] = {}
        self._deaths = 0  # bumped when an object a set may name is destroyed
        self._ranges = VertexRanges()  # draws fetch inside their buffers (.limits)

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
            check_buffer(self.dev, int(p.Width))
            obj.backend.respecify(p.Width)
        else:  # attached targets read the new image through the resource
            check_texture(self.dev, p, _target_name(p.Target))
            self.forget_storage_views(obj.backend)
            obj.backend.respecify(p.InternalFormat, p.Width, p.Height, p.Levels,
                                  whole=not p.HasRespecifiedLevel, target=_target_name(p.Target),
                                  depth=p.Depth, layers=p.ArrayLayers, samples=p.Samples)  # fmt: skip
            self._bind_serial += 1

    def _forget_targets_of(self, res: Any) -> None:
        for key in [k for k, (_, t) in self._targets.items() if t.uses(res)]:
            self._forget(self._targets.pop(key)[1])

    def _forget(self, target: RenderTarget) -> None:
        if self._read_target is target:
            self._read_target = None
        for fbo in [f for f, t in self._fbs.items() if t is target]:
            del self._fbs[fbo]
        self.r.forget_target(target)

    def ResourceSubData(self, ctx: Any, d: Any) -> None:
        res, p = ctx.resolved["Res"].backend, d.payload
        blob = d.blob or b""
        if isinstance(res, VkBufferResource):
            check_sub_data(res, int(p.UnionBox.X), int(p.UnionBox.W), len(blob))
            self.settle_buffer(res)  # device writes into it (copies, shaders) land first
            res.write(p.UnionBox.X, blob[: p.UnionBox.W], self.r.ring.completed)
            return
        if res.image is None or res.info is None:
            raise VulkanRefused("ResourceSubData.Res", "the texture has no storage (no extent)")
        texel = res.info.texel
        face = int(p.Target) - _CUBE_POSITIVE_X
        layer0 = face if 0 <= face < 6 else 0  # a cube face's upload target names its layer
        rows_in = list(d.tails[0]) if d.tails and len(d.tails[0]) else [None]
        boxes = [(p.UnionBox if row is None else row, row) for row in rows_in]
        # inside the image first: a region's extent bounds the work of gathering its rows
        check_upload(res.image, int(p.Level), [
            (int(b.X), int(b.Y), int(b.Z) + layer0, int(b.W), int(b.H), max(int(b.D), 1))
            for b, _ in boxes])  # fmt: skip
        regions = []
        for b, row in boxes:
            w, h, dd = int(b.W), int(b.H), max(int(b.D), 1)
            off = 0 if row is None else int(row.SrcOffset)
            stride = (w * texel) if row is None or not row.SrcRowStride else int(row.SrcRowStride)
            slab = (
                (stride * h) if row is None or not row.SrcSliceStride else int(row.SrcSliceStride)
            )
            last = off + (dd - 1) * slab + (h - 1) * stride + w * texel  # one past the last byte
            if w and h and (min(off, stride, slab) < 0 or last > len(blob)):
                raise VulkanRefused("ResourceSubData.Blob", f"{len(blob)} bytes for a {w}x{h}x{dd} "
                                    f"{res.info.name} region")  # fmt: skip
            data = b"".join(blob[off + z * slab + i * stride : off + z * slab + i * stride + w * texel]
                            for z in range(dd) for i in range(h))  # fmt: skip
            if len(data) != w * h * dd * texel:
                raise VulkanRefused("ResourceSubData.Blob", f"{len(blob)} bytes for a {w}x{h}x{dd} "
                                    f"{res.info.name} region")  # fmt: skip
            regions.append((int(b.X), int(b.Y), int(b.Z) + layer0, w, h, dd, data))
        if regions and w and h:
            cmd = self.r.cmd_outside_pass()
            res.record_upload(cmd, p.Level, regions, self.r.ring.serial)

    def ResourceDestroy(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        self._bind_serial += 1  # no memoised set may name what dies here
        self._deaths += 1
        if obj.backend is not None:
            self._forget_targets_of(obj.backend)
            self.forget_storage_views(obj.backend)
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
        self._retire_compute(handle)
        self._sets.pop(handle, None)
        self._drop_set_cache(handle)
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
        check_vertex_elements(p, raw, adt.itemsize, bdt.itemsize)
        attrs = np.frombuffer(raw, adt, count=na)
        binds = np.frombuffer(raw, bdt, count=nb, offset=na * adt.itemsize)
        vattrs, strides, align = [], {}, {}
        for loc, a in enumerate(attrs):
            if not int(a["Enabled"]):
                continue
            gl_type, size, b = int(a["Type"]), int(a["Size"]), int(a["BindingIndex"])
            check_binding(loc, b, nb)
            fmt, off = vertex_format(gl_type, size, bool(a["Normalized"])), int(a["Offset"])
            # GL ES (3.0 §2.9) and Vulkan (VUID-vkCmdDraw-None-02721): a datum of N basic
            # machine units sits at a multiple of N (offset, stride and buffer offset)
            unit = _TYPE_SIZE[gl_type]
            stride = int(binds[b]["Stride"])
            lim = self.dev.limits
            if off > int(lim.maxVertexInputAttributeOffset):
                raise VulkanRefused("CreateVertexElements.MGPVertexAttribWire",
                                    f"attribute {loc}: offset {off} is past the device's "
                                    f"{int(lim.maxVertexInputAttributeOffset)}")  # fmt: skip
            if stride > int(lim.maxVertexInputBindingStride):
                raise VulkanRefused("CreateVertexElements.MGPVertexBindingPointWire",
                                    f"binding {b}: stride {stride} is past the device's "
                                    f"{int(lim.maxVertexInputBindingStride)}")  # fmt: skip
            if off % unit or stride % unit:
                raise VulkanRefused("CreateVertexElements.MGPVertexAttribWire",
                                    f"attribute {loc}: offset {off} / stride {stride} is not a "
                                    f"multiple of its {unit}-byte components")  # fmt: skip
            vattrs.append((loc, b, fmt, off))
            strides.setdefault(b, size * unit)  # GL stride 0: tightly packed
            align[b] = max(align.get(b, 1), unit)
        vbinds = tuple((b, int(binds[b]["Stride"]) or tight, int(binds[b]["Divisor"]) > 0)
                       for b, tight in sorted(strides.items()))  # fmt: skip
        obj.backend = VertexLayout(vbinds, tuple(vattrs))
        object.__setattr__(obj.backend, "align", tuple(sorted(align.items())))

    # -- shader resources ------------------------------------------------------------
    def CreateSamplerState(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Cso"]
        raw = bytes(d.blob or b"")
        dt = layouts.dtype("SamplerParameters")
        if len(raw) < dt.itemsize:
            raise VulkanRefused("CreateSamplerState.Parameters",
                                f"{len(raw)} bytes, a SamplerParameters is {dt.itemsize}")  # fmt: skip
        params = np.frombuffer(raw, dt, count=1)[0]
        if obj.backend is not None:
            self._retire(obj.backend)
        obj.backend = self._keep(SamplerObject(self.dev, params))
        self._bind_serial += 1

    def _retire(self, thing: Any) -> None:
        self._deaths += 1  # no cached set may name it
        self._drop(thing)
        self.r.ring.defer(thing.destroy)

    def DeleteSamplerState(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        if obj.backend is not None:
            self._retire(obj.backend)
            obj.backend = None
        self._bind_serial += 1

    def CreateSamplerView(self, ctx: Any, d: Any) -> None:
        obj, p = ctx.resolved["Cso"], d.payload
        if obj.backend is not None:
            self._retire(obj.backend)
        view = SamplerView(self.dev, self.r.ring.defer, _target_name(p.Target),
                           p.MinLevel, p.NumLevels, p.MinLayer, p.NumLayers)  # fmt: skip
        view.texture_handle, view.internal_format = p.Texture, int(p.InternalFormat)
        obj.backend = self._keep(view)
        self._bind_serial += 1

    DeleteSamplerView = DeleteSamplerState

    def SetSamplerViews(self, ctx: Any, d: Any) -> None:
        self._bind_serial += 1

    BindSamplerStates = SetSamplerViews
    SetProgramBindings = SetSamplerViews
    SetStorageBlockBinding = SetSamplerViews  # the server keeps name -> binding point

    def SetTextureParams(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Res"]
        if isinstance(obj.backend, VkTextureResource):
            obj.backend.params = d.payload
        self._bind_serial += 1

    def SetGlobalConstants(self, ctx: Any, d: Any) -> None:
        """The program's default-block bytes for ``(ShaderCso, Version)``: written once into
        the uniform ring; a draw of that version reads them at their dynamic offset."""
        p = d.payload
        self._globals[p.ShaderCso] = (int(p.Version), bytes(d.blob or b""))

    def GenerateMipmap(self, ctx: Any, d: Any) -> None:
        res, p = ctx.resolved["Res"].backend, d.payload
        if not isinstance(res, VkTextureResource):
            raise VulkanRefused("GenerateMipmap.Res", "not a texture")
        cmd = self.r.cmd_outside_pass()
        res.generate_mipmap(cmd, int(p.BaseLevel), int(p.LevelCount))

    def _descriptor_sets(self, ctx: Any, handle: Handle, program: ShaderProgram) -> Any:
        """The program's sets for the bindings now (memoised on the bindings serial and the
        resources' epoch; a changed binding takes new sets) and the default block's offset."""
        res = program.resources
        if not res.bindings:
            return None
        dyn: list[int] = []
        if res.default is not None:
            version, data = self._globals.get(handle, (0, b""))
            need = res.default.size or len(data)
            if len(data) < need:
                data = data + bytes(need - len(data))  # never written: GL's zero values
            chunk, offset = self.uniforms.put((handle, version, len(data)), data)
            dyn.append(offset)
        memo = self._sets.get(handle)
        if (
            memo is not None
            and memo[0] == self._bind_serial
            and memo[1] == _epoch()
            and memo[4] is program
        ):
            return memo[3], dyn
        writes, key, keep = self._resolve(ctx, handle, program)
        if memo is not None and memo[2] == key and memo[4] is program:
            self._sets[handle] = (self._bind_serial, _epoch()) + memo[2:]
            return memo[3], dyn
        cache = self._cached_sets(handle, program)
        hit = cache.get(key)
        if hit is not None:  # these bindings were drawn with lately: their sets still hold
            cache.move_to_end(key)
            self.descriptors.reused += 1
            self._sets[handle] = (self._bind_serial, _epoch(), key, hit[0], program) + hit[1:]
            return hit[0], dyn
        allocated = [self.descriptors.allocate(layout) for layout in program.set_layouts]
        sets = [s for _, s in allocated]
        infos = []
        for b, payload in writes:
            kw: dict[str, Any] = {}
            if b.kind in ("sampler", "image"):
                kw["pImageInfo"] = payload
            else:
                kw["pBufferInfo"] = payload
            infos.append(vk.VkWriteDescriptorSet(dstSet=sets[b.set], dstBinding=b.binding,
                                                 descriptorCount=b.count, descriptorType=b.vk_type,
                                                 **kw))  # fmt: skip
        if infos:
            vk.vkUpdateDescriptorSets(self.dev.device, len(infos), infos, 0, None)
            self.descriptors.updates += 1
        self._sets[handle] = (self._bind_serial, _epoch(), key, sets, program, allocated, keep)
        cache[key] = (sets, allocated, keep)
        if len(cache) > SET_CACHE:  # the least recently drawn with (never the memo's)
            _, (_, old, _) = cache.popitem(last=False)
            for pool, dset in old:
                self.descriptors.free(pool, dset)
        return sets, dyn

    def _cached_sets(self, handle: Handle, program: ShaderProgram) -> OrderedDict:
        valid = (id(program), _epoch(), self._deaths)
        have = self._set_cache.get(handle)
        if have is not None and have[0] == valid:
            return have[1]
        self._drop_set_cache(handle)
        cache: OrderedDict = OrderedDict()
        self._set_cache[handle] = (valid, cache)
        return cache

    def _drop_set_cache(self, handle: Handle) -> None:
        have = self._set_cache.pop(handle, None)
        if have is not None:
            for _, allocated, _ in have[1].values():
                for pool, dset in allocated:
                    self.descriptors.free(pool, dset)

    def _resolve(
        self, ctx: Any, handle: Handle, program: ShaderProgram
    ) -> tuple[list, tuple, list]:
        res = program.resources
        blocks, units = program_overrides(ctx, handle, "DrawVbo.Program")
        cso = ctx.tables[table_of("ShaderCso")].resolve(handle, "DrawVbo.Program")
        storage = cso.data.get("storage_blocks", {})  # SetStorageBlockBinding: name -> point
        views, states = ctx.windows["SetSamplerViews"], ctx.windows["BindSamplerStates"]
        cls = {
            "uniform": _t.constant("kMGPipeShaderBufferClassUniform"),
            "storage": _t.constant("kMGPipeShaderBufferClassShaderStorage"),
            "atomic": _t.constant("kMGPipeShaderBufferClassAtomicCounter"),
        }
        writes, key, keep = [], [], []
        pending_orient = []
        for b in res.bindings:
            if b.kind == "default":
                chunk = self.uniforms.chunk
                info = [
                    vk.VkDescriptorBufferInfo(buffer=chunk.buffer, offset=0, range=max(b.size, 16))
                ]
                writes.append((b, info))
                key.append(("d", chunk.buffer))
                continue
            if b.kind == "image":
                writes.append((b, self.storage_image_infos(ctx, b, key, pending_orient)))
                continue
            if b.kind in ("uniform", "storage", "atomic"):
                point = (blocks.get(b.index, b.binding) if b.kind == "uniform"
                         else int(b.name[len(ATOMIC_BLOCK):]) if b.kind == "atomic"
                         else storage.get(b.name, b.binding))  # fmt: skip
                window = ctx.windows[f"SetShaderBuffers[{cls[b.kind]}]"]
                row = window[point] if point < len(window) else None
                where = f"{ctx.call}.{b.kind} block {b.name!r} (binding point {point})"
                if row is None or row.Res.is_null:
                    raise VulkanRefused(where, "no buffer is bound there")
                buf = _obj(ctx, "Buffer", row.Res, where).backend
                off, size = int(row.Offset), int(row.Size)
                if not size or size == _t.constant("kMGPipeWholeBuffer"):
                    size = buf.size - off
                align = int(self.dev.limits.minUniformBufferOffsetAlignment if b.kind == "uniform"
                            else self.dev.limits.minStorageBufferOffsetAlignment)  # fmt: skip
                if off % align:
                    raise VulkanRefused(where, f"offset {off} is not a multiple of {align}")
                if b.size and size < b.size:  # GL ES: the bound range must hold the block
                    raise VulkanRefused(where, f"{size} bytes bound, the block is {b.size}")
                vkbuf = buf.use(self.r.ring.serial)
                writes.append(
                    (b, [vk.VkDescriptorBufferInfo(buffer=vkbuf, offset=off, range=size)])
                )
                key.append((vkbuf, off, size))
                continue
            infos = []
            for i in range(b.count):
                unit = units.get(b.index + i, b.binding + i)
                where = f"{ctx.call}.sampler {b.name!r} (unit {unit})"
                row = views[unit] if unit < len(views) else None
                if row is None or (row.Texture.is_null and row.View.is_null):
                    raise VulkanRefused(where, "no texture is bound to the unit")
                view_cso = None
                if not row.View.is_null:
                    view_cso = _obj(ctx, "SamplerViewCso", row.View, where).backend
                tex_h = row.Texture if not row.Texture.is_null else view_cso.texture_handle
                tex = ctx.tables[table_of("Texture")].resolve(tex_h, where).backend
                if not isinstance(tex, VkTextureResource) or tex.image is None:
                    raise VulkanRefused(where, "the texture has no storage")
                if self.r.target.uses(tex):
                    raise VulkanRefused(where, "the texture is an attachment of the target drawn "
                                        "to (a feedback loop)")  # fmt: skip
                _check_texture_params(tex.params, where)
                pending_orient.append(tex)
                depth_only = tex.info is not None and tex.info.aspect != "color"
                view = (view_cso or tex_default_view(tex, self.r.ring.defer)).view_of(
                    self.dev, tex, depth_only
                )
                sh = states[unit] if unit < len(states) else None
                sampler = None
                if sh is not None and not sh.is_null:
                    sampler = _obj(ctx, "SamplerCso", sh, where).backend
                elif tex.params is not None and not tex.params.BuiltinSampler.is_null:
                    sampler = _obj(ctx, "SamplerCso", tex.params.BuiltinSampler, where).backend
                if sampler is None:
                    sampler = self._gl_default_sampler()
                infos.append(vk.VkDescriptorImageInfo(sampler=sampler.sampler, imageView=view,
                                                      imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL))  # fmt: skip
                key.append((sampler.sampler, view))
                keep.append(sampler)
            writes.append((b, infos))
        flipped = [t for t in pending_orient if t.image.flipped
                   or t.image.layout != vk.VK_IMAGE_LAYOUT_GENERAL]  # fmt: skip
        if flipped:
            cmd = self.r.cmd_outside_pass()
            init_general(cmd, [t.image for t in flipped])  # never written: GL's zero texels
            for t in flipped:
                t.orient(cmd, False)
        return writes, tuple(key), keep

    def _gl_default_sampler(self) -> SamplerObject:
        if self._default_sampler is None:
            self._default_sampler = self._keep(SamplerObject(self.dev, default_parameters(),
                                                             "GL's initial sampler state"))  # fmt: skip
        return self._default_sampler

    # -- framebuffers --------------------------------------------------------------
    def SetFramebufferState(self, ctx: Any, d: Any) -> None:
        p = d.payload
        if p.IsDefault:
            check_framebuffer(self.dev, p)
            self.r.resize_default(p.Width, p.Height)
            self._fbs[p.Fbo] = None  # type: ignore[assignment]  # the default: r.default now
            self._bind_target(p, self.r.default, 0)
            return
        key = (p.Fbo, p.ContentHash)
        entry = self._targets.get(key)
        if entry is None:
            none = _surface_none()
            colors, read, draw = [], 0, {}
            for i, s in enumerate(p.Color):
                if s.Kind != none and p.DrawBuffers[i] >= 0:
                    _whole_surface(s, f"SetFramebufferState.Color[{i}]")
                    res = _obj(ctx, "Texture", s.Res, f"SetFramebufferState.Color[{i}]")
                    if p.ReadSurface.Kind != none and res.handle == p.ReadSurface.Res:
                        read = len(colors)
                    draw[i] = len(colors)
                    colors.append(res.backend)
            depth = None
            for name in ("Depth", "Stencil"):  # one packed depth-stencil image serves both
                surface = getattr(p, name)
                if depth is None and surface.Kind != none:
                    _whole_surface(surface, f"SetFramebufferState.{name}")
                    depth = _obj(ctx, "Texture", surface.Res, f"SetFramebufferState.{name}").backend
            check_framebuffer(self.dev, p, colors + ([depth] if depth is not None else []))
            target = RenderTarget(self.dev, p.Width, p.Height, colors, depth, [], self.r.ring.defer)
            target.read_index, target.draw_index = read, draw
            self._target_ids += 1
            entry = self._targets[key] = (self._target_ids, target)
        self._fbs[p.Fbo] = entry[1]
        sources = [
            s for s in entry[1]._colors + [entry[1]._depth] if isinstance(s, VkTextureResource)
        ]
        if any(s.image is not None and not s.image.flipped for s in sources):
            cmd = self.r.cmd_outside_pass()
            for src in sources:  # a render target stores its rows top-down
                src.orient(cmd, True)
        self._bind_target(p, entry[1], entry[0])

    def _bind_target(self, p: Any, target: RenderTarget, target_id: int) -> None:
        """A draw (or both) push renders to ``target``; a read (or both) push is what
        ``ReadPixels`` and ``Blit`` read."""
        targets = _fb_targets()
        which = int(p.Target)
        if which in (targets["Draw"], targets["Both"]):
            self.r.set_target(target, target_id)
        if which in (targets["Read"], targets["Both"]):  # None: the default (it may be resized)
            self._read_target = None if target is self.r.default else target

    # -- verbs ----------------------------------------------------------------------
    def DrawVbo(self, ctx: Any, d: Any) -> None:
        p = d.payload
        shader_h = ctx.draw_program
        shader = _obj(ctx, "ShaderCso", shader_h, "DrawVbo.Program").backend
        if getattr(shader, "compute", False):
            raise VulkanRefused("DrawVbo.Program", "a compute program draws nothing (LaunchGrid)")
        vertex = _obj(
            ctx, "VertexElementsCso", ctx.vertex_elements, "DrawVbo.VertexElements"
        ).backend
        serial = self.r.ring.serial
        vbufs = self._vbufs
        for b, unit in getattr(vertex, "align", ()):
            for i, res, off in vbufs:
                if i != b:
                    continue
                if off % unit:
                    raise VulkanRefused("DrawVbo.VertexBuffers", f"binding {b}'s buffer offset "
                                        f"{off} is not a multiple of its {unit}-byte "
                                        "components")  # fmt: skip
                if off >= res.size:  # VUID-vkCmdBindVertexBuffers-pOffsets-00626
                    raise VulkanRefused("DrawVbo.VertexBuffers", f"binding {b}'s buffer offset "
                                        f"{off} is past its {res.size}-byte buffer")  # fmt: skip
        buffers = [(i, res.use(serial), off) for i, res, off in vbufs]
        index = None
        size = p.IndexSize
        restart = bool(size) and bool(p.Flags & _draw_flag("kDrawPrimitiveRestart"))
        if size:
            ib = (self.user_index_buffer(ctx, d, "DrawVbo")
                  if p.Flags & _draw_flag("kDrawHasUserIndices")
                  else _obj(ctx, "Buffer", p.IndexResource, "DrawVbo.IndexResource").backend)  # fmt: skip
            self.settle_buffer(ib)  # GPU-written indices: retired before the host reads them
            if restart and size in (1, 2, 4) and p.RestartIndex != (1 << (8 * size)) - 1:
                ib, size = self.restart_rewrite(ib, size, int(p.RestartIndex), "DrawVbo"), 4
            if size == 1:  # Vulkan 1.0 has no 8-bit indices: widened to 16 bits, once per content
                index = (self._u8_indices(ib, serial), 2)
            elif size in (2, 4):
                index = (ib.use(serial), size)
            else:
                raise VulkanRefused("DrawVbo.IndexSize", f"{size}: indices are 1, 2 or 4 bytes")
        block = ctx.render_state.view()
        indirect = bool(p.Flags & _draw_flag("kDrawIsIndirect"))  # MGPDrawIndirect, no ranges
        ranges = [] if indirect else [(r.Start, r.Count, r.IndexBias) for r in d.tails[0]]
        if not indirect:  # the commands of an indirect draw are the GPU's: robust access guards them
            self._ranges.check_draw(vertex, shader.inputs, self._vbufs, ranges,
                                    ib if size else None, size, restart,
                                    self.r.defaults_binding)  # before the driver  # fmt: skip
        mode = int(p.Mode)
        if mode == GL.LINE_LOOP and indirect:
            raise VulkanRefused("DrawVbo.Mode", "an indirect line loop (its strip's indices "
                                "would be made from commands the GPU reads)")  # fmt: skip
        patch = self.patch_vertices(ctx) if mode == GL_PATCHES else 0
        if shader.tessellated != bool(patch):
            raise VulkanRefused("DrawVbo.Mode", f"{mode:#x} with a program that "
                                f"{'has' if shader.tessellated else 'has no'} tessellation stages "
                                "(GL: GL_PATCHES exactly when it has)")  # fmt: skip
        if mode == GL.POINTS and not patch and not shader.writes_point_size:
            raise VulkanRefused("DrawVbo.Mode", "GL_POINTS with a vertex stage that writes no "
                                "gl_PointSize (GL ES leaves the size undefined; a Vulkan point "
                                "pipeline needs it written)")  # fmt: skip
        if mode == GL.LINE_LOOP:  # no Vulkan line loop: a strip back to the first vertex
            if restart:
                raise VulkanRefused("DrawVbo.Mode", "a line loop with primitive restart")
            index, ranges = self._line_loop(ib if size else None, size, ranges, serial)
            mode = GL.LINE_STRIP
        dc = DrawCall(ctx.render_state_cso, shader_h, shader, vertex, buffers, index,
                      _PATCH_LIST if patch else topology(mode), restart, ranges,
                      max(p.InstanceCount, 1), int(p.StartInstance))  # fmt: skip
        dc.patch = patch
        if indirect:  # indirect.py
            dc = self.indirect_call(ctx, d, dc, serial)
        bound = self._descriptor_sets(ctx, shader_h, shader)
        bind = None
        if bound is not None:
            sets, dyn = bound

            def bind(cmd: Any, program: ShaderProgram, sets: Any = sets, dyn: list = dyn) -> None:
                vk.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, program.layout,
                                           0, len(sets), sets, len(dyn), dyn or None)  # fmt: skip

        self.r.draw(dc, block, ctx.render_state.version, bind, self.xfb_before_pass(ctx))
        if bound is not None:
            self.mark_gpu_writes(ctx, shader_h, shader, serial)

    def _line_loop(self, ib: VkBufferResource | None, size: int,
                   ranges: list[tuple[int, int, int]], serial: int) -> tuple[Any, list]:  # fmt: skip
        """GL_LINE_LOOP as a line strip over 32-bit indices that repeat each range's first
        vertex at its end (the indices read from ``ib`` when the draw is indexed); the
        index buffer lives until this submission retires."""
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}.get(size)
        if ib is not None:
            self.settle_buffer(ib)  # indices a device copy wrote are read on the host
        src = np.frombuffer(ib.gpu.read(), dtype) if ib is not None and ib.gpu is not None else None
        parts, out = [], []
        at = 0
        for start, count, bias in ranges:
            if count < 2:  # GL: a loop of fewer than two vertices draws nothing
                continue
            idx = (np.arange(start, start + count, dtype=np.uint32) if src is None
                   else src[start : start + count].astype(np.uint32))  # fmt: skip
            idx = np.append(idx, idx[0])
            parts.append(idx)
            out.append((at, count + 1, bias if src is not None else 0))
            at += count + 1
        data = np.concatenate(parts).tobytes() if parts else bytes(4)
        buf = GpuBuffer(self.dev, len(data), BUFFER_USAGE)
        buf.write(0, data)
        self.r.ring.cmd()  # recording: the deferred destroy waits for this submission
        self.r.ring.defer(buf.destroy)
        if ib is not None:
            ib.use(serial)
        self.line_loops += 1
        return (buf.buffer, 4), out

    def _u8_indices(self, ib: VkBufferResource, serial: int) -> Any:
        """The 16-bit copy of an 8-bit index buffer (the restart index 0xFF -> 0xFFFF),
        made again only when the buffer's bytes changed (a write, a rename, or a shader's
        write: then its submission is waited for before the bytes are read)."""
        assert ib.gpu is not None
        self.settle_buffer(ib)  # indices a device copy wrote are read on the host
        ident = (ib.gpu.buffer, ib.writes, getattr(ib, "gpu_written", 0))
        memo = getattr(ib, "_u16", None)
        if memo is None or memo[0] != ident:
            wide = np.frombuffer(ib.gpu.read(), np.uint8).astype(np.uint16)
            wide[wide == 0xFF] = 0xFFFF
            buf = GpuBuffer(self.dev, wide.nbytes, BUFFER_USAGE)
            buf.write(0, wide.tobytes())
            if memo is not None:
                self.r.ring.defer(memo[1].destroy)
            memo = ib._u16 = (ident, buf)  # type: ignore[attr-defined]
            self.widened_index_buffers += 1
        ib.use(serial)
        return memo[1].buffer

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
        self._read_target = None

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
        ``glClearBuffer`` forms (``Color``: one draw buffer, its values of ``ValueClass``
        float / int / uint; ``Depth``, ``Stencil``, ``DepthStencil``); the values travel in
        the record. A colour value class other than the attachment's is refused by name."""
        p = d.payload
        kind = int(p.Kind)
        kinds = _clear_kinds()
        only = None
        classes = {v: k for k, v in _value_classes().items()}
        vclass = classes.get(int(p.ValueClass))
        if kind in (kinds["Whole"], kinds["Color"]) and vclass is None:
            raise VulkanRefused(
                "Clear.ValueClass", f"{int(p.ValueClass)} is no kMGPipeClearValueClass"
            )
        if kind == kinds["Whole"]:
            mask = int(p.BufferMask)
            color = self._clear_color(p, vclass, None) if mask & GL.COLOR_BUFFER_BIT else None
            depth = clear_depth("Clear", p.DepthValue) if mask & GL.DEPTH_BUFFER_BIT else None
            stencil = _stencil(p.StencilValue) if mask & GL.STENCIL_BUFFER_BIT else None
        elif kind == kinds["Color"]:
            if not 0 <= int(p.DrawBufferIndex) < int(_t.constant("kMGMaxDrawBuffers")):
                raise VulkanRefused("Clear.DrawBufferIndex", f"{int(p.DrawBufferIndex)}: past "
                                    "the last draw buffer")  # fmt: skip
            only = self.r.target.draw_index.get(int(p.DrawBufferIndex))
            if only is None:  # the draw buffer is GL_NONE (or past the last): nothing to clear
                return
            color, depth, stencil = self._clear_color(p, vclass, only), None, None
        elif kind in (kinds["Depth"], kinds["Stencil"], kinds["DepthStencil"]):
            color = None
            depth = clear_depth("Clear", p.DepthValue) if kind != kinds["Stencil"] else None
            stencil = _stencil(p.StencilValue) if kind != kinds["Depth"] else None
        else:
            raise VulkanRefused("Clear.Kind", f"{kind} is no kMGPipeClearKind")
        self.r.clear(ctx.render_state.view(), color, depth, stencil, only)  # type: ignore[arg-type]

    def _clear_color(self, p: Any, vclass: str | None, only: int | None) -> Any:
        want = {"Float": "float", "Int": "int", "Uint": "uint"}[vclass or "Float"]
        colors = self.r.target.colors
        for i, img in enumerate(colors):
            if only is not None and i != only:
                continue
            info = vk_info(img.format)
            have = info.value if info is not None else "float"
            if have != want:
                raise VulkanRefused("Clear.ValueClass", f"{vclass} values for colour attachment {i}, "
                                    f"a {info.name if info else 'normalized'} ({have}) image")  # fmt: skip
        if want == "float":
            return _floats(p.ColorValue)
        fmt = "<4i" if want == "int" else "<4I"
        return IntColor((want, struct.unpack(fmt, struct.pack("<4I", *p.ColorValue))))

    def Present(self, ctx: Any, d: Any) -> None:
        self.r.present()

    def Flush(self, ctx: Any, d: Any) -> None:
        """``glFlush``: what was recorded goes to the queue; nothing waits."""
        self.r.flush()

    def ObjectDeath(self, ctx: Any, d: Any) -> None:
        """The GL object died: free what this backend holds for it (fence-retired through
        the deletion queue): a framebuffer's render targets, a texture's or buffer's
        storage, a program, a sampler or sampler view. After a wire delete of the same
        handle the server hands ``None`` (the delete entry freed it)."""
        obj = ctx.resolved.get("Handle")
        if obj is None:
            return
        kind = _kind_names().get(int(d.payload.Kind), "")
        if kind == "Framebuffer":
            self._forget_fbo(obj.handle)
        thing = obj.backend
        if thing is None:
            return
        if isinstance(thing, ShaderProgram):
            self._retire_program(obj.handle, thing)
        elif isinstance(thing, (VkBufferResource, VkTextureResource)):
            self._forget_targets_of(thing)
            thing.destroy()
            self._drop(thing)
        elif hasattr(thing, "destroy"):
            self._retire(thing)
        obj.backend = None
        self._bind_serial += 1

    def _read(self) -> RenderTarget:
        t = self._read_target
        return self.r.default if t is None else t

    def _forget_fbo(self, fbo: Handle) -> None:
        for key in [k for k in self._targets if k[0] == fbo]:
            self._forget(self._targets.pop(key)[1])
        self._fbs.pop(fbo, None)

    def Blit(self, ctx: Any, d: Any) -> None:
        self._fire(ctx, lambda: self._blit(ctx, d))  # a GL rule broken: OnGlError, in order

    def _blit(self, ctx: Any, d: Any) -> None:
        """``glBlitFramebuffer``: the read framebuffer's read colour buffer to every draw
        buffer of the draw framebuffer (``vkCmdBlitImage``, the filter GL names), depth /
        stencil by nearest blit; GL's y-up rectangles become the images' top-down rows."""
        p = d.payload
        names = ("SrcX0", "SrcY0", "SrcX1", "SrcY1", "DstX0", "DstY0", "DstX1", "DstY1")
        block = ctx.render_state.view() if ctx is not None else None  # None: driven bare
        cut = scissored_blit(tuple(int(getattr(p, n)) for n in names), block)
        if cut is None:
            return  # the scissor box leaves nothing of the destination
        p = SimpleNamespace(ReadFbo=p.ReadFbo, DrawFbo=p.DrawFbo, Mask=p.Mask, Filter=p.Filter,
                            **dict(zip(names, cut)))  # fmt: skip
        src, dst = self._fbs.get(p.ReadFbo, 0), self._fbs.get(p.DrawFbo, 0)
        src = self.r.default if src is None else src
        dst = self.r.default if dst is None else dst
        if src == 0 or dst == 0:
            raise VulkanRefused("Blit.ReadFbo" if src is None else "Blit.DrawFbo",
                                "no framebuffer state was pushed for it")  # fmt: skip
        mask = int(p.Mask)
        linear = int(p.Filter) == _GL_LINEAR
        pairs = []
        if mask & GL.COLOR_BUFFER_BIT and src.colors:
            s_img = src.colors[src.read_index]
            pairs += [
                (s_img, dst.colors[i], vk.VK_IMAGE_ASPECT_COLOR_BIT)
                for i in dst.draw_index.values()
            ]
        ds = (vk.VK_IMAGE_ASPECT_DEPTH_BIT if mask & GL.DEPTH_BUFFER_BIT else 0) | (
            vk.VK_IMAGE_ASPECT_STENCIL_BIT if mask & GL.STENCIL_BUFFER_BIT else 0)  # fmt: skip
        if ds and src.depth is not None and dst.depth is not None:
            if linear:
                raise VulkanRefused("Blit.Filter", "depth / stencil blits filter GL_NEAREST only")
            pairs.append((src.depth, dst.depth, ds & src.depth.aspect & dst.depth.aspect))
        if not pairs:
            return
        for s_img, d_img, aspect in pairs:
            self.blit_checks(s_img, d_img, aspect, linear)
        cmd = self.r.cmd_outside_pass()
        init_general(cmd, src.images() + dst.images())
        full_barrier(cmd)

        def rows(t: RenderTarget, y0: int, y1: int) -> tuple[int, int]:
            return t.height - y0, t.height - y1

        sy0, sy1 = rows(src, p.SrcY0, p.SrcY1)
        dy0, dy1 = rows(dst, p.DstY0, p.DstY1)
        for s_img, d_img, aspect in pairs:
            if s_img.samples > 1 or d_img.samples > 1:
                self._resolve_blit(cmd, p, s_img, d_img, aspect, (sy0, sy1), (dy0, dy1))
                continue
            if s_img.format != d_img.format and aspect != vk.VK_IMAGE_ASPECT_COLOR_BIT:
                raise VulkanRefused("Blit.Mask", "depth / stencil blits between different formats")
            sub = vk.VkImageSubresourceLayers(aspectMask=aspect, mipLevel=0, baseArrayLayer=0,
                                              layerCount=1)  # fmt: skip
            blit = vk.VkImageBlit(
                srcSubresource=sub, dstSubresource=sub,
                srcOffsets=[vk.VkOffset3D(x=p.SrcX0, y=sy0, z=0), vk.VkOffset3D(x=p.SrcX1, y=sy1, z=1)],
                dstOffsets=[vk.VkOffset3D(x=p.DstX0, y=dy0, z=0), vk.VkOffset3D(x=p.DstX1, y=dy1, z=1)],
            )  # fmt: skip
            filt = vk.VK_FILTER_LINEAR if linear else vk.VK_FILTER_NEAREST
            if s_img is d_img:
                vk.vkCmdBlitImage(cmd, s_img.image, GENERAL, d_img.image, GENERAL, 1, [blit], filt)
            else:
                with_layout(cmd, s_img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, lambda src, b=blit, f=filt, s=s_img, t=d_img: with_layout(
                    cmd, t, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, lambda dst: vk.vkCmdBlitImage(
                        cmd, s.image, src, t.image, dst, 1, [b], f)))  # fmt: skip
        full_barrier(cmd)
        self.blits += 1

    def _resolve_blit(self, cmd: Any, p: Any, s_img: Any, d_img: Any, aspect: int,
                      sy: tuple[int, int], dy: tuple[int, int]) -> None:  # fmt: skip
        """A multisampled read buffer resolved into a single-sampled draw buffer
        (``vkCmdResolveImage``): GL's rules, same rectangles, same format, colour only."""
        if d_img.samples > 1:
            raise VulkanRefused(
                "Blit.DrawFbo", "a multisampled draw buffer (GL: INVALID_OPERATION)"
            )
        if aspect != vk.VK_IMAGE_ASPECT_COLOR_BIT:
            raise VulkanRefused("Blit.Mask", "a multisampled depth / stencil resolve (Vulkan 1.0 "
                                "resolves colour only)")  # fmt: skip
        if (p.SrcX0, p.SrcY0, p.SrcX1, p.SrcY1) != (p.DstX0, p.DstY0, p.DstX1, p.DstY1):
            raise VulkanRefused("Blit.SrcX0", "a multisampled resolve between different rectangles "
                                "(GL: INVALID_OPERATION)")  # fmt: skip
        if s_img.format != d_img.format:
            raise VulkanRefused("Blit.ReadFbo", "a multisampled resolve between different formats")
        x0, x1 = sorted((int(p.SrcX0), int(p.SrcX1)))
        y0, y1 = sorted(sy)
        sub = vk.VkImageSubresourceLayers(
            aspectMask=aspect, mipLevel=0, baseArrayLayer=0, layerCount=1
        )
        region = vk.VkImageResolve(
            srcSubresource=sub, srcOffset=vk.VkOffset3D(x=x0, y=y0, z=0), dstSubresource=sub,
            dstOffset=vk.VkOffset3D(x=x0, y=min(dy), z=0),
            extent=vk.VkExtent3D(width=x1 - x0, height=y1 - y0, depth=1))  # fmt: skip
        with_layout(cmd, s_img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, lambda src: with_layout(
            cmd, d_img, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, lambda dst: vk.vkCmdResolveImage(
                cmd, s_img.image, src, d_img.image, dst, 1, [region])))  # fmt: skip
        self.resolves += 1

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
        outside the wire and outside the counts (:meth:`~.renderer.VulkanRenderer.read_uncounted`).
        """
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
        self._query_close()
        self.close_compute()
        self.close_stream_output()
        self.descriptors.destroy()
        self.uniforms.destroy()
        for thing in list(self._live.values()):  # what the client never deleted
            thing.destroy()
        self._live.clear()
        self.r.close()
        if not self._borrowed_dev:
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
    return {
        k[len(prefix) :]: int(v) for k, v in _t.tables().CONSTANTS.items() if k.startswith(prefix)
    }


@lru_cache(maxsize=None)
def _value_classes() -> dict[str, int]:
    prefix = "kMGPipeClearValueClass"
    return {k[len(prefix):]: int(v) for k, v in _t.tables().CONSTANTS.items()
            if k.startswith(prefix) and not k.endswith("Count")}  # fmt: skip


@lru_cache(maxsize=None)
def _attrib_views() -> dict[int, str]:
    """``MGPAttribValue.ValueClass`` (``kMGPipeAttribValueClass*``) -> the member holding
    the value."""
    return {_t.constant(f"kMGPipeAttribValueClass{c}"): f"{c}View" for c in ("Float", "Int", "Uint")}


@lru_cache(maxsize=None)
def _draw_flag(name: str) -> int:
    return int(_t.enum("MGPDrawFlagBit")[name])


#: GL_TEXTURE_CUBE_MAP_POSITIVE_X (a GL registry value): MGPSubData.Target of a cube face
#: upload is the face's GL target, POSITIVE_X + face.
_CUBE_POSITIVE_X = 0x8515


def _epoch() -> int:
    return EPOCH[0]


@lru_cache(maxsize=None)
def _target_names() -> dict[int, str]:
    return {int(v): k for k, v in _t.enum("MGPipeResourceTarget").items()}


def _target_name(value: int) -> str:
    return _target_names().get(int(value), f"target {int(value)}")


#: GL_LINEAR (a GL registry value): MGPBlit.Filter carries GL's filter enum.
_GL_LINEAR = 0x2601


@lru_cache(maxsize=None)
def _fb_targets() -> dict[str, int]:
    return {k: int(v) for k, v in _t.enum("MGPipeFramebufferTarget").items()}


@lru_cache(maxsize=None)
def _kind_names() -> dict[int, str]:
    return {int(v): k for k, v in _t.enum("MGPipeKind").items()}


def _whole_surface(s: Any, where: str) -> None:
    """An attachment this backend renders to is level 0, layer 0 of its image (a level or
    layer attachment is refused by name, never drawn into level 0)."""
    if int(s.Level) or int(s.Layer) or int(s.Layered):
        raise VulkanRefused(where, f"level {int(s.Level)} layer {int(s.Layer)} layered "
                            f"{int(s.Layered)}: attachments are level 0, layer 0")  # fmt: skip


def _check_texture_params(params: Any, where: str) -> None:
    """What SetTextureParams asks that this backend does not sample is refused by name:
    stencil texturing (``kMGPipeDepthStencilModeStencil``) and a swizzle other than each
    component reading itself (the tables name no swizzle values: position i = component i)."""
    if params is None:
        return
    if int(params.DepthStencilMode) == _t.constant("kMGPipeDepthStencilModeStencil"):
        raise VulkanRefused(f"{where}.DepthStencilMode", "stencil texturing is not sampled here")
    swizzle = tuple(int(v) for v in params.Swizzle)
    if swizzle != tuple(range(len(swizzle))):
        raise VulkanRefused(f"{where}.Swizzle", f"{swizzle}: no swizzle enum in the tables to "
                            "map to a VkComponentMapping (identity only)")  # fmt: skip


def _state_only(self: VulkanBackend, ctx: Any, d: Any) -> None:
    """The applier keeps this call's state; a later verb reads it (docs/BACKENDS.md)."""
    return None


for _name in _STATE_ONLY:  # class entries: the backend table reads them off the class
    setattr(VulkanBackend, _name, _state_only)
