"""The pipeline memo (Magma's shape, seed 000 §4.2, rekeyed on the CSO as seed 001 §5.3 decides).

A :class:`PipelineKey` is (render-state CSO handle, shader CSO handle, vertex layout,
compatible render-pass key, primitive topology, primitive restart). The CSO handle is the
identity of the pipeline subset: the memo never hashes the block, and nothing of the
dynamic half can reach the key, so ``glViewport`` / ``glScissor`` / ``glBlendColor`` /
stencil reference changes never create a pipeline. The handle is ``{slot, gen}`` (a
recycled slot is a new key even before its old pipelines retire).

On a miss the create info is built from :func:`~.pipeline_state.decode` of the working
block (which holds the bound CSO's pipeline subset), with exactly the eight dynamic
states of :data:`DYNAMIC_STATES`, through one ``VkPipelineCache``.

:meth:`PipelineMemo.retire` (``DeleteRenderState``, ``DeleteShaderState``) drops every
pipeline keyed on the object and hands its destruction to the deletion queue.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

import vulkan as vk

from .device import VulkanDevice
from .pipeline_state import PipelineDesc
from .shaders import ShaderProgram
from .targets import RenderPassKey
from .vk_enums import LIST_TOPOLOGIES

__all__ = ["DYNAMIC_STATES", "VertexLayout", "PipelineKey", "PipelineMemo", "create_info"]

#: The eight dynamic states Magma declares (PipelineFactory.cpp:390-397); nothing else.
DYNAMIC_STATES = (
    vk.VK_DYNAMIC_STATE_VIEWPORT,
    vk.VK_DYNAMIC_STATE_SCISSOR,
    vk.VK_DYNAMIC_STATE_BLEND_CONSTANTS,
    vk.VK_DYNAMIC_STATE_DEPTH_BIAS,
    vk.VK_DYNAMIC_STATE_LINE_WIDTH,
    vk.VK_DYNAMIC_STATE_STENCIL_COMPARE_MASK,
    vk.VK_DYNAMIC_STATE_STENCIL_WRITE_MASK,
    vk.VK_DYNAMIC_STATE_STENCIL_REFERENCE,
)


DEFAULT_FORMAT = vk.VK_FORMAT_R32G32B32A32_SFLOAT


@dataclass(frozen=True)
class VertexLayout:
    """Vertex input: ``bindings`` (binding, stride, per-instance) and ``attributes``
    (location, binding, VkFormat, offset)."""

    bindings: tuple[tuple[int, int, bool], ...]
    attributes: tuple[tuple[int, int, int, int], ...]

    def __hash__(self) -> int:  # keys are hashed per draw: compute once
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.bindings, self.attributes))
            object.__setattr__(self, "_hash", h)
        return h

    def for_shader(self, inputs: frozenset[int], defaults: int | None = None) -> "VertexLayout":
        """Only the attributes the vertex stage consumes and the bindings they read; an
        input no enabled array feeds reads its current generic value (GL's
        ``glVertexAttrib4f``, initially (0, 0, 0, 1)) from binding ``defaults`` (stride 0,
        one vec4 per location)."""
        memo = self.__dict__.setdefault("_for", {})
        hit = memo.get((inputs, defaults))
        if hit is not None:
            return hit
        memo[(inputs, defaults)] = out = self._for_shader(inputs, defaults)
        return out

    def _for_shader(self, inputs: frozenset[int], defaults: int | None) -> "VertexLayout":
        attrs = tuple(a for a in self.attributes if a[0] in inputs)
        used = {a[1] for a in attrs}
        binds = tuple(b for b in self.bindings if b[0] in used)
        missing = sorted(inputs - {a[0] for a in attrs})
        if missing and defaults is not None:
            binds += ((defaults, 0, False),)
            attrs += tuple((loc, defaults, DEFAULT_FORMAT, loc * 16) for loc in missing)
        return VertexLayout(binds, attrs)


class PipelineKey(NamedTuple):
    """Built and hashed once per draw: a plain tuple (no per-field setattr)."""

    cso: Hashable  # render-state CSO handle {slot, gen}
    shader: Hashable  # shader CSO handle
    vertex: VertexLayout
    render_pass: RenderPassKey  # compatible key (no load ops)
    topology: int
    restart: bool
    patch: int = 0  # a patch list's control points (tessellation), else 0


def create_info(desc: PipelineDesc, key: PipelineKey, shader: ShaderProgram,
                render_pass: Any) -> Any:  # fmt: skip
    vl = key.vertex
    vertex = vk.VkPipelineVertexInputStateCreateInfo(
        vertexBindingDescriptionCount=len(vl.bindings),
        pVertexBindingDescriptions=[
            vk.VkVertexInputBindingDescription(
                binding=b, stride=s,
                inputRate=vk.VK_VERTEX_INPUT_RATE_INSTANCE if inst else vk.VK_VERTEX_INPUT_RATE_VERTEX)
            for b, s, inst in vl.bindings] or None,
        vertexAttributeDescriptionCount=len(vl.attributes),
        pVertexAttributeDescriptions=[
            vk.VkVertexInputAttributeDescription(location=loc, binding=b, format=f, offset=o)
            for loc, b, f, o in vl.attributes] or None,
    )  # fmt: skip
    assembly = vk.VkPipelineInputAssemblyStateCreateInfo(
        topology=key.topology,
        primitiveRestartEnable=vk.VK_TRUE if key.restart and key.topology not in LIST_TOPOLOGIES
        else vk.VK_FALSE,
    )  # fmt: skip
    clip = None
    if "VK_EXT_depth_clip_control" in shader.dev.extensions:  # GL's [-1, 1] clip depth
        clip = vk.VkPipelineViewportDepthClipControlCreateInfoEXT(negativeOneToOne=vk.VK_TRUE)
    viewport = vk.VkPipelineViewportStateCreateInfo(pNext=clip, viewportCount=1, scissorCount=1)
    raster = vk.VkPipelineRasterizationStateCreateInfo(
        depthClampEnable=desc.depth_clamp, rasterizerDiscardEnable=desc.rasterizer_discard,
        polygonMode=desc.polygon_mode, cullMode=desc.cull_mode, frontFace=desc.front_face,
        depthBiasEnable=desc.depth_bias, lineWidth=1.0,
    )  # fmt: skip
    multisample = vk.VkPipelineMultisampleStateCreateInfo(
        rasterizationSamples=key.render_pass.samples, sampleShadingEnable=desc.sample_shading,
        minSampleShading=desc.min_sample_shading, pSampleMask=[desc.sample_mask],
    )  # fmt: skip

    def stencil(s: Any) -> Any:
        return vk.VkStencilOpState(failOp=s.fail, passOp=s.pass_, depthFailOp=s.depth_fail,
                                   compareOp=s.compare, compareMask=0xFF, writeMask=0xFF,
                                   reference=0)  # fmt: skip

    depth = vk.VkPipelineDepthStencilStateCreateInfo(
        depthTestEnable=desc.depth_test, depthWriteEnable=desc.depth_write,
        depthCompareOp=desc.depth_compare, stencilTestEnable=desc.stencil_test,
        front=stencil(desc.stencil_front), back=stencil(desc.stencil_back),
        minDepthBounds=0.0, maxDepthBounds=1.0,
    )  # fmt: skip
    blend = vk.VkPipelineColorBlendStateCreateInfo(
        logicOpEnable=desc.logic_op is not None,
        logicOp=desc.logic_op if desc.logic_op is not None else vk.VK_LOGIC_OP_COPY,
        attachmentCount=len(desc.blend),
        pAttachments=[
            vk.VkPipelineColorBlendAttachmentState(
                blendEnable=a.enabled, srcColorBlendFactor=a.src_rgb,
                dstColorBlendFactor=a.dst_rgb, colorBlendOp=a.op_rgb,
                srcAlphaBlendFactor=a.src_alpha, dstAlphaBlendFactor=a.dst_alpha,
                alphaBlendOp=a.op_alpha, colorWriteMask=a.write_mask)
            for a in desc.blend] or None,
    )  # fmt: skip
    dynamic = vk.VkPipelineDynamicStateCreateInfo(
        dynamicStateCount=len(DYNAMIC_STATES), pDynamicStates=list(DYNAMIC_STATES)
    )
    tess = None
    if key.patch:
        tess = vk.VkPipelineTessellationStateCreateInfo(patchControlPoints=key.patch)
    return vk.VkGraphicsPipelineCreateInfo(
        stageCount=len(shader.modules), pStages=shader.stage_infos(), pTessellationState=tess,
        pVertexInputState=vertex, pInputAssemblyState=assembly, pViewportState=viewport,
        pRasterizationState=raster, pMultisampleState=multisample,
        pDepthStencilState=depth, pColorBlendState=blend, pDynamicState=dynamic,
        layout=shader.layout, renderPass=render_pass, subpass=0,
    )  # fmt: skip


class PipelineMemo:
    """``PipelineKey -> VkPipeline``; ``created`` counts ``vkCreateGraphicsPipelines``."""

    def __init__(self, dev: VulkanDevice, defer: Callable[[Callable[[], None]], None]) -> None:
        self.dev = dev
        self.defer = defer
        self.cache = vk.vkCreatePipelineCache(dev.device, vk.VkPipelineCacheCreateInfo(), None)
        self._memo: dict[PipelineKey, Any] = {}
        self._by_object: dict[Hashable, set[PipelineKey]] = defaultdict(set)
        self.created = 0
        self.hits = 0
        self.retired = 0

    def __len__(self) -> int:
        return len(self._memo)

    def get(self, key: PipelineKey, make_desc: Callable[[], PipelineDesc],
            shader: ShaderProgram, render_pass: Any) -> Any:  # fmt: skip
        pipe = self._memo.get(key)
        if pipe is not None:
            self.hits += 1
            return pipe
        info = create_info(make_desc(), key, shader, render_pass)
        pipe = vk.vkCreateGraphicsPipelines(self.dev.device, self.cache, 1, [info], None)[0]
        self.created += 1
        self._memo[key] = pipe
        self._by_object[key.cso].add(key)
        self._by_object[key.shader].add(key)
        return pipe

    def retire(self, obj: Hashable) -> int:
        """Drop every pipeline keyed on ``obj`` (a CSO or shader handle); destroyed once retired."""
        keys = self._by_object.pop(obj, set())
        for key in keys:
            pipe = self._memo.pop(key, None)
            if pipe is None:
                continue
            other = key.shader if key.cso == obj else key.cso
            self._by_object.get(other, set()).discard(key)
            self.defer(lambda p=pipe: vk.vkDestroyPipeline(self.dev.device, p, None))
            self.retired += 1
        return len(keys)

    def destroy(self) -> None:
        for pipe in self._memo.values():
            vk.vkDestroyPipeline(self.dev.device, pipe, None)
        self._memo.clear()
        self._by_object.clear()
        vk.vkDestroyPipelineCache(self.dev.device, self.cache, None)
