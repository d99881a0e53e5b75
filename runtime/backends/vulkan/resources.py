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

import vulkan as vk

from .device import VulkanDevice
from .memory import GpuBuffer, GpuImage
from .targets import COLOR_USAGE, DEPTH_USAGE, GENERAL, full_barrier, with_layout
from .vk_enums import DEPTH_FORMATS, texture_format

__all__ = ["BUFFER_USAGE", "VkBufferResource", "VkTextureResource"]

BUFFER_USAGE = (
    vk.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | vk.VK_BUFFER_USAGE_INDEX_BUFFER_BIT
    | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
    | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
)  # fmt: skip


class VkBufferResource:
    def __init__(self, dev: VulkanDevice, defer: Callable[[Callable[[], None]], None]) -> None:
        self.dev = dev
        self.defer = defer
        self.gpu: GpuBuffer | None = None
        self.size = 0
        self.used_serial = 0  # the last submission serial that may read it
        self.renames = 0

    def respecify(self, size: int) -> None:
        self._retire()
        self.size = size
        self.gpu = GpuBuffer(self.dev, size, BUFFER_USAGE)

    def write(self, offset: int, data: bytes, completed: int) -> None:
        if self.gpu is None:
            self.respecify(offset + len(data))
        assert self.gpu is not None
        if self.used_serial > completed:  # a recorded / in-flight draw may still read it
            old = self.gpu
            self.gpu = GpuBuffer(self.dev, old.size, BUFFER_USAGE)
            self.gpu.write(0, old.read())
            self.defer(old.destroy)
            self.renames += 1
            self.used_serial = 0
        self.gpu.write(offset, data)

    def use(self, serial: int) -> Any:
        self.used_serial = serial
        assert self.gpu is not None
        return self.gpu.buffer

    def _retire(self) -> None:
        if self.gpu is not None:
            self.defer(self.gpu.destroy)
            self.gpu = None

    def destroy(self) -> None:
        self._retire()


class VkTextureResource:
    def __init__(self, dev: VulkanDevice, defer: Callable[[Callable[[], None]], None],
                 depth_format: int) -> None:  # fmt: skip
        self.dev = dev
        self.defer = defer
        self.depth_format = depth_format
        self.image: GpuImage | None = None
        self.internal_format = 0
        self._desc: tuple[int, int, int, int] | None = None

    def respecify(self, internal_format: int, width: int, height: int, levels: int,
                  whole: bool = True) -> None:  # fmt: skip
        """New storage for the description. ``whole`` False: the respecify names one level
        (``MGPResourceDesc.HasRespecifiedLevel``); an image already of this description is
        kept (the other levels' texels stay). No extent: no storage yet (no image)."""
        desc = (internal_format, width, height, max(levels, 1))
        if not whole and self.image is not None and desc == self._desc:
            return
        self._retire()
        self.internal_format, self._desc = internal_format, desc
        if not width or not height:
            return
        if internal_format in DEPTH_FORMATS:
            self.image = GpuImage(self.dev, width, height, self.depth_format, DEPTH_USAGE)
        else:
            fmt = texture_format(internal_format)
            self.image = GpuImage(self.dev, width, height, fmt, COLOR_USAGE, max(levels, 1))

    def record_upload(self, cmd: Any, level: int, regions: list[tuple[int, int, int, int, bytes]],
                      serial: int) -> None:  # fmt: skip
        """Record each (x, y, w, h, tightly packed rows, GL bottom-up) region into ``cmd``."""
        img = self.image
        assert img is not None
        if img.layout != GENERAL:
            img.barrier(cmd, GENERAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                        vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk.VK_PIPELINE_STAGE_TRANSFER_BIT)  # fmt: skip
        full_barrier(cmd)
        for x, y, w, h, data in regions:
            staging = GpuBuffer(self.dev, len(data), vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
            # GL row 0 is the bottom; the image keeps GL's rows top-down (flipped viewport).
            hgt = max(img.height >> level, 1)
            region = vk.VkBufferImageCopy(
                bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
                imageSubresource=vk.VkImageSubresourceLayers(
                    aspectMask=img.aspect, mipLevel=level, baseArrayLayer=0, layerCount=1),
                imageOffset=vk.VkOffset3D(x=x, y=hgt - y - h, z=0),
                imageExtent=vk.VkExtent3D(width=w, height=h, depth=1),
            )  # fmt: skip
            flipped = _flip_rows(data, h)
            staging.write(0, flipped)
            with_layout(cmd, img, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                        lambda layout, b=staging.buffer, r=region: vk.vkCmdCopyBufferToImage(
                            cmd, b, img.image, layout, 1, [r]))  # fmt: skip
            self.defer(staging.destroy)
        full_barrier(cmd)

    def _retire(self) -> None:
        if self.image is not None:
            self.defer(self.image.destroy)
            self.image = None

    def destroy(self) -> None:
        self._retire()


def _flip_rows(data: bytes, rows: int) -> bytes:
    if rows <= 1:
        return data
    n = len(data) // rows
    return b"".join(data[i * n : (i + 1) * n] for i in reversed(range(rows)))
