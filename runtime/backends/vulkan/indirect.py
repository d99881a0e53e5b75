"""Indirect and client-memory draws on Vulkan (issue 19): a mixin of the backend.

- ``SetIndirectBuffers``: state only (each indirect draw names its buffer in its tail); the
  count of ``*IndirectCount`` is resolved on the client, so a draw whose
  ``MGPDrawIndirect.ParameterBuffer`` is not null is refused by name.
- ``DrawVbo`` with ``kDrawIsIndirect``: ``vkCmdDrawIndirect`` / ``vkCmdDrawIndexedIndirect``
  over the command buffer (GL's and Vulkan's command layouts are the same words). With the
  device's ``multiDrawIndirect`` one call draws ``DrawCount`` commands at GL's stride (0 =
  tightly packed, normalised here); without it, one call per command (flattened). A command
  whose ``baseInstance`` is not zero on a device without ``drawIndirectFirstInstance`` is
  drawn with the values it holds through the direct call (counted in ``indirect_flattened``).
- ``kDrawHasUserIndices``: the ``MGHostSpan`` tail's bytes (``SEG_STAGE``, or the
  ``IndexResource``'s bytes at ``Offset`` under ``kMGHostSpanSegFromServerIndexMirror``) in a
  backend-owned index buffer, then drawn as from any index buffer.
- A restart index other than Vulkan's fixed one (0xFFFF / 0xFFFFFFFF): the whole index list
  rewritten from the buffer's bytes into 32-bit indices, the restart index mapped to
  0xFFFFFFFF, memoised per buffer content (``writes``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...schema import tables as _t
from ...server.handle_fields import table_of
from .errors import VulkanRefused
from .renderer import DrawCall
from .resources import VkBufferResource

__all__ = ["VulkanDrawsMixin", "IndirectDrawCall"]

#: DrawIndirectCommand / DrawIndexedIndirectCommand, in 32-bit words (GL = Vulkan)
ARRAYS_COMMAND, ELEMENTS_COMMAND = 4, 5
_REWRITE_MEMO = 8
#: the 32-bit restart index a rewrite maps to
FIXED_RESTART = 0xFFFFFFFF


def _state_only(ctx: Any, d: Any) -> None:
    """The applier already holds what this record says; the next indirect draw reads it."""
    return None


def _flag(name: str) -> int:
    return int(_t.enum("MGPDrawFlagBit")[name])


class IndirectDrawCall(DrawCall):
    """A draw whose commands live in a buffer: ``ranges`` is None, :meth:`record` draws."""

    __slots__ = ("buffer", "offset", "step", "count", "multi", "direct")

    def record(self, lib: Any, cmd: Any) -> None:
        """The indirect calls, then the commands drawn from their values (``direct``)."""
        indexed = self.index is not None
        fn = lib.vkCmdDrawIndexedIndirect if indexed else lib.vkCmdDrawIndirect
        if self.multi and self.count > 1 and not self.direct:
            fn(cmd, self.buffer, self.offset, self.count, self.step)
        else:
            for i in range(self.count):
                if i not in self.direct:
                    fn(cmd, self.buffer, self.offset + i * self.step, 1, self.step)
        for c in self.direct.values():
            if indexed:
                lib.vkCmdDrawIndexed(cmd, c[0], c[1], c[2], c[3], c[4])
            else:
                lib.vkCmdDraw(cmd, c[0], c[1], c[2], c[3])


class VulkanDrawsMixin:
    """``SetIndirectBuffers``; the indirect, user-index and restart-rewrite paths of DrawVbo."""

    dev: Any
    r: Any

    #: the applier holds the bound buffers; each indirect draw names its own command
    #: buffer in its MGPDrawIndirect tail, which is what the draw reads
    SetIndirectBuffers = staticmethod(_state_only)

    def _draws_state(self) -> None:
        if not hasattr(self, "_user_ib"):
            self._user_ib: VkBufferResource | None = None
            self._rewrites: dict[tuple, VkBufferResource] = {}
            self.indirect_draws = 0
            self.indirect_flattened = 0
            self.restart_rewrites = 0
            self.user_index_bytes = 0

    def user_index_buffer(self, ctx: Any, d: Any, what: str) -> VkBufferResource:
        """The draw's ``MGHostSpan`` bytes in the backend's own index buffer."""
        self._draws_state()
        span = d.tails[-1][0]
        if int(span.Seg) == int(_t.constant("kMGHostSpanSegFromServerIndexMirror")):
            obj = ctx.resolved.get("IndexResource")
            ib = getattr(obj, "backend", None)
            if not isinstance(ib, VkBufferResource) or ib.gpu is None:
                raise VulkanRefused(f"{what}.MGHostSpan.Seg", "a span of the index mirror with "
                                    "no IndexResource")  # fmt: skip
            off, n = int(span.Offset), int(span.Size)
            if off + n > ib.size:
                raise VulkanRefused(f"{what}.MGHostSpan.Size", f"[{off}, {off + n}) of a "
                                    f"{ib.size}-byte index buffer")  # fmt: skip
            self.settle_buffer(ib)  # type: ignore[attr-defined]  # GPU-written: retired first
            data = ib.gpu.read(off, n)
        else:
            data = bytes(ctx.stage.view((span.Offset, span.Size, span.Seg), f"{what}.MGHostSpan"))
        buf = self._user_ib
        if buf is None or buf.size < max(len(data), 4):
            if buf is not None:
                self._drop(buf)  # type: ignore[attr-defined]
                buf._retire()
            buf = self._user_ib = self._keep(  # type: ignore[attr-defined]
                VkBufferResource(self.dev, self.r.ring.defer))  # destroyed at close if still live
            buf.respecify(max(len(data), 4))
        buf.write(0, data, self.r.ring.completed)  # renamed if a recorded draw still reads it
        self.user_index_bytes += len(data)
        return buf

    def restart_rewrite(self, ib: VkBufferResource, size: int, restart: int,
                        what: str) -> VkBufferResource:  # fmt: skip
        """``ib``'s indices as 32-bit ones, ``restart`` -> 0xFFFFFFFF (Vulkan's fixed index)."""
        self._draws_state()
        assert ib.gpu is not None
        key = (id(ib), ib.gpu.buffer, ib.writes, getattr(ib, "gpu_written", 0), size, restart)
        hit = self._rewrites.get(key)
        if hit is not None:
            return hit
        src = np.frombuffer(ib.gpu.read(), {1: np.uint8, 2: np.uint16, 4: np.uint32}[size])
        src = src[: ib.size // size]
        if size == 4 and restart != 0xFFFFFFFF and bool((src == 0xFFFFFFFF).any()):
            raise VulkanRefused(f"{what}.RestartIndex", f"index 0xffffffff is a vertex under "
                                f"restart index 0x{restart:x}: no 32-bit value is left to "
                                "restart at")  # fmt: skip
        wide = src.astype(np.uint32)
        wide[src == restart] = FIXED_RESTART
        if len(self._rewrites) >= _REWRITE_MEMO:
            old = self._rewrites.pop(next(iter(self._rewrites)))
            self._drop(old)  # type: ignore[attr-defined]
            old._retire()
        buf = self._keep(VkBufferResource(self.dev, self.r.ring.defer))  # type: ignore[attr-defined]
        buf.respecify(max(wide.nbytes, 4))
        buf.write(0, wide.tobytes(), self.r.ring.completed)
        self._rewrites[key] = buf
        self.restart_rewrites += 1
        return buf

    def indirect_call(self, ctx: Any, d: Any, base: DrawCall, serial: int) -> IndirectDrawCall:
        """The record's ``MGPDrawIndirect`` as a draw the renderer records (``base``: the
        resolved pipeline inputs)."""
        self._draws_state()
        p, what = d.payload, d.name
        ind = d.tails[0][0]
        if not ind.ParameterBuffer.is_null:
            raise VulkanRefused(f"{what}.MGPDrawIndirect.ParameterBuffer", "the draw count is "
                                "resolved on the client (ARCHITECTURE.md §5.7): no server reads a "
                                "parameter buffer")  # fmt: skip
        obj = ctx.tables[table_of("Buffer")].resolve(ind.Buffer, f"{what}.MGPDrawIndirect.Buffer")
        buf = obj.backend
        if not isinstance(buf, VkBufferResource) or buf.gpu is None:
            raise VulkanRefused(f"{what}.MGPDrawIndirect.Buffer", "no storage made for it yet")
        words = ELEMENTS_COMMAND if int(p.IndexSize) else ARRAYS_COMMAND
        offset, n = int(ind.Offset), int(ind.DrawCount)
        step = int(ind.Stride) or 4 * words
        if offset % 4 or step % 4 or step < 4 * words:
            raise VulkanRefused(f"{what}.MGPDrawIndirect.Offset", f"offset {offset}, stride "
                                f"{step}: multiples of 4, the stride at least {4 * words}")  # fmt: skip
        if n and offset + (n - 1) * step + 4 * words > buf.size:
            raise VulkanRefused(f"{what}.MGPDrawIndirect.DrawCount", f"{n} commands from offset "
                                f"{offset} (stride {step}) pass the {buf.size}-byte buffer")  # fmt: skip
        feats = self.dev.features
        direct: dict[int, tuple[int, ...]] = {}
        if n and not feats.get("drawIndirectFirstInstance"):
            raw = np.frombuffer(buf.gpu.read(), np.uint32)
            for i in range(n):
                c = raw[(offset + i * step) // 4 : (offset + i * step) // 4 + words]
                if int(c[-1]):
                    vals = [int(v) for v in c]
                    if words == ELEMENTS_COMMAND:
                        vals[3] = int(np.uint32(vals[3]).view(np.int32))
                    direct[i] = tuple(vals)
            self.indirect_flattened += len(direct)
        dc = IndirectDrawCall(base.cso, base.shader_handle, base.shader, base.vertex,
                              base.buffers, base.index, base.topology, base.restart, [],
                              1, 0)  # fmt: skip
        dc.ranges = None  # type: ignore[assignment]  # the renderer calls record()
        dc.patch = base.patch  # a patch list drawn indirectly keeps its control points
        dc.buffer, dc.offset, dc.step, dc.count = buf.use(serial), offset, step, n
        dc.multi, dc.direct = bool(feats.get("multiDrawIndirect")), direct
        self.indirect_draws += n - len(direct)
        return dc
