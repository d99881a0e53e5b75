"""The Vulkan backend behind the wire: pipeline counts, the dynamic tail, winding, scissor,
readback orientation and lifetime, every test under the validation layer (any warning or
error it reports fails the test)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from _vk_support import setup_color, vk_client

GL_TRIANGLES = 0x0004
COLOR_DEPTH = 0x4000 | 0x0100


def _counts(be):
    return be.counters.snapshot()


def test_blaze3d_frame_makes_two_pipelines_per_program_layout_and_pass():
    with vk_client() as (c, be):
        _, vb = setup_color(c)
        colors = c.create_buffer(struct.pack("<12f", *(0, 1, 0, 1) * 3))  # tightly packed
        c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
        tex = c.create_texture_2d(64, 48)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        progs = [c.tr.program, c.create_program(*_program())]
        layouts = [  # interleaved colour; a packed colour array (another vertex layout)
            lambda: c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12),
            lambda: c.vertex_attrib_pointer(1, colors, 4, stride=16),
        ]
        for _ in range(2):  # frames
            for target in (None, fb):
                c.bind_framebuffer(target)
                for prog in progs:
                    c.use_program(prog)
                    for layout in layouts:
                        layout()
                        for _ in range(20):  # the toggles
                            c.enable("Blend")
                            c.draw_arrays(GL_TRIANGLES, 0, 3)
                            c.disable("Blend")
                            c.draw_arrays(GL_TRIANGLES, 0, 3)
            c.present()
        # 2 render-state CSOs per (2 programs x 2 vertex layouts x 2 render passes:
        # default RGBA8 + D/S, FBO RGBA8), however many toggles and frames
        combos = 2 * 2 * 2
        assert _counts(be)["pipelines_created"] == 2 * combos
        assert be.r.memo.hits == 2 * combos * 40 - 2 * combos


def _program():
    from _vk_support import color_program

    return color_program()


def test_dynamic_changes_create_no_pipeline_and_issue_one_set_each():
    with vk_client() as (c, be):
        setup_color(c)
        c.enable("ScissorTest")
        c.scissor(0, 0, 64, 48)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        base = _counts(be)
        assert base["pipelines_created"] == 1
        for i in range(1000):
            c.viewport(0, 0, 64 - i % 7, 48)
            c.scissor(0, 0, 64, 48 - i % 5)
            c.state.set_blend_color(i / 1000, 0.0, 0.0, 1.0)
            c.state.set_stencil_func("FrontAndBack", "Always", (i + 1) % 200, 0xFF)
            c.draw_arrays(GL_TRIANGLES, 0, 3)
        after = _counts(be)
        assert after["pipelines_created"] == 1
        sets = {k: after["cmd_set"][k] - base["cmd_set"][k] for k in after["cmd_set"]}
        # one vkCmdSet* per draw whose value moved, none for untouched states (the first
        # viewport and scissor of the loop equal the warm-up draw's)
        assert sets["vkCmdSetBlendConstants"] == sets["vkCmdSetStencilReference"] == 1000
        assert sets["vkCmdSetViewport"] == sets["vkCmdSetScissor"] == 999
        assert sets["vkCmdSetDepthBias"] == sets["vkCmdSetLineWidth"] == 0
        # an unchanged tail issues nothing
        total, gate = after["cmd_set_total"], after["tail_version_hits"]
        for _ in range(10):
            c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _counts(be)["cmd_set_total"] == total
        assert _counts(be)["tail_version_hits"] == gate + 10  # the version gate answered
        c.present()


@pytest.mark.parametrize("whole_block,expected", [(False, 1), (True, 40)])
def test_whole_block_control_mints_one_pipeline_per_distinct_value(whole_block, expected):
    with vk_client(whole_block=whole_block) as (c, be):
        setup_color(c)
        for i in range(40):
            c.viewport(0, 0, 64 - i, 48)
            c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.present()
        assert _counts(be)["pipelines_created"] == expected


def _pixel(c, x, y):
    return tuple(c.read_pixels(x, y, 1, 1))


@pytest.mark.parametrize("front,visible", [("CounterClockwise", True), ("Clockwise", False)])
def test_front_face_decides_what_cull_back_removes(front, visible):
    with vk_client() as (c, be):
        setup_color(c)  # the triangle is counter-clockwise in GL
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.enable("CullFace")
        c.state.set_cull_face_mode("Back")
        c.state.set_front_face_mode(front)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 2, 2) == ((255, 0, 0, 255) if visible else (0, 0, 255, 255))


def test_readback_is_in_gl_orientation():
    with vk_client() as (c, be):
        setup_color(c)  # lower-left half of the surface
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 1, 1) == (255, 0, 0, 255)
        assert _pixel(c, 62, 46) == (0, 0, 255, 255)
        rows = np.frombuffer(c.read_pixels(0, 0, 64, 48), np.uint8).reshape(48, 64, 4)
        assert tuple(rows[0, 0]) == (255, 0, 0, 255)  # row 0 is the bottom
        assert tuple(rows[47, 63]) == (0, 0, 255, 255)
        c.present()


def test_scissor_box_zero_rejects_everything_and_test_off_is_full_surface():
    with vk_client() as (c, be):
        setup_color(c, positions=(-1, -1, 0, 3, -1, 0, -1, 3, 0))  # covers the surface
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.enable("ScissorTest")
        c.scissor(0, 0, 0, 0)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 32, 24) == (0, 0, 255, 255)
        c.scissor(4, 4, 8, 8)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 5, 5) == (255, 0, 0, 255) and _pixel(c, 13, 13) == (0, 0, 255, 255)
        c.disable("ScissorTest")
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 63, 47) == (255, 0, 0, 255)


def test_delete_and_recreate_in_a_tight_loop_under_validation():
    with vk_client() as (c, be):
        setup_color(c)
        c.tr.cso.capacity = 2  # every third distinct state evicts: DeleteRenderState
        funcs = ("One", "SrcAlpha", "DstColor")
        for i in range(30):
            prog = c.create_program(*_program())
            c.use_program(prog)
            c.blend_func(funcs[i % 3], "Zero")
            c.enable("Blend")
            c.draw_arrays(GL_TRIANGLES, 0, 3)
            tmp = c.create_buffer(b"\0" * 64)
            c.delete_buffer(tmp)
            c.delete_program(prog)  # retires its pipelines while the frame is recorded
            # ... so they wait for the frame's fence: nothing in use is destroyed yet
            assert be.r.ring.recording and be.r.ring.pending_deletions > 0
            if i % 5 == 4:
                c.present()
        be.r.finish()
        assert be.r.ring.pending_deletions == 0  # every fence signalled: all retired
        snap = _counts(be)
        assert snap["pipelines_retired"] >= 30
        assert snap["deferred_destroyed"] >= 30
        assert c.tr.cso.stats.evictions > 0


@pytest.mark.parametrize("transport", ["monolith", "inproc"])
def test_transports_render_the_same_frame(transport):
    with vk_client(transport) as (c, be):
        setup_color(c)
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.present()
        # present credit 1: the Present may still be applying on the apply thread; the
        # snapshot reads the device from this thread, so everything is applied first
        c.transport.wait_applied()
        img = be.snapshot()
        assert tuple(img[0, 0]) == (255, 0, 0, 255) and tuple(img[47, 63]) == (0, 0, 255, 255)


def test_clears_honour_scissor_and_colour_mask():
    with vk_client() as (c, be):
        setup_color(c)
        c.clear_color(0.2, 0.4, 0.6, 1.0)
        c.clear(COLOR_DEPTH)  # full surface, nothing before it: the pass's load op
        c.enable("ScissorTest")
        c.scissor(16, 16, 8, 8)
        c.clear_color(1, 0, 0, 1)
        c.clear()  # scissored: vkCmdClearAttachments over the box
        c.scissor(0, 0, 8, 8)
        c.state.set_color_mask(True, False, False, True)
        c.clear_color(0, 1, 1, 1)
        c.clear()  # masked: the baked clear shader with write mask R|A
        c.state.set_color_mask(True, True, True, True)
        c.disable("ScissorTest")
        bg = (51, 102, 153, 255)
        assert _pixel(c, 40, 40) == bg
        assert _pixel(c, 20, 20) == (255, 0, 0, 255)
        assert _pixel(c, 4, 4) == (0, 102, 153, 255)
        c.present()


def test_baked_internal_shaders_are_fresh(tmp_path):
    from mgpipe.runtime.backends.vulkan import internal_shaders

    for path in internal_shaders.bake(tmp_path):
        assert path.read_bytes() == (internal_shaders.BAKED / path.name).read_bytes(), path.name


def test_a_respecified_render_texture_gets_a_new_framebuffer():
    with vk_client() as (c, be):
        setup_color(c)
        tex = c.create_texture_2d(64, 48)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.clear_color(0, 1, 0, 1)
        c.clear()
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 1, 1) == (255, 0, 0, 255)
        # new storage for the attached texture (glTexImage2D again) while the FBO stays
        # bound: the framebuffer state is not re-sent, the old image retires in flight
        c.em.emit(
            "ResourceRespecify",
            {
                "Resource": tex.handle,
                "Target": c._target(tex.target),
                "StorageKind": 0,
                "InternalFormat": 0x8058,
                "Width": 64,
                "Height": 48,
                "Depth": 1,
                "ArrayLayers": 1,
                "Levels": 1,
            },
        )
        c.clear_color(0, 0, 1, 1)
        c.clear()
        assert _pixel(c, 1, 1) == (0, 0, 255, 255)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 1, 1) == (255, 0, 0, 255) and _pixel(c, 62, 46) == (0, 0, 255, 255)
        c.present()


def test_a_per_level_respecify_keeps_the_image_and_no_extent_makes_none():
    with vk_client() as (c, be):
        setup_color(c)
        tex = c.create_texture_2d(64, 48)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.clear_color(0, 1, 0, 1)
        c.clear()
        assert _pixel(c, 1, 1) == (0, 255, 0, 255)
        desc = {"Resource": tex.handle, "Target": c._target(tex.target), "StorageKind": 0,
                "InternalFormat": 0x8058, "Width": 64, "Height": 48, "Depth": 1,
                "ArrayLayers": 1, "Levels": 1}  # fmt: skip
        # glTexImage2D of level 0 with the same description (MGPResourceDesc's level scope):
        # the image stays, and so do its texels and the framebuffer made for it
        c.em.emit("ResourceRespecify", dict(desc, HasRespecifiedLevel=1, RespecifiedLevel=0))
        assert _pixel(c, 1, 1) == (0, 255, 0, 255)
        # a description with no extent yet (storage undefined), then the storage
        c.em.emit("ResourceRespecify", dict(desc, Width=0, Height=0))
        c.em.emit("ResourceRespecify", desc)  # whole: a new image
        c.clear_color(0, 0, 1, 1)
        c.clear()
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 1, 1) == (255, 0, 0, 255) and _pixel(c, 62, 46) == (0, 0, 255, 255)
        c.present()


def test_a_reissued_shader_state_retires_the_old_programs_pipelines():
    with vk_client() as (c, be):
        prog, _ = setup_color(c)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _counts(be)["pipelines_created"] == 1
        spirv, refl = _program()
        off, size, seg = c.em.stage_bytes(spirv[0])
        stages = [{} for _ in range(6)]
        stages[0] = {"Offset": off, "Size": size, "Seg": seg}
        off, size, seg = c.em.stage_bytes(spirv[4])
        stages[4] = {"Offset": off, "Size": size, "Seg": seg}
        off, size, seg = c.em.stage_bytes(refl)
        c.em.emit(
            "CreateShaderState",
            {  # the same handle, linked again
                "Cso": prog.handle,
                "StageMask": 0b10001,
                "SpirvStatus": 1,
                "LinkStatus": 1,
                "Spirv": stages,
                "Reflection": {"Offset": off, "Size": size, "Seg": seg},
            },
        )
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        snap = _counts(be)
        assert snap["pipelines_created"] == 2 and snap["pipelines_retired"] == 1
        c.present()


def test_read_pixels_honours_the_pack_alignment():
    with vk_client() as (c, be):
        setup_color(c)
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.pixel_store(True, "Alignment", 8)
        # rows 46 and 47 at the triangle's top: red at x = 0 only in row 47, x <= 1 in row 46
        raw = c.read_pixels(0, 46, 3, 2)  # 12-byte rows padded to 16
        assert len(raw) >= 16 + 12
        red, blue = (255, 0, 0, 255), (0, 0, 255, 255)
        assert [tuple(raw[i : i + 4]) for i in (0, 4, 8)] == [red, red, blue]
        assert [tuple(raw[i : i + 4]) for i in (16, 20, 24)] == [red, blue, blue]
        c.present()


def _clear_buffer(c, kind, fbo=None, index=0, rgba=(0.0, 0.0, 0.0, 0.0), depth=0.0, stencil=0,
                  value_class="kMGPipeClearValueClassFloat"):  # fmt: skip
    """glClearBuffer* as the record MobileGL's client emits (MGPClear's kinds by name)."""
    from mgpipe.runtime.schema import tables as _t
    from mgpipe.runtime.wire.handle import default_framebuffer

    c.tr.validate("Clear")  # the pushed state (scissor, masks, framebuffer) as glClear's
    c.em.emit("Clear", {
        "Fbo": fbo.handle if fbo else default_framebuffer(), "Kind": _t.constant(kind),
        "DrawBufferIndex": index, "ValueClass": _t.constant(value_class),
        "ColorValue": list(struct.unpack("<4I", struct.pack("<4f", *rgba))),
        "DepthValue": depth, "StencilValue": stencil})  # fmt: skip


def test_clear_buffer_depth_forms():
    with vk_client() as (c, be):
        setup_color(c)  # z = 0: in front of a depth of 1, behind one of 0
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.enable("DepthTest")
        _clear_buffer(c, "kMGPipeClearKindDepth", depth=0.0)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 2, 2) == (0, 0, 255, 255)  # the depth test rejected it
        _clear_buffer(c, "kMGPipeClearKindDepthStencil", depth=1.0)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 2, 2) == (255, 0, 0, 255)
        c.present()


def test_clear_buffer_colour_clears_one_draw_buffer_with_scissor_and_mask():
    with vk_client() as (c, be):
        setup_color(c)
        texs = [c.create_texture_2d(64, 48) for _ in range(2)]
        fb = c.create_framebuffer()
        for i, tex in enumerate(texs):
            c.framebuffer_texture(fb, i, tex)
        c.bind_framebuffer(fb)
        c.clear_color(0, 0, 1, 1)
        c.clear()  # both attachments blue
        _clear_buffer(c, "kMGPipeClearKindColor", fb, index=1, rgba=(1, 0, 0, 1))
        c.enable("ScissorTest")
        c.scissor(0, 0, 8, 8)
        _clear_buffer(c, "kMGPipeClearKindColor", fb, index=0, rgba=(0, 1, 0, 1))
        c.state.set_color_mask(False, False, True, True)
        _clear_buffer(c, "kMGPipeClearKindColor", fb, index=1, rgba=(0, 1, 1, 0.5))
        c.state.set_color_mask(True, True, True, True)
        c.disable("ScissorTest")
        _clear_buffer(
            c, "kMGPipeClearKindColor", fb, index=5, rgba=(1, 1, 1, 1)
        )  # GL_NONE: nothing
        blue, red, green = (0, 0, 255, 255), (255, 0, 0, 255), (0, 255, 0, 255)
        assert (_pixel(c, 4, 4), _pixel(c, 20, 20)) == (green, blue)  # draw buffer 0
        c.read_buffer(fb, 1)
        assert (_pixel(c, 4, 4), _pixel(c, 20, 20)) == ((255, 0, 255, 128), red)  # draw buffer 1
        c.present()


def test_clear_buffer_integer_values_on_a_normalized_attachment_are_refused_by_name():
    from types import SimpleNamespace

    from mgpipe.runtime.backends.vulkan.errors import VulkanRefused
    from mgpipe.runtime.schema import tables as _t

    with vk_client() as (c, be):
        setup_color(c)
        ints = SimpleNamespace(payload=SimpleNamespace(
            Kind=_t.constant("kMGPipeClearKindColor"), DrawBufferIndex=0,
            ValueClass=_t.constant("kMGPipeClearValueClassInt")))  # fmt: skip
        with pytest.raises(
            VulkanRefused,
            match=r'"Clear.ValueClass"\}: Int values for colour attachment 0, a RGBA8',
        ):
            be.Clear(None, ints)


def test_a_generic_attribute_value_feeds_a_disabled_array():
    from mgpipe.runtime.schema import tables as _t

    with vk_client() as (c, be):
        setup_color(c)
        c.clear_color(0, 0, 1, 1)
        c.clear(COLOR_DEPTH)
        c.disable_vertex_attrib(1)  # the colour input: no array feeds it
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 2, 2) == (0, 0, 0, 255)  # never written: GL's (0, 0, 0, 1)
        green = list(struct.unpack("<4I", struct.pack("<4f", 0, 1, 0, 1)))
        c.em.emit("SetVertexAttribDefaults", {"Mask": 1 << 1, "Count": 1}, ([{
            "Location": 1, "ValueClass": _t.constant("kMGPipeAttribValueClassFloat"),
            "FloatView": green}],))  # fmt: skip
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        assert _pixel(c, 2, 2) == (0, 255, 0, 255)
        c.present()


# -- issue 17: shader resources, formats, targets, MSAA, clears, indices, lifetime -------------
def _tex_program(c, name="tex"):
    """A program from the harness shaders (position vec3 + texture coordinate vec3)."""
    from mgpipe.runtime.harness.shaders.programs import load

    prog = load(name)
    p = c.create_program(prog.spirv, prog.reflection)
    c.use_program(p)
    return p


def _tex_quad(c, uvw=((0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0))):
    """A full-surface quad (two triangles), a texture coordinate per corner."""
    corners = ((-1, -1), (1, -1), (-1, 1), (1, 1))
    order = (0, 1, 2, 2, 1, 3)
    data = b"".join(struct.pack("<6f", *corners[i], 0.0, *uvw[i]) for i in order)
    vb = c.create_buffer(data)
    c.vertex_attrib_pointer(0, vb, 3, stride=24)
    c.vertex_attrib_pointer(1, vb, 3, stride=24, offset=12)
    c.viewport(0, 0, c.tr.width, c.tr.height)
    return vb


#: a 2x2 RGBA8 texture, GL rows bottom-up: (0,0) red, (1,0) green, (0,1) blue, (1,1) white
TEXELS_2X2 = bytes([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255])


def test_a_sampled_2d_texture_reads_each_texel_where_gl_puts_it():
    """Nearest sampling of a 2x2 texture over the 64x48 surface: each quadrant is the texel
    whose (s, t) cell it covers (t = 0 is the texture's first row, GL's bottom)."""
    with vk_client() as (c, be):
        _tex_program(c)
        _tex_quad(c)
        tex = c.create_texture_2d(2, 2)
        c.tex_sub_image_2d(tex, 0, 0, 0, 2, 2, TEXELS_2X2)
        nearest = c.create_sampler(minFilter="Nearest", magFilter="Nearest", mipmapMode="None")
        c.bind_texture(0, tex)
        c.bind_sampler(0, nearest)
        c.draw_arrays(GL_TRIANGLES, 0, 6)
        got = [_pixel(c, x, y) for x, y in ((8, 8), (56, 8), (8, 40), (56, 40))]
        assert got == [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 255, 255)]
        c.present()


def test_descriptor_sets_are_memoised_on_the_bindings_not_rebuilt_per_draw():
    with vk_client() as (c, be):
        _tex_program(c)
        _tex_quad(c)
        a, b = c.create_texture_2d(2, 2), c.create_texture_2d(2, 2)
        c.tex_sub_image_2d(a, 0, 0, 0, 2, 2, TEXELS_2X2)
        c.tex_sub_image_2d(b, 0, 0, 0, 2, 2, bytes(TEXELS_2X2[4:8]) * 4)  # all green
        c.bind_texture(0, a)
        c.draw_arrays(GL_TRIANGLES, 0, 6)
        before = (be.descriptors.updates, be.descriptors.allocated)
        for _ in range(5):  # the same bindings: no update, no new set
            c.draw_arrays(GL_TRIANGLES, 0, 6)
        assert (be.descriptors.updates, be.descriptors.allocated) == before
        c.bind_texture(0, b)  # one binding changed: one new set, one update
        c.draw_arrays(GL_TRIANGLES, 0, 6)
        assert (be.descriptors.updates, be.descriptors.allocated) == (before[0] + 1, before[1] + 1)
        assert _pixel(c, 8, 8) == (0, 255, 0, 255)
        c.present()


def _white_quad(c, prog):
    """``prog`` (a harness program: position vec3 + colour vec4) in use over a full-surface
    white quad (two triangles), the viewport the surface; returns the program."""
    p = c.create_program(prog.spirv, prog.reflection)
    c.use_program(p)
    corners = ((-1, -1), (1, -1), (-1, 1), (1, 1))
    data = b"".join(struct.pack("<7f", *corners[i], 0.0, 1, 1, 1, 1) for i in (0, 1, 2, 2, 1, 3))
    vb = c.create_buffer(data)
    c.vertex_attrib_pointer(0, vb, 3, stride=28)
    c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
    c.viewport(0, 0, c.tr.width, c.tr.height)
    return p


def test_default_block_uniforms_feed_each_draw_its_own_version():
    """Two draws of the ``umat`` program, each with its own matrix and tint: the uniform
    ring holds both versions (one write each) and each quad shows its tint."""
    from mgpipe.runtime.harness.shaders.programs import load

    with vk_client(width=64, height=64) as (c, be):
        p = _white_quad(c, load("umat"))
        c.clear_color(0, 0, 0, 1)
        c.clear()
        writes = be.uniforms.writes
        for (tx, ty), tint in (
            ((-0.5, -0.5), (1.0, 0.0, 0.0, 1.0)),
            ((0.5, 0.5), (0.0, 0.0, 1.0, 1.0)),
        ):
            m = [0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0, tx, ty, 0, 1]  # column major
            c.uniform_matrix(p, "u_mvp", m)
            c.uniform(p, "u_tint", *tint)
            c.draw_arrays(GL_TRIANGLES, 0, 6)
        assert be.uniforms.writes - writes == 2
        # scale 0.5 about the origin then translate: quads centred at (+-0.5, +-0.5) NDC
        assert _pixel(c, 16, 16) == (255, 0, 0, 255) and _pixel(c, 48, 48) == (0, 0, 255, 255)
        assert _pixel(c, 16, 48) == (0, 0, 0, 255)
        c.present()


def test_a_uniform_block_reads_the_buffer_bound_at_its_binding_point():
    """The ``ubo`` program's ``Scene`` block at binding point 0 (SetShaderBuffers): what
    the shader reads is the bound range's bytes."""
    import json

    from mgpipe.runtime.harness.shaders.programs import load

    prog = load("ubo")
    refl = json.loads(prog.reflection)
    size = refl["uniforms"][0]["block_size"]
    with vk_client() as (c, be):
        _white_quad(c, prog)
        ubo = c.create_buffer(bytes(size))
        c.bind_buffer_base("uniform", 0, ubo)
        c.draw_arrays(GL_TRIANGLES, 0, 6)
        c.present()
    assert "Scene" in (u["name"] for u in refl["uniforms"])


