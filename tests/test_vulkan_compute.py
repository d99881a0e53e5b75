"""Compute on the Vulkan backend, from the wire in: a compute program written into a storage
buffer word by word (direct and indirect dispatch), atomic counters, image store, and GL's
memory-barrier bits as pipeline barriers. Every result is checked from first principles
(the words a shader of known arithmetic writes; a counter equal to the invocations run), and
each check has a control that plants the defect and asserts the named failure.

The client's compute API belongs to another module: these tests push the program and the
buffer bindings through the tracker and emit ``LaunchGrid`` / ``MemoryBarrier`` /
``SetShaderImages`` records as the catalogue defines them."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from _vk_support import vk_client
from mgpipe.runtime.backends.vulkan.compute import barrier_masks
from mgpipe.runtime.backends.vulkan.resources import VkBufferResource, VkTextureResource
from mgpipe.runtime.harness.shaders import programs
from mgpipe.runtime.schema import tables as _t

PATTERN = """#version 310 es
layout(local_size_x = 8) in;
layout(std430, binding = 1) buffer Out { uint v[]; } o;
void main() { uint i = gl_GlobalInvocationID.x; o.v[i] = i * 3u + 1u; }
"""
COUNT = """#version 310 es
layout(local_size_x = 4, local_size_y = 2) in;
layout(binding = 2, offset = 4) uniform atomic_uint hits;
void main() { atomicCounterIncrement(hits); }
"""
STORE = """#version 310 es
layout(local_size_x = 4, local_size_y = 4) in;
layout(rgba8, binding = 3) writeonly uniform highp image2D img;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(img, p, vec4(float(p.x) / 255.0, float(p.y) / 255.0, 1.0, 1.0));
}
"""
FILL = 0xDEADBEEF


def retype_atomic_values(code: bytes) -> bytes:
    """glslang 12's relaxed rules emit ``OpAtomicIAdd %uint ... %int_1`` for a GL atomic
    counter (a signed Value under an unsigned result: invalid SPIR-V). Each such Value gets
    an unsigned twin constant, declared right after the later of its type and the original."""
    words = list(struct.unpack(f"<{len(code) // 4}I", code))
    ints: dict[int, tuple[int, int]] = {}  # type id -> (signedness, position)
    consts: dict[int, tuple[int, int, int]] = {}  # id -> (type, value, position)
    twins: dict[tuple[int, int], int] = {}  # (unsigned type, value) -> new id
    inserts: list[tuple[int, list[int]]] = []
    at = 5
    while at < len(words):
        n, op = words[at] >> 16, words[at] & 0xFFFF
        if n == 0:
            break
        if op == 21 and n == 4:  # OpTypeInt id width signedness
            ints[words[at + 1]] = (words[at + 3], at)
        elif op == 43 and n == 4:  # OpConstant type id value
            consts[words[at + 2]] = (words[at + 1], words[at + 3], at)
        elif op in (234, 235) and n == 7:  # OpAtomicIAdd / ISub type id ptr scope sem value
            rtype, c = words[at + 1], consts.get(words[at + 6])
            if (
                c is not None
                and ints.get(c[0], (0, 0))[0] == 1
                and rtype in ints
                and ints[rtype][0] == 0
            ):
                key = (rtype, c[1])
                if key not in twins:
                    twins[key] = words[3]
                    words[3] += 1
                    where = max(c[2], ints[rtype][1]) + 4
                    inserts.append((where, [(4 << 16) | 43, rtype, twins[key], c[1]]))
                words[at + 6] = twins[key]
        at += n
    for where, ins in sorted(inserts, key=lambda x: -x[0]):
        words[where:where] = ins
    return struct.pack(f"<{len(words)}I", *words)


def compute_program(tmp_path, name: str, src: str) -> tuple[dict[int, bytes], bytes]:
    path = tmp_path / f"{name}.comp"
    path.write_text(src)
    out = tmp_path / f"{name}.comp.spv"
    relaxed = programs.RELAXED
    programs.RELAXED = relaxed | {path.name}  # atomic counters: glslang's relaxed rules
    try:
        programs.compile_source(path, out)
    finally:
        programs.RELAXED = relaxed
    code = retype_atomic_values(out.read_bytes())
    return {programs.STAGE_SLOTS["comp"]: code}, programs.reflection_record({"comp": out})


def backend_of(be, cls, size):
    found = [t for t in be._live.values() if isinstance(t, cls) and t.size == size]
    assert len(found) == 1, found
    return found[0]


def launch(c, prog, grid=(1, 1, 1), indirect=None, block=(0, 0, 0)):
    c.use_program(prog)
    c.tr._push_subdata()  # pending uploads land before the dispatch reads them
    c.tr._push_program()
    c.tr._push_shader_buffers()
    row = {"GridX": grid[0], "GridY": grid[1], "GridZ": grid[2],
           "BlockX": block[0], "BlockY": block[1], "BlockZ": block[2]}  # fmt: skip
    if indirect is not None:
        row |= {"IndirectBuffer": indirect[0].handle, "IndirectOffset": indirect[1],
                "IsIndirect": 1}  # fmt: skip
    c.em.emit("LaunchGrid", row)


def barrier(c, bits):
    c.em.emit("MemoryBarrier", {"Bits": bits, "ByRegion": 0})


def check_pattern(words: list[int], n: int) -> None:
    """Words [0, n) hold 3i + 1 (what PATTERN writes), the rest the fill."""
    for i, w in enumerate(words):
        want = 3 * i + 1 if i < n else FILL
        if w != want:
            raise AssertionError(f"storage word {i}: {w:#x}, expected {want:#x}")


def read_words(be, size):
    be.r.finish()
    buf = backend_of(be, VkBufferResource, size)
    raw = buf.gpu.read()
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


@pytest.mark.parametrize("transport", ["monolith", "inproc"])
def test_a_compute_shader_writes_its_pattern_word_by_word(tmp_path, transport):
    spirv, refl = compute_program(tmp_path, "pattern", PATTERN)
    with vk_client(transport) as (c, be):
        prog = c.create_program(spirv, refl)
        out = c.create_buffer(struct.pack("<64I", *[FILL] * 64))
        c.bind_buffer_base("storage", 1, out)
        launch(c, prog, (4, 1, 1))  # 4 groups of 8: words 0..31
        barrier(c, 0x2200)  # SHADER_STORAGE | BUFFER_UPDATE
        c.read_pixels(0, 0, 1, 1)  # a reply: every record before it has been applied
        words = read_words(be, 256)
        check_pattern(words, 32)
        assert be.compute_stats()["dispatches"] == 1
        assert be.compute_stats()["barriers"] == 1


def test_negative_control_a_short_grid_fails_the_word_check(tmp_path):
    spirv, refl = compute_program(tmp_path, "pattern", PATTERN)
    with vk_client() as (c, be):
        prog = c.create_program(spirv, refl)
        out = c.create_buffer(struct.pack("<64I", *[FILL] * 64))
        c.bind_buffer_base("storage", 1, out)
        launch(c, prog, (3, 1, 1))  # the planted defect: one group short
        words = read_words(be, 256)
        with pytest.raises(AssertionError, match=r"storage word 24: 0xdeadbeef, expected 0x49"):
            check_pattern(words, 32)


def test_an_indirect_dispatch_equals_its_direct_twin(tmp_path):
    spirv, refl = compute_program(tmp_path, "pattern", PATTERN)
    with vk_client() as (c, be):
        prog = c.create_program(spirv, refl)
        out = c.create_buffer(struct.pack("<64I", *[FILL] * 64))
        # DispatchIndirectCommand at byte 8 (two words of padding before it): 5 x 1 x 1
        args = c.create_buffer(struct.pack("<5I", 0, 0, 5, 1, 1))
        c.bind_buffer_base("storage", 1, out)
        launch(c, prog, indirect=(args, 8))
        words = read_words(be, 256)
        check_pattern(words, 40)
        assert be.compute_stats()["indirect_dispatches"] == 1


def test_a_misaligned_indirect_offset_is_refused_by_name(tmp_path):
    spirv, refl = compute_program(tmp_path, "pattern", PATTERN)
    with pytest.raises(Exception, match=r"LaunchGrid\.IndirectOffset.*4-byte aligned"):
        with vk_client() as (c, be):
            prog = c.create_program(spirv, refl)
            c.bind_buffer_base("storage", 1, c.create_buffer(bytes(256)))
            launch(c, prog, indirect=(c.create_buffer(bytes(20)), 2))


def test_a_block_size_other_than_the_shaders_is_refused_by_name(tmp_path):
    spirv, refl = compute_program(tmp_path, "pattern", PATTERN)
    with pytest.raises(Exception, match=r"LaunchGrid\.BlockX.*local size is \(8, 1, 1\)"):
        with vk_client() as (c, be):
            prog = c.create_program(spirv, refl)
            c.bind_buffer_base("storage", 1, c.create_buffer(bytes(256)))
            launch(c, prog, (1, 1, 1), block=(4, 1, 1))


def _atomic(c, be, buf, monkeypatch):
    from mgpipe.runtime.client import tracker

    monkeypatch.setitem(tracker.SHADER_BUFFER_CLASSES, "atomic",
                        "kMGPipeShaderBufferClassAtomicCounter")  # fmt: skip
    c.tr.buffer_bindings[("atomic", 2)] = (buf, 0, buf.size)
    c.tr.touch("shader_buffers")


def test_atomic_counters_count_every_invocation(tmp_path, monkeypatch):
    """3 x 5 groups of 4 x 2 invocations: the counter at offset 4 of binding point 2 ends
    at 120; the word before it is untouched."""
    spirv, refl = compute_program(tmp_path, "count", COUNT)
    assert "gl_AtomicCounterBlock_2" in refl.decode()
    with vk_client() as (c, be):
        prog = c.create_program(spirv, refl)
        counter = c.create_buffer(struct.pack("<4I", 7, 100, 0, 0))
        _atomic(c, be, counter, monkeypatch)
        launch(c, prog, (3, 5, 1))
        be.r.finish()
        words = struct.unpack("<4I", backend_of(be, VkBufferResource, 16).gpu.read())
        assert words == (7, 100 + 3 * 5 * 4 * 2, 0, 0)


def test_negative_control_a_counter_bound_elsewhere_is_refused(tmp_path, monkeypatch):
    spirv, refl = compute_program(tmp_path, "count", COUNT)
    with pytest.raises(Exception, match=r"LaunchGrid\.atomic block 'gl_AtomicCounterBlock_2' "
                       r"\(binding point 2\)\"\}: no buffer is bound"):  # fmt: skip
        with vk_client() as (c, be):
            prog = c.create_program(spirv, refl)
            counter = c.create_buffer(bytes(16))
            _atomic(c, be, counter, monkeypatch)
            c.tr.buffer_bindings[("atomic", 3)] = c.tr.buffer_bindings.pop(("atomic", 2))
            launch(c, prog, (1, 1, 1))


def _image_window(c, tex, access="WriteOnly", unit=3):
    acc = _t.enum("MGPipeImageAccess")[access]
    rows = [{}] * unit + [{"Res": tex.handle, "Unit": unit, "InternalFormat": tex.internal_format,
                           "Level": 0, "Layer": 0, "Layered": 0, "Access": acc}]  # fmt: skip
    from mgpipe.runtime.schema import layouts

    tail = layouts.array(layouts.dtype("MGPImageView"), rows)
    c.em.emit("SetShaderImages", {"Start": 0, "Count": len(rows)}, (tail,))


def test_image_store_writes_every_texel_read_back_through_a_framebuffer(tmp_path):
    """An 8x8 RGBA8 image, 2x2 groups of 4x4: texel (x, y) = (x, y, 255, 255), read back
    with ReadPixels in GL's row order."""
    spirv, refl = compute_program(tmp_path, "store", STORE)
    with vk_client() as (c, be):
        prog = c.create_program(spirv, refl)
        tex = c.create_texture("2d", 8, 8)
        c.tex_image(tex, 0, bytes(8 * 8 * 4))
        _image_window(c, tex)
        launch(c, prog, (2, 2, 1))
        barrier(c, 0x0400 | 0x0020)  # FRAMEBUFFER | SHADER_IMAGE_ACCESS
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        px = np.frombuffer(c.read_pixels(0, 0, 8, 8), np.uint8).reshape(8, 8, 4)
        want = np.array([[(x, y, 255, 255) for x in range(8)] for y in range(8)], np.uint8)
        assert (px == want).all(), px


