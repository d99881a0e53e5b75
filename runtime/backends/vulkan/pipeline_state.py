"""The pipeline half of ``RenderStateParameters``, decoded for a ``VkGraphicsPipeline``.

:func:`decode` reads the working block through the generated layout (member names, never
offsets) and returns a frozen :class:`PipelineDesc`: exactly what the create info bakes.
The render pass and the draw decide the rest of the gating (Magma's shape, seed 000
§4.2): a pass without depth turns depth and stencil testing off; a point or line
topology never enables depth bias (GL's ``POLYGON_OFFSET_FILL`` is a fill-mode switch).

Not translated (no core Vulkan pipeline state for them, and GLES scenes do not rely on
them): dither, line/polygon smoothing, sample coverage value, alpha-to-one; the
provoking vertex (Vulkan's first-vertex convention differs from GL's last-vertex default
only for flat-shaded varyings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import vulkan as vk

from .dynamic_tail import vector
from .vk_enums import (
    DUAL_SOURCE_FACTORS,
    TRIANGLE_TOPOLOGIES,
    UnsupportedEnum,
    catalogue_map,
    polygon_mode,
)

__all__ = ["BlendAttachment", "StencilOps", "PipelineDesc", "decode"]

_RGBA = (vk.VK_COLOR_COMPONENT_R_BIT, vk.VK_COLOR_COMPONENT_G_BIT,
         vk.VK_COLOR_COMPONENT_B_BIT, vk.VK_COLOR_COMPONENT_A_BIT)  # fmt: skip


@dataclass(frozen=True)
class BlendAttachment:
    enabled: bool
    src_rgb: int
    dst_rgb: int
    op_rgb: int
    src_alpha: int
    dst_alpha: int
    op_alpha: int
    write_mask: int


@dataclass(frozen=True)
class StencilOps:
    fail: int
    pass_: int
    depth_fail: int
    compare: int


@dataclass(frozen=True)
class PipelineDesc:
    blend: tuple[BlendAttachment, ...]
    logic_op: int | None  # None: logic op disabled
    depth_test: bool
    depth_write: bool
    depth_compare: int
    depth_clamp: bool
    stencil_test: bool
    stencil_front: StencilOps
    stencil_back: StencilOps
    cull_mode: int
    front_face: int
    polygon_mode: int
    depth_bias: bool
    rasterizer_discard: bool
    sample_mask: int
    sample_shading: bool
    min_sample_shading: float


def _b(x: Any) -> bool:
    return bool(int(x))


def _stencil(face: Any, ops: dict[int, int], cmp: dict[int, int]) -> StencilOps:
    return StencilOps(ops[int(face["FailOp"])], ops[int(face["PassDepthPassOp"])],
                      ops[int(face["PassDepthFailOp"])], cmp[int(face["Func"])])  # fmt: skip


def decode(p: np.void, color_count: int, has_depth: bool, has_stencil: bool, topology: int,
           features: dict[str, bool]) -> PipelineDesc:  # fmt: skip
    """The create-info state for a draw of ``topology`` into a pass with these attachments."""
    factor = catalogue_map("BlendFactor")
    equation = catalogue_map("BlendEquation")
    cmp = catalogue_map("DepthTestFunc")
    ops = catalogue_map("StencilOperation")
    blends = []
    states, masks = p["BlendStates"], p["ColorMasks"]
    for i in range(color_count):
        s = states[i]
        mask = 0
        for bit, on in zip(_RGBA, vector(masks[i])):
            mask |= bit if on else 0
        a = BlendAttachment(
            _b(s["Enabled"]), factor[int(s["SrcFactorRGB"])], factor[int(s["DstFactorRGB"])],
            equation[int(s["ColorEquation"])], factor[int(s["SrcFactorAlpha"])],
            factor[int(s["DstFactorAlpha"])], equation[int(s["AlphaEquation"])], mask,
        )  # fmt: skip
        used = {a.src_rgb, a.dst_rgb, a.src_alpha, a.dst_alpha}
        if used & DUAL_SOURCE_FACTORS and not features.get("dualSrcBlend"):
            raise UnsupportedEnum(f"RenderStateParameters.BlendStates[{i}]",
                                  "a Src1 blend factor needs the dualSrcBlend feature")  # fmt: skip
        blends.append(a)
    logic = None
    if _b(p["ColorLogicOpEnabled"]) and features.get("logicOp"):
        logic = catalogue_map("LogicOperation")[int(p["LogicOp"])]
    depth_test = has_depth and _b(p["DepthTestEnabled"])
    stencil_test = has_stencil and _b(p["StencilTestEnabled"])
    poly = polygon_mode(int(p["PolygonModeFront"]))
    if poly != vk.VK_POLYGON_MODE_FILL and not features.get("fillModeNonSolid"):
        poly = vk.VK_POLYGON_MODE_FILL
    triangles = topology in TRIANGLE_TOPOLOGIES
    depth_bias = (_b(p["PolygonOffsetFillEnabled"]) and triangles
                  and poly == vk.VK_POLYGON_MODE_FILL)  # fmt: skip
    multisample = _b(p["MultisampleEnabled"])
    sample_mask = 0xFFFFFFFF
    if multisample and _b(p["SampleMaskEnabled"]):
        sample_mask = int(p["SampleMaskValue"])
    shading = (
        multisample and _b(p["SampleShadingEnabled"]) and bool(features.get("sampleRateShading"))
    )
    cull = vk.VK_CULL_MODE_NONE
    if _b(p["CullFaceEnabled"]):
        cull = catalogue_map("CullFaceMode")[int(p["CullFaceModeSetting"])]
    return PipelineDesc(
        blend=tuple(blends), logic_op=logic,
        depth_test=depth_test, depth_write=depth_test and _b(p["DepthMask"]),
        depth_compare=cmp[int(p["DepthFunc"])],
        depth_clamp=_b(p["DepthClampEnabled"]) and bool(features.get("depthClamp")),
        stencil_test=stencil_test,
        stencil_front=_stencil(p["StencilStates"][0], ops, cmp),
        stencil_back=_stencil(p["StencilStates"][1], ops, cmp),
        cull_mode=cull,
        front_face=catalogue_map("FrontFaceMode")[int(p["FrontFaceModeSetting"])],
        polygon_mode=poly, depth_bias=depth_bias,
        rasterizer_discard=_b(p["RasterizerDiscardEnabled"]),
        sample_mask=sample_mask, sample_shading=shading,
        min_sample_shading=float(p["MinSampleShadingValue"]) if shading else 0.0,
    )  # fmt: skip
