"""Transform feedback and tessellation on the Vulkan side.

:class:`StreamOutputEntries` is a mixin of :class:`~.backend.VulkanBackend`.

Transform feedback runs through ``VK_EXT_transform_feedback`` (enabled by
:class:`~.device.VulkanDevice` where the device has it and its ``transformFeedback``
feature); on a device without it every stream-output verb is refused by name. The capture
layout is the vertex shader's own (its SPIR-V carries GL's ``XfbBuffer`` / ``XfbStride`` /
``Offset`` decorations: a skipped component is a hole the capture leaves as it was).

- ``BindStreamOutput`` / ``DeleteStreamOutput`` name the object by (GL name, lifetime id);
  each object keeps its targets' 4-byte counter buffers (the byte each target has reached).
- ``SetStreamOutputTargets`` (before a draw): the ranges, and per target whether the
  capture starts at its range (offset word 0) or appends where it stopped (``0xFFFFFFFF``).
- ``BeginStreamOutput`` opens a span (its ``Targets`` snapshot binds until the next
  ``SetStreamOutputTargets``); ``PauseStreamOutput`` / ``ResumeStreamOutput``; every draw of
  a running, unpaused span is wrapped in ``vkCmdBegin/EndTransformFeedbackEXT`` inside its
  render pass, resuming from the counter buffers after the first, and counted by a
  ``VK_QUERY_TYPE_TRANSFORM_FEEDBACK_STREAM_EXT`` query. The counters a draw's
  ``vkCmdEndTransformFeedbackEXT`` wrote are read by the next draw's begin; no barrier
  between the two is allowed inside one subpass (the write's stage is logically later than
  the read's), so a draw that resumes from counters written in the open render pass first
  ends it: the next pass begins after a full barrier (``xfb_pass_splits`` counts these;
  lavapipe serialises and showed nothing, NVIDIA read stale counters).
- ``EndStreamOutput`` closes the span: the queries' primitives-written sum must equal the
  record's ``PrimitivesWritten`` (the client's accounting), else the record is refused by
  name -- the capture wrote something other than what the client reports.

Tessellation (``tessellationShader``): ``PatchParameter`` (``GL_PATCH_VERTICES``) and
``SetPatchState.Vertices`` give the patch size; a ``GL_PATCHES`` draw becomes a patch-list
pipeline with that many control points; elsewhere refused by name.
"""

from __future__ import annotations

from typing import Any

import vulkan as vk

from ...server.gpu_written import emit_ranges
from ...server.handle_fields import table_of
from .errors import VulkanRefused
from .memory import GpuBuffer
from .resources import VkBufferResource

__all__ = ["StreamOutputEntries", "GL_PATCHES", "GL_PATCH_VERTICES"]

GL_PATCHES = 0x000E  # GL registry values
GL_PATCH_VERTICES = 0x8E72
_APPEND = 0xFFFFFFFF
_VERTS_PER_PRIM = {0x0000: 1, 0x0001: 2, 0x0004: 3}  # GL_POINTS / LINES / TRIANGLES
_QUERIES = 64  # queries per pool (a span past them takes another pool)
_XFB_STAGE = 0x01000000  # VK_PIPELINE_STAGE_TRANSFORM_FEEDBACK_BIT_EXT
_COUNTER_USAGE = 0x00001000  # VK_BUFFER_USAGE_TRANSFORM_FEEDBACK_COUNTER_BUFFER_BIT_EXT


class _Span:
    def __init__(self) -> None:
        self.active = self.paused = False
        self.counters_valid = [False] * 4  # a counter holds where the target stopped
        self.counters_pass = -1  # the render-pass instance whose End last wrote them
        self.pools: list[Any] = []  # (pool, used)
        self.used = 0
        self.draws = 0
        self.written_to: list[tuple[Any, int, int, int]] = []  # (handle, offset, size, stride)


