"""A shader CSO on the Vulkan side: SPIR-V modules + the layouts its reflection record names.

``ShaderProgram(dev, spirv, reflection)``: ``spirv`` maps the GL stage slot
(``MGPProgramDesc.Spirv`` index: vertex 0, tessellation control 1, evaluation 2,
geometry 3, fragment 4, compute 5) to SPIR-V bytes; ``reflection`` is the client's
reflection record (canonical JSON: ``inputs`` with their ``location``, ``uniforms`` and
``samplers`` with ``set``/``binding``/``stage``). From it come the vertex-input locations
the vertex stage consumes (a pipeline feeds only those), one descriptor set layout per
set (uniform blocks -> uniform buffers, samplers -> combined image samplers) and the
pipeline layout.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import vulkan as vk

from .device import VulkanDevice

__all__ = ["ShaderProgram", "STAGE_BITS", "ShaderRefused"]

STAGE_BITS = {
    0: vk.VK_SHADER_STAGE_VERTEX_BIT,
    1: vk.VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT,
    2: vk.VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT,
    3: vk.VK_SHADER_STAGE_GEOMETRY_BIT,
    4: vk.VK_SHADER_STAGE_FRAGMENT_BIT,
    5: vk.VK_SHADER_STAGE_COMPUTE_BIT,
}
_STAGE_NAMES = {"vert": 0, "tesc": 1, "tese": 2, "geom": 3, "frag": 4, "comp": 5}
_SPIRV_MAGIC = b"\x03\x02\x23\x07"


class ShaderRefused(ValueError):
    """The shader CSO cannot become Vulkan modules (names the stage and why)."""


class ShaderProgram:
    def __init__(self, dev: VulkanDevice, spirv: dict[int, bytes], reflection: bytes) -> None:
        self.dev = dev
        if 0 not in spirv or 5 in spirv:
            raise ShaderRefused("CreateShaderState.Spirv: a graphics program needs a vertex stage")
        for slot, code in spirv.items():
            if slot not in STAGE_BITS or len(code) % 4 or not code.startswith(_SPIRV_MAGIC):
                raise ShaderRefused(f"CreateShaderState.Spirv[{slot}]: not SPIR-V")
        try:
            self.reflection = json.loads(reflection.decode()) if reflection else {}
            self.inputs = frozenset(int(i["location"]) for i in self.reflection.get("inputs", ()))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError):
            raise ShaderRefused(
                "CreateShaderState.Reflection: not a reflection record (expected JSON with "
                "'inputs': [{'location': N, ...}], 'uniforms', 'samplers')"
            ) from None
        self.modules: dict[int, Any] = {}
        self.set_layouts: list[Any] = []
        self.layout = None
        self._stages: list[Any] | None = None
        try:
            for slot, code in sorted(spirv.items()):
                info = vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code)
                self.modules[slot] = vk.vkCreateShaderModule(dev.device, info, None)
            self.bindings = self._bindings()
            self._make_layouts()
        except Exception:
            self.destroy()
            raise

    def _bindings(self) -> dict[int, dict[int, tuple[int, int]]]:
        """``{set: {binding: (descriptor type, stage flags)}}`` from the reflection record."""
        out: dict[int, dict[int, tuple[int, int]]] = defaultdict(dict)
        kinds = (("uniforms", vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER),
                 ("samplers", vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER))  # fmt: skip
        for key, dtype in kinds:
            for item in self.reflection.get(key, ()):
                s, b = int(item.get("set", 0)), int(item["binding"])
                stage = STAGE_BITS[_STAGE_NAMES[item.get("stage", "frag")]]
                prev = out[s].get(b, (dtype, 0))
                out[s][b] = (dtype, prev[1] | stage)
        return dict(out)

    def _make_layouts(self) -> None:
        d = self.dev.device
        for s in range(max(self.bindings, default=-1) + 1):
            rows = [vk.VkDescriptorSetLayoutBinding(binding=b, descriptorType=t,
                                                    descriptorCount=1, stageFlags=st)
                    for b, (t, st) in sorted(self.bindings.get(s, {}).items())]  # fmt: skip
            info = vk.VkDescriptorSetLayoutCreateInfo(bindingCount=len(rows), pBindings=rows or None)
            self.set_layouts.append(vk.vkCreateDescriptorSetLayout(d, info, None))
        info = vk.VkPipelineLayoutCreateInfo(
            setLayoutCount=len(self.set_layouts), pSetLayouts=self.set_layouts or None
        )
        self.layout = vk.vkCreatePipelineLayout(d, info, None)

    def stage_infos(self) -> list[Any]:
        """The stage create infos (kept on the program: their entry-point strings must
        outlive every pipeline create call that copies them)."""
        if self._stages is None:
            self._stages = [
                vk.VkPipelineShaderStageCreateInfo(stage=STAGE_BITS[slot], module=m, pName="main")
                for slot, m in sorted(self.modules.items())
            ]
        return self._stages

    def destroy(self) -> None:
        d = self.dev.device
        for m in self.modules.values():
            vk.vkDestroyShaderModule(d, m, None)
        self.modules = {}
        if self.layout is not None:
            vk.vkDestroyPipelineLayout(d, self.layout, None)
            self.layout = None
        for sl in self.set_layouts:
            vk.vkDestroyDescriptorSetLayout(d, sl, None)
        self.set_layouts = []
