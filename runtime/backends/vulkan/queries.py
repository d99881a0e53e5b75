"""GL queries on the Vulkan backend: occlusion, timestamps and time elapsed (VkQueryPool).

``MGPQueryDesc.Kind`` is the GL query target. What each becomes:

- ``GL_SAMPLES_PASSED``: an occlusion query with ``VK_QUERY_CONTROL_PRECISE_BIT`` (the
  exact sample count; refused by name where the device lacks ``occlusionQueryPrecise``);
  ``GL_ANY_SAMPLES_PASSED`` / ``GL_ANY_SAMPLES_PASSED_CONSERVATIVE``: a plain occlusion
  query, answered 1 when it counted any sample. A Vulkan query lives inside one render
  pass instance while a GL query spans passes, so a GL occlusion query is one Vulkan
  query per render pass it covers (the *segments*; :class:`~.renderer.VulkanRenderer`
  tells :class:`QueryEntries` when each pass begins and ends) and its result is their
  sum. Begin and end close the open pass, so a segment holds only the draws between them.
- ``GL_TIMESTAMP`` (``QueryCounter``): ``vkCmdWriteTimestamp`` once every earlier command
  has finished (bottom of the pipe), in ns (``timestampPeriod``), ``timestampValidBits``
  of the queue family kept. ``QueryTimestamp`` (``glGetInteger64v(GL_TIMESTAMP)``) is a
  timestamp written at the top of the pipe of a submission of its own, read at once.
- ``GL_TIME_ELAPSED``: two such timestamps (begin, end); the difference modulo
  ``2**timestampValidBits``, in ns. No timestamp bits: refused by name.
- Anything else (primitives queries, a non-zero ``Stream``) is refused by name.

Results are read only once every submission the query covers has retired (its VkFence
seen signalled): ``QueryAvailable`` never blocks (it submits what the query covers if that
is still being recorded, as GL drivers flush a polled query); ``QueryResult`` with
``Wait`` waits for that submission, without it answers ``None`` while unavailable. Slots
return to their pool through the ring's deletion queue (never reused in flight).
"""

from __future__ import annotations

import struct
from typing import Any

import vulkan as vk

from ...server.reverse import Reply
from .errors import GL_ERR, GlError, VulkanRefused
from .gpu_timer import AVAILABLE, timing_support

__all__ = ["QueryEntries", "VkQuery", "GL_QUERY"]

_FOREVER = 0xFFFFFFFFFFFFFFFF
_SLOTS = 64  # slots per VkQueryPool (a new pool when every slot is taken)


class GL_QUERY:
    """GL registry values of the query targets ``MGPQueryDesc.Kind`` carries."""

    SAMPLES_PASSED = 0x8914
    ANY_SAMPLES_PASSED = 0x8C2F
    ANY_SAMPLES_PASSED_CONSERVATIVE = 0x8D6A
    TIME_ELAPSED = 0x88BF
    TIMESTAMP = 0x8E28
    OCCLUSION = (SAMPLES_PASSED, ANY_SAMPLES_PASSED, ANY_SAMPLES_PASSED_CONSERVATIVE)
    NAMES = {SAMPLES_PASSED: "GL_SAMPLES_PASSED", ANY_SAMPLES_PASSED: "GL_ANY_SAMPLES_PASSED",
             ANY_SAMPLES_PASSED_CONSERVATIVE: "GL_ANY_SAMPLES_PASSED_CONSERVATIVE",
             TIME_ELAPSED: "GL_TIME_ELAPSED", TIMESTAMP: "GL_TIMESTAMP"}  # fmt: skip


class _Pools:
    """Growable VkQueryPools of one type; a slot is ``(pool, index)``."""

    def __init__(self, dev: Any, qtype: int) -> None:
        self.dev, self.qtype = dev, qtype
        self.pools: list[Any] = []
        self.free: list[tuple[Any, int]] = []

    def take(self) -> tuple[Any, int]:
        if not self.free:
            pool = vk.vkCreateQueryPool(self.dev.device, vk.VkQueryPoolCreateInfo(
                queryType=self.qtype, queryCount=_SLOTS), None)  # fmt: skip
            self.pools.append(pool)
            self.free = [(pool, i) for i in reversed(range(_SLOTS))]
        return self.free.pop()

    def give(self, slot: tuple[Any, int]) -> None:
        self.free.append(slot)

    def destroy(self) -> None:
        for pool in self.pools:
            vk.vkDestroyQueryPool(self.dev.device, pool, None)
        self.pools, self.free = [], []


