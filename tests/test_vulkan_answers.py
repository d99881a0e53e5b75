"""The Vulkan backend's answers (issue 18, docs/REVERSE_CHANNEL.md), every test under the
validation layer with 0 messages: fences, occlusion / timestamp queries, readbacks of every
format by value, blits and copies by pixels, caps, maps, GL errors as ordered events.

Records are emitted through the client's encoder and the replies taken from the
applier's SEG_REPLY mailbox at the record's seq (monolith: the record has been applied
when ``emit`` returns). Every check is a function; each has a negative control that
plants the defect and asserts the check's named failure.
"""

from __future__ import annotations

import struct
from contextlib import contextmanager

import numpy as np
import pytest

from _vk_support import assert_clean, setup_color, vertices

from mgpipe.runtime.server.reverse import EventKind, ReplyStatus, read_events

GL_TRIANGLES = 0x0004
W, H = 64, 48
QUAD = (-0.5, -0.5, 0, 0.5, -0.5, 0, 0.5, 0.5, 0, -0.5, -0.5, 0, 0.5, 0.5, 0, -0.5, 0.5, 0)
QUAD_SAMPLES = (W // 2) * (H // 2)  # [-0.5, 0.5] covers pixel centres 16..47 x 12..35
SAMPLES_PASSED, ANY_SAMPLES, TIME_ELAPSED, TIMESTAMP = 0x8914, 0x8C2F, 0x88BF, 0x8E28
FLUSH = 1


@contextmanager
def vk_answers(width: int = W, height: int = H, fatal: bool = False):
    """(client, backend, applier); ``fatal``: the scene ends on a named refusal (the
    transport is dead: no client close), the validation check still runs at teardown."""
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = VulkanBackend(width=width, height=height)
    stage = StageSegment(4 << 20)
    ap = Applier(be, stage)
    c = Client(ap.apply, stage, transport="monolith", width=width, height=height)
    try:
        yield c, be, ap
        if not fatal:
            c.close()
        be.r.finish()
        assert_clean(be.dev)
    finally:
        dev = be.dev
        be.close()
        msgs = dev.take_messages()
        assert not msgs, "validation messages at teardown:\n" + "\n".join(map(str, msgs))


def ask(c, ap, call, payload):
    """Emit an answering record; (status, bytes) from its reply slot."""
    c.tr.validate("ReadPixels")  # pending uploads leave first (a readback's validate point)
    seq = c.em.emit(call, payload)
    return ap.mailbox.take(seq, ap.ctx.seq, call)


def ok(c, ap, call, payload) -> bytes:
    status, data = ask(c, ap, call, payload)
    assert status == ReplyStatus.OK, (call, status, data)
    return data


def events(ap, since=0):
    evs, _ = read_events(ap.events, since, ap.ctx.seq)
    return evs


def new(c, kind):
    return c.tr.alloc[kind].alloc()


def quad(c, rgba=(1, 0, 0, 1)):
    vb = c.create_buffer(vertices(QUAD, rgba))
    c.vertex_attrib_pointer(0, vb, 3, stride=28)
    c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
    c.draw_arrays(GL_TRIANGLES, 0, 6)


# -- queries ---------------------------------------------------------------------------
def query_value(c, ap, q, wait=1):
    avail, _, value = struct.unpack("<IIQ", ok(c, ap, "QueryResult", {"Query": q, "Wait": wait}))
    return avail, value


def check_samples(got: int, expected: int) -> None:
    if got != expected:
        raise AssertionError(f"occlusion: {got} samples, the geometry covers {expected}")


def occlusion_scene(c, ap, kind, draws):
    setup_color(c)
    c.clear(0x4000)
    q = new(c, "Query")
    c.em.emit("QueryCreate", {"Query": q, "Kind": kind})
    c.em.emit("QueryBegin", {"Query": q, "Kind": kind})
    for i in range(draws):
        quad(c)
        if i + 1 < draws:  # another render pass inside the same query
            fb = c.create_framebuffer()
            c.framebuffer_texture(fb, 0, c.create_texture_2d(W, H))
            c.bind_framebuffer(fb)
            c.clear(0x4000)
            c.bind_framebuffer(None)
    c.em.emit("QueryEnd", {"Query": q, "Kind": kind})
    return q


def test_occlusion_counts_the_quads_samples_across_render_passes():
    with vk_answers() as (c, be, ap):
        q = occlusion_scene(c, ap, SAMPLES_PASSED, 2)
        avail, value = query_value(c, ap, q)
        assert avail == 1
        check_samples(value, 2 * QUAD_SAMPLES)
        assert len(be._queries_live) == 1


def test_occlusion_control_a_dropped_segment_is_caught(monkeypatch):
    from mgpipe.runtime.backends.vulkan.queries import QueryEntries

    real = QueryEntries.pass_begun
    seen = []

    def first_only(self, cmd):  # the planted defect: only the first pass is counted
        if not seen:
            seen.append(1)
            real(self, cmd)
        elif self._occ_slot is not None:
            import vulkan as vk

            vk.vkCmdBeginQuery(cmd, self._occ_slot[0], self._occ_slot[1], 0)
            vk.vkCmdEndQuery(cmd, self._occ_slot[0], self._occ_slot[1])
            self._occ_slot = None

    monkeypatch.setattr(QueryEntries, "pass_begun", first_only)
    with vk_answers() as (c, be, ap):
        q = occlusion_scene(c, ap, SAMPLES_PASSED, 2)
        with pytest.raises(
            AssertionError, match=r"occlusion: (?!1536 )\d+ samples, the geometry covers 1536"
        ):
            check_samples(query_value(c, ap, q)[1], 2 * QUAD_SAMPLES)


@pytest.mark.parametrize("inside,expected", [(True, 1), (False, 0)])
def test_any_samples_passed(inside, expected):
    with vk_answers() as (c, be, ap):
        setup_color(c)
        q = new(c, "Query")
        c.em.emit("QueryCreate", {"Query": q, "Kind": ANY_SAMPLES})
        c.em.emit("QueryBegin", {"Query": q, "Kind": ANY_SAMPLES})
        if inside:
            quad(c)
        else:  # the quad moved off the surface: clipped away, no sample passes
            vb = c.create_buffer(
                vertices(
                    tuple(v + 3 if i % 3 == 0 else v for i, v in enumerate(QUAD)), (1, 0, 0, 1)
                )
            )
            c.vertex_attrib_pointer(0, vb, 3, stride=28)
            c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
            c.draw_arrays(GL_TRIANGLES, 0, 6)
        c.em.emit("QueryEnd", {"Query": q, "Kind": ANY_SAMPLES})
        assert query_value(c, ap, q) == (1, expected)


def check_monotone(t0: int, elapsed: int, t1: int, now: int) -> None:
    if not (0 <= elapsed <= t1 - t0 and t0 <= t1 <= now):
        raise AssertionError(
            f"timestamps not monotone: t0 {t0} elapsed {elapsed} t1 {t1} now {now}"
        )


def timing_scene(c, ap):
    setup_color(c)
    t0, t1, el = new(c, "Query"), new(c, "Query"), new(c, "Query")
    for q, k in ((t0, TIMESTAMP), (t1, TIMESTAMP), (el, TIME_ELAPSED)):
        c.em.emit("QueryCreate", {"Query": q, "Kind": k})
    c.em.emit("QueryCounter", {"Query": t0, "Kind": TIMESTAMP})
    c.em.emit("QueryBegin", {"Query": el, "Kind": TIME_ELAPSED})
    for _ in range(20):
        quad(c)
    c.em.emit("QueryEnd", {"Query": el, "Kind": TIME_ELAPSED})
    c.em.emit("QueryCounter", {"Query": t1, "Kind": TIMESTAMP})
    return t0, el, t1


def test_timestamps_are_monotone_and_elapsed_lies_between():
    with vk_answers() as (c, be, ap):
        t0, el, t1 = timing_scene(c, ap)
        a, e, b = (query_value(c, ap, q)[1] for q in (t0, el, t1))
        (now,) = struct.unpack("<Q", ok(c, ap, "QueryTimestamp", {}))
        check_monotone(a, e, b, now)
        assert b > 0


def test_timestamps_control_swapped_counters_are_caught():
    with vk_answers() as (c, be, ap):
        t0, el, t1 = timing_scene(c, ap)
        a, e, b = (query_value(c, ap, q)[1] for q in (t0, el, t1))
        (now,) = struct.unpack("<Q", ok(c, ap, "QueryTimestamp", {}))
        with pytest.raises(AssertionError, match="timestamps not monotone"):
            check_monotone(b + 1, e, a, now)  # the planted defect: the pair read backwards


def test_query_result_without_wait_never_blocks_and_tick_tells_the_client(monkeypatch):
    from mgpipe.runtime.backends.vulkan import fences

    monkeypatch.setattr(fences, "TICK_FLUSH_NS", 10**18)  # no 8 ms submit during the test
    with vk_answers() as (c, be, ap):
        q = occlusion_scene(c, ap, SAMPLES_PASSED, 1)
        avail, value = query_value(c, ap, q, wait=0)  # recorded, not submitted: not available
        assert (avail, value) == (0, 0)
        for _ in range(1000):  # availability polls end in bounded time (a polled query flushes)
            (a,) = struct.unpack("<I", ok(c, ap, "QueryAvailable", {"Handle": q, "Kind": 0}))
            if a:
                break
        assert a == 1
        be.tick(ap.ctx)
        be.tick(ap.ctx)
        got = [e for e in events(ap) if e.kind == EventKind.QueryResult]
        drained = c.link.events_seen["QueryResult"]  # the client's waits drain events too
        assert len(got) + drained == 1  # told once, whichever tick saw it retire
        assert [e.values for e in got] in ([], [(q[0], q[1], QUAD_SAMPLES)])
        assert query_value(c, ap, q, wait=0) == (1, QUAD_SAMPLES)


def test_gl_errors_of_queries_arrive_in_order_after_their_record():
    with vk_answers() as (c, be, ap):
        q = new(c, "Query")
        c.em.emit("QueryCreate", {"Query": q, "Kind": SAMPLES_PASSED})
        bad = c.em.emit("QueryEnd", {"Query": q, "Kind": SAMPLES_PASSED})  # never begun
        c.em.emit("QueryBegin", {"Query": q, "Kind": SAMPLES_PASSED})
        bad2 = c.em.emit("QueryBegin", {"Query": q, "Kind": SAMPLES_PASSED})  # already active
        c.em.emit("QueryEnd", {"Query": q, "Kind": SAMPLES_PASSED})
        errs = [(e.seq, e.values[0]) for e in events(ap) if e.kind == EventKind.GlError]
        assert errs == [(bad, 0x0502), (bad2, 0x0502)]


# -- fences ------------------------------------------------------------------------------
def fence_wait(c, ap, f, timeout_ns, flags=0):
    (r,) = struct.unpack("<I", ok(c, ap, "FenceWait", {"Fence": f, "TimeoutNs": timeout_ns,
                                                        "Flags": flags}))  # fmt: skip
    return r


def status(c, ap, f):
    return struct.unpack("<I", ok(c, ap, "FenceStatus", {"Handle": f, "Kind": 0}))[0]


def poll_until_signalled(c, ap, f, bound=10000):
    for i in range(bound):
        if fence_wait(c, ap, f, 0, FLUSH):
            return i
    raise AssertionError(f"zero-timeout poll loop did not end in {bound} polls")


def test_fence_after_a_draw_retires_with_its_own_submission(monkeypatch):
    from mgpipe.runtime.backends.vulkan import fences

    # the applier's tick (every 64 records) would submit a waited-on fence after 8 ms
    # (tested on its own below): here only the calls under test move the fences
    monkeypatch.setattr(fences, "TICK_FLUSH_NS", 10**18)
    with vk_answers() as (c, be, ap):
        setup_color(c)
        quad(c)
        f1 = new(c, "Fence")
        c.em.emit("FenceCreate", {"Handle": f1, "Kind": 0})
        assert status(c, ap, f1) == 0  # still being recorded
        assert fence_wait(c, ap, f1, 0) == 0  # zero timeout, no flush: timeout expired
        assert fence_wait(c, ap, f1, 10**9, FLUSH) == 1  # waited: condition satisfied
        assert status(c, ap, f1) == 1
        assert fence_wait(c, ap, f1, 0) == 2  # already signalled
        quad(c)
        f2 = new(c, "Fence")
        c.em.emit("FenceCreate", {"Handle": f2, "Kind": 0})
        assert (status(c, ap, f1), status(c, ap, f2)) == (1, 0)  # per fence, not per frame
        assert poll_until_signalled(c, ap, f2) < 10000
        c.em.emit("FenceWaitServer", {"Fence": f2, "TimeoutNs": 0, "Flags": 0})
        f3 = new(c, "Fence")
        quad(c)
        c.em.emit("FenceCreate", {"Handle": f3, "Kind": 0})
        c.em.emit("FenceWaitServer", {"Fence": f3, "TimeoutNs": 0, "Flags": 0})
        assert be.server_waits == 1  # f2 had signalled: nothing to wait for on the device
        c.em.emit("FenceDestroy", {"Handle": f1, "Kind": 0})
        be.r.flush()
        be.r.ring.wait_idle()
        be.tick(ap.ctx)
        be.tick(ap.ctx)  # a second tick tells nothing again
        told = [e.values for e in events(ap) if e.kind == EventKind.FenceSignaled]
        drained = c.link.events_seen["FenceSignaled"]  # the client's waits drain events too
        objs = [ap.tables["Fence"].rows[f[0]].obj.backend for f in (f2, f3)]
        assert all(o.told for o in objs)  # f2, f3 told
        assert len(told) + drained in (2, 3)  # each once (f1 too if a tick saw it before death)
        assert len(set(told)) == len(told)


def test_fence_control_a_never_submitted_fence_ends_the_poll_loop_by_its_bound():
    with vk_answers() as (c, be, ap):
        setup_color(c)
        quad(c)
        f = new(c, "Fence")
        c.em.emit("FenceCreate", {"Handle": f, "Kind": 0})
        obj = ap.tables["Fence"].rows[f[0]].obj.backend
        obj.serial = 10**9  # the planted defect: a serial no submission will ever reach
        be.r.ring.serial  # noqa: B018
        with pytest.raises(AssertionError, match="zero-timeout poll loop did not end in 50"):
            try:
                poll_until_signalled(c, ap, f, bound=50)
            finally:
                obj.serial = 0


# -- readbacks ------------------------------------------------------------------------------
GL = {"RED": 0x1903, "RG": 0x8227, "RGB": 0x1907, "RGBA": 0x1908, "RED_INTEGER": 0x8D94,
      "RGBA_INTEGER": 0x8D99, "DEPTH_COMPONENT": 0x1902, "STENCIL_INDEX": 0x1901,
      "DEPTH_STENCIL": 0x84F9, "UNSIGNED_BYTE": 0x1401, "BYTE": 0x1400, "UNSIGNED_SHORT": 0x1403,
      "UNSIGNED_INT": 0x1405, "INT": 0x1404, "FLOAT": 0x1406, "HALF_FLOAT": 0x140B,
      "UNSIGNED_INT_2_10_10_10_REV": 0x8368, "UNSIGNED_INT_10F_11F_11F_REV": 0x8C3B,
      "UNSIGNED_INT_24_8": 0x84FA, "FLOAT_32_UNSIGNED_INT_24_8_REV": 0x8DAD}  # fmt: skip
TW, TH = 4, 3
N = TW * TH


def _texels(name):
    """(upload bytes, [(format, type, expected bytes decoded by hand)])."""
    i = np.arange(N)
    if name in ("R8", "RG8", "RGBA8", "SRGB8_ALPHA8"):
        n = {"R8": 1, "RG8": 2}.get(name, 4)
        v = ((i[:, None] * 16 + np.arange(n) * 3) % 256).astype(np.uint8)
        rgba = np.zeros((N, 4), np.uint8)
        rgba[:, 3] = 255
        rgba[:, :n] = v
        own = {1: "RED", 2: "RG", 4: "RGBA"}[n]
        return v.tobytes(), [
            (own, "UNSIGNED_BYTE", v.tobytes()),
            ("RGBA", "UNSIGNED_BYTE", rgba.tobytes()),
            ("RGBA", "FLOAT", (rgba / 255.0).astype(np.float32).tobytes()),
        ]
    if name == "RGB10_A2":
        r, g, b, a = i * 80 % 1024, i * 33 % 1024, 1023 - i, i % 4
        words = (r | g << 10 | b << 20 | a << 30).astype(np.uint32)
        f = np.stack([r / 1023, g / 1023, b / 1023, a / 3], 1).astype(np.float32)
        return words.tobytes(), [
            ("RGBA", "UNSIGNED_INT_2_10_10_10_REV", words.tobytes()),
            ("RGBA", "FLOAT", f.tobytes()),
        ]
    if name == "R11F_G11F_B10F":
        # r = 1.0 + i/64 (exponent 15, mantissa i), g = 2.0, b = 0.5
        r = (15 << 6) | i
        g = np.full(N, 16 << 6)
        b = np.full(N, 14 << 5)
        words = (r | g << 11 | b << 22).astype(np.uint32)
        f = np.stack([1 + i / 64, np.full(N, 2.0), np.full(N, 0.5), np.ones(N)], 1)
        return words.tobytes(), [
            ("RGB", "UNSIGNED_INT_10F_11F_11F_REV", words.tobytes()),
            ("RGBA", "FLOAT", f.astype(np.float32).tobytes()),
        ]
    if name in ("RGBA16F", "RGBA32F"):
        dt = np.float16 if name == "RGBA16F" else np.float32
        v = (np.arange(N * 4).reshape(N, 4) * 0.25 - 3).astype(dt)
        own = "HALF_FLOAT" if name == "RGBA16F" else "FLOAT"
        return v.tobytes(), [
            ("RGBA", own, v.tobytes()),
            ("RGBA", "FLOAT", v.astype(np.float32).tobytes()),
        ]
    if name in ("R32UI", "RGBA8UI", "RGBA8I", "RGBA32I", "RGBA32UI"):
        dt = {
            "R32UI": np.uint32,
            "RGBA8UI": np.uint8,
            "RGBA8I": np.int8,
            "RGBA32I": np.int32,
            "RGBA32UI": np.uint32,
        }[name]
        n = 1 if name == "R32UI" else 4
        v = (np.arange(N * n).reshape(N, n) * 7 - (40 if np.issubdtype(dt, np.signedinteger)
                                                   else 0)).astype(dt)  # fmt: skip
        signed = np.issubdtype(dt, np.signedinteger)
        wide = np.zeros((N, 4), np.int32 if signed else np.uint32)
        wide[:, 3] = 1
        wide[:, :n] = v
        own_t = {
            np.uint32: "UNSIGNED_INT",
            np.uint8: "UNSIGNED_BYTE",
            np.int8: "BYTE",
            np.int32: "INT",
        }[dt]
        own_f = "RED_INTEGER" if n == 1 else "RGBA_INTEGER"
        return v.tobytes(), [
            (own_f, own_t, v.tobytes()),
            ("RGBA_INTEGER", "INT" if signed else "UNSIGNED_INT", wide.tobytes()),
        ]
    if name == "DEPTH_COMPONENT16":
        v = (i * 5000).astype(np.uint16)
        return v.tobytes(), [
            ("DEPTH_COMPONENT", "UNSIGNED_SHORT", v.tobytes()),
            ("DEPTH_COMPONENT", "FLOAT", (v / 65535).astype(np.float32).tobytes()),
        ]
    if name == "DEPTH_COMPONENT32F":
        v = (i / 16).astype(np.float32)
        return v.tobytes(), [("DEPTH_COMPONENT", "FLOAT", v.tobytes())]
    if name in ("DEPTH_COMPONENT24", "DEPTH24_STENCIL8"):
        d24 = (i * 1000003) % (1 << 24)
        s = (i * 21 + 3) % 256
        words = ((d24 << 8) | (s if name == "DEPTH24_STENCIL8" else 0)).astype(np.uint32)
        out = [("DEPTH_COMPONENT", "FLOAT", (d24 / 0xFFFFFF).astype(np.float32).tobytes())]
        if name == "DEPTH24_STENCIL8":
            out += [
                ("DEPTH_STENCIL", "UNSIGNED_INT_24_8", words.tobytes()),
                ("STENCIL_INDEX", "UNSIGNED_BYTE", s.astype(np.uint8).tobytes()),
            ]
        return words.tobytes(), out
    if name == "DEPTH32F_STENCIL8":
        d = (i / 16).astype(np.float32)
        s = ((i * 21 + 3) % 256).astype(np.uint32)
        pairs = np.stack([d.view(np.uint32), s], 1).astype(np.uint32)
        return pairs.tobytes(), [
            ("DEPTH_STENCIL", "FLOAT_32_UNSIGNED_INT_24_8_REV", pairs.tobytes()),
            ("STENCIL_INDEX", "UNSIGNED_BYTE", s.astype(np.uint8).tobytes()),
        ]
    raise KeyError(name)


def _formats():
    from mgpipe.runtime.backends.vulkan.formats import GL_FORMATS

    return [(gl, f.name) for gl, f in GL_FORMATS.items()]


def get_image(c, ap, tex, fmt, typ, level=0, box=(0, 0, 0, 0, 0, 0)):
    x, y, z, w, h, d = box
    return ok(c, ap, "GetTextureImage", {"Res": tex.handle, "Box": {"X": x, "Y": y, "Z": z,
              "W": w, "H": h, "D": d}, "Format": GL[fmt], "Type": GL[typ], "Level": level})  # fmt: skip


def check_texels(name, fmt, typ, got: bytes, want: bytes) -> None:
    if got != want:
        raise AssertionError(f"{name} read as {fmt}/{typ}: {got[:16].hex()} != {want[:16].hex()}")


def test_every_format_reads_back_by_value_in_each_of_its_pairs():
    with vk_answers() as (c, be, ap):
        checked = 0
        for gl, name in _formats():
            data, reads = _texels(name)
            tex = c.create_texture_2d(TW, TH, gl)
            c.tex_image(tex, 0, data)
            for fmt, typ, want in reads:
                got = get_image(c, ap, tex, fmt, typ)
                check_texels(name, fmt, typ, got, want)  # every pair exact, floats too
                checked += 1
        assert checked >= 35


def test_readback_control_a_wrong_byte_is_named():
    with pytest.raises(AssertionError, match="RGBA8 read as RGBA/UNSIGNED_BYTE"):
        check_texels("RGBA8", "RGBA", "UNSIGNED_BYTE", b"\x01\x02", b"\x01\x03")


def test_read_pixels_rows_are_gl_bottom_up_and_tight():
    with vk_answers() as (c, be, ap):
        setup_color(c, (0, 1, 0, 1))  # the lower-left triangle: green at the bottom-left
        c.clear_color(0, 0, 1, 1)
        c.clear(0x4000)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        data = ok(
            c,
            ap,
            "ReadPixels",
            {
                "Box": {"X": 0, "Y": 0, "Z": 0, "W": 3, "H": H, "D": 1},
                "Format": GL["RGBA"],
                "Type": GL["UNSIGNED_BYTE"],
            },
        )
        assert len(data) == 3 * H * 4  # tight: no row padding
        rows = np.frombuffer(data, np.uint8).reshape(H, 3, 4)
        check_bottom_up(rows)
        d24 = ok(
            c,
            ap,
            "ReadPixels",
            {
                "Box": {"X": 0, "Y": 0, "Z": 0, "W": 2, "H": 1, "D": 1},
                "Format": GL["DEPTH_STENCIL"],
                "Type": GL["UNSIGNED_INT_24_8"],
            },
        )
        assert np.frombuffer(d24, np.uint32).tolist() == [0xFFFFFF00, 0xFFFFFF00]  # depth 1, s 0


def check_bottom_up(rows):
    if tuple(rows[0, 0]) != (0, 255, 0, 255) or tuple(rows[-1, -1]) != (0, 0, 255, 255):
        raise AssertionError(
            f"rows not bottom-up: first {tuple(rows[0, 0])} last {tuple(rows[-1, -1])}"
        )


def test_read_pixels_control_top_down_rows_are_caught():
    with vk_answers() as (c, be, ap):
        setup_color(c, (0, 1, 0, 1))
        c.clear_color(0, 0, 1, 1)
        c.clear(0x4000)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        data = ok(
            c,
            ap,
            "ReadPixels",
            {
                "Box": {"X": 0, "Y": 0, "Z": 0, "W": 3, "H": H, "D": 1},
                "Format": GL["RGBA"],
                "Type": GL["UNSIGNED_BYTE"],
            },
        )
        rows = np.frombuffer(data, np.uint8).reshape(H, 3, 4)[::-1]  # the planted defect
        with pytest.raises(AssertionError, match="rows not bottom-up"):
            check_bottom_up(rows)


def test_texture_image_levels_and_layers():
    with vk_answers() as (c, be, ap):
        tex = c.create_texture("2d_array", 4, 4, 3, levels=2)
        for layer in range(3):
            c.tex_image(tex, 1, bytes([layer * 10 + k for k in range(16)]), layer=layer)
        got = get_image(c, ap, tex, "RGBA", "UNSIGNED_BYTE", level=1, box=(0, 0, 1, 2, 2, 2))
        assert got == bytes(range(10, 26)) + bytes(range(20, 36))
        cube = c.create_texture("cube", 2, 2)
        c.tex_image(cube, 0, bytes([7] * 16), face=4)
        got = ok(c, ap, "GetTextureImage", {"Res": cube.handle, "Target": 0x8515 + 4,
                 "Format": GL["RGBA"], "Type": GL["UNSIGNED_BYTE"]})  # fmt: skip
        assert got == bytes([7] * 16)


# -- buffers, copies, maps ----------------------------------------------------------------------
def readback(c, ap, buf, off, size):
    return ok(c, ap, "ResourceReadback", {"Res": buf.handle, "Offset": off, "Size": size})


def copy_then_read(c, ap):
    src = c.create_buffer(bytes(range(64)))
    dst = c.create_buffer(bytes(64))
    c.em.emit(
        "ResourceCopyRegion",
        {
            "Src": src.handle,
            "Dst": dst.handle,
            "SrcBox": {"X": 8, "W": 16, "H": 1, "D": 1},
            "DstX": 4,
        },
    )
    return readback(c, ap, dst, 0, 24)


def check_copy(got):
    want = bytes(4) + bytes(range(8, 24)) + bytes(4)
    if got != want:
        raise AssertionError(f"buffer copy: {got.hex()} != {want.hex()}")


def test_buffer_to_buffer_copy_lands_before_the_readback():
    with vk_answers() as (c, be, ap):
        check_copy(copy_then_read(c, ap))
        assert be.copies == 1


def test_buffer_copy_control_an_unsettled_readback_is_caught(monkeypatch):
    from mgpipe.runtime.backends.vulkan.answers import AnswerEntries

    monkeypatch.setattr(AnswerEntries, "settle_buffer", lambda self, buf: None)  # the defect
    with vk_answers() as (c, be, ap):
        with pytest.raises(AssertionError, match="buffer copy"):
            check_copy(copy_then_read(c, ap))


def test_image_copy_and_copy_framebuffer_to_texture_by_pixels():
    with vk_answers() as (c, be, ap):
        a = c.create_texture_2d(4, 4)
        c.tex_image(a, 0, bytes(range(64)))
        b = c.create_texture_2d(4, 4)
        c.tex_image(b, 0, bytes(64))
        c.tr.validate("ReadPixels")
        c.em.emit("ResourceCopyRegion", {"Src": a.handle, "Dst": b.handle,
                                         "SrcBox": {"X": 1, "Y": 1, "W": 2, "H": 2, "D": 1},
                                         "DstX": 0, "DstY": 2})  # fmt: skip
        got = np.frombuffer(get_image(c, ap, b, "RGBA", "UNSIGNED_BYTE"), np.uint8).reshape(4, 4, 4)
        src = np.arange(64, dtype=np.uint8).reshape(4, 4, 4)
        assert (got[2:4, 0:2] == src[1:3, 1:3]).all() and not got[0:2].any()
        # the default framebuffer (rows top-down in its image) into a texture (bottom-up)
        setup_color(c, (0, 1, 0, 1))
        c.clear_color(0, 0, 1, 1)
        c.clear(0x4000)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        t = c.create_texture_2d(8, 8)
        c.em.emit("CopyFramebufferToTexture", {"Dst": t.handle, "Level": 0, "X": 0, "Y": 0,
                                               "Width": 8, "Height": 8, "XOffset": 0, "YOffset": 0,
                                               "SubImage": 1, "InternalFormat": 0x8058})  # fmt: skip
        fb = ok(
            c,
            ap,
            "ReadPixels",
            {
                "Box": {"X": 0, "Y": 0, "W": 8, "H": 8, "D": 1},
                "Format": GL["RGBA"],
                "Type": GL["UNSIGNED_BYTE"],
            },
        )
        assert get_image(c, ap, t, "RGBA", "UNSIGNED_BYTE") == fb
        assert fb[:4] == bytes([0, 255, 0, 255])


def test_pack_buffer_readback_on_the_device_and_converted():
    with vk_answers() as (c, be, ap):
        tex = c.create_texture_2d(TW, TH)
        data = bytes(range(N * 4))
        c.tex_image(tex, 0, data)
        c.tr.validate("ReadPixels")
        pb = c.create_buffer(bytes(256))
        src = {
            "Res": tex.handle,
            "Box": {"X": 0, "Y": 0, "W": TW, "H": TH, "D": 1},
            "Format": GL["RGBA"],
            "Type": GL["UNSIGNED_BYTE"],
        }
        seq = c.em.emit("GetTextureImageToBuffer", {"Src": src, "Dst": pb.handle, "DstBase": 16,
                                                     "RowStride": 20})  # fmt: skip
        one = dict(src, Type=GL["FLOAT"], Box={"X": 0, "Y": 0, "W": 1, "H": 1, "D": 1})
        c.em.emit("GetTextureImageToBuffer", {"Src": one, "Dst": pb.handle, "DstBase": 80})
        assert (be.pack_device_copies, be.pack_host_conversions) == (1, 1)
        done = [e.values[0] for e in events(ap) if e.kind == EventKind.ReadbackDone]
        assert done == [seq, seq + 1]  # one readback-done per pack, in order
        got = readback(c, ap, pb, 0, 96)
        rows = [got[16 + r * 20 : 16 + r * 20 + 16] for r in range(TH)]
        assert rows == [data[r * 16 : (r + 1) * 16] for r in range(TH)]
        assert got[80:96] == (np.arange(4) / 255.0).astype(np.float32).tobytes()


def test_map_persistent_declines_flush_range_checks_caps_report_the_device():
    with vk_answers() as (c, be, ap):
        buf = c.create_buffer(bytes(100))
        status, data = ask(c, ap, "MapPersistent", {"Handle": buf.handle, "Kind": 0})
        assert (status, data) == (ReplyStatus.DECLINED, b"")
        c.em.emit("ResourceFlushRange", {"Res": buf.handle, "Offset": 0, "Size": 100})
        bad = c.em.emit("ResourceFlushRange", {"Res": buf.handle, "Offset": 90, "Size": 20})
        errs = [(e.seq, e.values[0]) for e in events(ap) if e.kind == EventKind.GlError]
        assert errs == [(bad, 0x0501)] and be.flushed_ranges == 1
        from mgpipe.runtime.schema import layouts

        raw = ok(c, ap, "GetCaps", {})
        caps = layouts.view("MGPCaps", raw)
        lim = be.dev.limits
        assert int(caps["Dynamic"]["MaxTextureSize"]) == int(lim.maxImageDimension2D)
        assert int(caps["Dynamic"]["MaxColorAttachments"]) == int(lim.maxColorAttachments)
        bits = {k: int(v) for k, v in __import__("mgpipe.runtime.schema.tables", fromlist=["x"])
                .enum("MGPCapBit").items()}  # fmt: skip
        assert int(caps["CallMask"]) & bits["kCapOcclusionQuery"]
        assert int(caps["CallMask"]) & bits["kCapTimerQuery"]
        ref = caps["FormatCapabilities"]
        rows = np.frombuffer(raw[int(ref["Offset"]) : int(ref["Offset"]) + int(ref["Size"])],
                             np.uint32).reshape(-1, 2)  # fmt: skip
        flags = dict(rows.tolist())
        assert flags[0x8058] & 0b1111 == 0b1111  # RGBA8: sampled, renderable, blit both ways
        assert not flags[0x8236] & (1 << 4)  # R32UI: no linear filter (what lavapipe reports)


# -- blits ----------------------------------------------------------------------------------------
def _fb_with(c, w, h, data):
    tex = c.create_texture_2d(w, h)
    c.tex_image(tex, 0, data)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    return fb, tex


def test_blit_scaled_nearest_and_flipped_by_pixels():
    with vk_answers() as (c, be, ap):
        src_px = np.array(
            [[[255, 0, 0, 255], [0, 255, 0, 255]], [[0, 0, 255, 255], [255, 255, 255, 255]]],
            np.uint8,
        )  # GL row 0 first
        sfb, _ = _fb_with(c, 2, 2, src_px.tobytes())
        dfb, dtex = _fb_with(c, 4, 4, bytes(64))
        c.bind_framebuffer(sfb, "read")
        c.bind_framebuffer(dfb, "draw")
        c.blit_framebuffer(0, 0, 2, 2, 0, 0, 4, 4, 0x4000, 0x2600)
        c.bind_framebuffer(dfb)
        up = np.frombuffer(ok(c, ap, "ReadPixels", {"Box": {"W": 4, "H": 4, "D": 1},
                           "Format": GL["RGBA"], "Type": GL["UNSIGNED_BYTE"]}), np.uint8)  # fmt: skip
        want = src_px.repeat(2, 0).repeat(2, 1)
        assert (up.reshape(4, 4, 4) == want).all()
        c.bind_framebuffer(sfb, "read")
        c.bind_framebuffer(dfb, "draw")
        c.blit_framebuffer(0, 0, 2, 2, 0, 4, 4, 0, 0x4000, 0x2600)  # y flipped
        c.bind_framebuffer(dfb)
        down = np.frombuffer(ok(c, ap, "ReadPixels", {"Box": {"W": 4, "H": 4, "D": 1},
                             "Format": GL["RGBA"], "Type": GL["UNSIGNED_BYTE"]}), np.uint8)  # fmt: skip
        assert (down.reshape(4, 4, 4) == want[::-1]).all()


def test_blit_refusals_and_gl_errors():
    from mgpipe.runtime.backends.vulkan.errors import VulkanRefused

    with vk_answers(fatal=True) as (c, be, ap):
        sfb, _ = _fb_with(c, 2, 2, bytes(16))
        itex = c.create_texture_2d(2, 2, 0x8D7C)  # RGBA8UI
        ifb = c.create_framebuffer()
        c.framebuffer_texture(ifb, 0, itex)
        c.bind_framebuffer(sfb, "read")
        c.bind_framebuffer(ifb, "draw")
        c.blit_framebuffer(0, 0, 2, 2, 0, 0, 2, 2, 0x4000, 0x2600)  # float into integer
        seq = ap.ctx.seq
        errs = [(e.seq, e.values[0]) for e in events(ap) if e.kind == EventKind.GlError]
        assert errs == [(seq, 0x0502)]
        c.bind_framebuffer(None)
        c.clear(0x4100)
        default = next(k for k, v in be._fbs.items() if v is None)  # the default framebuffer
        with pytest.raises(VulkanRefused, match="Blit.Filter"):  # the client refuses it too
            c.em.emit("Blit", {"ReadFbo": default, "DrawFbo": default, "SrcX1": 2, "SrcY1": 2,
                               "DstX0": 2, "DstX1": 4, "DstY1": 2, "Mask": 0x0100,
                               "Filter": 0x2601})  # linear depth  # fmt: skip


# -- depth / stencil blits, rendered textures, injected driver errors ---------------------------
def _depth_fb(c, w, h):
    tex = c.create_texture_2d(w, h, 0x88F0)  # DEPTH24_STENCIL8
    col = c.create_texture_2d(w, h)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, col)
    c.framebuffer_depth_stencil(fb, tex, tex)
    return fb, tex


