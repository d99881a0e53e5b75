"""The Vulkan renderer: targets, passes, pipelines, the dynamic tail and the frame ring.

It speaks in Vulkan terms and knows nothing of the wire; :mod:`.backend` turns records
into these calls. One render pass is open at a time; it begins at the first draw or
clear of a target and ends when the target changes, before a transfer, at a readback and
at :meth:`present`. A clear that comes before anything else of a pass, covers the whole
surface and is not masked becomes the pass's load op (a :class:`~.targets.RenderPassKey`
with ``CLEAR``); any other clear is ``vkCmdClearAttachments`` over the scissor rectangle.

Counters: ``memo.created`` (pipelines), ``tail.issued`` (``vkCmdSet*`` by name),
``frame_cpu_ns`` (thread CPU between consecutive presents), ``draws``.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import vulkan as vk
import vulkan._vulkan as _vulkan_module

from .device import VulkanDevice
from .errors import VulkanRefused
from .dynamic_tail import DynamicTail, scissor_rect, tail_key, vector
from .gpu_timer import GpuTimer
from .lifetime import FrameRing
from .pipeline_state import decode
from .masked_clear import MaskedClear
from .pipelines import PipelineKey, PipelineMemo, VertexLayout
from .resources import VkBufferResource
from .shaders import ShaderProgram
from .targets import (CLEAR, GENERAL, LOAD, RenderPassCache, RenderPassKey, RenderTarget,
                      full_barrier, init_general, pick_depth_format)  # fmt: skip

__all__ = ["VulkanRenderer", "DrawCall"]

#: The per-draw commands take only handles and integers: they call the C entry points
#: directly (the binding's generic wrapper converts every argument in Python per call).
_lib = _vulkan_module.lib

RGBA8 = vk.VK_FORMAT_R8G8B8A8_UNORM
_RGBA_BITS = (vk.VK_COLOR_COMPONENT_R_BIT, vk.VK_COLOR_COMPONENT_G_BIT,
              vk.VK_COLOR_COMPONENT_B_BIT, vk.VK_COLOR_COMPONENT_A_BIT)  # fmt: skip
_ALL = sum(_RGBA_BITS)


class IntColor(tuple):
    """A clear colour of an integer attachment: ``(value class, (4 values))``, the class
    ``"int"`` or ``"uint"``."""


def color_value(color: Any) -> Any:
    """The ``VkClearColorValue`` of a float 4-tuple or an :class:`IntColor`."""
    if isinstance(color, IntColor):
        cls, values = color
        return vk.VkClearColorValue(**{"int32" if cls == "int" else "uint32": list(values)})
    return vk.VkClearColorValue(float32=list(color))


def _mask_bits(rgba: Any) -> int:
    return sum(bit for bit, on in zip(_RGBA_BITS, rgba) if on)


class DrawCall:
    """One draw's inputs (what the backend resolved from the pushed state)."""

    __slots__ = ("cso", "shader_handle", "shader", "vertex", "buffers", "index", "topology",
                 "restart", "ranges", "instances", "first_instance", "patch")  # fmt: skip

    def __init__(self, cso: Any, shader_handle: Any, shader: ShaderProgram, vertex: VertexLayout,
                 buffers: list[tuple[int, Any, int]], index: tuple[Any, int] | None,
                 topology: int, restart: bool, ranges: list[tuple[int, int, int]],
                 instances: int, first_instance: int = 0) -> None:  # fmt: skip
        self.first_instance = first_instance
        self.patch = 0  # a patch list's control points
        self.cso, self.shader_handle, self.shader, self.vertex = cso, shader_handle, shader, vertex
        self.buffers, self.index, self.topology, self.restart = buffers, index, topology, restart
        self.ranges, self.instances = ranges, instances


