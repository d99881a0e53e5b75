"""Server-side buffers and textures of the Vulkan backend.

A :class:`VkBufferResource` is host-visible. A write to a buffer that a recorded or
in-flight command buffer may still read renames it (a new ``VkBuffer`` with the old
contents plus the write; the old one goes to the deletion queue), so a draw always sees
the bytes it was recorded against, as GL promises.

A :class:`VkTextureResource` is a 2-D image (``GENERAL`` layout, see :mod:`.targets`);
uploads go through a staging buffer and ``vkCmdCopyBufferToImage`` recorded outside any
render pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import vulkan as vk

from .device import VulkanDevice
from .memory import GpuBuffer, GpuImage
from .errors import VulkanRefused
from .formats import FormatInfo, format_info, supported
from .targets import COLOR_USAGE, DEPTH_USAGE, GENERAL, full_barrier, init_general, with_layout

__all__ = ["BUFFER_USAGE", "VkBufferResource", "VkTextureResource"]

BUFFER_USAGE = (
    vk.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | vk.VK_BUFFER_USAGE_INDEX_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
)  # fmt: skip


def buffer_usage(dev: VulkanDevice) -> int:
    """:data:`BUFFER_USAGE`, plus transform-feedback capture where the device has it."""
    if "VK_EXT_transform_feedback" in dev.extensions:
        return BUFFER_USAGE | vk.VK_BUFFER_USAGE_TRANSFORM_FEEDBACK_BUFFER_BIT_EXT
    return BUFFER_USAGE


class VkBufferResource:
    def __init__(self, dev: VulkanDevice, defer: Callable[[Callable[[], None]], None]) -> None:
        self.dev = dev
        self.defer = defer
        self.gpu: GpuBuffer | None = None
        self.size = 0
        self.used_serial = 0  # the last submission serial that may read it
        self.renames = 0
        self.writes = 0  # bumped by every write (an 8-bit index copy keys on it)
        self.gpu_written = 0  # the last submission serial whose shaders may write it

    def respecify(self, size: int) -> None:
        self._retire()
        EPOCH[0] += 1
        self.writes += 1
        self.size = size
        self.gpu = GpuBuffer(self.dev, size, buffer_usage(self.dev))

    def write(self, offset: int, data: bytes, completed: int) -> None:
        if self.gpu is None:
            self.respecify(offset + len(data))
        assert self.gpu is not None
        if self.used_serial > completed:  # a recorded / in-flight draw may still read it
            old = self.gpu
            self.gpu = GpuBuffer(self.dev, old.size, buffer_usage(self.dev))
            self.gpu.write(0, old.read())
            self.defer(old.destroy)
            self.renames += 1
            EPOCH[0] += 1
            self.used_serial = 0
        self.gpu.write(offset, data)
        self.writes += 1

    def use(self, serial: int) -> Any:
        self.used_serial = serial
        assert self.gpu is not None
        return self.gpu.buffer

    def _retire(self) -> None:
        if self.gpu is not None:
            self.defer(self.gpu.destroy)
            self.gpu = None
        wide = getattr(self, "_u16", None)  # the 16-bit copy of 8-bit indices
        if wide is not None:
            self.defer(wide[1].destroy)
            self._u16 = None

    def destroy(self) -> None:
        self._retire()


EPOCH = [0]  # bumped whenever a VkBuffer / VkImage behind a resource changes (descriptors)


class VkTextureResource:
    """A texture's image: every target (2-D, 3-D, 2-D array, cube = six layers with a
    CUBE view, cube array) and every format of :mod:`.formats` with its real texel size.
    Images keep GL's row order (row 0 = GL's bottom row, what a sampler reads) until they
    become a render target; :meth:`orient` flips the rows in place when that changes."""

    def __init__(self, dev: VulkanDevice, defer: Callable[[Callable[[], None]], None],
                 depth_format: int) -> None:  # fmt: skip
        self.dev = dev
        self.defer = defer
        self.depth_format = depth_format
        self.image: GpuImage | None = None
        self.internal_format = 0
        self.info: FormatInfo | None = None
        self.target = "Tex2D"
        self.params: Any = None  # the last SetTextureParams (BuiltinSampler, levels, lods)
        self._desc: tuple[Any, ...] | None = None

    def respecify(self, internal_format: int, width: int, height: int, levels: int,
                  whole: bool = True, *, target: str = "Tex2D", depth: int = 1,
                  layers: int = 1, samples: int = 0) -> None:  # fmt: skip
        """New storage for the description. An image already of this description is kept
        (``whole`` False: the respecify names one level, ``MGPResourceDesc.HasRespecifiedLevel``,
        and the other levels' texels stay; a whole respecify that moves only ``BindMask`` or
        ``Usage`` keeps the texels too, GL leaves them undefined). No extent: no storage yet."""
        desc = (internal_format, width, height, max(levels, 1), target, depth, layers, samples)
        if self.image is not None and desc == self._desc:
            return  # the same storage (a level's respecify, or only BindMask / Usage moved)
        if target not in _TARGETS:
            raise VulkanRefused("ResourceRespecify.Target",
                                f"{target}: this backend stores {', '.join(_TARGETS)}")  # fmt: skip
        self._retire()
        EPOCH[0] += 1
        self.internal_format, self._desc, self.info, self.target = (
            internal_format,
            desc,
            None,
            target,
        )
        if not width or not height:
            return
        info = self.info = format_info(internal_format)
        cube = target in ("TexCube", "TexCubeArray")
        nlayers = 1
        if target == "TexCube":
            nlayers = 6
        elif target == "TexCubeArray":
            nlayers = max(layers, 6)
        elif target in ("Tex2DArray",):
            nlayers = max(layers, 1)
        itype = vk.VK_IMAGE_TYPE_3D if target == "Tex3D" else vk.VK_IMAGE_TYPE_2D
        if info.aspect != "color":
            fmt = supported(self.dev, info, vk.VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT)
            sampled = _has(self.dev, fmt, vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
            usage = DEPTH_USAGE | (vk.VK_IMAGE_USAGE_SAMPLED_BIT if sampled else 0)
        else:
            fmt = supported(self.dev, info, vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
            usage = COLOR_USAGE & ~vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
            if (
                _has(self.dev, fmt, vk.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT)
                and itype != vk.VK_IMAGE_TYPE_3D
            ):
                usage |= vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
            if _has(self.dev, fmt, vk.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT) and samples <= 1:
                usage |= vk.VK_IMAGE_USAGE_STORAGE_BIT  # image load / store
        count = 1
        if samples > 1:  # a multisampled renderbuffer / texture: rendered, resolved by a blit
            limits = self.dev.limits
            have = int(limits.framebufferDepthSampleCounts if info.aspect != "color"
                       else limits.framebufferColorSampleCounts)  # fmt: skip
            count = 1 << (int(samples) - 1).bit_length()  # GL: at least the samples asked for
            if not have & count or itype != vk.VK_IMAGE_TYPE_2D or nlayers != 1 or levels > 1:
                raise VulkanRefused("ResourceRespecify.Samples",
                                    f"{samples} samples of {info.name} {target}: the device "
                                    f"renders sample counts {have:#x}")  # fmt: skip
            usage &= ~(vk.VK_IMAGE_USAGE_SAMPLED_BIT)
            if target not in ("Renderbuffer",):
                raise VulkanRefused("ResourceRespecify.Target", f"{target} with {samples} samples: "
                                    "multisampled textures are not sampled here (renderbuffers only)")  # fmt: skip
        self.image = GpuImage(self.dev, width, height, fmt, usage, max(levels, 1),
                              depth=max(depth, 1) if itype == vk.VK_IMAGE_TYPE_3D else 1,
                              layers=nlayers, cube=cube, image_type=itype, flipped=False,
                              samples=count)  # fmt: skip

    def record_upload(self, cmd: Any, level: int,
                      regions: list[tuple[int, int, int, int, int, int, bytes]],
                      serial: int) -> None:  # fmt: skip
        """Record each (x, y, z, w, h, d, tightly packed rows, GL bottom-up) region into
        ``cmd``; ``z`` / ``d`` are the depth slices of a 3-D image, else its layers."""
        img = self.image
        assert img is not None
        if img.layout != GENERAL:
            init_general(cmd, [img])
        full_barrier(cmd)
        three_d = img.image_type == vk.VK_IMAGE_TYPE_3D
        for x, y, z, w, h, d, texels in regions:
            hgt = max(img.height >> level, 1)
            oy = hgt - y - h if img.flipped else y
            for aspect, data in self._aspects(texels):
                region = vk.VkBufferImageCopy(
                    bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                    imageSubresource=vk.VkImageSubresourceLayers(
                        aspectMask=aspect, mipLevel=level, baseArrayLayer=0 if three_d else z,
                        layerCount=1 if three_d else d),
                    imageOffset=vk.VkOffset3D(x=x, y=oy, z=z if three_d else 0),
                    imageExtent=vk.VkExtent3D(width=w, height=h, depth=d if three_d else 1),
                )  # fmt: skip
                if img.flipped:
                    n = len(data) // max(d, 1)
                    data = b"".join(_flip_rows(data[i * n : (i + 1) * n], h) for i in range(d))
                staging = GpuBuffer(self.dev, len(data), vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
                staging.write(0, data)
                with_layout(cmd, img, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                            lambda layout, b=staging.buffer, r=region: vk.vkCmdCopyBufferToImage(
                                cmd, b, img.image, layout, 1, [r]))  # fmt: skip
                self.defer(staging.destroy)
        full_barrier(cmd)

    def _aspects(self, texels: bytes) -> list[tuple[int, bytes]]:
        """GL's upload texels -> (aspect, buffer bytes) copies in Vulkan's buffer layouts:
        colour and D16 / D32F as they are; GL's 32-bit normalised DEPTH_COMPONENT24 and
        UNSIGNED_INT_24_8 (depth in the top 24 bits, stencil the low 8) as a 24-bit depth
        word (X8_D24, or a float where the device stores D32F) plus a stencil byte;
        FLOAT_32_UNSIGNED_INT_24_8_REV (a float, then stencil in the low 8 bits) likewise."""
        img = self.image
        info = self.info
        assert img is not None and info is not None
        depth_bit, stencil_bit = vk.VK_IMAGE_ASPECT_DEPTH_BIT, vk.VK_IMAGE_ASPECT_STENCIL_BIT
        if info.aspect == "color" or info.name in ("DEPTH_COMPONENT16", "DEPTH_COMPONENT32F"):
            return [(img.aspect, texels)]
        float_depth = img.format in (vk.VK_FORMAT_D32_SFLOAT, vk.VK_FORMAT_D32_SFLOAT_S8_UINT)
        if info.name == "DEPTH32F_STENCIL8":
            pairs = np.frombuffer(texels, np.uint32).reshape(-1, 2)
            depth = pairs[:, 0].tobytes()  # the float's bits
            stencil = (pairs[:, 1] & 0xFF).astype(np.uint8)
        else:
            words = np.frombuffer(texels, np.uint32)
            d24 = words >> 8  # DEPTH_COMPONENT24's 32-bit normalised value, or 24_8's top bits
            depth = ((d24.astype(np.float64) / 0xFFFFFF).astype(np.float32).tobytes() if float_depth
                     else d24.astype(np.uint32).tobytes())  # fmt: skip
            stencil = (words & 0xFF).astype(np.uint8) if info.aspect == "depth_stencil" else None
        out = [(depth_bit, depth)]
        if stencil is not None and img.aspect & stencil_bit:
            out.append((stencil_bit, stencil.tobytes()))
        return out

    def orient(self, cmd: Any, flipped: bool) -> None:
        """Store the rows top-down (``flipped``: a render target's) or GL's bottom-up (what
        a sampler reads); a change flips every level and layer in place (row copies
        through a scratch image: any format)."""
        img = self.image
        if img is None or img.flipped == flipped:
            return
        img.flipped = flipped
        EPOCH[0] += 1  # a draw that samples it checks its orientation again
        if img.layout == vk.VK_IMAGE_LAYOUT_UNDEFINED:
            return  # nothing written yet
        scratch = GpuImage(self.dev, img.width, img.height, img.format,
                           vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                           img.levels, depth=img.depth, layers=img.layers,
                           image_type=img.image_type, samples=img.samples)  # fmt: skip
        scratch.barrier(cmd, GENERAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                        vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT)  # fmt: skip
        full_barrier(cmd)
        rows, whole = [], []
        for lvl in range(img.levels):
            w, h = max(img.width >> lvl, 1), max(img.height >> lvl, 1)
            dd = max(img.depth >> lvl, 1)
            sub = vk.VkImageSubresourceLayers(aspectMask=img.aspect, mipLevel=lvl,
                                              baseArrayLayer=0, layerCount=img.layers)  # fmt: skip
            for r in range(h):
                rows.append(vk.VkImageCopy(
                    srcSubresource=sub, srcOffset=vk.VkOffset3D(x=0, y=r, z=0),
                    dstSubresource=sub, dstOffset=vk.VkOffset3D(x=0, y=h - 1 - r, z=0),
                    extent=vk.VkExtent3D(width=w, height=1, depth=dd)))  # fmt: skip
            whole.append(vk.VkImageCopy(srcSubresource=sub, srcOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                        dstSubresource=sub, dstOffset=vk.VkOffset3D(x=0, y=0, z=0),
                                        extent=vk.VkExtent3D(width=w, height=h, depth=dd)))  # fmt: skip
        src_l, dst_l = (
            vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
        )
        with_layout(cmd, img, src_l, lambda a: with_layout(cmd, scratch, dst_l, lambda b: (
            vk.vkCmdCopyImage(cmd, img.image, a, scratch.image, b, len(rows), rows))))  # fmt: skip
        full_barrier(cmd)
        with_layout(cmd, scratch, src_l, lambda a: with_layout(cmd, img, dst_l, lambda b: (
            vk.vkCmdCopyImage(cmd, scratch.image, a, img.image, b, len(whole), whole))))  # fmt: skip
        full_barrier(cmd)
        self.defer(scratch.destroy)

    def generate_mipmap(self, cmd: Any, base: int, count: int) -> None:
        """``glGenerateMipmap``: each level from the one above by ``vkCmdBlitImage``
        (linear filter), every layer; refused by name where the format cannot be blitted
        with a linear filter (integer and depth formats: GL refuses those too)."""
        img = self.image
        if img is None:
            return
        need = (vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT | vk.VK_FORMAT_FEATURE_BLIT_DST_BIT
                | vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT)  # fmt: skip
        if not _has(self.dev, img.format, need) or (self.info and self.info.value != "float"):
            raise VulkanRefused("GenerateMipmap.Res", f"{self.info.name if self.info else img.format}: "
                                "no linear blit for this format")  # fmt: skip
        if img.layout != GENERAL:
            init_general(cmd, [img])
        last = img.levels
        rw = vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT
        every = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT

        def level_layout(level: int, old: int, new: int) -> None:
            b = vk.VkImageMemoryBarrier(
                srcAccessMask=rw, dstAccessMask=rw, oldLayout=old, newLayout=new,
                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=img.image,
                subresourceRange=vk.VkImageSubresourceRange(
                    aspectMask=img.aspect, baseMipLevel=level, levelCount=1, baseArrayLayer=0,
                    layerCount=img.layers))  # fmt: skip
            vk.vkCmdPipelineBarrier(cmd, every, every, 0, 0, None, 0, None, 1, [b])

        src_l, dst_l = (
            vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
        )
        for lvl in range(base + 1, last):
            sw, sh, sd = (max(v >> (lvl - 1), 1) for v in (img.width, img.height, img.depth))
            dw, dh, dd = (max(v >> lvl, 1) for v in (img.width, img.height, img.depth))
            blit = vk.VkImageBlit(
                srcSubresource=vk.VkImageSubresourceLayers(aspectMask=img.aspect, mipLevel=lvl - 1,
                                                           baseArrayLayer=0, layerCount=img.layers),
                srcOffsets=[vk.VkOffset3D(x=0, y=0, z=0), vk.VkOffset3D(x=sw, y=sh, z=sd)],
                dstSubresource=vk.VkImageSubresourceLayers(aspectMask=img.aspect, mipLevel=lvl,
                                                           baseArrayLayer=0, layerCount=img.layers),
                dstOffsets=[vk.VkOffset3D(x=0, y=0, z=0), vk.VkOffset3D(x=dw, y=dh, z=dd)],
            )  # fmt: skip
            level_layout(lvl - 1, GENERAL, src_l)
            level_layout(lvl, GENERAL, dst_l)
            vk.vkCmdBlitImage(
                cmd, img.image, src_l, img.image, dst_l, 1, [blit], vk.VK_FILTER_LINEAR
            )
            level_layout(lvl - 1, src_l, GENERAL)
            level_layout(lvl, dst_l, GENERAL)
        full_barrier(cmd)

    def _retire(self) -> None:
        if self.image is not None:
            self.defer(self.image.destroy)
            self.image = None

    def destroy(self) -> None:
        self._retire()
        sv = getattr(self, "_default_view", None)
        if sv is not None:
            sv.destroy()


_TARGETS = ("Tex2D", "Tex3D", "Tex2DArray", "TexCube", "TexCubeArray", "Renderbuffer")


class SamplerView:
    """A sampler view CSO: a target, a level range and a layer range of a texture; its
    ``VkImageView`` is made per image (a respecified texture gets a new one)."""

    def __init__(self, dev: VulkanDevice, defer: Callable[[Callable[[], None]], None], target: str,
                 min_level: int, num_levels: int, min_layer: int, num_layers: int) -> None:  # fmt: skip
        self.dev, self.defer, self.target = dev, defer, target
        self.range = (int(min_level), int(num_levels), int(min_layer), int(num_layers))
        self.texture_handle: Any = None  # MGPSamplerView.Texture (resolved at each use)
        self.internal_format = 0  # MGPSamplerView.InternalFormat (0: the texture's own)
        self._view: tuple[tuple[int, ...], Any] | None = None

    def view_of(self, dev: VulkanDevice, tex: "VkTextureResource", depth_only: bool) -> Any:
        from .descriptors import make_view

        img = tex.image
        assert img is not None
        if self.internal_format and self.internal_format != tex.internal_format:
            raise VulkanRefused("CreateSamplerView.InternalFormat",
                                f"{self.internal_format:#x} over a {tex.internal_format:#x} texture: "
                                "no reinterpreting views")  # fmt: skip
        base, n, layer, nl = self.range
        p = tex.params
        if p is not None:  # the texture's own level range (GL_TEXTURE_BASE/MAX_LEVEL)
            base = max(base, int(p.BaseLevel))
            if int(p.MaxLevel) >= base and int(p.MaxLevel) < img.levels:
                n = min(n or img.levels, int(p.MaxLevel) - base + 1)
        target = self.target if self.target in _TARGETS else tex.target
        ident = (img.serial, base, n, layer, nl, int(depth_only))
        if self._view is not None and self._view[0] == ident:
            return self._view[1]
        self._retire()
        view = make_view(dev, img, target, base, n, layer, nl, depth_only)
        self._view = (ident, view)
        return view

    def _retire(self) -> None:
        if self._view is not None:
            EPOCH[0] += 1  # no set may keep naming the view (its handle may come back)
            v, self._view = self._view[1], None
            self.defer(lambda: vk.vkDestroyImageView(self.dev.device, v, None))

    def destroy(self) -> None:
        self._retire()


def tex_default_view(
    tex: VkTextureResource, defer: Callable[[Callable[[], None]], None]
) -> SamplerView:
    """The whole-texture view a unit bound with no sampler view CSO samples."""
    sv = getattr(tex, "_default_view", None)
    if sv is None or sv.target != tex.target:
        if sv is not None:
            sv.destroy()
        sv = tex._default_view = SamplerView(tex.dev, defer, tex.target, 0, 0, 0, 0)  # type: ignore[attr-defined]
    return sv


def _has(dev: VulkanDevice, fmt: int, feature: int) -> bool:
    props = vk.vkGetPhysicalDeviceFormatProperties(dev.physical, fmt)
    return props.optimalTilingFeatures & feature == feature


def _flip_rows(data: bytes, rows: int) -> bytes:
    if rows <= 1:
        return data
    n = len(data) // rows
    return b"".join(data[i * n : (i + 1) * n] for i in reversed(range(rows)))
