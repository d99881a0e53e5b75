"""Pixel scenes, part 1: clears, blend, depth, stencil, cull, scissor.

Every scene draws on a 64 x 64 surface (``SIZE``) and returns its read-back images; each
``probes_<scene>(n)`` states the expected pixels from first principles. NDC -> pixels:
``x_pixel = (x_ndc + 1) * 32``, so the bands used below are ``[-1, -0.5]`` = pixels 0..15,
``[-0.5, 0.5]`` = 16..47, ``[0.5, 1]`` = 48..63 (and the same in y).
"""

from __future__ import annotations

from ...client.api import Client
from .kit import GL, Image, Probe, capture, px, quad, quad_cw, setup, unorm

__all__ = ["SIZE", "clears", "probes_clears", "blend", "probes_blend", "depth", "probes_depth",
           "stencil", "probes_stencil", "cull", "probes_cull", "scissor", "probes_scissor"]  # fmt: skip

SIZE = 64
BG = (0.2, 0.4, 0.6, 1.0)
RED, GREEN, BLUE = (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0)
YELLOW, MAGENTA, CYAN = (1.0, 1.0, 0.0, 1.0), (1.0, 0.0, 1.0, 1.0), (0.0, 1.0, 1.0, 1.0)
BLACK = (0.0, 0.0, 0.0, 1.0)


def _fb_mrt(c: Client) -> tuple[object, list]:
    fb = c.create_framebuffer()
    texs = [c.create_texture_2d(SIZE, SIZE) for _ in range(2)]
    for i, t in enumerate(texs):
        c.framebuffer_texture(fb, i, t)
    c.bind_framebuffer(fb)
    return fb, texs


def _read_both(c: Client, fb: object) -> list[Image]:
    out = []
    for i in range(2):
        c.read_buffer(fb, i)  # type: ignore[arg-type]
        out.append(capture(c, SIZE, SIZE))
    return out


# -- clears ------------------------------------------------------------------------
def clears(c: Client, n: int) -> list[Image]:
    """Full clear; a scissored clear of a box; a colour-masked scissored clear (n times)."""
    for _ in range(max(n, 1)):
        c.clear_color(*BG)
        c.clear(GL.COLOR_BUFFER_BIT | GL.DEPTH_BUFFER_BIT | GL.STENCIL_BUFFER_BIT)
        c.enable("ScissorTest")
        c.scissor(16, 16, 32, 32)
        c.clear_color(*RED)
        c.clear()
        c.scissor(0, 0, 16, 16)
        c.state.set_color_mask(True, False, False, True)
        c.clear_color(0.0, 1.0, 1.0, 1.0)
        c.clear()
        c.state.set_color_mask(True, True, True, True)
        c.disable("ScissorTest")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_clears(n: int) -> list[Probe]:
    bg = px(BG)
    return [Probe(0, 56, 56, bg, what="outside both boxes"),
            Probe(0, 32, 32, px(RED), what="scissored clear"),
            Probe(0, 8, 8, (0, bg[1], bg[2], 255), what="R-only mask clears red to 0")]  # fmt: skip


# -- blend ---------------------------------------------------------------------------
BLEND_SRC = (1.0, 0.0, 0.0, 0.6)
BLEND_COLOR = (0.5, 0.5, 0.5, 0.5)


def blend(c: Client, n: int) -> list[Image]:
    """Two colour attachments: buffer 0 blends SrcAlpha/OneMinusSrcAlpha, buffer 1
    ConstantColor/Zero with a blend colour (left half); then buffer 1's blend goes off
    (right half). The ``mrt`` program writes (1 - rgb, a) to buffer 1."""
    floats = quad(-1, -1, 0, 1, 0, BLEND_SRC) + quad(0, -1, 1, 1, 0, BLEND_SRC)
    setup(c, floats, "mrt")
    fb, _ = _fb_mrt(c)
    c.viewport(0, 0, SIZE, SIZE)
    for _ in range(max(n, 1)):
        c.clear_color(*BG)
        c.clear()
        s = c.state
        s.set_capability("Blend", True)
        s.set_blend_func_indexed(0, "SrcAlpha", "OneMinusSrcAlpha", "SrcAlpha", "OneMinusSrcAlpha")
        s.set_blend_func_indexed(1, "ConstantColor", "Zero", "ConstantColor", "Zero")
        s.set_blend_color(*BLEND_COLOR)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        s.set_capability_indexed("Blend", 1, False)
        c.draw_arrays(GL.TRIANGLES, 6, 6)
        s.set_capability("Blend", False)
    imgs = _read_both(c, fb)
    c.bind_framebuffer(None)
    c.present()
    return imgs


