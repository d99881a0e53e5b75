"""Issue 19's scenes: compute into a storage buffer (direct and indirect grids), image
load / store, atomic counters, transform feedback (packed, paused, with a hole) and a
tessellated patch.

Every expectation is computed here from first principles: the pattern the compute shader
writes, word by word (:func:`fill_word`); the texel the image shaders store and move; the
fragments of a quad whose edges lie on pixel boundaries; the varyings the capturing vertex
shader computes from the vertices uploaded; the domain coordinate a tessellated pixel lies
at.

A buffer is read back by a draw (:func:`dump`): the ``dump`` program shows word
``y * 64 + x`` of the storage buffer at binding 2 as pixel (x, y) of a 64 x 64 RGBA8
texture (its four bytes, R first), then ``ReadPixels`` -- so a word probe is a pixel probe
with tolerance 0 on the word's little-endian bytes. Nothing but the existing framebuffer
readback is needed.

Each scene that writes a buffer also reads it back directly (:func:`readback`:
``glGetBufferSubData``, the ``ResourceReadback`` answer of the reply mailbox) and lays the
bytes out as the dump does, as one more image: the same word probes hold on both, so the
words are compared one by one through the draw and through the readback. The readback's
client bytes are also what the client's GPU-written pending set must have given up (a
pending range left over the read-back bytes fails the scene by name).
"""

from __future__ import annotations

import struct
from typing import Any

from ...client.api import Client
from ..shaders.programs import load
from .kit import GL, Image, Probe, capture, px, quad
from .render import need

__all__ = ["SIZE", "SCENE_FNS", "fill_word", "dump", "readback", "word_probes"]

SIZE = 64
SENTINEL = 0xDEADBEEF  # what a word nothing wrote still holds
GL_PATCHES, GL_PATCH_VERTICES = 0x000E, 0x8E72
GL_TRIANGLES = 0x0004


def fill_word(i: int) -> int:
    """What ``fill.comp`` writes at word i: (i * 2654435761) ^ 0x5A5A0000, 32-bit."""
    return ((i * 2654435761) & 0xFFFFFFFF) ^ 0x5A5A0000


def _program(c: Client, name: str) -> Any:
    src = load(name)
    prog = c.create_program(src.spirv, src.reflection)
    c.use_program(prog)
    return prog


def _positions(c: Client, pts: list[tuple[float, float]]) -> Any:
    """A position-only vertex buffer (x, y, 0) at attribute 0."""
    vb = c.create_buffer(struct.pack(f"<{3 * len(pts)}f", *(v for x, y in pts for v in (x, y, 0.0))))
    c.vertex_attrib_pointer(0, vb, 3, stride=12, offset=0)
    return vb


_FULL = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]


def dump(c: Client, buf: Any) -> Image:
    """Read ``buf``'s words back through a draw (see the module docstring)."""
    need(c, "memory_barrier")("shader_storage")
    _program(c, "dump")
    _positions(c, _FULL)
    tex = c.create_texture_2d(SIZE, SIZE)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    c.bind_framebuffer(fb)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 0.0)
    c.clear()
    c.bind_buffer_base("storage", 2, buf)
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    img = capture(c, SIZE, SIZE)
    c.bind_framebuffer(None)
    c.bind_buffer_base("storage", 2, None)
    return img


def readback(c: Client, buf: Any, words: int) -> Image:
    """``buf``'s first ``words`` words through ``ResourceReadback`` (after the barrier GL asks
    before a buffer read of shader writes), laid out as :func:`dump` lays them (word i at
    pixel (i % 64, i // 64); the rest of the 64 x 64 image zero)."""
    need(c, "memory_barrier")("buffer_update")
    data = need(c, "get_buffer_sub_data")(buf, 0, 4 * words)
    left = [r for r in c.gpu_pending.get(buf.handle, ()) if r[0] < 4 * words]
    if left:
        raise AssertionError(f"readback: the GPU-written pending set still holds {left} of the "
                             "bytes just read back")  # fmt: skip
    return Image(SIZE, SIZE, bytes(data) + bytes(SIZE * SIZE * 4 - len(data)))