def test_an_r8_render_target_reads_back_as_gl_expands_it():
    """glReadPixels(RGBA, UNSIGNED_BYTE) of an R8 buffer: (R, 0, 0, 255), one texel byte
    per pixel in the image (the format table's texel size, not 4)."""
    R8 = 0x8229
    with vk_client() as (c, be):
        setup_color(c)
        tex = c.create_texture_2d(8, 8, internal_format=R8)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.clear_color(0.6, 1.0, 1.0, 1.0)
        c.clear()
        assert _pixel(c, 3, 3) == (153, 0, 0, 255)  # round(0.6 * 255) = 153
        c.present()


def test_an_unknown_internal_format_is_refused_by_name():
    from mgpipe.runtime.backends.vulkan.vk_enums import UnsupportedEnum

    with vk_client() as (c, be):
        setup_color(c)
        with pytest.raises(UnsupportedEnum, match=r'"ResourceRespecify.InternalFormat"\}: 0x1234 is no '
                           "internal format this backend stores"):  # fmt: skip
            c.create_texture_2d(4, 4, internal_format=0x1234)


def test_the_format_table_gives_each_format_its_texel_size():
    from mgpipe.runtime.backends.vulkan.formats import GL_FORMATS

    sizes = {f.name: f.texel for f in GL_FORMATS.values()}
    # bits per texel / 8, from each format's definition
    assert sizes["R8"] == 1 and sizes["RG8"] == 2 and sizes["RGBA8"] == 4
    assert sizes["RGB10_A2"] == (10 * 3 + 2) // 8 and sizes["R11F_G11F_B10F"] == (11 + 11 + 10) // 8
    assert sizes["RGBA16F"] == 4 * 16 // 8 and sizes["RGBA32F"] == 4 * 32 // 8
    assert sizes["R32UI"] == 4 and sizes["DEPTH_COMPONENT16"] == 2


