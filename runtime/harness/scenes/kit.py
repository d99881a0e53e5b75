"""What the pixel scenes share: GL tokens, geometry, captures and probes.

A pixel scene draws into a small surface and returns the images it read back
(:class:`Image`, rows bottom-up as ``glReadPixels`` returns them: GL orientation). Its
probes (:class:`Probe`) are computed from first principles -- the clear colour, the blend
equation, which quad covers a pixel -- never from an earlier run.

Geometry: :func:`quad` is two counter-clockwise triangles of 7 floats per vertex
(``x, y, z`` in NDC, then ``r, g, b, a``), what the ``color`` / ``mrt`` programs read
(location 0 = position, 1 = colour).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from ...client.api import Client
from ...client.tracker import Buffer, Program
from ..shaders.programs import load

__all__ = ["GL", "Image", "Probe", "unorm", "px", "quad", "quad_cw", "setup", "capture",
           "VERTEX_FLOATS", "STRIDE"]  # fmt: skip


class GL:
    """The GL tokens the scenes pass through the client API (GL's own values)."""

    COLOR_BUFFER_BIT = 0x4000
    DEPTH_BUFFER_BIT = 0x0100
    STENCIL_BUFFER_BIT = 0x0400
    TRIANGLES = 0x0004
    TRIANGLE_STRIP = 0x0005
    FLOAT = 0x1406
    UNSIGNED_SHORT = 0x1403
    RGBA8 = 0x8058
    DEPTH24_STENCIL8 = 0x88F0


VERTEX_FLOATS = 7
STRIDE = VERTEX_FLOATS * 4


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    rgba: bytes  # bottom row first (GL orientation)

    def pixel(self, x: int, y: int) -> tuple[int, int, int, int]:
        i = (y * self.width + x) * 4
        return tuple(self.rgba[i : i + 4])  # type: ignore[return-value]


@dataclass(frozen=True)
class Probe:
    """Pixel (x, y) of image ``image`` (GL window coordinates) must be ``rgba`` +- ``tol``."""

    image: int
    x: int
    y: int
    rgba: tuple[int, int, int, int]
    tol: int = 0
    what: str = ""

    def check(self, images: list[Image]) -> str | None:
        got = images[self.image].pixel(self.x, self.y)
        if all(abs(g - w) <= self.tol for g, w in zip(got, self.rgba)):
            return None
        return (f"{self.what or 'probe'} image {self.image} ({self.x},{self.y}): got {got}, "
                f"expected {self.rgba} +-{self.tol}")  # fmt: skip


def unorm(f: float) -> int:
    """GL's float -> 8-bit unorm conversion (clamp, scale by 255, round to nearest)."""
    return int(math.floor(min(max(f, 0.0), 1.0) * 255.0 + 0.5))


def px(rgba: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    return tuple(unorm(c) for c in rgba)  # type: ignore[return-value]


def quad(x0: float, y0: float, x1: float, y1: float, z: float,
         rgba: tuple[float, ...]) -> list[float]:  # fmt: skip
    """Two counter-clockwise triangles covering [x0, x1] x [y0, y1] (NDC) at depth z."""
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)]
    return [v for x, y in corners for v in (x, y, z, *rgba)]


def quad_cw(x0: float, y0: float, x1: float, y1: float, z: float,
            rgba: tuple[float, ...]) -> list[float]:  # fmt: skip
    """The same rectangle wound clockwise (back-facing under the default front face)."""
    corners = [(x0, y0), (x1, y1), (x1, y0), (x0, y0), (x0, y1), (x1, y1)]
    return [v for x, y in corners for v in (x, y, z, *rgba)]


def setup(c: Client, floats: list[float], program: str = "color") -> tuple[Buffer, Program]:
    """One vertex buffer of ``floats``, the named program, attributes 0 and 1."""
    vb = c.create_buffer(struct.pack(f"<{len(floats)}f", *floats))
    prog_src = load(program)
    prog = c.create_program(prog_src.spirv, prog_src.reflection)
    c.use_program(prog)
    c.vertex_attrib_pointer(0, vb, 3, stride=STRIDE, offset=0)
    c.vertex_attrib_pointer(1, vb, 4, stride=STRIDE, offset=12)
    return vb, prog


def capture(c: Client, width: int, height: int) -> Image:
    """Read back the current read surface (``ReadPixels``: RGBA / UNSIGNED_BYTE)."""
    c.pixel_store(True, "Alignment", 1)
    return Image(width, height, c.read_pixels(0, 0, width, height))
