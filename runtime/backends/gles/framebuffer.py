"""Framebuffer state: the backend's own default framebuffer and one GL FBO per handle.

The default framebuffer (``IsDefault``) is an FBO the backend owns: an RGBA8 colour
renderbuffer and a DEPTH24_STENCIL8 renderbuffer of the payload's ``Width`` x ``Height``
(re-made when the size changes). A named framebuffer's attachments are re-attached only
when the GL names they resolve to change; ``glCheckFramebufferStatus`` is asked then, and
an incomplete framebuffer is ``Fatal{DriverRefused, "SetFramebufferState.Complete"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...schema import tables as _t
from .errors import DriverRefused
from .gl import GL, CountedGL, _lookup, has_entry
from .resources import GlRenderbuffer, GlTexture

__all__ = ["GlFramebuffer", "Framebuffers"]



def _kind_none() -> int:
    """``MGPSurface.Kind`` of an empty attachment point: ``kMGPipeSurfaceKindNone``, which
    MobileGL's header defines as ``MGPipeKind::None`` (read by name from the tables)."""
    return int(_t.enum("MGPipeKind")["None"])


@dataclass
class GlFramebuffer:
    name: int
    width: int = 0
    height: int = 0
    attached: tuple = ()
    draw_buffers: tuple[int, ...] = ()
    read_buffer: int = -1
    owned: list[int] = field(default_factory=list)  # renderbuffers of the default framebuffer


#: What the default framebuffer holds before anything is drawn (GL's initial clear
#: values): ``glRenderbufferStorage`` leaves its contents undefined, a driver may hand
#: back memory that held an earlier image.
INITIAL_COLOR = (0.0, 0.0, 0.0, 0.0)
INITIAL_DEPTH_STENCIL = (1.0, 0)


def _initialise(fb: GlFramebuffer) -> None:
    """Clear the bound, freshly made default framebuffer to :data:`INITIAL_COLOR` /
    :data:`INITIAL_DEPTH_STENCIL`. PyOpenGL is called directly (these calls are the
    surface's making, not the scene's: they are not in ``gl_calls``), and every piece of
    state a clear obeys -- scissor test, rasterizer discard, colour / depth / stencil
    write masks -- is read first and put back, so the sync's view of GL stays true."""
    scissor = bool(GL.glIsEnabled(GL.GL_SCISSOR_TEST))
    discard = bool(GL.glIsEnabled(GL.GL_RASTERIZER_DISCARD))
    colour = [bool(c) for c in np.asarray(GL.glGetBooleanv(GL.GL_COLOR_WRITEMASK)).reshape(-1)[:4]]
    depth = bool(np.asarray(GL.glGetBooleanv(GL.GL_DEPTH_WRITEMASK)).reshape(-1)[0])
    front = int(np.asarray(GL.glGetIntegerv(GL.GL_STENCIL_WRITEMASK)).reshape(-1)[0])
    back = int(np.asarray(GL.glGetIntegerv(GL.GL_STENCIL_BACK_WRITEMASK)).reshape(-1)[0])
    indexed = _lookup("glColorMaski") if has_entry("glColorMaski") else None
    for cap, on in ((GL.GL_SCISSOR_TEST, scissor), (GL.GL_RASTERIZER_DISCARD, discard)):
        if on:
            GL.glDisable(cap)
    _colour_mask(indexed, (True, True, True, True))
    GL.glDepthMask(True)
    GL.glStencilMask(0xFFFFFFFF)
    GL.glClearBufferfv(GL.GL_COLOR, 0, np.array(INITIAL_COLOR, np.float32))
    d, st = INITIAL_DEPTH_STENCIL
    GL.glClearBufferfi(GL.GL_DEPTH_STENCIL, 0, d, st)
    GL.glStencilMaskSeparate(GL.GL_FRONT, front & 0xFFFFFFFF)
    GL.glStencilMaskSeparate(GL.GL_BACK, back & 0xFFFFFFFF)
    GL.glDepthMask(depth)
    _colour_mask(indexed, tuple(colour))
    for cap, on in ((GL.GL_SCISSOR_TEST, scissor), (GL.GL_RASTERIZER_DISCARD, discard)):
        if on:
            GL.glEnable(cap)


def _colour_mask(indexed: object, rgba: tuple) -> None:
    """Draw buffer 0's colour mask only (where masks are per draw buffer, the others keep
    theirs; where they are not, there is one mask)."""
    if indexed is not None:
        indexed(0, *(int(c) for c in rgba))  # type: ignore[operator]
    else:
        GL.glColorMask(*rgba)