def _aspect_mismatches() -> list[str]:
    from mgpipe.runtime.backends.vulkan.formats import ASPECT_BITS, GL_FORMATS, storage_formats
    from mgpipe.runtime.backends.vulkan.memory import aspect_of

    return [f"{f.name} as {fmt}" for f in GL_FORMATS.values() for fmt in storage_formats(f)
            if aspect_of(fmt) != ASPECT_BITS[f.aspect]]  # fmt: skip


def test_every_stored_format_makes_an_image_of_the_aspects_its_row_names():
    """DEPTH_COMPONENT24's X8_D24 image addressed with the colour aspect killed lavapipe's
    process at its first copy: every format (and stand-in) of the table has its aspects."""
    assert _aspect_mismatches() == []


def test_negative_control_a_depth_format_missing_from_the_aspect_table_is_found_and_refused(
    monkeypatch,
):
    import vulkan as vk

    from mgpipe.runtime.backends.vulkan import memory
    from mgpipe.runtime.backends.vulkan.vk_enums import UnsupportedEnum

    planted = dict(memory.DEPTH_STENCIL_FORMATS)
    del planted[vk.VK_FORMAT_X8_D24_UNORM_PACK32]
    monkeypatch.setattr(memory, "DEPTH_STENCIL_FORMATS", planted)
    assert _aspect_mismatches() == [f"DEPTH_COMPONENT24 as {vk.VK_FORMAT_X8_D24_UNORM_PACK32}"]
    with vk_client() as (c, be):  # the record is refused by name, the process lives
        setup_color(c)
        with pytest.raises(UnsupportedEnum, match=r'"ResourceRespecify.InternalFormat"\}: '
                           r"DEPTH_COMPONENT24: Vulkan format \d+ has aspects 0x1, expected depth"):  # fmt: skip
            c.create_texture_2d(2, 1, internal_format=0x81A6)