def test_negative_control_no_image_bound_is_refused_by_name(tmp_path):
    spirv, refl = compute_program(tmp_path, "store", STORE)
    with pytest.raises(
        Exception, match=r"LaunchGrid\.image 'img' \(unit 3\)\"\}: no image is bound"
    ):
        with vk_client() as (c, be):
            prog = c.create_program(spirv, refl)
            tex = c.create_texture("2d", 8, 8)
            _image_window(c, tex, unit=2)  # the planted defect: the wrong unit
            launch(c, prog, (2, 2, 1))


def test_barrier_bits_map_to_the_stages_and_accesses_they_name():
    import vulkan as vk

    stages, access = barrier_masks(0x0001 | 0x0040, xfb=False)  # VERTEX_ATTRIB | COMMAND
    assert stages == vk.VK_PIPELINE_STAGE_VERTEX_INPUT_BIT | vk.VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT
    assert access == vk.VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT | vk.VK_ACCESS_INDIRECT_COMMAND_READ_BIT
    stages, access = barrier_masks(0x2000, xfb=False)
    assert access == vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT
    assert stages & vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
    assert not stages & vk.VK_PIPELINE_STAGE_VERTEX_INPUT_BIT
    from mgpipe.runtime.backends.vulkan.errors import VulkanRefused

    with pytest.raises(VulkanRefused, match=r"MemoryBarrier\.Bits.*0x4000: no GL ES barrier"):
        barrier_masks(0x4000, xfb=True)
    with pytest.raises(VulkanRefused, match="TRANSFORM_FEEDBACK_BARRIER_BIT"):
        barrier_masks(0x0800, xfb=False)
    all_stages, _ = barrier_masks(0xFFFFFFFF, xfb=False)  # ALL_BARRIER_BITS without XFB
    assert all_stages & vk.VK_PIPELINE_STAGE_HOST_BIT


