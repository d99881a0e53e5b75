"""Shader resources on the Vulkan side: set layouts from the reflection record, samplers,
sampler views, the default-block uniform ring and descriptor sets memoised per program.

:class:`ProgramResources` reads the reflection record (``uniforms``, ``storage``,
``samplers``: ``set``, ``binding``, ``array``, ``block_size``, ``stage``): one binding per
(set, binding), stage flags the union of the stages that declare it. The block named
``gl_DefaultUniformBlock`` is the program's default block: a dynamic uniform buffer whose
bytes ``SetGlobalConstants`` brings (:class:`UniformRing`). A uniform block's binding is
its GL binding point (``SetShaderBuffers`` class ``Uniform`` window, overridden by
``SetProgramBindings``' block bindings in reflection order); a storage block's its
``ShaderStorage`` point; an atomic-counter block (glslang's ``gl_AtomicCounterBlock_N``)
the ``AtomicCounter`` point N, whatever its descriptor binding; a storage image's (reflection
``images``, ``STORAGE_IMAGE``) its image unit; a sampler's its texture unit
(``SetSamplerViews`` / ``BindSamplerStates`` windows, overridden by ``SetProgramBindings``'
sampler units).

:class:`DescriptorAllocator` hands out sets from pools it grows; a set is never written
while a submission may read it: a changed binding takes a new set, the old one is freed
when its frame's fence has signalled; the allocator asks only its current pool (O(1)
amortised, full pools reused once their sets have retired).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import vulkan as vk

from ...schema import layouts
from ...schema import tables as _t
from .errors import VulkanRefused
from .memory import GpuBuffer

__all__ = ["ProgramResources", "Binding", "DescriptorAllocator", "UniformRing", "SamplerObject",
           "DEFAULT_BLOCK", "make_view"]  # fmt: skip

DEFAULT_BLOCK = "gl_DefaultUniformBlock"
_STAGES = {"vert": vk.VK_SHADER_STAGE_VERTEX_BIT, "tesc": vk.VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT,
           "tese": vk.VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT,
           "geom": vk.VK_SHADER_STAGE_GEOMETRY_BIT, "frag": vk.VK_SHADER_STAGE_FRAGMENT_BIT,
           "comp": vk.VK_SHADER_STAGE_COMPUTE_BIT}  # fmt: skip
#: glslang's relaxed rules gather GL atomic counters of binding point N into a storage block
#: of this name + N (the counters' ``offset`` qualifiers are the block's member offsets)
ATOMIC_BLOCK = "gl_AtomicCounterBlock_"


@dataclass
class Binding:
    kind: str  # "default", "uniform", "storage", "atomic", "sampler", "image"
    set: int
    binding: int
    count: int
    stages: int
    name: str
    size: int = 0  # block bytes
    type: str = ""  # the sampler's GLSL type
    index: int = 0  # its place among the program's blocks / samplers (SetProgramBindings)

    @property
    def vk_type(self) -> int:
        return {"default": vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC,
                "uniform": vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                "storage": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                "atomic": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                "sampler": vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                "image": vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE}[self.kind]  # fmt: skip


class ProgramResources:
    def __init__(self, reflection: dict) -> None:
        merged: dict[tuple[int, int], Binding] = {}
        # the client's uniform locations: the default block's members, then the samplers
        # (names in reflection order, once each); a sampler unit row names its location
        locations: dict[str, int] = {}
        for e in list(reflection.get("default_block", ())) + list(reflection.get("samplers", ())):
            locations.setdefault(str(e.get("name", "")), len(locations))
        for key, kind in (("uniforms", "uniform"), ("storage", "storage"), ("samplers", "sampler"),
                          ("images", "image")):  # fmt: skip
            for pos, e in enumerate(reflection.get(key, ())):
                try:
                    s, b = int(e.get("set", 0)), int(e["binding"])
                    count = int(np.prod(e.get("array") or [1]))
                    stage = _STAGES[e.get("stage", "frag")]
                except (KeyError, TypeError, ValueError):
                    raise VulkanRefused("CreateShaderState.Reflection",
                                        f"{key} entry {e!r}: no set / binding / stage") from None  # fmt: skip
                name = str(e.get("name", ""))
                k = "default" if kind == "uniform" and name == DEFAULT_BLOCK else kind
                if kind == "storage" and name.startswith(ATOMIC_BLOCK):
                    k = "atomic"
                have = merged.get((s, b))
                if have is not None:
                    if have.kind != k:
                        raise VulkanRefused("CreateShaderState.Reflection",
                                            f"set {s} binding {b} is both {have.kind} and {k}")  # fmt: skip
                    have.stages |= stage
                    continue
                # uniform blocks: the reflection row (SetProgramBindings' block bindings
                # run over the reflection's uniform rows); samplers: the location
                idx = locations.get(name, pos) if kind == "sampler" else pos
                merged[(s, b)] = Binding(k, s, b, count, stage, name, int(e.get("block_size", 0)),
                                         str(e.get("type", "")), idx)  # fmt: skip
        self.bindings = sorted(merged.values(), key=lambda x: (x.set, x.binding))
        self.sets = (max(b.set for b in self.bindings) + 1) if self.bindings else 0
        self.default = next((b for b in self.bindings if b.kind == "default"), None)
        #: the program may write buffers (storage blocks, atomic counters)
        self.writes = any(b.kind in ("storage", "atomic") for b in self.bindings)

    def create_layouts(self, dev: Any) -> list[Any]:
        out = []
        for s in range(self.sets):
            rows = [vk.VkDescriptorSetLayoutBinding(binding=b.binding, descriptorType=b.vk_type,
                                                    descriptorCount=b.count, stageFlags=b.stages)
                    for b in self.bindings if b.set == s]  # fmt: skip
            info = vk.VkDescriptorSetLayoutCreateInfo(
                bindingCount=len(rows), pBindings=rows or None
            )
            out.append(vk.vkCreateDescriptorSetLayout(dev.device, info, None))
        return out


def _fix_extension_error_codes() -> int:
    """The ``vulkan`` binding (1.3.275) spells some extension result codes with the wrong sign
    (``VK_ERROR_OUT_OF_POOL_MEMORY`` = +1000069000, where the driver returns -1000069000), so
    the driver's real code raises a bare ``KeyError`` instead of the named exception. Register
    the negative code for every ``VK_ERROR_*`` the binding spells positive; returns how many."""
    table = getattr(getattr(vk, "_vulkan", None), "exception_codes", None)
    if not isinstance(table, dict):
        return 0
    added = 0
    for name in dir(vk):
        code = getattr(vk, name) if name.startswith("VK_ERROR_") else None
        if isinstance(code, int) and code > 0 and code in table and -code not in table:
            table[-code] = table[code]
            added += 1
    return added


EXTENSION_CODES_FIXED = _fix_extension_error_codes()


class DescriptorAllocator:
    """Sets from pools of :data:`POOL_SETS`, O(1) amortised per set.

    The allocator remembers its current pool and asks only that one; when the driver
    answers out-of-pool (or fragmented), the current pool is set aside as *full* and a
    spare one takes over: a full pool whose every set has been freed (each free runs only
    once the set's submission has retired, through ``defer``) is reset and becomes a spare,
    else a new pool is opened. So every set costs one ``vkAllocateDescriptorSets``, plus one
    more per pool that fills -- never a walk over the full pools. ``attempts`` counts the
    driver calls, ``allocated`` the sets handed out, ``recycled`` the pools reused."""

    POOL_SETS = 256
    #: descriptor types a pool holds (``POOL_SETS`` x 8 of each)
    TYPES = (vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
             vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
             vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE)  # fmt: skip

    def __init__(self, dev: Any, defer: Callable[[Callable[[], None]], None]) -> None:
        self.dev, self.defer = dev, defer
        self.pools: list[Any] = []  # every pool opened (destroyed at close)
        self.current: Any = None
        self._live: dict[Any, int] = {}  # pool -> sets handed out and not yet freed
        self._full: set[Any] = set()  # pools that answered out-of-pool, sets still live
        self._spare: list[Any] = []  # full pools whose sets were all freed (reset)
        self.allocated = 0
        self.attempts = 0  # vkAllocateDescriptorSets calls
        self.recycled = 0
        self.updates = 0  # vkUpdateDescriptorSets calls
        self.reused = 0  # draws answered by a cached set (the backend's per-program cache)

    def _pool(self) -> Any:
        n = self.POOL_SETS
        sizes = [vk.VkDescriptorPoolSize(type=t, descriptorCount=n * 8) for t in self.TYPES]
        info = vk.VkDescriptorPoolCreateInfo(
            flags=vk.VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT, maxSets=n,
            poolSizeCount=len(sizes), pPoolSizes=sizes)  # fmt: skip
        pool = vk.vkCreateDescriptorPool(self.dev.device, info, None)
        self.pools.append(pool)
        self._live[pool] = 0
        return pool

    def _try(self, pool: Any, layout: Any) -> Any:
        info = vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                              pSetLayouts=[layout])  # fmt: skip
        self.attempts += 1
        try:
            return vk.vkAllocateDescriptorSets(self.dev.device, info)[0]
        except (vk.VkErrorOutOfPoolMemory, vk.VkErrorFragmentedPool):
            return None

    def allocate(self, layout: Any) -> tuple[Any, Any]:
        pool = self.current
        dset = self._try(pool, layout) if pool is not None else None
        if dset is None:
            if pool is not None:
                if self._live[pool]:
                    self._full.add(pool)
                else:  # empty and still out of room: the layout is past a whole pool
                    self._spare.append(pool)
            if self._spare:
                pool = self._spare.pop()
                self.recycled += 1
            else:
                pool = self._pool()
            self.current = pool
            dset = self._try(pool, layout)
            if dset is None:
                raise VulkanRefused("descriptor set", f"one set of the layout is past a pool of "
                                    f"{self.POOL_SETS} sets x 8 descriptors of each type")  # fmt: skip
        self._live[pool] += 1
        self.allocated += 1
        return pool, dset

    def _release(self, pool: Any, dset: Any) -> None:
        vk.vkFreeDescriptorSets(self.dev.device, pool, 1, [dset])
        self._live[pool] -= 1
        if not self._live[pool] and pool in self._full:  # every set retired: a spare
            self._full.discard(pool)
            vk.vkResetDescriptorPool(self.dev.device, pool, 0)
            self._spare.append(pool)

    def free(self, pool: Any, dset: Any) -> None:
        self.defer(lambda: self._release(pool, dset))

    def destroy(self) -> None:
        for p in self.pools:
            vk.vkDestroyDescriptorPool(self.dev.device, p, None)
        self.pools, self._live, self._full, self._spare, self.current = [], {}, set(), [], None


class UniformRing:
    """The default blocks' bytes: bump-allocated in host-visible chunks; a full chunk
    retires with the frame (fence), a new one takes over. ``(ShaderCso, Version)`` ->
    ``(chunk, offset)``: a version is written once, every draw of it reads the same bytes."""

    CHUNK = 256 << 10

    def __init__(self, dev: Any, defer: Callable[[Callable[[], None]], None]) -> None:
        self.dev, self.defer = dev, defer
        self.align = max(int(dev.limits.minUniformBufferOffsetAlignment), 16)
        self.chunk = GpuBuffer(dev, self.CHUNK, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)
        self.top = 0
        self.memo: dict[Any, tuple[GpuBuffer, int]] = {}
        self.writes = 0
        self.chunks = 1

    def put(self, key: Any, data: bytes) -> tuple[GpuBuffer, int]:
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        n = -(-max(len(data), 16) // self.align) * self.align
        if n > self.CHUNK:
            raise VulkanRefused("SetGlobalConstants.Blob", f"{len(data)} bytes: past {self.CHUNK}")
        if self.top + n > self.CHUNK:
            self.defer(self.chunk.destroy)
            self.chunk = GpuBuffer(self.dev, self.CHUNK, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)
            self.top, self.memo = 0, {}
            self.chunks += 1
            from .resources import EPOCH

            EPOCH[0] += 1  # sets that name the old chunk are rebuilt
        self.chunk.write(self.top, data)
        hit = self.memo[key] = (self.chunk, self.top)
        self.top += n
        self.writes += 1
        return hit

    def destroy(self) -> None:
        self.chunk.destroy()


# -- samplers ---------------------------------------------------------------------------
def _names(enum: str) -> dict[int, str]:
    return {int(v): k for k, v in _t.enum(enum).items()}


class SamplerObject:
    """A ``VkSampler`` made from one ``SamplerParameters`` record (a sampler CSO)."""

    def __init__(self, dev: Any, params: Any, where: str = "CreateSamplerState.Parameters") -> None:
        self.dev = dev
        wrap, filt, mip = (
            _names("SamplerWrapMode"),
            _names("SamplerFilterMode"),
            _names("SamplerMipmapMode"),
        )
        cfunc, cmode = _names("SamplerCompareFunc"), _names("SamplerCompareMode")
        wraps = {"ClampToEdge": vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
                 "MirroredRepeat": vk.VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT,
                 "Repeat": vk.VK_SAMPLER_ADDRESS_MODE_REPEAT,
                 "ClampToBorder": vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER}  # fmt: skip
        filters = {"Nearest": vk.VK_FILTER_NEAREST, "Linear": vk.VK_FILTER_LINEAR}
        ops = {"Never": vk.VK_COMPARE_OP_NEVER, "Less": vk.VK_COMPARE_OP_LESS,
               "Equal": vk.VK_COMPARE_OP_EQUAL, "LessEqual": vk.VK_COMPARE_OP_LESS_OR_EQUAL,
               "Greater": vk.VK_COMPARE_OP_GREATER, "NotEqual": vk.VK_COMPARE_OP_NOT_EQUAL,
               "GreaterEqual": vk.VK_COMPARE_OP_GREATER_OR_EQUAL, "Always": vk.VK_COMPARE_OP_ALWAYS}  # fmt: skip

        def pick(table: dict, names: dict, member: str) -> int:
            v = int(params[member])
            name = names.get(v)
            if name not in table:
                raise VulkanRefused(f"{where}.{member}", f"{v} ({name}): no Vulkan sampler state")
            return table[name]

        address = [pick(wraps, wrap, m) for m in ("wrapS", "wrapT", "wrapR")]
        mag, minf = pick(filters, filt, "magFilter"), pick(filters, filt, "minFilter")
        mipname = mip.get(int(params["mipmapMode"]))
        if mipname not in ("None", "Nearest", "Linear"):
            raise VulkanRefused(
                f"{where}.mipmapMode", f"{int(params['mipmapMode'])} is no mipmap mode"
            )
        min_lod, max_lod = float(params["minLod"]), float(params["maxLod"])
        if mipname == "None":  # GL's non-mipmapped minification: level base only
            min_lod, max_lod = 0.0, 0.25
        compare = cmode.get(int(params["compareMode"])) == "CompareToTexture"
        aniso = float(params["maxAnisotropy"])
        if aniso > 1.0 and not dev.features.get("samplerAnisotropy"):
            raise VulkanRefused(
                f"{where}.maxAnisotropy", f"{aniso}: the device has no samplerAnisotropy"
            )
        border = self._border(params, where, address)
        info = vk.VkSamplerCreateInfo(
            magFilter=mag, minFilter=minf,
            mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_LINEAR if mipname == "Linear"
            else vk.VK_SAMPLER_MIPMAP_MODE_NEAREST,
            addressModeU=address[0], addressModeV=address[1], addressModeW=address[2],
            mipLodBias=float(params["lodBias"]),
            anisotropyEnable=vk.VK_TRUE if aniso > 1.0 else vk.VK_FALSE,
            maxAnisotropy=min(aniso, float(dev.limits.maxSamplerAnisotropy)) if aniso > 1.0 else 1.0,
            compareEnable=vk.VK_TRUE if compare else vk.VK_FALSE,
            compareOp=pick(ops, cfunc, "compareFunc") if compare else vk.VK_COMPARE_OP_NEVER,
            minLod=min_lod, maxLod=max(max_lod, min_lod), borderColor=border,
            unnormalizedCoordinates=vk.VK_FALSE,
        )  # fmt: skip
        self.sampler = vk.vkCreateSampler(dev.device, info, None)

    @staticmethod
    def _border(params: Any, where: str, address: list[int]) -> int:
        if vk.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER not in address:
            return vk.VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK
        form = {int(v): k for k, v in _t.enum("BorderColorForm").items()}.get(
            int(params["borderColorForm"])
        )
        member = {"Float": "borderColor", "Int": "borderColorI", "Uint": "borderColorUI"}.get(
            form or ""
        )
        if member is None:
            raise VulkanRefused(f"{where}.borderColorForm", f"{int(params['borderColorForm'])}")
        raw = params[member]
        values = raw.tolist() if raw.dtype.names else np.asarray(raw).reshape(-1)[:4].tolist()
        c = tuple(float(x) for x in values)
        fixed = {(0.0, 0.0, 0.0, 0.0): "TRANSPARENT_BLACK", (0.0, 0.0, 0.0, 1.0): "OPAQUE_BLACK",
                 (1.0, 1.0, 1.0, 1.0): "OPAQUE_WHITE"}  # fmt: skip
        name = fixed.get(c)
        if name is None:
            raise VulkanRefused(f"{where}.{member}", f"{c}: Vulkan 1.0 borders are transparent "
                                "black, opaque black or opaque white")  # fmt: skip
        kind = "FLOAT" if form == "Float" else "INT"
        return getattr(vk, f"VK_BORDER_COLOR_{kind}_{name}")

    def destroy(self) -> None:
        if self.sampler is not None:
            vk.vkDestroySampler(self.dev.device, self.sampler, None)
            self.sampler = None


def default_parameters() -> np.void:
    """GL's initial sampler state (min NEAREST_MIPMAP_LINEAR, mag LINEAR, REPEAT, lods
    -1000 / 1000), as a ``SamplerParameters`` record."""
    p = np.zeros((), layouts.dtype("SamplerParameters"))
    wrap, f, m = (
        _t.enum("SamplerWrapMode"),
        _t.enum("SamplerFilterMode"),
        _t.enum("SamplerMipmapMode"),
    )
    for w in ("wrapS", "wrapT", "wrapR"):
        p[w] = wrap["Repeat"]
    p["minFilter"], p["magFilter"], p["mipmapMode"] = f["Nearest"], f["Linear"], m["Linear"]
    p["minLod"], p["maxLod"], p["maxAnisotropy"] = -1000.0, 1000.0, 1.0
    p["compareFunc"] = _t.enum("SamplerCompareFunc")["LessEqual"]
    return p[()]


def make_view(dev: Any, img: Any, target: str, base_level: int, levels: int, base_layer: int,
              layers: int, depth_only: bool) -> Any:  # fmt: skip
    """A sampled ``VkImageView`` of ``img`` for GL ``target`` (cube: the CUBE view type)."""
    types = {"Tex2D": vk.VK_IMAGE_VIEW_TYPE_2D, "Renderbuffer": vk.VK_IMAGE_VIEW_TYPE_2D,
             "Tex3D": vk.VK_IMAGE_VIEW_TYPE_3D, "Tex2DArray": vk.VK_IMAGE_VIEW_TYPE_2D_ARRAY,
             "TexCube": vk.VK_IMAGE_VIEW_TYPE_CUBE, "TexCubeArray": vk.VK_IMAGE_VIEW_TYPE_CUBE_ARRAY}  # fmt: skip
    if target not in types:
        raise VulkanRefused("CreateSamplerView.Target", f"{target}: no sampled view of it")
    aspect = vk.VK_IMAGE_ASPECT_DEPTH_BIT if depth_only else img.aspect
    base_level = min(base_level, img.levels - 1)
    levels = max(1, min(levels or img.levels, img.levels - base_level))
    if target in ("Tex2D", "Renderbuffer", "Tex3D"):
        base_layer, layers = 0, 1
    elif target == "TexCube":
        layers = 6
    else:
        layers = max(1, min(layers or img.layers, img.layers - base_layer))
    info = vk.VkImageViewCreateInfo(
        image=img.image, viewType=types[target], format=img.format,
        subresourceRange=vk.VkImageSubresourceRange(aspectMask=aspect, baseMipLevel=base_level,
                                                    levelCount=levels, baseArrayLayer=base_layer,
                                                    layerCount=layers))  # fmt: skip
    return vk.vkCreateImageView(dev.device, info, None)