def test_an_integer_clear_buffer_on_an_integer_attachment_reads_back_its_values():
    RGBA8UI, RGBA_INTEGER, UNSIGNED_INT = 0x8D7C, 0x8D99, 0x1405
    with vk_client() as (c, be):
        setup_color(c)
        tex = c.create_texture_2d(8, 8, internal_format=RGBA8UI)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.clear_buffer("color", 0, (10, 20, 30, 40), value_class="uint")
        raw = c.read_pixels(2, 2, 1, 1, RGBA_INTEGER, UNSIGNED_INT)  # 16 bytes: from the pair
        assert struct.unpack("<4I", raw) == (10, 20, 30, 40)
        c.present()


def test_generate_mipmap_averages_each_level_from_the_one_above():
    """A 2x2 level 0 (red, green, blue, white) -> level 1 is the mean of the four texels:
    (255 + 0 + 0 + 255) / 4 = 127.5 per channel R, G, B -> 127 or 128; sampled at lod 1."""
    with vk_client() as (c, be):
        _tex_program(c, "texlod")
        _tex_quad(c, uvw=((0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 1)))  # r = the lod
        tex = c.create_texture_2d(2, 2, levels=2)
        c.tex_sub_image_2d(tex, 0, 0, 0, 2, 2, TEXELS_2X2)
        c.generate_mipmap(tex)
        c.bind_texture(0, tex)
        c.draw_arrays(GL_TRIANGLES, 0, 6)
        r, g, b, a = _pixel(c, 30, 20)
        assert all(abs(v - 127.5) <= 1 for v in (r, g, b)) and a == 255
        c.present()


