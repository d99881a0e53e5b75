"""Child process of the hostile-device tests: one well-formed but poisonous stream into a
real backend, the outcome on the last line of stdout as ``RESULT {json}``.

``python tests/hostile_device_peer.py BACKEND CASE`` builds a fresh ``gles`` or ``vulkan``
backend (the Vulkan one under the validation layer), a client wired to it through the
applier, runs ``CASES[CASE]`` and reports ``{"outcome": "ok" | "refused" | "raised", "kind",
"reason", "text", "messages", "seconds", "rss_growth_mb", "extra"}``. A crash of the driver
is the child's death by a signal, which the parent reports as a finding (the test run
itself survives). ``messages`` are the validation layer's messages: a fault in every case.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import struct
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("MGPIPE_VK_VALIDATION", "on")

GL_TRIANGLES = 0x0004
HEADER_ONLY = struct.pack("<5I", 0x07230203, 0x10000, 0, 10, 0)
CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    CASES[fn.__name__] = fn
    return fn


def _raw_texture(c: Any, target: str = "2d", **fields: int) -> Any:
    """A 4x4 texture made by the client, then a respecify with ``fields`` replaced (what
    a hostile client sends past the client's own checks)."""
    tex = c.create_texture(target, 4, 4, 2 if target in ("3d", "2d_array") else 1)
    c.em.emit("ResourceRespecify", dict(c.tr.texture_desc(tex), **fields))
    return tex


def _triangle(c: Any, vb_bytes: int | None = None) -> Any:
    from _vk_support import setup_color

    prog, vb = setup_color(c)
    if vb_bytes is not None:
        c.buffer_data(vb, bytes(vb_bytes))
    return vb


def _program(c: Any, mutate: Any, reflection: bytes | None = None) -> None:
    from _vk_support import color_program

    spirv, refl = color_program()
    if reflection is None:
        prog = c.create_program({k: mutate(v) for k, v in spirv.items()}, refl)
    else:  # a layout given: the client reads nothing from the record, the server judges it
        prog = c.create_program(spirv, reflection, uniforms={"u": (0, "float")})
    c.use_program(prog)
    vb = c.create_buffer(bytes(84))
    c.vertex_attrib_pointer(0, vb, 3, stride=28)
    c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


# -- images ------------------------------------------------------------------------------
@case
def tex_0x0(c: Any, be: Any) -> None:
    _raw_texture(c, Width=0, Height=0)


@case
def tex_65536(c: Any, be: Any) -> None:
    _raw_texture(c, Width=65536, Height=65536)


@case
def renderbuffer_65536(c: Any, be: Any) -> None:
    rb = c.create_renderbuffer(4, 4, 0x8058)
    c.em.emit("ResourceRespecify", dict(c.tr.texture_desc(rb), Width=65536, Height=65536))


@case
def tex_100_levels(c: Any, be: Any) -> None:
    _raw_texture(c, Width=64, Height=64, Levels=100)


@case
def tex_7_levels(c: Any, be: Any) -> None:  # the control: 64x64 has exactly 7 levels
    _raw_texture(c, Width=64, Height=64, Levels=7)


@case
def tex_array_65535_layers(c: Any, be: Any) -> None:
    _raw_texture(c, "2d_array", Width=4, Height=4, ArrayLayers=65535)


@case
def tex_bad_format(c: Any, be: Any) -> None:
    _raw_texture(c, InternalFormat=0x1234)


@case
def attachment_level_99(c: Any, be: Any) -> None:
    _triangle(c)
    tex = c.create_texture_2d(16, 16)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    fb.color[0] = (tex, 99)  # past the client's check
    c.bind_framebuffer(fb)
    c.clear()
    c.draw_arrays(GL_TRIANGLES, 0, 3)


@case
def clear_draw_buffer_1000(c: Any, be: Any) -> None:
    from mgpipe.runtime.schema import tables as _t

    c.tr.validate("Clear")
    from mgpipe.runtime.wire.handle import default_framebuffer

    c.em.emit("Clear", {"Kind": _t.constant("kMGPipeClearKindColor"), "DrawBufferIndex": 1000,
                        "Fbo": default_framebuffer(), "BufferMask": 0x4000,
                        "ValueClass": _t.constant("kMGPipeClearValueClassFloat")})  # fmt: skip


# -- readback ----------------------------------------------------------------------------
@case
def read_x_1e6(c: Any, be: Any) -> dict:
    return {"bytes": c.read_pixels(10**6, 0, 8, 8).hex()[:16]}


@case
def read_y_int32_max(c: Any, be: Any) -> dict:
    return {"bytes": c.read_pixels(0, 2**31 - 1, 8, 8).hex()[:16]}


@case
def read_int32_min(c: Any, be: Any) -> dict:
    return {"bytes": c.read_pixels(-(2**31), -(2**31), 8, 8).hex()[:16]}


@case
def read_straddling(c: Any, be: Any) -> dict:
    """The control: a clear to (0.2, 0.4, 0.6, 1.0) read 4x4 from (-2, -2): the 2x2 inside
    (rows 2, 3, columns 2, 3) are the clear colour, the rest of the destination is zero."""
    c.clear_color(0.2, 0.4, 0.6, 1.0)
    c.clear()
    raw = c.read_pixels(-2, -2, 4, 4)
    return {"rows": [raw[r * 16 : (r + 1) * 16].hex() for r in range(4)]}


# -- vertex / index ranges ---------------------------------------------------------------
@case
def draw_past_vertex_buffer(c: Any, be: Any) -> None:
    _triangle(c)
    c.draw_arrays(GL_TRIANGLES, 0, 3000)


@case
def draw_to_vertex_buffer_end(c: Any, be: Any) -> None:  # the control: 3 x 28 bytes of 84
    _triangle(c)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


@case
def draw_index_past_vertex_buffer(c: Any, be: Any) -> None:
    _triangle(c)
    c.bind_index_buffer(c.create_buffer(struct.pack("<3H", 0, 1, 500)))
    c.draw_elements(GL_TRIANGLES, 3, 2)


@case
def draw_indices_past_index_buffer(c: Any, be: Any) -> None:
    _triangle(c)
    c.bind_index_buffer(c.create_buffer(struct.pack("<3H", 0, 1, 2)))
    c.draw_elements(GL_TRIANGLES, 3000, 2)


@case
def draw_indexed_in_range(c: Any, be: Any) -> None:  # the control
    _triangle(c)
    c.bind_index_buffer(c.create_buffer(struct.pack("<3H", 0, 1, 2)))
    c.draw_elements(GL_TRIANGLES, 3, 2)


# -- shaders -----------------------------------------------------------------------------
@case
def spirv_header_only(c: Any, be: Any) -> None:
    _program(c, lambda v: HEADER_ONLY)


@case
def spirv_truncated(c: Any, be: Any) -> None:
    _program(c, lambda v: v[: len(v) // 8 * 4])


@case
def reflection_nested_2000(c: Any, be: Any) -> None:
    _program(c, lambda v: v, b"[" * 2000 + b"]" * 2000)


@case
def reflection_wrong_shape(c: Any, be: Any) -> None:
    _program(c, lambda v: v, b'{"inputs": [1, 2], "samplers": "x"}')


# -- render state past the client ----------------------------------------------------------
@case
def viewport_nan(c: Any, be: Any) -> None:
    _triangle(c)
    c.state.set_viewport(float("nan"), 0.0, 4.0, 4.0)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


@case
def viewport_inf(c: Any, be: Any) -> None:
    _triangle(c)
    c.state.set_viewport(0.0, 0.0, float("inf"), 4.0)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


@case
def viewport_huge(c: Any, be: Any) -> None:  # finite: clamped as GL clamps, drawn
    _triangle(c)
    c.state.set_viewport(-1e30, -1e30, 3e38, 3e38)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


@case
def depth_func_12345(c: Any, be: Any) -> None:
    c.enable("DepthTest")
    c.state.set_depth_func(12345)
    _triangle(c)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


@case
def blend_factor_99(c: Any, be: Any) -> None:
    c.enable("Blend")
    c.state.set_blend_func(99, 99, 99, 99)
    _triangle(c)
    c.draw_arrays(GL_TRIANGLES, 0, 3)


# -- cost ----------------------------------------------------------------------------------
def _emit_draw(c: Any, count: int, instances: int) -> None:
    """A DrawVbo record past the client's budget check (the client's own draw path,
    with its budget check bypassed)."""
    from mgpipe.runtime import budgets

    saved = budgets.client_draw
    budgets.client_draw = lambda *a: None
    try:
        c.draw_arrays(GL_TRIANGLES, 0, count, instances=instances)
    finally:
        budgets.client_draw = saved


@case
def draw_1e6_instances(c: Any, be: Any) -> None:
    _triangle(c)
    _emit_draw(c, 3, 10**6)


@case
def draw_count_uint32_max(c: Any, be: Any) -> None:
    _triangle(c)
    _emit_draw(c, 2**32 - 1, 1)


@case
def respecify_4gib_buffer(c: Any, be: Any) -> None:
    buf = c.create_buffer(bytes(16))
    c.em.emit("ResourceRespecify", {"Resource": buf.handle, "StorageKind": 1,
                                    "Width": 2**32 - 1, "Target": c._target("Buffer")})  # fmt: skip


# -- planted defects: the harness's own negative controls ----------------------------------
@case
def planted_crash(c: Any, be: Any) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


@case
def planted_validation_message(c: Any, be: Any) -> None:
    import vulkan as vk

    info = vk.VkBufferCreateInfo(size=0, usage=vk.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                                 sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE)  # fmt: skip
    try:
        vk.vkDestroyBuffer(be.dev.device, vk.vkCreateBuffer(be.dev.device, info, None), None)
    except Exception:
        pass


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(backend: str, name: str) -> int:
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    if backend == "vulkan":
        from mgpipe.runtime.backends.vulkan.backend import VulkanBackend

        be: Any = VulkanBackend(width=64, height=48)
    else:
        from mgpipe.runtime.backends.gles import GlesBackend

        be = GlesBackend()
    stage = StageSegment(4 << 20)
    c = Client(Applier(be, stage).apply, stage, transport="monolith", width=64, height=48)
    out: dict[str, Any] = {"outcome": "ok", "extra": None}
    rss0, t0 = _rss_mb(), time.monotonic()
    try:
        out["extra"] = CASES[name](c, be)
        c.present()
        c.read_pixels(0, 0, 1, 1)
    except PipeFatal as e:
        out.update(outcome="refused", kind=e.kind, reason=e.reason, text=str(e)[:300])
    except Exception as e:  # a raw exception: a finding
        out.update(outcome="raised", kind=type(e).__name__, reason="", text=str(e)[:300])
    out["seconds"] = round(time.monotonic() - t0, 3)
    out["rss_growth_mb"] = round(_rss_mb() - rss0, 1)
    dev = getattr(be, "dev", None)
    out["messages"] = [str(m)[:300] for m in dev.take_messages()] if dev is not None else []
    print("RESULT " + json.dumps(out), flush=True)
    os._exit(0)  # the outcome is out; a teardown of a refused context is not under test


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
