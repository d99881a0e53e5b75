"""A Minecraft-like frame: a texture atlas, a frame uniform block (projection,
model-view, fog), an alpha test in the fragment shader, a per-chunk default-block
uniform (the chunk offset) changed every draw, GL_BLEND toggled per chunk row, and
about 2,000 draws (``n`` the draw count).

The 64 x 64 surface holds 8 x 8 chunks of 8 x 8 pixels; draw ``d`` draws chunk
``d % 64``: a unit quad moved by its ``u_chunk_offset``, textured by one 8 x 8 tile of the
16 x 16 atlas (nearest), so pixel (px, py) of a chunk is texel (px, py) of its tile.
Tile 3 is a cutout: texels with (tx + ty) even have alpha 0 and are discarded. Odd chunk
rows draw with GL_BLEND on (SrcAlpha, OneMinusSrcAlpha) -- their texels are opaque, so
blending writes the source exactly, and a repeated draw changes nothing. Fog: linear
in view depth; chunk row ``cy`` sits at depth ``z = -cy / 8``, fog start 0, end 1, so
its fog factor is exactly ``cy / 8`` (the probes mix by hand).
"""

from __future__ import annotations

import struct

from ...client.api import Client
from .kit import GL, Image, Probe, px
from .render import SIZE, capture, nearest, need, tquad, tsetup

__all__ = ["minecraft_frame", "probes_minecraft_frame", "CHUNKS", "atlas_texel", "DRAWS"]

CHUNKS = 8  # per side
TILE = 8  # texels per tile side (= pixels per chunk side)
ATLAS = 16
DRAWS = 2048
FOG_COLOR = (0.5, 0.75, 1.0, 1.0)
CLEAR = (0.0, 0.0, 0.0, 1.0)
#: projection: x, y unchanged, view z in [-1, 0] -> clip z in [0.25, 0.75] (inside both
#: GL's and Vulkan's clip volume); model-view: the identity
PROJ = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -0.5, 0, 0, 0, 0.25, 1)
MODELVIEW = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)


def atlas_texel(tile: int, tx: int, ty: int) -> tuple[int, int, int, int]:
    """The atlas texel (tile-local tx, ty) of tile 0..3: RGBA8, by a formula."""
    alpha = 0 if tile == 3 and (tx + ty) % 2 == 0 else 255
    return (40 + 24 * tx, 40 + 24 * ty, 60 * tile + 20, alpha)


def _atlas_bytes() -> bytes:
    rows = []
    for y in range(ATLAS):
        for x in range(ATLAS):
            tile = (x // TILE) + 2 * (y // TILE)
            rows.append(bytes(atlas_texel(tile, x % TILE, y % TILE)))
    return b"".join(rows)


def _tile(chunk: int) -> int:
    return (chunk * 5 + chunk // CHUNKS) % 4


def minecraft_frame(c: Client, n: int) -> list[Image]:
    """A Minecraft-like frame: atlas, frame UBO, alpha test, per-chunk uniforms, blend toggles."""
    atlas = need(c, "create_texture")("2d", ATLAS, ATLAS)
    c.pixel_store(False, "Alignment", 1)
    need(c, "tex_sub_image")(atlas, 0, 0, 0, ATLAS, ATLAS, _atlas_bytes())
    unit = 2.0 / CHUNKS
    floats: list[float] = []
    for tile in range(4):  # one unit quad per tile at the origin chunk, its tile's uv range
        s0, t0 = (tile % 2) * TILE / ATLAS, (tile // 2) * TILE / ATLAS
        floats += tquad(-1, -1, -1 + unit, -1 + unit, 0, (s0, t0), (s0 + 0.5, t0 + 0.5))
    prog = tsetup(c, floats, "mc")
    frame_block = struct.pack("<16f", *PROJ) + struct.pack("<16f", *MODELVIEW) + struct.pack(
        "<4f", *FOG_COLOR) + struct.pack("<4f", 0.0, 1.0, 0.0, 0.0)  # fmt: skip
    ubo = c.create_buffer(frame_block)
    need(c, "bind_buffer_base")("uniform", 0, ubo)
    need(c, "uniform")(prog, "u_atlas", 0)
    c.bind_texture(0, atlas)
    c.bind_sampler(0, nearest(c))
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(*CLEAR)
    c.clear()
    c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
    for d in range(n):
        chunk = d % (CHUNKS * CHUNKS)
        cx, cy = chunk % CHUNKS, chunk // CHUNKS
        (c.enable if cy % 2 else c.disable)("Blend")
        need(c, "uniform")(prog, "u_chunk_offset", cx * unit, cy * unit, -cy / CHUNKS, 0.0)
        c.draw_arrays(GL.TRIANGLES, 6 * _tile(chunk), 6)
    c.disable("Blend")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_minecraft_frame(n: int) -> list[Probe]:
    out = []
    drawn = min(n, CHUNKS * CHUNKS)
    for chunk in sorted({0, 9, 18, 27, 36, 45, 54, 63, 3, 12} & set(range(drawn))):
        cx, cy = chunk % CHUNKS, chunk // CHUNKS
        tile = _tile(chunk)
        for tx, ty in ((4, 4), (5, 4)):
            r, g, b, a = atlas_texel(tile, tx, ty)
            if a == 0:
                want = px(CLEAR)
                what = "alpha-tested away"
            else:
                f = cy / CHUNKS
                want = px(tuple(v / 255 * (1 - f) + fc * f for v, fc in zip((r, g, b), FOG_COLOR)) + (1.0,))  # type: ignore[arg-type]
                what = f"tile {tile}, fog {f}"
            out.append(Probe(0, cx * TILE + tx, cy * TILE + ty, want, 1,
                             f"chunk ({cx},{cy}) texel ({tx},{ty}): {what}"))  # fmt: skip
    return out
