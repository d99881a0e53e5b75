"""Pixel scenes, part 2: viewport churn, colour masks, polygon offset, restart strips,
instancing, a texture upload, and a Blaze3D-like frame of batches toggling GL_BLEND.

Conventions as in :mod:`.pixel_state` (64 x 64 surface, first-principles probes).
"""

from __future__ import annotations

import struct

from ...client.api import Client
from ..shaders.programs import load
from .kit import GL, STRIDE, Image, Probe, capture, px, quad, setup
from .pixel_state import BG, BLACK, BLUE, GREEN, RED, SIZE, YELLOW, _fb_mrt, _read_both

__all__ = ["viewport_churn", "probes_viewport_churn", "color_mask", "probes_color_mask",
           "polygon_offset", "probes_polygon_offset", "restart_strip", "probes_restart_strip",
           "instanced", "probes_instanced", "texture_upload", "probes_texture_upload",
           "blaze3d_frame", "probes_blaze3d_frame", "QUADRANTS"]  # fmt: skip

WHITE = (1.0, 1.0, 1.0, 1.0)
#: viewport (x, y) of each 32 x 32 quadrant and the colour drawn there.
QUADRANTS = (((0, 0), RED), ((32, 0), GREEN), ((0, 32), BLUE), ((32, 32), YELLOW))


# -- viewport churn ----------------------------------------------------------------------
def viewport_churn(c: Client, n: int) -> list[Image]:
    """A full-screen quad drawn through a different viewport each draw: n rounds of the four
    quadrants (each round a new set of viewports), then a 16 x 16 centre viewport."""
    floats = [v for _, col in QUADRANTS for v in quad(-1, -1, 1, 1, 0, col)] + quad(
        -1, -1, 1, 1, 0, WHITE)  # fmt: skip
    setup(c, floats)
    c.clear_color(*BLACK)
    c.clear()
    for r in range(max(n, 1)):
        for i, ((x, y), _) in enumerate(QUADRANTS):
            shrink = r % 8  # a distinct viewport per round; the last round is full-size
            if r == max(n, 1) - 1:
                shrink = 0
            c.viewport(x + shrink, y + shrink, 32 - shrink, 32 - shrink)
            c.draw_arrays(GL.TRIANGLES, 6 * i, 6)
    c.viewport(24, 24, 16, 16)
    c.draw_arrays(GL.TRIANGLES, 24, 6)
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_viewport_churn(n: int) -> list[Probe]:
    # the outer corner of each quadrant (the centre viewport covers the inner ones)
    out = [Probe(0, x + (4 if x == 0 else 27), y + (4 if y == 0 else 27), px(col),
                 what=f"quadrant at ({x},{y})") for (x, y), col in QUADRANTS]  # fmt: skip
    return out + [Probe(0, 32, 32, px(WHITE), what="centre viewport (24,24,16,16)")]


# -- colour masks per draw buffer ---------------------------------------------------------------
MASK_SRC = (1.0, 1.0, 0.0, 1.0)


def color_mask(c: Client, n: int) -> list[Image]:
    """Buffer 0 writes R only, buffer 1 G/B/A only (left half); then a broadcast G-only mask
    with a black source (right half). The ``mrt`` program writes (1 - rgb, a) to buffer 1."""
    floats = quad(-1, -1, 1, 1, 0, MASK_SRC) + quad(0, -1, 1, 1, 0, BLACK)
    setup(c, floats, "mrt")
    fb, _ = _fb_mrt(c)
    c.viewport(0, 0, SIZE, SIZE)
    s = c.state
    for _ in range(max(n, 1)):
        s.set_color_mask(True, True, True, True)
        c.clear_color(*BG)
        c.clear()
        s.set_color_mask_indexed(0, True, False, False, False)
        s.set_color_mask_indexed(1, False, True, True, True)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        s.set_color_mask(False, True, False, False)
        c.draw_arrays(GL.TRIANGLES, 6, 6)
        s.set_color_mask(True, True, True, True)
    imgs = _read_both(c, fb)
    c.bind_framebuffer(None)
    c.present()
    return imgs


def probes_color_mask(n: int) -> list[Probe]:
    bg, src = px(BG), px(MASK_SRC)
    comp = px(tuple(1.0 - v for v in MASK_SRC[:3]) + (MASK_SRC[3],))  # type: ignore[arg-type]
    comp_black = px((1.0, 1.0, 1.0, 1.0))
    return [Probe(0, 16, 32, (src[0], bg[1], bg[2], bg[3]), what="buffer 0 R only"),
            Probe(1, 16, 32, (bg[0], comp[1], comp[2], comp[3]), what="buffer 1 G/B/A only"),
            Probe(0, 48, 32, (src[0], 0, bg[2], bg[3]), what="broadcast G-only, black source"),
            Probe(1, 48, 32, (bg[0], comp_black[1], comp[2], comp[3]),
                  what="broadcast G-only, buffer 1 complement of black")]  # fmt: skip


