"""Issue 18's scenes: what comes back (fences, queries, readbacks, copies, GL errors,
persistent maps), each checked from first principles.

A scene appends ``(check, want, got)`` to ``c.answer_checks`` and returns no image; the
test (tests/test_answers_scenes.py) asserts ``want == got`` for each, on monolith, inproc
and spawn. What a backend cannot do is its named refusal at the record (GLES 3 has no
``GL_SAMPLES_PASSED``: ``Fatal{DriverRefused, "QueryCreate.Kind"}``).

- occlusion: any-samples of a visible quad (1) and of one outside the viewport (0); the
  sample count of a quad covering [-0.5, 0.5]^2 of a 64x64 surface: pixel centres
  x, y in [16, 48) -> 32 * 32 = 1024, and of [-0.25, 0.25]^2 -> 16 * 16 = 256;
- timestamps: two counters around a draw, and two ``get_timestamp`` reads, monotone;
- fence: signalled after a draw (a 1 s client wait), and a zero-timeout poll loop that
  ends within POLL_ESCALATE + 1 polls;
- readback: each colour / depth / stencil format cleared to a known value, read back and
  compared with the bytes packed by hand;
- blit / copies: a two-colour framebuffer blitted x2 (nearest), a buffer range copied, a
  framebuffer region copied into a texture, a texture copied into a texture, a pack-buffer
  readback -- each compared by pixels / bytes;
- GL error: an out-of-range buffer copy raises GL_INVALID_VALUE, ordered at its record;
- persistent: a persistently mapped vertex buffer written, then drawn with no other GL
  call between, the pixel read back.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from ...client.answers import (GL_ANY_SAMPLES_PASSED, GL_SAMPLES_PASSED, GL_TIME_ELAPSED,
                               POLL_ESCALATE)  # fmt: skip
from ...client.api import Client
from .kit import GL, STRIDE, quad, setup

__all__ = ["SIZE", "ANSWER_FNS"]

SIZE = 64
GL_RGBA, GL_UNSIGNED_BYTE, GL_FLOAT = 0x1908, 0x1401, 0x1406
GL_RGBA_INTEGER, GL_UNSIGNED_INT = 0x8D99, 0x1405
GL_DEPTH_COMPONENT, GL_STENCIL_INDEX, GL_DEPTH_STENCIL = 0x1902, 0x1901, 0x84F9
GL_UNSIGNED_INT_24_8 = 0x84FA
RGBA8, RGBA32F, RGBA8UI = 0x8058, 0x8814, 0x8D7C
DEPTH32F, DEPTH24_STENCIL8 = 0x8CAC, 0x88F0
GL_INVALID_VALUE = 0x0501
RED, GREEN, BLUE = (1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0)


def _check(c: Client, name: str, want: Any, got: Any) -> None:
    checks = getattr(c, "answer_checks", None)
    if checks is None:
        checks = c.answer_checks = []  # type: ignore[attr-defined]
    checks.append((name, want, got))


def _rgba8(rgba: tuple[float, ...]) -> bytes:
    return bytes(round(v * 255) for v in rgba)


def occlusion_any(c: Client, n: int) -> list:
    """Any-samples queries: a visible quad passes (1), a quad outside the viewport not (0)."""
    setup(c, quad(-0.5, -0.5, 0.5, 0.5, 0, RED) + quad(2.0, 2.0, 3.0, 3.0, 0, RED))
    c.clear()
    seen, hidden = c.gen_query(), c.gen_query()
    c.begin_query(GL_ANY_SAMPLES_PASSED, seen)
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.end_query(GL_ANY_SAMPLES_PASSED)
    c.begin_query(GL_ANY_SAMPLES_PASSED, hidden)
    c.draw_arrays(GL.TRIANGLES, 6, 6)
    c.end_query(GL_ANY_SAMPLES_PASSED)
    c.present()
    _check(c, "any-samples visible", 1, int(bool(c.query_result(seen))))
    _check(c, "any-samples outside", 0, c.query_result(hidden))
    c.delete_query(seen)
    c.delete_query(hidden)
    c.present()
    return []


def occlusion_samples(c: Client, n: int) -> list:
    """Sample counts from the geometry: 32 x 32 and 16 x 16 pixel centres."""
    setup(c, quad(-0.5, -0.5, 0.5, 0.5, 0, RED) + quad(-0.25, -0.25, 0.25, 0.25, 0, RED))
    c.clear()
    big, small = c.gen_query(), c.gen_query()
    for q, first in ((big, 0), (small, 6)):
        c.begin_query(GL_SAMPLES_PASSED, q)
        c.draw_arrays(GL.TRIANGLES, first, 6)
        c.end_query(GL_SAMPLES_PASSED)
    c.present()
    _check(c, "samples 32x32", 32 * 32, c.query_result(big))
    _check(c, "samples 16x16", 16 * 16, c.query_result(small))
    c.present()
    return []


def timestamps(c: Client, n: int) -> list:
    """A timestamp pair around a draw, and two GL_TIMESTAMP reads: monotone."""
    setup(c, quad(-1, -1, 1, 1, 0, BLUE))
    t0, t1 = c.gen_query(), c.gen_query()
    c.clear()
    c.query_counter(t0)
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.query_counter(t1)
    c.present()
    a, b = c.query_result(t0), c.query_result(t1)
    _check(c, "counter pair monotone", True, 0 < a <= b)
    g0 = c.get_timestamp()
    g1 = c.get_timestamp()
    _check(c, "GL_TIMESTAMP pair monotone", True, 0 < g0 <= g1)
    c.present()
    return []


def time_elapsed(c: Client, n: int) -> list:
    """GL_TIME_ELAPSED around a draw: a positive duration no longer than the wall clock."""
    setup(c, quad(-1, -1, 1, 1, 0, BLUE))
    q = c.gen_query()
    w0 = time.perf_counter_ns()
    c.begin_query(GL_TIME_ELAPSED, q)
    c.clear()
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.end_query(GL_TIME_ELAPSED)
    c.present()
    v = c.query_result(q)
    _check(c, "elapsed within the wall clock", True, 0 < v <= time.perf_counter_ns() - w0)
    c.present()
    return []


def fence(c: Client, n: int) -> list:
    """A fence after a draw signals (1 s wait); a zero-timeout poll loop ends in bounded
    polls (local answers, then one escalated round trip)."""
    setup(c, quad(-1, -1, 1, 1, 0, GREEN))
    c.clear()
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    f = c.fence_sync()
    _check(c, "client wait after a draw", True,
           c.client_wait_sync(f, 1_000_000_000) in ("ALREADY_SIGNALED", "CONDITION_SATISFIED"))
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    g = c.fence_sync()
    polls, t0 = 0, time.monotonic()
    escalations = c.link.round_trips["FenceStatus"] if c.link is not None else 0
    while not c.fence_signalled(g) and time.monotonic() - t0 < 5.0:
        polls += 1
    escalations = (c.link.round_trips["FenceStatus"] if c.link is not None else 0) - escalations
    # bounded: it ended, within 5 s, and every round trip it made was an escalation after
    # POLL_ESCALATE local answers
    _check(c, "zero-timeout poll loop bounded", True,
           time.monotonic() - t0 < 5.0 and escalations <= polls // POLL_ESCALATE + 1)
    _check(c, "signalled fence stays signalled", "ALREADY_SIGNALED", c.client_wait_sync(g, 0))
    c.wait_sync(f)
    c.delete_sync(f)
    c.delete_sync(g)
    c.present()
    return []


def readback(c: Client, n: int) -> list:
    """Each colour, depth and stencil format cleared to a known value and read back."""
    cases = [
        ("rgba8", RGBA8, "color", (0.2, 0.4, 0.6, 0.8), "float", GL_RGBA, GL_UNSIGNED_BYTE,
         _rgba8((0.2, 0.4, 0.6, 0.8))),
        ("rgba32f", RGBA32F, "color", (0.25, -1.5, 3.0, 1.0), "float", GL_RGBA, GL_FLOAT,
         struct.pack("<4f", 0.25, -1.5, 3.0, 1.0)),
        ("rgba8ui", RGBA8UI, "color", (7, 200, 13, 255), "uint", GL_RGBA_INTEGER,
         GL_UNSIGNED_INT, struct.pack("<4I", 7, 200, 13, 255)),
        ("depth32f", DEPTH32F, "depth", (0.375,), "float", GL_DEPTH_COMPONENT, GL_FLOAT,
         struct.pack("<f", 0.375)),
        ("depth24-stencil8", DEPTH24_STENCIL8, "depth_stencil", (1.0, 0x5A), "float",
         GL_DEPTH_STENCIL, GL_UNSIGNED_INT_24_8, struct.pack("<I", (0xFFFFFF << 8) | 0x5A)),
        ("stencil8-of-d24s8", DEPTH24_STENCIL8, "depth_stencil", (1.0, 0xA5), "float",
         GL_STENCIL_INDEX, GL_UNSIGNED_BYTE, bytes((0xA5,))),
    ]  # fmt: skip
    c.pixel_store(True, "Alignment", 1)
    for name, ifmt, kind, values, vclass, fmt, typ, want in cases:
        fb = c.create_framebuffer()
        tex = c.create_texture_2d(4, 4, ifmt)
        if kind == "color":
            c.framebuffer_texture(fb, 0, tex)
        else:
            c.framebuffer_depth_stencil(fb, tex, tex if kind == "depth_stencil" else None)
        c.bind_framebuffer(fb)
        c.clear_buffer(kind, 0, values, value_class=vclass)
        got = c.read_pixels(1, 1, 2, 2, fmt, typ)
        _check(c, f"readback {name}", want * 4, got)
        c.bind_framebuffer(None)
        c.delete_framebuffer(fb)
        c.delete_texture(tex)
    c.present()
    return []


def blit_copy(c: Client, n: int) -> list:
    """Blit (nearest, x2), buffer copy, framebuffer -> texture, texture -> texture and a
    pack-buffer readback, each by pixels / bytes."""
    c.pixel_store(True, "Alignment", 1)
    c.clear()  # the default framebuffer exists (64 x 64) before anything is blitted to it
    fb = c.create_framebuffer()
    src = c.create_texture_2d(16, 16, RGBA8)
    c.framebuffer_texture(fb, 0, src)
    c.bind_framebuffer(fb)
    c.clear_buffer("color", 0, GREEN)
    c.enable("ScissorTest")
    c.scissor(0, 0, 8, 16)
    c.clear_buffer("color", 0, RED)  # left half red, right half green
    c.scissor(0, 0, SIZE, SIZE)
    c.disable("ScissorTest")
    c.bind_framebuffer(None, "draw")
    c.blit_framebuffer(0, 0, 16, 16, 0, 0, 32, 32)  # nearest, scaled x2
    c.bind_framebuffer(None)
    got = c.read_pixels(0, 0, 32, 1)
    _check(c, "blit x2 row", _rgba8(RED) * 16 + _rgba8(GREEN) * 16, got)
    # buffer -> buffer
    a = c.create_buffer(bytes(range(64)))
    b = c.create_buffer(bytes(64))
    c.copy_buffer_sub_data(a, b, 8, 24, 16)
    _check(c, "buffer copy", bytes(24) + bytes(range(8, 24)) + bytes(24),
           c.get_buffer_sub_data(b, 0, 64))
    # framebuffer -> texture (glCopyTexSubImage2D): the 8x8 at (4, 0) of src
    dst = c.create_texture_2d(8, 8, RGBA8)
    c.bind_framebuffer(fb, "read")
    c.copy_tex_sub_image_2d(dst, 0, 0, 0, 4, 0, 8, 8)
    row = _rgba8(RED) * 4 + _rgba8(GREEN) * 4
    _check(c, "copy framebuffer to texture", row * 8, c.get_texture_image(dst, 0, GL_RGBA, GL_UNSIGNED_BYTE))
    # texture -> texture (glCopyImageSubData): src's 4x4 at (6, 6) into t2 at (0, 0)
    t2 = c.create_texture_2d(4, 4, RGBA8)
    c.copy_image_sub_data(src, 0, 6, 6, 0, t2, 0, 0, 0, 0, 4, 4)
    quad_row = _rgba8(RED) * 2 + _rgba8(GREEN) * 2
    _check(c, "copy image", quad_row * 4, c.get_texture_image(t2, 0, GL_RGBA, GL_UNSIGNED_BYTE))
    # pack buffer (fire-and-forget), then read the buffer
    pbo = c.create_buffer(bytes(16 * 16 * 4))
    c.read_pixels_to_buffer(pbo, 0, 0, 0, 16, 16)
    _check(c, "pack-buffer readback", (_rgba8(RED) * 8 + _rgba8(GREEN) * 8) * 16,
           c.get_buffer_sub_data(pbo, 0, 16 * 16 * 4))
    c.bind_framebuffer(None)
    c.present()
    return []


def gl_error(c: Client, n: int) -> list:
    """A copy past the end of its destination is GL_INVALID_VALUE, ordered at its record."""
    a = c.create_buffer(bytes(64))
    b = c.create_buffer(bytes(64))
    c.clear()
    _check(c, "no error before", 0, c.get_error())
    c.copy_buffer_sub_data(a, b, 0, 60, 16)
    seq = c.em.transport.emit_seq
    c.clear()
    c.present()
    c.drain_events()
    _check(c, "error at its record", [(GL_INVALID_VALUE, seq)], list(c.gl_errors))
    _check(c, "glGetError", (GL_INVALID_VALUE, 0), (c.get_error(), c.get_error()))
    c.present()
    return []


def persistent(c: Client, n: int) -> list:
    """A persistent-coherent vertex buffer written, then drawn with no GL call between."""
    floats = quad(-1, -1, 1, 1, 0, BLUE)
    data = struct.pack(f"<{len(floats)}f", *floats)
    _, _prog = setup(c, quad(-1, -1, 1, 1, 0, RED))  # the program (and a red decoy buffer)
    vb = c.create_buffer(bytes(len(data)))
    c.vertex_attrib_pointer(0, vb, 3, stride=STRIDE, offset=0)
    c.vertex_attrib_pointer(1, vb, 4, stride=STRIDE, offset=12)
    mem = c.map_persistent(vb)
    c.clear()
    mem[: len(data)] = data  # the write; the draw is the next call
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.pixel_store(True, "Alignment", 1)
    _check(c, "persistent map drawn", _rgba8(BLUE), c.read_pixels(SIZE // 2, SIZE // 2, 1, 1))
    c.present()
    return []


#: name -> scene function
ANSWER_FNS = {
    "answers-occlusion-any": occlusion_any,
    "answers-occlusion-samples": occlusion_samples,
    "answers-timestamp": timestamps,
    "answers-time-elapsed": time_elapsed,
    "answers-fence": fence,
    "answers-readback": readback,
    "answers-blit-copy": blit_copy,
    "answers-gl-error": gl_error,
    "answers-persistent": persistent,
}