class StreamOutputEntries:
    """Backend entries of this module (mixed into ``VulkanBackend``)."""

    def _xfb_state(self) -> dict[str, Any]:
        st = self.__dict__.get("_xfb")
        if st is None:
            st = self.__dict__["_xfb"] = {
                "objects": {},  # (GlName, LifetimeId) -> {"counters": GpuBuffer, "span": _Span}
                "targets": None,  # [(VkBufferResource, offset, size) | None] * 4
                "append": [False] * 4,
                "patch": 0,
                "fns": None,
                "spans": 0, "captured_draws": 0, "primitives_written": 0, "xfb_pass_splits": 0,
            }  # fmt: skip
        return st

    def _xfb_fns(self, where: str) -> dict[str, Any]:
        if "VK_EXT_transform_feedback" not in self.dev.extensions:
            raise VulkanRefused(where, "the device has no VK_EXT_transform_feedback (no capture)")
        st = self._xfb_state()
        if st["fns"] is None:
            st["fns"] = {n: vk.vkGetDeviceProcAddr(self.dev.device, n) for n in (
                "vkCmdBindTransformFeedbackBuffersEXT", "vkCmdBeginTransformFeedbackEXT",
                "vkCmdEndTransformFeedbackEXT", "vkCmdBeginQueryIndexedEXT",
                "vkCmdEndQueryIndexedEXT")}  # fmt: skip
        return st["fns"]

    def _xfb_object(self, key: tuple[int, int], where: str) -> dict[str, Any]:
        objs = self._xfb_state()["objects"]
        obj = objs.get(key)
        if obj is None:
            self._xfb_fns(where)
            obj = objs[key] = {"counters": GpuBuffer(self.dev, 16, _COUNTER_USAGE), "span": _Span()}
            self._keep(obj["counters"])
        return obj

    # -- entries -----------------------------------------------------------------------
    def BindStreamOutput(self, ctx: Any, d: Any) -> None:
        p = d.payload
        if int(p.GlName):
            self._xfb_object((int(p.GlName), int(p.LifetimeId)), "BindStreamOutput")

    def DeleteStreamOutput(self, ctx: Any, d: Any) -> None:
        p = d.payload
        obj = self._xfb_state()["objects"].pop((int(p.GlName), int(p.LifetimeId)), None)
        if obj is not None:
            if obj["span"].active:
                raise VulkanRefused("DeleteStreamOutput", "the object is capturing")
            self._retire(obj["counters"])
            self._retire_pools(obj["span"])

    def SetStreamOutputTargets(self, ctx: Any, d: Any) -> None:
        ranges = list(d.tails[0]) if d.tails else []
        offsets = list(d.tails[1]) if d.tails and len(d.tails) > 1 else []
        st = self._xfb_state()
        st["targets"] = self._xfb_ranges(ctx, ranges, "SetStreamOutputTargets")
        st["append"] = [i < len(offsets) and int(offsets[i]) == _APPEND for i in range(4)]

    def _xfb_ranges(self, ctx: Any, rows: list, where: str) -> list:
        out: list = []
        for i, row in enumerate(rows[:4]):
            if row.Res.is_null:
                out.append(None)
                continue
            buf = ctx.tables[table_of("Buffer")].resolve(row.Res, f"{where}[{i}]").backend
            if not isinstance(buf, VkBufferResource) or buf.gpu is None:
                raise VulkanRefused(f"{where}[{i}].Res", "no buffer storage")
            off, size = int(row.Offset), int(row.Size)
            if not size or size > buf.size - off:
                size = buf.size - off
            if off % 4 or size <= 0:
                raise VulkanRefused(f"{where}[{i}].Offset", f"{off} (+{size}): a 4-byte aligned "
                                    f"range inside {buf.size} bytes")  # fmt: skip
            out.append((buf, off, size))
        return out + [None] * (4 - len(out))

    def BeginStreamOutput(self, ctx: Any, d: Any) -> None:
        p, st = d.payload, self._xfb_state()
        self._xfb_fns("BeginStreamOutput")
        key = ctx.xfb
        if not key[0]:
            raise VulkanRefused("BeginStreamOutput", "no transform feedback object is bound")
        obj = self._xfb_object(key, "BeginStreamOutput")
        span = obj["span"]
        if span.active:
            raise VulkanRefused("BeginStreamOutput", "the object is already capturing")
        self._retire_pools(span)
        span.__init__()
        span.active = True
        st["targets"] = self._xfb_ranges(ctx, list(p.Targets), "BeginStreamOutput.Targets")
        st["append"] = [False] * 4
        # what End names in OnGpuWritten: each captured-into target's handle, range, stride
        prog = getattr(ctx.resolved.get("CaptureProgram"), "backend", None)
        rows = (getattr(prog, "reflection", None) or {}).get("xfb", ())
        strides = {int(r["buffer"]): int(r["stride"]) for r in rows}
        span.written_to = [(p.Targets[i].Res, t[1], t[2], strides[i])
                           for i, t in enumerate(st["targets"])
                           if t is not None and i in strides]  # fmt: skip
        st["spans"] += 1
        self._new_query_pool(span)

    def _span(self, ctx: Any) -> _Span | None:
        obj = self._xfb_state()["objects"].get(ctx.xfb)
        return obj["span"] if obj is not None else None

    def PauseStreamOutput(self, ctx: Any, d: Any) -> None:
        span = self._span(ctx)
        if span is None or not span.active or span.paused:
            raise VulkanRefused("PauseStreamOutput", "no capture running")
        span.paused = True

    def ResumeStreamOutput(self, ctx: Any, d: Any) -> None:
        span = self._span(ctx)
        if span is None or not span.active or not span.paused:
            raise VulkanRefused("ResumeStreamOutput", "no paused capture")
        span.paused = False

    def EndStreamOutput(self, ctx: Any, d: Any) -> None:
        p = d.payload
        span = self._span(ctx)
        if span is None or not span.active:
            raise VulkanRefused("EndStreamOutput", "no capture running")
        span.active = False
        written = self._primitives_written(span)
        self._xfb_state()["primitives_written"] += written
        per = _VERTS_PER_PRIM.get(int(p.PrimitiveMode), 1)
        for res, off, size, stride in span.written_to:  # OnGpuWritten, the device's count
            emit_ranges(ctx, res, [(off, min(written * per * stride, size))])
        if written != int(p.PrimitivesWritten):
            raise VulkanRefused("EndStreamOutput.PrimitivesWritten",
                                f"{int(p.PrimitivesWritten)} reported, the device's query "
                                f"counted {written} primitives written")  # fmt: skip

    # -- queries -------------------------------------------------------------------------
    def _new_query_pool(self, span: _Span) -> None:
        info = vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TRANSFORM_FEEDBACK_STREAM_EXT,
                                        queryCount=_QUERIES)  # fmt: skip
        pool = vk.vkCreateQueryPool(self.dev.device, info, None)
        vk.vkCmdResetQueryPool(self.r.cmd_outside_pass(), pool, 0, _QUERIES)
        span.pools.append([pool, 0])

    def _primitives_written(self, span: _Span) -> int:
        if not any(used for _, used in span.pools):
            return 0
        self.r.finish()
        total = 0
        for pool, used in span.pools:
            if not used:
                continue
            size = used * 2 * 8
            raw = vk.ffi.new(f"uint64_t[{used * 2}]")
            vk.vkGetQueryPoolResults(
                self.dev.device,
                pool,
                0,
                used,
                size,
                raw,
                16,
                vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT,
            )
            total += sum(int(raw[2 * i]) for i in range(used))  # primitivesWritten, ...Needed
        return total

    def _retire_pools(self, span: _Span) -> None:
        dev = self.dev.device
        for pool, _ in span.pools:
            self.r.ring.defer(lambda pool=pool: vk.vkDestroyQueryPool(dev, pool, None))
        span.pools = []

    # -- the draw hooks (called by DrawVbo) ----------------------------------------------
    def xfb_before_pass(self, ctx: Any) -> Any:
        """A draw's capture: None (no running, unpaused span), else the hook the renderer
        calls inside the pass around the draw (room for its query is made here, outside)."""
        st = self.__dict__.get("_xfb")
        if st is None or not ctx.xfb[0]:
            return None
        span = self._span(ctx)
        if span is None or not span.active or span.paused:
            return None
        if span.pools[-1][1] == _QUERIES:
            self._new_query_pool(span)
        fns, targets, obj = self._xfb_fns("DrawVbo"), st["targets"], st["objects"][ctx.xfb]
        bound = [(i, t) for i, t in enumerate(targets or ()) if t is not None]
        if not bound:
            raise VulkanRefused("DrawVbo", "a capture with no transform feedback target")
        counters = obj["counters"].buffer
        serial = self.r.ring.serial
        r = self.r
        if self._xfb_resumes_in_pass(span, bound):
            r.end_pass()  # the resume reads them after the next pass's full barrier
            st["xfb_pass_splits"] += 1

        def hook(cmd: Any, begin: bool) -> None:
            pool = span.pools[-1]
            first, last = bound[0][0], bound[-1][0]
            n = last - first + 1
            at = [4 * i for i in range(first, last + 1)]
            # a gap between bound targets has no buffer and no counter (VK_NULL_HANDLE)
            mine = [counters if targets[i] is not None else vk.VK_NULL_HANDLE
                    for i in range(first, last + 1)]  # fmt: skip
            if begin:
                for i, t in bound:  # one binding each: the bound targets need not be adjacent
                    fns["vkCmdBindTransformFeedbackBuffersEXT"](
                        cmd, i, 1, [t[0].use(serial)], [t[1]], [t[2]]
                    )
                    t[0].gpu_written = serial
                # the span's first draw starts at the ranges; later ones resume where the
                # counters say each target stopped (GL: a span appends across its draws)
                resume = [span.counters_valid[i] for i in range(first, last + 1)]
                fns["vkCmdBeginQueryIndexedEXT"](cmd, pool[0], pool[1], 0, 0)
                if any(resume):
                    fns["vkCmdBeginTransformFeedbackEXT"](
                        cmd, first, n, [c if r else vk.VK_NULL_HANDLE for c, r in zip(mine, resume)],
                        at)  # fmt: skip
                else:
                    fns["vkCmdBeginTransformFeedbackEXT"](cmd, 0, 0, None, None)
                return
            fns["vkCmdEndTransformFeedbackEXT"](cmd, first, n, mine, at)
            fns["vkCmdEndQueryIndexedEXT"](cmd, pool[0], pool[1], 0)
            pool[1] += 1
            for i, _ in bound:
                span.counters_valid[i] = True
            span.counters_pass = r.passes_begun
            span.draws += 1
            st["captured_draws"] += 1

        return hook

    def _xfb_resumes_in_pass(self, span: _Span, bound: list) -> bool:
        """Would this draw's begin read counters an End wrote in the open render pass?"""
        return (self.r._in_pass and span.counters_pass == self.r.passes_begun
                and any(span.counters_valid[i] for i, _ in bound))  # fmt: skip

    # -- tessellation ----------------------------------------------------------------------
    def PatchParameter(self, ctx: Any, d: Any) -> None:
        p = d.payload
        if int(p.Pname) != GL_PATCH_VERTICES:
            raise VulkanRefused("PatchParameter.Pname", f"{int(p.Pname):#x}: GL ES names only "
                                "GL_PATCH_VERTICES")  # fmt: skip
        self._xfb_state()["patch"] = self._patch_size(int(p.Value), "PatchParameter.Value")

    def _patch_size(self, n: int, where: str) -> int:
        if not self.dev.features.get("tessellationShader"):
            raise VulkanRefused(where, "the device has no tessellationShader")
        top = int(self.dev.limits.maxTessellationPatchSize)
        if not 1 <= n <= top:
            raise VulkanRefused(where, f"{n} patch vertices: 1..{top}")
        return n

    def patch_vertices(self, ctx: Any) -> int:
        """The control points of a ``GL_PATCHES`` draw (SetPatchState, else PatchParameter)."""
        pushed = ctx.last.get("SetPatchState")
        n = int(pushed.Vertices) if pushed is not None and int(pushed.Vertices) else 0
        n = n or self._xfb_state()["patch"]
        return self._patch_size(n or 3, "DrawVbo.Mode")  # GL's initial GL_PATCH_VERTICES: 3

    def close_stream_output(self) -> None:
        st = self.__dict__.get("_xfb")
        if st is None:
            return
        for obj in st["objects"].values():
            for pool, _ in obj["span"].pools:
                vk.vkDestroyQueryPool(self.dev.device, pool, None)
            obj["span"].pools = []

    def stream_output_stats(self) -> dict[str, int]:
        st = self._xfb_state()
        return {k: st[k] for k in ("spans", "captured_draws", "primitives_written",
                                   "xfb_pass_splits")}  # fmt: skip
