"""Buffers and images with their own device memory (one allocation each).

:class:`GpuBuffer` is host-visible and coherent (vertex, index, uniform and readback
buffers: the scenes' sizes are small and a staging copy would only add a copy);
:class:`GpuImage` is device-local with one view. ``destroy()`` frees at once: callers that
may still have the object in flight hand ``destroy`` to a
:class:`~.lifetime.DeletionQueue` instead.
"""

from __future__ import annotations

import itertools
from typing import Any

import vulkan as vk

from .device import VulkanDevice

__all__ = ["GpuBuffer", "GpuImage", "aspect_of", "DEPTH_STENCIL_FORMATS"]

HOST = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
DEVICE_LOCAL = vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT

DEPTH_STENCIL_FORMATS = {
    vk.VK_FORMAT_D24_UNORM_S8_UINT: vk.VK_IMAGE_ASPECT_DEPTH_BIT | vk.VK_IMAGE_ASPECT_STENCIL_BIT,
    vk.VK_FORMAT_D32_SFLOAT_S8_UINT: vk.VK_IMAGE_ASPECT_DEPTH_BIT | vk.VK_IMAGE_ASPECT_STENCIL_BIT,
    vk.VK_FORMAT_D16_UNORM_S8_UINT: vk.VK_IMAGE_ASPECT_DEPTH_BIT | vk.VK_IMAGE_ASPECT_STENCIL_BIT,
    vk.VK_FORMAT_D32_SFLOAT: vk.VK_IMAGE_ASPECT_DEPTH_BIT,
    vk.VK_FORMAT_X8_D24_UNORM_PACK32: vk.VK_IMAGE_ASPECT_DEPTH_BIT,  # DEPTH_COMPONENT24
    vk.VK_FORMAT_D16_UNORM: vk.VK_IMAGE_ASPECT_DEPTH_BIT,
}


_IMAGE_SERIALS = itertools.count(1)


def aspect_of(fmt: int) -> int:
    return DEPTH_STENCIL_FORMATS.get(fmt, vk.VK_IMAGE_ASPECT_COLOR_BIT)


class GpuBuffer:
    """A host-visible buffer of ``size`` bytes, persistently mapped."""

    def __init__(self, dev: VulkanDevice, size: int, usage: int) -> None:
        self.dev = dev
        self.size = max(int(size), 4)
        info = vk.VkBufferCreateInfo(
            size=self.size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE
        )
        self.buffer = vk.vkCreateBuffer(dev.device, info, None)
        req = vk.vkGetBufferMemoryRequirements(dev.device, self.buffer)
        alloc = vk.VkMemoryAllocateInfo(
            allocationSize=req.size, memoryTypeIndex=dev.memory_type(req.memoryTypeBits, HOST)
        )
        self.memory = vk.vkAllocateMemory(dev.device, alloc, None)
        vk.vkBindBufferMemory(dev.device, self.buffer, self.memory, 0)
        # the whole allocation is mapped: a flush to VK_WHOLE_SIZE then ends at the memory's
        # end, which every nonCoherentAtomSize allows (NVIDIA's is 64; the buffer's end is not)
        self.alloc_size = int(req.size)
        self.mapped = vk.vkMapMemory(dev.device, self.memory, 0, self.alloc_size, 0)

    def write(self, offset: int, data: bytes | memoryview) -> None:
        n = len(data)
        if offset < 0 or offset + n > self.size:
            raise ValueError(f"buffer write [{offset}, {offset + n}) outside {self.size} bytes")
        self.mapped[offset : offset + n] = bytes(data)

    def read(self, offset: int = 0, size: int | None = None) -> bytes:
        n = self.size - offset if size is None else size
        return bytes(self.mapped[offset : offset + n])

    def destroy(self) -> None:
        if self.buffer is None:
            return
        vk.vkUnmapMemory(self.dev.device, self.memory)
        vk.vkDestroyBuffer(self.dev.device, self.buffer, None)
        vk.vkFreeMemory(self.dev.device, self.memory, None)
        self.buffer = self.memory = None


