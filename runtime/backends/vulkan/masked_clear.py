"""GL's masked colour clear: ``glClear`` honours ``glColorMask`` (``vkCmdClearAttachments``
does not), so a clear whose mask is partial is a draw of the baked clear shaders
(:mod:`.internal_shaders`) over the scissor rectangle with the mask as the pipeline's
colour write masks. Pipelines are kept per (compatible render pass, masks).
"""

from __future__ import annotations

import struct
from typing import Any

import vulkan as vk

from .device import VulkanDevice
from .internal_shaders import load
from .targets import RenderPassKey

__all__ = ["MaskedClear"]


class MaskedClear:
    def __init__(self, dev: VulkanDevice) -> None:
        self.dev = dev
        d = dev.device
        self._modules: dict[str, Any] = {}
        rng = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_FRAGMENT_BIT, offset=0, size=16)
        self.layout = vk.vkCreatePipelineLayout(
            d, vk.VkPipelineLayoutCreateInfo(pushConstantRangeCount=1, pPushConstantRanges=[rng]),
            None,
        )  # fmt: skip
        self._pipelines: dict[tuple[RenderPassKey, tuple[int, ...]], Any] = {}
        self._keep: list[Any] = []
        self.created = 0

    def _module(self, name: str) -> Any:
        m = self._modules.get(name)
        if m is None:
            code = load(name)
            m = self._modules[name] = vk.vkCreateShaderModule(
                self.dev.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
            )
        return m

    def pipeline(self, key: RenderPassKey, masks: tuple[int, ...], render_pass: Any) -> Any:
        pk = (key, masks)
        pipe = self._pipelines.get(pk)
        if pipe is not None:
            return pipe
        n = len(key.colors)
        stages = [
            vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_VERTEX_BIT,
                                               module=self._module("clear.vert"), pName="main"),
            vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT,
                                               module=self._module(f"clear{n}.frag"), pName="main"),
        ]  # fmt: skip
        self._keep.append(stages)  # entry-point strings outlive the create call
        info = vk.VkGraphicsPipelineCreateInfo(
            stageCount=2, pStages=stages,
            pVertexInputState=vk.VkPipelineVertexInputStateCreateInfo(),
            pInputAssemblyState=vk.VkPipelineInputAssemblyStateCreateInfo(
                topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST),
            pViewportState=vk.VkPipelineViewportStateCreateInfo(viewportCount=1, scissorCount=1),
            pRasterizationState=vk.VkPipelineRasterizationStateCreateInfo(
                polygonMode=vk.VK_POLYGON_MODE_FILL, cullMode=vk.VK_CULL_MODE_NONE,
                frontFace=vk.VK_FRONT_FACE_COUNTER_CLOCKWISE, lineWidth=1.0),
            pMultisampleState=vk.VkPipelineMultisampleStateCreateInfo(
                rasterizationSamples=key.samples),
            pDepthStencilState=vk.VkPipelineDepthStencilStateCreateInfo(
                depthCompareOp=vk.VK_COMPARE_OP_ALWAYS),
            pColorBlendState=vk.VkPipelineColorBlendStateCreateInfo(
                attachmentCount=n,
                pAttachments=[vk.VkPipelineColorBlendAttachmentState(colorWriteMask=m) for m in masks]),
            pDynamicState=vk.VkPipelineDynamicStateCreateInfo(
                dynamicStateCount=2,
                pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR]),
            layout=self.layout, renderPass=render_pass, subpass=0,
        )  # fmt: skip
        pipe = vk.vkCreateGraphicsPipelines(self.dev.device, None, 1, [info], None)[0]
        self._pipelines[pk] = pipe
        self.created += 1
        return pipe

    def record(self, cmd: Any, pipe: Any, extent: tuple[int, int],
               rect: tuple[int, int, int, int], color: tuple[float, ...]) -> None:  # fmt: skip
        w, h = extent
        vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
        vk.vkCmdSetViewport(cmd, 0, 1, [vk.VkViewport(x=0, y=0, width=w, height=h,
                                                       minDepth=0.0, maxDepth=1.0)])  # fmt: skip
        vk.vkCmdSetScissor(cmd, 0, 1, [vk.VkRect2D(offset=vk.VkOffset2D(x=rect[0], y=rect[1]),
                                                   extent=vk.VkExtent2D(width=rect[2], height=rect[3]))])  # fmt: skip
        data = struct.pack("<4f", *color)
        vk.vkCmdPushConstants(cmd, self.layout, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 0, 16,
                              vk.ffi.from_buffer(data))  # fmt: skip
        vk.vkCmdDraw(cmd, 3, 1, 0, 0)

    def destroy(self) -> None:
        d = self.dev.device
        for pipe in self._pipelines.values():
            vk.vkDestroyPipeline(d, pipe, None)
        for m in self._modules.values():
            vk.vkDestroyShaderModule(d, m, None)
        vk.vkDestroyPipelineLayout(d, self.layout, None)
        self._pipelines.clear()
        self._modules.clear()