def depth_blit_scene(c, ap, be, mask):
    sfb, _ = _depth_fb(c, 4, 4)
    dfb, dtex = _depth_fb(c, 4, 4)
    c.bind_framebuffer(sfb)
    c.clear_depth(0.25)
    c.state.set_clear_stencil(0x5A) if hasattr(c.state, "set_clear_stencil") else None
    c.clear(0x0100 | 0x0400)
    c.bind_framebuffer(dfb)
    c.clear_depth(1.0)
    c.clear(0x0100 | 0x0400)
    c.bind_framebuffer(sfb, "read")
    c.bind_framebuffer(dfb, "draw")
    c.blit_framebuffer(0, 0, 4, 4, 0, 0, 4, 4, mask, 0x2600)
    return get_image(c, ap, dtex, "DEPTH_STENCIL", "UNSIGNED_INT_24_8")


def check_depth(words: bytes, want_depth: float) -> None:
    d = (np.frombuffer(words, np.uint32) >> 8) / 0xFFFFFF
    if not np.allclose(d, want_depth, atol=1 / 0xFFFFFF):
        raise AssertionError(f"depth blit: {sorted(set(d.round(6).tolist()))} != {want_depth}")


def test_depth_stencil_blit_copies_the_values():
    with vk_answers() as (c, be, ap):
        words = depth_blit_scene(c, ap, be, 0x0100 | 0x0400)
        check_depth(words, 0.25)