# -- polygon offset --------------------------------------------------------------------------
def polygon_offset(c: Client, n: int) -> list[Image]:
    """Red at z = 0.5; the same plane again in green fails GL_LESS, except on the right half
    where polygon offset (0, -4) pulls it nearer. Drawn into a framebuffer of two
    renderbuffers (RGBA8 colour, DEPTH24_STENCIL8)."""
    floats = quad(-1, -1, 1, 1, 0.5, RED) + quad(-1, -1, 0, 1, 0.5, GREEN) + quad(
        0, -1, 1, 1, 0.5, GREEN)  # fmt: skip
    setup(c, floats)
    fb = c.create_framebuffer()
    color = c.create_renderbuffer(SIZE, SIZE, GL.RGBA8)
    ds = c.create_renderbuffer(SIZE, SIZE, GL.DEPTH24_STENCIL8)
    c.framebuffer_texture(fb, 0, color)
    c.framebuffer_depth_stencil(fb, ds, ds)
    c.bind_framebuffer(fb)
    c.viewport(0, 0, SIZE, SIZE)
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        c.clear_depth(1.0)
        c.clear(GL.COLOR_BUFFER_BIT | GL.DEPTH_BUFFER_BIT)
        c.enable("DepthTest")
        c.depth_func("Less")
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        c.draw_arrays(GL.TRIANGLES, 6, 6)
        c.enable("PolygonOffsetFill")
        c.state.set_polygon_offset(0.0, -4.0)
        c.draw_arrays(GL.TRIANGLES, 12, 6)
        c.disable("PolygonOffsetFill")
        c.state.set_polygon_offset(0.0, 0.0)
        c.disable("DepthTest")
    img = capture(c, SIZE, SIZE)
    c.bind_framebuffer(None)
    c.delete_framebuffer(fb)
    c.delete_texture(color)
    c.delete_texture(ds)
    c.present()
    return [img]


def probes_polygon_offset(n: int) -> list[Probe]:
    return [Probe(0, 16, 32, px(RED), what="coplanar, no offset: GL_LESS fails"),
            Probe(0, 48, 32, px(GREEN), what="offset units -4: passes")]  # fmt: skip


# -- indexed strips with primitive restart ------------------------------------------------------------
RESTART = 0xFFFF


def restart_strip(c: Client, n: int) -> list[Image]:
    """Two 4-vertex strips in one indexed draw, split by the fixed restart index 0xFFFF;
    without restart the strip would bridge the gap between them."""
    verts = []
    for (x0, x1), col in (((-1.0, -0.5), RED), ((0.5, 1.0), GREEN)):
        for x, y in ((x0, -1.0), (x1, -1.0), (x0, 1.0), (x1, 1.0)):
            verts += [x, y, 0.0, *col]
    setup(c, verts)
    idx = c.create_buffer(struct.pack("<9H", 0, 1, 2, 3, RESTART, 4, 5, 6, 7))
    c.bind_index_buffer(idx)
    c.viewport(0, 0, SIZE, SIZE)
    c.enable("PrimitiveRestartFixedIndex")
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        c.clear()
        c.draw_elements(GL.TRIANGLE_STRIP, 9, 2)
    c.disable("PrimitiveRestartFixedIndex")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_restart_strip(n: int) -> list[Probe]:
    return [Probe(0, 8, 32, px(RED), what="first strip"),
            Probe(0, 56, 32, px(GREEN), what="second strip"),
            Probe(0, 32, 32, px(BLACK), what="restart leaves the gap empty")]  # fmt: skip


# -- instanced ---------------------------------------------------------------------------------------
def instanced(c: Client, n: int) -> list[Image]:
    """One indexed quad (-1..-0.5) drawn 4 instances; offset and colour per instance
    (divisor 1) place each in a quadrant."""
    corners = [(-1.0, -1.0), (-0.5, -1.0), (-0.5, -0.5), (-1.0, -0.5)]
    quad_vb = c.create_buffer(struct.pack("<12f", *(v for x, y in corners for v in (x, y, 0.0))))
    per = []
    for (x, y), col in QUADRANTS:  # quadrant origin in pixels -> NDC offset
        per += [x / 32.0 + 0.25, y / 32.0 + 0.25, *col]
    inst_vb = c.create_buffer(struct.pack(f"<{len(per)}f", *per))
    src = load("instanced")
    c.use_program(c.create_program(src.spirv, src.reflection))
    c.vertex_attrib_pointer(0, quad_vb, 3, stride=12)
    c.vertex_attrib_pointer(1, inst_vb, 4, stride=24, offset=8, divisor=1)
    c.vertex_attrib_pointer(2, inst_vb, 2, stride=24, offset=0, divisor=1)
    c.bind_index_buffer(c.create_buffer(struct.pack("<6H", 0, 1, 2, 0, 2, 3)))
    c.viewport(0, 0, SIZE, SIZE)
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        c.clear()
        c.draw_elements(GL.TRIANGLES, 6, 2, instances=len(QUADRANTS))
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_instanced(n: int) -> list[Probe]:
    # the quad covers NDC [-1,-0.5]^2 = pixels 0..15, shifted by (x/32 + 0.25) NDC = x + 8 px
    out = [Probe(0, x + 16, y + 16, px(col), what=f"instance at ({x},{y})")
           for (x, y), col in QUADRANTS]  # fmt: skip
    return out + [Probe(0, 2, 2, px(BLACK), what="outside every instance")]


