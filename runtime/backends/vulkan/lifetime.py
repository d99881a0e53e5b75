"""Command buffers and fences per frame, and the fence-retired deletion queue.

Every submission has a serial (1, 2, ...) and a slot of the ring (``frames`` slots, each
one command buffer + one fence). :meth:`FrameRing.cmd` opens the slot's command buffer
for recording (first waiting for that slot's previous submission); :meth:`submit` closes
and submits it. :meth:`defer` queues a destroy function against the serial being
recorded now: it runs only once that serial's fence has signalled (and every earlier
one), so no object is destroyed while a command buffer in flight may use it. The
``DeleteRenderState`` pipelines, retired framebuffers, buffers and images all go through
here. A :attr:`FrameRing.timer` (:class:`~.gpu_timer.GpuTimer`) is told when a command
buffer begins, when it is closed, and when its fence has been seen signalled.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import vulkan as vk

from .device import VulkanDevice

__all__ = ["FrameRing"]

_FOREVER = 0xFFFFFFFFFFFFFFFF


class FrameRing:
    def __init__(self, dev: VulkanDevice, frames: int = 2) -> None:
        self.dev = dev
        d = dev.device
        self.pool = vk.vkCreateCommandPool(
            d,
            vk.VkCommandPoolCreateInfo(
                flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                queueFamilyIndex=dev.queue_family,
            ),
            None,
        )
        self.cmds = vk.vkAllocateCommandBuffers(
            d,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=frames,
            ),
        )  # fmt: skip
        signaled = vk.VkFenceCreateInfo(flags=vk.VK_FENCE_CREATE_SIGNALED_BIT)
        self.fences = [vk.vkCreateFence(d, signaled, None) for _ in range(frames)]
        self.frames = frames
        self.serial = 1  # the serial being recorded (submitted ones are < serial)
        self.completed = 0
        self._slot_serial = [0] * frames  # last serial submitted from each slot
        self._inflight: deque[tuple[int, int]] = deque()  # (serial, slot), submission order
        self._deferred: deque[tuple[int, Callable[[], None]]] = deque()
        self._recording: Any = None
        self.submits = 0
        self.destroyed = 0
        #: timestamps around every command buffer (:class:`~.gpu_timer.GpuTimer`), or None
        self.timer: Any = None

    @property
    def slot(self) -> int:
        return self.serial % self.frames

    @property
    def recording(self) -> bool:
        return self._recording is not None

    def cmd(self) -> Any:
        """The command buffer of the serial being recorded (begun on first use)."""
        if self._recording is None:
            slot = self.slot
            self._wait_through(self._slot_serial[slot])
            vk.vkResetFences(self.dev.device, 1, [self.fences[slot]])
            cmd = self.cmds[slot]
            vk.vkResetCommandBuffer(cmd, 0)
            vk.vkBeginCommandBuffer(
                cmd,
                vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT),
            )
            if self.timer is not None:
                self.timer.begin(cmd, slot)
            self._recording = cmd
        return self._recording

    def submit(self, wait: bool = False) -> int:
        """Submit what was recorded (if anything); returns its serial. ``wait`` blocks on it."""
        if self._recording is None:
            if wait:
                self.wait_idle()
            return self.serial - 1
        cmd, slot, serial = self._recording, self.slot, self.serial
        if self.timer is not None:
            self.timer.end(cmd, slot, serial)
        vk.vkEndCommandBuffer(cmd)
        vk.vkQueueSubmit(
            self.dev.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cmd])],
            self.fences[slot],
        )  # fmt: skip
        self._recording = None
        self._slot_serial[slot] = serial
        self._inflight.append((serial, slot))
        self.serial += 1
        self.submits += 1
        if wait:
            self._wait_through(serial)
        else:
            self.poll()
        return serial

    def defer(self, destroy: Callable[[], None]) -> None:
        """Run ``destroy`` once every submission up to the one being recorded has retired."""
        self._deferred.append((self.serial, destroy))
        if self._recording is None and not self._inflight:
            self._run_retired(self.serial)  # nothing recorded or in flight can use it

    @property
    def pending_deletions(self) -> int:
        return len(self._deferred)

    def poll(self) -> int:
        """Retire every finished submission (in order) without blocking; the completed serial."""
        while self._inflight:
            serial, slot = self._inflight[0]
            try:
                vk.vkGetFenceStatus(self.dev.device, self.fences[slot])
            except vk.VkNotReady:  # the binding raises for every result but VK_SUCCESS
                break
            self._inflight.popleft()
            self.completed = serial
            self._retired(serial, slot)
        self._run_retired(self.completed)
        return self.completed

    def wait_serial(self, serial: int, timeout_ns: int) -> bool:
        """Wait at most ``timeout_ns`` for submission ``serial`` (already submitted) to
        retire; True once it has (every earlier one with it: a fence signal covers all
        that came before it in submission order), False on the timeout."""
        if serial <= self.completed:
            return True
        if serial >= self.serial:
            raise ValueError(f"serial {serial} is not submitted (next is {self.serial})")
        slot = next(sl for s, sl in self._inflight if s == serial)
        try:
            vk.vkWaitForFences(self.dev.device, 1, [self.fences[slot]], vk.VK_TRUE,
                               min(int(timeout_ns), _FOREVER))  # fmt: skip
        except vk.VkTimeout:  # the binding raises for every result but VK_SUCCESS
            self.poll()
            return serial <= self.completed
        self._wait_through(serial)
        return True

    def _wait_through(self, serial: int) -> None:
        while self._inflight and self._inflight[0][0] <= serial:
            s, slot = self._inflight.popleft()
            vk.vkWaitForFences(self.dev.device, 1, [self.fences[slot]], vk.VK_TRUE, _FOREVER)
            self.completed = s
            self._retired(s, slot)
        self._run_retired(self.completed)

    def _retired(self, serial: int, slot: int) -> None:
        """``serial``'s fence signalled: what it wrote may be read (before the slot is reused)."""
        if self.timer is not None:
            self.timer.retired(serial, slot)

    def _run_retired(self, through: int) -> None:
        while self._deferred and self._deferred[0][0] <= through:
            _, fn = self._deferred.popleft()
            fn()
            self.destroyed += 1

    def wait_idle(self) -> None:
        """Submit nothing new; wait for everything in flight and run every deletion due."""
        self._wait_through(self.serial - 1)
        if self._recording is None:
            self._run_retired(self.serial)

    def close(self) -> None:
        self.submit(wait=True)
        self.wait_idle()
        d = self.dev.device
        for f in self.fences:
            vk.vkDestroyFence(d, f, None)
        vk.vkDestroyCommandPool(d, self.pool, None)
