"""GPU-side time per submitted command buffer, measured by the GPU (timestamp queries).

One query pool holds a (start, end) pair per slot of the :class:`~.lifetime.FrameRing`.
When the ring begins a slot's command buffer, :meth:`GpuTimer.begin` resets that pair
(``vkCmdResetQueryPool``: the command buffer has just begun, so no render pass is open)
and writes the start timestamp at the top of the pipe; :meth:`GpuTimer.end` writes the
end timestamp at the bottom of the pipe just before the buffer is closed. The pair is
read (:meth:`GpuTimer.retired`) only once that submission's fence has signalled, never
earlier: a read of a serial the ring has not retired is refused (:class:`TimerRead`).

Ticks become nanoseconds with the physical device's ``timestampPeriod``; the difference
is taken modulo ``2**timestampValidBits`` of the queue family. A queue family with
``timestampValidBits == 0`` cannot time: :attr:`GpuTimer.available` is then the reason
(``"gpu time not available: ..."``) and no query pool is made.

Each submission's time is added to the frame it was recorded in (``frame`` is the
renderer's present count at submit), so :meth:`per_frame` lists GPU ns per presented
frame, in order, for the frames whose every submission has been read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import vulkan as vk

from .device import VulkanDevice
from .errors import VulkanRefused

__all__ = ["GpuTimer", "TimerRead", "AVAILABLE"]

AVAILABLE = "available"


class TimerRead(VulkanRefused):
    """A query pair read before its submission's fence signalled."""


def timing_support(dev: VulkanDevice) -> tuple[str, int, float]:
    """(availability, valid bits, ns per tick) of the device's graphics queue family."""
    fams = vk.vkGetPhysicalDeviceQueueFamilyProperties(dev.physical)
    bits = int(fams[dev.queue_family].timestampValidBits)
    period = float(dev.limits.timestampPeriod)
    both = bool(dev.limits.timestampComputeAndGraphics)
    if bits == 0:
        return (f"gpu time not available: queue family {dev.queue_family} has "
                f"timestampValidBits 0 (timestampComputeAndGraphics {both})", 0, period)  # fmt: skip
    if period <= 0.0:
        return f"gpu time not available: timestampPeriod {period}", bits, period
    return AVAILABLE, bits, period


class GpuTimer:
    def __init__(self, dev: VulkanDevice, slots: int, completed: Callable[[], int],
                 frame: Callable[[], int]) -> None:  # fmt: skip
        self.dev = dev
        self.slots = slots
        self._completed = completed  # the ring's last retired serial
        self._frame = frame  # the index of the frame being recorded (presents so far)
        self.available, bits, self.period = timing_support(dev)
        self.mask = (1 << bits) - 1 if bits < 64 else (1 << 64) - 1
        self.pool = None
        if self.available == AVAILABLE:
            self.pool = vk.vkCreateQueryPool(dev.device, vk.VkQueryPoolCreateInfo(
                queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2 * slots), None)  # fmt: skip
        self._data = vk.ffi.new("uint64_t[2]")
        self._pending: dict[int, int] = {}  # serial -> frame, written and not yet read
        self._frame_ns: dict[int, int] = {}  # frame -> GPU ns of its submissions read so far
        self._frame_open: dict[int, int] = {}  # frame -> its submissions not yet read
        self.submissions = 0
        self.reads = 0

    # -- recording ----------------------------------------------------------------
    def begin(self, cmd: Any, slot: int) -> None:
        if self.pool is None:
            return
        vk.vkCmdResetQueryPool(cmd, self.pool, 2 * slot, 2)
        vk.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, self.pool, 2 * slot)

    def end(self, cmd: Any, slot: int, serial: int) -> None:
        if self.pool is None:
            return
        frame = self._frame()
        vk.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.pool,
                               2 * slot + 1)  # fmt: skip
        self._pending[serial] = frame
        self._frame_open[frame] = self._frame_open.get(frame, 0) + 1
        self.submissions += 1

    # -- reading --------------------------------------------------------------------
    def retired(self, serial: int, slot: int) -> None:
        """The ring saw ``serial``'s fence signal: read its pair (before the slot is reused)."""
        frame = self._pending.pop(serial, None)
        if frame is None:
            return
        if serial > self._completed():
            raise TimerRead("GpuTimer.read", f"serial {serial} read before its fence signalled "
                            f"(completed {self._completed()})")  # fmt: skip
        vk.vkGetQueryPoolResults(self.dev.device, self.pool, 2 * slot, 2, 16, self._data, 8,
                                 vk.VK_QUERY_RESULT_64_BIT)  # fmt: skip
        ticks = (int(self._data[1]) - int(self._data[0])) & self.mask
        self._frame_ns[frame] = self._frame_ns.get(frame, 0) + round(ticks * self.period)
        self._frame_open[frame] -= 1
        self.reads += 1

    def per_frame(self, frames: int) -> list[int]:
        """GPU ns of each of the first ``frames`` presented frames that are fully read (a
        frame with no submission of its own, e.g. an empty present, counts as 0)."""
        out = []
        for f in range(frames):
            if self._frame_open.get(f, 0):
                break
            out.append(self._frame_ns.get(f, 0))
        return out

    def destroy(self) -> None:
        if self.pool is not None:
            vk.vkDestroyQueryPool(self.dev.device, self.pool, None)
            self.pool = None