def test_depth_blit_control_a_colour_only_mask_is_caught():
    with vk_answers() as (c, be, ap):
        words = depth_blit_scene(c, ap, be, 0x4000)  # the planted defect: depth not blitted
        with pytest.raises(AssertionError, match=r"depth blit: \[1.0\] != 0.25"):
            check_depth(words, 0.25)


def test_rendered_texture_reads_back_in_gl_rows_on_the_host_and_into_a_pack_buffer():
    with vk_answers() as (c, be, ap):
        tex = c.create_texture_2d(W, H)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        setup_color(c, (0, 1, 0, 1))  # the lower-left triangle on blue
        c.clear_color(0, 0, 1, 1)
        c.clear(0x4000)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        box = {"X": 0, "Y": 0, "W": W, "H": H, "D": 1}
        fbpx = ok(
            c, ap, "ReadPixels", {"Box": box, "Format": GL["RGBA"], "Type": GL["UNSIGNED_BYTE"]}
        )
        check_bottom_up(np.frombuffer(fbpx, np.uint8).reshape(H, W, 4))
        assert get_image(c, ap, tex, "RGBA", "UNSIGNED_BYTE") == fbpx  # the attachment, GL rows
        pb = c.create_buffer(bytes(W * H * 4))
        c.em.emit(
            "ReadPixelsToBuffer",
            {
                "Src": {"Box": box, "Format": GL["RGBA"], "Type": GL["UNSIGNED_BYTE"]},
                "Dst": pb.handle,
            },
        )
        assert be.pack_device_copies == 1  # RGBA8 as RGBA / UNSIGNED_BYTE: the copy's own bytes
        assert readback(c, ap, pb, 0, W * H * 4) == fbpx
        plain = c.create_texture_2d(W, H)  # rows bottom-up: the copy moves rows one by one
        c.tex_image(plain, 0, bytes(W * H * 4))
        c.tr.validate("ReadPixels")
        c.em.emit(
            "ResourceCopyRegion",
            {"Src": tex.handle, "Dst": plain.handle, "SrcBox": {"W": W, "H": H, "D": 1}},
        )
        assert get_image(c, ap, plain, "RGBA", "UNSIGNED_BYTE") == fbpx


