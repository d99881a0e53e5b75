"""Client-side pixel packing (seed 001 §17.2): readbacks travel tight, the client scatters.

:func:`pixel_size` is the bytes per pixel of a GL (format, type) pair (GL registry values:
the values ``ReadPixels.Format`` / ``Type`` carry); :func:`scatter` lays tight rows out as
glReadPixels would write them into client memory under a pack ``PixelStoreParameters``
(alignment, row length, skip pixels / rows / images, image height, swap bytes).
"""

from __future__ import annotations

from typing import Any

__all__ = ["pixel_size", "component_size", "scatter", "PixelFormatError"]

GL_RED, GL_RG, GL_RGB, GL_RGBA = 0x1903, 0x8227, 0x1907, 0x1908
GL_RED_INTEGER, GL_RG_INTEGER, GL_RGB_INTEGER, GL_RGBA_INTEGER = 0x8D94, 0x8228, 0x8D98, 0x8D99
GL_BGRA = 0x80E1
GL_ALPHA, GL_LUMINANCE, GL_LUMINANCE_ALPHA = 0x1906, 0x1909, 0x190A
GL_DEPTH_COMPONENT, GL_STENCIL_INDEX, GL_DEPTH_STENCIL = 0x1902, 0x1901, 0x84F9

_COMPONENTS = {
    GL_RED: 1, GL_RG: 2, GL_RGB: 3, GL_RGBA: 4, GL_BGRA: 4, GL_RED_INTEGER: 1,
    GL_RG_INTEGER: 2, GL_RGB_INTEGER: 3, GL_RGBA_INTEGER: 4, GL_ALPHA: 1, GL_LUMINANCE: 1,
    GL_LUMINANCE_ALPHA: 2, GL_DEPTH_COMPONENT: 1, GL_STENCIL_INDEX: 1,
}  # fmt: skip
#: type -> bytes of one component
_TYPES = {0x1400: 1, 0x1401: 1, 0x1402: 2, 0x1403: 2, 0x1404: 4, 0x1405: 4, 0x1406: 4,
          0x140B: 2, 0x8D61: 2}  # fmt: skip
#: packed types -> bytes of one whole pixel (one packed word, or two for 32F + 24_8)
_PACKED = {
    0x8363: 2, 0x8033: 2, 0x8034: 2, 0x8366: 2, 0x8364: 2,  # 5_6_5, 4_4_4_4, 5_5_5_1, ...REV
    0x8368: 4, 0x8C3B: 4, 0x8C3E: 4, 0x8035: 4, 0x8367: 4,  # 2_10_10_10_REV, 10F_11F_11F, 5_9_9_9
    0x84FA: 4,  # UNSIGNED_INT_24_8
    0x8DAD: 8,  # FLOAT_32_UNSIGNED_INT_24_8_REV
}  # fmt: skip


class PixelFormatError(ValueError):
    pass


def component_size(typ: int) -> int:
    """Bytes per swap unit: a component, or the packed word."""
    if typ in _TYPES:
        return _TYPES[typ]
    if typ == 0x8DAD:
        return 4
    if typ in _PACKED:
        return _PACKED[typ]
    raise PixelFormatError(f"type 0x{typ:04x}")


def pixel_size(fmt: int, typ: int) -> int:
    if typ in _PACKED:
        return _PACKED[typ]
    if fmt not in _COMPONENTS or typ not in _TYPES:
        raise PixelFormatError(f"format 0x{fmt:04x} type 0x{typ:04x}")
    return _COMPONENTS[fmt] * _TYPES[typ]


def _swap(data: bytes, unit: int) -> bytes:
    if unit == 1:
        return data
    b = bytearray(data)
    for i in range(unit):
        b[i::unit] = data[unit - 1 - i :: unit]
    return bytes(b)


def scatter(tight: bytes, w: int, h: int, d: int, fmt: int, typ: int, pack: Any) -> bytes:
    """Client memory as GL would leave it (bytes GL does not write are zero)."""
    bpp = pixel_size(fmt, typ)
    if len(tight) != w * h * d * bpp:
        raise PixelFormatError(f"{len(tight)} tight bytes for {w}x{h}x{d} of {bpp}")
    align = int(pack["Alignment"]) or 1
    row_len = int(pack["RowLength"]) or w
    img_h = int(pack["ImageHeight"]) or h
    skip_px, skip_rows, skip_img = int(pack["SkipPixels"]), int(pack["SkipRows"]), int(pack["SkipImages"])
    if int(pack["SwapBytes"]):
        tight = _swap(tight, component_size(typ))
    unit = component_size(typ)
    elem = max(unit, 1)
    row_bytes = row_len * bpp
    stride = row_bytes if elem >= align else -(-row_bytes // align) * align
    image = stride * img_h
    if w == 0 or h == 0 or d == 0:
        return b""
    start = skip_img * image + skip_rows * stride + skip_px * bpp
    end = start + (d - 1) * image + (h - 1) * stride + w * bpp
    out = bytearray(end)
    tight_row = w * bpp
    src = 0
    for z in range(d):
        for y in range(h):
            at = start + z * image + y * stride
            out[at : at + tight_row] = tight[src : src + tight_row]
            src += tight_row
    return bytes(out)
