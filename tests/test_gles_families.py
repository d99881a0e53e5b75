"""Issue 17's families on the GLES backend, each with probes from first principles.

The render scenes (runtime/harness/scenes/render.py) compute every probe by hand (the texel
decoded from the uploaded bytes, the wrap rule, the sRGB transfer, the matrix applied by
hand); here each family's scene must DRAW on gles (not be refused). Beside them, the
families' edges are checked directly: glClearBuffer value classes, base vertex, the index
buffer offset, and the named refusals of what GLES cannot express.
"""

from __future__ import annotations

import struct

import pytest

from _gles import gles_client
from mgpipe.runtime.backends.gles.errors import DriverRefused
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import SCENES
from mgpipe.runtime.harness.scenes.kit import GL, quad, setup

#: family -> the scenes that show it
FAMILIES = {
    "uniforms (default block + UBO)": ("uniform-matrix", "ubo-array"),
    "2D textures + samplers": ("tex-rgba8", "sampler-wrap", "sampler-filter"),
    "formats": (
        "tex-r8",
        "tex-rg8",
        "tex-srgb8-alpha8",
        "tex-rgb10-a2",
        "tex-r11f-g11f-b10f",
        "tex-rgba16f",
        "tex-rgba32f",
        "int-texture",
        "shadow",
        "srgb-encode",
    ),
    "cube / 3D / array + mips": ("tex-cube", "tex-3d", "tex-array", "tex-lod"),
    "MSAA + Blit": ("msaa-resolve",),
    "a Minecraft-like frame": ("minecraft-frame",),
}
CASES = [(f, n) for f, names in FAMILIES.items() for n in names]


@pytest.mark.parametrize("family,name", CASES, ids=[n for _, n in CASES])
def test_the_family_draws_its_first_principles_probes_on_gles(family: str, name: str) -> None:
    res = run_scene(name, "gles", "monolith")
    assert not res.lost, res.client.transport.lost_reason
    scene = SCENES[name]
    bad = [m for p in scene.probes(scene.default_n) if (m := p.check(res.images))]
    assert not bad, f"{family}: {bad[:3]}"


def _pixel(c, x: int, y: int) -> tuple[int, ...]:
    return tuple(c.read_pixels(x, y, 1, 1))


def test_clear_buffer_float_colour_is_glclearbufferfv() -> None:
    """ClearBuffer kind Color, value class Float: the pixel is the value scaled to 8 bits."""
    with gles_client() as (c, be):
        c.viewport(0, 0, 64, 64)
        c.clear_buffer("color", 0, (1.0, 0.5, 0.0, 1.0))
        got = _pixel(c, 10, 10)
        c.present()
    assert got == (255, 128, 0, 255)  # round(0.5 * 255) = 128
    assert be.gl.counts["glClearBufferfv"] >= 1


def test_clear_buffer_depth_then_a_depth_tested_draw() -> None:
    """ClearBuffer kind Depth to 0.25: a quad at NDC z 0 (window depth 0.5) fails LESS, one
    at z -0.75 (window depth 0.125) passes."""
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 0, 1, 0.0, (1.0, 0.0, 0.0, 1.0))
              + quad(0, -1, 1, 1, -0.75, (0.0, 1.0, 0.0, 1.0)))  # fmt: skip
        c.viewport(0, 0, 64, 64)
        c.clear_color(0.0, 0.0, 1.0, 1.0)
        c.clear(GL.COLOR_BUFFER_BIT)
        c.enable("DepthTest")
        c.clear_buffer("depth", 0, (0.25,))
        c.draw_arrays(GL.TRIANGLES, 0, 12)
        left, right = _pixel(c, 16, 32), _pixel(c, 48, 32)
        c.present()
    assert be.gl.counts["glClearBufferfv"] >= 1
    assert right == (0, 255, 0, 255)
    assert left == (0, 0, 255, 255)


def test_base_vertex_offsets_every_index() -> None:
    """Indices 0, 1, 2 with base vertex 6 fetch vertices 6..8: the second triangle's colour
    (green), never the first's (red)."""
    with gles_client() as (c, be):
        floats = quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)) + quad(-1, -1, 1, 1, 0,
                                                                    (0.0, 1.0, 0.0, 1.0))  # fmt: skip
        setup(c, floats)
        c.viewport(0, 0, 64, 64)
        c.clear_color(0.0, 0.0, 0.0, 1.0)
        c.clear()
        c.bind_index_buffer(c.create_buffer(struct.pack("<6H", 0, 1, 2, 3, 4, 5)))
        c.draw_elements(GL.TRIANGLES, 6, 2, base_vertex=6)
        got = _pixel(c, 32, 32)
        c.present()
    assert got == (0, 255, 0, 255)
    assert be.gl.counts["glDrawElementsBaseVertex"] == 1