def _xfb_span(c, buf, offset, draws):
    from mgpipe.runtime.harness.scenes import compute as scenes
    from mgpipe.runtime.harness.scenes.kit import setup

    setup(c, scenes._xfb_vertices(), "xfb")
    xfb = c.create_transform_feedback()
    c.bind_transform_feedback(xfb)
    c.bind_buffer_range("transform_feedback", 0, buf, offset, buf.size - offset)
    c.viewport(0, 0, 64, 48)
    c.begin_transform_feedback(scenes.GL_TRIANGLES)
    for first in draws:
        c.draw_arrays(scenes.GL_TRIANGLES, first, 3)
    got = c.end_transform_feedback()
    c.read_pixels(0, 0, 1, 1)  # every record applied
    return scenes, got


def test_a_capture_into_a_range_appends_its_draws_from_the_range_start():
    """Triangles 1 then 0 captured into a range at byte 32 of a sentinel buffer: words 0..7
    keep the sentinel, then triangle 1's 24 words, then triangle 0's (the counter resumes
    relative to the range), then the sentinel again."""
    with vk_client() as (c, be):
        words = 8 + 48 + 8
        buf = c.create_buffer(struct.pack(f"<{words}I", *[FILL] * words))
        scenes, got = _xfb_span(c, buf, 32, (3, 0))
        assert got == (6, 2)
        be.r.finish()
        out = struct.unpack(f"<{words}I", backend_of(be, VkBufferResource, words * 4).gpu.read())
        want = [FILL] * 8
        for t in (1, 0):
            for x, y, col in scenes.XFB_TRIS[t]:
                want += scenes.xfb_record(x, y, col)
        want += [FILL] * 8
        assert list(out) == want
        assert be.stream_output_stats()["primitives_written"] == 2


