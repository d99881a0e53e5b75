"""``glReadPixels`` of a rectangle clipped to the bound framebuffer.

GL leaves the pixels of a readback rectangle outside the framebuffer undefined; a driver
handed a rectangle whose far edge passes its integer range crashes (Mesa: SIGSEGV in
``glReadPixels`` for ``y = 2^31 - 1``). :func:`read_rect` reads only the part inside the
framebuffer (no framebuffer is larger than the driver's largest texture or renderbuffer)
into its place in the destination; the rest of the destination is left as it was.
"""

from __future__ import annotations

import ctypes

from ..limits import clip_box

__all__ = ["read_rect"]


def read_rect(gl: object, dst: memoryview, x: int, y: int, w: int, h: int, fmt: int, typ: int,
              bpp: int, align: int, extent: tuple[int, int]) -> None:  # fmt: skip
    """Rows of ``(x, y, w, h)`` (padded to the pack alignment ``align``, which GL is set
    to) into ``dst``, clipped to ``extent``."""
    box = clip_box(x, y, w, h, *extent)
    if box is None:
        return  # wholly outside: every pixel undefined, nothing to read
    if box == (x, y, w, h):  # the common case: straight into the stage
        out = (ctypes.c_ubyte * len(dst)).from_buffer(dst)
        gl.glReadPixels(x, y, w, h, fmt, typ, out)  # type: ignore[attr-defined]
        return
    cx, cy, cw, ch = box
    stride = -(-w * bpp // align) * align
    row = cw * bpp
    tmp_stride = -(-row // align) * align
    tmp = (ctypes.c_ubyte * (tmp_stride * (ch - 1) + row))()
    gl.glReadPixels(cx, cy, cw, ch, fmt, typ, tmp)  # type: ignore[attr-defined]
    raw = bytes(tmp)
    for r in range(ch):
        o = (cy - y + r) * stride + (cx - x) * bpp
        dst[o : o + row] = raw[r * tmp_stride : r * tmp_stride + row]
