"""The client's indirect and client-memory draws (issue 19; seed 001 §4, §5.7).

:class:`DrawsMixin` is one of :class:`~.api.Client`'s bases. What it adds:

- **Indirect draws** -- ``bind_indirect_buffer`` / ``bind_parameter_buffer``
  (``GL_DRAW_INDIRECT_BUFFER`` / ``GL_PARAMETER_BUFFER``, pushed as ``SetIndirectBuffers``
  before the next indirect draw), ``draw_arrays_indirect``, ``draw_elements_indirect`` and
  the ``multi_draw_*_indirect`` forms: one ``DrawVbo`` with ``kDrawIsIndirect``,
  ``NumDraws`` 0 and one ``MGPDrawIndirect`` tail (the command buffer, its byte offset,
  stride, draw count). ``multi_draw_*_indirect_count`` resolves the count **on the
  client** (seed 001 §5.7: ``*IndirectCount`` is a client emulation): the ``uint`` at the
  parameter buffer's ``drawcount`` offset is read from the client's copy of that buffer's
  bytes and ``DrawCount`` = min(it, ``maxdrawcount``); ``ParameterBuffer`` goes null, so
  the server never reads a parameter buffer.
- **User index arrays** -- ``draw_elements(..., indices=bytes)`` with no index buffer
  bound: ``kDrawHasUserIndices``, the bytes the draw reads staged in ``SEG_STAGE`` and
  named by the record's ``MGHostSpan`` tail (``Ptr`` null, ``Seg`` the stage segment:
  never a pointer on the wire), the one ``MGPDrawRange`` counting from the span's start.
- **Client vertex arrays** -- ``vertex_attrib_pointer(i, data, ...)`` where ``data`` is
  client memory (bytes / an array) instead of a buffer. At each draw the client computes the
  vertex span the draw fetches -- ``[first, first + count)`` for arrays; for an indexed draw
  the max-index scan (``MinIndex`` / ``MaxIndex`` under ``kDrawHasIndexRange``) over the
  user indices or the index buffer's bytes, the restart index excluded -- and ships only
  those bytes, through ``SEG_STAGE`` (``ResourceSubData`` into one client-owned stream
  buffer per attribute, bound in ``SetVertexBuffers``), flagged ``kDrawClientArrays``. The
  catalogue has no per-attribute ``MGHostSpan`` tail on ``DrawVbo`` (its one host-span tail
  is the user indices'; MobileGL calls the staged per-attribute tail future work), so the
  stream buffer is how the bytes travel: bytes, never a pointer.

The client's copy of a buffer's bytes (``Buffer.shadow``, kept by ``buffer_data`` /
``buffer_sub_data`` and every ``ResourceReadback``) is what the count resolve and the
max-index scan read. Seed 001's stale-index rule per site: the max-index scan first reads
back the GPU-written pending ranges it covers (``sync_gpu_writes``, runtime/client/
compute.py: one ``ResourceReadback`` each); the ``*IndirectCount`` resolve syncs only
persistent-mapped ranges (the monolith's own rule), never GPU writes; the client
vertex-array span syncs nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..schema import tables as _t
from ..wire.handle import NULL
from .tracker import Attrib, Buffer

__all__ = ["DrawsMixin", "INDIRECT_ARRAYS_BYTES", "INDIRECT_ELEMENTS_BYTES"]

#: GL's DrawArraysIndirectCommand {count, instanceCount, first, baseInstance}
INDIRECT_ARRAYS_BYTES = 16
#: GL's DrawElementsIndirectCommand {count, instanceCount, firstIndex, baseVertex, baseInstance}
INDIRECT_ELEMENTS_BYTES = 20
_TYPE_BYTES = {0x1406: 4, 0x1401: 1, 0x1400: 1, 0x1403: 2, 0x1402: 2, 0x1405: 4, 0x1404: 4,
               0x140B: 2}  # GL component type -> bytes  # fmt: skip
_INDEX_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _error(msg: str) -> Exception:
    from .api import ClientError  # api imports this module: resolved at call time

    return ClientError(msg)


def _flag(name: str) -> int:
    return int(_t.enum("MGPDrawFlagBit")[name])


class _ClientArray:
    """One attribute's client memory and its format (what glVertexAttribPointer named)."""

    __slots__ = ("data", "size", "gl_type", "normalized", "stride", "offset", "divisor",
                 "stream")  # fmt: skip

    def __init__(self, data: memoryview, size: int, gl_type: int, normalized: bool,
                 stride: int, offset: int, divisor: int) -> None:  # fmt: skip
        self.data, self.size, self.gl_type, self.normalized = data, size, gl_type, normalized
        self.stride, self.offset, self.divisor = stride, offset, divisor
        self.stream: Buffer | None = None

    @property
    def elem_bytes(self) -> int:
        return self.size * _TYPE_BYTES[self.gl_type]


