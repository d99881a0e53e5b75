"""Compute, storage buffers, storage images and memory barriers on the Vulkan side.

:class:`ComputeEntries` is a mixin of :class:`~.backend.VulkanBackend`:

- ``LaunchGrid`` dispatches the program ``SetDispatchProgram`` named (a compute program:
  the compute stage alone, :class:`~.shaders.ShaderProgram`); its ``VkPipeline`` is made
  once per program (memoised on the shader CSO, retired with it), its descriptor sets come
  from the program's reflection record exactly as a draw's do (memoised on the bindings
  serial). ``IsIndirect``: ``vkCmdDispatchIndirect`` over ``IndirectBuffer`` at
  ``IndirectOffset`` (three ``uint``: GL's ``DispatchIndirectCommand``). ``BlockX/Y/Z``,
  where set, must be the shader's ``local_size`` (GL ES has no variable group size).
- ``SetShaderBuffers`` keeps, per class, which binding points the record marks writable
  (``WritableMask``, one bit per absolute point); a dispatch or draw that binds such a
  buffer marks it GPU-written at its submission, so a later host write waits for that
  submission instead of renaming the buffer over bytes the GPU has not written yet.
- ``SetShaderImages`` (the window) and ``BindShaderImage`` (one unit, the later wins) bind
  storage images: a ``STORAGE_IMAGE`` descriptor per reflected ``images`` row (its GL
  binding is the image unit), a view of the bound level (and layer, unless ``Layered``) in
  the texture's own format; ``Access`` is kept as GL's promise (a read-only unit is never
  marked written).
- ``MemoryBarrier``: GL's ``glMemoryBarrier`` bits become one ``vkCmdPipelineBarrier``
  from every shader stage's writes to exactly the stages and accesses the bits name
  (vertex input for attribute / index reads, indirect-command reads, transfer, host,
  attachments, transform feedback); a bit GL does not define is refused by name.

GL barrier bits are GL's registry values (the wire carries ``glMemoryBarrier``'s argument).
"""

from __future__ import annotations

from typing import Any

import vulkan as vk

from ...schema import tables as _t
from ...server.gpu_written import emit_bindings_written
from ...server.handle_fields import table_of
from .errors import VulkanRefused
from .resources import EPOCH, VkBufferResource, VkTextureResource
from .shaders import ShaderProgram, local_size

__all__ = ["ComputeEntries", "GL_BARRIER_BITS", "barrier_masks", "local_size"]

_S = (
    vk.VK_PIPELINE_STAGE_VERTEX_SHADER_BIT
    | vk.VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT
    | (vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)
)
_RW = vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT
_XFB_STAGE = 0x01000000  # VK_PIPELINE_STAGE_TRANSFORM_FEEDBACK_BIT_EXT
_XFB_WRITE = 0x02000000  # VK_ACCESS_TRANSFORM_FEEDBACK_WRITE_BIT_EXT
_XFB_COUNTER_READ = 0x04000000  # VK_ACCESS_TRANSFORM_FEEDBACK_COUNTER_READ_BIT_EXT
_FRAG_TESTS = (
    vk.VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT | vk.VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT
)

