"""GL's initial state: every member of the client's render block (and of its two pixel-store
blocks) starts at the value of GL ES 3.2's state tables, checked row by row.

The table below is written from the OpenGL ES 3.2 specification (November 3, 2016),
chapter 21 "State Tables": each row names the table, the state variable and its initial
value there. A member that GL ES 3.2 does not have (the block is MobileGL's, a desktop-GL
frontend's) names the desktop state variable and its initial value in the OpenGL 4.6 core
specification's state tables (chapter 23); the one member that is no GL state at all
(``ScissorBoxWrittenMask``) names what it is. Catalogue-enum members are spelled by their
enumerator name (the value is the generated table's); ``GLenum`` members by GL token.

Every leaf of the block must have a row and every row a member: a member added to the
block without a row fails here, as does a wrong value. The negative controls plant each
defect (a wrong default, the old zero viewport, a missing row, a wrong GL token) and
assert the named failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from mgpipe.runtime.client.gl_tokens import GLToken
from mgpipe.runtime.client.render_state import RenderState
from mgpipe.runtime.schema import tables as _t

W, H = 64, 48  # the surface the context is first made current on
ONES = 0xFFFFFFFF
ES = "GL ES 3.2 Table"
GL46 = "not in GL ES 3.2; GL 4.6 core state tables:"


def E(enum: str, name: str) -> tuple[str, str]:
    """A catalogue enumerator (its value from the generated tables)."""
    return (enum, name)


#: member -> (initial value, where it is from). A value is a scalar, a tuple (a vector:
#: its components in order), a dict (a struct: member -> value) or ("each", v) for an
#: array whose every element is v.
BLOCK: dict[str, tuple[Any, str]] = {
    "Viewports": (("each", (0.0, 0.0, float(W), float(H))),
                  f"{ES} 21.6 (Transformation State) VIEWPORT: (0, 0, w, h), the surface; "
                  "every viewport (OES_viewport_array / GL 4.6 13.6.1)"),
    "LineWidth": (1.0, f"{ES} 21.7 (Rasterization) LINE_WIDTH"),
    "PointSize": (1.0, f"{GL46} POINT_SIZE"),
    "PatchVertices": (3, f"{ES} 21.2 (Current Values and Associated Data) PATCH_VERTICES"),
    "PatchDefaultOuterLevel": ((1.0, 1.0, 1.0, 1.0), f"{GL46} PATCH_DEFAULT_OUTER_LEVEL"),
    "PatchDefaultInnerLevel": ((1.0, 1.0), f"{GL46} PATCH_DEFAULT_INNER_LEVEL"),
    "PolygonOffsetFactor": (0.0, f"{ES} 21.7 (Rasterization) POLYGON_OFFSET_FACTOR"),
    "PolygonOffsetUnits": (0.0, f"{ES} 21.7 (Rasterization) POLYGON_OFFSET_UNITS"),
    "PolygonOffsetClamp": (0.0, f"{GL46} POLYGON_OFFSET_CLAMP"),
    "ClipOrigin": (GLToken.LOWER_LEFT, f"{GL46} CLIP_ORIGIN LOWER_LEFT"),
    "ClipDepthMode": (GLToken.NEGATIVE_ONE_TO_ONE, f"{GL46} CLIP_DEPTH_MODE NEGATIVE_ONE_TO_ONE"),
    "BlendStates": (("each", {
        "Enabled": False, "SrcFactorRGB": E("BlendFactor", "One"),
        "DstFactorRGB": E("BlendFactor", "Zero"), "SrcFactorAlpha": E("BlendFactor", "One"),
        "DstFactorAlpha": E("BlendFactor", "Zero"), "ColorEquation": E("BlendEquation", "Add"),
        "AlphaEquation": E("BlendEquation", "Add")}),
        f"{ES} 21.13 (Pixel Operations) BLEND FALSE, BLEND_SRC_RGB / BLEND_SRC_ALPHA ONE, "
        "BLEND_DST_RGB / BLEND_DST_ALPHA ZERO, BLEND_EQUATION_RGB / _ALPHA FUNC_ADD, per draw buffer"),
    "LogicOp": (E("LogicOperation", "Copy"), f"{GL46} LOGIC_OP_MODE COPY"),
    "DepthTestEnabled": (False, f"{ES} 21.13 (Pixel Operations) DEPTH_TEST"),
    "DepthFunc": (E("DepthTestFunc", "Less"), f"{ES} 21.13 (Pixel Operations) DEPTH_FUNC LESS"),
    "DepthMask": (True, f"{ES} 21.14 (Framebuffer Control) DEPTH_WRITEMASK"),
    "ColorMasks": (("each", (True, True, True, True)),
                   f"{ES} 21.14 (Framebuffer Control) COLOR_WRITEMASK, per draw buffer"),
    "FramebufferSrgbEnabled": (False, f"{GL46} FRAMEBUFFER_SRGB (GL ES 3.2 has no such state: "
                                      "an sRGB attachment always encodes)"),
    "DepthClampEnabled": (False, f"{GL46} DEPTH_CLAMP"),
    "TextureCubeMapSeamlessEnabled": (False, f"{GL46} TEXTURE_CUBE_MAP_SEAMLESS (GL ES 3.2 "
                                             "cube maps are always seamless)"),
    "ClearColor": ((0.0, 0.0, 0.0, 0.0), f"{ES} 21.14 (Framebuffer Control) COLOR_CLEAR_VALUE"),
    "ClearDepth": (1.0, f"{ES} 21.14 (Framebuffer Control) DEPTH_CLEAR_VALUE"),
    "ClearStencil": (0, f"{ES} 21.14 (Framebuffer Control) STENCIL_CLEAR_VALUE"),
    "BlendColor": ((0.0, 0.0, 0.0, 0.0), f"{ES} 21.13 (Pixel Operations) BLEND_COLOR"),
    "DepthRanges": (("each", (0.0, 1.0)),
                    f"{ES} 21.6 (Transformation State) DEPTH_RANGE, every viewport"),
    "SampleCoverageValue": (1.0, f"{ES} 21.8 (Multisampling) SAMPLE_COVERAGE_VALUE"),
    "SampleCoverageInvert": (False, f"{ES} 21.8 (Multisampling) SAMPLE_COVERAGE_INVERT"),
    "SampleMaskValue": (ONES, f"{ES} 21.8 (Multisampling) SAMPLE_MASK_VALUE: all bits of all words"),
    "MinSampleShadingValue": (0.0, f"{ES} 21.8 (Multisampling) MIN_SAMPLE_SHADING_VALUE"),
    "StencilStates": (("each", {
        "Func": E("DepthTestFunc", "Always"), "Ref": 0, "ValueMask": ONES, "WriteMask": ONES,
        "FailOp": E("StencilOperation", "Keep"), "PassDepthFailOp": E("StencilOperation", "Keep"),
        "PassDepthPassOp": E("StencilOperation", "Keep")}),
        f"{ES} 21.13 (Pixel Operations) STENCIL_FUNC ALWAYS, STENCIL_REF 0, STENCIL_VALUE_MASK "
        "all 1s, STENCIL_FAIL / _PASS_DEPTH_FAIL / _PASS_DEPTH_PASS KEEP (and STENCIL_BACK_*); "
        f"{ES} 21.14 (Framebuffer Control) STENCIL_WRITEMASK / STENCIL_BACK_WRITEMASK all 1s"),
    "CullFaceEnabled": (False, f"{ES} 21.7 (Rasterization) CULL_FACE"),
    "CullFaceModeSetting": (E("CullFaceMode", "Back"), f"{ES} 21.7 (Rasterization) CULL_FACE_MODE BACK"),
    "FrontFaceModeSetting": (E("FrontFaceMode", "CounterClockwise"),
                             f"{ES} 21.7 (Rasterization) FRONT_FACE CCW"),
    "ProvokingVertexModeSetting": (E("ProvokingVertexMode", "LastVertex"),
                                   f"{GL46} PROVOKING_VERTEX LAST_VERTEX_CONVENTION"),
    "LineSmoothHint": (GLToken.DONT_CARE, f"{GL46} LINE_SMOOTH_HINT DONT_CARE"),
    "PolygonSmoothHint": (GLToken.DONT_CARE, f"{GL46} POLYGON_SMOOTH_HINT DONT_CARE"),
    "TextureCompressionHint": (GLToken.DONT_CARE, f"{GL46} TEXTURE_COMPRESSION_HINT DONT_CARE"),
    "FragmentShaderDerivativeHint": (GLToken.DONT_CARE,
                                     f"{ES} 21.38 (Hints) FRAGMENT_SHADER_DERIVATIVE_HINT DONT_CARE"),
    "PointFadeThresholdSize": (1.0, f"{GL46} POINT_FADE_THRESHOLD_SIZE"),
    "PointSpriteCoordOrigin": (GLToken.UPPER_LEFT, f"{GL46} POINT_SPRITE_COORD_ORIGIN UPPER_LEFT"),
    "ClampReadColor": (GLToken.FIXED_ONLY, f"{GL46} CLAMP_READ_COLOR FIXED_ONLY"),
    "PolygonModeFront": (GLToken.FILL, f"{GL46} POLYGON_MODE FILL"),
    "PolygonModeBack": (GLToken.FILL, f"{GL46} POLYGON_MODE FILL"),
    "PrimitiveRestartIndex": (0, f"{GL46} PRIMITIVE_RESTART_INDEX"),
    "ColorLogicOpEnabled": (False, f"{GL46} COLOR_LOGIC_OP"),
    "DebugOutputEnabled": (False, f"{ES} 21.53 (Debug Output State) DEBUG_OUTPUT (not a debug context)"),
    "DebugOutputSynchronousEnabled": (False, f"{ES} 21.53 (Debug Output State) DEBUG_OUTPUT_SYNCHRONOUS"),
    "DitherEnabled": (True, f"{ES} 21.13 (Pixel Operations) DITHER"),
    "LineSmoothEnabled": (False, f"{GL46} LINE_SMOOTH"),
    "MultisampleEnabled": (True, f"{GL46} MULTISAMPLE (GL ES 3.2: always on, no state)"),
    "PolygonOffsetFillEnabled": (False, f"{ES} 21.7 (Rasterization) POLYGON_OFFSET_FILL"),
    "PolygonOffsetLineEnabled": (False, f"{GL46} POLYGON_OFFSET_LINE"),
    "PolygonOffsetPointEnabled": (False, f"{GL46} POLYGON_OFFSET_POINT"),
    "PolygonSmoothEnabled": (False, f"{GL46} POLYGON_SMOOTH"),
    "PrimitiveRestartEnabled": (False, f"{GL46} PRIMITIVE_RESTART"),
    "PrimitiveRestartFixedIndexEnabled": (False, f"{ES} 21.4 (Vertex Array Data) "
                                                 "PRIMITIVE_RESTART_FIXED_INDEX"),
    "RasterizerDiscardEnabled": (False, f"{ES} 21.7 (Rasterization) RASTERIZER_DISCARD"),
    "SampleAlphaToCoverageEnabled": (False, f"{ES} 21.8 (Multisampling) SAMPLE_ALPHA_TO_COVERAGE"),
    "SampleAlphaToOneEnabled": (False, f"{GL46} SAMPLE_ALPHA_TO_ONE"),
    "SampleCoverageEnabled": (False, f"{ES} 21.8 (Multisampling) SAMPLE_COVERAGE"),
    "SampleMaskEnabled": (False, f"{ES} 21.8 (Multisampling) SAMPLE_MASK"),
    "SampleShadingEnabled": (False, f"{ES} 21.8 (Multisampling) SAMPLE_SHADING"),
    "StencilTestEnabled": (False, f"{ES} 21.13 (Pixel Operations) STENCIL_TEST"),
    "ProgramPointSizeEnabled": (False, f"{GL46} PROGRAM_POINT_SIZE"),
    "ScissorTestEnabledMask": (0, f"{ES} 21.13 (Pixel Operations) SCISSOR_TEST FALSE, every viewport"),
    "ScissorBoxes": (("each", (0, 0, W, H)),
                     f"{ES} 21.13 (Pixel Operations) SCISSOR_BOX: (0, 0, w, h), the surface; "
                     "every viewport"),
    "ScissorBoxWrittenMask": (0, "no GL state: MobileGL's 'the application wrote box i' bits "
                                 "(MG_Pipe/MGPipeValueTypes.h), none written"),
    "ClipDistanceEnabledMask": (0, f"{GL46} CLIP_DISTANCEi FALSE for every i"),
}  # fmt: skip

#: the pack and the unpack pixel-store blocks: member -> (initial value, where from)
PIXEL_STORE: dict[str, tuple[Any, str]] = {
    "SwapBytes": (False, f"{GL46} PACK_SWAP_BYTES / UNPACK_SWAP_BYTES"),
    "LSBFirst": (False, f"{GL46} PACK_LSB_FIRST / UNPACK_LSB_FIRST"),
    "RowLength": (0, f"{ES} 21.18 (Pixels) PACK_ROW_LENGTH / UNPACK_ROW_LENGTH"),
    "ImageHeight": (0, f"{ES} 21.18 (Pixels) UNPACK_IMAGE_HEIGHT; {GL46} PACK_IMAGE_HEIGHT"),
    "SkipPixels": (0, f"{ES} 21.18 (Pixels) PACK_SKIP_PIXELS / UNPACK_SKIP_PIXELS"),
    "SkipRows": (0, f"{ES} 21.18 (Pixels) PACK_SKIP_ROWS / UNPACK_SKIP_ROWS"),
    "SkipImages": (0, f"{ES} 21.18 (Pixels) UNPACK_SKIP_IMAGES; {GL46} PACK_SKIP_IMAGES"),
    "Alignment": (4, f"{ES} 21.18 (Pixels) PACK_ALIGNMENT / UNPACK_ALIGNMENT"),
}


def _value(want: Any) -> Any:
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], str) and want[0] != "each":
        return _t.enum(want[0])[want[1]]  # a catalogue enumerator
    return want


def _leaves(got: Any, want: Any, path: str) -> list[tuple[str, Any, Any]]:
    """(path, got, wanted) of every scalar the row ``want`` covers in ``got``."""
    if isinstance(want, tuple) and want and want[0] == "each":
        return [leaf for i in range(len(got)) for leaf in _leaves(got[i], want[1], f"{path}[{i}]")]
    if isinstance(want, dict):
        names = set(got.dtype.names)
        if names != set(want):
            return [(f"{path}.{n}", "a member", "no row" if n in names else "no member")
                    for n in sorted(names ^ set(want))]  # fmt: skip
        return [leaf for n, v in want.items() for leaf in _leaves(got[n], v, f"{path}.{n}")]
    if isinstance(want, tuple) and not (len(want) == 2 and isinstance(want[0], str)):
        names = got.dtype.names
        if len(names) != len(want):
            return [(path, f"{len(names)} components", f"{len(want)}")]
        return [(f"{path}.{n}", got[n], v) for n, v in zip(names, want)]
    return [(path, got, _value(want))]


def mismatches(block: np.void, table: dict[str, tuple[Any, str]], what: str) -> list[str]:
    """Every leaf of ``block`` whose value is not its row's, every member without a row and
    every row without a member, each named: ``<what>.<path>: got G, expected E (source)``."""
    out = []
    names = block.dtype.names
    for name in names:
        if name not in table:
            out.append(f"{what}.{name}: no row in the table of GL's initial values")
    for name, (want, src) in table.items():
        if name not in names:
            out.append(f"{what}.{name}: a row for no member of the block")
            continue
        for path, got, exp in _leaves(block[name], want, f"{what}.{name}"):
            if exp in ("no row", "no member") or got == "a member":
                out.append(f"{path}: {exp}")
                continue
            g = got.item() if hasattr(got, "item") else got
            e = exp.item() if hasattr(exp, "item") else exp
            same = (float(g) == float(e)) if isinstance(e, float) else (int(g) == int(e))
            if not same:
                out.append(f"{path}: got {g!r}, expected {e!r} ({src})")
    return out


def _all(rs: RenderState) -> list[str]:
    return (mismatches(rs.p, BLOCK, "RenderStateParameters")
            + mismatches(rs.pixel_pack, PIXEL_STORE, "pixel_pack")
            + mismatches(rs.pixel_unpack, PIXEL_STORE, "pixel_unpack"))  # fmt: skip


def test_every_default_of_the_block_is_gl_es_3_2_s_initial_value() -> None:
    assert _all(RenderState(W, H)) == []


def test_the_table_covers_every_leaf_of_the_block() -> None:
    """Each of the block's members has its row (checked leaf by leaf: 16 viewports, 8 blend
    states ...): the walk visits every byte-carrying scalar of the 1168-byte block."""
    rs = RenderState(W, H)
    leaves = [leaf for name, (want, _) in BLOCK.items()
              for leaf in _leaves(rs.p[name], want, name)]  # fmt: skip
    sizes = sum(np.asarray(got).dtype.itemsize for _, got, _ in leaves)
    scalars = sum(1 for _ in _scalar_fields(rs.p.dtype))
    assert len(leaves) == scalars
    assert sizes == sum(itemsize for itemsize in _scalar_fields(rs.p.dtype))


def _scalar_fields(dt: np.dtype):
    for n in dt.names:
        f = dt.fields[n][0]
        count = int(np.prod(f.shape)) if f.shape else 1
        base = f.base if f.shape else f
        if base.names:
            for _ in range(count):
                yield from _scalar_fields(base)
        else:
            for _ in range(count):
                yield base.itemsize


def test_the_client_starts_its_block_at_its_surface_size() -> None:
    with _client("gles") as c:
        assert _all(c.tr.rs) == []
        c.present()


def test_the_gl_tokens_are_the_gl_registry_s_values() -> None:
    """GLToken's values against an independent binding of the GL registry (PyOpenGL)."""
    assert _token_mismatches(vars(GLToken)) == []