def probes_blend(n: int) -> list[Probe]:
    a = BLEND_SRC[3]
    over = tuple(s * a + d * (1 - a) for s, d in zip(BLEND_SRC[:3], BG[:3])) + (
        a * a + BG[3] * (1 - a),
    )
    comp = tuple(1.0 - v for v in BLEND_SRC[:3]) + (a,)
    const = tuple(v * k for v, k in zip(comp, BLEND_COLOR))
    return [Probe(0, 16, 32, px(over), 1, "buffer 0 SrcAlpha blend (left)"),
            Probe(0, 48, 32, px(over), 1, "buffer 0 SrcAlpha blend (right)"),
            Probe(1, 16, 32, px(const), 1, "buffer 1 ConstantColor blend"),
            Probe(1, 48, 32, px(comp), 0, "buffer 1 blend off: replaced")]  # fmt: skip


# -- depth ----------------------------------------------------------------------------
def _zw(z: float, near: float = 0.0, far: float = 1.0) -> float:
    return (far - near) / 2 * z + (far + near) / 2


def depth(c: Client, n: int) -> list[Image]:
    """Depth func, mask and range on the default framebuffer (see the probes)."""
    floats = (quad(-1, -1, 1, 1, 0.5, RED) + quad(-1, -1, 0, 1, 0.0, GREEN)
              + quad(-1, -1, 1, 1, 0.8, BLUE) + quad(-1, 0.5, 1, 1, 0.9, YELLOW)
              + quad(-1, 0.5, 1, 1, 0.6, MAGENTA) + quad(-1, -1, 1, -0.5, 0.8, CYAN))  # fmt: skip
    setup(c, floats)
    c.viewport(0, 0, SIZE, SIZE)
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        c.clear_depth(1.0)
        c.clear(GL.COLOR_BUFFER_BIT | GL.DEPTH_BUFFER_BIT)
        c.enable("DepthTest")
        c.depth_func("Less")
        for i in range(3):  # red 0.75, green 0.5 (left), blue 0.9 fails everywhere
            c.draw_arrays(GL.TRIANGLES, 6 * i, 6)
        c.state.set_depth_mask(False)
        c.depth_func("Always")
        c.draw_arrays(GL.TRIANGLES, 18, 6)  # yellow top band, depth not written
        c.state.set_depth_mask(True)
        c.depth_func("Less")
        c.draw_arrays(GL.TRIANGLES, 24, 6)  # magenta 0.8 fails against 0.5 / 0.75
        c.state.set_depth_range(0.0, 0.5)
        c.draw_arrays(GL.TRIANGLES, 30, 6)  # cyan at 0.8 -> 0.45: passes
        c.state.set_depth_range(0.0, 1.0)
        c.disable("DepthTest")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_depth(n: int) -> list[Probe]:
    assert _zw(0.0) < _zw(0.5) < _zw(0.8) and _zw(0.6) > _zw(0.5)
    assert _zw(0.8, 0.0, 0.5) < _zw(0.0)
    return [Probe(0, 16, 32, px(GREEN), what="nearer quad wins (Less)"),
            Probe(0, 48, 32, px(RED), what="farther blue quad fails"),
            Probe(0, 16, 56, px(YELLOW), what="Always with mask off"),
            Probe(0, 48, 56, px(YELLOW), what="mask off left depth 0.75: magenta fails"),
            Probe(0, 16, 8, px(CYAN), what="depth range [0, 0.5] pulls 0.8 to 0.45"),
            Probe(0, 48, 8, px(CYAN), what="depth range, right")]  # fmt: skip


# -- stencil ---------------------------------------------------------------------------
def stencil(c: Client, n: int) -> list[Image]:
    """Front faces write ref 1 (Replace); back faces Invert under write mask 0x0F; then
    Equal tests per face pick the two halves; the top band (stencil 0) passes neither."""
    floats = (quad(-1, -1, 0, 0.5, 0, RED) + quad_cw(0, -1, 1, 0.5, 0, RED)
              + quad(-1, -1, 1, 1, 0, GREEN) + quad_cw(-1, -1, 1, 1, 0, BLUE))  # fmt: skip
    setup(c, floats)
    c.viewport(0, 0, SIZE, SIZE)
    s = c.state
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        s.set_clear_stencil(0)
        c.clear(GL.COLOR_BUFFER_BIT | GL.STENCIL_BUFFER_BIT)
        c.enable("StencilTest")
        s.set_stencil_func("Front", "Always", 1, 0xFF)
        s.set_stencil_op("Front", "Keep", "Keep", "Replace")
        s.set_stencil_mask("Front", 0xFF)
        s.set_stencil_func("Back", "Always", 0, 0xFF)
        s.set_stencil_op("Back", "Keep", "Keep", "Invert")
        s.set_stencil_mask("Back", 0x0F)
        c.draw_arrays(GL.TRIANGLES, 0, 12)
        s.set_stencil_op("FrontAndBack", "Keep", "Keep", "Keep")
        s.set_stencil_func("Front", "Equal", 1, 0xFF)
        s.set_stencil_func("Back", "Equal", 0x0F, 0x0F)
        c.draw_arrays(GL.TRIANGLES, 12, 6)  # front-facing green: left half only
        c.draw_arrays(GL.TRIANGLES, 18, 6)  # back-facing blue: right half only
        c.disable("StencilTest")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_stencil(n: int) -> list[Probe]:
    inverted = (~0) & 0x0F  # Invert of 0 under write mask 0x0F
    assert inverted & 0x0F == 0x0F
    return [Probe(0, 16, 24, px(GREEN), what="front Equal 1"),
            Probe(0, 48, 24, px(BLUE), what="back Equal 0x0F (masked)"),
            Probe(0, 16, 56, px(BLACK), what="stencil 0 passes neither"),
            Probe(0, 48, 56, px(BLACK), what="stencil 0, right")]  # fmt: skip