BYTES = """#version 310 es
layout(local_size_x = 1) in;
layout(std430, binding = 1) buffer Out { uint v[]; } o;
void main() { o.v[0] = 0x00020100u; }
"""


def _draw_compute_written_indices(tmp_path, name: str, src: str, nbytes: int, draw) -> tuple:
    """A compute shader ``src`` writes indices into a zeroed ``nbytes`` buffer, which then
    indexes the red lower-left triangle through ``draw(c, idx)``; returns the pixel at
    (8, 8) -- inside the triangle."""
    from mgpipe.runtime.harness.scenes.kit import setup

    spirv, refl = compute_program(tmp_path, name, src)
    with vk_client() as (c, be):
        tri = [-1, -1, 0, 1, 0, 0, 1, 1, -1, 0, 1, 0, 0, 1, -1, 1, 0, 1, 0, 0, 1]
        idx = c.create_buffer(bytes(nbytes))
        c.bind_buffer_base("storage", 1, idx)
        c.use_program(c.create_program(spirv, refl))
        c.dispatch_compute(1)
        c.memory_barrier("element_array")
        setup(c, [float(v) for v in tri])
        c.viewport(0, 0, 64, 48)
        c.bind_index_buffer(idx)
        draw(c, idx)
        return tuple(c.read_pixels(8, 8, 1, 1))