def test_a_driver_error_is_an_ordered_gl_error_never_a_crash(monkeypatch):
    import vulkan as vk

    from mgpipe.runtime.backends.vulkan import answers

    def oom(*a, **k):  # the driver's answer, injected
        raise vk.VkErrorOutOfDeviceMemory()

    with vk_answers() as (c, be, ap):
        tex = c.create_texture_2d(2, 2)
        c.tex_image(tex, 0, bytes(16))
        c.tr.validate("ReadPixels")
        monkeypatch.setattr(answers, "copy_region", oom)
        status, data = ask(c, ap, "GetTextureImage", {"Res": tex.handle, "Format": GL["RGBA"],
                                                      "Type": GL["UNSIGNED_BYTE"]})  # fmt: skip
        seq = ap.ctx.seq
        monkeypatch.undo()
        assert status == ReplyStatus.ERROR
        errs = [(e.seq, e.values[0]) for e in events(ap) if e.kind == EventKind.GlError]
        # the event of that record (here, or already drained by the client's wait)
        assert errs == [(seq, 0x0505)] or (errs == [] and c.get_error() == 0x0505)
        assert c.get_error() == 0
        assert get_image(c, ap, tex, "RGBA", "UNSIGNED_BYTE") == bytes(16)  # it carries on


def non_present_loop(c, ap, be, sleep_s):
    import time

    setup_color(c)
    quad(c)
    f = new(c, "Fence")
    c.em.emit("FenceCreate", {"Handle": f, "Kind": 0})
    told = []
    for _ in range(50):  # no present, no flush, no wait: only the applier's ticks
        time.sleep(sleep_s)
        be.tick(ap.ctx)
        told += [e.values for e in events(ap) if e.kind == EventKind.FenceSignaled]
        if told:
            break
    return f, told


