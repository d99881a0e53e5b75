"""Issue 19's draw scenes: indirect draws, client vertex arrays, user index arrays,
multi-draw and primitive restart at an index other than the fixed one.

Each scene draws the same picture twice or more: image 0 by direct draws from buffers (the
twin), the others by the path under test. The probes are first principles -- three
vertical strips (x in thirds of the surface), each one colour or the clear colour, decided
by which commands / indices the scene sent -- and every image carries them; the tests also
hold each image equal, pixel for pixel, to its twin (:data:`TWINS`).

Geometry: :func:`strips` is three 4-vertex quads (red, green, blue, left to right) of
:data:`~.kit.STRIDE`-byte vertices (``x, y, z, r, g, b, a``), what the ``color`` program
reads; :data:`QUAD` indexes one quad's corners as two triangles.
"""

from __future__ import annotations

import struct
from typing import Any

from ...client.api import Client
from .kit import GL, STRIDE, Image, Probe, capture, px, setup
from .render import SIZE, need

__all__ = ["SCENE_FNS", "TWINS", "strips", "QUAD"]

COLORS = ((1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0))
BLACK = (0.0, 0.0, 0.0, 1.0)
QUAD = (0, 1, 2, 0, 2, 3)
#: the probe x of strip i (the middle of its third) and the probe rows (a quarter and a half up)
PROBE_X, PROBE_Y = (SIZE // 6, SIZE // 2, 5 * SIZE // 6), (SIZE // 4, SIZE // 2)


def strips() -> list[float]:
    """Three quads, strip i over NDC x in [-1 + 2i/3, -1 + 2(i+1)/3], full height."""
    out: list[float] = []
    for i, col in enumerate(COLORS):
        x0, x1 = -1.0 + 2.0 * i / 3, -1.0 + 2.0 * (i + 1) / 3
        for x, y in ((x0, -1.0), (x1, -1.0), (x1, 1.0), (x0, 1.0)):
            out += [x, y, 0.0, *col]
    return out


def triangles() -> list[float]:
    """The three quads as 18 vertices of two triangles each (the arrays draws)."""
    v = strips()
    out: list[float] = []
    for q in range(3):
        for k in QUAD:
            out += v[(4 * q + k) * 7 : (4 * q + k + 1) * 7]
    return out


def _frame(c: Client) -> None:
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(*BLACK)
    c.clear()


def _probes(image: int, lit: tuple[bool, bool, bool], what: str) -> list[Probe]:
    return [Probe(image, PROBE_X[i], y, px(COLORS[i] if on else BLACK), 0,
                  f"{what}: strip {i} {'drawn' if on else 'empty'}")
            for i, on in enumerate(lit) for y in PROBE_Y]  # fmt: skip


def _words(*cmds: tuple[int, ...], stride: int = 0) -> bytes:
    """Indirect commands as u32 words (baseVertex an int32), padded to ``stride`` bytes."""
    out = b""
    for c in cmds:
        raw = struct.pack(f"<{len(c)}I", *(v & 0xFFFFFFFF for v in c))
        out += raw + bytes(max(stride - len(raw), 0))
    return out


# -- indirect arrays ---------------------------------------------------------------------------
def indirect_arrays(c: Client, n: int) -> list[Image]:
    """glDrawArraysIndirect / glMultiDrawArraysIndirect (tight and strided) and
    glMultiDrawArraysIndirectCount against their direct twins: strips 0 and 2 drawn, the
    middle command's count 0 draws nothing; the resolved count 1 of 3 draws strip 0 only."""
    setup(c, triangles())
    cmds = (6, 1, 0, 0), (0, 1, 6, 0), (6, 1, 12, 0)
    tight = c.create_buffer(_words(*cmds))
    strided = c.create_buffer(bytes(8) + _words(*cmds, stride=32))
    param = c.create_buffer(struct.pack("<2I", 99, 1))
    bind = need(c, "bind_indirect_buffer")
    imgs = []
    _frame(c)  # 0: the direct twin of 1 and 2
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.draw_arrays(GL.TRIANGLES, 12, 6)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 1: one multi-draw, tightly packed
    bind(tight)
    need(c, "multi_draw_arrays_indirect")(GL.TRIANGLES, 0, 3)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 2: one command at a time, a 32-byte stride from byte 8
    bind(strided)
    for i in range(3):
        need(c, "draw_arrays_indirect")(GL.TRIANGLES, 8 + 32 * i)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 3: the count (1) read from the parameter buffer's word 1, at most 3
    bind(tight)
    need(c, "bind_parameter_buffer")(param)
    need(c, "multi_draw_arrays_indirect_count")(GL.TRIANGLES, 0, 4, 3)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 4: the direct twin of 3
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    imgs.append(capture(c, SIZE, SIZE))
    c.present()
    return imgs


def probes_indirect_arrays(n: int) -> list[Probe]:
    out = []
    for i in range(3):
        out += _probes(i, (True, False, True), f"arrays image {i}")
    for i in (3, 4):
        out += _probes(i, (True, False, False), f"arrays image {i}")
    return out


# -- indirect elements ---------------------------------------------------------------------
def indirect_elements(c: Client, n: int) -> list[Image]:
    """glDrawElementsIndirect / glMultiDrawElementsIndirect{,Count} against direct twins:
    one u16 list ``QUAD`` then ``QUAD + 4``; strip 0 from firstIndex 0, strip 1 from
    firstIndex 6, strip 2 from firstIndex 0 and baseVertex 8; the resolved count 2 of 3
    draws strips 0 and 1."""
    setup(c, strips())
    c.bind_index_buffer(c.create_buffer(struct.pack("<12H", *QUAD, *(i + 4 for i in QUAD))))
    cmds = (6, 1, 0, 0, 0), (6, 1, 6, 0, 0), (6, 1, 0, 8, 0)
    ind = c.create_buffer(_words(*cmds))
    param = c.create_buffer(struct.pack("<I", 2))
    imgs = []
    _frame(c)  # 0: the direct twin of 1 and 2
    c.draw_elements(GL.TRIANGLES, 6, 2, 0)
    c.draw_elements(GL.TRIANGLES, 6, 2, 12)
    c.draw_elements(GL.TRIANGLES, 6, 2, 0, base_vertex=8)
    imgs.append(capture(c, SIZE, SIZE))
    need(c, "bind_indirect_buffer")(ind)
    _frame(c)  # 1: one multi-draw
    need(c, "multi_draw_elements_indirect")(GL.TRIANGLES, 2, 0, 3)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 2: one command at a time
    for i in range(3):
        need(c, "draw_elements_indirect")(GL.TRIANGLES, 2, 20 * i)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 3: the count resolved on the client: 2 of at most 3
    need(c, "bind_parameter_buffer")(param)
    need(c, "multi_draw_elements_indirect_count")(GL.TRIANGLES, 2, 0, 0, 3)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 4: the direct twin of 3
    c.draw_elements(GL.TRIANGLES, 6, 2, 0)
    c.draw_elements(GL.TRIANGLES, 6, 2, 12)
    imgs.append(capture(c, SIZE, SIZE))
    c.present()
    return imgs


def probes_indirect_elements(n: int) -> list[Probe]:
    out = []
    for i in range(3):
        out += _probes(i, (True, True, True), f"elements image {i}")
    for i in (3, 4):
        out += _probes(i, (True, True, False), f"elements image {i}")
    return out


# -- client vertex arrays ------------------------------------------------------------------
def client_arrays(c: Client, n: int) -> list[Image]:
    """The same two draws from a vertex buffer and from client vertex arrays: the arrays
    draw of vertices 6..11 (strip 1) and an indexed draw whose indices 12..17 (strip 2) the
    max-index scan finds in the index buffer; strip 0 is never drawn."""
    tri = triangles()
    data = struct.pack(f"<{len(tri)}f", *tri)
    setup(c, tri)
    c.bind_index_buffer(c.create_buffer(struct.pack("<6H", *range(12, 18))))
    imgs = []
    for client in (False, True):
        if client:  # the same layout, the bytes in client memory
            c.vertex_attrib_pointer(0, data, 3, stride=STRIDE, offset=0)
            c.vertex_attrib_pointer(1, data, 4, stride=STRIDE, offset=12)
        _frame(c)
        c.draw_arrays(GL.TRIANGLES, 6, 6)
        c.draw_elements(GL.TRIANGLES, 6, 2)
        imgs.append(capture(c, SIZE, SIZE))
    c.present()
    return imgs


def probes_client_arrays(n: int) -> list[Probe]:
    return _probes(0, (False, True, True), "buffers") + _probes(1, (False, True, True),
                                                                "client arrays")  # fmt: skip


# -- user index arrays -----------------------------------------------------------------------
def user_indices(c: Client, n: int) -> list[Image]:
    """The same three indexed draws from index buffers and from user index arrays: strip 0
    by 8-bit indices, strip 1 by 16-bit ones from byte 4 of the array, strip 2 by 32-bit
    ones with base vertex 8."""
    setup(c, strips())
    u8 = struct.pack("<6B", *QUAD)
    u16 = struct.pack("<8H", 0xAAAA, 0xAAAA, *(i + 4 for i in QUAD))
    u32 = struct.pack("<6I", *QUAD)
    bufs = [c.create_buffer(b) for b in (u8, u16, u32)]
    imgs = []
    for user in (False, True):
        _frame(c)
        for (size, off, bv), data, buf in zip(((1, 0, 0), (2, 4, 0), (4, 0, 8)),
                                              (u8, u16, u32), bufs):  # fmt: skip
            if user:
                c.bind_index_buffer(None)
                c.draw_elements(GL.TRIANGLES, 6, size, off, base_vertex=bv, indices=data)
            else:
                c.bind_index_buffer(buf)
                c.draw_elements(GL.TRIANGLES, 6, size, off, base_vertex=bv)
        imgs.append(capture(c, SIZE, SIZE))
    c.present()
    return imgs


def probes_user_indices(n: int) -> list[Probe]:
    return _probes(0, (True, True, True), "index buffers") + _probes(1, (True, True, True),
                                                                     "user indices")  # fmt: skip


# -- primitive restart at a non-fixed index ------------------------------------------------
RESTART_AT = 9  # no vertex 9 exists: an unhonoured restart index is a refused fetch


def restart_index(c: Client, n: int) -> list[Image]:
    """Two 4-vertex strips (strips 0 and 2) split by a restart index: the fixed 0xFFFF
    (the twin), then glPrimitiveRestartIndex(9) from an index buffer, from a user index
    array and through glDrawElementsIndirect; without restart the strip would bridge strip 1."""
    verts: list[float] = []
    for i in (0, 2):
        x0, x1 = -1.0 + 2.0 * i / 3, -1.0 + 2.0 * (i + 1) / 3
        for x, y in ((x0, -1.0), (x1, -1.0), (x0, 1.0), (x1, 1.0)):
            verts += [x, y, 0.0, *COLORS[i]]
    setup(c, verts)
    fixed = c.create_buffer(struct.pack("<9H", 0, 1, 2, 3, 0xFFFF, 4, 5, 6, 7))
    nine = struct.pack("<9H", 0, 1, 2, 3, RESTART_AT, 4, 5, 6, 7)
    ebo = c.create_buffer(nine)
    imgs = []
    _frame(c)  # 0: the fixed index
    c.bind_index_buffer(fixed)
    c.enable("PrimitiveRestartFixedIndex")
    c.draw_elements(GL.TRIANGLE_STRIP, 9, 2)
    c.disable("PrimitiveRestartFixedIndex")
    imgs.append(capture(c, SIZE, SIZE))
    c.enable("PrimitiveRestart")
    c.state.set_primitive_restart_index(RESTART_AT)
    _frame(c)  # 1: index 9, an index buffer
    c.bind_index_buffer(ebo)
    c.draw_elements(GL.TRIANGLE_STRIP, 9, 2)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 2: index 9, a user index array
    c.bind_index_buffer(None)
    c.draw_elements(GL.TRIANGLE_STRIP, 9, 2, indices=nine)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 3: index 9, an indirect draw
    c.bind_index_buffer(ebo)
    need(c, "bind_indirect_buffer")(c.create_buffer(_words((9, 1, 0, 0, 0))))
    need(c, "draw_elements_indirect")(GL.TRIANGLE_STRIP, 2, 0)
    imgs.append(capture(c, SIZE, SIZE))
    c.disable("PrimitiveRestart")
    c.present()
    return imgs


def probes_restart_index(n: int) -> list[Probe]:
    out = []
    for i, what in enumerate(("fixed", "index buffer", "user indices", "indirect")):
        out += _probes(i, (True, False, True), f"restart 9, {what}")
    return out


# -- multi-draw ------------------------------------------------------------------------------
def multi_draw(c: Client, n: int) -> list[Image]:
    """glMultiDrawArrays and glMultiDrawElements[BaseVertex] (index buffer, user index
    arrays, client vertex arrays) against direct twins: strips 0 and 2 drawn, a range of
    count 0 in between draws nothing."""
    tri = triangles()
    setup(c, tri)
    c.bind_index_buffer(c.create_buffer(struct.pack("<18H", *range(18))))
    imgs = []
    _frame(c)  # 0: direct arrays
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    c.draw_arrays(GL.TRIANGLES, 12, 6)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 1: one multi-draw of three ranges
    need(c, "multi_draw_arrays")(GL.TRIANGLES, [0, 6, 12], [6, 0, 6])
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 2: direct elements
    c.draw_elements(GL.TRIANGLES, 6, 2, 0)
    c.draw_elements(GL.TRIANGLES, 6, 2, 24)
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 3: multi-draw elements from the index buffer
    need(c, "multi_draw_elements")(GL.TRIANGLES, [6, 6], 2, [0, 24])
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 4: from two user index arrays, the second with base vertex 6
    c.bind_index_buffer(None)
    need(c, "multi_draw_elements", "base_vertices", "indices")(
        GL.TRIANGLES, [6, 6], 2, [0, 0], base_vertices=[0, 6],
        indices=[struct.pack("<6H", *range(6)), struct.pack("<6H", *range(6, 12))])
    imgs.append(capture(c, SIZE, SIZE))
    _frame(c)  # 5: multi-draw arrays from client vertex arrays
    data = struct.pack(f"<{len(tri)}f", *tri)
    c.vertex_attrib_pointer(0, data, 3, stride=STRIDE, offset=0)
    c.vertex_attrib_pointer(1, data, 4, stride=STRIDE, offset=12)
    c.multi_draw_arrays(GL.TRIANGLES, [0, 12], [6, 6])
    imgs.append(capture(c, SIZE, SIZE))
    c.present()
    return imgs


def probes_multi_draw(n: int) -> list[Probe]:
    out = []
    for i in range(6):
        out += _probes(i, (True, False, True), f"multi-draw image {i}")
    return out


SCENE_FNS: dict[str, tuple[Any, Any]] = {
    "indirect-arrays": (indirect_arrays, probes_indirect_arrays),
    "indirect-elements": (indirect_elements, probes_indirect_elements),
    "client-arrays": (client_arrays, probes_client_arrays),
    "user-indices": (user_indices, probes_user_indices),
    "restart-index": (restart_index, probes_restart_index),
    "multi-draw": (multi_draw, probes_multi_draw),
}
#: scene -> ((image, its direct twin), ...): equal pixel for pixel
TWINS: dict[str, tuple[tuple[int, int], ...]] = {
    "indirect-arrays": ((1, 0), (2, 0), (3, 4)),
    "indirect-elements": ((1, 0), (2, 0), (3, 4)),
    "client-arrays": ((1, 0),),
    "user-indices": ((1, 0),),
    "restart-index": ((1, 0), (2, 0), (3, 0)),
    "multi-draw": ((1, 0), (2, 0), (3, 0), (4, 0), (5, 0)),
}