#: GL's glMemoryBarrier bits (registry values) -> (Vulkan destination stages, accesses)
GL_BARRIER_BITS: dict[int, tuple[str, int, int]] = {
    0x0001: ("VERTEX_ATTRIB_ARRAY", vk.VK_PIPELINE_STAGE_VERTEX_INPUT_BIT,
             vk.VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT),
    0x0002: ("ELEMENT_ARRAY", vk.VK_PIPELINE_STAGE_VERTEX_INPUT_BIT, vk.VK_ACCESS_INDEX_READ_BIT),
    0x0004: ("UNIFORM", _S, vk.VK_ACCESS_UNIFORM_READ_BIT),
    0x0008: ("TEXTURE_FETCH", _S, vk.VK_ACCESS_SHADER_READ_BIT),
    0x0020: ("SHADER_IMAGE_ACCESS", _S, _RW),
    0x0040: ("COMMAND", vk.VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
             vk.VK_ACCESS_INDIRECT_COMMAND_READ_BIT),
    0x0080: ("PIXEL_BUFFER", vk.VK_PIPELINE_STAGE_TRANSFER_BIT | vk.VK_PIPELINE_STAGE_HOST_BIT,
             vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
             | vk.VK_ACCESS_HOST_READ_BIT),
    0x0100: ("TEXTURE_UPDATE", vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
             vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT),
    0x0200: ("BUFFER_UPDATE", vk.VK_PIPELINE_STAGE_TRANSFER_BIT | vk.VK_PIPELINE_STAGE_HOST_BIT,
             vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT
             | vk.VK_ACCESS_HOST_READ_BIT | vk.VK_ACCESS_HOST_WRITE_BIT),
    0x0400: ("FRAMEBUFFER", vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | _FRAG_TESTS,
             vk.VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT
             | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT
             | vk.VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT),
    0x0800: ("TRANSFORM_FEEDBACK", _XFB_STAGE, _XFB_WRITE),
    0x1000: ("ATOMIC_COUNTER", _S, _RW),
    0x2000: ("SHADER_STORAGE", _S, _RW),
}  # fmt: skip
GL_ALL_BARRIER_BITS = 0xFFFFFFFF


def barrier_masks(bits: int, xfb: bool) -> tuple[int, int]:
    """(destination stages, destination accesses) for GL barrier ``bits``; ``xfb``: the
    device has transform feedback (else that bit is refused by name)."""
    if bits == GL_ALL_BARRIER_BITS:
        bits = sum(GL_BARRIER_BITS) if xfb else sum(GL_BARRIER_BITS) & ~0x0800
    stray = bits & ~sum(GL_BARRIER_BITS)
    if stray:
        raise VulkanRefused("MemoryBarrier.Bits", f"{stray:#x}: no GL ES barrier bit")
    if bits & 0x0800 and not xfb:
        raise VulkanRefused("MemoryBarrier.Bits", "TRANSFORM_FEEDBACK_BARRIER_BIT: the device "
                            "has no VK_EXT_transform_feedback")  # fmt: skip
    stages = access = 0
    for bit, (_, st, ac) in GL_BARRIER_BITS.items():
        if bits & bit:
            stages |= st
            access |= ac
    return stages, access