def test_a_lod_bias_sampler_is_refused_by_name() -> None:
    """GLES has no LOD bias: a sampler state with one is refused at its record."""
    with pytest.raises(DriverRefused) as info:
        with gles_client() as (c, be):
            setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
            s = c.create_sampler(lodBias=1.0)
            c.bind_sampler(0, s)
            c.draw_arrays(GL.TRIANGLES, 0, 6)
            c.present()
    assert info.value.reason == "CreateSamplerState.Parameters.lodBias"


def test_a_program_with_an_unbound_sampler_unit_is_refused_by_name() -> None:
    """A sampling program drawn with nothing on its unit: refused at the draw, by name,
    never drawn with whatever the unit held."""
    from mgpipe.runtime.harness.scenes import render

    with pytest.raises(DriverRefused) as info:
        with gles_client() as (c, be):
            render.tsetup(c, render.tquad(-1, -1, 1, 1, 0, (0.5, 0.5)), "tex")
            c.draw_arrays(GL.TRIANGLES, 0, 6)
            c.present()
    assert info.value.reason.startswith("DrawVbo.sampler")


@pytest.mark.parametrize("params,calls", [
    (dict(wrapS="ClampToBorder", borderColor=(0.0, 1.0, 0.0, 1.0)), ("glSamplerParameterfv",)),
    (dict(maxAnisotropy=4.0), ()),
    (dict(minFilter="Linear", mipmapMode="Linear", compareMode="CompareToTexture",
          compareFunc="Greater"), ()),
])  # fmt: skip
def test_sampler_states_reach_gl_without_a_gl_error(params: dict, calls: tuple) -> None:
    """Every SamplerParameters member the gles backend takes becomes glSamplerParameter*
    on one sampler object, and the driver flags nothing (Present checks glGetError)."""
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
        c.bind_sampler(0, c.create_sampler(**params))
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        c.present()
    assert be.gl.counts["glGenSamplers"] >= 1
    for name in calls:
        assert be.gl.counts[name] >= 1


def test_a_generic_attribute_value_feeds_an_input_without_an_array() -> None:
    """SetVertexAttribDefaults is GL's current attribute value: the colour input with no
    array enabled reads it (glVertexAttrib4fv), so the quad is that colour."""
    with gles_client() as (c, be):
        vb = c.create_buffer(struct.pack("<42f", *quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0))))
        from mgpipe.runtime.harness.shaders.programs import load

        src = load("color")
        c.use_program(c.create_program(src.spirv, src.reflection))
        c.vertex_attrib_pointer(0, vb, 3, stride=28, offset=0)
        c.vertex_attrib(1, 0.0, 0.0, 1.0, 1.0)
        c.viewport(0, 0, 64, 64)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        got = _pixel(c, 32, 32)
        c.present()
    assert got == (0, 0, 255, 255)
    assert be.gl.counts["glVertexAttrib4fv"] >= 1


def test_base_instance_moves_the_instanced_attributes() -> None:
    """GLES has no base instance: the backend starts every instanced attribute
    ``base_instance`` elements in (GL's rule: element = instance / divisor + base). Four
    per-instance (offset, colour) rows; one instance drawn with base instance 2 is row 2's
    colour at row 2's place, and row 0's place stays clear."""
    from mgpipe.runtime.harness.shaders.programs import load

    rows = [((0.0, 0.0), (1.0, 0.0, 0.0, 1.0)), ((1.0, 0.0), (0.0, 1.0, 0.0, 1.0)),
            ((0.0, 1.0), (0.0, 0.0, 1.0, 1.0)), ((1.0, 1.0), (1.0, 1.0, 0.0, 1.0))]  # fmt: skip
    with gles_client() as (c, be):
        corners = [(-1.0, -1.0), (0.0, -1.0), (0.0, 0.0), (-1.0, 0.0)]  # the lower-left quadrant
        quad_vb = c.create_buffer(
            struct.pack("<12f", *(v for x, y in corners for v in (x, y, 0.0)))
        )
        per = [v for off, col in rows for v in (*off, *col)]
        inst_vb = c.create_buffer(struct.pack(f"<{len(per)}f", *per))
        src = load("instanced")
        c.use_program(c.create_program(src.spirv, src.reflection))
        c.vertex_attrib_pointer(0, quad_vb, 3, stride=12)
        c.vertex_attrib_pointer(1, inst_vb, 4, stride=24, offset=8, divisor=1)
        c.vertex_attrib_pointer(2, inst_vb, 2, stride=24, offset=0, divisor=1)
        c.bind_index_buffer(c.create_buffer(struct.pack("<6H", 0, 1, 2, 0, 2, 3)))
        c.viewport(0, 0, 64, 64)
        c.clear_color(0.0, 0.0, 0.0, 1.0)
        c.clear()
        c.draw_elements(GL.TRIANGLES, 6, 2, instances=1, base_instance=2)
        placed, origin = _pixel(c, 16, 48), _pixel(c, 16, 16)  # row 2: offset (0, 1) NDC
        c.present()
    assert placed == (0, 0, 255, 255)
    assert origin == (0, 0, 0, 255)


