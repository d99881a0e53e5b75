"""Issue 17's scenes: textures of every target and format, sampler state, sRGB, MSAA,
uniforms, integer textures and a Minecraft-like frame.

Every probe is computed from first principles: the texel decoded by hand from the bytes
the scene uploaded (:func:`decode`), the sampler's wrap rule applied to the coordinate, the
sRGB transfer functions, the 4x MSAA standard sample positions, the matrix applied by hand.

Geometry: :func:`tquad` is two counter-clockwise triangles of 6 floats per vertex
(``x, y, z`` in NDC, then ``s, t, r``), what the ``tex*`` / ``shadow`` / ``itex`` / ``mc``
programs read (location 0 = position, 1 = texture coordinate). A strip that samples one
texel gives every vertex the same coordinate, so no interpolation enters a probe.

A scene needs client calls (:func:`need`) that may not exist yet: a missing one is the
named refusal :class:`ClientGap` (``Client.<call>``), never an ``AttributeError``. What a
backend cannot execute is its own named refusal (``DriverRefused`` /
``UnimplementedCall``), raised at the record.
"""

from __future__ import annotations

import inspect
import math
import struct
from typing import Any

import numpy as np

from ...client.api import Client
from ..shaders.programs import load
from .kit import GL, Image, Probe, capture, px, quad, setup

__all__ = ["SIZE", "ClientGap", "need", "FORMATS", "decode", "tquad", "SCENE_FNS"]

SIZE = 64
TSTRIDE = 24  # 6 floats per textured vertex


class ClientGap(NotImplementedError):
    """A scene needs a client call that does not exist yet (named: ``Client.<call>``)."""

    def __init__(self, call: str) -> None:
        super().__init__(f"Client.{call}: not in the client API yet")
        self.call = call


def need(c: Client, name: str, *kwargs: str) -> Any:
    """``c.<name>``, which must take the keyword arguments ``kwargs``; else :class:`ClientGap`."""
    fn = getattr(c, name, None)
    if fn is None:
        raise ClientGap(name)
    if kwargs:
        params = inspect.signature(fn).parameters
        missing = [k for k in kwargs if k not in params]
        if missing:
            raise ClientGap(f"{name}({', '.join(f'{k}=' for k in missing)})")
    return fn


class T:
    """GL tokens the render scenes use (GL's own values)."""

    R8 = 0x8229
    RG8 = 0x822B
    RGBA8 = 0x8058
    SRGB8_ALPHA8 = 0x8C43
    RGB10_A2 = 0x8059
    R11F_G11F_B10F = 0x8C3A
    RGBA16F = 0x881A
    RGBA32F = 0x8814
    R32UI = 0x8236
    RGBA8UI = 0x8D7C
    DEPTH_COMPONENT16 = 0x81A5
    DEPTH_COMPONENT24 = 0x81A6
    DEPTH_COMPONENT32F = 0x8CAC
    DEPTH24_STENCIL8 = 0x88F0
    NEAREST = 0x2600
    UNIFORM_BUFFER = "uniform"


# -- geometry ------------------------------------------------------------------------------
def tquad(x0: float, y0: float, x1: float, y1: float, z: float,
          uv0: tuple[float, ...], uv1: tuple[float, ...] | None = None) -> list[float]:  # fmt: skip
    """Two CCW triangles over [x0, x1] x [y0, y1]; coordinates from ``uv0`` (bottom-left)
    to ``uv1`` (top-right) in s and t (r from ``uv0``); one coordinate if ``uv1`` is None."""
    s0, t0, r = (tuple(uv0) + (0.0, 0.0, 0.0))[:3]
    s1, t1 = (uv1[0], uv1[1]) if uv1 is not None else (s0, t0)
    corners = [(x0, y0, s0, t0), (x1, y0, s1, t0), (x1, y1, s1, t1),
               (x0, y0, s0, t0), (x1, y1, s1, t1), (x0, y1, s0, t1)]  # fmt: skip
    return [v for x, y, s, t in corners for v in (x, y, z, s, t, r)]


def strip_x(i: int, n: int) -> tuple[float, float]:
    return -1.0 + 2.0 * i / n, -1.0 + 2.0 * (i + 1) / n


def strip_probe_x(i: int, n: int) -> int:
    return i * SIZE // n + SIZE // (2 * n)


def tsetup(c: Client, floats: list[float], program: str) -> Any:
    vb = c.create_buffer(struct.pack(f"<{len(floats)}f", *floats))
    src = load(program)
    prog = c.create_program(src.spirv, src.reflection)
    c.use_program(prog)
    c.vertex_attrib_pointer(0, vb, 3, stride=TSTRIDE, offset=0)
    c.vertex_attrib_pointer(1, vb, 3, stride=TSTRIDE, offset=12)
    return prog


def nearest(c: Client, **kw: Any) -> Any:
    params = dict(minFilter="Nearest", magFilter="Nearest", mipmapMode="None", maxLod=1000.0)
    params.update(kw)
    return c.create_sampler(**params)