class GpuImage:
    """A device-local image (2-D unless told: ``image_type`` 3-D with ``depth``, ``layers``
    array layers, ``cube`` six layers per cube) with one attachment view (level 0, layer 0,
    2-D); ``layout`` is its current layout. ``flipped``: its rows are stored top-down (a
    render target's, drawn through the negative-height viewport) rather than GL's
    bottom-up order a sampler reads."""

    def __init__(self, dev: VulkanDevice, width: int, height: int, fmt: int, usage: int,
                 levels: int = 1, *, depth: int = 1, layers: int = 1, cube: bool = False,
                 image_type: int = vk.VK_IMAGE_TYPE_2D, samples: int = 1,
                 flipped: bool = True) -> None:  # fmt: skip
        self.dev = dev
        self.serial = next(_IMAGE_SERIALS)  # identity that is never reused (unlike id())
        self.width, self.height, self.format, self.levels = width, height, fmt, levels
        self.depth, self.layers, self.cube, self.image_type = depth, layers, cube, image_type
        self.samples, self.flipped, self.usage = samples, flipped, usage
        self.aspect = aspect_of(fmt)
        info = vk.VkImageCreateInfo(
            flags=vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT if cube else 0,
            imageType=image_type, format=fmt,
            extent=vk.VkExtent3D(width=width, height=height, depth=depth),
            mipLevels=levels, arrayLayers=layers, samples=samples,
            tiling=vk.VK_IMAGE_TILING_OPTIMAL, usage=usage,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
        )  # fmt: skip
        self.image = vk.vkCreateImage(dev.device, info, None)
        req = vk.vkGetImageMemoryRequirements(dev.device, self.image)
        alloc = vk.VkMemoryAllocateInfo(
            allocationSize=req.size,
            memoryTypeIndex=dev.memory_type(req.memoryTypeBits, DEVICE_LOCAL),
        )
        self.memory = vk.vkAllocateMemory(dev.device, alloc, None)
        vk.vkBindImageMemory(dev.device, self.image, self.memory, 0)
        plain = image_type == vk.VK_IMAGE_TYPE_2D
        viewable = usage & (vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
                            | vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT)  # fmt: skip
        self.view = None if not viewable else vk.vkCreateImageView(
            dev.device,
            vk.VkImageViewCreateInfo(
                image=self.image,
                viewType=vk.VK_IMAGE_VIEW_TYPE_2D if plain else vk.VK_IMAGE_VIEW_TYPE_3D,
                format=fmt,
                subresourceRange=vk.VkImageSubresourceRange(
                    aspectMask=self.aspect, baseMipLevel=0, levelCount=1 if plain else levels,
                    baseArrayLayer=0, layerCount=1),
            ),
            None,
        )  # fmt: skip
        self.layout = vk.VK_IMAGE_LAYOUT_UNDEFINED

    def range(self) -> Any:
        return vk.VkImageSubresourceRange(
            aspectMask=self.aspect, baseMipLevel=0, levelCount=self.levels,
            baseArrayLayer=0, layerCount=self.layers,
        )  # fmt: skip

    def barrier(self, cmd: Any, new_layout: int, src_access: int, dst_access: int,
                src_stage: int, dst_stage: int) -> None:  # fmt: skip
        """Record a layout transition (and the memory dependency) into ``cmd``."""
        b = vk.VkImageMemoryBarrier(
            srcAccessMask=src_access, dstAccessMask=dst_access, oldLayout=self.layout,
            newLayout=new_layout, srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
            dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=self.image,
            subresourceRange=self.range(),
        )  # fmt: skip
        vk.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, None, 0, None, 1, [b])
        self.layout = new_layout

    def destroy(self) -> None:
        if self.image is None:
            return
        if self.view is not None:  # a transfer-only scratch image has none
            vk.vkDestroyImageView(self.dev.device, self.view, None)
        vk.vkDestroyImage(self.dev.device, self.image, None)
        vk.vkFreeMemory(self.dev.device, self.memory, None)
        self.image = self.view = self.memory = None
