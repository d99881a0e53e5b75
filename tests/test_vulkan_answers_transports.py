"""The reverse-channel answers of the Vulkan backend through the client API on every
transport (monolith, inproc, spawn), validation layer on and 0 messages: one scene whose
every answer is checked from first principles, the same answers on each transport.

The check functions are :mod:`test_vulkan_answers`' (each has its negative control there);
the transport comparison has its own control below.
"""

from __future__ import annotations

import struct
from contextlib import contextmanager

import numpy as np
import pytest

from _vk_support import assert_clean, color_program, vertices
from test_vulkan_answers import (QUAD, QUAD_SAMPLES, SAMPLES_PASSED, ANY_SAMPLES,
                                 check_copy, check_monotone, check_samples, check_texels)  # fmt: skip

W, H = 64, 48
GL_TRIANGLES = 0x0004
RGBA, UNSIGNED_BYTE, FLOAT = 0x1908, 0x1401, 0x1406
DEPTH_STENCIL, UNSIGNED_INT_24_8 = 0x84F9, 0x84FA


@contextmanager
def client_on(transport: str):
    """(client, validation messages after close -> list) for a Vulkan backend on ``transport``."""
    from mgpipe.runtime.client.api import Client

    if transport == "spawn":
        from mgpipe.runtime.transport.spawn import SpawnTransport

        t = SpawnTransport("vulkan", stage_capacity=8 << 20, config={})
        c = Client(None, t.stage, transport=t, width=W, height=H)  # type: ignore[arg-type]
        out: dict = {}
        try:
            yield c, out
            c.tr.cso.release_all()
        except BaseException:
            t.abandon()
            raise
        report = t.close(report=False) or {}
        out["summary"] = report.get("summary", {})
        return
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = VulkanBackend(width=W, height=H)
    stage = StageSegment(8 << 20)
    ap = Applier(be, stage)
    c = Client(ap.apply, stage, transport=transport, width=W, height=H)
    out = {}
    try:
        yield c, out
        c.close()
        be.r.finish()
        assert_clean(be.dev)
    finally:
        dev = be.dev
        be.close()
        msgs = dev.take_messages()
        assert not msgs, "validation messages at teardown:\n" + "\n".join(map(str, msgs))


def answers_scene(c) -> dict:
    """Every answer the reverse channel carries, from one scene."""
    got: dict = {}
    spirv, refl = color_program()
    prog = c.create_program(spirv, refl)
    c.use_program(prog)
    c.viewport(0, 0, W, H)
    c.clear_color(0, 0, 1, 1)
    c.clear(0x4100)
    # a persistent-coherent vertex buffer, written through the map, drawn with no GL call
    # in between (MapPersistent is DECLINED: the client pushes the bytes at validate)
    data = vertices(QUAD, (1, 0, 0, 1))
    vb = c.create_buffer(bytes(len(data)))
    view = c.map_persistent(vb)
    view[:] = data
    c.vertex_attrib_pointer(0, vb, 3, stride=28)
    c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
    t0, t1 = c.gen_query(), c.gen_query()
    c.query_counter(t0)
    occ, anyq = c.gen_query(), c.gen_query()
    c.begin_query(SAMPLES_PASSED, occ)
    c.draw_arrays(GL_TRIANGLES, 0, 6)
    c.end_query(SAMPLES_PASSED)
    c.begin_query(ANY_SAMPLES, anyq)
    c.draw_arrays(GL_TRIANGLES, 0, 6)
    c.end_query(ANY_SAMPLES)
    c.query_counter(t1)
    f = c.fence_sync()
    got["wait"] = c.client_wait_sync(f, 10**9)
    f2 = c.fence_sync()
    polls = 0
    while c.client_wait_sync(f2, 0) == "TIMEOUT_EXPIRED":  # a zero-timeout poll loop
        polls += 1
        if polls > 5000:
            raise AssertionError("zero-timeout poll loop did not end in 5000 polls")
    got["polls_bounded"] = True
    got["samples"] = c.query_result(occ)
    got["any"] = c.query_result(anyq)
    a, b = c.query_result(t0), c.query_result(t1)
    got["ts"] = (a, b, c.get_timestamp())
    got["pixels"] = c.read_pixels(0, 0, W, H)
    got["depth"] = c.read_pixels(0, 0, 2, 1, DEPTH_STENCIL, UNSIGNED_INT_24_8)
    tex = c.create_texture_2d(4, 3)
    c.tex_image(tex, 0, bytes(range(48)))
    got["tex"] = c.get_texture_image(tex, 0, RGBA, UNSIGNED_BYTE)
    got["texf"] = c.get_texture_image(tex, 0, RGBA, FLOAT)
    src = c.create_buffer(bytes(range(64)))
    dst = c.create_buffer(bytes(64))
    c.copy_buffer_sub_data(src, dst, 8, 4, 16)
    got["copy"] = c.get_buffer_sub_data(dst, 0, 24)
    got["error_none"] = c.get_error()
    c.em.emit(
        "QueryEnd", {"Query": occ.handle if hasattr(occ, "handle") else occ, "Kind": SAMPLES_PASSED}
    )  # not active: GL_INVALID_OPERATION
    c.get_timestamp()  # a round trip: the error's event has arrived by its end (glGetError
    # itself never waits: seed 001 §13.1)
    got["error"] = c.get_error()
    got["error_after"] = c.get_error()
    c.delete_sync(f)
    c.delete_sync(f2)
    return got


