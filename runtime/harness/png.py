"""PNG in and out for scene images (8-bit RGBA, no dependency beyond zlib).

:func:`encode` lays a scene's images side by side (left to right, bottoms aligned) and
writes them in GL orientation: the image's origin is its bottom-left pixel, so the first
PNG row is the image's top row (``glReadPixels`` returns the bottom row first).
:func:`decode` reads back what :func:`encode` writes (RGBA8, filter type 0 rows) and
refuses anything else by name.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from .scenes.kit import Image

__all__ = ["encode", "decode", "side_by_side", "PngError"]

_SIG = b"\x89PNG\r\n\x1a\n"


class PngError(ValueError):
    pass


def side_by_side(images: Sequence[Image]) -> Image:
    if len(images) == 1:
        return images[0]
    w = sum(i.width for i in images)
    h = max(i.height for i in images)
    rows = []
    for y in range(h):
        row = b"".join(i.rgba[y * i.width * 4 : (y + 1) * i.width * 4] if y < i.height
                       else bytes(i.width * 4) for i in images)  # fmt: skip
        rows.append(row)
    return Image(w, h, b"".join(rows))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode(images: Sequence[Image]) -> bytes:
    img = side_by_side(images)
    stride = img.width * 4
    raw = b"".join(b"\0" + img.rgba[y * stride : (y + 1) * stride]
                   for y in reversed(range(img.height)))  # fmt: skip
    ihdr = struct.pack(">IIBBBBB", img.width, img.height, 8, 6, 0, 0, 0)
    return (
        _SIG + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")
    )


def decode(data: bytes) -> Image:
    if not data.startswith(_SIG):
        raise PngError("not a PNG file")
    pos, idat, hdr = len(_SIG), b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    if hdr is None or hdr[2:] != (8, 6, 0, 0, 0):
        raise PngError(f"only 8-bit RGBA, non-interlaced PNGs are read (IHDR {hdr})")
    w, h = hdr[0], hdr[1]
    raw = zlib.decompress(idat)
    stride = w * 4
    rows = []
    for y in range(h):
        line = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        if line[0] != 0:
            raise PngError(f"row {y}: filter type {line[0]} (only 0 is read)")
        rows.append(line[1:])
    return Image(w, h, b"".join(reversed(rows)))