# -- texture upload -------------------------------------------------------------------------------------
TEX = 16


def _texel(x: int, y: int) -> tuple[int, int, int, int]:
    return (x * 16, y * 16, (x + y) * 7 % 256, 255)


def texture_upload(c: Client, n: int) -> list[Image]:
    """Two sub-image regions into a 16 x 16 RGBA8 texture, a respecified vertex buffer, the
    texture as a colour attachment with a quad over its right half, read back."""
    tex = c.create_texture_2d(TEX, TEX)
    for y0, h in ((0, 8), (8, 8)):  # two regions: the upload leaves as one record
        rows = b"".join(bytes(_texel(x, y)) for y in range(y0, y0 + h) for x in range(TEX))
        c.tex_sub_image_2d(tex, 0, 0, y0, TEX, h, rows)
    vb, _ = setup(c, quad(-1, -1, -1, -1, 0, BLACK)[:21])  # one triangle's worth
    c.buffer_data(vb, struct.pack("<42f", *quad(0, -1, 1, 1, 0, BLUE)))  # respecify: new size
    c.vertex_attrib_pointer(0, vb, 3, stride=STRIDE, offset=0)
    c.vertex_attrib_pointer(1, vb, 4, stride=STRIDE, offset=12)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    c.bind_framebuffer(fb)
    c.viewport(0, 0, TEX, TEX)
    for _ in range(max(n, 1)):
        c.draw_arrays(GL.TRIANGLES, 0, 6)
    img = capture(c, TEX, TEX)
    c.bind_framebuffer(None)
    c.delete_framebuffer(fb)
    c.delete_texture(tex)
    c.delete_buffer(vb)
    c.present()
    return [img]


def probes_texture_upload(n: int) -> list[Probe]:
    return [Probe(0, x, y, _texel(x, y), what="uploaded texel") for x, y in ((0, 0), (3, 5),
            (7, 8), (5, 15))] + [Probe(0, 12, 4, px(BLUE), what="drawn over the right half")]  # fmt: skip


# -- a Blaze3D-like frame ------------------------------------------------------------------------------------
STRIPS = 8


def _strip_color(i: int) -> tuple[float, float, float, float]:
    return ((i % 4) / 4.0, (i // 4) / 2.0, 0.2, 1.0)


TRANSLUCENT = (1.0, 1.0, 1.0, 0.5)


def blaze3d_frame(c: Client, n: int) -> list[Image]:
    """n batches, depth test on (GL_LEQUAL), each batch: GL_BLEND off + an opaque strip, GL_BLEND
    on + a translucent quad over the strip's upper half (batch i draws strip i % 8)."""
    floats: list[float] = []
    for i in range(STRIPS):
        x0 = -1.0 + 2.0 * i / STRIPS
        x1 = x0 + 2.0 / STRIPS
        floats += quad(x0, -1, x1, 1, 0.0, _strip_color(i)) + quad(x0, 0, x1, 1, 0.0, TRANSLUCENT)
    setup(c, floats)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(*BLACK)
    c.clear_depth(1.0)
    c.clear(GL.COLOR_BUFFER_BIT | GL.DEPTH_BUFFER_BIT)
    c.enable("DepthTest")
    c.depth_func("LessEqual")
    c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
    for b in range(n):
        i = b % STRIPS
        c.disable("Blend")
        c.draw_arrays(GL.TRIANGLES, 12 * i, 6)
        c.enable("Blend")
        c.draw_arrays(GL.TRIANGLES, 12 * i + 6, 6)
    c.disable("Blend")
    c.disable("DepthTest")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_blaze3d_frame(n: int) -> list[Probe]:
    out = []
    a = TRANSLUCENT[3]
    for i in range(min(n, STRIPS)):
        col = _strip_color(i)
        x = i * SIZE // STRIPS + SIZE // (2 * STRIPS)
        top = tuple(s * a + d * (1 - a) for s, d in zip(TRANSLUCENT[:3], col[:3])) + (
            a * a + col[3] * (1 - a),)  # fmt: skip
        out += [Probe(0, x, 16, px(col), what=f"strip {i} opaque"),
                Probe(0, x, 48, px(top), 1, f"strip {i} blended")]  # type: ignore[arg-type]  # fmt: skip
    return out
