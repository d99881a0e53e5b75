"""Indirect and client-memory draws on GLES 3.1 (issue 19): a mixin of the backend.

- ``SetIndirectBuffers``: the draw-indirect buffer (``GL_DRAW_INDIRECT_BUFFER``); a
  parameter buffer is state only -- the count of ``*IndirectCount`` is resolved on the
  client, so a draw whose ``MGPDrawIndirect.ParameterBuffer`` is not null is refused by name.
- ``DrawVbo`` with ``kDrawIsIndirect``: one ``glDrawArraysIndirect`` /
  ``glDrawElementsIndirect`` per command (GLES has no multi-draw-indirect: the draws are
  flattened, command ``i`` at ``Offset + i * Stride``). Before each, the command is read from
  the buffer's host mirror and the draw's vertex / index ranges are proven inside their
  buffers, as a direct draw's are. GLES reserves the command's ``baseInstance`` (it must be
  0): a command with one is drawn with the values it holds through the direct call and the
  backend's base-instance emulation (counted in ``indirect_flattened``).
- ``kDrawHasUserIndices``: the ``MGHostSpan`` tail's bytes (``SEG_STAGE``; or, with ``Seg ==
  kMGHostSpanSegFromServerIndexMirror``, the ``IndexResource``'s host mirror at ``Offset``)
  uploaded into one backend-owned element buffer, then drawn as from any index buffer.
- A restart index other than GLES's fixed one (the type's maximum): the whole index list
  rewritten from the host mirror into 32-bit indices with the restart index mapped to
  0xFFFFFFFF (``GL_PRIMITIVE_RESTART_FIXED_INDEX``), memoised per buffer content.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ...schema import tables as _t
from ...server.handle_fields import table_of
from .errors import DriverRefused
from .gl import GL
from .resources import GlBuffer
from . import vertex
from .vertex import INDEX_DTYPES

__all__ = ["GlesDrawsMixin", "ARRAYS_COMMAND", "ELEMENTS_COMMAND"]

#: DrawArraysIndirectCommand / DrawElementsIndirectCommand, in 32-bit words
ARRAYS_COMMAND, ELEMENTS_COMMAND = 4, 5
_REWRITE_MEMO = 8  # rewritten index lists kept (one GL buffer each)
#: the 32-bit restart index a rewrite maps to
FIXED_RESTART = 0xFFFFFFFF


def _state_only(ctx: Any, d: Any) -> None:
    """The applier already holds what this record says; the next indirect draw reads it."""
    return None


def _flag(name: str) -> int:
    return int(_t.enum("MGPDrawFlagBit")[name])


class GlesDrawsMixin:
    """``SetIndirectBuffers`` and the indirect / user-index / restart-rewrite draw paths."""

    gl: Any
    vtx: Any
    res: Any
    binder: Any
    draws: int

    #: the applier holds the bound buffers; each indirect draw names its own command
    #: buffer in its MGPDrawIndirect tail, which is what the draw reads
    SetIndirectBuffers = staticmethod(_state_only)

    def _draws_state(self) -> None:
        if not hasattr(self, "_user_ib"):
            self._user_ib: GlBuffer | None = None
            self._rewrites: dict[tuple, GlBuffer] = {}
            self.indirect_draws = 0
            self.indirect_flattened = 0
            self.restart_rewrites = 0
            self.user_index_bytes = 0

    # -- user indices ----------------------------------------------------------------
    def user_index_buffer(self, ctx: Any, d: Any, what: str) -> GlBuffer:
        """The draw's ``MGHostSpan`` bytes in the backend's own element buffer."""
        self._draws_state()
        span = d.tails[-1][0]
        if int(span.Seg) == int(_t.constant("kMGHostSpanSegFromServerIndexMirror")):
            ib = getattr(ctx.resolved.get("IndexResource"), "backend", None)
            if not isinstance(ib, GlBuffer):
                raise DriverRefused(f"{what}.MGHostSpan.Seg", "a span of the index mirror with "
                                    "no IndexResource")  # fmt: skip
            off, n = int(span.Offset), int(span.Size)
            if off + n > ib.size:
                raise DriverRefused(f"{what}.MGHostSpan.Size", f"[{off}, {off + n}) of a "
                                    f"{ib.size}-byte index buffer")  # fmt: skip
            if ib.gpu_dirty:  # the GPU wrote it: the mirror is re-read first (seed 001 §10.3)
                vertex.refresh_mirror(self.gl, ib)
            data = bytes(ib.mirror[off : off + n])
        else:
            data = bytes(ctx.stage.view((span.Offset, span.Size, span.Seg), f"{what}.MGHostSpan"))
        buf = self._user_ib
        gl = self.gl
        if buf is None:
            buf = self._user_ib = GlBuffer(int(gl.glGenBuffers(1)))
        gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, buf.name)  # not the VAO's element binding
        gl.glBufferData(GL.GL_COPY_WRITE_BUFFER, len(data), data or None, GL.GL_STREAM_DRAW)
        buf.size, buf.mirror, buf.serial = len(data), bytearray(data), buf.serial + 1
        self.user_index_bytes += len(data)
        return buf

    # -- restart rewrite --------------------------------------------------------------
    def restart_rewrite(self, ib: GlBuffer, size: int, restart: int, what: str) -> GlBuffer:
        """``ib``'s indices as 32-bit ones, ``restart`` -> 0xFFFFFFFF (GLES's fixed index)."""
        self._draws_state()
        if ib.gpu_dirty:  # the rewrite reads the mirror: GPU-written bytes re-read first
            vertex.refresh_mirror(self.gl, ib)
        key = (ib.name, ib.serial, size, restart)
        hit = self._rewrites.get(key)
        if hit is not None:
            return hit
        src = np.frombuffer(ib.mirror, INDEX_DTYPES[size][1], count=ib.size // size)
        if size == 4 and restart != 0xFFFFFFFF and bool((src == 0xFFFFFFFF).any()):
            raise DriverRefused(f"{what}.RestartIndex", f"index 0xffffffff is a vertex under "
                                f"restart index 0x{restart:x}: no 32-bit value is left to "
                                "restart at")  # fmt: skip
        wide = src.astype(np.uint32)
        wide[src == restart] = FIXED_RESTART
        gl = self.gl
        if len(self._rewrites) >= _REWRITE_MEMO:
            old = self._rewrites.pop(next(iter(self._rewrites)))
            self.vtx.forget_buffer(old)
            gl.glDeleteBuffers(1, [old.name])
        buf = GlBuffer(int(gl.glGenBuffers(1)), wide.nbytes, bytearray(wide.tobytes()), 1)
        gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, buf.name)
        gl.glBufferData(GL.GL_COPY_WRITE_BUFFER, wide.nbytes, wide.tobytes() or None,
                        GL.GL_STATIC_DRAW)  # fmt: skip
        self._rewrites[key] = buf
        self.restart_rewrites += 1
        return buf

    # -- indirect ---------------------------------------------------------------------
    def draw_indirect(self, ctx: Any, d: Any, prog: Any) -> None:
        """The record's ``MGPDrawIndirect`` commands (module docstring)."""
        self._draws_state()
        p, what, gl = d.payload, d.name, self.gl
        ind = d.tails[0][0]
        if not ind.ParameterBuffer.is_null:
            raise DriverRefused(f"{what}.MGPDrawIndirect.ParameterBuffer", "the draw count is "
                                "resolved on the client (ARCHITECTURE.md §5.7): no server reads a "
                                "parameter buffer")  # fmt: skip
        buf = ctx.tables[table_of("Buffer")].resolve(ind.Buffer, f"{what}.MGPDrawIndirect.Buffer")
        buf = buf.backend
        if not isinstance(buf, GlBuffer):
            raise DriverRefused(f"{what}.MGPDrawIndirect.Buffer", "no buffer made for it yet")
        if buf.gpu_dirty:  # the commands are read from the mirror: a GPU write re-read first
            vertex.refresh_mirror(gl, buf)
        size, mode = int(p.IndexSize), int(p.Mode)
        words = ELEMENTS_COMMAND if size else ARRAYS_COMMAND
        offset, n = int(ind.Offset), int(ind.DrawCount)
        step = int(ind.Stride) or 4 * words
        if offset % 4 or step % 4 or step < 4 * words:
            raise DriverRefused(f"{what}.MGPDrawIndirect.Offset", f"offset {offset}, stride "
                                f"{step}: multiples of 4, the stride at least {4 * words}")  # fmt: skip
        if n and offset + (n - 1) * step + 4 * words > buf.size:
            raise DriverRefused(f"{what}.MGPDrawIndirect.DrawCount", f"{n} commands from offset "
                                f"{offset} (stride {step}) pass the {buf.size}-byte buffer")  # fmt: skip
        ib, restart, gl_type = None, None, 0
        if size:
            ib = getattr(ctx.resolved.get("IndexResource"), "backend", None)
            if not isinstance(ib, GlBuffer) or size not in INDEX_DTYPES:
                raise DriverRefused(f"{what}.IndexResource", f"an indexed draw ({size}-byte "
                                    "indices) with no index buffer")  # fmt: skip
            ibs = ctx.last.get("SetIndexBuffer")
            if ibs is not None and int(ibs.Offset):
                raise DriverRefused("SetIndexBuffer.Offset", "an indirect command's firstIndex "
                                    "counts from the element buffer's start in GLES")  # fmt: skip
            if int(p.Flags) & _flag("kDrawPrimitiveRestart"):
                restart = int(p.RestartIndex)
                if restart != (1 << (8 * size)) - 1:
                    ib, size, restart = self.restart_rewrite(ib, size, restart, what), 4, 0xFFFFFFFF
            self.vtx.bind_index_buffer(ib)
            gl_type = INDEX_DTYPES[size][0]
        gl.glBindBuffer(GL.GL_DRAW_INDIRECT_BUFFER, buf.name)
        epoch = self.res.epoch
        for i in range(n):
            at = offset + i * step
            c = np.frombuffer(buf.mirror, np.uint32, words, at)
            count, instances = int(c[0]), int(c[1])
            if not count or not instances:
                continue  # GL draws nothing
            first = int(c[2])
            base = int(c[-1])  # baseInstance (GLES: reserved, must be zero)
            if size:
                assert ib is not None
                bias = int(c[3].view(np.int32))
                top = self.vtx.max_index(ib, size, first, count, restart, what)
                if top >= 0 and top + bias < 0:
                    raise DriverRefused(f"{what}.IndexBias", f"index {top} + base vertex {bias} "
                                        "is negative")  # fmt: skip
                last = top + bias if top >= 0 else top
            else:
                last = first + count - 1
            self.vtx.apply(what, base)
            if prog.binds:
                self.binder.bind(ctx, self._bound_handle, prog, epoch, base, what)  # type: ignore[attr-defined]
            self.vtx.check_range(last, instances, epoch, what, base)
            if base == 0:
                ptr = ctypes.c_void_p(at)
                if size:
                    gl.glDrawElementsIndirect(mode, gl_type, ptr)
                else:
                    gl.glDrawArraysIndirect(mode, ptr)
                self.indirect_draws += 1
                continue
            self.indirect_flattened += 1  # the values the command holds, drawn directly
            if not size:
                gl.glDrawArraysInstanced(mode, first, count, instances)
            elif bias:
                if not self._base_vertex:  # type: ignore[attr-defined]
                    raise DriverRefused(f"{what}.IndexBias", "the driver exports no "
                                        "glDrawElementsBaseVertex (GLES 3.2)")  # fmt: skip
                gl.glDrawElementsInstancedBaseVertex(mode, count, gl_type,
                                                     ctypes.c_void_p(first * size), instances,
                                                     bias)  # fmt: skip
            else:
                gl.glDrawElementsInstanced(mode, count, gl_type, ctypes.c_void_p(first * size),
                                           instances)  # fmt: skip
        gl.glBindBuffer(GL.GL_DRAW_INDIRECT_BUFFER, 0)
        self.draws += n
