"""MobileGL's two recorder-golden scenarios, written against mgpipe's client, against MobileGL's lines.

MobileGL's ``MG_Test/Pipe/RecorderGoldenTest.cpp`` runs two fixed GL call sequences through its
frontend with a recorder at every door a record leaves by, and pins one line per record
(``index call bytes hash``) in ``goldens/recorder/<scenario>.txt``. Those lines are stored here
as test data (``tests/mobilegl_goldens/``, with the repository, path and commit they come from).

The same GL call sequences are written below against :class:`~mgpipe.runtime.client.api.Client`,
recorded through the recorder backend over the monolith transport, and written in MobileGL's
format (:mod:`mgpipe.runtime.backends.recorder_golden`). The requirement: the call and the byte
count are MobileGL's on every line; a hash is compared where the payload values are MobileGL's,
and every line whose hash differs is listed in :data:`HASH_REASONS` with the reason.

Where a GL call of MobileGL's sequence has no client API yet, the scenario says so
(:data:`NO_CLIENT_API`) and the call is left out; the line comparison then shows what is missing.
Regenerate nothing here: the goldens are MobileGL's; only a new MobileGL commit re-pins them
(copy the lines of that commit's files and update the ``# source:`` header).

Run ``python tests/test_mobilegl_goldens.py`` for the expected-vs-got tables.
"""

from __future__ import annotations

import difflib
import re
import struct
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.backends.recorder_golden import GoldenLine, golden_records, parse_golden
from mgpipe.runtime.client.api import (
    GL_COLOR, GL_COLOR_BUFFER_BIT, GL_FLOAT, GL_NEAREST, GL_RGBA8, GL_TEXTURE_MAG_FILTER, GL_TEXTURE_MIN_FILTER,
    GL_TRIANGLES, Client,
)
from mgpipe.runtime.harness.shaders.programs import load
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.stage import StageSegment

GOLDENS = Path(__file__).resolve().parent / "mobilegl_goldens"
SOURCE = re.compile(
    r"^# source: MobileGL-Dev/MobileGL (MobileGL/MG_Test/Pipe/goldens/recorder/(\w+)\.txt) @ ([0-9a-f]{40}) "
)
MOBILEGL_COMMIT = "87e915382c6b48f35d05a7dc9592bbb632186e78"

GL_UNSIGNED_SHORT_BYTES = 2  # glDrawElements' index type, as the client takes it: bytes per index

# The scenarios' GL inputs (MobileGL's fixture values: a 2x2 RGBA8 image, one triangle of
# four-component positions, three 16-bit indices).
TEXELS = bytes([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255])
VERTICES = struct.pack("<12f", -1, -1, 0, 1, 1, -1, 0, 1, 0, 1, 0, 1)
INDICES = struct.pack("<3H", 0, 1, 2)

#: GL calls of MobileGL's sequences that the client has no API for yet (left out below).
NO_CLIENT_API: dict[str, tuple[str, ...]] = {"BufferVertexArrayDraw": (), "TextureFramebufferClearBlit": ()}

#: the default block of MobileGL's scenario program (u_offset a vec4, u_texture a sampler2D)
UNIFORMS = {"u_offset": (0, "vec4"), "u_texture": (None, "sampler2D")}