def check_told(f, told) -> None:
    if told != [tuple(f)]:
        raise AssertionError(f"fence never signalled without a present: told {told}")


def test_the_non_present_tick_submits_what_a_fence_waits_on():
    with vk_answers() as (c, be, ap):
        f, told = non_present_loop(c, ap, be, 0.01)
        check_told(f, told)
        assert be.tick_flushes == 1


def test_non_present_tick_control_a_tick_that_never_flushes_is_caught(monkeypatch):
    from mgpipe.runtime.backends.vulkan import fences

    monkeypatch.setattr(fences, "TICK_FLUSH_NS", 10**18)  # the planted defect
    with vk_answers() as (c, be, ap):
        f, told = non_present_loop(c, ap, be, 0.001)
        with pytest.raises(AssertionError, match="fence never signalled without a present"):
            check_told(f, told)


def scissored_blit_scene(c, ap, box):
    src_px = np.array(
        [[[255, 0, 0, 255], [0, 255, 0, 255]], [[0, 0, 255, 255], [255, 255, 255, 255]]], np.uint8
    )
    sfb, _ = _fb_with(c, 2, 2, src_px.tobytes())
    dfb, _ = _fb_with(c, 4, 4, bytes(64))
    c.enable("ScissorTest")
    c.scissor(*box)
    c.bind_framebuffer(sfb, "read")
    c.bind_framebuffer(dfb, "draw")
    c.blit_framebuffer(0, 0, 2, 2, 0, 0, 4, 4, 0x4000, 0x2600)
    c.disable("ScissorTest")
    c.bind_framebuffer(dfb)
    got = np.frombuffer(ok(c, ap, "ReadPixels", {"Box": {"W": 4, "H": 4, "D": 1},
                        "Format": GL["RGBA"], "Type": GL["UNSIGNED_BYTE"]}), np.uint8)  # fmt: skip
    return got.reshape(4, 4, 4), src_px.repeat(2, 0).repeat(2, 1)


