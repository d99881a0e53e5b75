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

__all__ = ["GL", "Image", "Probe", "unorm", "px", "allowed", "quad", "quad_cw", "setup", "capture",
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
        if all(lo - self.tol <= g <= hi + self.tol
               for g, (lo, hi) in zip(got, allowed(self.rgba))):  # fmt: skip
            return None
        return (f"{self.what or 'probe'} image {self.image} ({self.x},{self.y}): got {got}, "
                f"expected {self.rgba} +-{self.tol}")  # fmt: skip


def unorm(f: float) -> int:
    """GL's float -> 8-bit unorm conversion (clamp, scale by 255, round to nearest)."""
    return int(math.floor(min(max(f, 0.0), 1.0) * 255.0 + 0.5))


class Rgba8(tuple):
    """An expected 8-bit colour that remembers the real values it was rounded from.

    GLES 3.0 §2.1.6.1 (and Vulkan's UNORM conversion) let a float colour ``c`` be stored
    as either of the two integers closest to ``c * 255`` ("rounding to nearest is
    preferred"): ``0.5`` may read back as 127 or 128 (llvmpipe gives 128, NVIDIA 127).
    A probe built from such a colour accepts exactly those two values, nothing else."""

    real: tuple[float, ...]


def px(rgba: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    out = Rgba8(unorm(c) for c in rgba)
    out.real = tuple(min(max(c, 0.0), 1.0) * 255.0 for c in rgba)
    return out  # type: ignore[return-value]


def allowed(rgba: tuple[int, ...]) -> list[tuple[int, int]]:
    """Per channel, the lowest and highest value a driver may store for ``rgba``: the two
    integers closest to the real value for a :func:`px` colour, else the value itself."""
    real = getattr(rgba, "real", None)
    if real is None:
        return [(v, v) for v in rgba]
    return [(math.floor(r), math.ceil(r)) for r in real]


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