def frame(c: Client) -> None:
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()


def finish(c: Client) -> list[Image]:
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def sample_strips(c: Client, tex: Any, sampler: Any, program: str,
                  coords: list[tuple[float, float, float]] | None = None, *,
                  floats: list[float] | None = None,
                  draws: list[tuple[int, int]] | None = None) -> list[Image]:  # fmt: skip
    """The textured-quad pattern of the scenes: the geometry (one strip per coordinate of
    ``coords``, :func:`strip_x`, else ``floats``) through ``program``, ``tex`` and ``sampler``
    on unit 0, the frame cleared, each (first, count) of ``draws`` drawn (default: one draw
    per strip), the picture read back."""
    if coords is not None:
        floats = strip_floats(coords)
    assert floats is not None, "sample_strips: coords or floats"
    tsetup(c, floats, program)
    c.bind_texture(0, tex)
    c.bind_sampler(0, sampler)
    frame(c)
    n = len(floats) // 6  # vertices
    for first, count in draws if draws is not None else [(v, 6) for v in range(0, n, 6)]:
        c.draw_arrays(GL.TRIANGLES, first, count)
    return finish(c)


def strip_probes(colors: list[tuple[int, ...]], what: str, order: list[int] | None = None) -> list[Probe]:
    """Strip i (of ``len(colors)``) shows ``colors[order[i]]`` at its centre (``what``: the
    probe's name, ``{i}`` the colour's index)."""
    idx = order if order is not None else list(range(len(colors)))
    n = len(colors)
    return [Probe(0, strip_probe_x(i, n), 32, colors[k], 0, what.format(i=k))  # type: ignore[arg-type]
            for i, k in enumerate(idx)]  # fmt: skip


# -- texel encodings, by hand -------------------------------------------------------------------
def _f11(v: float, mant: int) -> int:
    """An unsigned small float (5-bit exponent, bias 15, ``mant`` mantissa bits) of a value
    that is exact in it (the scenes pick such values)."""
    if v == 0.0:
        return 0
    m, e = math.frexp(v)  # v = m * 2**e, 0.5 <= m < 1
    exp = e - 1 + 15
    frac = (m * 2 - 1) * (1 << mant)
    assert frac == int(frac) and 0 < exp < 31, v
    return (exp << mant) | int(frac)


def _uf(bits: int, mant: int) -> float:
    exp, frac = bits >> mant, bits & ((1 << mant) - 1)
    return 0.0 if exp == 0 and frac == 0 else (1 + frac / (1 << mant)) * 2.0 ** (exp - 15)


def srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def linear_to_srgb(c: float) -> float:
    return c * 12.92 if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


#: the 4 texels (2 x 2, row 0 first) of each format's quad, as the real RGBA they hold
_REAL = [(0.1, 0.2, 0.4, 1.0), (1.0, 0.6, 0.0, 1.0), (0.2, 1.0, 0.8, 1.0), (0.6, 0.4, 1.0, 1.0)]
_EXACT = [(0.5, 0.25, 1.0, 1.0), (1.0, 0.125, 0.5, 1.0), (0.25, 1.0, 0.0625, 1.0),
          (0.75, 0.5, 0.25, 1.0)]  # fmt: skip


def _u8(vals: list[tuple[float, ...]], n: int) -> tuple[bytes, list[tuple[float, ...]]]:
    """``n`` unorm8 channels; GL's missing channels read (0, 0, 1) for g, b, a."""
    raw = [tuple(round(v * 255) for v in t[:n]) for t in vals]
    data = b"".join(bytes(r) for r in raw)
    return data, [tuple(x / 255 for x in r) + (0.0, 0.0, 0.0, 1.0)[n:] for r in raw]


def _fmt_rgba8() -> tuple[bytes, list]:
    return _u8(_REAL, 4)


def _fmt_r8() -> tuple[bytes, list]:
    return _u8(_REAL, 1)


def _fmt_rg8() -> tuple[bytes, list]:
    return _u8(_REAL, 2)


def _fmt_srgb8_alpha8() -> tuple[bytes, list]:
    data, dec = _u8(_REAL, 4)
    return data, [tuple(srgb_to_linear(v) for v in d[:3]) + (d[3],) for d in dec]


def _fmt_rgb10_a2() -> tuple[bytes, list]:
    words, dec = [], []
    for r, g, b, a in _REAL:
        q = (round(r * 1023), round(g * 1023), round(b * 1023), round(a * 3))
        words.append(q[0] | q[1] << 10 | q[2] << 20 | q[3] << 30)  # 2_10_10_10_REV
        dec.append((q[0] / 1023, q[1] / 1023, q[2] / 1023, q[3] / 3))
    return struct.pack("<4I", *words), dec


def _fmt_r11f_g11f_b10f() -> tuple[bytes, list]:
    words, dec = [], []
    for r, g, b, _ in _EXACT:
        br, bg, bb = _f11(r, 6), _f11(g, 6), _f11(b, 5)
        words.append(br | bg << 11 | bb << 22)  # 10F_11F_11F_REV
        dec.append((_uf(br, 6), _uf(bg, 6), _uf(bb, 5), 1.0))
    return struct.pack("<4I", *words), dec


