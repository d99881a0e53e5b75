"""GL objects behind resource handles: buffers, 2D textures and renderbuffers.

Each resource's backend object (``ServerObject.backend``) is a :class:`GlBuffer`,
:class:`GlTexture` or :class:`GlRenderbuffer`. A buffer keeps a host mirror of its bytes
(the index-range and vertex-range checks a draw runs before reaching the driver read it).
Sizes the driver would reject are refused first, with the limit in the log:
``Fatal{DriverRefused, "ResourceRespecify.Width"}: 20000x4 > GL_MAX_TEXTURE_SIZE 16384``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...schema import tables as _t
from .errors import DriverRefused
from .gl import GL, CountedGL

__all__ = ["GlBuffer", "GlTexture", "GlRenderbuffer", "Limits", "Resources", "PIXEL_FORMATS"]

#: sized internal format -> (format, type, bytes per pixel) for uploads and readback.
PIXEL_FORMATS: dict[int, tuple[int, int, int]] = {
    int(GL.GL_RGBA8): (int(GL.GL_RGBA), int(GL.GL_UNSIGNED_BYTE), 4),
}
#: renderable-only formats a renderbuffer may take beside the colour ones.
DEPTH_STENCIL_FORMATS = {int(GL.GL_DEPTH24_STENCIL8), int(GL.GL_DEPTH_COMPONENT16),
                         int(GL.GL_DEPTH_COMPONENT24), int(GL.GL_STENCIL_INDEX8)}  # fmt: skip


@dataclass
class GlBuffer:
    name: int
    size: int = 0
    mirror: bytearray = field(default_factory=bytearray)
    serial: int = 0  # moves on every write (index-range memo key)


@dataclass
class GlTexture:
    name: int
    internal_format: int = 0
    width: int = 0
    height: int = 0
    levels: int = 0


@dataclass
class GlRenderbuffer:
    name: int
    internal_format: int = 0
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class Limits:
    max_texture_size: int
    max_renderbuffer_size: int
    max_draw_buffers: int
    max_vertex_attribs: int


class Resources:
    """The resource entries' GL work (the backend calls these with the resolved object)."""

    def __init__(self, gl: CountedGL, limits: Limits) -> None:
        self.gl = gl
        self.limits = limits
        self.epoch = 0
        t = _t.enum("MGPipeResourceTarget")
        self.buffer_target, self.tex2d_target = int(t["Buffer"]), int(t["Tex2D"])
        self.renderbuffer_target = int(t["Renderbuffer"])

    # -- create / destroy -----------------------------------------------------------
    def create(self, kind: str, target: int, what: str) -> object:
        gl = self.gl
        if target == self.buffer_target:
            return GlBuffer(int(gl.glGenBuffers(1)))
        if target == self.tex2d_target:
            return GlTexture(int(gl.glGenTextures(1)))
        if target == self.renderbuffer_target:
            return GlRenderbuffer(int(gl.glGenRenderbuffers(1)))
        raise DriverRefused(f"{what}.Target", f"{kind} target {target} is not supported by gles")

    def destroy(self, res: object) -> None:
        gl = self.gl
        if isinstance(res, GlBuffer):
            gl.glDeleteBuffers(1, [res.name])
        elif isinstance(res, GlTexture):
            gl.glDeleteTextures(1, [res.name])
        elif isinstance(res, GlRenderbuffer):
            gl.glDeleteRenderbuffers(1, [res.name])

    # -- respecify ------------------------------------------------------------------
    def respecify(self, res: object, p: object, what: str) -> None:
        gl = self.gl
        if isinstance(res, GlBuffer):
            size = int(p.Width)  # type: ignore[index]
            gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, res.name)
            gl.glBufferData(GL.GL_COPY_WRITE_BUFFER, size, None, GL.GL_STATIC_DRAW)
            self._check(what)
            res.size, res.mirror, res.serial = size, bytearray(size), res.serial + 1
            self.epoch += 1  # a buffer size moved: proven vertex ranges no longer hold
            return
        fmt = int(p.InternalFormat)  # type: ignore[index]
        w, h = int(p.Width), int(p.Height)  # type: ignore[index]
        if (w == 0 or h == 0) and isinstance(res, (GlTexture, GlRenderbuffer)):
            return  # no extent (MobileGL's constructor respecify): no storage defined yet
        if isinstance(res, GlTexture):
            levels = max(int(p.Levels), 1)  # type: ignore[index]
            self._limit(w, h, self.limits.max_texture_size, "GL_MAX_TEXTURE_SIZE", what)
            if fmt not in PIXEL_FORMATS:
                raise DriverRefused(
                    f"{what}.InternalFormat", f"0x{fmt:04x} is not supported by gles"
                )
            if (res.internal_format, res.width, res.height, res.levels) == (fmt, w, h, levels):
                return  # the storage it has (MobileGL re-describes it per level): kept
            if res.levels:  # immutable storage: a respecify is a new texture name
                gl.glDeleteTextures(1, [res.name])
                res.name = int(gl.glGenTextures(1))
            gl.glBindTexture(GL.GL_TEXTURE_2D, res.name)
            gl.glTexStorage2D(GL.GL_TEXTURE_2D, levels, fmt, w, h)
            gl.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST)
            gl.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST)
            self._check(what)
            res.internal_format, res.width, res.height, res.levels = fmt, w, h, levels
            return
        if isinstance(res, GlRenderbuffer):
            self._limit(w, h, self.limits.max_renderbuffer_size, "GL_MAX_RENDERBUFFER_SIZE", what)
            if fmt not in PIXEL_FORMATS and fmt not in DEPTH_STENCIL_FORMATS:
                raise DriverRefused(f"{what}.InternalFormat", f"0x{fmt:04x} is not renderable")
            gl.glBindRenderbuffer(GL.GL_RENDERBUFFER, res.name)
            gl.glRenderbufferStorage(GL.GL_RENDERBUFFER, fmt, w, h)
            self._check(what)
            res.internal_format, res.width, res.height = fmt, w, h

    @staticmethod
    def _limit(w: int, h: int, limit: int, name: str, what: str) -> None:
        if w < 1 or h < 1:
            raise DriverRefused(f"{what}.Width", f"{w}x{h}: an empty image")
        if w > limit or h > limit:
            raise DriverRefused(f"{what}.Width", f"{w}x{h} > {name} {limit}")

    def _check(self, what: str) -> None:
        err = int(self.gl.glGetError())
        if err:
            raise DriverRefused(what, f"GL error 0x{err:04x}")

    # -- sub data -----------------------------------------------------------------------
    def sub_data(
        self, res: object, p: object, regions: object, blob: memoryview, what: str
    ) -> None:
        gl = self.gl
        if isinstance(res, GlBuffer):
            box = p.UnionBox  # type: ignore[index]
            off, n = int(box.X), int(box.W)
            if off < 0 or off + n > res.size or n > len(blob):
                raise DriverRefused(f"{what}.UnionBox", f"[{off}, {off + n}) outside a buffer "
                                    f"of {res.size} bytes")  # fmt: skip
            data = bytes(blob[:n])
            gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, res.name)
            gl.glBufferSubData(GL.GL_COPY_WRITE_BUFFER, off, n, data)
            res.mirror[off : off + n] = data
            res.serial += 1
            return
        if not isinstance(res, GlTexture):
            raise DriverRefused(f"{what}.Target", "sub data into a renderbuffer")
        fmt, typ, bpp = PIXEL_FORMATS[res.internal_format]
        level = int(p.Level)  # type: ignore[index]
        lw, lh = max(res.width >> level, 1), max(res.height >> level, 1)
        if level >= res.levels:
            raise DriverRefused(f"{what}.Level", f"level {level} of {res.levels}")
        gl.glBindTexture(GL.GL_TEXTURE_2D, res.name)
        gl.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        for r in regions:  # type: ignore[attr-defined]
            x, y, w, h = int(r.X), int(r.Y), int(r.W), int(r.H)
            src, stride = int(r.SrcOffset), int(r.SrcRowStride)
            if x < 0 or y < 0 or x + w > lw or y + h > lh:
                raise DriverRefused(f"{what}.Region", f"{w}x{h}+{x}+{y} outside level {level} "
                                    f"({lw}x{lh})")  # fmt: skip
            if stride != w * bpp or src + stride * h > len(blob):
                raise DriverRefused(f"{what}.SrcRowStride", f"row stride {stride} for {w} "
                                    f"pixels of {bpp} bytes")  # fmt: skip
            gl.glTexSubImage2D(GL.GL_TEXTURE_2D, level, x, y, w, h, fmt, typ,
                               bytes(blob[src : src + stride * h]))  # fmt: skip
        self._check(what)