def _bit(mask: Any, point: int) -> bool:
    return bool(int(mask[point // 32]) >> (point % 32) & 1) if point < 32 * len(mask) else False


class ComputeEntries:
    """Backend entries of this module (mixed into ``VulkanBackend``)."""

    # -- state -------------------------------------------------------------------
    def _compute_state(self) -> dict[str, Any]:
        st = self.__dict__.get("_compute")
        if st is None:
            st = self.__dict__["_compute"] = {
                "pipelines": {},  # ShaderCso handle -> (program, VkPipeline)
                "writable": {},  # class -> the last record's WritableMask words
                "images": {},  # unit -> BindShaderImage payload (newer than the window)
                "views": {},  # (image serial, level, layer, view type) -> VkImageView
                "dispatches": 0, "indirect_dispatches": 0, "barriers": 0,
            }  # fmt: skip
        return st

    def SetShaderBuffers(self, ctx: Any, d: Any) -> None:
        p = d.payload
        self._compute_state()["writable"][int(p.Class)] = tuple(int(w) for w in p.WritableMask)
        self._bind_serial += 1

    def SetShaderImages(self, ctx: Any, d: Any) -> None:
        p, st = d.payload, self._compute_state()
        for unit in range(int(p.Start), int(p.Start) + int(p.Count)):
            st["images"].pop(unit, None)  # the window's row is the newer now
        self._bind_serial += 1

    def BindShaderImage(self, ctx: Any, d: Any) -> None:
        p = d.payload
        if int(p.Unit) >= _t.constant("kMGPipeMaxImageUnits"):
            raise VulkanRefused("BindShaderImage.Unit", f"{int(p.Unit)}: past the image units")
        self._compute_state()["images"][int(p.Unit)] = p
        self._bind_serial += 1

    def MemoryBarrier(self, ctx: Any, d: Any) -> None:
        """``glMemoryBarrier(Bits)`` (``ByRegion``: ``glMemoryBarrierByRegion``, the same
        dependency over the whole surface): shader writes -> the accesses the bits name."""
        stages, access = barrier_masks(int(d.payload.Bits), self._has_xfb())
        src = _S | self._extra_shader_stages()
        cmd = self.r.cmd_outside_pass()
        mb = vk.VkMemoryBarrier(srcAccessMask=vk.VK_ACCESS_SHADER_WRITE_BIT, dstAccessMask=access)
        vk.vkCmdPipelineBarrier(cmd, src, stages, 0, 1, [mb], 0, None, 0, None)
        self._compute_state()["barriers"] += 1

    def _has_xfb(self) -> bool:
        return "VK_EXT_transform_feedback" in self.dev.extensions

    def _extra_shader_stages(self) -> int:
        f = self.dev.features
        out = 0
        if f.get("tessellationShader"):
            out |= (vk.VK_PIPELINE_STAGE_TESSELLATION_CONTROL_SHADER_BIT
                    | vk.VK_PIPELINE_STAGE_TESSELLATION_EVALUATION_SHADER_BIT)  # fmt: skip
        if f.get("geometryShader"):
            out |= vk.VK_PIPELINE_STAGE_GEOMETRY_SHADER_BIT
        return out

    # -- dispatch ------------------------------------------------------------------
    def LaunchGrid(self, ctx: Any, d: Any) -> None:
        p, st = d.payload, self._compute_state()
        handle = ctx.dispatch_program
        where = "LaunchGrid.Program"
        if handle.is_null:
            raise VulkanRefused(where, "no program is bound for dispatch (SetDispatchProgram)")
        program = ctx.tables[table_of("ShaderCso")].resolve(handle, where).backend
        if not isinstance(program, ShaderProgram) or not program.compute:
            raise VulkanRefused(where, "the dispatch program has no compute stage")
        block = (int(p.BlockX), int(p.BlockY), int(p.BlockZ))
        if any(block) and block != program.local_size:
            raise VulkanRefused("LaunchGrid.BlockX", f"{block}: the shader's local size is "
                                f"{program.local_size} (GL ES has no variable group size)")  # fmt: skip
        limits = self.dev.limits
        indirect = None
        if p.IsIndirect:
            iw = "LaunchGrid.IndirectBuffer"
            buf = ctx.tables[table_of("Buffer")].resolve(p.IndirectBuffer, iw).backend
            off = int(p.IndirectOffset)
            if not isinstance(buf, VkBufferResource) or buf.gpu is None:
                raise VulkanRefused(iw, "no buffer storage")
            if off % 4 or off + 12 > buf.size:
                raise VulkanRefused("LaunchGrid.IndirectOffset", f"{off}: three uints from a "
                                    f"4-byte aligned offset inside {buf.size} bytes")  # fmt: skip
            indirect = (buf, off)
        else:
            grid = (int(p.GridX), int(p.GridY), int(p.GridZ))
            top = tuple(int(x) for x in limits.maxComputeWorkGroupCount)
            if any(g > t for g, t in zip(grid, top)):
                raise VulkanRefused("LaunchGrid.GridX", f"{grid}: past the device's {top}")
        bound = self._descriptor_sets(ctx, handle, program)
        pipe = self._compute_pipeline(handle, program)
        cmd = self.r.cmd_outside_pass()
        serial = self.r.ring.serial
        vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
        if bound is not None:
            sets, dyn = bound
            vk.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, program.layout, 0,
                                       len(sets), sets, len(dyn), dyn or None)  # fmt: skip
        if indirect is not None:
            buf, off = indirect
            vk.vkCmdDispatchIndirect(cmd, buf.use(serial), off)
            st["indirect_dispatches"] += 1
        elif all(grid):
            vk.vkCmdDispatch(cmd, *grid)
        self.mark_gpu_writes(ctx, handle, program, serial)
        st["dispatches"] += 1

    def _compute_pipeline(self, handle: Any, program: ShaderProgram) -> Any:
        pipes = self._compute_state()["pipelines"]
        have = pipes.get(handle)
        if have is not None and have[0] is program:
            return have[1]
        if have is not None:
            self._retire_compute(handle)
        stage = program.stage_infos()[0]
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=program.layout,
                                              basePipelineIndex=-1)  # fmt: skip
        pipe = vk.vkCreateComputePipelines(self.dev.device, None, 1, [info], None)[0]
        pipes[handle] = (program, pipe)
        self.r.memo.created += 1
        return pipe

    def _retire_compute(self, handle: Any) -> None:
        have = self._compute_state()["pipelines"].pop(handle, None)
        if have is not None:
            dev, pipe = self.dev.device, have[1]
            self.r.ring.defer(lambda: vk.vkDestroyPipeline(dev, pipe, None))

    def mark_gpu_writes(self, ctx: Any, handle: Any, program: ShaderProgram, serial: int) -> None:
        """Every storage / atomic buffer the record marked writable, and every image unit not
        bound read-only, is written by submission ``serial``."""
        st = self._compute_state()
        masks = st["writable"]
        if not program.resources.writes:
            if masks:  # OnGpuWritten: the points the mask names, none of them written
                emit_bindings_written(ctx, masks, ())
            return
        written = []
        for b, point, cls in self._buffer_points(ctx, handle, program):
            if not _bit(st["writable"].get(cls, ()), point):
                continue
            written.append((int(cls), int(point)))
            window = ctx.windows[f"SetShaderBuffers[{cls}]"]
            row = window[point] if point < len(window) else None
            if row is not None and not row.Res.is_null:
                buf = ctx.tables[table_of("Buffer")].resolve(row.Res, "written buffer").backend
                if isinstance(buf, VkBufferResource):
                    buf.gpu_written = serial
        emit_bindings_written(ctx, masks, written)  # OnGpuWritten, in command order

    def _buffer_points(self, ctx: Any, handle: Any, program: ShaderProgram) -> list:
        from .descriptors import ATOMIC_BLOCK

        cso = ctx.tables[table_of("ShaderCso")].resolve(handle, "program")
        storage = cso.data.get("storage_blocks", {})
        out = []
        for b in program.resources.bindings:
            if b.kind == "storage":
                out.append((b, storage.get(b.name, b.binding),
                            _t.constant("kMGPipeShaderBufferClassShaderStorage")))  # fmt: skip
            elif b.kind == "atomic":
                out.append((b, int(b.name[len(ATOMIC_BLOCK):]),
                            _t.constant("kMGPipeShaderBufferClassAtomicCounter")))  # fmt: skip
        return out

    # -- storage images (called from the backend's binding resolution) ---------------
    def storage_image_infos(self, ctx: Any, b: Any, key: list, pending: list) -> list:
        st = self._compute_state()
        window = ctx.windows["SetShaderImages"]
        access_names = {v: k for k, v in _t.enum("MGPipeImageAccess").items()}
        infos = []
        for i in range(b.count):
            unit = b.binding + i
            where = f"{ctx.call}.image {b.name!r} (unit {unit})"
            bind = st["images"].get(unit)
            row = bind if bind is not None else (window[unit] if unit < len(window) else None)
            if row is None or row.Res.is_null:
                raise VulkanRefused(where, "no image is bound to the unit")
            tex = ctx.tables[table_of("Texture")].resolve(row.Res, where).backend
            if not isinstance(tex, VkTextureResource) or tex.image is None:
                raise VulkanRefused(where, "the texture has no storage")
            img = tex.image
            if not img.usage & vk.VK_IMAGE_USAGE_STORAGE_BIT:
                raise VulkanRefused(where, f"{tex.info.name if tex.info else img.format}: the "
                                    "device has no storage-image use of the format")  # fmt: skip
            fmt = int(row.Format if bind is not None else row.InternalFormat)
            if fmt and fmt != tex.internal_format:
                raise VulkanRefused(where, f"format {fmt:#x} over a {tex.internal_format:#x} "
                                    "texture: no reinterpreting views")  # fmt: skip
            if int(row.Access) not in access_names or access_names[int(row.Access)] == "Count":
                raise VulkanRefused(where, f"access {int(row.Access)}: not MGPipeImageAccess")
            level = int(row.Level)
            if not 0 <= level < img.levels:
                raise VulkanRefused(where, f"level {level}: the texture has {img.levels}")
            view = self._storage_view(tex, b.type, level, int(row.Layer), bool(row.Layered), where)
            pending.append(tex)
            infos.append(vk.VkDescriptorImageInfo(imageView=view,
                                                  imageLayout=vk.VK_IMAGE_LAYOUT_GENERAL))  # fmt: skip
            key.append(("img", view))
        return infos

    def _storage_view(self, tex: Any, gl_type: str, level: int, layer: int, layered: bool,
                      where: str) -> Any:  # fmt: skip
        img = tex.image
        kind = gl_type[1:] if gl_type[:1] in ("i", "u") and gl_type[1:6] == "image" else gl_type
        kind = kind.removeprefix("image") or "2D"
        types = {"2D": vk.VK_IMAGE_VIEW_TYPE_2D, "3D": vk.VK_IMAGE_VIEW_TYPE_3D,
                 "2DArray": vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY, "Cube": vk.VK_IMAGE_VIEW_TYPE_CUBE,
                 "CubeArray": vk.VK_IMAGE_VIEW_TYPE_CUBE_ARRAY}  # fmt: skip
        if kind not in types:
            raise VulkanRefused(where, f"{gl_type}: no storage view of it")
        if kind == "2D" or not layered:
            vtype, base, count = vk.VK_IMAGE_VIEW_TYPE_2D, layer if img.layers > 1 else 0, 1
            if img.image_type == vk.VK_IMAGE_TYPE_3D and kind != "2D":
                raise VulkanRefused(where, "a non-layered 3D image binding (one slice)")
        else:
            vtype, base, count = types[kind], 0, img.layers
        if base >= img.layers:
            raise VulkanRefused(where, f"layer {layer}: the texture has {img.layers}")
        ident = (img.serial, level, base, vtype)
        views = self._compute_state()["views"]
        view = views.get(ident)
        if view is None:
            info = vk.VkImageViewCreateInfo(
                image=img.image, viewType=vtype, format=img.format,
                subresourceRange=vk.VkImageSubresourceRange(
                    aspectMask=img.aspect, baseMipLevel=level, levelCount=1,
                    baseArrayLayer=base, layerCount=count))  # fmt: skip
            view = views[ident] = vk.vkCreateImageView(self.dev.device, info, None)
            # the view lives as long as its image: retired with the texture's storage
            tex.__dict__.setdefault("_storage_view_keys", []).append(ident)
        return view

    def forget_storage_views(self, tex: Any) -> None:
        """``tex``'s storage image is being replaced or destroyed: its views retire too."""
        views = self._compute_state()["views"]
        dev = self.dev.device
        for ident in tex.__dict__.pop("_storage_view_keys", []):
            v = views.pop(ident, None)
            if v is not None:
                EPOCH[0] += 1  # no descriptor set may keep naming the view
                self.r.ring.defer(lambda v=v: vk.vkDestroyImageView(dev, v, None))

    def close_compute(self) -> None:
        st = self._compute_state()
        dev = self.dev.device
        for _, pipe in st["pipelines"].values():
            vk.vkDestroyPipeline(dev, pipe, None)
        for v in st["views"].values():
            vk.vkDestroyImageView(dev, v, None)
        st["pipelines"], st["views"] = {}, {}

    def compute_stats(self) -> dict[str, int]:
        st = self._compute_state()
        return {k: st[k] for k in ("dispatches", "indirect_dispatches", "barriers")}
