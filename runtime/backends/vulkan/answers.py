"""The Vulkan backend's answers (docs/REVERSE_CHANNEL.md §1-§4): readbacks, caps, maps.

- ``ReadPixels``: the read framebuffer's read colour buffer -- or its depth / stencil
  buffer for ``DEPTH_COMPONENT`` / ``STENCIL_INDEX`` / ``DEPTH_STENCIL`` -- of ``Box``,
  packed by :func:`~.readbacks.pack`, tight, rows bottom-up. ``GetTextureImage``: the same
  of a texture's level, layers ``Box.Z`` .. ``Box.Z + Box.D`` (a cube face: ``Target`` is
  the face's GL target). ``ResourceReadback``: ``Size`` bytes of a buffer from ``Offset``,
  once every device write recorded before it has retired.
- ``ReadPixelsToBuffer`` / ``GetTextureImageToBuffer`` (pack buffers, no answer): where the
  GL packing is the copy's own bytes (:func:`~.readbacks.native`) the device copies the
  image into the buffer (``vkCmdCopyImageToBuffer`` per row at ``DstBase`` /
  ``RowStride`` / ``ImageStride``, in command order, nothing waits); any other packing is
  converted on the host once the image is read (counted: ``pack_host_conversions``), then
  written into the buffer as a ``ResourceSubData`` would be (so is a pack with
  ``SwapGroup``, ``GL_PACK_SWAP_BYTES``: each group's bytes reversed). ``readback_done`` follows.
- ``MapPersistent``: DECLINED (tier T2: the client pushes the bytes). ``ResourceFlushRange``:
  the range is checked against the buffer and flushed (``vkFlushMappedMemoryRanges``,
  rounded to ``nonCoherentAtomSize``; the memory is host-coherent, the flush is what GL's
  explicit flush asks of non-coherent memory).
- ``caps_snapshot``: what the device reports -- its limits into ``DynamicBackendParameters``,
  each format of :mod:`.formats` with its optimal-tiling features as flags
  (:data:`FORMAT_FLAGS`), the device name and driver version; ``kCapOcclusionQuery`` /
  ``kCapTimerQuery`` claimed where the device counts samples / has timestamp bits.

A GL rule the record breaks (a readback of a multisampled buffer, a range outside a
buffer) is the ordered ``OnGlError`` event of that record, never a crash; what Vulkan
cannot do is a named refusal.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import vulkan as vk

from ...client.pixels import PixelFormatError, pixel_size
from ...server.reverse import AnswersCaps, BackendCaps, Reply
from .errors import GL_ERR, GlError, VulkanRefused
from .formats import GL_FORMATS, vk_info
from .gpu_timer import AVAILABLE
from .limits import readback_box
from .memory import GpuBuffer
from .readbacks import (COLOR, GLP, aspect_bytes, aspects_for, copy_region, gl_rows, host_barrier,
                        native, pack, region)  # fmt: skip
from .resources import VkBufferResource, VkTextureResource
from .targets import full_barrier, init_general, with_layout

__all__ = ["AnswerEntries", "FORMAT_FLAGS", "GL_ERR"]

_FOREVER = 0xFFFFFFFFFFFFFFFF
#: GL_TEXTURE_CUBE_MAP_POSITIVE_X: a cube face's target is POSITIVE_X + face.
_CUBE_POSITIVE_X = 0x8515
_SRC_RES = "Src.Res"  # the resolved key of MGPReadbackToBuffer.Src.Res


#: ``FormatCapabilities`` flag bits of a format row (from its optimal-tiling features).
FORMAT_FLAGS = {
    "sampled": (1 << 0, vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT),
    "renderable": (1 << 1, vk.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT
                   | vk.VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT),
    "blit_src": (1 << 2, vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT),
    "blit_dst": (1 << 3, vk.VK_FORMAT_FEATURE_BLIT_DST_BIT),
    "filter_linear": (1 << 4, vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT),
    "blendable": (1 << 5, vk.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BLEND_BIT),
}  # fmt: skip



def flush_range(off: int, size: int, atom: int, alloc_size: int) -> tuple[int, int]:
    """(offset, size) of the ``vkFlushMappedMemoryRanges`` range covering ``[off, off +
    size)`` of a memory object of ``alloc_size`` bytes mapped whole: the offset a multiple
    of ``nonCoherentAtomSize``, the end one too or ``VK_WHOLE_SIZE`` to the memory's end."""
    atom = atom or 1
    start = off // atom * atom
    end = -(-(off + size) // atom) * atom
    return (start, _FOREVER) if end >= alloc_size else (start, end - start)

class AnswerEntries(AnswersCaps):
    """Readback, map and caps entries of :class:`~.backend.VulkanBackend` (a mixin)."""

    r: Any
    pack_host_conversions = 0
    pack_device_copies = 0

    # -- images ------------------------------------------------------------------------
    def _read_image(self, img: Any, level: int, x: int, y: int, layer: int, w: int, h: int,
                    layers: int, gl_format: int, gl_type: int, where: str) -> bytes:  # fmt: skip
        """GL-packed, tight, bottom-up texels of a region of ``img`` (waits for the copy)."""
        if img.samples > 1:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: a multisampled buffer is read "
                          "only after a resolving blit")  # fmt: skip
        aspects = aspects_for(img.aspect, gl_format, where)
        if not w or not h or not layers:
            return b""
        hgt, wid = max(img.height >> level, 1), max(img.width >> level, 1)
        if x < 0 or y < 0 or x + w > wid or y + h > hgt or level >= img.levels:
            raise GlError(GL_ERR.INVALID_VALUE, f"{where}: ({x}, {y}, {w}x{h}) level {level} "
                          f"outside the {wid}x{hgt} image")  # fmt: skip
        cmd = self.r.cmd_outside_pass()
        init_general(cmd, [img])
        bufs = {a: copy_region(self.r.dev, cmd, img, a, level, x, y, layer, w, h, layers)
                for a in aspects}  # fmt: skip
        self.r.ring.submit(wait=True)
        parts = {}
        for a, buf in bufs.items():
            raw = buf.read(0, buf.payload)
            buf.destroy()
            parts[a] = gl_rows(raw, img, w, h, layers, aspect_bytes(img.format, a))
        return pack(img.format, parts, w * h * layers, gl_format, gl_type, where)

    def _framebuffer_image(self, gl_format: int, where: str) -> Any:
        t = self._read()
        if gl_format in (GLP.DEPTH_COMPONENT, GLP.STENCIL_INDEX, GLP.DEPTH_STENCIL):
            if t.depth is None:
                raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: the read framebuffer has no "
                              "depth / stencil buffer")  # fmt: skip
            return t.depth
        if not t.colors:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: the read framebuffer has no "
                          "colour buffer")  # fmt: skip
        return t.colors[t.read_index]

    def _answer(self, ctx: Any, fn: Any) -> Any:
        """Run an answering body: a broken GL rule is an ERROR reply plus the ordered
        ``OnGlError`` event; a Vulkan error from the driver likewise (GL_OUT_OF_MEMORY)."""
        try:
            return fn()
        except GlError as e:
            ctx.events.gl_error(e.code)
            return Reply.error(str(e))
        except vk.VkErrorOutOfDeviceMemory as e:
            ctx.events.gl_error(GL_ERR.OUT_OF_MEMORY)
            return Reply.error(f"{ctx.call}: {type(e).__name__}")
        except vk.VkErrorOutOfHostMemory as e:
            ctx.events.gl_error(GL_ERR.OUT_OF_MEMORY)
            return Reply.error(f"{ctx.call}: {type(e).__name__}")

    def _fire(self, ctx: Any, fn: Any) -> None:
        """A non-answering body: a broken GL rule is the ordered ``OnGlError`` event."""
        try:
            fn()
        except GlError as e:
            ctx.events.gl_error(e.code)
        except (vk.VkErrorOutOfDeviceMemory, vk.VkErrorOutOfHostMemory):
            ctx.events.gl_error(GL_ERR.OUT_OF_MEMORY)

    def read_pixels_tight(self, p: Any, where: str = "ReadPixels", limit: int | None = None) -> bytes:
        """The tight pixels of ``p.Box``. GL leaves the pixels outside the read surface
        undefined (no error): only the part inside is copied (a copy past the image crashed
        lavapipe), the rest reads as zero; ``limit``: the most bytes the answer may hold."""
        img = self._framebuffer_image(int(p.Format), where)
        b = p.Box
        fmt, typ = int(p.Format), int(p.Type)
        x, y, w, h = int(b.X), int(b.Y), int(b.W), int(b.H)
        clip = readback_box(x, y, w, h, img.width, img.height)
        if clip == (x, y, w, h):
            return self._read_image(img, 0, x, y, 0, w, h, 1, fmt, typ, where)
        try:
            bpp = pixel_size(fmt, typ)
        except PixelFormatError as exc:
            raise VulkanRefused(f"{where}.Format", str(exc)) from None
        if limit is not None and w * h * bpp > limit:
            raise VulkanRefused(f"{where}.Box", f"{w}x{h} of {bpp} bytes is more than the "
                                f"{limit}-byte answer")  # fmt: skip
        out = bytearray(w * h * bpp)
        if clip is not None:
            cx, cy, cw, ch = clip
            data = self._read_image(img, 0, cx, cy, 0, cw, ch, 1, fmt, typ, where)
            row = cw * bpp
            for r in range(ch):
                o = ((cy - y + r) * w + (cx - x)) * bpp
                out[o : o + row] = data[r * row : (r + 1) * row]
        return bytes(out)

    def ReadPixels(self, ctx: Any, d: Any) -> Any:
        """The tight pixels are the reply (``DstOffset`` / ``DstSize`` name no stage
        destination: the client scatters the reply with its own pack state)."""
        limit = getattr(ctx, "reply_capacity", None)
        return self._answer(ctx, lambda: Reply.ok(self.read_pixels_tight(d.payload, limit=limit)))

    def _texture_region(self, obj: Any, p: Any, where: str) -> tuple[Any, ...]:
        """(image, level, first layer, w, h, layers) a readback of ``p`` reads."""
        tex = getattr(obj, "backend", None)
        if not isinstance(tex, VkTextureResource) or tex.image is None:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}.Res: not a texture with storage")
        img, b, level = tex.image, p.Box, int(p.Level)
        face = int(p.Target) - _CUBE_POSITIVE_X
        layer = face if 0 <= face < 6 else int(b.Z)
        w = int(b.W) or max(img.width >> level, 1)  # a zero box: the whole level
        h = int(b.H) or max(img.height >> level, 1)
        layers = 1 if 0 <= face < 6 else (int(b.D) or max(
            (img.depth >> level) if img.image_type == vk.VK_IMAGE_TYPE_3D else img.layers, 1))  # fmt: skip
        return img, level, layer, w, h, layers

    def get_texture_image(self, ctx: Any, p: Any, where: str = "GetTextureImage") -> bytes:
        img, level, layer, w, h, layers = self._texture_region(ctx.resolved["Res"], p, where)
        return self._read_image(img, level, int(p.Box.X), int(p.Box.Y), layer, w, h, layers,
                                int(p.Format), int(p.Type), where)  # fmt: skip

    def GetTextureImage(self, ctx: Any, d: Any) -> Any:
        return self._answer(ctx, lambda: Reply.ok(self.get_texture_image(ctx, d.payload)))

    # -- buffers -------------------------------------------------------------------------
    def settle_buffer(self, buf: VkBufferResource) -> None:
        """Every device write recorded into ``buf`` has retired (its bytes are on the host)."""
        serial = getattr(buf, "gpu_written", 0)
        ring = self.r.ring
        if serial <= ring.completed:
            return
        if serial >= ring.serial:
            self.r.flush()
        ring.wait_serial(serial, _FOREVER)

    def buffer_readback(self, ctx: Any, p: Any) -> bytes:
        buf = getattr(ctx.resolved["Res"], "backend", None)
        if not isinstance(buf, VkBufferResource):
            raise GlError(GL_ERR.INVALID_OPERATION, "ResourceReadback.Res: not a buffer")
        off, size = int(p.Offset), int(p.Size)
        if off + size > buf.size:
            raise GlError(GL_ERR.INVALID_VALUE, f"ResourceReadback: [{off}, {off + size}) outside "
                          f"{buf.size} bytes")  # fmt: skip
        if not size:
            return b""
        self.settle_buffer(buf)
        assert buf.gpu is not None
        return buf.gpu.read(off, size)

    def ResourceReadback(self, ctx: Any, d: Any) -> Any:
        return self._answer(ctx, lambda: Reply.ok(self.buffer_readback(ctx, d.payload)))

    def MapPersistent(self, ctx: Any, d: Any) -> Any:
        """Tier T2: no address is handed out; the client pushes the bytes (seed 001 §12)."""
        return Reply.declined()

    def ResourceFlushRange(self, ctx: Any, d: Any) -> None:
        p = d.payload

        def body() -> None:
            buf = getattr(ctx.resolved["Res"], "backend", None)
            if not isinstance(buf, VkBufferResource) or buf.gpu is None:
                raise GlError(GL_ERR.INVALID_OPERATION, "ResourceFlushRange.Res: no buffer storage")
            off, size = int(p.Offset), int(p.Size)
            if off + size > buf.size:
                raise GlError(GL_ERR.INVALID_VALUE, f"ResourceFlushRange: [{off}, {off + size}) "
                              f"outside {buf.size} bytes")  # fmt: skip
            start, length = flush_range(off, size, int(self.r.dev.limits.nonCoherentAtomSize),
                                        buf.gpu.alloc_size)  # fmt: skip
            vk.vkFlushMappedMemoryRanges(self.r.dev.device, 1, [vk.VkMappedMemoryRange(
                memory=buf.gpu.memory, offset=start, size=length)])  # fmt: skip
            self.flushed_ranges = getattr(self, "flushed_ranges", 0) + 1

        self._fire(ctx, body)

    # -- pack buffers ----------------------------------------------------------------------
    def _pack_into(self, ctx: Any, p: Any, img: Any, level: int, layer: int, w: int, h: int,
                   layers: int, where: str) -> None:  # fmt: skip
        src = p.Src
        gl_format, gl_type = int(src.Format), int(src.Type)
        dst = getattr(ctx.resolved["Dst"], "backend", None)
        if not isinstance(dst, VkBufferResource) or dst.gpu is None:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}.Dst: no pack buffer storage")
        if img.samples > 1:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: a multisampled buffer")
        aspects = aspects_for(img.aspect, gl_format, where)
        x, y = int(src.Box.X), int(src.Box.Y)
        texel = len(pack(img.format, {a: bytes(aspect_bytes(img.format, a)) for a in aspects},
                         1, gl_format, gl_type, where))  # fmt: skip
        row = int(p.RowStride) or w * texel
        slab = int(p.ImageStride) or row * h
        base = int(p.DstBase)
        end = base + (layers - 1) * slab + (h - 1) * row + w * texel
        if not w or not h:
            return
        if end > dst.size:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: the pack writes [{base}, {end}), "
                          f"the buffer has {dst.size} bytes")  # fmt: skip
        ring = self.r.ring
        swap = int(p.SwapGroup)  # GL_PACK_SWAP_BYTES: the bytes of each group reversed
        if swap > 1 and (w * texel) % swap:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: swap group {swap} does not divide "
                          f"a {w * texel}-byte row")  # fmt: skip
        if swap <= 1 and native(img.format, aspects, gl_format, gl_type) and row % texel == 0 and (
                slab % row == 0) and base % max(texel, 4) == 0:  # fmt: skip
            cmd = self.r.cmd_outside_pass()
            init_general(cmd, [img])
            regions = []
            for z in range(layers):
                for r in range(h):  # GL row r of the pack = image row r (or hgt-1-r)
                    regions.append(region(img, aspects[0], level, x, y + r, layer + z, w, 1, 1,
                                          buffer_offset=base + z * slab + r * row))  # fmt: skip
            full_barrier(cmd)
            vkbuf = dst.use(ring.serial)
            with_layout(cmd, img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                        lambda layout: vk.vkCmdCopyImageToBuffer(cmd, img.image, layout, vkbuf,
                                                                 len(regions), regions))  # fmt: skip
            host_barrier(cmd)
            full_barrier(cmd)
            dst.gpu_written = ring.serial  # type: ignore[attr-defined]
            self.pack_device_copies += 1
        else:
            data = self._read_image(
                img, level, x, y, layer, w, h, layers, gl_format, gl_type, where
            )
            if swap > 1:
                data = np.frombuffer(data, np.uint8).reshape(-1, swap)[:, ::-1].tobytes()
            line = w * texel
            for z in range(layers):
                for r in range(h):
                    at = (z * h + r) * line
                    self.settle_buffer(dst)
                    dst.write(base + z * slab + r * row, data[at : at + line], ring.completed)
            self.pack_host_conversions += 1
        dh = p.Dst
        ctx.events.gpu_written((dh.slot, dh.gen), [(base, end - base)])  # OnGpuWritten
        ctx.events.readback_done(ctx.seq)

    def ReadPixelsToBuffer(self, ctx: Any, d: Any) -> None:
        p = d.payload

        def body() -> None:
            img = self._framebuffer_image(int(p.Src.Format), "ReadPixelsToBuffer")
            b = p.Src.Box
            self._pack_into(ctx, p, img, 0, 0, int(b.W), int(b.H), 1, "ReadPixelsToBuffer")

        self._fire(ctx, body)

    def GetTextureImageToBuffer(self, ctx: Any, d: Any) -> None:
        p = d.payload

        def body() -> None:
            obj = ctx.resolved[_SRC_RES]
            img, level, layer, w, h, layers = self._texture_region(
                obj, p.Src, "GetTextureImageToBuffer"
            )
            self._pack_into(ctx, p, img, level, layer, w, h, layers, "GetTextureImageToBuffer")

        self._fire(ctx, body)

    # -- caps ------------------------------------------------------------------------------
    def caps_snapshot(self) -> Any:
        dev = self.r.dev
        lim = dev.limits
        counts = int(lim.framebufferColorSampleCounts)
        top = 1 << (counts.bit_length() - 1) if counts else 1
        dcounts = int(lim.framebufferDepthSampleCounts)
        dyn = {
            "UniformBufferOffsetAlignment": int(lim.minUniformBufferOffsetAlignment),
            "ShaderStorageBufferOffsetAlignment": int(lim.minStorageBufferOffsetAlignment),
            "MaxTextureMaxAnisotropy": (
                float(lim.maxSamplerAnisotropy) if dev.features.get("samplerAnisotropy") else 1.0
            ),
            "AliasedLineWidthRangeMin": float(lim.lineWidthRange[0]),
            "AliasedLineWidthRangeMax": (
                float(lim.lineWidthRange[1]) if dev.features.get("wideLines") else 1.0
            ),
            "SmoothLineWidthGranularity": float(lim.lineWidthGranularity),
            "PointSizeRangeMin": float(lim.pointSizeRange[0]),
            "PointSizeRangeMax": float(lim.pointSizeRange[1]),
            "PointSizeGranularity": float(lim.pointSizeGranularity),
            "Max3DTextureSize": int(lim.maxImageDimension3D),
            "MaxArrayTextureLayers": int(lim.maxImageArrayLayers),
            "MaxCubeMapTextureSize": int(lim.maxImageDimensionCube),
            "MaxFramebufferWidth": int(lim.maxFramebufferWidth),
            "MaxFramebufferHeight": int(lim.maxFramebufferHeight),
            "MaxFramebufferLayers": int(lim.maxFramebufferLayers),
            "MaxRenderbufferSize": int(lim.maxImageDimension2D),
            "MaxTextureSize": int(lim.maxImageDimension2D),
            "MaxColorTextureSamples": top,
            "MaxDepthTextureSamples": 1 << (dcounts.bit_length() - 1) if dcounts else 1,
            "MaxFramebufferSamples": top,
            "MaxIntegerSamples": 1 << (int(lim.sampledImageIntegerSampleCounts).bit_length() - 1),
            "MaxSamples": top,
            "MaxSampleMaskWords": int(lim.maxSampleMaskWords),
            "MinProgramTextureGatherOffset": int(lim.minTexelGatherOffset),
            "MaxProgramTextureGatherOffset": int(lim.maxTexelGatherOffset),
            "MaxTextureImageUnits": int(lim.maxPerStageDescriptorSampledImages),
            "MaxVertexTextureImageUnits": int(lim.maxPerStageDescriptorSampledImages),
            "MaxCombinedTextureImageUnits": int(lim.maxDescriptorSetSampledImages),
            "MaxVertexAttribs": int(lim.maxVertexInputAttributes),
            "MaxFragmentShaderStorageBlocks": int(lim.maxPerStageDescriptorStorageBuffers),
            "MaxVertexShaderStorageBlocks": int(lim.maxPerStageDescriptorStorageBuffers),
            "MaxCombinedShaderStorageBlocks": int(lim.maxDescriptorSetStorageBuffers),
            "MaxShaderStorageBufferBindings": int(lim.maxDescriptorSetStorageBuffers),
            "MaxUniformBufferBindings": int(lim.maxDescriptorSetUniformBuffers),
            "MaxUniformBlockSize": int(lim.maxUniformBufferRange),
            "MaxShaderStorageBlockSize": int(lim.maxStorageBufferRange),
            "MaxDrawBuffers": int(lim.maxColorAttachments),
            "MaxColorAttachments": int(lim.maxColorAttachments),
            "MaxClipDistances": int(lim.maxClipDistances),
            "MaxCullDistances": int(lim.maxCullDistances),
            "MaxCombinedClipAndCullDistances": int(lim.maxCombinedClipAndCullDistances),
            "MaxViewports": int(lim.maxViewports),
            "MaxViewportWidth": int(lim.maxViewportDimensions[0]),
            "MaxViewportHeight": int(lim.maxViewportDimensions[1]),
            "ViewportBoundsRangeMin": float(lim.viewportBoundsRange[0]),
            "ViewportBoundsRangeMax": float(lim.viewportBoundsRange[1]),
            "ViewportSubpixelBits": int(lim.viewportSubPixelBits),
            "SupportsWideLines": bool(dev.features.get("wideLines")),
            "MaxComputeWorkGroupInvocations": int(lim.maxComputeWorkGroupInvocations),
            "MaxComputeWorkGroupCount": [int(v) for v in lim.maxComputeWorkGroupCount],
            "MaxComputeWorkGroupSize": [int(v) for v in lim.maxComputeWorkGroupSize],
        }
        bits = []
        if self.r.dev.features.get("occlusionQueryPrecise") is not None:
            bits.append("kCapOcclusionQuery")  # any-samples always; exact counts where precise
        if self.timestamps == AVAILABLE:
            bits.append("kCapTimerQuery")
        formats = []
        for gl, info in sorted(GL_FORMATS.items()):
            feats = vk.vkGetPhysicalDeviceFormatProperties(dev.physical, info.vk_format)
            have = int(feats.optimalTilingFeatures)
            flags = sum(bit for bit, need in FORMAT_FLAGS.values() if have & need)
            formats.append((int(gl), int(flags)))
        props = dev.properties
        renderer = (f"{dev.name} (Vulkan {props.apiVersion >> 22}.{(props.apiVersion >> 12) & 0x3FF}"
                    f".{props.apiVersion & 0xFFF}, driver {props.driverVersion:#x})")  # fmt: skip
        return BackendCaps(dynamic=dyn, cap_bits=tuple(bits), formats=tuple(formats),
                           renderer=renderer)  # fmt: skip