def _fmt_rgba16f() -> tuple[bytes, list]:
    a = np.array(_EXACT, np.float16)
    return a.tobytes(), [tuple(float(v) for v in t) for t in a]


def _fmt_rgba32f() -> tuple[bytes, list]:
    a = np.array(_REAL, np.float32)
    return a.tobytes(), [tuple(float(v) for v in t) for t in a]


#: scene suffix -> (GL internal format, encoder: (upload bytes, decoded RGBA per texel))
FORMATS = {
    "rgba8": (T.RGBA8, _fmt_rgba8), "r8": (T.R8, _fmt_r8), "rg8": (T.RG8, _fmt_rg8),
    "srgb8-alpha8": (T.SRGB8_ALPHA8, _fmt_srgb8_alpha8), "rgb10-a2": (T.RGB10_A2, _fmt_rgb10_a2),
    "r11f-g11f-b10f": (T.R11F_G11F_B10F, _fmt_r11f_g11f_b10f),
    "rgba16f": (T.RGBA16F, _fmt_rgba16f), "rgba32f": (T.RGBA32F, _fmt_rgba32f),
}  # fmt: skip


def decode(fmt: str) -> list[tuple[float, ...]]:
    return FORMATS[fmt][1]()[1]


# -- a textured quad per format ----------------------------------------------------------------------
def _format_scene(fmt: str) -> Any:
    internal, enc = FORMATS[fmt]

    def run(c: Client, n: int) -> list[Image]:
        data, _ = enc()
        tex = need(c, "create_texture")("2d", 2, 2, internal_format=internal)
        c.pixel_store(False, "Alignment", 1)
        need(c, "tex_sub_image")(tex, 0, 0, 0, 2, 2, data)
        return sample_strips(c, tex, nearest(c), "tex", floats=tquad(-1, -1, 1, 1, 0, (0, 0), (1, 1)),
                             draws=[(0, 6)] * max(n, 1))  # fmt: skip

    def probes(n: int) -> list[Probe]:
        dec = decode(fmt)
        return [Probe(0, 16 + 32 * (i % 2), 16 + 32 * (i // 2), px(d), 1,  # type: ignore[arg-type]
                      f"{fmt} texel ({i % 2},{i // 2}) decoded by hand")
                for i, d in enumerate(dec)]  # fmt: skip

    run.__doc__ = f"A 2 x 2 {fmt} texture on a full-screen quad (nearest): each texel decoded."
    return run, probes


# -- mip levels through textureLod --------------------------------------------------------------------
LEVEL_COLORS = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 0, 255)]


def tex_lod(c: Client, n: int) -> list[Image]:
    """An 8 x 8 RGBA8 texture of 4 levels, each level one colour; strip i samples level i
    (textureLod)."""
    tex = need(c, "create_texture")("2d", 8, 8, levels=4)
    c.pixel_store(False, "Alignment", 1)
    for lvl, col in enumerate(LEVEL_COLORS):
        side = 8 >> lvl
        need(c, "tex_sub_image")(tex, lvl, 0, 0, side, side, bytes(col) * side * side)
    coords = [(0.5, 0.5, float(i)) for i in range(4)]
    return sample_strips(c, tex, nearest(c, mipmapMode="Nearest"), "texlod", coords)


def probes_tex_lod(n: int) -> list[Probe]:
    return strip_probes(LEVEL_COLORS, "level {i}")


# -- cube faces ------------------------------------------------------------------------------------
FACE_COLORS = [(255, 0, 0, 255), (0, 255, 255, 255), (0, 255, 0, 255), (255, 0, 255, 255),
               (0, 0, 255, 255), (255, 255, 0, 255)]  # fmt: skip
#: +X, -X, +Y, -Y, +Z, -Z: a direction straight at each face's centre
FACE_DIRS = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]


def strip_floats(coords: list[tuple[float, float, float]]) -> list[float]:
    """One full-height strip per coordinate, left to right, each sampling its coordinate."""
    floats: list[float] = []
    for i, uvw in enumerate(coords):
        x0, x1 = strip_x(i, len(coords))
        floats += tquad(x0, -1, x1, 1, 0, uvw)
    return floats


def _strips(program: str, coords: list[tuple[float, float, float]], c: Client) -> None:
    tsetup(c, strip_floats(coords), program)


def tex_cube(c: Client, n: int) -> list[Image]:
    """A 1 x 1 cube map, each face one colour; strip i looks straight at face i."""
    tex = need(c, "create_texture")("cube", 1, 1)
    c.pixel_store(False, "Alignment", 1)
    for face, col in enumerate(FACE_COLORS):
        need(c, "tex_sub_image")(tex, 0, 0, 0, 1, 1, bytes(col), face=face)
    coords = [tuple(float(v) for v in d) for d in FACE_DIRS]
    return sample_strips(c, tex, nearest(c), "texcube", coords)  # type: ignore[arg-type]


