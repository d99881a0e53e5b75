"""A shader CSO on the Vulkan side: SPIR-V modules + what its reflection record says.

``ShaderProgram(dev, spirv, reflection)``: ``spirv`` maps the GL stage slot
(``MGPProgramDesc.Spirv`` index: vertex 0, tessellation control 1, evaluation 2,
geometry 3, fragment 4, compute 5) to SPIR-V bytes; ``reflection`` is the client's
reflection record (canonical JSON: ``inputs`` with their ``location``; ``uniforms``,
``samplers``, ``images``, ``storage``, ``push_constants``). From it come the vertex-input
locations the vertex stage consumes (a pipeline feeds exactly those), and the program's
descriptor-set layouts (:class:`~.descriptors.ProgramResources`): uniform blocks (the
default block, ``gl_DefaultUniformBlock``, as a dynamic uniform buffer fed by
``SetGlobalConstants``), storage blocks and combined image samplers, one
``VkDescriptorSetLayout`` per set the reflection names. A compute program is the compute
stage alone (slot 5; :mod:`.compute` makes its pipeline); storage images (``images``) bind
as ``STORAGE_IMAGE`` descriptors. Push constants are refused by name.
"""

from __future__ import annotations

from typing import Any

import vulkan as vk

from ..limits import (check_spirv, load_reflection, spirv_input_locations,
                      spirv_writes_point_size)
from .device import VulkanDevice
from .descriptors import ProgramResources
from .errors import VulkanRefused

__all__ = ["ShaderProgram", "STAGE_BITS", "ShaderRefused", "local_size"]

STAGE_BITS = {
    0: vk.VK_SHADER_STAGE_VERTEX_BIT,
    1: vk.VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT,
    2: vk.VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT,
    3: vk.VK_SHADER_STAGE_GEOMETRY_BIT,
    4: vk.VK_SHADER_STAGE_FRAGMENT_BIT,
    5: vk.VK_SHADER_STAGE_COMPUTE_BIT,
}
#: Reflection keys naming resources this backend does not bind.
_RESOURCE_KEYS = ("push_constants",)
_SPIRV_MAGIC = b"\x03\x02\x23\x07"


def local_size(code: bytes) -> tuple[int, int, int] | None:
    """The compute entry point's ``LocalSize`` execution mode, read off the SPIR-V words."""
    words = memoryview(code).cast("I")
    at = 5
    while at < len(words):
        n, op = words[at] >> 16, words[at] & 0xFFFF
        if n == 0:
            break
        if op == 16 and n >= 6 and words[at + 2] == 17:  # OpExecutionMode <ep> LocalSize x y z
            return (int(words[at + 3]), int(words[at + 4]), int(words[at + 5]))
        at += n
    return None


class ShaderRefused(VulkanRefused):
    """The shader CSO cannot become Vulkan modules (names the stage and why)."""


class ShaderProgram:
    def __init__(self, dev: VulkanDevice, spirv: dict[int, bytes], reflection: bytes) -> None:
        self.dev = dev
        self.compute = 5 in spirv
        if self.compute and len(spirv) != 1:
            raise ShaderRefused("CreateShaderState.Spirv", "a compute program has the compute "
                                "stage alone (GL links no other stage with it)")  # fmt: skip
        if not self.compute and 0 not in spirv:
            raise ShaderRefused(
                "CreateShaderState.Spirv", "a graphics program needs a vertex stage"
            )
        for slot, code in spirv.items():
            if slot not in STAGE_BITS or len(code) % 4 or not code.startswith(_SPIRV_MAGIC):
                raise ShaderRefused(f"CreateShaderState.Spirv[{slot}]", "not SPIR-V")
            check_spirv(f"CreateShaderState.Spirv[{slot}]", code)  # framed as SPIR-V frames it
        try:
            self.reflection = load_reflection("CreateShaderState", reflection)
            self.inputs = frozenset(int(i["location"]) for i in self.reflection.get("inputs", ()))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError,
                RecursionError):
            raise ShaderRefused(
                "CreateShaderState.Reflection",
                "not a reflection record (expected JSON with 'inputs': [{'location': N, ...}])",
            ) from None
        # what the vertex stage reads (a compute program has none)
        fetched = spirv_input_locations(spirv[0]) - self.inputs if 0 in spirv else frozenset()
        if fetched:
            raise ShaderRefused("CreateShaderState.Reflection", f"the vertex stage reads "
                                f"locations {sorted(fetched)} the reflection does not list")  # fmt: skip
        resources = sorted(k for k in _RESOURCE_KEYS if self.reflection.get(k))
        if resources:
            raise ShaderRefused(
                "CreateShaderState.Reflection",
                f"the program declares {', '.join(resources)}: this backend binds no "
                "push constants (GL has none)",
            )
        self.resources = ProgramResources(self.reflection)
        self.local_size = local_size(spirv[5]) if self.compute else None
        self.tessellated = 1 in spirv or 2 in spirv
        #: GL_POINTS needs it on Vulkan (VUID-VkGraphicsPipelineCreateInfo-Vertex-07722)
        self.writes_point_size = 0 in spirv and spirv_writes_point_size(spirv[0])
        if self.tessellated and not dev.features.get("tessellationShader"):
            raise ShaderRefused("CreateShaderState.Spirv", "tessellation stages: the device "
                                "has no tessellationShader")  # fmt: skip
        self.modules: dict[int, Any] = {}
        self.layout = None
        self.set_layouts: list[Any] = []
        self._stages: list[Any] | None = None
        try:
            for slot, code in sorted(spirv.items()):
                info = vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code)
                self.modules[slot] = vk.vkCreateShaderModule(dev.device, info, None)
            self.set_layouts = self.resources.create_layouts(dev)
            info = vk.VkPipelineLayoutCreateInfo(setLayoutCount=len(self.set_layouts),
                                                 pSetLayouts=self.set_layouts or None)  # fmt: skip
            self.layout = vk.vkCreatePipelineLayout(dev.device, info, None)
        except Exception:
            self.destroy()
            raise

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
