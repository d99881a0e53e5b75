"""The core scenes: short GL-like programs exercising the CSO cache, clears and readback."""

from __future__ import annotations

import struct
from typing import Any

from ..shaders.programs import load
from ...client.api import GL_COLOR_BUFFER_BIT, GL_DEPTH_BUFFER_BIT, GL_TRIANGLES, Client

__all__ = [
    "blend_toggle",
    "viewport_churn",
    "viewport_rep",
    "blend_setup",
    "blend_rep",
    "clear_present",
    "readback",
]


# -- shared setup ---------------------------------------------------------------
_TRIANGLE = struct.pack("<9f", -1, -1, 0, 1, -1, 0, 0, 1, 0)


def _setup(c: Client) -> None:
    """One triangle VBO, one program, attribute 0 -- what every draw scene shares."""
    vb = c.create_buffer(_TRIANGLE)
    src = load("color")  # attribute 1 (colour) stays disabled: GL's constant (0, 0, 0, 1)
    prog = c.create_program(src.spirv, src.reflection)
    c.use_program(prog)
    c.vertex_attrib_pointer(0, vb, 3, stride=12)
    c.viewport(0, 0, 640, 480)


# -- the scenes -------------------------------------------------------------------
def blend_setup(c: Client) -> None:
    _setup(c)
    c.blend_func("SrcAlpha", "OneMinusSrcAlpha")


def blend_rep(c: Any, i: int = 0) -> None:
    """One repetition of blend-toggle (the lean path repeats the scene with it)."""
    c.enable("Blend")
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    c.disable("Blend")
    c.draw_arrays(GL_TRIANGLES, 0, 3)


def blend_toggle(c: Client, n: int) -> None:
    """Blaze3D batch: enable blend / draw / disable blend / draw, n times."""
    blend_setup(c)
    for _ in range(n):
        blend_rep(c)
    c.present()


def viewport_rep(c: Any, i: int) -> None:
    """The viewport-churn scene's ``i``-th repetition (the lean path repeats the scene)."""
    c.viewport(i % 37, i // 37, 640 - i % 97, 480 - i % 89)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


def viewport_churn(c: Client, n: int) -> None:
    """n distinct glViewport changes, a draw after each (pipeline subset never moves)."""
    _setup(c)
    for i in range(n):
        viewport_rep(c, i)
    c.present()


def clear_present(c: Client, n: int) -> None:
    """n frames: a new clear colour, clear colour+depth, present."""
    for i in range(n):
        c.clear_color(i / max(n, 1), 0.25, 0.5, 1.0)
        c.clear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT)
        c.present()


def readback(c: Client, n: int) -> None:
    """Render into a texture-backed FBO n times; read back a corner each time; present."""
    _setup(c)
    tex = c.create_texture_2d(64, 64)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    c.pixel_store(True, "Alignment", 1)
    for i in range(n):
        c.bind_framebuffer(fb)
        c.viewport(0, 0, 64, 64)
        c.clear_color(0.0, i / max(n, 1), 0.0, 1.0)
        c.clear()
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.read_pixels(0, 0, 8, 8)
        c.bind_framebuffer(None)
        c.viewport(0, 0, 640, 480)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.present()
    c.delete_framebuffer(fb)
    c.delete_texture(tex)