def check_answers(got: dict) -> None:
    assert got["wait"] in ("CONDITION_SATISFIED", "ALREADY_SIGNALED")
    assert got["polls_bounded"]
    check_samples(got["samples"], QUAD_SAMPLES)
    assert got["any"] == 1
    a, b, now = got["ts"]
    check_monotone(a, 0, b, now)
    px = np.frombuffer(got["pixels"], np.uint8).reshape(H, W, 4)
    assert tuple(px[H // 2, W // 2]) == (255, 0, 0, 255)  # the quad, drawn from the map
    assert tuple(px[0, 0]) == (0, 0, 255, 255)  # the clear colour outside it
    assert np.frombuffer(got["depth"], np.uint32).tolist() == [0xFFFFFF00] * 2  # depth 1, s 0
    check_texels("RGBA8", "RGBA", "UNSIGNED_BYTE", got["tex"], bytes(range(48)))
    check_texels(
        "RGBA8", "RGBA", "FLOAT", got["texf"], (np.arange(48) / 255.0).astype(np.float32).tobytes()
    )
    check_copy(got["copy"])
    assert (got["error_none"], got["error"], got["error_after"]) == (0, 0x0502, 0)


TRANSPORTS = ("monolith", "inproc", "spawn")
_SEEN: dict[str, dict] = {}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_answers_scene_on_every_transport(transport):
    with client_on(transport) as (c, out):
        got = answers_scene(c)
        trips = dict(c.link.round_trips)
    check_answers(got)
    if transport == "spawn":
        summary = out["summary"]  # the server process's own report at Close
        assert summary["info"]["vulkan_validation"] is True
        assert summary["stats"]["validation_messages"] == 0, summary["stats"]
    _SEEN[transport] = {k: v for k, v in got.items() if k != "ts"}
    # each blocking answer is one counted round trip: the waits, results, readbacks
    assert trips.get("ReadPixels") == 2 and trips.get("GetTextureImage") == 2, trips
    assert trips.get("ResourceReadback") == 1 and trips.get("QueryTimestamp") == 2, trips
    if transport != "monolith" and "monolith" in _SEEN:
        check_same(_SEEN["monolith"], _SEEN[transport], transport)


def check_same(a: dict, b: dict, transport: str) -> None:
    diff = sorted(k for k in a if a[k] != b.get(k))
    if diff:
        raise AssertionError(f"{transport} answered differently from monolith: {diff}")


def test_transport_comparison_control_a_changed_answer_is_named():
    a = {"samples": QUAD_SAMPLES, "copy": b"x"}
    with pytest.raises(
        AssertionError, match=r"inproc answered differently from monolith: \['samples'\]"
    ):
        check_same(a, dict(a, samples=QUAD_SAMPLES - 1), "inproc")