def word_probes(image: int, words: list[int], what: str) -> list[Probe]:
    """Word i must read back as its four little-endian bytes at pixel (i % 64, i // 64)."""
    return [Probe(image, i % SIZE, i // SIZE, tuple(struct.pack("<I", w)), 0,  # type: ignore[arg-type]
                  f"{what} word {i} = {w:#010x}")
            for i, w in enumerate(words)]  # fmt: skip


def _sentinel_buffer(c: Client, words: int) -> Any:
    return c.create_buffer(struct.pack(f"<{words}I", *([SENTINEL] * words)))


def _finish(c: Client, imgs: list[Image]) -> list[Image]:
    c.present()
    return imgs


# -- compute into a storage buffer ------------------------------------------------------------
FILL_WORDS, FILL_GROUPS, FILL_LOCAL = 96, 8, 8  # 8 groups of 8: words 0..63 written


def compute_fill(c: Client, n: int) -> list[Image]:
    """A compute shader (8 workgroups of 8) writes fill_word(i) into words 0..63 of a
    96-word storage buffer that held 0xDEADBEEF; words 64..95 keep it."""
    buf = _sentinel_buffer(c, FILL_WORDS)
    _program(c, "fill")
    c.bind_buffer_base("storage", 1, buf)
    for _ in range(max(n, 1)):
        need(c, "dispatch_compute")(FILL_GROUPS, 1, 1)
    c.bind_buffer_base("storage", 1, None)
    return _finish(c, [dump(c, buf), readback(c, buf, FILL_WORDS)])


def probes_compute_fill(n: int) -> list[Probe]:
    written = FILL_GROUPS * FILL_LOCAL
    words = [fill_word(i) if i < written else SENTINEL for i in range(FILL_WORDS)]
    return word_probes(0, words, "compute-fill") + word_probes(1, words, "compute-fill readback")


#: the dispatch-indirect buffer: 3 words the launch must not read, then the grid (3, 1, 1)
INDIRECT_WORDS = (100, 100, 100, 3, 1, 1)
INDIRECT_OFFSET = 12


def compute_indirect(c: Client, n: int) -> list[Image]:
    """The fill shader launched by glDispatchComputeIndirect at offset 12 of a buffer holding
    (100, 100, 100, 3, 1, 1): 3 workgroups, so words 0..23 are written, 24..95 keep
    0xDEADBEEF."""
    buf = _sentinel_buffer(c, FILL_WORDS)
    grid = c.create_buffer(struct.pack(f"<{len(INDIRECT_WORDS)}I", *INDIRECT_WORDS))
    _program(c, "fill")
    c.bind_buffer_base("storage", 1, buf)
    need(c, "bind_dispatch_indirect_buffer")(grid)
    need(c, "memory_barrier")("command")
    need(c, "dispatch_compute_indirect")(INDIRECT_OFFSET)
    c.bind_buffer_base("storage", 1, None)
    return _finish(c, [dump(c, buf), readback(c, buf, FILL_WORDS)])