def _token_mismatches(tokens: dict[str, Any]) -> list[str]:
    from OpenGL import GL

    return [f"GL_{n}: {v:#x}, the registry says {getattr(GL, f'GL_{n}'):#x}"
            for n, v in tokens.items() if n.isupper() and getattr(GL, f"GL_{n}") != v]  # fmt: skip


# -- negative controls: each planted defect is found and named ------------------------------
def test_negative_control_a_wrong_default_is_named_with_its_table_row() -> None:
    rs = RenderState(W, H)
    rs.p["ClearDepth"] = 0.0  # issue 17's bug: a depth test without clear_depth drew nothing
    assert _all(rs) == ["RenderStateParameters.ClearDepth: got 0.0, expected 1.0 "
                        f"({ES} 21.14 (Framebuffer Control) DEPTH_CLEAR_VALUE)"]  # fmt: skip


def test_negative_control_the_old_zero_viewport_and_scissor_fail_every_element() -> None:
    got = _all(RenderState())  # no surface: the 0 x 0 viewport and scissor box of before
    assert len([m for m in got if m.startswith("RenderStateParameters.Viewports[")]) == 16 * 2
    assert len([m for m in got if m.startswith("RenderStateParameters.ScissorBoxes[")]) == 16 * 2
    assert "RenderStateParameters.Viewports[0].Z: got 0.0, expected 64.0" in got[0]