def check_scissored(got, full, box):
    x, y, w, h = box
    want = np.zeros_like(full)
    want[y : y + h, x : x + w] = full[y : y + h, x : x + w]
    if not (got == want).all():
        raise AssertionError(f"blit outside the scissor box {box} (or missing inside it)")


def test_blit_honours_the_scissor_box():
    with vk_answers() as (c, be, ap):
        got, full = scissored_blit_scene(c, ap, (0, 2, 2, 2))  # the top-left quarter only
        check_scissored(got, full, (0, 2, 2, 2))


def test_scissored_blit_control_an_unscissored_blit_is_caught(monkeypatch):
    from mgpipe.runtime.backends.vulkan import backend

    monkeypatch.setattr(backend, "scissored_blit", lambda coords, block: coords)  # the defect
    with vk_answers() as (c, be, ap):
        got, full = scissored_blit_scene(c, ap, (0, 2, 2, 2))
        with pytest.raises(AssertionError, match=r"blit outside the scissor box \(0, 2, 2, 2\)"):
            check_scissored(got, full, (0, 2, 2, 2))


def test_a_scissor_between_source_texels_is_refused_by_name():
    from mgpipe.runtime.backends.vulkan.errors import VulkanRefused

    with vk_answers(fatal=True) as (c, be, ap):
        with pytest.raises(VulkanRefused, match="Blit.Scissor"):
            scissored_blit_scene(c, ap, (1, 0, 3, 4))  # destination x 1 = source x 0.5