def test_u8_indices_are_widened_once_per_content_and_draw():
    with vk_client() as (c, be):
        setup_color(c, (0, 1, 0, 1), positions=(-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0))
        ib = c.create_buffer(bytes([0, 1, 2, 2, 1, 3]))
        c.bind_index_buffer(ib)
        c.draw_elements(GL_TRIANGLES, 6, 1)
        c.draw_elements(GL_TRIANGLES, 6, 1)
        assert be.widened_index_buffers == 1  # the same bytes: one 16-bit copy
        assert _pixel(c, 60, 44) == (0, 255, 0, 255) and _pixel(c, 2, 2) == (0, 255, 0, 255)
        c.present()


def test_base_vertex_and_base_instance_reach_the_draw():
    """Vertices 0-2 cover the lower-left corner in red, 3-5 the upper-right in blue: the
    same indices with base vertex 3 draw the blue triangle only."""
    with vk_client() as (c, be):
        red = (-1, -1, 0, 0, -1, 0, -1, 0, 0)
        blue = (1, 1, 0, 0, 1, 0, 1, 0, 0)
        from _vk_support import vertices

        spirv, refl = __import__("_vk_support").color_program()
        prog = c.create_program(spirv, refl)
        c.use_program(prog)
        vb = c.create_buffer(vertices(red, (1, 0, 0, 1)) + vertices(blue, (0, 0, 1, 1)))
        c.vertex_attrib_pointer(0, vb, 3, stride=28)
        c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
        c.viewport(0, 0, 64, 48)
        ib = c.create_buffer(struct.pack("<3H", 0, 1, 2))
        c.bind_index_buffer(ib)
        c.clear_color(0, 0, 0, 1)
        c.clear()
        c.draw_elements(GL_TRIANGLES, 3, 2, base_vertex=3, base_instance=1)
        assert _pixel(c, 2, 2) == (0, 0, 0, 255) and _pixel(c, 61, 45) == (0, 0, 255, 255)
        c.present()