class DrawsMixin:
    """Indirect draws, user index arrays and client vertex arrays (module docstring)."""

    tr: Any
    em: Any
    draws: int

    def _draws_init(self) -> None:
        self._client_arrays: dict[int, _ClientArray] = {}
        self._indirect: Buffer | None = None
        self._parameter: Buffer | None = None
        self._pushed_indirect: tuple = (NULL, NULL)
        #: DrawVbo + one MGPDrawIndirect, packed straight into the transport (its only tail)
        self._draw_indirect_vbo = self.em.fast(
            "DrawVbo",
            ("Mode", "IndexSize", "Flags", "InstanceCount", "RestartIndex",
             "IndexResource.Slot", "IndexResource.Gen", "MinIndex", "MaxIndex", "NumDraws"),
            ("Buffer.Slot", "Buffer.Gen", "ParameterBuffer.Slot", "ParameterBuffer.Gen",
             "Offset", "ParameterOffset", "Stride", "DrawCount"),
            tail_element="MGPDrawIndirect")  # fmt: skip
        #: counters: what the client-memory paths shipped (bytes through SEG_STAGE)
        self.index_bytes_shipped = 0
        self.vertex_bytes_shipped = 0

    def _validate_draw(self) -> None:
        """Every draw's validate: the whole push only when a binding moved since the last
        draw, else the render state's CSO check, and not even that call when nothing moved
        (validate's rule-1 answer, counted here). The direct draws run this body, and
        validate's, in their own frame (api.py: :func:`~.inline.inline_call`)."""
        tr = self.tr
        rs, cso = tr.rs, tr.cso
        if tr.gen != tr.draw_gen or tr.textures_pending:
            tr.validate("DrawVbo")
        elif rs.version_wide != cso.quiet_version:
            cso.validate(rs)
        else:
            cso.stats.reuses += 1

    # -- the client's copy of a buffer's bytes ---------------------------------------
    @staticmethod
    def _shadow_respecify(buf: Buffer, size: int) -> None:
        buf.shadow = bytearray(size)  # type: ignore[attr-defined]

    @staticmethod
    def _shadow_write(buf: Buffer, offset: int, data: bytes) -> None:
        shadow = getattr(buf, "shadow", None)
        if shadow is None:
            shadow = buf.shadow = bytearray(buf.size)  # type: ignore[attr-defined]
        shadow[offset : offset + len(data)] = data

    # -- indirect ----------------------------------------------------------------
    def bind_indirect_buffer(self, buf: Buffer | None) -> None:
        """``glBindBuffer(GL_DRAW_INDIRECT_BUFFER, buf)``."""
        self._indirect = buf

    def bind_parameter_buffer(self, buf: Buffer | None) -> None:
        """``glBindBuffer(GL_PARAMETER_BUFFER, buf)`` (the count of ``*IndirectCount``)."""
        self._parameter = buf

    def _unbind_draw_buffer(self, buf: Buffer) -> None:
        """A deleted buffer is unbound from the indirect and parameter targets (GL's rule);
        the next indirect draw pushes SetIndirectBuffers again."""
        if self._indirect is buf:
            self._indirect = None
        if self._parameter is buf:
            self._parameter = None
        if buf.handle in self._pushed_indirect:
            self._pushed_indirect = (NULL, NULL)

    def draw_arrays_indirect(self, mode: int, offset: int = 0) -> None:
        """``glDrawArraysIndirect(mode, indirect)``."""
        self._draw_indirect("draw_arrays_indirect", mode, 0, offset, 1, 0)

    def draw_elements_indirect(self, mode: int, index_size: int, offset: int = 0) -> None:
        """``glDrawElementsIndirect(mode, type, indirect)`` from the bound index buffer."""
        self._draw_indirect("draw_elements_indirect", mode, index_size, offset, 1, 0)

    def multi_draw_arrays_indirect(self, mode: int, offset: int, drawcount: int,
                                   stride: int = 0) -> None:  # fmt: skip
        """``glMultiDrawArraysIndirect`` (``stride`` 0: tightly packed)."""
        self._draw_indirect("multi_draw_arrays_indirect", mode, 0, offset, drawcount, stride)

    def multi_draw_elements_indirect(self, mode: int, index_size: int, offset: int,
                                     drawcount: int, stride: int = 0) -> None:  # fmt: skip
        """``glMultiDrawElementsIndirect`` (``stride`` 0: tightly packed)."""
        self._draw_indirect("multi_draw_elements_indirect", mode, index_size, offset,
                            drawcount, stride)  # fmt: skip

    def multi_draw_arrays_indirect_count(self, mode: int, offset: int, drawcount_offset: int,
                                         maxdrawcount: int, stride: int = 0) -> None:  # fmt: skip
        """``glMultiDrawArraysIndirectCount``: the count resolved here (module docstring)."""
        n = self._resolve_count("multi_draw_arrays_indirect_count", drawcount_offset,
                                maxdrawcount)  # fmt: skip
        self._draw_indirect("multi_draw_arrays_indirect_count", mode, 0, offset, n, stride)

    def multi_draw_elements_indirect_count(self, mode: int, index_size: int, offset: int,
                                           drawcount_offset: int, maxdrawcount: int,
                                           stride: int = 0) -> None:  # fmt: skip
        """``glMultiDrawElementsIndirectCount``: the count resolved here."""
        n = self._resolve_count("multi_draw_elements_indirect_count", drawcount_offset,
                                maxdrawcount)  # fmt: skip
        self._draw_indirect("multi_draw_elements_indirect_count", mode, index_size, offset, n,
                            stride)  # fmt: skip

    def _resolve_count(self, what: str, at: int, maxdrawcount: int) -> int:
        buf = self._parameter
        if buf is None:
            raise _error(f"{what}: no buffer bound to GL_PARAMETER_BUFFER")
        if at % 4 or at < 0 or at + 4 > buf.size:
            raise _error(f"{what}: drawcount offset {at} (a multiple of 4 inside the "
                         f"parameter buffer's {buf.size} bytes)")  # fmt: skip
        if maxdrawcount < 0:
            raise _error(f"{what}: maxdrawcount {maxdrawcount} is negative")
        shadow = getattr(buf, "shadow", None) or bytearray(buf.size)
        count = int(np.frombuffer(shadow, np.uint32, 1, at)[0])
        return min(count, maxdrawcount)

    def _draw_indirect(self, what: str, mode: int, index_size: int, offset: int,
                       drawcount: int, stride: int) -> None:  # fmt: skip
        tr = self.tr
        buf = self._indirect
        if buf is None:
            raise _error(f"{what}: no buffer bound to GL_DRAW_INDIRECT_BUFFER")
        if self._client_arrays:
            raise _error(f"{what}: an indirect draw reads no client vertex arrays "
                         f"(attributes {sorted(self._client_arrays)} point at client memory)")  # fmt: skip
        cmd = INDIRECT_ELEMENTS_BYTES if index_size else INDIRECT_ARRAYS_BYTES
        if index_size:
            if index_size not in _INDEX_DTYPES:
                raise _error(f"{what}: index size {index_size} (1, 2 or 4 bytes)")
            if tr.index_buffer is None:
                raise _error(f"{what}: an indexed indirect draw with no index buffer bound")
        if offset < 0 or offset % 4:
            raise _error(f"{what}: indirect offset {offset} (a non-negative multiple of 4)")
        if stride % 4 or (stride and stride < cmd) or stride < 0:
            raise _error(f"{what}: stride {stride} (0 or a multiple of 4 of at least {cmd})")
        if drawcount < 0:
            raise _error(f"{what}: drawcount {drawcount} is negative")
        step = stride or cmd
        if drawcount and offset + (drawcount - 1) * step + cmd > buf.size:
            raise _error(f"{what}: {drawcount} commands of {cmd} bytes from offset {offset} "
                         f"(stride {step}) pass the indirect buffer's {buf.size} bytes")  # fmt: skip
        self._validate_draw()
        pair = (buf.handle, self._parameter.handle if self._parameter else NULL)
        if pair != self._pushed_indirect:
            self.em.emit("SetIndirectBuffers", {"DrawIndirect": pair[0], "Parameter": pair[1]})
            self._pushed_indirect = pair
        flags, restart = _flag("kDrawIsIndirect"), tr.rs.restart_index
        if index_size:
            flags, restart = self._restart(flags, index_size)
        ib = tr.index_buffer.handle if index_size else NULL
        self._draw_indirect_vbo(mode, index_size, flags, 1, restart, ib[0], ib[1], 0xFFFFFFFF,
                                0xFFFFFFFF, 0, buf.handle[0], buf.handle[1], NULL[0], NULL[1],
                                offset, 0, stride, drawcount)  # fmt: skip
        self._draws_other += 1
        if tr.buffer_bindings:  # the writable points' ranges join the pending set
            tr.note_gpu_writes(self.em.transport.emit_seq)

    def _restart(self, flags: int, index_size: int) -> tuple[int, int]:
        p, restart = self.tr.rs.p, self.tr.rs.restart_index
        if p["PrimitiveRestartFixedIndexEnabled"]:  # GL: the index type's maximum
            return flags | _flag("kDrawPrimitiveRestart"), (1 << (8 * index_size)) - 1
        if p["PrimitiveRestartEnabled"]:
            return flags | _flag("kDrawPrimitiveRestart"), restart
        return flags, restart

    # -- client vertex arrays -------------------------------------------------------
    def _client_array_pointer(self, index: int, data: Any, size: int, gl_type: int,
                              normalized: bool, stride: int, offset: int,
                              divisor: int) -> None:  # fmt: skip
        top = int(_t.constant("kMGPipeMaxVertexAttribs"))
        if not 0 <= index < top:
            raise _error(f"vertex_attrib_pointer: index {index} outside 0..{top - 1}")
        if gl_type not in _TYPE_BYTES or not 1 <= size <= 4:
            raise _error(f"vertex_attrib_pointer: {size} components of type 0x{gl_type:04x}")
        if stride < 0 or offset < 0:
            raise _error(f"vertex_attrib_pointer: stride {stride}, offset {offset}")
        mv = memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data)
        arr = _ClientArray(mv.cast("B"), size, gl_type, normalized, stride, offset, divisor)
        old = self._client_arrays.get(index)
        if old is not None:
            arr.stream = old.stream
        self._client_arrays[index] = arr

    def _forget_client_array(self, index: int) -> None:
        self._client_arrays.pop(index, None)

    def _ship_client_arrays(self, lo: int, hi: int, instances: int, base_instance: int,
                            what: str) -> None:  # fmt: skip
        """Vertices ``[lo, hi]`` (inclusive; ``hi < lo``: none) of every client array into
        its stream buffer, the attribute pointed at it (SetVertexBuffers at the validate)."""
        from .api import Client

        assert isinstance(self, Client)
        for index, arr in sorted(self._client_arrays.items()):
            step = arr.stride or arr.elem_bytes
            if arr.divisor:
                first, last = base_instance, base_instance + (max(instances, 1) - 1) // arr.divisor
            else:
                first, last = lo, hi
            if last < first:
                continue
            start = arr.offset + first * step
            end = arr.offset + last * step + arr.elem_bytes
            if end > len(arr.data):
                raise _error(f"{what}: attribute {index} fetches vertex {last}: {end} bytes of "
                             f"a {len(arr.data)}-byte client array")  # fmt: skip
            if arr.stream is None:
                arr.stream = self.create_buffer(None, 0)
            if arr.stream.size < end:
                self.buffer_data(arr.stream, end)  # grows only: no defined content
            self.buffer_sub_data(arr.stream, start, bytes(arr.data[start:end]))
            self.vertex_bytes_shipped += end - start
            want = Attrib(arr.stream.handle, arr.size, arr.gl_type, arr.normalized, arr.stride,
                          arr.offset, arr.divisor)  # fmt: skip
            if self.tr.attribs.get(index) != want:
                self.tr.attribs[index] = want
                self.tr.touch("vertex")

    def _draw_client(self, mode: int, first: int, count: int, instances: int,
                     base_instance: int) -> None:  # fmt: skip
        """``glDrawArrays`` with client vertex arrays."""
        self._ship_client_arrays(first, first + count - 1, instances, base_instance,
                                 "draw_arrays")  # fmt: skip
        tr = self.tr
        self._validate_draw()
        flags = _flag("kDrawClientArrays") | _flag("kDrawHasIndexRange")
        payload = {"Mode": mode, "Flags": flags, "InstanceCount": instances,
                   "StartInstance": base_instance, "RestartIndex": tr.rs.restart_index,
                   "MinIndex": first, "MaxIndex": max(first + count - 1, first),
                   "NumDraws": 1}  # fmt: skip
        self.em.emit("DrawVbo", payload, ([{"Start": first, "Count": count, "IndexBias": 0}],))
        self._draws_other += 1
        if tr.buffer_bindings:
            tr.note_gpu_writes(self.em.transport.emit_seq)

    # -- multi-draw (glMultiDrawArrays / glMultiDrawElements[BaseVertex]) ---------------
    def multi_draw_arrays(self, mode: int, firsts: Any, counts: Any) -> None:
        """``glMultiDrawArrays``: one ``DrawVbo`` of ``len(firsts)`` ``MGPDrawRange`` rows
        (records of at most ``kMGPipeMaxDrawRanges``); the server flattens where the driver
        has no multi-draw."""
        firsts, counts = [int(f) for f in firsts], [int(n) for n in counts]
        if len(firsts) != len(counts) or any(f < 0 for f in firsts) or any(n < 0 for n in counts):
            raise _error(f"multi_draw_arrays: {len(firsts)} firsts, {len(counts)} counts "
                         "(as many, none negative)")  # fmt: skip
        live = [(f, n) for f, n in zip(firsts, counts) if n]
        flags = 0
        lo, hi = (min(f for f, _ in live), max(f + n - 1 for f, n in live)) if live else (0, -1)
        if self._client_arrays:
            self._ship_client_arrays(lo, hi, 1, 0, "multi_draw_arrays")
            flags = _flag("kDrawClientArrays") | _flag("kDrawHasIndexRange")
        self._validate_draw()
        payload = {"Mode": mode, "Flags": flags, "InstanceCount": 1,
                   "RestartIndex": self.tr.rs.restart_index,
                   "MinIndex": lo if live else 0xFFFFFFFF, "MaxIndex": hi if live else 0xFFFFFFFF}  # fmt: skip
        self._emit_ranges(payload, [{"Start": f, "Count": n, "IndexBias": 0}
                                    for f, n in zip(firsts, counts)], None)  # fmt: skip

    def multi_draw_elements(self, mode: int, counts: Any, index_size: int, offsets: Any,
                            base_vertices: Any = None, indices: Any = None) -> None:  # fmt: skip
        """``glMultiDrawElements[BaseVertex]``: from the bound index buffer at byte
        ``offsets[i]``, or from user index arrays ``indices[i]`` (client memory, byte
        ``offsets[i]`` into each; all of them in one staged span, each range counting from
        its own start in it)."""
        counts, offsets = [int(n) for n in counts], [int(o) for o in offsets]
        bvs = [0] * len(counts) if base_vertices is None else [int(b) for b in base_vertices]
        arrays = [None] * len(counts) if indices is None else list(indices)
        if not len(counts) == len(offsets) == len(bvs) == len(arrays):
            raise _error("multi_draw_elements: counts, offsets, base vertices and index "
                         "arrays are not as many")  # fmt: skip
        self._draw_elements_many(mode, index_size, list(zip(counts, offsets, arrays, bvs)), 1,
                                 0, indices is not None, "multi_draw_elements")  # fmt: skip

    def _emit_ranges(self, payload: dict, ranges: list[dict], span: bytes | None) -> None:
        """``DrawVbo`` records of at most ``kMGPipeMaxDrawRanges`` ranges each (a user index
        span: the one staged span every record names)."""
        top = int(_t.constant("kMGPipeMaxDrawRanges"))
        host = None
        if span is not None:
            self.em.room(len(span))  # the stage reset rule: room first, then stage
            off, size, seg = self.em.stage_bytes(span)
            self.index_bytes_shipped += size
            host = [{"Ptr": 0, "Seg": seg, "Size": size, "Offset": off}]
        for at in range(0, max(len(ranges), 1), top):
            part = ranges[at : at + top]
            body = dict(payload, NumDraws=len(part))
            self.em.emit("DrawVbo", body, (part,) if host is None else (part, host))
            self._draws_other += 1
        if self.tr.buffer_bindings:  # the writable points' ranges join the pending set
            self.tr.note_gpu_writes(self.em.transport.emit_seq)

    # -- user index arrays (and indexed client-array draws) ---------------------------
    def _draw_elements_client(self, mode: int, count: int, index_size: int, offset: int,
                              indices: Any, instances: int, base_vertex: int,
                              base_instance: int) -> None:  # fmt: skip
        """``glDrawElements`` reading client memory: user indices (``indices`` not None,
        the bytes from ``offset``) and / or client vertex arrays (sized by the scan)."""
        self._draw_elements_many(mode, index_size, [(count, offset, indices, base_vertex)],
                                 instances, base_instance, indices is not None,
                                 "draw_elements")  # fmt: skip

    def _draw_elements_many(self, mode: int, index_size: int,
                            draws: list[tuple[int, int, Any, int]], instances: int,
                            base_instance: int, user: bool, what: str) -> None:  # fmt: skip
        """Indexed draws ``(count, byte offset, user index array or None, base vertex)``:
        the user indices staged as one span, the max-index scan over every draw's indices
        (restart excluded) sizing the client arrays' spans."""
        tr = self.tr
        if index_size not in _INDEX_DTYPES:
            raise _error(f"{what}: index size {index_size} (1, 2 or 4 bytes)")
        flags, restart = self._restart(0, index_size)
        ib = None if user else tr.index_buffer
        if not user and ib is None:
            raise _error(f"{what}: no index buffer bound and no user index array")
        span, ranges = b"", []
        lo, hi = None, None
        for count, offset, data, bias in draws:
            if count < 0 or offset < 0 or offset % index_size:
                raise _error(f"{what}: count {count}, offset {offset} (a multiple of "
                             f"{index_size})")  # fmt: skip
            need = offset + count * index_size
            if user:
                if data is None:
                    raise _error(f"{what}: a user index draw without its index array")
                raw = memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray)
                                 else data).cast("B")  # fmt: skip
                if need > len(raw):
                    raise _error(f"{what}: {count} indices of {index_size} bytes from offset "
                                 f"{offset} pass the {len(raw)}-byte index array")  # fmt: skip
                part = bytes(raw[offset:need])
                ranges.append({"Start": len(span) // index_size, "Count": count,
                               "IndexBias": bias})  # fmt: skip
                span += part
            else:
                assert ib is not None
                if need > ib.size:
                    raise _error(f"{what}: indices [{offset}, {need}) pass the index buffer's "
                                 f"{ib.size} bytes")  # fmt: skip
                self.sync_gpu_writes(ib, offset, need, what)  # type: ignore[attr-defined]
                part = bytes((getattr(ib, "shadow", None) or bytearray(ib.size))[offset:need])
                ranges.append({"Start": offset // index_size, "Count": count, "IndexBias": bias})
            idx = np.frombuffer(part, _INDEX_DTYPES[index_size])
            if flags & _flag("kDrawPrimitiveRestart"):
                idx = idx[idx != restart]
            if len(idx):
                a, b = int(idx.min()) + bias, int(idx.max()) + bias
                if a < 0:
                    raise _error(f"{what}: index {a - bias} + base vertex {bias} is negative")
                lo, hi = a if lo is None else min(lo, a), b if hi is None else max(hi, b)
        if self._client_arrays:
            self._ship_client_arrays(0 if lo is None else lo, -1 if hi is None else hi,
                                     instances, base_instance, what)  # fmt: skip
            flags |= _flag("kDrawClientArrays")
        self._validate_draw()
        flags |= _flag("kDrawHasIndexRange")
        if user:
            flags |= _flag("kDrawHasUserIndices")
        # MinIndex / MaxIndex: the scan's range of vertices fetched (base vertex included)
        payload = {"Mode": mode, "IndexSize": index_size, "InstanceCount": instances,
                   "StartInstance": base_instance, "RestartIndex": restart, "Flags": flags,
                   "MinIndex": 0xFFFFFFFF if lo is None else lo,
                   "MaxIndex": 0xFFFFFFFF if hi is None else hi,
                   "IndexResource": NULL if user else ib.handle}  # type: ignore[union-attr]  # fmt: skip
        self._emit_ranges(payload, ranges, span if user else None)