def masked_clear_in_query(c, ap):
    setup_color(c)
    c.clear(0x4000)
    q = new(c, "Query")
    c.em.emit("QueryCreate", {"Query": q, "Kind": SAMPLES_PASSED})
    c.em.emit("QueryBegin", {"Query": q, "Kind": SAMPLES_PASSED})
    quad(c)
    c.state.set_color_mask(1, 0, 1, 1)  # a masked clear: drawn by a pipeline, not counted
    c.clear(0x4000)
    c.state.set_color_mask(1, 1, 1, 1)
    quad(c)
    c.em.emit("QueryEnd", {"Query": q, "Kind": SAMPLES_PASSED})
    return query_value(c, ap, q)[1]


def test_a_masked_clear_inside_an_occlusion_query_is_not_counted():
    with vk_answers() as (c, be, ap):
        check_samples(masked_clear_in_query(c, ap), 2 * QUAD_SAMPLES)


def test_masked_clear_control_a_counted_clear_is_caught(monkeypatch):
    from mgpipe.runtime.backends.vulkan.queries import QueryEntries

    monkeypatch.setattr(QueryEntries, "pause", lambda self, cmd: False)  # the planted defect
    with vk_answers() as (c, be, ap):
        with pytest.raises(AssertionError, match=rf"occlusion: {2 * QUAD_SAMPLES + W * H} samples"):
            check_samples(masked_clear_in_query(c, ap), 2 * QUAD_SAMPLES)