def test_an_msaa_renderbuffer_resolves_by_blit():
    """A 4x renderbuffer cleared blue and resolved into a texture: every pixel blue."""
    with vk_client() as (c, be):
        setup_color(c)
        ms = c.create_renderbuffer(16, 16, 0x8058, samples=4)
        ms_fb = c.create_framebuffer()
        c.framebuffer_texture(ms_fb, 0, ms)
        tex = c.create_texture_2d(16, 16)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(ms_fb)
        c.clear_color(0, 0, 1, 1)
        c.clear()
        c.bind_framebuffer(ms_fb, target="read")
        c.bind_framebuffer(fb, target="draw")
        c.blit_framebuffer(0, 0, 16, 16, 0, 0, 16, 16)
        assert be.resolves == 1
        c.bind_framebuffer(fb)
        assert _pixel(c, 5, 5) == (0, 0, 255, 255)
        c.present()
        from types import SimpleNamespace

        from mgpipe.runtime.backends.vulkan.errors import VulkanRefused

        ms_h = next(h for h, t in be._fbs.items() if t is not None and t.key().samples == 4)
        fb_h = next(h for h, t in be._fbs.items() if t is not None and t.key().samples == 1)
        scaled = SimpleNamespace(payload=SimpleNamespace(
            ReadFbo=ms_h, DrawFbo=fb_h, SrcX0=0, SrcY0=0, SrcX1=16, SrcY1=16, DstX0=0, DstY0=0,
            DstX1=8, DstY1=8, Mask=0x4000, Filter=0x2600))  # fmt: skip
        with pytest.raises(
            VulkanRefused, match=r'"Blit.SrcX0"\}: a multisampled resolve between different'
        ):
            be.Blit(None, scaled)  # GL: INVALID_OPERATION, never a scaled picture