class VulkanRenderer:
    def __init__(self, width: int = 640, height: int = 480, *, dev: VulkanDevice | None = None,
                 frames: int = 2, device: str | int | None = None,
                 validation: str | bool | None = None) -> None:  # fmt: skip
        self.dev = dev or VulkanDevice(device=device, validation=validation)
        self.ring = FrameRing(self.dev, frames)
        self.gpu = GpuTimer(self.dev, frames, lambda: self.ring.completed, lambda: self.frames)
        self.ring.timer = self.gpu
        self.passes = RenderPassCache(self.dev)
        self.memo = PipelineMemo(self.dev, self.ring.defer)
        self.tail = DynamicTail(self.dev.limits, self.dev.features)
        self.masked = MaskedClear(self.dev)
        # generic attribute values (one vec4 per location) for inputs no array feeds
        self.defaults_binding = int(self.dev.limits.maxVertexInputBindings) - 1
        self.attrib_defaults = VkBufferResource(self.dev, self.ring.defer)
        self.set_attrib_defaults([(0.0, 0.0, 0.0, 1.0)] * 32)
        self.depth_format = pick_depth_format(self.dev)
        self.default = RenderTarget.offscreen(self.dev, width, height, (RGBA8,), self.depth_format)
        self.target = self.default
        self.target_id = 0
        self._in_pass = False
        self.passes_begun = 0  # render-pass instances begun (a pass's identity)
        self._clear: dict[str, Any] = {}  # pending load-op clear of the pass not yet begun
        self._bound: dict[str, Any] = {}
        #: objects told about every render pass: ``before_pass(cmd)`` (outside it),
        #: ``pass_begun(cmd)`` and ``pass_ending(cmd)`` (inside it) -- the occlusion queries
        self.pass_watchers: list[Any] = []
        self._end_after_clear = False  # a clear's draw ended a query segment: end the pass
        self.draws = 0
        self.frames = 0
        self.frame_cpu_ns: list[int] = []
        self._frame_t0 = time.thread_time_ns()

    def set_attrib_defaults(self, values: list[tuple[float, float, float, float]]) -> None:
        data = b"".join(struct.pack("<4f", *v) for v in values)
        if self.attrib_defaults.gpu is None:
            self.attrib_defaults.respecify(len(data))
        if self.attrib_defaults.gpu.read() != data:  # type: ignore[union-attr]
            self.attrib_defaults.write(0, data, self.ring.completed)

    # -- targets --------------------------------------------------------------
    def set_target(self, target: RenderTarget, target_id: int) -> None:
        if target is self.target and target_id == self.target_id:
            return
        self._flush_pass()
        self.target, self.target_id = target, target_id

    def resize_default(self, width: int, height: int) -> None:
        """The default framebuffer takes the size the client states (a new surface)."""
        d = self.default
        if (d.width, d.height) == (width, height):
            return
        self._flush_pass()
        self.default = RenderTarget.offscreen(self.dev, width, height, (RGBA8,), self.depth_format)
        if self.target is d:
            self.target = self.default
        self.ring.defer(d.destroy)

    def forget_target(self, target: RenderTarget) -> None:
        """``target`` dies: stop rendering to it; its framebuffers retire with the frame."""
        if target is self.target:
            self._flush_pass()
            self.target, self.target_id = self.default, 0
        self.ring.defer(target.destroy)

    # -- passes ---------------------------------------------------------------
    def cmd_outside_pass(self) -> Any:
        """The command buffer with no render pass open (for copies and uploads)."""
        self._flush_pass()
        cmd = self.ring.cmd()
        init_general(cmd, self.target.images())
        return cmd

    def _begin_pass(self) -> Any:
        cmd = self.ring.cmd()
        if self._in_pass:
            return cmd
        t = self.target
        init_general(cmd, t.images())
        full_barrier(cmd)
        clear = self._clear
        color_load = tuple(CLEAR if i in clear.get("colors", {}) else LOAD
                           for i in range(len(t.colors)))  # fmt: skip
        depth_load = CLEAR if "depth" in clear else LOAD
        key = RenderPassKey(tuple(c.format for c in t.colors), t.depth.format if t.depth else None,
                            color_load, depth_load, t.key().samples)  # fmt: skip
        values = [vk.VkClearValue(color=color_value(clear.get("colors", {}).get(i, (0.0, 0.0, 0.0, 0.0))))
                  for i in range(len(t.colors))]  # fmt: skip
        if t.depth is not None:
            d, s = clear.get("depth", (1.0, 0))
            values.append(vk.VkClearValue(
                depthStencil=vk.VkClearDepthStencilValue(depth=d, stencil=s)))  # fmt: skip
        info = vk.VkRenderPassBeginInfo(
            renderPass=self.passes.get(key), framebuffer=t.framebuffer(self.passes),
            renderArea=vk.VkRect2D(offset=vk.VkOffset2D(x=0, y=0),
                                   extent=vk.VkExtent2D(width=t.width, height=t.height)),
            clearValueCount=len(values), pClearValues=values,
        )  # fmt: skip
        for w in self.pass_watchers:
            w.before_pass(cmd)
        vk.vkCmdBeginRenderPass(cmd, info, vk.VK_SUBPASS_CONTENTS_INLINE)
        for w in self.pass_watchers:
            w.pass_begun(cmd)
        self._in_pass = True
        self.passes_begun += 1
        self._clear = {}
        return cmd

    def _flush_pass(self) -> None:
        if self._clear and not self._in_pass:
            self._begin_pass()  # a clear with nothing after it still has to happen
        if self._in_pass:
            for w in self.pass_watchers:
                w.pass_ending(self.ring.cmd())
            vk.vkCmdEndRenderPass(self.ring.cmd())
            self._in_pass = False
        self._bound = {}

    def pending(self) -> bool:
        """Anything recorded (or a clear waiting for its pass) not yet submitted?"""
        return self.ring.recording or self._in_pass or bool(self._clear)

    def end_pass(self) -> None:
        """Close the open render pass (a query boundary, a transfer); the next draw opens
        a new one that loads what this one stored."""
        self._flush_pass()

    # -- clear ------------------------------------------------------------------
    def clear(self, block: np.void, color: tuple[float, float, float, float] | None,
              depth: float | None, stencil: int | None, only: int | None = None) -> None:  # fmt: skip
        """GL clear of the current target (None: that buffer is not in the mask); honours
        the scissor test, the colour masks, the depth mask and the stencil write mask.
        ``only``: the colour attachment a ``glClearBuffer`` names (None: every one)."""
        t = self.target
        cleared = range(len(t.colors)) if only is None else (only,)
        masks = tuple(_mask_bits(vector(block["ColorMasks"][i])) if i in cleared else 0
                      for i in range(len(t.colors)))  # fmt: skip
        rect = scissor_rect(tail_key(block, (t.width, t.height), self.target_id))
        has_stencil = t.depth is not None and t.depth.aspect & vk.VK_IMAGE_ASPECT_STENCIL_BIT
        d = (
            depth
            if (t.depth is not None and depth is not None and int(block["DepthMask"]))
            else None
        )
        s = stencil if (has_stencil and stencil is not None
                        and int(block["StencilStates"][0]["WriteMask"]) & 0xFF) else None  # fmt: skip
        colors = color is not None and any(masks)
        if not colors and d is None and s is None:
            return
        full = rect == (0, 0, t.width, t.height)
        color_full = all(masks[i] == _ALL for i in cleared)
        stencil_full = s is None or (int(block["StencilStates"][0]["WriteMask"]) & 0xFF) == 0xFF
        # depth and stencil share one load op: both or neither (or a depth-only format)
        ds_together = not has_stencil or (d is None) == (s is None)
        if (
            not self._in_pass
            and full
            and (color_full or not colors)
            and stencil_full
            and ds_together
        ):
            if colors:
                self._clear.setdefault("colors", {}).update({i: color for i in cleared})
            if d is not None:
                self._clear["depth"] = (d, s or 0)
            return
        cmd = self._begin_pass()
        if rect[2] == 0 or rect[3] == 0:
            return
        r = vk.VkClearRect(rect=vk.VkRect2D(offset=vk.VkOffset2D(x=rect[0], y=rect[1]),
                                            extent=vk.VkExtent2D(width=rect[2], height=rect[3])),
                           baseArrayLayer=0, layerCount=1)  # fmt: skip
        atts = []
        if colors and color_full:
            value = vk.VkClearValue(color=color_value(color))
            atts += [vk.VkClearAttachment(aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT,
                                          colorAttachment=i, clearValue=value)
                     for i in cleared]  # fmt: skip
        elif colors:
            if isinstance(color, IntColor):
                raise VulkanRefused("Clear.ColorMasks", "a masked integer colour clear")
            rp_key = t.key()
            pipe = self.masked.pipeline(rp_key, masks, self.passes.get(rp_key))
            # a clear is no draw to an occlusion query (GL): the query's segment ends before
            # the clear's draw, and the pass with it (the next draw opens a new segment)
            paused = [w for w in self.pass_watchers if w.pause(cmd)]
            self.masked.record(cmd, pipe, (t.width, t.height), rect, color)  # type: ignore[arg-type]
            if paused:
                self._end_after_clear = True
            self._bound.pop("pipeline", None)
            self.tail.reset()  # the clear draw moved viewport and scissor
        aspect = (vk.VK_IMAGE_ASPECT_DEPTH_BIT if d is not None else 0) | (
            vk.VK_IMAGE_ASPECT_STENCIL_BIT if s is not None else 0)  # fmt: skip
        if aspect:
            atts.append(vk.VkClearAttachment(aspectMask=aspect, clearValue=vk.VkClearValue(
                depthStencil=vk.VkClearDepthStencilValue(depth=d if d is not None else 0.0,
                                                         stencil=s or 0))))  # fmt: skip
        if atts:
            vk.vkCmdClearAttachments(cmd, len(atts), atts, 1, [r])
        if self._end_after_clear:
            self._end_after_clear = False
            self._flush_pass()

    # -- draw -------------------------------------------------------------------
    def draw(self, dc: DrawCall, block: np.void, version: int,
             bind_descriptors: Callable[[Any, ShaderProgram], None] | None = None,
             around: Callable[[Any, bool], None] | None = None) -> None:  # fmt: skip
        """``around(cmd, True / False)``: called inside the pass just before / after the
        draw commands (a transform feedback capture)."""
        t = self.target
        cmd = self._begin_pass()
        rp_key = t.key()
        key = PipelineKey(dc.cso, dc.shader_handle,
                          dc.vertex.for_shader(dc.shader.inputs, self.defaults_binding),
                          rp_key, dc.topology, dc.restart, dc.patch)  # fmt: skip
        has_stencil = t.depth is not None and t.depth.aspect & vk.VK_IMAGE_ASPECT_STENCIL_BIT
        pipe = self.memo.get(
            key,
            lambda: decode(block, len(t.colors), t.depth is not None, bool(has_stencil),
                           dc.topology, self.dev.features),
            dc.shader, self.passes.get(rp_key),
        )  # fmt: skip
        if self._bound.get("pipeline") is not pipe:
            _lib.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipe)
            self._bound["pipeline"] = pipe
        self.tail.apply(cmd, self.ring.serial, version, block, (t.width, t.height), self.target_id)
        if bind_descriptors is not None:
            bind_descriptors(cmd, dc.shader)
        used = {b for _, b, _, _ in key.vertex.attributes}
        buffers = dc.buffers
        if self.defaults_binding in used:
            buffers = buffers + [
                (self.defaults_binding, self.attrib_defaults.use(self.ring.serial), 0)
            ]
        for binding, buf, offset in buffers:
            if binding in used and self._bound.get(("vb", binding)) != (buf, offset):
                vk.vkCmdBindVertexBuffers(cmd, binding, 1, [buf], [offset])
                self._bound[("vb", binding)] = (buf, offset)
        if around is not None:
            around(cmd, True)
        if dc.index is not None:
            buf, size = dc.index
            itype = vk.VK_INDEX_TYPE_UINT16 if size == 2 else vk.VK_INDEX_TYPE_UINT32
            if self._bound.get("ib") != (buf, itype):
                vk.vkCmdBindIndexBuffer(cmd, buf, 0, itype)
                self._bound["ib"] = (buf, itype)
            if dc.ranges is None:  # an indirect draw (indirect.py)
                dc.record(_lib, cmd)  # type: ignore[attr-defined]
            else:
                for start, count, bias in dc.ranges:
                    _lib.vkCmdDrawIndexed(cmd, count, dc.instances, start, bias,
                                          dc.first_instance)  # fmt: skip
        elif dc.ranges is None:
            dc.record(_lib, cmd)  # type: ignore[attr-defined]
        else:
            for start, count, _ in dc.ranges:
                _lib.vkCmdDraw(cmd, count, dc.instances, start, dc.first_instance)
        if around is not None:
            around(cmd, False)
        self.draws += 1

    # -- readback / present ------------------------------------------------------
    def read_pixels(self, index: int, x: int, y: int, w: int, h: int,
                    target: RenderTarget | None = None) -> bytes:  # fmt: skip
        """GL-oriented rows of colour ``index`` of ``target`` (default: the current one)."""
        t = target or self.target
        cmd = self.cmd_outside_pass()
        init_general(cmd, t.images())
        buf = t.record_readback(cmd, index, x, y, w, h)
        self.ring.submit(wait=True)
        raw = buf.read(0, buf.payload)
        buf.destroy()
        return RenderTarget.gl_rows(raw, w, h, len(raw) // (w * h))

    def read_uncounted(self, target: RenderTarget, index: int = 0) -> bytes:
        """:meth:`read_pixels` of all of ``target`` as an onlooker: its submission is not
        counted (``ring.submits``) and not timed (no GPU timestamp), so a capture taken
        after a scene leaves every number the scene reports as it was."""
        ring = self.ring
        self.finish()  # what the scene recorded goes first, counted, timed and retired as before
        submits, timer = ring.submits, ring.timer
        ring.timer = None
        try:
            return self.read_pixels(index, 0, 0, target.width, target.height, target)
        finally:
            ring.submits, ring.timer = submits, timer

    def snapshot(self, target: RenderTarget | None = None, index: int = 0) -> np.ndarray:
        """The whole colour attachment as an (H, W, C) uint8 array, GL row order."""
        t = target or self.default
        raw = self.read_pixels(index, 0, 0, t.width, t.height, t)
        return np.frombuffer(raw, np.uint8).reshape(t.height, t.width, -1)

    def present(self) -> None:
        self._flush_pass()
        self.ring.submit()
        self.frames += 1
        now = time.thread_time_ns()
        self.frame_cpu_ns.append(now - self._frame_t0)
        self._frame_t0 = now

    def flush(self) -> None:
        self._flush_pass()
        self.ring.submit()

    def finish(self) -> None:
        self._flush_pass()
        self.ring.submit(wait=True)
        self.ring.wait_idle()

    def close(self) -> None:
        if self.dev.device is None:
            return
        self.finish()
        self.memo.destroy()
        self.attrib_defaults.destroy()
        self.masked.destroy()
        self.ring.close()
        self.gpu.destroy()
        self.default.destroy()
        self.passes.destroy()