def probes_tex_cube(n: int) -> list[Probe]:
    return strip_probes(FACE_COLORS, "face {i}")


# -- a 3D slice and an array layer --------------------------------------------------------------------
SLICE_COLORS = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 255, 255)]


def tex_3d(c: Client, n: int) -> list[Image]:
    """A 1 x 1 x 4 3D texture, each slice one colour; strip k samples r = (k + 0.5) / 4."""
    tex = need(c, "create_texture")("3d", 1, 1, 4)
    c.pixel_store(False, "Alignment", 1)
    need(c, "tex_sub_image")(tex, 0, 0, 0, 1, 1, b"".join(bytes(s) for s in SLICE_COLORS), z=0, d=4)
    coords = [(0.5, 0.5, (k + 0.5) / 4) for k in range(4)]
    return sample_strips(c, tex, nearest(c), "tex3d", coords)


def probes_tex_3d(n: int) -> list[Probe]:
    return strip_probes(SLICE_COLORS, "slice {i}")


def tex_array(c: Client, n: int) -> list[Image]:
    """A 1 x 1 2D-array texture of 4 layers; strip k samples layer k (reversed order)."""
    tex = need(c, "create_texture")("2d_array", 1, 1, 4)
    c.pixel_store(False, "Alignment", 1)
    for k, col in enumerate(SLICE_COLORS):
        need(c, "tex_sub_image")(tex, 0, 0, 0, 1, 1, bytes(col), layer=k)
    coords = [(0.5, 0.5, float(3 - k)) for k in range(4)]
    return sample_strips(c, tex, nearest(c), "texarray", coords)


def probes_tex_array(n: int) -> list[Probe]:
    return strip_probes(SLICE_COLORS, "layer {i}", order=[3, 2, 1, 0])


# -- sampler state ---------------------------------------------------------------------------------
#: a 2 x 2 RGBA8 texture: A B (row 0) / C D (row 1)
QUAD_TEXELS = [(200, 0, 0, 255), (0, 200, 0, 255), (0, 0, 200, 255), (200, 200, 200, 255)]


def _quad_texture(c: Client) -> Any:
    tex = need(c, "create_texture")("2d", 2, 2)
    c.pixel_store(False, "Alignment", 1)
    need(c, "tex_sub_image")(tex, 0, 0, 0, 2, 2, b"".join(bytes(t) for t in QUAD_TEXELS))
    return tex


#: (sampler parameters, s coordinate at t = 0.25, which texel or colour it must read)
WRAP_CASES = [
    ({"wrapS": "Repeat"}, 1.25, QUAD_TEXELS[0]),  # 1.25 -> 0.25: column 0
    ({"wrapS": "ClampToEdge"}, 1.25, QUAD_TEXELS[1]),  # clamped to the last column
    ({"wrapS": "MirroredRepeat"}, 1.75, QUAD_TEXELS[0]),  # 1.75 -> 2 - 1.75 = 0.25
    ({"wrapS": "ClampToBorder", "borderColor": (1.0, 1.0, 1.0, 1.0)}, 1.5, (255, 255, 255, 255)),
]


def sampler_wrap(c: Client, n: int) -> list[Image]:
    """Strip i samples the 2 x 2 texture outside [0, 1] in s through sampler i: repeat,
    clamp to edge, mirrored repeat, clamp to border (opaque white)."""
    tex = _quad_texture(c)
    _strips("tex", [(s, 0.25, 0.0) for _, s, _ in WRAP_CASES], c)
    samplers = [nearest(c, **kw) for kw, _, _ in WRAP_CASES]
    c.bind_texture(0, tex)
    frame(c)
    for i, smp in enumerate(samplers):
        c.bind_sampler(0, smp)
        c.draw_arrays(GL.TRIANGLES, 6 * i, 6)
    return finish(c)


def probes_sampler_wrap(n: int) -> list[Probe]:
    names = ("repeat", "clamp-to-edge", "mirrored-repeat", "clamp-to-border")
    return [Probe(0, strip_probe_x(i, 4), 32, want, 0, names[i])  # type: ignore[arg-type]
            for i, (_, _, want) in enumerate(WRAP_CASES)]  # fmt: skip


def sampler_filter(c: Client, n: int) -> list[Image]:
    """The 2 x 2 texture at its centre (0.5, 0.5) and at texel (0, 0)'s centre: nearest on
    the left, linear on the right (the centre is the mean of the four texels)."""
    tex = _quad_texture(c)
    _strips("tex", [(0.25, 0.25, 0.0), (0.5, 0.5, 0.0), (0.25, 0.25, 0.0), (0.5, 0.5, 0.0)], c)
    near, lin = nearest(c), nearest(c, minFilter="Linear", magFilter="Linear")
    c.bind_texture(0, tex)
    frame(c)
    for i in range(4):
        c.bind_sampler(0, near if i < 2 else lin)
        c.draw_arrays(GL.TRIANGLES, 6 * i, 6)
    return finish(c)