# -- cull + front face ----------------------------------------------------------------
def cull(c: Client, n: int) -> list[Image]:
    """Cull back faces with CCW front; then front face CW; then cull FrontAndBack."""
    floats = (quad(-1, -0.5, 0, 0.5, 0, RED) + quad_cw(0, -0.5, 1, 0.5, 0, GREEN)
              + quad_cw(-1, 0.5, 1, 1, 0, BLUE) + quad(-1, -1, 1, -0.5, 0, YELLOW)
              + quad(-1, -1, 1, 1, 0, MAGENTA) + quad_cw(-1, -1, 1, 1, 0, MAGENTA))  # fmt: skip
    setup(c, floats)
    c.viewport(0, 0, SIZE, SIZE)
    s = c.state
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        c.clear()
        c.enable("CullFace")
        s.set_cull_face_mode("Back")
        s.set_front_face_mode("CounterClockwise")
        c.draw_arrays(GL.TRIANGLES, 0, 12)  # red drawn, green (CW = back) culled
        s.set_front_face_mode("Clockwise")
        c.draw_arrays(GL.TRIANGLES, 12, 12)  # blue (CW = front) drawn, yellow culled
        s.set_cull_face_mode("FrontAndBack")
        c.draw_arrays(GL.TRIANGLES, 24, 12)  # nothing
        s.set_cull_face_mode("Back")
        s.set_front_face_mode("CounterClockwise")
        c.disable("CullFace")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_cull(n: int) -> list[Probe]:
    return [Probe(0, 16, 32, px(RED), what="CCW front drawn"),
            Probe(0, 48, 32, px(BLACK), what="CW back culled"),
            Probe(0, 32, 56, px(BLUE), what="CW front after glFrontFace(GL_CW)"),
            Probe(0, 32, 8, px(BLACK), what="CCW back after glFrontFace(GL_CW)")]  # fmt: skip


# -- scissor ---------------------------------------------------------------------------
def scissor(c: Client, n: int) -> list[Image]:
    """The test toggles per draw; a zero box rejects every fragment."""
    full = quad(-1, -1, 1, 1, 0, RED)
    floats = (full + quad(-1, 0.5, 1, 1, 0, GREEN) + quad(-1, -1, 1, 1, 0, BLUE)
              + quad(-1, -1, 1, 1, 0, YELLOW))  # fmt: skip
    setup(c, floats)
    c.viewport(0, 0, SIZE, SIZE)
    for _ in range(max(n, 1)):
        c.clear_color(*BLACK)
        c.clear()
        c.enable("ScissorTest")
        c.scissor(0, 0, 32, 32)
        c.draw_arrays(GL.TRIANGLES, 0, 6)  # red, bottom-left quadrant
        c.disable("ScissorTest")
        c.draw_arrays(GL.TRIANGLES, 6, 6)  # green top band, unscissored
        c.enable("ScissorTest")
        c.scissor(0, 0, 0, 0)
        c.draw_arrays(GL.TRIANGLES, 12, 6)  # blue: nothing
        c.scissor(32, 0, 32, 32)
        c.draw_arrays(GL.TRIANGLES, 18, 6)  # yellow, bottom-right quadrant
        c.disable("ScissorTest")
    img = capture(c, SIZE, SIZE)
    c.present()
    return [img]


def probes_scissor(n: int) -> list[Probe]:
    assert unorm(1.0) == 255
    return [Probe(0, 16, 16, px(RED), what="scissor (0,0,32,32)"),
            Probe(0, 48, 16, px(YELLOW), what="scissor (32,0,32,32)"),
            Probe(0, 32, 56, px(GREEN), what="test off draws everywhere"),
            Probe(0, 16, 40, px(BLACK), what="zero box rejects all")]  # fmt: skip
