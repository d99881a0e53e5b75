"""GL sync objects on the Vulkan backend: each fence retires with the submission it covers.

A fence made by ``FenceCreate`` covers every command recorded before it: the serial of
the :class:`~.lifetime.FrameRing` submission being recorded (or, when nothing is being
recorded, the last one submitted; none at all: it is signalled at once). Its status is
the ring's own retirement -- the VkFence of that submission seen signalled (in order) --
never a present count or a frame estimate. ``FenceStatus`` polls without blocking;
``FenceWait`` (``glClientWaitSync``) submits what the fence covers when it is still being
recorded (``GL_SYNC_FLUSH_COMMANDS_BIT``, or any non-zero timeout: a wait for commands
never submitted could only time out) and waits on that submission's VkFence for at most
``TimeoutNs``; ``FenceWaitServer`` (``glWaitSync``) records an execution and memory
dependency on everything earlier in submission order, so no later command on the queue
starts before what the fence covers has finished.

Replies (docs/REVERSE_CHANNEL.md §1): ``FenceStatus`` ``u32 signalled``; ``FenceWait``
``u32`` 0 timeout expired, 1 condition satisfied, 2 already signalled. :meth:`FenceEntries.tick`
pushes ``fence_signalled`` once per fence whose submission has retired.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from ...server.reverse import Reply
from .errors import VulkanRefused
from .targets import full_barrier

__all__ = ["FenceEntries", "VkSyncObject", "GL_SYNC"]


class GL_SYNC:
    """GL registry values of the sync answers (what glGetSynciv / glClientWaitSync return)."""

    UNSIGNALED, SIGNALED = 0x9118, 0x9119
    ALREADY_SIGNALED, TIMEOUT_EXPIRED, CONDITION_SATISFIED = 0x911A, 0x911B, 0x911C
    FLUSH_COMMANDS_BIT = 0x00000001


#: the non-present tick's period: what a fence or query waits on is submitted once nothing
#: was for this long (seed 001 §11.8: 8 ms since the last Present)
TICK_FLUSH_NS = 8_000_000

#: the wait answer -> FenceWait's reply value (docs/REVERSE_CHANNEL.md §1)
_WAIT_REPLY = {GL_SYNC.TIMEOUT_EXPIRED: 0, GL_SYNC.CONDITION_SATISFIED: 1,
               GL_SYNC.ALREADY_SIGNALED: 2}  # fmt: skip


class VkSyncObject:
    """One fence: the ring serial whose retirement signals it."""

    __slots__ = ("serial", "handle", "told")

    def __init__(self, serial: int, handle: Any = None) -> None:
        self.serial = serial
        self.handle = handle
        self.told = False  # fence_signalled pushed

    def destroy(self) -> None:  # nothing of the device is held: the ring owns the VkFence
        self.serial = -1


def _sync(obj: Any, where: str) -> VkSyncObject:
    thing = getattr(obj, "backend", None)
    if not isinstance(thing, VkSyncObject) or thing.serial < 0:
        raise VulkanRefused(where, "the fence has no Vulkan sync object (never created here)")
    return thing


class FenceEntries:
    """The fence entries of :class:`~.backend.VulkanBackend` (a mixin: ``self.r`` is the
    :class:`~.renderer.VulkanRenderer`)."""

    r: Any
    _fences_live: dict[int, VkSyncObject]
    _tick_submits = -1
    _tick_t = 0
    tick_flushes = 0

    def _fence_serial(self) -> int:
        """The serial a fence made now covers."""
        r = self.r
        return r.ring.serial if r.pending() else r.ring.serial - 1

    def FenceCreate(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        obj.backend = fence = VkSyncObject(self._fence_serial(), obj.handle)
        self._fences_live[id(fence)] = fence
        self.fences_created = getattr(self, "fences_created", 0) + 1

    def FenceDestroy(self, ctx: Any, d: Any) -> None:
        obj = ctx.resolved["Handle"]
        if isinstance(getattr(obj, "backend", None), VkSyncObject):
            self._fences_live.pop(id(obj.backend), None)
            obj.backend.destroy()
        obj.backend = None

    def fence_signalled(self, fence: VkSyncObject) -> bool:
        """Non-blocking: has the submission the fence covers retired?"""
        ring = self.r.ring
        if fence.serial >= ring.serial:  # still being recorded: cannot have finished
            return False
        return ring.poll() >= fence.serial

    def FenceStatus(self, ctx: Any, d: Any) -> Any:
        fence = _sync(ctx.resolved["Handle"], "FenceStatus.Handle")
        return Reply.ok(struct.pack("<I", int(self.fence_signalled(fence))))

    def _waited_on(self) -> bool:
        """Does a fence or ended query wait on the serial being recorded?"""
        rec = self.r.ring.serial
        if any(not f.told and f.serial >= rec for f in self._fences_live.values()):
            return True
        return any(not q.told and q.ended and q.slots and max(s for _, s in q.slots) >= rec
                   for q in self._queries_live.values())  # type: ignore[attr-defined]  # fmt: skip

    def fence_wait(self, fence: VkSyncObject, timeout_ns: int, flags: int) -> int:
        if self.fence_signalled(fence):
            return GL_SYNC.ALREADY_SIGNALED
        ring = self.r.ring
        if fence.serial >= ring.serial:
            if not (flags & GL_SYNC.FLUSH_COMMANDS_BIT or timeout_ns):
                return GL_SYNC.TIMEOUT_EXPIRED
            self.r.flush()
            if fence.serial >= ring.serial:  # nothing was recorded after all: it cannot signal
                return GL_SYNC.TIMEOUT_EXPIRED
        done = ring.wait_serial(fence.serial, timeout_ns)
        return GL_SYNC.CONDITION_SATISFIED if done else GL_SYNC.TIMEOUT_EXPIRED

    def FenceWait(self, ctx: Any, d: Any) -> Any:
        p = d.payload
        fence = _sync(ctx.resolved["Fence"], "FenceWait.Fence")
        answer = self.fence_wait(fence, int(p.TimeoutNs), int(p.Flags))
        return Reply.ok(struct.pack("<I", _WAIT_REPLY[answer]))

    def tick(self, ctx: Any) -> None:
        """Retire what finished (per submission) and tell the client of each fence and
        query that has become signalled / available since the last tick. The non-present
        tick (seed 001 §11.8): while a fence or query waits on commands still being
        recorded and nothing was submitted for :data:`TICK_FLUSH_NS`, they are submitted
        (a loop that never presents still sees its fences signal)."""
        r, now = self.r, time.monotonic_ns()
        if r.ring.submits != self._tick_submits:
            self._tick_submits, self._tick_t = r.ring.submits, now
        elif now - self._tick_t >= TICK_FLUSH_NS and r.pending() and self._waited_on():
            r.flush()
            self.tick_flushes += 1
            self._tick_submits, self._tick_t = r.ring.submits, now
        done = r.ring.poll()
        for fence in [f for f in self._fences_live.values() if not f.told and f.serial >= 0]:
            if fence.serial <= done and fence.serial < self.r.ring.serial:
                fence.told = True
                ctx.events.fence_signalled(fence.handle)
        self.query_tick(ctx)

    def FenceWaitServer(self, ctx: Any, d: Any) -> None:
        """``glWaitSync``: later commands wait for the fence on the device, never here."""
        fence = _sync(ctx.resolved["Fence"], "FenceWaitServer.Fence")
        if self.fence_signalled(fence):
            return  # nothing left to wait for
        full_barrier(self.r.cmd_outside_pass())
        self.server_waits = getattr(self, "server_waits", 0) + 1