class Framebuffers:
    def __init__(self, gl: CountedGL, max_draw_buffers: int) -> None:
        self.gl = gl
        self.max_draw_buffers = max_draw_buffers
        self.default: GlFramebuffer | None = None
        self.bound = -1

    def bind(self, fb: GlFramebuffer) -> None:
        if fb.name != self.bound:
            self.gl.glBindFramebuffer(GL.GL_FRAMEBUFFER, fb.name)
            self.bound = fb.name

    # -- the default framebuffer ---------------------------------------------------------
    def default_framebuffer(self, width: int, height: int, what: str) -> GlFramebuffer:
        gl = self.gl
        fb = self.default
        if fb is not None and (fb.width, fb.height) == (width, height):
            return fb
        if width < 1 or height < 1:
            raise DriverRefused(f"{what}.Width", f"default framebuffer {width}x{height}")
        if fb is None:
            fb = self.default = GlFramebuffer(int(gl.glGenFramebuffers(1)))
        if fb.owned:
            gl.glDeleteRenderbuffers(len(fb.owned), fb.owned)
        self.bind(fb)
        fb.owned = []
        for fmt, point in ((GL.GL_RGBA8, GL.GL_COLOR_ATTACHMENT0),
                           (GL.GL_DEPTH24_STENCIL8, GL.GL_DEPTH_STENCIL_ATTACHMENT)):  # fmt: skip
            rb = int(gl.glGenRenderbuffers(1))
            gl.glBindRenderbuffer(GL.GL_RENDERBUFFER, rb)
            gl.glRenderbufferStorage(GL.GL_RENDERBUFFER, fmt, width, height)
            gl.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, point, GL.GL_RENDERBUFFER, rb)
            fb.owned.append(rb)
        fb.width, fb.height = width, height
        fb.draw_buffers, fb.read_buffer = (int(GL.GL_COLOR_ATTACHMENT0),), int(
            GL.GL_COLOR_ATTACHMENT0
        )
        self._complete(what)
        _initialise(fb)
        return fb

    # -- named framebuffers --------------------------------------------------------------
    def create(self) -> GlFramebuffer:
        return GlFramebuffer(int(self.gl.glGenFramebuffers(1)))

    def destroy(self, fb: GlFramebuffer) -> None:
        if self.bound == fb.name:
            self.gl.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
            self.bound = 0
        self.gl.glDeleteFramebuffers(1, [fb.name])

    def update(self, fb: GlFramebuffer, p: np.void, resolve: dict, what: str) -> None:
        """Attach what ``p`` names (``resolve``: field path -> the resource's GL object)."""
        gl = self.gl
        color = []
        for i in range(len(p.Color)):
            s = p.Color[i]
            color.append(self._gl_object(s, resolve.get(f"Color[{i}].Res"), f"{what}.Color[{i}]"))
        depth = self._gl_object(p.Depth, resolve.get("Depth.Res"), f"{what}.Depth")
        stencil = self._gl_object(p.Stencil, resolve.get("Stencil.Res"), f"{what}.Stencil")
        attached = (tuple(color), depth, stencil)
        self.bind(fb)
        if attached != fb.attached:
            for i, obj in enumerate(color):
                self._attach(GL.GL_COLOR_ATTACHMENT0 + i, obj, obj[4] if obj and obj[0] == "tex" else 0)
            if depth is not None and depth == stencil:
                self._attach(GL.GL_DEPTH_STENCIL_ATTACHMENT, depth, depth[4] if depth[0] == "tex" else 0)
            else:
                for point, o in ((GL.GL_DEPTH_ATTACHMENT, depth), (GL.GL_STENCIL_ATTACHMENT, stencil)):
                    self._attach(point, o, o[4] if o and o[0] == "tex" else 0)
            fb.attached = attached
        draw = tuple(int(GL.GL_COLOR_ATTACHMENT0) + int(b) if int(b) >= 0 else int(GL.GL_NONE)
                     for b in p.DrawBuffers[: self.max_draw_buffers])  # fmt: skip
        while len(draw) > 1 and draw[-1] == GL.GL_NONE:
            draw = draw[:-1]
        if draw != fb.draw_buffers:
            gl.glDrawBuffers(len(draw), np.array(draw, np.uint32))
            fb.draw_buffers = draw
        read = int(GL.GL_NONE)
        rs = p.ReadSurface
        if int(rs.Kind) != _kind_none():
            for i, s in enumerate(p.Color):
                if s == rs:  # records compare by value
                    read = int(GL.GL_COLOR_ATTACHMENT0) + i
                    break
        if read != fb.read_buffer:
            gl.glReadBuffer(read)
            fb.read_buffer = read
        fb.width, fb.height = int(p.Width), int(p.Height)
        if attached != ():
            self._complete(what)

    def _gl_object(self, s: np.void, obj: object, what: str) -> tuple | None:
        if int(s.Kind) == _kind_none():
            return None
        res = getattr(obj, "backend", None)
        if isinstance(res, GlTexture):
            if int(s.Layered):
                raise DriverRefused(f"{what}.Layered", "a layered attachment (the gles backend "
                                    "attaches one layer / face)")  # fmt: skip
            layer = int(s.Layer)
            if layer and layer >= res.depth:
                raise DriverRefused(f"{what}.Layer", f"layer {layer} of {res.depth}")
            return ("tex", res.name, res.target, layer, int(s.Level))
        if isinstance(res, GlRenderbuffer):
            return ("rb", res.name)
        raise DriverRefused(f"{what}.Res", "not a texture or renderbuffer")

    def _attach(self, point: int, obj: tuple | None, level: int) -> None:
        gl = self.gl
        if obj is not None and obj[0] == "rb":
            gl.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, point, GL.GL_RENDERBUFFER, obj[1])
        elif obj is not None and obj[2] in (GL.GL_TEXTURE_3D, GL.GL_TEXTURE_2D_ARRAY):
            gl.glFramebufferTextureLayer(GL.GL_FRAMEBUFFER, point, obj[1], level, obj[3])
        elif obj is not None and obj[2] == GL.GL_TEXTURE_CUBE_MAP:
            gl.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, point,
                                      GL.GL_TEXTURE_CUBE_MAP_POSITIVE_X + obj[3], obj[1], level)  # fmt: skip
        else:
            gl.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, point, GL.GL_TEXTURE_2D,
                                      obj[1] if obj else 0, level if obj else 0)  # fmt: skip

    def _complete(self, what: str) -> None:
        status = int(self.gl.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER))
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise DriverRefused(f"{what}.Complete", f"glCheckFramebufferStatus 0x{status:04x}")