def buffer_vertex_array_draw(c: Client, vertex_bytes_delta: int = 0) -> None:
    """Buffers, a vertex array, a sampled texture, a program, four draws (blend on, then off).
    ``vertex_bytes_delta`` changes one GL input (the vertex buffer's size) for the control."""
    src = load("color")  # a vertex + fragment program (the bytes are opaque to the recorder)
    program = c.create_program(src.spirv, src.reflection, uniforms=UNIFORMS)
    c.use_program(program)
    c.uniform(program, "u_offset", 0.0, 0.0, 0.0, 0.0)  # glUniform4f
    c.uniform(program, "u_texture", 0)  # glUniform1i
    texture = c.create_texture_2d(2, 2, GL_RGBA8, levels=1)  # glGenTextures + glTexStorage2D
    c.bind_texture(0, texture)  # glBindTexture on the active unit, 0
    c.tex_sub_image_2d(texture, 0, 0, 0, 2, 2, TEXELS)
    c.tex_parameter(texture, GL_TEXTURE_MIN_FILTER, GL_NEAREST)
    c.tex_parameter(texture, GL_TEXTURE_MAG_FILTER, GL_NEAREST)
    vbo = c.create_buffer()
    c.buffer_data(vbo, len(VERTICES) + vertex_bytes_delta)  # glBufferData(48, NULL)
    c.buffer_sub_data(vbo, 0, VERTICES)
    c.vertex_attrib_pointer(0, vbo, 4, GL_FLOAT, False, 4 * 4, 0)  # + glEnableVertexAttribArray
    ebo = c.create_buffer(INDICES)  # glBufferData(GL_ELEMENT_ARRAY_BUFFER, indices)
    c.bind_index_buffer(ebo)
    c.enable("Blend")
    c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
    c.viewport(0, 0, 64, 32)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    c.draw_elements(GL_TRIANGLES, 3, GL_UNSIGNED_SHORT_BYTES)
    c.draw_arrays(GL_TRIANGLES, 0, 3, instances=4)
    c.disable("Blend")
    c.draw_elements(GL_TRIANGLES, 3, GL_UNSIGNED_SHORT_BYTES, instances=2)  # base vertex 0


def texture_framebuffer_clear_blit(c: Client) -> None:
    """Two 8x8 three-level textures, a framebuffer over each; a clear, a clear-buffer, a blit
    from the first to the second, a mipmap generation of the second."""
    textures = []
    for _ in range(2):
        texture = c.create_texture_2d(8, 8, GL_RGBA8, levels=3)  # glTexStorage2D(3, RGBA8, 8, 8)
        c.bind_texture(0, texture)
        textures.append(texture)
    framebuffers = [c.create_framebuffer() for _ in range(2)]
    for fb, texture in zip(framebuffers, textures):
        c.framebuffer_texture(fb, 0, texture, 0)  # GL_COLOR_ATTACHMENT0, level 0
    c.bind_framebuffer(framebuffers[0])
    c.clear_color(0.25, 0.5, 0.75, 1.0)
    c.clear(GL_COLOR_BUFFER_BIT)
    c.clear_buffer(GL_COLOR, 0, (1.0, 0.0, 0.5, 1.0))  # glClearBufferfv
    c.bind_framebuffer(framebuffers[0], "read")
    c.bind_framebuffer(framebuffers[1], "draw")
    c.blit_framebuffer(0, 0, 8, 8, 0, 0, 4, 4, GL_COLOR_BUFFER_BIT, GL_NEAREST)
    c.bind_texture(0, textures[1])
    c.generate_mipmap(textures[1])


SCENARIOS: dict[str, Callable[..., None]] = {
    "BufferVertexArrayDraw": buffer_vertex_array_draw,
    "TextureFramebufferClearBlit": texture_framebuffer_clear_blit,
}

#: call -> why its hash differs from MobileGL's on a line whose call and byte count agree. Every
#: such line's call must be here, and every call here must have such a line (no stale reason).
_HANDLES = ("handle numbers: MobileGL mints per kind (a Buffer and a Texture both start at slot 1), "
            "mgpipe's resources share one slot space")
_DIGEST = ("ContentHash is the client's set-hash digest (mgpipe's suppressor digest, not MobileGL's "
           "function)")