def swapped_pack(c, ap, be, swap):
    tex = c.create_texture_2d(2, 1, 0x8814)  # RGBA32F
    vals = np.arange(8, dtype=np.float32) + 0.5
    c.tex_image(tex, 0, vals.tobytes())
    c.tr.validate("ReadPixels")
    pb = c.create_buffer(bytes(32))
    c.em.emit("GetTextureImageToBuffer", {"Src": {"Res": tex.handle, "Box": {"W": 2, "H": 1, "D": 1},
              "Format": GL["RGBA"], "Type": GL["FLOAT"]}, "Dst": pb.handle, "SwapGroup": swap})  # fmt: skip
    return readback(c, ap, pb, 0, 32), vals


def check_swapped(got, vals):
    want = vals.byteswap().tobytes()  # GL_PACK_SWAP_BYTES: each 4-byte float reversed
    if got != want:
        raise AssertionError(f"swap bytes not applied: {got[:8].hex()} != {want[:8].hex()}")


def test_pack_swap_bytes_reverses_each_component():
    with vk_answers() as (c, be, ap):
        got, vals = swapped_pack(c, ap, be, 4)
        check_swapped(got, vals)
        assert (be.pack_device_copies, be.pack_host_conversions) == (0, 1)


def test_pack_swap_bytes_control_an_unswapped_pack_is_caught():
    with vk_answers() as (c, be, ap):
        got, vals = swapped_pack(c, ap, be, 0)  # the planted defect: the group dropped
        with pytest.raises(AssertionError, match="swap bytes not applied"):
            check_swapped(got, vals)


def test_a_3d_texture_reads_back_slice_by_slice():
    with vk_answers() as (c, be, ap):
        tex = c.create_texture("3d", 2, 2, 3)
        data = bytes(range(2 * 2 * 3 * 4))
        c.tex_image(tex, 0, data)
        # check_texels' control: test_readback_control_a_wrong_byte_is_named
        check_texels("3d", "RGBA", "UNSIGNED_BYTE", get_image(c, ap, tex, "RGBA", "UNSIGNED_BYTE"),
                     data)  # every slice  # fmt: skip
        one = get_image(c, ap, tex, "RGBA", "UNSIGNED_BYTE", box=(0, 0, 1, 2, 2, 1))
        check_texels("3d slice 1", "RGBA", "UNSIGNED_BYTE", one, data[16:32])


def test_a_flush_range_is_atom_aligned_or_ends_at_the_memory_end():
    """NVIDIA's nonCoherentAtomSize is 64 (lavapipe's 1 hides it): every flushed range
    starts on an atom and ends on one or at the whole mapped allocation (VUID 01389 / 01390
    on the H200 when a 100-byte buffer in 128 bytes of memory was flushed to its own end)."""
    from mgpipe.runtime.backends.vulkan.answers import _FOREVER, flush_range

    for atom in (1, 64, 256):
        for alloc in (128, 256, 4096):
            for off in range(0, alloc, 7):
                for size in (1, 13, 64, alloc - off):
                    if off + size > alloc:
                        continue
                    start, length = flush_range(off, size, atom, alloc)
                    assert start % atom == 0 and start <= off
                    if length == _FOREVER:
                        assert -(-(off + size) // atom) * atom >= alloc
                    else:
                        assert (start + length) % atom == 0 and start + length >= off + size
                        assert start + length <= alloc
    # control: the buffer's own end (100 of 128 bytes) is neither an atom nor the memory end
    assert flush_range(0, 100, 64, 128) == (0, _FOREVER)
    assert flush_range(0, 100, 64, 128) != (0, 100)
