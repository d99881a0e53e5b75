"""The client calls that answer (docs/REVERSE_CHANNEL.md §5): caps, fences, queries,
readbacks, copies, GL errors, persistent maps -- a mixin of :class:`~.api.Client`.

Availability polls (``fence_signalled``, ``query_available``, ``client_wait_sync`` with a
zero timeout) are answered from the client's mirrors, which the event ring feeds
(``EvFenceSignaled``, ``EvQueryResult``): no round trip. A handle polled
:data:`POLL_ESCALATE` times with no change escalates to one blocking round trip (seed 001
§11.6, starvation escalation). Every answering call checks the caps mirror first and is
refused on the client (``ClientError("<Call>: absent by caps")``) when the server's entry
table has no entry for it.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from ..errors import ProtocolCorruption
from ..schema import tables as _t
from ..server import reverse as _rv
from ..server.reverse import Event
from ..wire.handle import Handle, default_framebuffer
from .pixels import PixelFormatError, pixel_size, scatter
from .reverse import BUDGET_S, CapsMirror, ReverseLink
from .tracker import Buffer, Texture

__all__ = ["AnswersMixin", "Fence", "Query", "POLL_ESCALATE"]

#: unchanged local answers before a poll escalates to a round trip (MOBILEGL_IPC_POLL_ESCALATE)
POLL_ESCALATE = 64
GL_SAMPLES_PASSED, GL_ANY_SAMPLES_PASSED = 0x8914, 0x8C2F
GL_ANY_SAMPLES_PASSED_CONSERVATIVE, GL_TIME_ELAPSED, GL_TIMESTAMP = 0x8D6A, 0x88BF, 0x8E28
QUERY_TARGETS = (GL_SAMPLES_PASSED, GL_ANY_SAMPLES_PASSED, GL_ANY_SAMPLES_PASSED_CONSERVATIVE,
                 GL_TIME_ELAPSED)  # fmt: skip
WAIT_RESULTS = ("TIMEOUT_EXPIRED", "CONDITION_SATISFIED", "ALREADY_SIGNALED")
GL_NO_ERROR = 0


class Fence:
    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.signalled = False
        self.polls = 0


class Query:
    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.kind = 0
        self.created = False
        self.value: int | None = None
        self.active = False
        self.polls = 0


def _u32(data: bytes, call: str, n: int = 4) -> int:
    if len(data) != n:
        raise ProtocolCorruption(f"{call}.ReadbackReplyShort")
    return int.from_bytes(data, "little")


class AnswersMixin:
    """Mixed into Client: expects ``self.em``, ``self.tr``, ``self.link``, ``self.state``."""

    em: Any
    tr: Any
    link: ReverseLink | None
    state: Any

    # -- plumbing ------------------------------------------------------------
    def _init_answers(self) -> None:
        self._caps: CapsMirror | None = None
        self._fences: dict[Handle, Fence] = {}
        self._queries: dict[Handle, Query] = {}
        self._active_query: dict[int, Query] = {}
        self.gl_errors: list[tuple[int, int]] = []  # (code, seq of the record that raised it)
        self.logs: list[tuple[int, str]] = []
        self.readbacks_done: list[int] = []
        self.gpu_written: list[tuple[Handle, tuple]] = []
        self.writebacks: list[tuple[Handle, int, bytes]] = []
        self._persistent: dict[Handle, tuple[Buffer, bytearray, bytes]] = {}
        if self.link is not None:
            h = self.link.handlers
            h[_rv.EventKind.GlError] = lambda e: self.gl_errors.append((e.values[0], e.seq))
            h[_rv.EventKind.FenceSignaled] = self._on_fence
            h[_rv.EventKind.QueryResult] = self._on_query
            h[_rv.EventKind.ReadbackDone] = lambda e: self.readbacks_done.append(e.values[0])
            h[_rv.EventKind.LogLine] = lambda e: self.logs.append((e.flags, e.data.decode("utf-8", "replace")))
            h[_rv.EventKind.GpuWritten] = self._on_gpu_written
            h[_rv.EventKind.BufferWriteback] = lambda e: self.writebacks.append(
                (Handle(*e.values[:2]), e.values[2], e.data))  # fmt: skip

    def _link(self, call: str) -> ReverseLink:
        if self.link is None:
            from .api import ClientError

            raise ClientError(f"{call}: this client has no reverse channel (its sink is not "
                              "an applier's, nor its transport spawn)")  # fmt: skip
        return self.link

    def _require(self, call: str, cap: str | None = None) -> ReverseLink:
        link = self._link(call)
        caps = self.caps
        if not caps.has_call(call) or (cap is not None and not caps.has_cap(cap)):
            from .api import ClientError

            why = f"{cap} not in CallMask" if caps.has_call(call) else "the backend has no entry"
            raise ClientError(f"{call}: absent by caps ({why})")
        return link

    def _on_fence(self, e: Event) -> None:
        f = self._fences.get(Handle(*e.values))
        if f is not None:
            f.signalled = True

    def _on_gpu_written(self, e: Event) -> None:
        """``OnGpuWritten``: kept in :attr:`gpu_written` and handed to the pending set's
        narrowing (``Client.on_gpu_written``, runtime/client/compute.py)."""
        res, ranges = Handle(*e.values[:2]), e.values[3:]
        self.gpu_written.append((res, ranges))
        self.on_gpu_written(res, list(ranges), seq=e.seq)  # type: ignore[attr-defined]

    def _on_query(self, e: Event) -> None:
        q = self._queries.get(Handle(*e.values[:2]))
        if q is not None and not q.active:
            q.value = int(e.values[2])

    @property
    def caps(self) -> CapsMirror:
        """The caps mirror: one ``GetCaps`` snapshot, taken at the first question."""
        if self._caps is None:
            link = self._link("GetCaps")
            seq = self.em.emit("GetCaps", {}, wait=False)
            status, data = link.answer(seq, "GetCaps")
            if status != _rv.ReplyStatus.OK:
                raise ProtocolCorruption("GetCaps.ReplyMissing")
            self._caps = CapsMirror(data)
        return self._caps

    def drain_events(self) -> int:
        return self.link.drain() if self.link is not None else 0

    def get_error(self) -> int:
        """``glGetError``: the oldest error an ``OnGlError`` event brought (drains first)."""
        self.drain_events()
        return self.gl_errors.pop(0)[0] if self.gl_errors else GL_NO_ERROR

    # -- fences ----------------------------------------------------------------
    def fence_sync(self) -> Fence:
        self._require("FenceCreate")
        f = Fence(self.tr.alloc["Fence"].alloc())
        self.tr.validate("FenceCreate")
        self.em.emit("FenceCreate", {"Handle": f.handle, "Kind": _t.enum("MGPipeKind")["Fence"]})
        self._fences[f.handle] = f
        return f

    def fence_signalled(self, f: Fence) -> bool:
        """``glGetSynciv(GL_SYNC_STATUS)``: local; escalates after POLL_ESCALATE unchanged."""
        link = self._require("FenceStatus")
        self.em.transport.flush()  # a polling entry publishes (§11.6)
        link.drain()
        if f.signalled:
            return True
        f.polls += 1
        if f.polls >= POLL_ESCALATE:
            f.polls = 0
            seq = self.em.emit("FenceStatus", {"Handle": f.handle,
                                               "Kind": _t.enum("MGPipeKind")["Fence"]}, wait=False)  # fmt: skip
            _, data = link.answer(seq, "FenceStatus")
            f.signalled = bool(_u32(data, "FenceStatus"))
        return f.signalled

    def client_wait_sync(self, f: Fence, timeout_ns: int) -> str:
        """``glClientWaitSync``: ALREADY_SIGNALED / CONDITION_SATISFIED / TIMEOUT_EXPIRED."""
        link = self._require("FenceWait")
        self.em.transport.flush()
        link.drain()
        if f.signalled:
            return WAIT_RESULTS[2]
        if timeout_ns == 0:
            return WAIT_RESULTS[2] if self.fence_signalled(f) else WAIT_RESULTS[0]
        seq = self.em.emit("FenceWait", {"Fence": f.handle, "TimeoutNs": int(timeout_ns)},
                           wait=False)  # fmt: skip
        budget, link.budget = link.budget, math.ceil(timeout_ns / 1e6) / 1e3 + BUDGET_S
        try:
            _, data = link.answer(seq, "FenceWait")
        finally:
            link.budget = budget
        r = _u32(data, "FenceWait")
        if r >= len(WAIT_RESULTS):
            raise ProtocolCorruption("FenceWait.ReplyStatusInvalid")
        if r:
            f.signalled = True
        return WAIT_RESULTS[r]

    def wait_sync(self, f: Fence) -> None:
        """``glWaitSync``: the server's queue waits for the fence (no client wait)."""
        self._require("FenceWaitServer")
        self.em.emit("FenceWaitServer", {"Fence": f.handle, "TimeoutNs": (1 << 64) - 1})

    def delete_sync(self, f: Fence) -> None:
        self._require("FenceDestroy")
        self._fences.pop(f.handle, None)
        self.tr.death("Fence", f.handle, "FenceDestroy")

    # -- queries ---------------------------------------------------------------
    def gen_query(self) -> Query:
        self._require("QueryCreate")
        q = Query(self.tr.alloc["Query"].alloc())
        self._queries[q.handle] = q
        return q

    def _create_query(self, q: Query, kind: int) -> None:
        if q.created and q.kind != kind:
            from .api import ClientError

            raise ClientError(f"query {q.handle}: kind 0x{q.kind:04x}, used as 0x{kind:04x}")
        if not q.created:
            self.em.emit("QueryCreate", {"Query": q.handle, "Kind": kind})
            q.created, q.kind = True, kind

    def begin_query(self, target: int, q: Query) -> None:
        from .api import ClientError

        if target not in QUERY_TARGETS:
            raise ClientError(f"begin_query: target 0x{target:04x}")
        self._require("QueryBegin", "kCapTimerQuery" if target == GL_TIME_ELAPSED
                      else "kCapOcclusionQuery")  # fmt: skip
        if target in self._active_query:
            raise ClientError(f"begin_query: 0x{target:04x} already active")
        self._create_query(q, target)
        q.value, q.active, q.polls = None, True, 0
        self._active_query[target] = q
        self.em.emit("QueryBegin", {"Query": q.handle, "Kind": target})

    def end_query(self, target: int) -> None:
        self._require("QueryEnd")
        q = self._active_query.pop(target, None)
        if q is None:
            from .api import ClientError

            raise ClientError(f"end_query: 0x{target:04x} is not active")
        q.active = False
        self.em.emit("QueryEnd", {"Query": q.handle, "Kind": target})

    def query_counter(self, q: Query) -> None:
        """``glQueryCounter(q, GL_TIMESTAMP)``."""
        self._require("QueryCounter", "kCapTimerQuery")
        self._create_query(q, GL_TIMESTAMP)
        q.value, q.polls = None, 0
        self.em.emit("QueryCounter", {"Query": q.handle, "Kind": GL_TIMESTAMP})

    def query_available(self, q: Query) -> bool:
        """``GL_QUERY_RESULT_AVAILABLE``: local; escalates after POLL_ESCALATE unchanged."""
        link = self._require("QueryAvailable")
        self.em.transport.flush()
        link.drain()
        if q.value is not None:
            return True
        q.polls += 1
        if q.polls >= POLL_ESCALATE:
            q.polls = 0
            seq = self.em.emit("QueryAvailable", {"Handle": q.handle,
                                                  "Kind": _t.enum("MGPipeKind")["Query"]}, wait=False)  # fmt: skip
            _, data = link.answer(seq, "QueryAvailable")
            if _u32(data, "QueryAvailable"):
                self.query_result(q)
        return q.value is not None

    def query_result(self, q: Query) -> int:
        """``GL_QUERY_RESULT``: from the mirror, else one round trip that waits for it."""
        link = self._require("QueryResult")
        link.drain()
        if q.value is None:
            seq = self.em.emit("QueryResult", {"Query": q.handle, "Wait": 1}, wait=False)
            _, data = link.answer(seq, "QueryResult")
            if len(data) != 16:
                raise ProtocolCorruption("QueryResult.ReadbackReplyShort")
            avail, _, value = struct.unpack("<IIQ", data)
            if not avail:
                raise ProtocolCorruption("QueryResult.ReplyMissing")
            q.value = int(value)
        return q.value

    def get_timestamp(self) -> int:
        """``glGetInteger64v(GL_TIMESTAMP)``: one round trip."""
        link = self._require("QueryTimestamp", "kCapTimerQuery")
        seq = self.em.emit("QueryTimestamp", {}, wait=False)
        _, data = link.answer(seq, "QueryTimestamp")
        return _u32(data, "QueryTimestamp", 8)

    def delete_query(self, q: Query) -> None:
        self._require("QueryDestroy")
        self._queries.pop(q.handle, None)
        if q.created:
            self.tr.death("Query", q.handle, "QueryDestroy")
        else:
            self.tr.alloc["Query"].free(q.handle)

    # -- readbacks -------------------------------------------------------------
    def _tight(self, call: str, w: int, h: int, d: int, fmt: int, typ: int) -> int:
        from .api import ClientError

        try:
            n = w * h * d * pixel_size(fmt, typ)
        except PixelFormatError as exc:
            raise ClientError(f"{call}: {exc}") from None
        if self.link is not None and n > self.link.mailbox.capacity:
            raise ProtocolCorruption(f"{call}.ReplyTooLarge")  # refused before emission
        return n

    def _readback(self, call: str, seq: int, n: int) -> bytes:
        status, data = self._link(call).answer(seq, call)
        if status == _rv.ReplyStatus.DECLINED:
            raise ProtocolCorruption(f"{call}.ReadbackDeclined")
        if len(data) != n:
            raise ProtocolCorruption(f"{call}.ReadbackReplyShort")
        return data

    def read_pixels(self, x: int, y: int, w: int, h: int, fmt: int = 0x1908,
                    type_: int = 0x1401) -> bytes:  # fmt: skip
        """``glReadPixels`` into client memory: tight on the wire, laid out here with the
        pack state (rows bottom-up, as GL returns them)."""
        self._require("ReadPixels")
        n = self._tight("ReadPixels", w, h, 1, fmt, type_)
        self.tr.validate("ReadPixels")
        seq = self.em.emit("ReadPixels", {"Box": {"X": x, "Y": y, "Z": 0, "W": w, "H": h, "D": 1},
                                          "Format": fmt, "Type": type_, "DstOffset": 0,
                                          "DstSize": n}, wait=False)  # fmt: skip
        return scatter(self._readback("ReadPixels", seq, n), w, h, 1, fmt, type_,
                       self.state.pixel_pack)  # fmt: skip

    def _level_box(self, tex: Texture, level: int) -> tuple[int, int, int]:
        w = max(int(tex.width) >> level, 1)
        h = max(int(tex.height) >> level, 1)
        d = max(int(tex.depth) >> level, 1) if tex.target == "Tex3D" else max(int(tex.layers), 1)
        return w, h, d

    def get_texture_image(self, tex: Texture, level: int, fmt: int, type_: int, *,
                          target: int = 0) -> bytes:  # fmt: skip
        """``glGetTexImage`` (``target``: a cube face's GL target, else 0 = the texture's)."""
        self._require("GetTextureImage")
        w, h, d = self._level_box(tex, level)
        if target:
            d = 1
        n = self._tight("GetTextureImage", w, h, d, fmt, type_)
        self.tr.validate("GetTextureImage")
        seq = self.em.emit("GetTextureImage", {
            "Res": tex.handle, "Box": {"X": 0, "Y": 0, "Z": 0, "W": w, "H": h, "D": d},
            "Format": fmt, "Type": type_, "Target": target, "Level": level,
            "DstOffset": 0, "DstSize": n}, wait=False)  # fmt: skip
        return scatter(self._readback("GetTextureImage", seq, n), w, h, d, fmt, type_,
                       self.state.pixel_pack)  # fmt: skip

    def get_buffer_sub_data(self, buf: Buffer, offset: int, size: int) -> bytes:
        """``glGetBufferSubData``: one round trip (ResourceReadback)."""
        self._require("ResourceReadback")
        if self.link is not None and size > self.link.mailbox.capacity:
            raise ProtocolCorruption("ResourceReadback.ReplyTooLarge")
        self.tr.validate("ResourceReadback")
        seq = self.em.emit("ResourceReadback", {"Res": buf.handle, "Offset": offset,
                                                "Size": size}, wait=False)  # fmt: skip
        data = self._readback("ResourceReadback", seq, size)
        # the bytes are known again: the client's copy takes them, the pending set drops them
        # (unless a record after the readback may have written them since: none can, the
        # readback waited for every earlier record and the client emitted nothing since)
        self._shadow_write(buf, offset, data)  # type: ignore[attr-defined]
        self.tr.clear_pending(buf.handle, offset, offset + size)
        return data

    def _pack_pending(self, buf: Buffer, base: int, n: int) -> None:
        """A pack readback into ``buf``: the server writes ``[base, base + n)`` (seed 001:
        fire-and-forget plus the client's own GPU-written mark; OnGpuWritten confirms it)."""
        from .compute import _add_range

        if n > 0:
            _add_range(self.tr.gpu_pending, buf.handle, base, min(base + n, buf.size))
            self.tr.gpu_guess_seq[buf.handle] = self.em.transport.emit_seq + 1

    def _pack_layout(self, w: int, h: int, fmt: int, typ: int) -> tuple[int, int, int, int]:
        """(first byte, row stride, image stride, swap group) of the pack state."""
        p = self.state.pixel_pack
        bpp = pixel_size(fmt, typ)
        from .pixels import component_size

        unit = component_size(typ)
        align = int(p["Alignment"]) or 1
        row = (int(p["RowLength"]) or w) * bpp
        stride = row if unit >= align else -(-row // align) * align
        image = stride * (int(p["ImageHeight"]) or h)
        first = int(p["SkipImages"]) * image + int(p["SkipRows"]) * stride + int(p["SkipPixels"]) * bpp
        return first, stride, image, unit if int(p["SwapBytes"]) else 0

    def read_pixels_to_buffer(self, buf: Buffer, offset: int, x: int, y: int, w: int, h: int,
                              fmt: int = 0x1908, type_: int = 0x1401) -> int:  # fmt: skip
        """``glReadPixels`` into a bound PACK buffer: fire-and-forget; the seq of the record
        (an ``EvReadbackDone`` with it follows once written)."""
        self._require("ReadPixelsToBuffer")
        first, stride, image, swap = self._pack_layout(w, h, fmt, type_)
        self._pack_pending(buf, offset + first, stride * (h - 1) + w * pixel_size(fmt, type_))
        self.tr.validate("ReadPixelsToBuffer")
        return self.em.emit("ReadPixelsToBuffer", {
            "Src": {"Box": {"X": x, "Y": y, "Z": 0, "W": w, "H": h, "D": 1},
                    "Format": fmt, "Type": type_},
            "Dst": buf.handle, "DstBase": offset + first, "RowStride": stride,
            "ImageStride": image, "SwapGroup": swap})  # fmt: skip

    def get_texture_image_to_buffer(self, tex: Texture, level: int, fmt: int, type_: int,
                                    buf: Buffer, offset: int) -> int:  # fmt: skip
        self._require("GetTextureImageToBuffer")
        w, h, d = self._level_box(tex, level)
        first, stride, image, swap = self._pack_layout(w, h, fmt, type_)
        self._pack_pending(buf, offset + first,
                           image * (d - 1) + stride * (h - 1) + w * pixel_size(fmt, type_))
        self.tr.validate("GetTextureImageToBuffer")
        return self.em.emit("GetTextureImageToBuffer", {
            "Src": {"Res": tex.handle, "Box": {"X": 0, "Y": 0, "Z": 0, "W": w, "H": h, "D": d},
                    "Format": fmt, "Type": type_, "Level": level},
            "Dst": buf.handle, "DstBase": offset + first, "RowStride": stride,
            "ImageStride": image, "SwapGroup": swap})  # fmt: skip

    # -- copies ------------------------------------------------------------------
    def copy_buffer_sub_data(self, src: Buffer, dst: Buffer, src_offset: int, dst_offset: int,
                             size: int) -> None:  # fmt: skip
        """``glCopyBufferSubData``: a ResourceCopyRegion of Buffer targets (SrcBox.X / W =
        the source range, DstX = the destination offset)."""
        self._require("ResourceCopyRegion")
        tgt = _t.enum("MGPipeResourceTarget")["Buffer"]
        self.tr.validate("ResourceCopyRegion")
        self.em.emit("ResourceCopyRegion", {
            "Src": src.handle, "Dst": dst.handle, "SrcTarget": tgt, "DstTarget": tgt,
            "SrcBox": {"X": src_offset, "Y": 0, "Z": 0, "W": size, "H": 1, "D": 1},
            "DstX": dst_offset})  # fmt: skip

    def copy_image_sub_data(self, src: Texture, src_level: int, sx: int, sy: int, sz: int,
                            dst: Texture, dst_level: int, dx: int, dy: int, dz: int,
                            w: int, h: int, d: int = 1) -> None:  # fmt: skip
        """``glCopyImageSubData`` between two textures (ResourceCopyRegion)."""
        self._require("ResourceCopyRegion")
        self.tr.validate("ResourceCopyRegion")
        self.em.emit("ResourceCopyRegion", {
            "Src": src.handle, "Dst": dst.handle, "SrcTarget": _t.enum("MGPipeResourceTarget")[src.target],
            "DstTarget": _t.enum("MGPipeResourceTarget")[dst.target], "SrcLevel": src_level, "DstLevel": dst_level,
            "SrcBox": {"X": sx, "Y": sy, "Z": sz, "W": w, "H": h, "D": d},
            "DstX": dx, "DstY": dy, "DstZ": dz})  # fmt: skip

    def copy_tex_sub_image_2d(self, tex: Texture, level: int, xoffset: int, yoffset: int,
                              x: int, y: int, w: int, h: int) -> None:  # fmt: skip
        """``glCopyTexSubImage2D`` from the read framebuffer (CopyFramebufferToTexture)."""
        self._require("CopyFramebufferToTexture")
        self.tr.validate("CopyFramebufferToTexture")
        self.em.emit("CopyFramebufferToTexture", {
            "Dst": tex.handle, "Target": 0x0DE1, "Level": level,
            "InternalFormat": int(tex.internal_format), "X": x, "Y": y, "Width": w,
            "Height": h, "XOffset": xoffset, "YOffset": yoffset, "SubImage": 1})  # fmt: skip

    # -- persistent maps (§12, tier T2) ------------------------------------------
    def map_persistent(self, buf: Buffer) -> memoryview:
        """``glMapBufferRange(PERSISTENT | COHERENT | WRITE)``: MapPersistent is asked once
        (a DECLINED answer is tier T2); the client keeps the mapping and pushes it in
        blocks at every validate (:meth:`push_persistent`)."""
        link = self._require("MapPersistent")
        seq = self.em.emit("MapPersistent", {"Handle": buf.handle,
                                             "Kind": _t.enum("MGPipeKind")["Buffer"]}, wait=False)  # fmt: skip
        status, _ = link.answer(seq, "MapPersistent")
        if status != _rv.ReplyStatus.DECLINED:
            raise ProtocolCorruption("MapPersistent.ReplyStatusInvalid")  # only T2 exists here
        size = int(buf.size)
        mem = bytearray(size)
        self._persistent[buf.handle] = (buf, mem, bytes(size))
        return memoryview(mem)

    def push_persistent(self) -> int:
        """Block-granular push of every live persistent map (changed 64 KiB blocks as
        ResourceSubData); the bytes pushed."""
        pushed = 0
        for h, (buf, mem, last) in list(self._persistent.items()):
            now = bytes(mem)
            for at in range(0, len(now), PERSISTENT_BLOCK):
                blk = now[at : at + PERSISTENT_BLOCK]
                if blk != last[at : at + PERSISTENT_BLOCK]:
                    self.buffer_sub_data(buf, at, blk)  # type: ignore[attr-defined]
                    pushed += len(blk)
            self._persistent[h] = (buf, mem, now)
        return pushed

    def flush_mapped_range(self, buf: Buffer, offset: int, size: int) -> None:
        """``glFlushMappedBufferRange``: the range's bytes go now, then ResourceFlushRange."""
        entry = self._persistent.get(buf.handle)
        if entry is not None:
            b, mem, last = entry
            data = bytes(mem[offset : offset + size])
            self.buffer_sub_data(buf, offset, data)  # type: ignore[attr-defined]
            self._persistent[buf.handle] = (b, mem, last[:offset] + data + last[offset + size :])
        self._require("ResourceFlushRange")
        self.em.emit("ResourceFlushRange", {"Res": buf.handle, "Offset": offset, "Size": size})


#: MOBILEGL_IPC_PERSISTENT_BLOCK_KB default (64 KiB)
PERSISTENT_BLOCK = 64 << 10