def probes_sampler_filter(n: int) -> list[Probe]:
    mean = tuple(sum(t[k] for t in QUAD_TEXELS) / 4 / 255 for k in range(4))
    return [Probe(0, strip_probe_x(0, 4), 32, QUAD_TEXELS[0], 0, "nearest at texel (0,0)"),
            Probe(0, strip_probe_x(2, 4), 32, QUAD_TEXELS[0], 0, "linear at texel (0,0)'s centre"),
            Probe(0, strip_probe_x(3, 4), 32, px(mean), 1, "linear at the centre: the mean")]  # type: ignore[arg-type]  # fmt: skip


# -- a depth texture as a shadow map ---------------------------------------------------------------------
SHADOW_DEPTHS = (0.25, 0.75)
SHADOW_REF = 0.5


def shadow(c: Client, n: int) -> list[Image]:
    """A 2 x 1 DEPTH_COMPONENT32F texture (0.25, 0.75) sampled with compare mode
    LEQUAL against r = 0.5: texel 0 fails (0.5 > 0.25: black), texel 1 passes (white)."""
    tex = need(c, "create_texture")("2d", 2, 1, internal_format=T.DEPTH_COMPONENT32F)
    c.pixel_store(False, "Alignment", 1)
    need(c, "tex_sub_image")(tex, 0, 0, 0, 2, 1, struct.pack("<2f", *SHADOW_DEPTHS))
    return _shadow_strips(c, tex)


def _shadow_strips(c: Client, tex: Any) -> list[Image]:
    return sample_strips(c, tex, nearest(c, compareMode="CompareToTexture", compareFunc="LessEqual"),
                         "shadow", [(0.25, 0.5, SHADOW_REF), (0.75, 0.5, SHADOW_REF)],
                         draws=[(0, 12)])  # fmt: skip


def probes_shadow(n: int) -> list[Probe]:
    out = []
    for i, d in enumerate(SHADOW_DEPTHS):
        v = 255 if SHADOW_REF <= d else 0
        out.append(Probe(0, strip_probe_x(i, 2), 32, (v, v, v, 255), 0, f"ref {SHADOW_REF} vs {d}"))
    return out


# -- framebuffer sRGB encode --------------------------------------------------------------------------
SRGB_SRC = (0.5, 0.2, 0.04, 1.0)


def srgb_encode(c: Client, n: int) -> list[Image]:
    """A linear colour drawn into an SRGB8_ALPHA8 colour texture: the stored bytes are the
    sRGB encoding of each channel (alpha stays linear)."""
    setup(c, quad(-1, -1, 1, 1, 0, SRGB_SRC))
    tex = need(c, "create_texture")("2d", SIZE, SIZE, internal_format=T.SRGB8_ALPHA8)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    c.bind_framebuffer(fb)
    frame(c)
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    img = capture(c, SIZE, SIZE)
    c.bind_framebuffer(None)
    c.present()
    return [img]


def probes_srgb_encode(n: int) -> list[Probe]:
    enc = tuple(linear_to_srgb(v) for v in SRGB_SRC[:3]) + (SRGB_SRC[3],)
    return [Probe(0, 32, 32, px(enc), 1, "sRGB-encoded on write")]  # type: ignore[arg-type]


# -- MSAA resolve at a polygon edge --------------------------------------------------------------------
MSAA_EDGE_PX = 16.5  # a vertical edge through pixel 16's centre
MSAA_RED = (1.0, 0.0, 0.0, 1.0)


def msaa_resolve(c: Client, n: int) -> list[Image]:
    """A red quad whose right edge is x = 16.5 px, drawn into a 4x RGBA8 renderbuffer and
    resolved by a blit into a single-sampled texture: pixel 16 holds 2 of its 4 standard
    samples (x offsets 0.375, 0.875, 0.125, 0.625) inside, so it resolves to half red."""
    edge = MSAA_EDGE_PX / SIZE * 2 - 1
    setup(c, quad(-1, -1, edge, 1, 0, MSAA_RED))
    need(c, "bind_framebuffer", "target")
    ms = need(c, "create_renderbuffer", "samples")(SIZE, SIZE, GL.RGBA8, samples=4)
    ms_fb = c.create_framebuffer()
    c.framebuffer_texture(ms_fb, 0, ms)
    tex = c.create_texture_2d(SIZE, SIZE)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    c.bind_framebuffer(ms_fb)
    frame(c)
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.bind_framebuffer(ms_fb, target="read")
    c.bind_framebuffer(fb, target="draw")
    need(c, "blit_framebuffer")(0, 0, SIZE, SIZE, 0, 0, SIZE, SIZE)
    c.bind_framebuffer(fb)
    img = capture(c, SIZE, SIZE)
    c.bind_framebuffer(None)
    c.present()
    return [img]