def test_negative_control_an_enum_a_token_and_a_pixel_store_default_planted_wrong() -> None:
    rs = RenderState(W, H)
    rs.p["BlendStates"][3]["DstFactorAlpha"] = _t.enum("BlendFactor")["One"]
    rs.p["PolygonModeBack"] = 0
    rs.pixel_unpack["Alignment"] = 1
    got = _all(rs)
    assert [m.split(":")[0] for m in got] == [
        "RenderStateParameters.BlendStates[3].DstFactorAlpha",
        "RenderStateParameters.PolygonModeBack", "pixel_unpack.Alignment"]


def test_negative_control_a_member_without_a_row_and_a_row_without_a_member() -> None:
    table = dict(BLOCK)
    del table["ClipDistanceEnabledMask"]
    table["NoSuchMember"] = (0, "nowhere")
    assert mismatches(RenderState(W, H).p, table, "RenderStateParameters") == [
        "RenderStateParameters.ClipDistanceEnabledMask: no row in the table of GL's initial values",
        "RenderStateParameters.NoSuchMember: a row for no member of the block"]


def test_negative_control_a_wrong_gl_token_is_named() -> None:
    planted = dict(vars(GLToken), FILL=0x1B01)  # GL_LINE's value
    assert _token_mismatches(planted) == ["GL_FILL: 0x1b01, the registry says 0x1b02"]


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_a_draw_before_any_glviewport_covers_the_whole_surface(backend: str, monkeypatch) -> None:
    """What a user relies on: GL's initial viewport is the surface, so a full-screen quad
    drawn without glViewport fills every pixel, the corners included (and the scissor
    test enabled without glScissor keeps them). Control: a block that starts at half the
    surface draws the lower-left quadrant only (the backend draws the block's initial
    viewport, not its driver's); on Vulkan the 0 x 0 block of before drew nothing."""
    red, black = (255, 0, 0, 255), (0, 0, 0, 255)
    assert _corners(backend) == [red] * 4
    from mgpipe.runtime.client import tracker

    monkeypatch.setattr(tracker, "RenderState", lambda w, h: RenderState(w // 2, h // 2))
    assert _corners(backend) == [red, black, black, black]
    if backend == "vulkan":
        monkeypatch.setattr(tracker, "RenderState", lambda w, h: RenderState())
        assert _corners(backend) == [black] * 4


def _corners(backend: str) -> list[tuple[int, ...]]:
    from mgpipe.runtime.harness.scenes.kit import GL, capture, quad, setup

    with _client(backend) as c:
        setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))  # no glViewport, no glScissor
        c.clear_color(0.0, 0.0, 0.0, 1.0)
        c.clear()
        c.enable("ScissorTest")
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        img = capture(c, W, H)
        c.present()
    return [img.pixel(x, y) for x, y in ((0, 0), (W - 1, 0), (0, H - 1), (W - 1, H - 1))]


@contextmanager
def _client(backend: str) -> Iterator[Any]:
    """A client of a W x H surface on ``backend`` (the vulkan one under the validation
    layer: any message fails the test)."""
    if backend == "vulkan":
        from _vk_support import vk_client

        with vk_client(width=W, height=H) as (c, _be):
            yield c
        return
    from mgpipe.runtime.backends.gles import GlesBackend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.harness.runner import STAGE_CAPACITY
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = GlesBackend()
    stage = StageSegment(STAGE_CAPACITY)
    try:
        with Client(Applier(be, stage).apply, stage, width=W, height=H) as c:
            yield c
    finally:
        be.close()