_CSO = "CSO numbers: MobileGL's are content-addressed per process, mgpipe's minted in order"
HASH_REASONS: dict[str, str] = {
    "ResourceCreate": f"{_HANDLES}; GlNameForDiag is the GL name in MobileGL, 0 in mgpipe; BindMask "
                      "carries MobileGL's sticky buffer bind bits (ARRAY / ELEMENT_ARRAY at glBindBuffer), 0 in mgpipe",
    "ResourceRespecify": f"{_HANDLES}; GlNameForDiag and the sticky BindMask as for ResourceCreate; a "
                         "buffer's Usage is GL_STATIC_DRAW in MobileGL, 0 in mgpipe; the texture respecifies' values "
                         "(constructor, storage, per level, sticky sampler / render-target bits) are the "
                         "client's, unchecked member by member against MobileGL's",
    "ResourceSubData": f"{_HANDLES} (the buffer's and the texture's Res)",
    "SetFramebufferState": f"{_DIGEST}; the default framebuffer's size is MobileGL's unit context's, "
                           "mgpipe's the client's (64x32)",
    "SetDrawProgram": f"{_HANDLES} (the program's)",
    "CreateSamplerView": f"{_HANDLES} (the view's and the texture's)",
    "SetSamplerViews": f"{_DIGEST}; {_HANDLES} (in the tail)",
    "BindSamplerStates": f"{_DIGEST}; {_CSO} (the texture's built-in sampler)",
    "CreateRenderState": f"{_CSO}; the block is the client's render state (MobileGL's frontend "
                         "defaults and conversions differ member by member)",
    "BindRenderState": f"{_CSO}; Version / PipelineVersion count the client's own bumps",
    "SetDynamicState": "the dynamic chunks are the client's render state; Version counts the client's bumps",
    "BindVertexElements": f"{_CSO} (the vertex elements')",
    "SetVertexBuffers": f"{_DIGEST}; {_HANDLES} (the vertex buffer's)",
    "SetIndexBuffer": f"{_HANDLES} (the index buffer's); IndexSize: mgpipe leaves it 0 (the draw carries it)",
    "DrawVbo": f"{_HANDLES} (IndexResource); the draw fields the frontend derives (restart index, "
               "index range) are mgpipe's",
    "Clear": f"{_HANDLES} (the framebuffer's); the clear kind and values are the client's mapping of "
             "glClear / glClearBuffer",
    "CreateShaderState": f"{_CSO} (the program's); GlobalUboSize and the statuses are the client's",
    "SetProgramBindings": f"{_CSO} (the program's); the sampler unit's Location is the client's "
                          "declaration index, MobileGL's the GL location",
    "BindShaderState": f"{_HANDLES} (the program's)",
    "SetDispatchProgram": f"{_HANDLES} (the program's)",
    "SetGlobalConstants": f"{_CSO} (ShaderCso); Version counts the client's uniform writes",
    "SetTextureParams": f"{_HANDLES} (the texture's); BuiltinSampler is the client's sampler CSO "
                        "number (the context's default sampler, then the minted ones)",
    "CreateSamplerState": f"{_CSO}; the SamplerParameters bytes are the client's GL defaults "
                          "(unchecked member by member against MobileGL's)",
    "Blit": f"{_HANDLES} (the two framebuffers')",
    "GenerateMipmap": f"{_HANDLES} (the texture's)",
    "CreateVertexElements": f"{_CSO}; the rows of the attributes not enabled are the client's "
                            "(BindingIndex = the attribute, the rest zero)",
    "SetPixelPackState": "the pack parameters are the client's GL defaults (unchecked member by "
                         "member against MobileGL's)",
    "SetPatchState": "GL's patch defaults as the client writes them (unchecked member by member "
                     "against MobileGL's)",
    "SetVertexAttribDefaults": "the attribute values and value classes are the client's (0, 0, 0, 1 "
                               "float; unchecked member by member against MobileGL's)",
    "SetContextValues": "the touched-unit and binding-point counts are the client's (unchecked "
                        "member by member against MobileGL's)",
}


def aligned(name: str) -> list[tuple[tuple[int, str, int, int], GoldenLine]]:
    """(MobileGL line, mgpipe line) pairs with the same call and byte count, in order."""
    want = golden(name)[2]
    got = capture(name)
    sm = difflib.SequenceMatcher(a=[w[1:3] for w in want], b=[(g.call, g.nbytes) for g in got], autojunk=False)
    return [(want[b.a + k], got[b.b + k]) for b in sm.get_matching_blocks() for k in range(b.size)]


def golden(name: str) -> tuple[str, str, list[tuple[int, str, int, int]]]:
    """(path in MobileGL, commit, lines) of a stored golden."""
    text = (GOLDENS / f"{name}.txt").read_text()
    m = SOURCE.match(text.splitlines()[0])
    assert m is not None, f"{name}.txt: the first line must say where it comes from"
    assert m.group(2) == name
    return m.group(1), m.group(3), parse_golden(text)