def test_object_death_of_a_framebuffer_frees_its_render_targets():
    with vk_client() as (c, be):
        setup_color(c)
        tex = c.create_texture_2d(8, 8)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.clear()
        assert len(be._targets) == 1
        c.bind_framebuffer(None)
        c.delete_framebuffer(fb)
        c.clear()  # the next validate carries the death
        assert not be._targets
        c.present()


def test_a_rendered_texture_samples_the_right_way_up_and_renders_again():
    """A texture drawn into (its rows top-down, the render orientation) and then sampled:
    the backend flips it to GL's row order first, so its bottom half (cleared red through
    a scissor) is sampled at t < 0.5; drawn into again, it is flipped back."""
    with vk_client() as (c, be):
        setup_color(c)
        tex = c.create_texture_2d(4, 4)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.viewport(0, 0, 4, 4)
        c.clear_color(0, 0, 1, 1)
        c.clear()
        c.enable("ScissorTest")
        c.scissor(0, 0, 4, 2)  # GL rows 0-1: the bottom half
        c.clear_color(1, 0, 0, 1)
        c.clear()
        c.disable("ScissorTest")
        c.bind_framebuffer(None)
        _tex_program(c)
        _tex_quad(c)
        nearest = c.create_sampler(minFilter="Nearest", magFilter="Nearest", mipmapMode="None")
        c.bind_texture(0, tex)
        c.bind_sampler(0, nearest)
        c.draw_arrays(GL_TRIANGLES, 0, 6)
        assert _pixel(c, 30, 4) == (255, 0, 0, 255) and _pixel(c, 30, 44) == (0, 0, 255, 255)
        c.bind_texture(0, None)
        c.bind_framebuffer(fb)
        assert _pixel(c, 1, 0) == (255, 0, 0, 255) and _pixel(c, 1, 3) == (0, 0, 255, 255)
        c.present()


def test_a_line_loop_closes_back_to_its_first_vertex():
    """GL_LINE_LOOP over three corners of a square, drawn as a strip that repeats vertex
    0: the closing edge (vertex 2 -> vertex 0, the left side) is lit too."""
    GL_LINE_LOOP = 0x0002
    with vk_client(width=32, height=32) as (c, be):
        inset = 1 - 1 / 32  # pixel centres of the first / last column and row
        setup_color(c, (1, 1, 1, 1), positions=(-inset, -inset, 0, inset, -inset, 0,
                                                 -inset, inset, 0))  # fmt: skip
        c.clear_color(0, 0, 0, 1)
        c.clear()
        c.draw_arrays(GL_LINE_LOOP, 0, 3)
        assert be.line_loops == 1
        assert _pixel(c, 0, 16) == (255, 255, 255, 255)  # the closing edge, x = pixel 0
        assert _pixel(c, 16, 0) == (255, 255, 255, 255)  # the first edge, y = pixel 0
        assert _pixel(c, 20, 28) == (0, 0, 0, 255)  # away from every edge
        c.present()


def test_backends_borrowing_one_device_leave_it_open_and_draw_alike():
    """``VulkanBackend(dev=...)``: each backend destroys what it made and leaves the borrowed
    device open for the next (the backend fuzzer's children run that way); control: a
    backend that owns its device closes it."""
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.backends.vulkan.device import VulkanDevice
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.harness.scenes import SCENES
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    dev = VulkanDevice()
    try:
        pictures = []
        for _ in range(2):
            be = VulkanBackend(width=64, height=48, dev=dev)
            stage = StageSegment(4 << 20)
            applier = Applier(be, stage)
            c = Client(applier.apply, stage, transport="monolith", width=64, height=48,
                       reverse=applier.apply.reverse)  # fmt: skip
            SCENES["blend-toggle"].run(c, 2)
            pictures.append(bytes(c.read_pixels(0, 0, 64, 48)))
            c.present()
            be.close()
            assert dev.device is not None  # still open
        assert pictures[0] == pictures[1] and any(pictures[0])  # the scene drew
        assert dev.take_messages() == []
    finally:
        dev.close()
    own = VulkanBackend(width=64, height=48)
    own.close()
    assert own.r.dev.device is None