class VkQuery:
    """One GL query object: its target, its slots with the serial that writes each."""

    def __init__(self, kind: int, handle: Any = None) -> None:
        self.kind = kind
        self.handle = handle
        self.told = True  # query_result pushed for the latest end (nothing to tell yet)
        self.slots: list[tuple[tuple[Any, int], int]] = []  # ((pool, index), serial)
        self.active = False
        self.ended = False  # a result exists to wait for (GL: begun and ended at least once)
        self.result: int | None = None  # read once, kept until the next begin

    def destroy(self) -> None:  # (ObjectDeath) nothing more is told of it
        self.slots, self.told, self.ended = [], True, False


def _query(obj: Any, where: str) -> VkQuery:
    thing = getattr(obj, "backend", None)
    if not isinstance(thing, VkQuery):
        raise VulkanRefused(where, "the query has no Vulkan query object (never created here)")
    return thing


class QueryEntries:
    """The query entries of :class:`~.backend.VulkanBackend` (a mixin over ``self.r``)."""

    r: Any

    # -- pools ------------------------------------------------------------------------
    def _query_init(self) -> None:
        dev = self.r.dev
        self._occ_pools = _Pools(dev, vk.VK_QUERY_TYPE_OCCLUSION)
        self._ts_pools = _Pools(dev, vk.VK_QUERY_TYPE_TIMESTAMP)
        self.timestamps, bits, self.ts_period = timing_support(dev)
        self.ts_mask = (1 << bits) - 1 if bits < 64 else (1 << 64) - 1
        self._occlusion: VkQuery | None = None  # the active occlusion query
        self._occ_slot: tuple[Any, int] | None = None  # its slot in the open pass
        self.r.pass_watchers.append(self)
        self._queries_live: dict[int, VkQuery] = {}
        self._fences_live = {}
        self.query_reads = 0

    def _query_close(self) -> None:
        self._occ_pools.destroy()
        self._ts_pools.destroy()

    def _release(self, q: VkQuery) -> None:
        """The query's slots go back to their pools once what writes them has retired."""
        slots, q.slots = q.slots, []
        for slot, _ in slots:
            pools = self._occ_pools if q.kind in GL_QUERY.OCCLUSION else self._ts_pools
            self.r.ring.defer(lambda s=slot, p=pools: p.give(s))

    # -- render pass watcher (the occlusion segments) ------------------------------------
    def before_pass(self, cmd: Any) -> None:
        q = self._occlusion
        if q is None:
            return
        slot = self._occ_slot = self._occ_pools.take()
        vk.vkCmdResetQueryPool(cmd, slot[0], slot[1], 1)

    def pass_begun(self, cmd: Any) -> None:
        q, slot = self._occlusion, self._occ_slot
        if q is None or slot is None:
            return
        precise = vk.VK_QUERY_CONTROL_PRECISE_BIT if q.kind == GL_QUERY.SAMPLES_PASSED else 0
        vk.vkCmdBeginQuery(cmd, slot[0], slot[1], precise)
        q.slots.append((slot, self.r.ring.serial))

    def pause(self, cmd: Any) -> bool:
        """End the open segment now (a clear's draw follows, which GL does not count)."""
        if self._occ_slot is None:
            return False
        self.pass_ending(cmd)
        return True

    def pass_ending(self, cmd: Any) -> None:
        slot, self._occ_slot = self._occ_slot, None
        if slot is not None:
            vk.vkCmdEndQuery(cmd, slot[0], slot[1])

    # -- timestamps ------------------------------------------------------------------------
    def _need_timestamps(self, where: str) -> None:
        if self.timestamps != AVAILABLE:
            raise VulkanRefused(where, self.timestamps)

    def _write_timestamp(self, q: VkQuery, stage: int) -> None:
        self.r.end_pass()
        cmd = self.r.ring.cmd()
        slot = self._ts_pools.take()
        vk.vkCmdResetQueryPool(cmd, slot[0], slot[1], 1)
        vk.vkCmdWriteTimestamp(cmd, stage, slot[0], slot[1])
        q.slots.append((slot, self.r.ring.serial))

    def _ticks(self, slot: tuple[Any, int]) -> int:
        data = vk.ffi.new("uint64_t[1]")
        vk.vkGetQueryPoolResults(self.r.dev.device, slot[0], slot[1], 1, 8, data, 8,
                                 vk.VK_QUERY_RESULT_64_BIT)  # fmt: skip
        self.query_reads += 1
        return int(data[0]) & self.ts_mask

    def _ns(self, ticks: int) -> int:
        return round(ticks * self.ts_period)

    # -- entries ----------------------------------------------------------------------------
    def _check_kind(self, kind: int, stream: int, where: str) -> None:
        if kind not in GL_QUERY.NAMES:
            raise VulkanRefused(where, f"query target {kind:#x}: this backend answers "
                                + ", ".join(GL_QUERY.NAMES.values()))  # fmt: skip
        if stream:
            raise VulkanRefused(where.replace("Kind", "Stream"),
                                f"stream {stream}: indexed queries are not answered here")  # fmt: skip
        if kind == GL_QUERY.SAMPLES_PASSED and not self.r.dev.features.get("occlusionQueryPrecise"):
            raise VulkanRefused(where, f"GL_SAMPLES_PASSED: {self.r.dev.name} has no "
                                "occlusionQueryPrecise (exact sample counts)")  # fmt: skip
        if kind in (GL_QUERY.TIME_ELAPSED, GL_QUERY.TIMESTAMP):
            self._need_timestamps(where)

    def QueryCreate(self, ctx: Any, d: Any) -> None:
        p = d.payload
        kind = int(p.Kind)
        if kind:
            self._check_kind(kind, int(p.Stream), "QueryCreate.Kind")
        obj = ctx.resolved["Query"]
        obj.backend = q = VkQuery(kind, obj.handle)
        self._queries_live[id(q)] = q

    def QueryBegin(self, ctx: Any, d: Any) -> None:
        self._fire(ctx, lambda: self._querybegin(ctx, d))  # type: ignore[attr-defined]

    def _querybegin(self, ctx: Any, d: Any) -> None:
        p = d.payload
        q = _query(ctx.resolved["Query"], "QueryBegin.Query")
        kind = int(p.Kind) or q.kind
        self._check_kind(kind, int(p.Stream), "QueryBegin.Kind")
        if q.active:
            raise GlError(GL_ERR.INVALID_OPERATION, "QueryBegin: the query is already active")
        if q.kind and kind != q.kind:
            raise GlError(GL_ERR.INVALID_OPERATION, f"QueryBegin: {GL_QUERY.NAMES[kind]} on a "
                          f"{GL_QUERY.NAMES[q.kind]} query")  # fmt: skip
        if kind == GL_QUERY.TIMESTAMP:
            raise GlError(GL_ERR.INVALID_ENUM, "QueryBegin: GL_TIMESTAMP is never begun")
        self._release(q)
        q.kind, q.result, q.ended, q.active, q.told = kind, None, False, True, True
        if kind in GL_QUERY.OCCLUSION:
            if self._occlusion is not None:
                raise GlError(GL_ERR.INVALID_OPERATION, "QueryBegin: an occlusion query is "
                              "already active")  # fmt: skip
            self.r.end_pass()  # the next pass begins the first segment
            self._occlusion = q
        else:  # TIME_ELAPSED
            self._write_timestamp(q, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT)

    def QueryEnd(self, ctx: Any, d: Any) -> None:
        self._fire(ctx, lambda: self._queryend(ctx, d))  # type: ignore[attr-defined]

    def _queryend(self, ctx: Any, d: Any) -> None:
        q = _query(ctx.resolved["Query"], "QueryEnd.Query")
        if not q.active:
            raise GlError(GL_ERR.INVALID_OPERATION, "QueryEnd: the query is not active")
        if q.kind in GL_QUERY.OCCLUSION:
            self.r.end_pass()  # ends the open segment
            self._occlusion = None
        else:
            self._write_timestamp(q, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT)
        q.active, q.ended, q.told = False, True, False

    def QueryCounter(self, ctx: Any, d: Any) -> None:
        self._fire(ctx, lambda: self._querycounter(ctx, d))  # type: ignore[attr-defined]

    def _querycounter(self, ctx: Any, d: Any) -> None:
        p = d.payload
        q = _query(ctx.resolved["Query"], "QueryCounter.Query")
        kind = int(p.Kind) or GL_QUERY.TIMESTAMP
        if kind != GL_QUERY.TIMESTAMP:
            raise VulkanRefused("QueryCounter.Kind", f"{kind:#x}: only GL_TIMESTAMP is counted")
        self._need_timestamps("QueryCounter.Kind")
        if q.active:
            raise GlError(GL_ERR.INVALID_OPERATION, "QueryCounter: the query is active")
        self._release(q)
        q.kind, q.result, q.ended, q.told = kind, None, True, False
        self._write_timestamp(q, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT)

    def QueryDestroy(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        q = getattr(obj, "backend", None)
        if isinstance(q, VkQuery):
            if q is self._occlusion:
                self.r.end_pass()
                self._occlusion = None
            self._release(q)
            self._queries_live.pop(id(q), None)
        obj.backend = None

    def query_available(self, q: VkQuery, where: str) -> bool:
        """Non-blocking: has every submission the query covers retired?"""
        if q.active or not q.ended:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: the query is active or was "
                          "never ended")  # fmt: skip
        if q.result is not None or not q.slots:
            return True
        last = max(serial for _, serial in q.slots)
        ring = self.r.ring
        if last >= ring.serial:  # still being recorded: submitted now, never waited on
            self.r.flush()
        return ring.poll() >= last

    def QueryAvailable(self, ctx: Any, d: Any) -> Any:
        q = _query(ctx.resolved["Handle"], "QueryAvailable.Handle")
        return self._answer(
            ctx,
            lambda: Reply.ok(  # type: ignore[attr-defined]
                struct.pack("<I", int(self.query_available(q, "QueryAvailable")))
            ),
        )

    def query_result(self, q: VkQuery, wait: bool, where: str) -> int | None:
        if not self.query_available(q, where):
            if not wait:
                return None
            self.r.ring.wait_serial(max(serial for _, serial in q.slots), _FOREVER)
        if q.result is None:
            q.result = self._read_query(q)
        return q.result

    def _read_query(self, q: VkQuery) -> int:
        if q.kind in GL_QUERY.OCCLUSION:
            total = 0
            data = vk.ffi.new("uint64_t[1]")
            for (pool, index), _ in q.slots:
                vk.vkGetQueryPoolResults(self.r.dev.device, pool, index, 1, 8, data, 8,
                                         vk.VK_QUERY_RESULT_64_BIT)  # fmt: skip
                self.query_reads += 1
                total += int(data[0])
            return total if q.kind == GL_QUERY.SAMPLES_PASSED else int(total > 0)
        if q.kind == GL_QUERY.TIMESTAMP:
            return self._ns(self._ticks(q.slots[0][0]))
        begin, end = (self._ticks(slot) for slot, _ in q.slots[:2])
        return self._ns((end - begin) & self.ts_mask)

    def QueryResult(self, ctx: Any, d: Any) -> Any:
        q = _query(ctx.resolved["Query"], "QueryResult.Query")

        def body() -> Any:
            value = self.query_result(q, bool(d.payload.Wait), "QueryResult")
            return Reply.ok(struct.pack("<IIQ", int(value is not None), 0, value or 0))

        return self._answer(ctx, body)  # type: ignore[attr-defined]

    def query_tick(self, ctx: Any) -> None:
        """``query_result`` for each ended query whose submissions have retired (read
        once, never waited for); the ring has just been polled."""
        done = self.r.ring.completed
        for q in [q for q in self._queries_live.values() if not q.told and q.ended]:
            if q.slots and max(s for _, s in q.slots) > done:
                continue
            q.told = True
            if q.result is None:
                q.result = self._read_query(q) if q.slots else 0
            ctx.events.query_result(q.handle, q.result)

    def QueryTimestamp(self, ctx: Any, d: Any) -> Any:
        return Reply.ok(struct.pack("<Q", self.timestamp_now()))

    def timestamp_now(self) -> int:
        """``glGetInteger64v(GL_TIMESTAMP)``: the device's time once what came before has
        reached it (a top-of-pipe timestamp in a submission of its own), in ns."""
        self._need_timestamps("QueryTimestamp")
        self.r.end_pass()
        self.r.flush()
        cmd = self.r.ring.cmd()
        slot = self._ts_pools.take()
        vk.vkCmdResetQueryPool(cmd, slot[0], slot[1], 1)
        vk.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, slot[0], slot[1])
        self.r.ring.submit(wait=True)
        ns = self._ns(self._ticks(slot))
        self._ts_pools.give(slot)  # retired: the read is done
        return ns