def capture(name: str, **inputs: int) -> list[GoldenLine]:
    """The scenario through the client, the monolith transport and the recorder backend, in
    MobileGL's format. MobileGL's recorder starts after the context's creation (its default sampler, the built-in
    sampler of every new texture, exists before the scenario) and stops before its teardown;
    so does this."""
    stage = StageSegment(4 << 20)
    rec = Recorder()
    client = Client(Applier(rec, stage).apply, stage, transport="monolith", width=64, height=32)
    start = len(rec.raw)  # what the context's creation sent (its default sampler) is no line
    SCENARIOS[name](client, **inputs)
    lines = [g for g in golden_records(rec) if g.record < 0 or g.record >= start]
    client.close()
    return lines


def table(name: str) -> str:
    """Expected (MobileGL) vs got (mgpipe), aligned on (call, bytes)."""
    want = [(c, n, h) for _, c, n, h in golden(name)[2]]
    got = [(g.call, g.nbytes, g.hash) for g in capture(name)]
    sm = difflib.SequenceMatcher(a=[w[:2] for w in want], b=[g[:2] for g in got], autojunk=False)
    rows = [f"{'#':>3} {'MobileGL':<32} {'#':>3} {'mgpipe':<32} note"]
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        for k in range(max(a1 - a0, b1 - b0)):
            i, j = a0 + k, b0 + k
            w = f"{want[i][0]} {want[i][1]}" if i < a1 else ""
            g = f"{got[j][0]} {got[j][1]}" if j < b1 else ""
            note = {"equal": "hash " + ("=" if i < a1 and j < b1 and want[i][2] == got[j][2] else "differs"),
                    "delete": "missing", "insert": "extra", "replace": "differs"}[op]  # fmt: skip
            rows.append(f"{i if i < a1 else '':>3} {w:<32} {j if j < b1 else '':>3} {g:<32} {note}")
    return "\n".join(rows)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_stored_golden_is_mobilegls(name: str) -> None:
    path, commit, lines = golden(name)
    assert path.endswith(f"/{name}.txt") and commit == MOBILEGL_COMMIT
    assert [i for i, *_ in lines] == list(range(len(lines)))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_scenario_records_mobilegls_calls_and_bytes(name: str) -> None:
    want = [(c, n) for _, c, n, _ in golden(name)[2]]
    got = [(g.call, g.nbytes) for g in capture(name)]
    assert got == want, f"{name}: expected (MobileGL) vs got (mgpipe):\n{table(name)}"


def test_every_differing_hash_has_its_reason() -> None:
    """On every line where the call and the bytes agree, the hash agrees or its call has a
    reason in HASH_REASONS; and no reason is stale."""
    pairs = [pair for name in SCENARIOS for pair in aligned(name)]
    assert len(pairs) >= 20  # not vacuous: the lines the client already shares with MobileGL
    differ = {g.call for w, g in pairs if w[3] != g.hash}
    assert differ <= set(HASH_REASONS), sorted(differ - set(HASH_REASONS))
    assert set(HASH_REASONS) <= differ, f"stale reasons: {sorted(set(HASH_REASONS) - differ)}"



@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_same_calls_record_the_same_lines_twice(name: str) -> None:
    a, b = capture(name), capture(name)
    assert [(g.call, g.nbytes, g.hash) for g in a] == [(g.call, g.nbytes, g.hash) for g in b]


def test_a_changed_gl_input_changes_the_lines_first_at_a_resource_record() -> None:
    """Negative control: the vertex buffer defined four bytes longer differs from the unchanged
    capture, first at a resource record (where that input enters the stream)."""
    same, longer = capture("BufferVertexArrayDraw"), capture("BufferVertexArrayDraw", vertex_bytes_delta=4)
    first = next(i for i, (x, y) in enumerate(zip(same, longer)) if x != y)
    assert same[first].call.startswith("Resource"), (first, same[first], longer[first])


if __name__ == "__main__":
    for scenario in sys.argv[1:] or sorted(SCENARIOS):
        print(f"== {scenario}\n{table(scenario)}\n")