_POINT_VERT = """#version 310 es
layout(location = 0) in vec3 pos;
layout(location = 1) in vec4 color;
layout(location = 0) out vec4 v_color;
void main() { gl_Position = vec4(pos, 1.0); v_color = color;%s }
"""


def _point_program(tmp_path, sized: bool):
    from mgpipe.runtime.harness.shaders import programs

    vert = tmp_path / ("sized.vert" if sized else "plain.vert")
    vert.write_text(_POINT_VERT % (" gl_PointSize = 4.0;" if sized else ""))
    vspv = tmp_path / f"{vert.name}.spv"
    programs.compile_source(vert, vspv)
    fspv = programs.HERE / "color.frag.spv"
    spirv = {0: vspv.read_bytes(), 4: fspv.read_bytes()}
    return spirv, programs.reflection_record({"vert": vspv, "frag": fspv})


@pytest.mark.parametrize("sized", [True, False])
def test_points_need_a_vertex_stage_that_writes_their_size(tmp_path, sized):
    """GL_POINTS: a vertex stage that stores gl_PointSize draws a 4 x 4 point at the
    centre; one that never stores it is refused by name at the draw (GL ES leaves that
    size undefined; a Vulkan point pipeline without it breaks VUID-...-Vertex-07722)."""
    from mgpipe.runtime.backends.limits import spirv_writes_point_size
    from mgpipe.runtime.errors import PipeFatal

    spirv, refl = _point_program(tmp_path, sized)
    assert spirv_writes_point_size(spirv[0]) is sized  # declared in gl_PerVertex either way
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = VulkanBackend(width=64, height=48)
    stage = StageSegment(4 << 20)
    c = Client(Applier(be, stage).apply, stage, transport="monolith", width=64, height=48)
    try:
        vb = c.create_buffer(struct.pack("<7f", 0, 0, 0, 1, 0, 0, 1))
        c.use_program(c.create_program(spirv, refl))
        c.vertex_attrib_pointer(0, vb, 3, stride=28, offset=0)
        c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
        c.viewport(0, 0, 64, 48)
        if not sized:
            with pytest.raises(PipeFatal, match=r'"DrawVbo\.Mode"\}: GL_POINTS with a vertex '
                               "stage that writes no gl_PointSize"):  # fmt: skip
                c.draw_arrays(0x0000, 0, 1)
                c.read_pixels(0, 0, 1, 1)
        else:
            c.draw_arrays(0x0000, 0, 1)
            px = bytes(c.read_pixels(30, 22, 4, 4))
            assert px == bytes((255, 0, 0, 255)) * 16  # the 4 x 4 point covers its pixels
            assert bytes(c.read_pixels(24, 16, 1, 1)) == bytes(4)  # and no more
    finally:
        dev = be.dev
        be.close()
        assert dev.take_messages() == []  # no VUID either way


@pytest.mark.parametrize("stride, offset, reason", [
    (28, 0, None),  # control: aligned, drawn
    (28, 135, "DrawVbo.VertexBuffers"),  # the pointer's offset: the binding's offset
    (30, 0, "CreateVertexElements.MGPVertexAttribWire"),  # stride inside a float
])  # fmt: skip
def test_vertex_data_off_its_component_alignment_is_refused_by_name(stride, offset, reason):
    """GL ES 3.0 §2.9 puts a datum of N basic machine units at a multiple of N; a Vulkan
    draw that fetches off it breaks VUID-vkCmdDraw-None-02721 (the backend fuzzer's
    mutated vertex elements found it): refused by name before the driver sees it."""
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.harness.shaders.programs import load
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = VulkanBackend(width=64, height=48)
    stage = StageSegment(4 << 20)
    c = Client(Applier(be, stage).apply, stage, transport="monolith", width=64, height=48)
    try:
        vb = c.create_buffer(bytes(512))
        prog = load("color")
        c.use_program(c.create_program(prog.spirv, prog.reflection))
        c.vertex_attrib_pointer(0, vb, 3, stride=stride, offset=offset)
        c.vertex_attrib_pointer(1, vb, 4, stride=stride, offset=12 + offset)
        if reason is None:
            c.draw_arrays(0x0004, 0, 3)
            c.read_pixels(0, 0, 1, 1)
        else:
            what = (f"binding 0's buffer offset {offset}" if "Draw" in reason
                    else f"attribute 0: offset {offset} / stride {stride}")
            with pytest.raises(PipeFatal, match=rf'"{reason}"\}}: {what} is not a multiple of '
                               "its 4-byte components"):  # fmt: skip
                c.draw_arrays(0x0004, 0, 3)
                c.read_pixels(0, 0, 1, 1)
    finally:
        dev = be.dev
        be.close()
        assert dev.take_messages() == []
