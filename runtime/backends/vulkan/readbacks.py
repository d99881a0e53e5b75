"""Image texels as GL packs them: every format of :mod:`.formats`, every aspect.

:func:`copy_region` records ``vkCmdCopyImageToBuffer`` of one aspect of a GL rectangle of
an image (level, layers) into a host buffer; :func:`gl_rows` puts the rows in GL's order
(bottom-up) whatever the image stores (a render target keeps its rows top-down,
:attr:`~.memory.GpuImage.flipped`). :func:`pack` turns the raw aspect bytes into what
``glReadPixels`` / ``glGetTexImage`` return for a (format, type) pair, tight (no row
padding: the client scatters with its own pack state):

- colour: the image's values decoded (UNORM, sRGB as stored, packed 10/10/10/2 and
  11/11/10 floats, half and single floats, signed and unsigned integers; missing
  components read G = B = 0, A = 1) and encoded as ``RED`` / ``RG`` / ``RGB`` / ``RGBA``
  of ``UNSIGNED_BYTE``, ``UNSIGNED_SHORT``, ``HALF_FLOAT``, ``FLOAT``,
  ``UNSIGNED_INT_2_10_10_10_REV`` (RGBA), ``UNSIGNED_INT_10F_11F_11F_REV`` (RGB), or
  ``*_INTEGER`` of the integer types for integer images; a normalized / float image read
  as integers (or the reverse) is refused by name, as GL refuses it.
- depth: ``DEPTH_COMPONENT`` as ``FLOAT``, ``UNSIGNED_INT``, ``UNSIGNED_SHORT``; stencil:
  ``STENCIL_INDEX`` / ``UNSIGNED_BYTE``; both: ``DEPTH_STENCIL`` as ``UNSIGNED_INT_24_8``
  (depth in the top 24 bits, stencil the low 8) or ``FLOAT_32_UNSIGNED_INT_24_8_REV`` (a
  float, then a word with stencil in its low 8 bits). Vulkan copies a 24-bit depth aspect
  as a 32-bit word with the depth in its low 24 bits, the stencil aspect as one byte.

:func:`native` names the pairs whose packed bytes ARE the Vulkan copy's bytes (a pack
buffer then takes the copy on the device, no conversion on the host).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import vulkan as vk

from .errors import GL_ERR, GlError
from .formats import vk_info
from .memory import GpuBuffer
from .targets import full_barrier, with_layout
from .vk_enums import UnsupportedEnum

__all__ = ["GLP", "pack", "native", "copy_region", "aspect_bytes", "gl_rows", "texel_layout"]


class GLP:
    """GL registry values of the pack formats and types."""

    UNSIGNED_BYTE, BYTE, UNSIGNED_SHORT, SHORT = 0x1401, 0x1400, 0x1403, 0x1402
    UNSIGNED_INT, INT, FLOAT, HALF_FLOAT = 0x1405, 0x1404, 0x1406, 0x140B
    UNSIGNED_INT_2_10_10_10_REV, UNSIGNED_INT_10F_11F_11F_REV = 0x8368, 0x8C3B
    UNSIGNED_INT_24_8, FLOAT_32_UNSIGNED_INT_24_8_REV = 0x84FA, 0x8DAD
    RED, RG, RGB, RGBA = 0x1903, 0x8227, 0x1907, 0x1908
    RED_INTEGER, RG_INTEGER, RGB_INTEGER, RGBA_INTEGER = 0x8D94, 0x8228, 0x8D98, 0x8D99
    DEPTH_COMPONENT, STENCIL_INDEX, DEPTH_STENCIL = 0x1902, 0x1901, 0x84F9


_COMPONENTS = {GLP.RED: 1, GLP.RG: 2, GLP.RGB: 3, GLP.RGBA: 4, GLP.RED_INTEGER: 1,
               GLP.RG_INTEGER: 2, GLP.RGB_INTEGER: 3, GLP.RGBA_INTEGER: 4}  # fmt: skip
_INTEGER_FORMATS = {GLP.RED_INTEGER, GLP.RG_INTEGER, GLP.RGB_INTEGER, GLP.RGBA_INTEGER}
_INT_TYPES = {GLP.UNSIGNED_BYTE: np.uint8, GLP.BYTE: np.int8, GLP.UNSIGNED_SHORT: np.uint16,
              GLP.SHORT: np.int16, GLP.UNSIGNED_INT: np.uint32, GLP.INT: np.int32}  # fmt: skip
_D24 = (vk.VK_FORMAT_X8_D24_UNORM_PACK32, vk.VK_FORMAT_D24_UNORM_S8_UINT)
_D32F = (vk.VK_FORMAT_D32_SFLOAT, vk.VK_FORMAT_D32_SFLOAT_S8_UINT)
DEPTH, STENCIL, COLOR = vk.VK_IMAGE_ASPECT_DEPTH_BIT, vk.VK_IMAGE_ASPECT_STENCIL_BIT, (
    vk.VK_IMAGE_ASPECT_COLOR_BIT)  # fmt: skip

#: VkFormat -> (numpy dtype of one component, components) of the colour formats stored
#: as plain arrays (the packed ones are decoded by hand).
_PLAIN = {
    vk.VK_FORMAT_R8_UNORM: ("unorm", np.uint8, 1), vk.VK_FORMAT_R8G8_UNORM: ("unorm", np.uint8, 2),
    vk.VK_FORMAT_R8G8B8A8_UNORM: ("unorm", np.uint8, 4),
    vk.VK_FORMAT_R8G8B8A8_SRGB: ("unorm", np.uint8, 4),
    vk.VK_FORMAT_B8G8R8A8_UNORM: ("unorm", np.uint8, 4),
    vk.VK_FORMAT_R16G16B16A16_SFLOAT: ("float", np.float16, 4),
    vk.VK_FORMAT_R32G32B32A32_SFLOAT: ("float", np.float32, 4),
    vk.VK_FORMAT_R32_UINT: ("uint", np.uint32, 1), vk.VK_FORMAT_R8G8B8A8_UINT: ("uint", np.uint8, 4),
    vk.VK_FORMAT_R8G8B8A8_SINT: ("int", np.int8, 4), vk.VK_FORMAT_R32G32B32A32_SINT: ("int", np.int32, 4),
    vk.VK_FORMAT_R32G32B32A32_UINT: ("uint", np.uint32, 4),
}  # fmt: skip


def aspect_bytes(fmt: int, aspect: int) -> int:
    """Bytes per texel of ``aspect`` of ``fmt`` in a buffer copy."""
    if aspect == STENCIL:
        return 1
    if aspect == DEPTH:
        return 2 if fmt in (vk.VK_FORMAT_D16_UNORM, vk.VK_FORMAT_D16_UNORM_S8_UINT) else 4
    info = vk_info(fmt)
    if info is not None:
        return info.texel
    kind, dt, n = _PLAIN[fmt]
    return np.dtype(dt).itemsize * n


def _name(fmt: int) -> str:
    info = vk_info(fmt)
    return info.name if info is not None else f"VkFormat {fmt}"


def _uf(bits: np.ndarray, mbits: int) -> np.ndarray:
    """Unsigned 11- / 10-bit floats (5-bit exponent, ``mbits`` mantissa) -> float32 (their
    exponent is a half float's: the bits move into a half and convert exactly)."""
    e = (bits >> mbits) & 0x1F
    m = bits & ((1 << mbits) - 1)
    half = ((e << 10) | (m << (10 - mbits))).astype(np.uint16)
    return half.view(np.float16).astype(np.float32)


def _to_uf(values: np.ndarray, mbits: int) -> np.ndarray:
    """float -> unsigned 11- / 10-bit float bits (negative and NaN -> 0; through a half
    float, mantissa truncated)."""
    v = np.nan_to_num(np.maximum(values, 0.0), nan=0.0).astype(np.float16).view(np.uint16)
    return ((v >> (10 - mbits)) & ((1 << (5 + mbits)) - 1)).astype(np.uint32)


def decode_color(fmt: int, raw: bytes, count: int) -> tuple[str, np.ndarray]:
    """(value class ``float`` / ``int`` / ``uint``, (count, 4) values) of colour texels."""
    out = np.zeros((count, 4), np.float64)
    out[:, 3] = 1.0
    if fmt == vk.VK_FORMAT_A2B10G10R10_UNORM_PACK32:
        w = np.frombuffer(raw, np.uint32, count)
        for i, (shift, bits) in enumerate(((0, 10), (10, 10), (20, 10), (30, 2))):
            out[:, i] = ((w >> shift) & ((1 << bits) - 1)) / ((1 << bits) - 1)
        return "float", out
    if fmt == vk.VK_FORMAT_B10G11R11_UFLOAT_PACK32:
        w = np.frombuffer(raw, np.uint32, count)
        out[:, 0], out[:, 1], out[:, 2] = (
            _uf(w & 0x7FF, 6),
            _uf((w >> 11) & 0x7FF, 6),
            _uf(w >> 22, 5),
        )
        return "float", out
    if fmt not in _PLAIN:
        raise UnsupportedEnum("ReadPixels.Format", f"{_name(fmt)}: no colour decode")
    kind, dt, n = _PLAIN[fmt]
    src = np.frombuffer(raw, dt, count * n).reshape(count, n)
    if fmt == vk.VK_FORMAT_B8G8R8A8_UNORM:
        src = src[:, [2, 1, 0, 3]]
    if kind == "unorm":
        out[:, :n] = src / 255.0
        return "float", out
    if kind == "float":
        out[:, :n] = src.astype(np.float64)
        return "float", out
    iout = np.zeros((count, 4), np.int64)
    iout[:, 3] = 1
    iout[:, :n] = src.astype(np.int64)
    return kind, iout


def _unorm(values: np.ndarray, bits: int) -> np.ndarray:
    top = (1 << bits) - 1
    return np.floor(np.clip(values, 0.0, 1.0) * top + 0.5).astype(np.uint64)


def pack_color(fmt: int, raw: bytes, count: int, gl_format: int, gl_type: int,
               where: str = "ReadPixels") -> bytes:  # fmt: skip
    """Colour texels of ``fmt`` -> GL's (``gl_format``, ``gl_type``) bytes, tight."""
    if (fmt, gl_format, gl_type) in _NATIVE_COLOR and _NATIVE_COLOR[(fmt, gl_format, gl_type)]:
        return bytes(raw[: count * aspect_bytes(fmt, COLOR)])  # the same bytes
    vclass, values = decode_color(fmt, raw, count)
    n = _COMPONENTS.get(gl_format)
    if n is None:
        raise UnsupportedEnum(f"{where}.Format", f"{gl_format:#x} is no colour format "
                              "(RED, RG, RGB, RGBA and their _INTEGER forms)")  # fmt: skip
    if (gl_format in _INTEGER_FORMATS) != (vclass != "float"):
        raise UnsupportedEnum(f"{where}.Format", f"{gl_format:#x} from a {_name(fmt)} ({vclass}) "
                              "buffer: integer images read as *_INTEGER, others never (GL: "
                              "INVALID_OPERATION)")  # fmt: skip
    if vclass != "float":
        dt = _INT_TYPES.get(gl_type)
        if dt is None:
            raise UnsupportedEnum(f"{where}.Type", f"{gl_type:#x}: integer reads take "
                                  "(UNSIGNED_)BYTE / SHORT / INT")  # fmt: skip
        info = np.iinfo(dt)
        return np.clip(values[:, :n], info.min, info.max).astype(dt).tobytes()
    if gl_type == GLP.UNSIGNED_INT_2_10_10_10_REV:
        if gl_format != GLP.RGBA:
            raise UnsupportedEnum(f"{where}.Format", "UNSIGNED_INT_2_10_10_10_REV packs RGBA")
        v = values
        w = (_unorm(v[:, 0], 10) | _unorm(v[:, 1], 10) << 10 | _unorm(v[:, 2], 10) << 20
             | _unorm(v[:, 3], 2) << 30)  # fmt: skip
        return w.astype(np.uint32).tobytes()
    if gl_type == GLP.UNSIGNED_INT_10F_11F_11F_REV:
        if gl_format != GLP.RGB:
            raise UnsupportedEnum(f"{where}.Format", "UNSIGNED_INT_10F_11F_11F_REV packs RGB")
        w = _to_uf(values[:, 0], 6) | _to_uf(values[:, 1], 6) << 11 | _to_uf(values[:, 2], 5) << 22
        return w.astype(np.uint32).tobytes()
    v = values[:, :n]
    if gl_type == GLP.UNSIGNED_BYTE:
        return _unorm(v, 8).astype(np.uint8).tobytes()
    if gl_type == GLP.UNSIGNED_SHORT:
        return _unorm(v, 16).astype(np.uint16).tobytes()
    if gl_type == GLP.FLOAT:
        return v.astype(np.float32).tobytes()
    if gl_type == GLP.HALF_FLOAT:
        return v.astype(np.float16).tobytes()
    raise UnsupportedEnum(f"{where}.Type", f"{gl_type:#x} from a {_name(fmt)} buffer "
                          "(UNSIGNED_BYTE, UNSIGNED_SHORT, HALF_FLOAT, FLOAT, "
                          "UNSIGNED_INT_2_10_10_10_REV, UNSIGNED_INT_10F_11F_11F_REV)")  # fmt: skip


#: (VkFormat, GL format, GL type) whose packed bytes are the copy's own bytes.
_NATIVE_COLOR = {
    (vk.VK_FORMAT_R8_UNORM, GLP.RED, GLP.UNSIGNED_BYTE): True,
    (vk.VK_FORMAT_R8G8_UNORM, GLP.RG, GLP.UNSIGNED_BYTE): True,
    (vk.VK_FORMAT_R8G8B8A8_UNORM, GLP.RGBA, GLP.UNSIGNED_BYTE): True,
    (vk.VK_FORMAT_R8G8B8A8_SRGB, GLP.RGBA, GLP.UNSIGNED_BYTE): True,
    (vk.VK_FORMAT_A2B10G10R10_UNORM_PACK32, GLP.RGBA, GLP.UNSIGNED_INT_2_10_10_10_REV): True,
    (vk.VK_FORMAT_B10G11R11_UFLOAT_PACK32, GLP.RGB, GLP.UNSIGNED_INT_10F_11F_11F_REV): True,
    (vk.VK_FORMAT_R16G16B16A16_SFLOAT, GLP.RGBA, GLP.HALF_FLOAT): True,
    (vk.VK_FORMAT_R32G32B32A32_SFLOAT, GLP.RGBA, GLP.FLOAT): True,
    (vk.VK_FORMAT_R32_UINT, GLP.RED_INTEGER, GLP.UNSIGNED_INT): True,
    (vk.VK_FORMAT_R8G8B8A8_UINT, GLP.RGBA_INTEGER, GLP.UNSIGNED_BYTE): True,
    (vk.VK_FORMAT_R8G8B8A8_SINT, GLP.RGBA_INTEGER, GLP.BYTE): True,
    (vk.VK_FORMAT_R32G32B32A32_SINT, GLP.RGBA_INTEGER, GLP.INT): True,
    (vk.VK_FORMAT_R32G32B32A32_UINT, GLP.RGBA_INTEGER, GLP.UNSIGNED_INT): True,
}


def _depth_values(fmt: int, raw: bytes, count: int) -> np.ndarray:
    if fmt in (vk.VK_FORMAT_D16_UNORM, vk.VK_FORMAT_D16_UNORM_S8_UINT):
        return np.frombuffer(raw, np.uint16, count) / 65535.0
    if fmt in _D24:
        return (np.frombuffer(raw, np.uint32, count) & 0xFFFFFF) / float(0xFFFFFF)
    return np.frombuffer(raw, np.float32, count).astype(np.float64)


def _depth24(fmt: int, raw: bytes, count: int) -> np.ndarray:
    """The depth as GL's 24-bit normalized integer (exact for a 24-bit image)."""
    if fmt in _D24:
        return np.frombuffer(raw, np.uint32, count).astype(np.uint64) & 0xFFFFFF
    return _unorm(_depth_values(fmt, raw, count), 24)


def pack_depth_stencil(fmt: int, depth: bytes | None, stencil: bytes | None, count: int,
                       gl_format: int, gl_type: int, where: str = "ReadPixels") -> bytes:  # fmt: skip
    """Depth and / or stencil aspect bytes of ``fmt`` -> GL's packed bytes, tight."""
    if gl_format == GLP.STENCIL_INDEX:
        if gl_type != GLP.UNSIGNED_BYTE:
            raise UnsupportedEnum(
                f"{where}.Type", f"{gl_type:#x}: STENCIL_INDEX reads UNSIGNED_BYTE"
            )
        assert stencil is not None
        return bytes(stencil[:count])
    if gl_format == GLP.DEPTH_COMPONENT:
        assert depth is not None
        if gl_type == GLP.FLOAT:
            return _depth_values(fmt, depth, count).astype(np.float32).tobytes()
        if gl_type == GLP.UNSIGNED_SHORT:
            if fmt in (vk.VK_FORMAT_D16_UNORM, vk.VK_FORMAT_D16_UNORM_S8_UINT):
                return bytes(depth[: 2 * count])
            return _unorm(_depth_values(fmt, depth, count), 16).astype(np.uint16).tobytes()
        if gl_type == GLP.UNSIGNED_INT:
            if fmt in _D24:  # d / (2^24 - 1) * (2^32 - 1), exactly: the 24 bits replicated
                d = _depth24(fmt, depth, count)
                return ((d << 8) | (d >> 16)).astype(np.uint32).tobytes()
            return _unorm(_depth_values(fmt, depth, count), 32).astype(np.uint32).tobytes()
        raise UnsupportedEnum(f"{where}.Type", f"{gl_type:#x}: DEPTH_COMPONENT reads FLOAT, "
                              "UNSIGNED_INT, UNSIGNED_SHORT")  # fmt: skip
    if gl_format == GLP.DEPTH_STENCIL:
        assert depth is not None and stencil is not None
        s = np.frombuffer(stencil, np.uint8, count).astype(np.uint64)
        if gl_type == GLP.UNSIGNED_INT_24_8:
            return ((_depth24(fmt, depth, count) << 8) | s).astype(np.uint32).tobytes()
        if gl_type == GLP.FLOAT_32_UNSIGNED_INT_24_8_REV:
            out = np.zeros((count, 2), np.uint32)
            out[:, 0] = _depth_values(fmt, depth, count).astype(np.float32).view(np.uint32)
            out[:, 1] = s.astype(np.uint32)
            return out.tobytes()
        raise UnsupportedEnum(f"{where}.Type", f"{gl_type:#x}: DEPTH_STENCIL reads "
                              "UNSIGNED_INT_24_8 or FLOAT_32_UNSIGNED_INT_24_8_REV")  # fmt: skip
    raise UnsupportedEnum(f"{where}.Format", f"{gl_format:#x} from a {_name(fmt)} buffer "
                          "(DEPTH_COMPONENT, STENCIL_INDEX, DEPTH_STENCIL)")  # fmt: skip


def aspects_for(img_aspect: int, gl_format: int, where: str) -> tuple[int, ...]:
    """The image aspects a read of ``gl_format`` copies (refused when the image lacks one)."""
    want = {GLP.DEPTH_COMPONENT: (DEPTH,), GLP.STENCIL_INDEX: (STENCIL,),
            GLP.DEPTH_STENCIL: (DEPTH, STENCIL)}.get(gl_format, (COLOR,))  # fmt: skip
    for a in want:
        if not img_aspect & a:
            have = "colour" if img_aspect == COLOR else "depth / stencil"
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: format {gl_format:#x} from a "
                          f"{have} buffer that has no such aspect")  # fmt: skip
    return want


def texel_layout(fmt: int, aspects: tuple[int, ...], gl_format: int, gl_type: int) -> bool:
    """Is the GL packing the copy's own bytes (one aspect, no conversion)?"""
    if aspects == (COLOR,):
        return _NATIVE_COLOR.get((fmt, gl_format, gl_type), False)
    if aspects == (STENCIL,):
        return gl_type == GLP.UNSIGNED_BYTE
    if aspects == (DEPTH,):
        return (fmt in _D32F and gl_type == GLP.FLOAT) or (
            fmt == vk.VK_FORMAT_D16_UNORM and gl_type == GLP.UNSIGNED_SHORT)  # fmt: skip
    return False


native = texel_layout


def pack(fmt: int, parts: dict[int, bytes], count: int, gl_format: int, gl_type: int,
         where: str = "ReadPixels") -> bytes:  # fmt: skip
    """The aspects' bytes (``{aspect: bytes}``) -> GL's tight bytes."""
    if COLOR in parts:
        return pack_color(fmt, parts[COLOR], count, gl_format, gl_type, where)
    return pack_depth_stencil(fmt, parts.get(DEPTH), parts.get(STENCIL), count, gl_format,
                              gl_type, where)  # fmt: skip


def region(img: Any, aspect: int, level: int, x: int, y: int, layer: int, w: int, h: int,
           layers: int = 1, buffer_offset: int = 0, row_length: int = 0,
           image_height: int = 0) -> Any:  # fmt: skip
    """The ``VkBufferImageCopy`` of GL rectangle (x, y, w, h) of ``level``: a render
    target's rows are stored top-down (``flipped``), its GL row y is image row hgt-1-y."""
    hgt = max(img.height >> level, 1)
    three_d = img.image_type == vk.VK_IMAGE_TYPE_3D
    oy = hgt - y - h if img.flipped else y
    return vk.VkBufferImageCopy(
        bufferOffset=buffer_offset, bufferRowLength=row_length, bufferImageHeight=image_height,
        imageSubresource=vk.VkImageSubresourceLayers(
            aspectMask=aspect, mipLevel=level, baseArrayLayer=0 if three_d else layer,
            layerCount=1 if three_d else layers),
        imageOffset=vk.VkOffset3D(x=x, y=oy, z=layer if three_d else 0),
        imageExtent=vk.VkExtent3D(width=w, height=h, depth=layers if three_d else 1),
    )  # fmt: skip


def copy_region(dev: Any, cmd: Any, img: Any, aspect: int, level: int, x: int, y: int,
                layer: int, w: int, h: int, layers: int = 1) -> GpuBuffer:  # fmt: skip
    """Record the copy of one aspect of a region into a new host buffer (image rows)."""
    n = w * h * layers * aspect_bytes(img.format, aspect)
    buf = GpuBuffer(dev, n, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
    buf.payload = n  # type: ignore[attr-defined]  # the buffer rounds up to 4
    r = region(img, aspect, level, x, y, layer, w, h, layers)
    full_barrier(cmd)
    with_layout(cmd, img, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                lambda layout: vk.vkCmdCopyImageToBuffer(cmd, img.image, layout, buf.buffer, 1, [r]))  # fmt: skip
    host_barrier(cmd)
    return buf


def host_barrier(cmd: Any) -> None:
    mb = vk.VkMemoryBarrier(srcAccessMask=vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                            dstAccessMask=vk.VK_ACCESS_HOST_READ_BIT)  # fmt: skip
    vk.vkCmdPipelineBarrier(cmd, vk.VK_PIPELINE_STAGE_TRANSFER_BIT, vk.VK_PIPELINE_STAGE_HOST_BIT,
                            0, 1, [mb], 0, None, 0, None)  # fmt: skip


def gl_rows(raw: bytes, img: Any, w: int, h: int, layers: int, texel: int) -> bytes:
    """Image rows of each layer -> GL's bottom-up rows (a top-down image's flipped)."""
    if not img.flipped or h <= 1:
        return raw
    a = np.frombuffer(raw, np.uint8).reshape(layers, h, w * texel)
    return a[:, ::-1].tobytes()