def probes_compute_indirect(n: int) -> list[Probe]:
    written = INDIRECT_WORDS[INDIRECT_OFFSET // 4] * FILL_LOCAL
    words = [fill_word(i) if i < written else SENTINEL for i in range(FILL_WORDS)]
    return word_probes(0, words, "compute-indirect") + \
        word_probes(1, words, "compute-indirect readback")  # fmt: skip


# -- a GPU-written index buffer ---------------------------------------------------------------------
INDEX_STALE = 0xEEEE  # what the index buffer held before the launch: no vertex has it
INDEX_COLOR = (1.0, 0.5, 0.0, 1.0)


def compute_indices(c: Client, n: int, restart: bool = False) -> list[Image]:
    """A compute shader writes 0 1 2 0 2 3 (u16) into a buffer that held 0xEEEE everywhere;
    the buffer is then the index buffer of a quad of 4 vertices over pixels x < 48. The server's
    index-range check must read what the GPU wrote, not the bytes the client uploaded."""
    from .kit import setup

    idx = c.create_buffer(struct.pack("<6H", *([INDEX_STALE] * 6)))
    _program(c, "indices")
    c.bind_buffer_base("storage", 1, idx)
    need(c, "dispatch_compute")(3, 1, 1)
    c.bind_buffer_base("storage", 1, None)
    need(c, "memory_barrier")("element_array")
    quad_verts: list[float] = []
    for x, y in ((-1.0, -1.0), (0.5, -1.0), (0.5, 1.0), (-1.0, 1.0)):
        quad_verts += [x, y, 0.0, *INDEX_COLOR]
    setup(c, quad_verts)
    c.bind_index_buffer(idx)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()
    if restart:
        c.enable("PrimitiveRestart")
        c.state.set_primitive_restart_index(INDEX_STALE)
    c.draw_elements(GL_TRIANGLES, 6, 2)
    if restart:
        c.disable("PrimitiveRestart")
    return _finish(c, [capture(c, SIZE, SIZE), readback(c, idx, 3)])


def compute_restart_indices(c: Client, n: int) -> list[Image]:
    """compute-indices with primitive restart at index 0xEEEE -- what the buffer held before
    the launch. No driver restarts at an index other than the type's maximum, so the server
    rewrites the buffer from its host mirror: the mirror must hold the GPU's indices (a stale
    one is all restart indices: nothing drawn). Image 0: the quad; image 1: the words."""
    return compute_indices(c, n, restart=True)


#: the six u16 indices ``indices.comp`` writes, as the three little-endian words they fill
INDEX_WORDS = [0 | 1 << 16, 2 | 0 << 16, 2 | 3 << 16]


def probes_compute_indices(n: int) -> list[Probe]:
    return [Probe(0, x, y, px(INDEX_COLOR), 0, f"the quad the GPU's indices draw ({x},{y})")
            for x, y in ((1, 1), (47, 1), (47, 62), (1, 62), (32, 32))] + [
        Probe(0, 48, 32, (0, 0, 0, 255), 0, "right of the quad")] + \
        word_probes(1, INDEX_WORDS, "compute-indices readback")  # fmt: skip


SPARE_POINT = 5  # a storage point indices.comp does not declare


def compute_client_indices(c: Client, n: int) -> list[Image]:
    """The indices compute wrote drive a draw from client vertex arrays (seed 001's client
    array after a compute write): the client's max-index scan must read the GPU's 0 1 2 0 2 3,
    not the 0xEEEE it uploaded, to ship vertices 0..3 -- the pending range is read back
    (ResourceReadback) before the scan. A buffer bound at storage point 5, which the shader
    does not declare, is guessed GPU-written by the client and narrowed away by the server's
    OnGpuWritten. Image 0: the quad over x < 48; image 1: the index words read back."""
    from .kit import STRIDE

    idx = c.create_buffer(struct.pack("<6H", *([INDEX_STALE] * 6)))
    spare = _sentinel_buffer(c, 4)
    _program(c, "indices")
    c.bind_buffer_base("storage", 1, idx)
    c.bind_buffer_base("storage", SPARE_POINT, spare)
    need(c, "dispatch_compute")(3, 1, 1)
    guessed = spare.handle in c.gpu_pending and idx.handle in c.gpu_pending
    c.bind_buffer_base("storage", 1, None)
    c.bind_buffer_base("storage", SPARE_POINT, None)
    need(c, "memory_barrier")("element_array")
    verts: list[float] = []
    for x, y in ((-1.0, -1.0), (0.5, -1.0), (0.5, 1.0), (-1.0, 1.0)):
        verts += [x, y, 0.0, *INDEX_COLOR]
    data = struct.pack(f"<{len(verts)}f", *verts)
    _program(c, "color")
    c.vertex_attrib_pointer(0, data, 3, stride=STRIDE, offset=0)  # client memory
    c.vertex_attrib_pointer(1, data, 4, stride=STRIDE, offset=12)
    c.bind_index_buffer(idx)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()
    c.draw_elements(GL_TRIANGLES, 6, 2)  # the scan: a readback of the pending range first
    if not guessed:
        raise AssertionError("compute-client-indices: the launch left no pending guess for the "
                             "buffers bound at its writable points")  # fmt: skip
    if spare.handle in c.gpu_pending:
        raise AssertionError(f"OnGpuWritten.Missing: the buffer at storage point {SPARE_POINT} "
                             f"is still pending {c.gpu_pending[spare.handle]} after the launch's "
                             "record was applied (no narrowing arrived)")  # fmt: skip
    return _finish(c, [capture(c, SIZE, SIZE), readback(c, idx, 3)])


def probes_compute_client_indices(n: int) -> list[Probe]:
    return probes_compute_indices(n)


# -- image load / store -------------------------------------------------------------------------
IMG = 8  # the images are 8 x 8 RGBA8
GL_RGBA8, GL_READ_ONLY, GL_WRITE_ONLY = 0x8058, 0x88B8, 0x88B9


def img_texel(x: int, y: int) -> tuple[int, int, int, int]:
    """What ``imgfill.comp`` stores at (x, y)."""
    return (32 * x, 32 * y, 200, 255)


def img_copied(x: int, y: int) -> tuple[int, int, int, int]:
    """What ``imgcopy.comp`` leaves at (x, y): texel (7 - x, y) of the first, reversed."""
    r, g, b, a = img_texel(IMG - 1 - x, y)
    return (a, b, g, r)


def _show(c: Client, tex: Any, sampler: Any) -> Image:
    from .render import tquad, tsetup

    tsetup(c, tquad(-1, -1, 1, 1, 0, (0, 0), (1, 1)), "tex")
    c.bind_texture(0, tex)
    c.bind_sampler(0, sampler)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    return capture(c, SIZE, SIZE)


def image_load_store(c: Client, n: int) -> list[Image]:
    """imageStore of a pattern into image A (unit 4, write-only), imageLoad of A into image
    B (unit 5) mirrored in x with its channels reversed; both shown through a nearest
    sampler (one 8 x 8 texel block per image texel): image 0 is A, image 1 is B."""
    from .render import nearest

    bind = need(c, "bind_image_texture")
    a = c.create_texture_2d(IMG, IMG)
    b = c.create_texture_2d(IMG, IMG)
    _program(c, "imgfill")
    bind(4, a, 0, False, 0, GL_WRITE_ONLY, GL_RGBA8)
    need(c, "dispatch_compute")(IMG // 4, IMG // 4, 1)
    need(c, "memory_barrier")("shader_image_access")
    _program(c, "imgcopy")
    bind(4, a, 0, False, 0, GL_READ_ONLY, GL_RGBA8)
    bind(5, b, 0, False, 0, GL_WRITE_ONLY, GL_RGBA8)
    need(c, "dispatch_compute")(IMG // 4, IMG // 4, 1)
    need(c, "memory_barrier")(("texture_fetch", "shader_image_access"))
    bind(4, None)
    bind(5, None)
    smp = nearest(c)
    return _finish(c, [_show(c, a, smp), _show(c, b, smp)])


def probes_image_load_store(n: int) -> list[Probe]:
    cell = SIZE // IMG
    out = []
    for img, fn, what in ((0, img_texel, "imageStore"), (1, img_copied, "imageLoad -> store")):
        for y in range(IMG):
            for x in range(IMG):
                out.append(Probe(img, x * cell + cell // 2, y * cell + cell // 2, fn(x, y), 0,
                                 f"{what} texel ({x},{y})"))  # fmt: skip
    return out


# -- atomic counters ----------------------------------------------------------------------------
#: the quad's pixel rectangle [x0, x1) x [y0, y1): edges on pixel boundaries, so exactly
#: (x1 - x0) * (y1 - y0) pixel centres lie inside
COUNT_RECT = (8, 16, 40, 32)
COUNT_INITIAL = (1000, 7, 9)  # the counter is word 0; words 1 and 2 are its neighbours
COUNT_COLOR = (0.0, 1.0, 0.0, 1.0)


def _ndc(p: int) -> float:
    return p / (SIZE / 2) - 1.0


def atomic_counter(c: Client, n: int) -> list[Image]:
    """A quad over pixels [8, 40) x [16, 32) with one atomicCounterIncrement per fragment:
    the counter (word 0 of a buffer holding 1000, 7, 9) ends at 1000 + 512; its neighbours
    are untouched. Image 0: the quad; image 1: the counter buffer's words."""
    x0, y0, x1, y1 = COUNT_RECT
    counters = c.create_buffer(struct.pack("<3I", *COUNT_INITIAL))
    from .kit import setup

    setup(c, quad(_ndc(x0), _ndc(y0), _ndc(x1), _ndc(y1), 0.0, COUNT_COLOR), "count")
    c.bind_buffer_base("atomic_counter", 3, counters)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()
    c.draw_arrays(GL.TRIANGLES, 0, 6)
    img = capture(c, SIZE, SIZE)
    c.bind_buffer_base("atomic_counter", 3, None)
    need(c, "memory_barrier")(("atomic_counter", "shader_storage"))
    return _finish(c, [img, dump(c, counters), readback(c, counters, len(COUNT_INITIAL))])


def probes_atomic_counter(n: int) -> list[Probe]:
    x0, y0, x1, y1 = COUNT_RECT
    fragments = (x1 - x0) * (y1 - y0)
    words = [COUNT_INITIAL[0] + fragments, COUNT_INITIAL[1], COUNT_INITIAL[2]]
    return [Probe(0, x0, y0, px(COUNT_COLOR), 0, "the quad's first pixel"),
            Probe(0, x1 - 1, y1 - 1, px(COUNT_COLOR), 0, "the quad's last pixel"),
            Probe(0, x1, y1 - 1, (0, 0, 0, 255), 0, "right of the quad"),
            Probe(0, x0, y0 - 1, (0, 0, 0, 255), 0, "below the quad")] + \
        word_probes(1, words, f"counter ({fragments} fragments)") + \
        word_probes(2, words, f"counter readback ({fragments} fragments)")  # fmt: skip


# -- transform feedback ----------------------------------------------------------------------------
XFB_TRIS = [  # (x, y, colour) per vertex: two captured triangles and one drawn while paused
    [(-1.0, -1.0, (1.0, 0.0, 0.0, 1.0)), (0.0, -1.0, (0.0, 1.0, 0.0, 1.0)), (-1.0, 0.0, (0.0, 0.0, 1.0, 1.0))],
    [(0.0, 0.0, (1.0, 1.0, 0.0, 1.0)), (1.0, 0.0, (0.0, 1.0, 1.0, 1.0)), (0.0, 1.0, (1.0, 0.0, 1.0, 1.0))],
    [(0.5, -1.0, (0.5, 0.5, 0.5, 1.0)), (1.0, -1.0, (0.5, 0.5, 0.5, 1.0)), (1.0, -0.5, (0.5, 0.5, 0.5, 1.0))],
]  # fmt: skip


def _xfb_vertices() -> list[float]:
    return [v for tri in XFB_TRIS for x, y, col in tri for v in (x, y, 0.0, *col)]


def _f(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def xfb_record(x: float, y: float, col: tuple[float, ...]) -> list[int]:
    """The 8 words ``xfb.vert`` captures for a vertex: its colour, then (2x, 2y, 0, 1)."""
    return [_f(v) for v in (*col, 2 * x, 2 * y, 0.0, 1.0)]


XFB_CAPTURED = (0, 1)  # the triangles captured (triangle 2 is drawn while paused)
XFB_WORDS = 64  # the capture buffer (48 words captured, then 16 of sentinel)


def xfb_capture(c: Client, n: int) -> list[Image]:
    """Transform feedback of (colour, 2 * position) per vertex: triangle 0 captured, the
    capture paused for triangle 2, resumed for triangle 1 (appended after triangle 0); the
    span reports 6 vertices, 2 primitives. Image 0: the three triangles drawn; image 1: the
    capture buffer (48 words, then the 0xDEADBEEF it held)."""
    from .kit import setup

    setup(c, _xfb_vertices(), "xfb")
    buf = _sentinel_buffer(c, XFB_WORDS)
    xfb = need(c, "create_transform_feedback")()
    need(c, "bind_transform_feedback")(xfb)
    c.bind_buffer_base("transform_feedback", 0, buf)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()
    need(c, "begin_transform_feedback")(GL_TRIANGLES)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    need(c, "pause_transform_feedback")()
    c.draw_arrays(GL_TRIANGLES, 6, 3)
    need(c, "resume_transform_feedback")()
    c.draw_arrays(GL_TRIANGLES, 3, 3)
    vertices, prims = need(c, "end_transform_feedback")()
    if (vertices, prims) != (6, 2):
        raise AssertionError(f"xfb-capture: the span counted {vertices} vertices, {prims} "
                             "primitives; 6 and 2 were drawn captured")  # fmt: skip
    img = capture(c, SIZE, SIZE)
    need(c, "bind_transform_feedback")(None)
    need(c, "delete_transform_feedback")(xfb)
    need(c, "memory_barrier")(("transform_feedback", "shader_storage"))
    return _finish(c, [img, dump(c, buf), readback(c, buf, XFB_WORDS)])


def probes_xfb_capture(n: int) -> list[Probe]:
    words = [w for t in XFB_CAPTURED for x, y, col in XFB_TRIS[t] for w in xfb_record(x, y, col)]
    words += [SENTINEL] * (XFB_WORDS - len(words))
    # triangle 0 spans window (0, 0), (32, 0), (0, 32): at pixel (8, 8)'s centre the
    # weights of its red, green and blue corners are 1 - 2 * 8.5 / 32, 8.5 / 32, 8.5 / 32
    w = 8.5 / 32
    return [Probe(0, 8, 8, px((1 - 2 * w, w, w, 1.0)), 1, "triangle 0 drawn (interpolated)"),
            Probe(0, 62, 1, px((0.5, 0.5, 0.5, 1.0)), 0, "triangle 2 drawn while paused")] + \
        word_probes(1, words, "captured") + word_probes(2, words, "captured readback")  # fmt: skip


XFBSKIP_WORDS = 40  # 3 vertices of 12 words, then 4 of sentinel


def xfb_skip(c: Client, n: int) -> list[Image]:
    """Transform feedback with a 16-byte hole per vertex (stride 48: colour at 0, 2 *
    position at 32): triangle 0's three vertices; words 4..7 of every vertex keep
    0xDEADBEEF, as GL's gl_SkipComponents4 leaves them."""
    from .kit import setup

    setup(c, _xfb_vertices(), "xfbskip")
    buf = _sentinel_buffer(c, XFBSKIP_WORDS)
    xfb = need(c, "create_transform_feedback")()
    need(c, "bind_transform_feedback")(xfb)
    c.bind_buffer_base("transform_feedback", 0, buf)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear()
    need(c, "begin_transform_feedback")(GL_TRIANGLES)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    need(c, "end_transform_feedback")()
    need(c, "bind_transform_feedback")(None)
    need(c, "memory_barrier")(("transform_feedback", "shader_storage"))
    return _finish(c, [dump(c, buf)])


def probes_xfb_skip(n: int) -> list[Probe]:
    words: list[int] = []
    for x, y, col in XFB_TRIS[0]:
        rec = xfb_record(x, y, col)
        words += rec[:4] + [SENTINEL] * 4 + rec[4:]
    words += [SENTINEL] * (XFBSKIP_WORDS - len(words))
    return word_probes(0, words, "captured with a hole")


XFBSEP_WORDS = 16  # 3 vertices of 4 words in each buffer, then 4 of sentinel


def xfb_separate(c: Client, n: int) -> list[Image]:
    """Transform feedback into two buffers, one varying each: buffer 0 takes triangle 0's
    colours, buffer 1 its (2x, 2y, 0, 1). Image 0: buffer 0's words; image 1: buffer 1's."""
    from .kit import setup

    setup(c, _xfb_vertices(), "xfbsep")
    bufs = [_sentinel_buffer(c, XFBSEP_WORDS), _sentinel_buffer(c, XFBSEP_WORDS)]
    xfb = need(c, "create_transform_feedback")()
    need(c, "bind_transform_feedback")(xfb)
    for i, b in enumerate(bufs):
        c.bind_buffer_base("transform_feedback", i, b)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear()
    need(c, "begin_transform_feedback")(GL_TRIANGLES)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    need(c, "end_transform_feedback")()
    need(c, "bind_transform_feedback")(None)
    need(c, "memory_barrier")(("transform_feedback", "shader_storage"))
    return _finish(c, [dump(c, b) for b in bufs])


def probes_xfb_separate(n: int) -> list[Probe]:
    out = []
    for buf, part in ((0, slice(0, 4)), (1, slice(4, 8))):
        words = [w for x, y, col in XFB_TRIS[0] for w in xfb_record(x, y, col)[part]]
        words += [SENTINEL] * (XFBSEP_WORDS - len(words))
        out += word_probes(buf, words, f"separate buffer {buf}")
    return out


# -- a tessellated patch -------------------------------------------------------------------------
PATCH_RECT = (16, 16, 48, 48)  # pixels [x0, x1) x [y0, y1)


def tess_patch(c: Client, n: int) -> list[Image]:
    """One 4-point quad patch over pixels [16, 48)^2, tessellated 4 x 4; the evaluation
    stage places each vertex bilinearly and colours it (u, v, 0, 1): a pixel shows its
    domain coordinate, the patch covers exactly its rectangle."""
    x0, y0, x1, y1 = PATCH_RECT
    _program(c, "tess")
    _positions(c, [(_ndc(x0), _ndc(y0)), (_ndc(x1), _ndc(y0)), (_ndc(x1), _ndc(y1)),
                   (_ndc(x0), _ndc(y1))])  # fmt: skip
    need(c, "patch_parameter")(GL_PATCH_VERTICES, 4)
    c.viewport(0, 0, SIZE, SIZE)
    c.clear_color(0.0, 0.0, 0.0, 1.0)
    c.clear()
    c.draw_arrays(GL_PATCHES, 0, 4)
    return _finish(c, [capture(c, SIZE, SIZE)])


def probes_tess_patch(n: int) -> list[Probe]:
    """Every pixel of the surface: the (x1 - x0) * (y1 - y0) inside the rectangle show their
    domain coordinate ((px + 0.5 - x0) / w, (py + 0.5 - y0) / h), every other one the clear
    colour -- the patch's coverage, pixel for pixel."""
    x0, y0, x1, y1 = PATCH_RECT
    w, h = x1 - x0, y1 - y0
    out = []
    for py_ in range(SIZE):
        for px_ in range(SIZE):
            if x0 <= px_ < x1 and y0 <= py_ < y1:
                u, v = (px_ + 0.5 - x0) / w, (py_ + 0.5 - y0) / h
                out.append(Probe(0, px_, py_, px((u, v, 0.0, 1.0)), 2,
                                 f"domain ({u:.3f}, {v:.3f})"))  # fmt: skip
            else:
                out.append(Probe(0, px_, py_, (0, 0, 0, 255), 0, "outside the patch"))
    return out


SCENE_FNS: dict[str, tuple[Any, Any]] = {
    "compute-fill": (compute_fill, probes_compute_fill),
    "compute-indirect": (compute_indirect, probes_compute_indirect),
    "compute-indices": (compute_indices, probes_compute_indices),
    "compute-client-indices": (compute_client_indices, probes_compute_client_indices),
    "compute-restart-indices": (compute_restart_indices, probes_compute_indices),
    "image-load-store": (image_load_store, probes_image_load_store),
    "atomic-counter": (atomic_counter, probes_atomic_counter),
    "xfb-capture": (xfb_capture, probes_xfb_capture),
    "xfb-skip": (xfb_skip, probes_xfb_skip),
    "xfb-separate": (xfb_separate, probes_xfb_separate),
    "tess-patch": (tess_patch, probes_tess_patch),
}
