"""Vertex input: the vertex-elements CSO, the vertex-buffer window and the draw-range check.

``CreateVertexElements`` carries ``AttributeCount`` ``MGPVertexAttribWire`` rows followed by
``BindingPointCount`` ``MGPVertexBindingPointWire`` rows (one blob); an attribute's ``Type``
is its GL component type and its ``Offset`` the relative offset inside a vertex.
:class:`VertexInput` keeps one VAO and applies the bound layout + buffers only when one of
them moved since the last draw. Before a draw it proves every enabled attribute's last
fetched element lies inside its buffer (``Fatal{DriverRefused, "DrawVbo.VertexRange"}`` otherwise), and for an indexed draw
that the index range lies inside the index buffer (``"DrawVbo.IndexRange"``).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ...schema import layouts
from .errors import DriverRefused
from .gl import GL, CountedGL
from .resources import GlBuffer

__all__ = ["AttribDesc", "VertexLayout", "parse_layout", "VertexInput", "INDEX_DTYPES"]

#: GL component type -> bytes per component.
_TYPE_SIZE = {int(GL.GL_FLOAT): 4, int(GL.GL_UNSIGNED_BYTE): 1, int(GL.GL_BYTE): 1,
              int(GL.GL_UNSIGNED_SHORT): 2, int(GL.GL_SHORT): 2, int(GL.GL_UNSIGNED_INT): 4,
              int(GL.GL_INT): 4, int(GL.GL_HALF_FLOAT): 2}  # fmt: skip
#: index size in bytes -> (GL type, numpy dtype).
INDEX_DTYPES = {1: (int(GL.GL_UNSIGNED_BYTE), np.uint8), 2: (int(GL.GL_UNSIGNED_SHORT), np.uint16),
                4: (int(GL.GL_UNSIGNED_INT), np.uint32)}  # fmt: skip


@dataclass(frozen=True)
class AttribDesc:
    index: int
    size: int
    gl_type: int
    normalized: bool
    integer: bool
    relative_offset: int
    binding: int
    stride: int
    divisor: int

    @property
    def bytes(self) -> int:
        return self.size * _TYPE_SIZE[self.gl_type]


VertexLayout = tuple[AttribDesc, ...]


def parse_layout(payload: np.void, blob: bytes, what: str) -> VertexLayout:
    na, nb = int(payload.AttributeCount), int(payload.BindingPointCount)
    adt, bdt = layouts.dtype("MGPVertexAttribWire"), layouts.dtype("MGPVertexBindingPointWire")
    if len(blob) != na * adt.itemsize + nb * bdt.itemsize:
        raise DriverRefused(f"{what}.Blob", f"{len(blob)} bytes for {na} attributes and "
                            f"{nb} bindings")  # fmt: skip
    attribs = np.frombuffer(blob, adt, count=na)
    binds = np.frombuffer(blob, bdt, count=nb, offset=na * adt.itemsize)
    out = []
    for i, a in enumerate(attribs):
        if not a["Enabled"]:
            continue
        b = int(a["BindingIndex"])
        if b >= nb:
            raise DriverRefused(f"{what}.BindingIndex", f"attribute {i} names binding {b} of {nb}")
        if int(a["Type"]) not in _TYPE_SIZE:
            raise DriverRefused(f"{what}.Type", f"attribute {i}: type 0x{int(a['Type']):04x}")
        out.append(AttribDesc(i, int(a["Size"]), int(a["Type"]), bool(a["Normalized"]),
                              bool(a["IsInteger"]), int(a["Offset"]), b,
                              int(binds[b]["Stride"]), int(binds[b]["Divisor"])))  # fmt: skip
    return tuple(out)


class VertexInput:
    """One VAO; the applied (layout, buffers) pair and the index buffer binding."""

    def __init__(self, gl: CountedGL, max_attribs: int) -> None:
        self.gl = gl
        self.max_attribs = max_attribs
        self.vao = int(gl.glGenVertexArrays(1))
        gl.glBindVertexArray(self.vao)
        self.layout: VertexLayout = ()
        self.buffers: dict[int, tuple[GlBuffer, int, int]] = {}  # binding -> (buf, offset, stride)
        self.dirty = True
        self.config = 0  # moves with the layout or any buffer binding
        self._proven: tuple = (None, -1, 0)
        self._applied: dict[int, tuple] = {}
        self._index_name = 0
        self._range_memo: dict[tuple, int] = {}
        self._base_instance = 0

    # -- state ------------------------------------------------------------------
    def set_layout(self, layout: VertexLayout) -> None:
        self.layout, self.dirty = layout, True
        self.config += 1

    def set_buffers(self, start: int, rows: dict[int, tuple[GlBuffer, int, int] | None]) -> None:
        for slot, row in rows.items():
            if row is None:
                self.buffers.pop(slot, None)
            else:
                self.buffers[slot] = row
        self.dirty = True
        self.config += 1

    # -- per draw ---------------------------------------------------------------------
    def apply(self, what: str, base_instance: int = 0) -> None:
        """Point every enabled attribute at its buffer. GLES has no base instance: an
        instanced attribute (divisor > 0) fetches element ``instance // divisor +
        base_instance`` (GL's rule), so its pointer moves ``base_instance`` strides."""
        if base_instance != self._base_instance:
            self._base_instance = base_instance
            if any(a.divisor for a in self.layout):
                self.dirty = True
        if not self.dirty:
            return
        gl = self.gl
        wanted: dict[int, tuple] = {}
        for a in self.layout:
            if a.binding not in self.buffers:
                raise DriverRefused(f"{what}.VertexBuffers", f"attribute {a.index} reads binding "
                                    f"{a.binding}, which has no buffer")  # fmt: skip
            buf, offset, stride = self.buffers[a.binding]
            stride = stride or a.stride
            shift = base_instance * (stride or a.bytes) if a.divisor else 0
            wanted[a.index] = (buf.name, a.size, a.gl_type, a.normalized, a.integer, stride,
                               offset + a.relative_offset + shift, a.divisor)  # fmt: skip
        for index in sorted(set(self._applied) - set(wanted)):
            gl.glDisableVertexAttribArray(index)
        bound = -1
        for index, spec in sorted(wanted.items()):
            old = self._applied.get(index)
            if old == spec:
                continue
            name, size, typ, norm, integer, stride, offset, divisor = spec
            if name != bound:
                gl.glBindBuffer(GL.GL_ARRAY_BUFFER, name)
                bound = name
            ptr = ctypes.c_void_p(offset)
            if integer:
                gl.glVertexAttribIPointer(index, size, typ, stride, ptr)
            else:
                gl.glVertexAttribPointer(index, size, typ, norm, stride, ptr)
            if old is None or old[7] != divisor:
                gl.glVertexAttribDivisor(index, divisor)
            if old is None:
                gl.glEnableVertexAttribArray(index)
        self._applied = wanted
        self.dirty = False

    def bind_index_buffer(self, buf: GlBuffer) -> None:
        if buf.name != self._index_name:
            self.gl.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, buf.name)
            self._index_name = buf.name

    def forget_buffer(self, buf: GlBuffer) -> None:
        """A deleted buffer: nothing applied may still name it."""
        if self._index_name == buf.name:
            self._index_name = 0
        self.buffers = {k: v for k, v in self.buffers.items() if v[0] is not buf}
        self._applied = {k: v for k, v in self._applied.items() if v[0] != buf.name}
        self.dirty = True
        self.config += 1

    # -- range checks -----------------------------------------------------------------
    def max_index(self, ib: GlBuffer, size: int, start: int, count: int, restart: int | None,
                  what: str) -> int:  # fmt: skip
        """The largest index a draw fetches (the restart index excluded); -1 if none."""
        end = (start + count) * size
        if end > ib.size:
            raise DriverRefused(f"{what}.IndexRange", f"indices [{start}, {start + count}) of "
                                f"{size} bytes need {end} bytes; the buffer has {ib.size}")  # fmt: skip
        if ib.gpu_dirty:  # written by the GPU: the host mirror is re-read first
            refresh_mirror(self.gl, ib)
        key = (ib.name, ib.serial, size, start, count, restart)
        hit = self._range_memo.get(key)
        if hit is not None:
            return hit
        idx = np.frombuffer(ib.mirror, INDEX_DTYPES[size][1], count=count, offset=start * size)
        if restart is not None:
            idx = idx[idx != restart]
        top = int(idx.max()) if len(idx) else -1
        if len(self._range_memo) > 256:
            self._range_memo.clear()
        self._range_memo[key] = top
        return top

    def check_range(self, last_vertex: int, instances: int, epoch: int, what: str,
                    base_instance: int = 0) -> None:  # fmt: skip
        """Every enabled attribute's last element lies inside its buffer. A check is
        monotonic in the last vertex and the instance count: a draw no larger than one
        already proven under the same layout, buffers and buffer sizes (``epoch``) passes."""
        key = (self.config, epoch, base_instance)
        proven = self._proven
        if proven[0] == key and last_vertex <= proven[1] and instances <= proven[2]:
            return
        for a in self.layout:
            buf, offset, stride = self.buffers[a.binding]
            stride = stride or a.stride or a.bytes
            last = ((max(instances, 1) - 1) // a.divisor + base_instance if a.divisor
                    else last_vertex)  # fmt: skip
            if last < 0:
                continue
            need = offset + a.relative_offset + last * stride + a.bytes
            if need > buf.size:
                raise DriverRefused(f"{what}.VertexRange", f"attribute {a.index} fetches element "
                                    f"{last}: {need} bytes of a {buf.size}-byte buffer")  # fmt: skip
        if proven[0] == key:
            last_vertex, instances = max(last_vertex, proven[1]), max(instances, proven[2])
        self._proven = (key, last_vertex, instances)


def refresh_mirror(gl: CountedGL, buf: GlBuffer) -> None:
    """Re-read a GPU-written buffer's bytes into its host mirror (glMapBufferRange for
    reading, GLES 3.0); its serial moves, so no memo of the old bytes answers again."""
    import ctypes

    target = GL.GL_COPY_READ_BUFFER
    gl.glBindBuffer(target, buf.name)
    if buf.size:
        ptr = gl.glMapBufferRange(target, 0, buf.size, GL.GL_MAP_READ_BIT)
        if not ptr:
            raise DriverRefused("DrawVbo.IndexResource", "glMapBufferRange could not read the "
                                "GPU-written index buffer back")  # fmt: skip
        ctypes.memmove((ctypes.c_char * buf.size).from_buffer(buf.mirror), ptr, buf.size)
        gl.glUnmapBuffer(target)
    gl.glBindBuffer(target, 0)
    buf.serial += 1
    buf.gpu_dirty = False
