"""Offscreen render targets, render passes cached by key, framebuffers and readback.

Images live in ``VK_IMAGE_LAYOUT_GENERAL`` for their whole life (attachment, sampled,
copy source): one layout means one render pass per (formats, load ops) and no per-draw
layout tracking; a full memory barrier separates every render pass from what follows.

A :class:`RenderPassKey` is the colour formats, the depth-stencil format (or none) and
the load op of each; :meth:`RenderPassKey.compat` drops the load ops (every load op of a
format set gives a compatible pass, so pipelines and framebuffers are made against the
compatible one and the memo keys on it).

GL orientation: the backend renders with a negative-height viewport (origin at the
bottom-left, GL's winding unchanged), so image row 0 is GL's top row; :meth:`readback`
returns rows bottom-up, as ``glReadPixels`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import vulkan as vk

from .device import VulkanDevice
from .memory import GpuBuffer, GpuImage, aspect_of

__all__ = ["RenderPassKey", "RenderPassCache", "RenderTarget", "LOAD", "CLEAR", "full_barrier"]

LOAD = vk.VK_ATTACHMENT_LOAD_OP_LOAD
CLEAR = vk.VK_ATTACHMENT_LOAD_OP_CLEAR
GENERAL = vk.VK_IMAGE_LAYOUT_GENERAL

COLOR_USAGE = (
    vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT
    | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
)  # fmt: skip
DEPTH_USAGE = (
    vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
    | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
)  # fmt: skip
#: What an image holds before anything wrote it (GL's initial clear values: colour
#: (0, 0, 0, 0), depth 1.0, stencil 0): a fresh image's memory is whatever the allocator
#: hands back -- on a software device, pixels of an image freed earlier.
INITIAL_COLOR = (0.0, 0.0, 0.0, 0.0)
INITIAL_DEPTH_STENCIL = (1.0, 0)
_BYTES_PER_PIXEL = {vk.VK_FORMAT_R8G8B8A8_UNORM: 4, vk.VK_FORMAT_B8G8R8A8_UNORM: 4,
                    vk.VK_FORMAT_R8_UNORM: 1, vk.VK_FORMAT_R16G16B16A16_SFLOAT: 8,
                    vk.VK_FORMAT_R32G32B32A32_SFLOAT: 16}  # fmt: skip


def full_barrier(cmd: Any) -> None:
    """Every earlier write visible to every later access (between render passes/copies)."""
    mb = vk.VkMemoryBarrier(
        srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
        dstAccessMask=vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT,
    )
    vk.vkCmdPipelineBarrier(
        cmd, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        0, 1, [mb], 0, None, 0, None,
    )  # fmt: skip


@dataclass(frozen=True)
class RenderPassKey:
    colors: tuple[int, ...]  # VkFormat per colour attachment
    depth: int | None  # VkFormat of the depth-stencil attachment
    color_load: tuple[int, ...]
    depth_load: int = LOAD
    samples: int = 1  # every attachment's sample count (a multisampled target: > 1)

    def __hash__(self) -> int:  # hashed per draw inside the pipeline key: compute once
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.colors, self.depth, self.color_load, self.depth_load, self.samples))
            object.__setattr__(self, "_hash", h)
        return h

    @classmethod
    def loading(
        cls, colors: tuple[int, ...], depth: int | None, samples: int = 1
    ) -> "RenderPassKey":
        return cls(colors, depth, (LOAD,) * len(colors), LOAD, samples)

    def compat(self) -> "RenderPassKey":
        return replace(self, color_load=(LOAD,) * len(self.colors), depth_load=LOAD)


class RenderPassCache:
    """``key -> VkRenderPass``; ``created`` counts passes made."""

    def __init__(self, dev: VulkanDevice) -> None:
        self.dev = dev
        self._passes: dict[RenderPassKey, Any] = {}
        self.created = 0

    def get(self, key: RenderPassKey) -> Any:
        rp = self._passes.get(key)
        if rp is None:
            rp = self._passes[key] = self._make(key)
            self.created += 1
        return rp

    def _make(self, key: RenderPassKey) -> Any:
        atts, refs = [], []
        for i, (fmt, load) in enumerate(zip(key.colors, key.color_load)):
            atts.append(
                self._attachment(fmt, load, vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, key.samples)
            )
            refs.append(vk.VkAttachmentReference(attachment=i, layout=GENERAL))
        depth_ref = None
        if key.depth is not None:
            stencil = key.depth_load if aspect_of(key.depth) & vk.VK_IMAGE_ASPECT_STENCIL_BIT else (
                vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE)  # fmt: skip
            atts.append(self._attachment(key.depth, key.depth_load, stencil, key.samples))
            depth_ref = vk.VkAttachmentReference(attachment=len(key.colors), layout=GENERAL)
        sub = vk.VkSubpassDescription(
            pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
            colorAttachmentCount=len(refs), pColorAttachments=refs or None,
            pDepthStencilAttachment=depth_ref,
        )  # fmt: skip
        info = vk.VkRenderPassCreateInfo(
            attachmentCount=len(atts), pAttachments=atts, subpassCount=1, pSubpasses=[sub]
        )
        return vk.vkCreateRenderPass(self.dev.device, info, None)

    @staticmethod
    def _attachment(fmt: int, load: int, stencil_load: int, samples: int = 1) -> Any:
        store = vk.VK_ATTACHMENT_STORE_OP_STORE
        return vk.VkAttachmentDescription(
            format=fmt, samples=samples, loadOp=load, storeOp=store,  # samples: the count is the bit
            stencilLoadOp=stencil_load,
            stencilStoreOp=store if stencil_load != vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE
            else vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
            initialLayout=GENERAL, finalLayout=GENERAL,
        )  # fmt: skip

    def destroy(self) -> None:
        for rp in self._passes.values():
            vk.vkDestroyRenderPass(self.dev.device, rp, None)
        self._passes.clear()


def pick_depth_format(dev: VulkanDevice) -> int:
    """The first depth-stencil format the device can render to (D24S8, else D32S8)."""
    for fmt in (vk.VK_FORMAT_D24_UNORM_S8_UINT, vk.VK_FORMAT_D32_SFLOAT_S8_UINT):
        props = vk.vkGetPhysicalDeviceFormatProperties(dev.physical, fmt)
        if props.optimalTilingFeatures & vk.VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT:
            return fmt
    raise RuntimeError(f"{dev.name}: no renderable depth-stencil format")


def init_general(cmd: Any, images: list[GpuImage]) -> None:
    """Move freshly made images to GENERAL (their one layout); an image nothing wrote yet
    (layout UNDEFINED) is cleared to :data:`INITIAL_COLOR` / :data:`INITIAL_DEPTH_STENCIL`
    first, so every render target starts from defined pixels."""
    rw = vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT
    for img in images:
        if img.layout == vk.VK_IMAGE_LAYOUT_UNDEFINED:
            img.barrier(cmd, GENERAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                        vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        vk.VK_PIPELINE_STAGE_TRANSFER_BIT)  # fmt: skip
            if img.aspect == vk.VK_IMAGE_ASPECT_COLOR_BIT:
                value = vk.VkClearColorValue(float32=list(INITIAL_COLOR))
                vk.vkCmdClearColorImage(cmd, img.image, GENERAL, value, 1, [img.range()])
            else:
                d, s = INITIAL_DEPTH_STENCIL
                value = vk.VkClearDepthStencilValue(depth=d, stencil=s)
                vk.vkCmdClearDepthStencilImage(cmd, img.image, GENERAL, value, 1, [img.range()])
            img.barrier(cmd, GENERAL, vk.VK_ACCESS_TRANSFER_WRITE_BIT, rw,
                        vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT)  # fmt: skip
        elif img.layout != GENERAL:
            img.barrier(cmd, GENERAL, 0, rw, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT)  # fmt: skip


def with_layout(cmd: Any, img: GpuImage, layout: int, record: Any) -> None:
    """Record ``record(layout)`` with ``img`` in ``layout`` (a transfer), then back to GENERAL."""
    rw = vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT
    every = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
    img.barrier(cmd, layout, rw, rw, every, every)
    record(layout)
    img.barrier(cmd, GENERAL, rw, rw, every, every)


class _Owned:
    """An image source that is the image itself (a target's own attachments)."""

    def __init__(self, image: GpuImage) -> None:
        self.image = image


class RenderTarget:
    """Colour attachments + an optional depth-stencil attachment.

    Attachments are *sources*: objects with an ``image`` attribute read at every use (a
    texture respecified while attached brings its new image; the framebuffer made for the
    old one retires through ``defer``). A target's own images are destroyed with it.
    """

    def __init__(self, dev: VulkanDevice, width: int, height: int, colors: list[Any],
                 depth: Any | None, owned: list[GpuImage],
                 defer: Any = None) -> None:  # fmt: skip
        self.dev = dev
        self.width, self.height = width, height
        self._colors = colors
        self._depth = depth
        self.owned = owned  # images this target made (destroyed with it)
        self.defer = defer
        self.read_index = 0  # the colour attachment ReadPixels reads (glReadBuffer)
        #: draw buffer -> the colour attachment it writes (glClearBuffer's drawbuffer); a
        #: draw buffer not here is GL_NONE
        self.draw_index: dict[int, int] = {i: i for i in range(len(colors))}
        self._key: RenderPassKey | None = None
        self._key_images: tuple[Any, ...] = ()
        self._fb: tuple[tuple[int, ...], Any] | None = None

    @classmethod
    def offscreen(cls, dev: VulkanDevice, width: int, height: int, color_formats: tuple[int, ...],
                  depth_format: int | None) -> "RenderTarget":  # fmt: skip
        colors = [GpuImage(dev, width, height, f, COLOR_USAGE) for f in color_formats]
        depth = GpuImage(dev, width, height, depth_format, DEPTH_USAGE) if depth_format else None
        return cls(dev, width, height, [_Owned(c) for c in colors],
                   _Owned(depth) if depth else None, colors + ([depth] if depth else []))  # fmt: skip

    @property
    def colors(self) -> list[GpuImage]:
        return [c.image for c in self._colors]

    @property
    def depth(self) -> GpuImage | None:
        return self._depth.image if self._depth is not None else None

    def uses(self, source: Any) -> bool:
        return any(c is source for c in self._colors) or self._depth is source

    def key(self) -> RenderPassKey:
        """The compatible (all-LOAD) key of this target's attachments."""
        images = tuple(c.image for c in self._colors)
        depth = self._depth.image if self._depth is not None else None
        if self._key is None or self._key_images != (images, depth):  # a respecify moved one
            self._key_images = (images, depth)
            first = images[0] if images else depth
            self._key = RenderPassKey.loading(tuple(i.format for i in images),
                                              depth.format if depth else None,
                                              first.samples if first is not None else 1)  # fmt: skip
        return self._key

    def images(self) -> list[GpuImage]:
        return self.colors + ([self.depth] if self.depth else [])

    def framebuffer(self, passes: RenderPassCache) -> Any:
        images = self.images()
        ident = tuple(img.serial for img in images)
        if self._fb is not None and self._fb[0] == ident:
            return self._fb[1]
        self._retire_fb()
        views = [img.view for img in images]
        info = vk.VkFramebufferCreateInfo(
            renderPass=passes.get(self.key()), attachmentCount=len(views), pAttachments=views,
            width=self.width, height=self.height, layers=1,
        )  # fmt: skip
        fb = vk.vkCreateFramebuffer(self.dev.device, info, None)
        self._fb = (ident, fb)
        return fb

    def _retire_fb(self) -> None:
        if self._fb is None:
            return
        fb, self._fb = self._fb[1], None
        destroy = lambda: vk.vkDestroyFramebuffer(self.dev.device, fb, None)  # noqa: E731
        if self.defer is not None:
            self.defer(destroy)
        else:
            destroy()

    def record_readback(self, cmd: Any, index: int, x: int, y: int, w: int, h: int) -> GpuBuffer:
        """Record a copy of GL rect (x, y, w, h) of colour ``index`` into a new host buffer."""
        img = self.colors[index]
        if img.samples > 1:
            from .errors import VulkanRefused

            raise VulkanRefused("ReadPixels.ReadSurface", "a multisampled buffer (GL: "
                                "INVALID_OPERATION; resolve it with a blit first)")  # fmt: skip
        from .formats import vk_info

        info = vk_info(img.format)
        bpp = info.texel if info is not None else _BYTES_PER_PIXEL[img.format]
        buf = GpuBuffer(self.dev, w * h * bpp, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        buf.payload = w * h * bpp  # type: ignore[attr-defined]  # the buffer rounds up to 4
        region = vk.VkBufferImageCopy(
            bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(
                aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, mipLevel=0, baseArrayLayer=0, layerCount=1),
            imageOffset=vk.VkOffset3D(x=x, y=self.height - y - h, z=0),
            imageExtent=vk.VkExtent3D(width=w, height=h, depth=1),
        )  # fmt: skip
        full_barrier(cmd)
        with_layout(cmd, img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                    lambda layout: vk.vkCmdCopyImageToBuffer(cmd, img.image, layout, buf.buffer,
                                                             1, [region]))  # fmt: skip
        mb = vk.VkMemoryBarrier(srcAccessMask=vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                                dstAccessMask=vk.VK_ACCESS_HOST_READ_BIT)  # fmt: skip
        vk.vkCmdPipelineBarrier(cmd, vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                                vk.VK_PIPELINE_STAGE_HOST_BIT, 0, 1, [mb], 0, None, 0, None)  # fmt: skip
        return buf

    @staticmethod
    def gl_rows(raw: bytes, w: int, h: int, bpp: int) -> bytes:
        """Image rows (top-down) -> GL rows (bottom-up)."""
        return np.frombuffer(raw, np.uint8).reshape(h, w * bpp)[::-1].tobytes()

    def destroy(self) -> None:
        if self._fb is not None:
            vk.vkDestroyFramebuffer(self.dev.device, self._fb[1], None)
            self._fb = None
        for img in self.owned:
            img.destroy()
        self.owned = []