def _indices_from_compute(tmp_path):
    """The 8-bit indices 0, 1, 2 (widened on the host), drawn with draw_elements."""
    return _draw_compute_written_indices(tmp_path, "bytes", BYTES, 4,
                                         lambda c, idx: c.draw_elements(0x0004, 3, 1))


def test_indices_a_shader_wrote_are_read_after_its_submission(tmp_path):
    assert _indices_from_compute(tmp_path) == (255, 0, 0, 255)


def test_negative_control_reading_them_before_the_submission_draws_nothing(tmp_path, monkeypatch):
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend

    monkeypatch.setattr(VulkanBackend, "settle_buffer", lambda self, buf: None)  # the wait
    assert _indices_from_compute(tmp_path) == (0, 0, 0, 0)  # indices 0, 0, 0: degenerate


WORDS16 = """#version 310 es
layout(local_size_x = 1) in;
layout(std430, binding = 1) buffer Out { uint v[]; } o;
void main() { o.v[0] = 0x00010000u; o.v[1] = 0x00000002u; }
"""


def _mirror_indices_from_compute(tmp_path):
    """The 16-bit indices 0, 1, 2, drawn by a span that names the buffer's bytes in the
    server's index mirror (no index byte travels)."""
    mirror = int(_t.constant("kMGHostSpanSegFromServerIndexMirror"))
    flags = int(_t.enum("MGPDrawFlagBit")["kDrawHasUserIndices"])

    def draw(c, idx) -> None:
        c.tr.validate("DrawVbo")
        c.em.emit("DrawVbo", {"Mode": 0x0004, "IndexSize": 2, "InstanceCount": 1,
                              "Flags": flags, "IndexResource": idx.handle, "NumDraws": 1},
                  ([{"Start": 0, "Count": 3, "IndexBias": 0}],
                   [{"Ptr": 0, "Seg": mirror, "Offset": 0, "Size": 6}]))  # fmt: skip

    return _draw_compute_written_indices(tmp_path, "words16", WORDS16, 8, draw)


def test_a_mirror_span_of_indices_a_shader_wrote_is_read_after_its_submission(tmp_path):
    assert _mirror_indices_from_compute(tmp_path) == (255, 0, 0, 255)


def test_negative_control_a_mirror_span_read_before_the_submission_draws_nothing(
    tmp_path, monkeypatch
):
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend

    monkeypatch.setattr(VulkanBackend, "settle_buffer", lambda self, buf: None)  # the wait
    assert _mirror_indices_from_compute(tmp_path) == (0, 0, 0, 0)  # indices 0, 0, 0