def _two_quads(c) -> None:
    """Vertices 0..5 a red full-screen quad, 6..11 a green one; indices 0..11 in order."""
    setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)) + quad(-1, -1, 1, 1, 0,
                                                                (0.0, 1.0, 0.0, 1.0)))  # fmt: skip
    c.viewport(0, 0, 64, 64)
    c.bind_index_buffer(c.create_buffer(struct.pack("<12H", *range(12))))


def test_set_index_buffer_offset_is_honoured() -> None:
    """SetIndexBuffer.Offset (bytes) moves where the indices are read: 12 bytes = six
    2-byte indices in, the draw of six indices reads 6..11 (green), not 0..5 (red)."""
    with gles_client() as (c, be):
        _two_quads(c)
        c.draw_elements(GL.TRIANGLES, 6, 2)  # pushes SetIndexBuffer {Res} (Offset 0): red
        first = _pixel(c, 32, 32)
        ib = c.tr._pushed["index"]
        c.em.emit("SetIndexBuffer", {"Res": ib, "Offset": 12, "IndexSize": 2})
        c.draw_elements(GL.TRIANGLES, 6, 2)
        second = _pixel(c, 32, 32)
        c.present()
    assert first == (255, 0, 0, 255)
    assert second == (0, 255, 0, 255)


def test_an_indirect_draw_naming_a_parameter_buffer_is_refused_by_name() -> None:
    """An indirect DrawVbo (kDrawIsIndirect) whose MGPDrawIndirect names a parameter buffer:
    the count of *IndirectCount is resolved on the client (seed 001 §5.7), so the server
    never reads one; refused at the record (the indirect draws themselves:
    tests/test_draw_forms.py)."""
    from mgpipe.runtime.schema import tables as _t

    flag = int(_t.enum("MGPDrawFlagBit")["kDrawIsIndirect"])
    with pytest.raises(DriverRefused) as info:
        with gles_client() as (c, be):
            _two_quads(c)
            c.draw_elements(GL.TRIANGLES, 6, 2)
            buf = c.tr._pushed["index"]  # a live buffer for the parameter fields
            c.em.emit("DrawVbo", {"Mode": int(GL.TRIANGLES), "Flags": flag, "InstanceCount": 1},
                      ([{"Buffer": buf, "ParameterBuffer": buf, "DrawCount": 1,
                         "Stride": 20}],))  # fmt: skip
            c.present()
    assert info.value.reason == "DrawVbo.MGPDrawIndirect.ParameterBuffer"


def test_a_texture_upload_between_draws_leaves_the_units_true() -> None:
    """Two textures on units 0 and 1 of one program would need two samplers; here one
    sampler, two textures drawn in turn with an upload in between (the upload binds on
    the active unit): each draw samples the texture bound for it."""
    from mgpipe.runtime.harness.scenes import render

    with gles_client() as (c, be):
        render.tsetup(c, render.tquad(-1, -1, 1, 1, 0, (0.5, 0.5)), "tex")
        c.viewport(0, 0, 64, 64)
        a, b = c.create_texture_2d(1, 1), c.create_texture_2d(1, 1)
        c.tex_image(a, 0, bytes((255, 0, 0, 255)))
        c.tex_image(b, 0, bytes((0, 255, 0, 255)))
        for t in (a, b):
            c.tex_parameter(t, "min_filter", 0x2600)  # GL_NEAREST
            c.tex_parameter(t, "mag_filter", 0x2600)
        c.bind_texture(0, a)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        first = _pixel(c, 32, 32)
        c.tex_image(b, 0, bytes((0, 0, 255, 255)))  # uploads b on the active unit
        c.draw_arrays(GL.TRIANGLES, 0, 6)  # still a
        second = _pixel(c, 32, 32)
        c.bind_texture(0, b)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        third = _pixel(c, 32, 32)
        c.present()
    assert (first, second, third) == ((255, 0, 0, 255), (255, 0, 0, 255), (0, 0, 255, 255))