def probes_msaa_resolve(n: int) -> list[Probe]:
    offsets = (0.375, 0.875, 0.125, 0.625)  # the 4x standard sample positions' x
    inside = sum(16 + o < MSAA_EDGE_PX for o in offsets) / len(offsets)
    half = tuple(v * inside for v in MSAA_RED[:3]) + (1.0,)
    return [Probe(0, 8, 32, px(MSAA_RED), 0, "inside"),
            Probe(0, 16, 32, px(half), 1, f"edge pixel: {inside:.2f} of its samples"),  # type: ignore[arg-type]
            Probe(0, 24, 32, (0, 0, 0, 255), 0, "outside")]  # fmt: skip


# -- uniforms: a matrix and a UBO array indexed in the shader ------------------------------------------
UBO_COLORS = [(1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0),
              (1.0, 1.0, 0.0, 1.0)]  # fmt: skip
#: column-major: scale x and y by 0.5, translate by (0.5, 0.5) -- the unit quad [-1, 1]
#: lands on NDC [0, 1] x [0, 1] (the top-right quadrant)
UBO_MVP = (0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0, 0.5, 0.5, 0, 1)


def _mat_apply(m: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[4] * y + m[12], m[1] * x + m[5] * y + m[13]


def ubo_array(c: Client, n: int) -> list[Image]:
    """A std140 uniform block {mat4; vec4[4]} at binding 0; four quadrant-sized quads, the
    colour index a vertex attribute, every position through the block's matrix."""
    floats: list[float] = []
    for i in range(4):  # quadrant i of [-1, 1]^2 in the quad's own space, colour index i
        x0, y0 = -1.0 + (i % 2), -1.0 + (i // 2)
        floats += quad(x0, y0, x0 + 1, y0 + 1, 0, (float(i), 0.0, 0.0, 0.0))
    setup(c, floats, "ubo")
    block = struct.pack("<16f", *UBO_MVP) + b"".join(struct.pack("<4f", *col) for col in UBO_COLORS)
    ubo = c.create_buffer(block)
    need(c, "bind_buffer_base")(T.UNIFORM_BUFFER, 0, ubo)
    frame(c)
    c.draw_arrays(GL.TRIANGLES, 0, 24)
    return finish(c)


def probes_ubo_array(n: int) -> list[Probe]:
    out = []
    for i in range(4):
        cx, cy = -0.5 + (i % 2), -0.5 + (i // 2)  # the quad's centre before the matrix
        x, y = _mat_apply(UBO_MVP, cx, cy)
        out.append(Probe(0, int((x + 1) / 2 * SIZE), int((y + 1) / 2 * SIZE), px(UBO_COLORS[i]),
                         0, f"colour index {i}"))  # fmt: skip
    return out + [Probe(0, 8, 8, (0, 0, 0, 255), 0, "outside the matrix's image")]


#: per draw: (matrix, tint) -- two draws of one quad with different default-block values
UMAT_DRAWS = [
    ((0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0, -0.5, -0.5, 0, 1), (1.0, 0.5, 0.0, 1.0)),
    ((0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0, 0.5, 0.5, 0, 1), (0.0, 0.5, 1.0, 1.0)),
]


def uniform_matrix(c: Client, n: int) -> list[Image]:
    """Default-block uniforms: one white quad drawn twice, each draw a new mat4 (scale 0.5,
    a translation) and tint; the bottom-left and top-right quadrants show the tints."""
    prog_vb = setup(c, quad(-1, -1, 1, 1, 0, (1.0, 1.0, 1.0, 1.0)), "umat")
    prog = prog_vb[1]
    frame(c)
    for m, tint in UMAT_DRAWS:
        need(c, "uniform_matrix")(prog, "u_mvp", m)
        need(c, "uniform")(prog, "u_tint", *tint)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
    return finish(c)


def probes_uniform_matrix(n: int) -> list[Probe]:
    out = []
    for m, tint in UMAT_DRAWS:
        x, y = _mat_apply(m, 0.0, 0.0)
        out.append(Probe(0, int((x + 1) / 2 * SIZE), int((y + 1) / 2 * SIZE), px(tint), 0,
                         f"quad through matrix translate ({m[12]}, {m[13]})"))  # fmt: skip
    return out + [Probe(0, 8, 56, (0, 0, 0, 255), 0, "no quad")]


# -- integer textures ------------------------------------------------------------------------------------
INT_TEXELS = {"r32ui": (T.R32UI, [(51,), (204,)]),
              "rgba8ui": (T.RGBA8UI, [(10, 20, 30, 255), (255, 128, 0, 64)])}  # fmt: skip


def int_texture(c: Client, n: int) -> list[Image]:
    """An R32UI (top half) and an RGBA8UI (bottom half) 2 x 1 texture read by texelFetch
    (no filtering: integer textures); the shader writes each channel / 255."""
    data = {"r32ui": struct.pack("<2I", *(t[0] for t in INT_TEXELS["r32ui"][1])),
            "rgba8ui": b"".join(bytes(t) for t in INT_TEXELS["rgba8ui"][1])}  # fmt: skip
    texs = {}
    c.pixel_store(False, "Alignment", 1)
    for name, (internal, _) in INT_TEXELS.items():
        texs[name] = need(c, "create_texture")("2d", 2, 1, internal_format=internal)
        need(c, "tex_sub_image")(texs[name], 0, 0, 0, 2, 1, data[name])
    floats: list[float] = []
    for row in range(2):  # row 0 (bottom): rgba8ui; row 1 (top): r32ui
        for col in range(2):
            floats += tquad(-1 + col, -1 + row, col, row, 0, (col + 0.5, 0.5, 0.0))
    tsetup(c, floats, "itex")
    c.bind_sampler(0, nearest(c))
    frame(c)
    for row, name in enumerate(("rgba8ui", "r32ui")):
        c.bind_texture(0, texs[name])
        c.draw_arrays(GL.TRIANGLES, 12 * row, 12)
    return finish(c)


def probes_int_texture(n: int) -> list[Probe]:
    out = []
    for row, name in enumerate(("rgba8ui", "r32ui")):
        for col, t in enumerate(INT_TEXELS[name][1]):
            rgba = tuple(t) + (0, 0, 1)[len(t) - 1 :]  # GL: missing g, b = 0, a = 1 (of 255)
            out.append(Probe(0, 16 + 32 * col, 16 + 32 * row, rgba, 0, f"{name} texel {col}"))  # type: ignore[arg-type]
    return out


# -- texture parameters on the texture (its built-in sampler) --------------------------------------
GL_TEXTURE_MIN_FILTER, GL_TEXTURE_MAG_FILTER, GL_TEXTURE_WRAP_S = 0x2801, 0x2800, 0x2802
GL_NEAREST_MIPMAP_NEAREST, GL_REPEAT, GL_MIRRORED_REPEAT = 0x2700, 0x2901, 0x8370


def tex_params(c: Client, n: int) -> list[Image]:
    """No sampler object: glTexParameter on the texture (nearest, then wrap S repeat on one
    texture, mirrored repeat on a second with the same texels) -- the texture's built-in
    sampler decides; s = 1.25 reads column 0 (repeat) and column 1 (mirror: 0.75)."""
    texs = [_quad_texture(c), _quad_texture(c)]
    for tex, wrap in zip(texs, (GL_REPEAT, GL_MIRRORED_REPEAT)):
        tp = need(c, "tex_parameter")
        tp(tex, GL_TEXTURE_MIN_FILTER, T.NEAREST)
        tp(tex, GL_TEXTURE_MAG_FILTER, T.NEAREST)
        tp(tex, GL_TEXTURE_WRAP_S, wrap)
    _strips("tex", [(1.25, 0.25, 0.0), (1.25, 0.25, 0.0)], c)
    frame(c)
    for i, tex in enumerate(texs):
        c.bind_texture(0, tex)
        c.draw_arrays(GL.TRIANGLES, 6 * i, 6)
    return finish(c)


def probes_tex_params(n: int) -> list[Probe]:
    return [Probe(0, 16, 32, QUAD_TEXELS[0], 0, "wrap_s REPEAT: 1.25 -> 0.25"),
            Probe(0, 48, 32, QUAD_TEXELS[1], 0, "wrap_s MIRRORED_REPEAT: 1.25 -> 0.75")]  # fmt: skip


# -- glGenerateMipmap ------------------------------------------------------------------------------
def tex_mipgen(c: Client, n: int) -> list[Image]:
    """The 2 x 2 texture with 2 levels, level 1 made by glGenerateMipmap; strip 0 samples
    level 0 texel (0, 0), strip 1 level 1 (textureLod 1): the box filter's mean."""
    tex = need(c, "create_texture")("2d", 2, 2, levels=2)
    c.pixel_store(False, "Alignment", 1)
    need(c, "tex_sub_image")(tex, 0, 0, 0, 2, 2, b"".join(bytes(t) for t in QUAD_TEXELS))
    need(c, "generate_mipmap")(tex)
    return sample_strips(c, tex, nearest(c, mipmapMode="Nearest"), "texlod",
                         [(0.25, 0.25, 0.0), (0.25, 0.25, 1.0)], draws=[(0, 12)])  # fmt: skip


def probes_tex_mipgen(n: int) -> list[Probe]:
    mean = tuple(sum(t[k] for t in QUAD_TEXELS) / 4 / 255 for k in range(4))
    return [Probe(0, 16, 32, QUAD_TEXELS[0], 0, "level 0"),
            Probe(0, 48, 32, px(mean), 1, "generated level 1: the mean")]  # type: ignore[arg-type]  # fmt: skip


# -- shadow maps of every depth format --------------------------------------------------------------
def _depth_bytes(fmt: str) -> bytes:
    d = SHADOW_DEPTHS
    if fmt == "depth16":
        return struct.pack("<2H", *(round(v * 0xFFFF) for v in d))
    if fmt == "depth24":  # GL_UNSIGNED_INT: 32-bit normalised
        return struct.pack("<2I", *(round(v * 0xFFFFFFFF) for v in d))
    if fmt == "depth24-stencil8":  # GL_UNSIGNED_INT_24_8: depth in the top 24 bits
        return struct.pack("<2I", *(round(v * 0xFFFFFF) << 8 for v in d))
    return struct.pack("<2f", *d)


DEPTH_FORMATS = {"depth16": T.DEPTH_COMPONENT16, "depth24": T.DEPTH_COMPONENT24,
                 "depth32f": T.DEPTH_COMPONENT32F, "depth24-stencil8": T.DEPTH24_STENCIL8}  # fmt: skip


def _shadow_scene(fmt: str) -> tuple[Any, Any]:
    def run(c: Client, n: int) -> list[Image]:
        tex = need(c, "create_texture")("2d", 2, 1, internal_format=DEPTH_FORMATS[fmt])
        c.pixel_store(False, "Alignment", 1)
        need(c, "tex_sub_image")(tex, 0, 0, 0, 2, 1, _depth_bytes(fmt))
        return _shadow_strips(c, tex)

    run.__doc__ = f"The shadow-map scene on a {fmt} texture (compare LEQUAL against r = 0.5)."
    return run, probes_shadow


# -- base vertex --------------------------------------------------------------------------------------
def base_vertex(c: Client, n: int) -> list[Image]:
    """Two quads in one vertex buffer (red at vertices 0..3, green at 4..7), one u16 index
    list 0 1 2 0 2 3: drawn with base vertex 0 on the left half, base vertex 4 on the right."""
    verts: list[float] = []
    for (x0, x1), col in (((-1.0, 0.0), (1.0, 0.0, 0.0, 1.0)), ((0.0, 1.0), (0.0, 1.0, 0.0, 1.0))):
        for x, y in ((x0, -1.0), (x1, -1.0), (x1, 1.0), (x0, 1.0)):
            verts += [x, y, 0.0, *col]
    setup(c, verts)
    c.bind_index_buffer(c.create_buffer(struct.pack("<6H", 0, 1, 2, 0, 2, 3)))
    draw = need(c, "draw_elements", "base_vertex")
    frame(c)
    draw(GL.TRIANGLES, 6, 2, base_vertex=0)
    draw(GL.TRIANGLES, 6, 2, base_vertex=4)
    return finish(c)


def probes_base_vertex(n: int) -> list[Probe]:
    return [Probe(0, 16, 32, (255, 0, 0, 255), 0, "base vertex 0"),
            Probe(0, 48, 32, (0, 255, 0, 255), 0, "base vertex 4")]  # fmt: skip


# -- glClearBuffer -----------------------------------------------------------------------------------
CB_COLORS = ((0.25, 0.5, 0.75, 1.0), (1.0, 0.0, 0.5, 1.0))


def clear_buffer(c: Client, n: int) -> list[Image]:
    """Two colour attachments cleared by glClearBufferfv, each its own colour (draw buffers
    0 and 1), read back one by one."""
    from .pixel_state import _fb_mrt, _read_both

    fb, _ = _fb_mrt(c)
    c.viewport(0, 0, SIZE, SIZE)
    for i, col in enumerate(CB_COLORS):
        need(c, "clear_buffer")("color", i, col)
    imgs = _read_both(c, fb)
    c.bind_framebuffer(None)
    c.present()
    return imgs


def probes_clear_buffer(n: int) -> list[Probe]:
    return [Probe(i, 32, 32, px(col), 0, f"draw buffer {i}") for i, col in enumerate(CB_COLORS)]


SCENE_FNS: dict[str, tuple[Any, Any]] = {f"tex-{f}": _format_scene(f) for f in FORMATS}
SCENE_FNS.update({
    "tex-lod": (tex_lod, probes_tex_lod), "tex-cube": (tex_cube, probes_tex_cube),
    "tex-3d": (tex_3d, probes_tex_3d), "tex-array": (tex_array, probes_tex_array),
    "sampler-wrap": (sampler_wrap, probes_sampler_wrap),
    "sampler-filter": (sampler_filter, probes_sampler_filter),
    "shadow": (shadow, probes_shadow), "srgb-encode": (srgb_encode, probes_srgb_encode),
    "msaa-resolve": (msaa_resolve, probes_msaa_resolve), "ubo-array": (ubo_array, probes_ubo_array),
    "uniform-matrix": (uniform_matrix, probes_uniform_matrix),
    "int-texture": (int_texture, probes_int_texture),
    "tex-params": (tex_params, probes_tex_params), "tex-mipgen": (tex_mipgen, probes_tex_mipgen),
    "base-vertex": (base_vertex, probes_base_vertex),
    "clear-buffer": (clear_buffer, probes_clear_buffer),
})  # fmt: skip
SCENE_FNS.update((f"shadow-{f}", _shadow_scene(f)) for f in DEPTH_FORMATS if f != "depth32f")


def _minecraft() -> tuple[Any, Any]:
    from .minecraft import minecraft_frame, probes_minecraft_frame

    return minecraft_frame, probes_minecraft_frame


SCENE_FNS["minecraft-frame"] = _minecraft()

from . import draws as _draws  # noqa: E402  (issue 19's draw scenes: indirect, client memory)

SCENE_FNS.update(_draws.SCENE_FNS)
