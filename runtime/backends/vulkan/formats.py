"""GL internal formats -> Vulkan formats, with each format's real texel size.

:func:`format_info` is the one table the backend reads a texture's storage from: the
``VkFormat``, the bytes one texel of the upload / readback carries, the aspect (colour,
depth, depth + stencil) and the value class (``float`` for normalized and float formats,
``int`` / ``uint`` for integer ones). A format not in the table is a named refusal
(:class:`~.vk_enums.UnsupportedEnum`), never a guess. The GL values are GL registry
values (what the wire's ``InternalFormat`` carries), as :class:`~.vk_enums.GL`'s are.
"""

from __future__ import annotations

from dataclasses import dataclass

import vulkan as vk

from .vk_enums import UnsupportedEnum

__all__ = ["FormatInfo", "format_info", "GL_FORMATS"]


@dataclass(frozen=True)
class FormatInfo:
    name: str  # the GL name (for messages)
    vk_format: int
    texel: int  # bytes per texel in the upload and in the image
    aspect: str  # "color", "depth", "depth_stencil"
    value: str  # "float" (normalized / float), "int", "uint"
    components: int  # colour components the format stores (readback expands to RGBA)
    srgb: bool = False


_F = FormatInfo
#: GL internal format -> its Vulkan storage.
GL_FORMATS: dict[int, FormatInfo] = {
    0x8229: _F("R8", vk.VK_FORMAT_R8_UNORM, 1, "color", "float", 1),
    0x822B: _F("RG8", vk.VK_FORMAT_R8G8_UNORM, 2, "color", "float", 2),
    0x8058: _F("RGBA8", vk.VK_FORMAT_R8G8B8A8_UNORM, 4, "color", "float", 4),
    0x8C43: _F("SRGB8_ALPHA8", vk.VK_FORMAT_R8G8B8A8_SRGB, 4, "color", "float", 4, True),
    0x8059: _F("RGB10_A2", vk.VK_FORMAT_A2B10G10R10_UNORM_PACK32, 4, "color", "float", 4),
    0x8C3A: _F("R11F_G11F_B10F", vk.VK_FORMAT_B10G11R11_UFLOAT_PACK32, 4, "color", "float", 3),
    0x881A: _F("RGBA16F", vk.VK_FORMAT_R16G16B16A16_SFLOAT, 8, "color", "float", 4),
    0x8814: _F("RGBA32F", vk.VK_FORMAT_R32G32B32A32_SFLOAT, 16, "color", "float", 4),
    0x8236: _F("R32UI", vk.VK_FORMAT_R32_UINT, 4, "color", "uint", 1),
    0x8D7C: _F("RGBA8UI", vk.VK_FORMAT_R8G8B8A8_UINT, 4, "color", "uint", 4),
    0x8D8E: _F("RGBA8I", vk.VK_FORMAT_R8G8B8A8_SINT, 4, "color", "int", 4),
    0x8D82: _F("RGBA32I", vk.VK_FORMAT_R32G32B32A32_SINT, 16, "color", "int", 4),
    0x8D70: _F("RGBA32UI", vk.VK_FORMAT_R32G32B32A32_UINT, 16, "color", "uint", 4),
    0x81A5: _F("DEPTH_COMPONENT16", vk.VK_FORMAT_D16_UNORM, 2, "depth", "float", 1),
    0x81A6: _F("DEPTH_COMPONENT24", vk.VK_FORMAT_X8_D24_UNORM_PACK32, 4, "depth", "float", 1),
    0x8CAC: _F("DEPTH_COMPONENT32F", vk.VK_FORMAT_D32_SFLOAT, 4, "depth", "float", 1),
    0x88F0: _F("DEPTH24_STENCIL8", vk.VK_FORMAT_D24_UNORM_S8_UINT, 4, "depth_stencil", "float", 1),
    0x8CAD: _F("DEPTH32F_STENCIL8", vk.VK_FORMAT_D32_SFLOAT_S8_UINT, 8, "depth_stencil", "float", 1),
}  # fmt: skip
#: Stand-ins where the device lacks the format GL names (same bits or more, same meaning).
_FALLBACKS = {
    vk.VK_FORMAT_X8_D24_UNORM_PACK32: (vk.VK_FORMAT_D32_SFLOAT,),
    vk.VK_FORMAT_D24_UNORM_S8_UINT: (vk.VK_FORMAT_D32_SFLOAT_S8_UINT,),
}

_BY_VK = {f.vk_format: f for f in GL_FORMATS.values()}


def format_info(
    internal_format: int, where: str = "ResourceRespecify.InternalFormat"
) -> FormatInfo:
    """The storage of GL ``internal_format`` (refused by name when the table lacks it)."""
    info = GL_FORMATS.get(int(internal_format))
    if info is None:
        raise UnsupportedEnum(where, f"{int(internal_format):#x} is no internal format this "
                              "backend stores (formats: "
                              + ", ".join(f.name for f in GL_FORMATS.values()) + ")")  # fmt: skip
    return info


def vk_info(vk_format: int) -> FormatInfo | None:
    """The table row of a Vulkan format (None: an internal format, e.g. the default RGBA8)."""
    return _BY_VK.get(vk_format)


#: FormatInfo.aspect -> the image aspects a format of it has
ASPECT_BITS = {
    "color": vk.VK_IMAGE_ASPECT_COLOR_BIT,
    "depth": vk.VK_IMAGE_ASPECT_DEPTH_BIT,
    "depth_stencil": vk.VK_IMAGE_ASPECT_DEPTH_BIT | vk.VK_IMAGE_ASPECT_STENCIL_BIT,
}


def storage_formats(info: FormatInfo) -> tuple[int, ...]:
    """The Vulkan formats ``info`` may be stored in: the table's, then its stand-ins."""
    return (info.vk_format,) + _FALLBACKS.get(info.vk_format, ())


def supported(dev, info: FormatInfo, feature: int) -> int:  # type: ignore[no-untyped-def]
    """The Vulkan format to store ``info`` in on ``dev`` (the table's, else its stand-in);
    refused by name when neither has ``feature`` with optimal tiling, or when the image
    the format makes would not have the aspects ``info`` names (every copy, barrier and
    view of the image names its aspects: a depth image addressed as colour is undefined
    behaviour that kills a driver's process, so it is refused here, at the record)."""
    from .memory import aspect_of

    for fmt in storage_formats(info):
        props = vk.vkGetPhysicalDeviceFormatProperties(dev.physical, fmt)
        if props.optimalTilingFeatures & feature == feature:
            if aspect_of(fmt) != ASPECT_BITS[info.aspect]:
                raise UnsupportedEnum("ResourceRespecify.InternalFormat",
                                      f"{info.name}: Vulkan format {fmt} has aspects "
                                      f"{aspect_of(fmt):#x}, expected {info.aspect} "
                                      f"({ASPECT_BITS[info.aspect]:#x})")  # fmt: skip
            return fmt
    raise UnsupportedEnum("ResourceRespecify.InternalFormat",
                          f"{info.name}: the device cannot sample / render it")  # fmt: skip
