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
from ..limits import mip_levels
from .errors import DriverRefused
from .gl import GL, CountedGL

__all__ = [
    "GlBuffer",
    "GlTexture",
    "GlRenderbuffer",
    "Limits",
    "Resources",
    "PIXEL_FORMATS",
    "READ_FORMATS",
]


def _fmt(internal: str, fmt: str, typ: str, bpp: int) -> tuple[int, tuple[int, int, int]]:
    return int(getattr(GL, internal)), (int(getattr(GL, fmt)), int(getattr(GL, typ)), bpp)


#: sized internal format -> (format, type, bytes per pixel) for uploads and readback: each
#: format's natural packed client layout (GLES 3.0 table 3.2's first row for it).
PIXEL_FORMATS: dict[int, tuple[int, int, int]] = dict(
    [
        _fmt("GL_RGBA8", "GL_RGBA", "GL_UNSIGNED_BYTE", 4),
        _fmt("GL_R8", "GL_RED", "GL_UNSIGNED_BYTE", 1),
        _fmt("GL_RG8", "GL_RG", "GL_UNSIGNED_BYTE", 2),
        _fmt("GL_SRGB8_ALPHA8", "GL_RGBA", "GL_UNSIGNED_BYTE", 4),
        _fmt("GL_RGB10_A2", "GL_RGBA", "GL_UNSIGNED_INT_2_10_10_10_REV", 4),
        _fmt("GL_R11F_G11F_B10F", "GL_RGB", "GL_UNSIGNED_INT_10F_11F_11F_REV", 4),
        _fmt("GL_RGBA16F", "GL_RGBA", "GL_HALF_FLOAT", 8),
        _fmt("GL_RGBA32F", "GL_RGBA", "GL_FLOAT", 16),
        _fmt("GL_R32UI", "GL_RED_INTEGER", "GL_UNSIGNED_INT", 4),
        _fmt("GL_RGBA8UI", "GL_RGBA_INTEGER", "GL_UNSIGNED_BYTE", 4),
        _fmt("GL_DEPTH_COMPONENT16", "GL_DEPTH_COMPONENT", "GL_UNSIGNED_SHORT", 2),
        _fmt("GL_DEPTH_COMPONENT24", "GL_DEPTH_COMPONENT", "GL_UNSIGNED_INT", 4),
        _fmt("GL_DEPTH_COMPONENT32F", "GL_DEPTH_COMPONENT", "GL_FLOAT", 4),
        _fmt("GL_DEPTH24_STENCIL8", "GL_DEPTH_STENCIL", "GL_UNSIGNED_INT_24_8", 4),
    ]
)
#: readback pairs beyond the upload ones (GLES's always-supported colour readbacks)
READ_FORMATS = {(int(GL.GL_RGBA), int(GL.GL_UNSIGNED_BYTE)): 4, (int(GL.GL_RGBA), int(GL.GL_FLOAT)): 16,
                (int(GL.GL_RGBA_INTEGER), int(GL.GL_UNSIGNED_INT)): 16,
                (int(GL.GL_RGBA_INTEGER), int(GL.GL_INT)): 16}  # fmt: skip
#: renderable-only formats a renderbuffer may take beside the colour ones.
DEPTH_STENCIL_FORMATS = {int(GL.GL_DEPTH24_STENCIL8), int(GL.GL_DEPTH_COMPONENT16),
                         int(GL.GL_DEPTH_COMPONENT24), int(GL.GL_STENCIL_INDEX8)}  # fmt: skip


@dataclass
class GlBuffer:
    name: int
    size: int = 0
    mirror: bytearray = field(default_factory=bytearray)
    serial: int = 0  # moves on every write (index-range memo key)
    #: a draw / dispatch / capture may have written it since ``mirror`` was last true
    #: (the server's GPU-written set): the mirror is re-read before it is trusted
    gpu_dirty: bool = False


@dataclass
class GlTexture:
    name: int
    target: int = int(GL.GL_TEXTURE_2D)  # the GL target it is bound to
    internal_format: int = 0
    width: int = 0
    height: int = 0
    levels: int = 0
    depth: int = 1  # 3D depth / array layers / 6 for a cube
    params: object = None  # the last SetTextureParams (its BuiltinSampler)


@dataclass
class GlRenderbuffer:
    name: int
    internal_format: int = 0
    width: int = 0
    height: int = 0
    samples: int = 0


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
        #: MG texture target -> GL target (what GLES 3 has: 2D, cube, 3D, 2D array)
        self.tex_targets = {int(t["Tex2D"]): int(GL.GL_TEXTURE_2D),
                            int(t["TexCube"]): int(GL.GL_TEXTURE_CUBE_MAP),
                            int(t["Tex3D"]): int(GL.GL_TEXTURE_3D),
                            int(t["Tex2DArray"]): int(GL.GL_TEXTURE_2D_ARRAY)}  # fmt: skip

    # -- create / destroy -----------------------------------------------------------
    def create(self, kind: str, target: int, what: str) -> object:
        gl = self.gl
        if target == self.buffer_target:
            return GlBuffer(int(gl.glGenBuffers(1)))
        if target in self.tex_targets:
            return GlTexture(int(gl.glGenTextures(1)), self.tex_targets[target])
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
            if int(p.Samples) > 1:  # type: ignore[index]
                raise DriverRefused(f"{what}.Samples", "a multisampled texture (gles: "
                                    "multisampled renderbuffers only)")  # fmt: skip
            three = res.target in (GL.GL_TEXTURE_3D, GL.GL_TEXTURE_2D_ARRAY)
            if res.target == GL.GL_TEXTURE_3D:
                depth = max(int(p.Depth), 1)  # type: ignore[index]
            elif res.target == GL.GL_TEXTURE_2D_ARRAY:
                depth = max(int(p.ArrayLayers), int(p.Depth), 1)  # type: ignore[index]
            elif res.target == GL.GL_TEXTURE_CUBE_MAP:
                depth = 6
            else:
                depth = 1
            top = mip_levels(w, h, depth if res.target == GL.GL_TEXTURE_3D else 1)
            if levels > top:  # Mesa crashed on 100 levels of a 64x64 texture before its error
                raise DriverRefused(f"{what}.Levels", f"{levels} levels for {w}x{h} (at most {top})")
            if (res.internal_format, res.width, res.height, res.levels, res.depth) == (
                    fmt, w, h, levels, depth):  # fmt: skip
                return  # the storage it has (MobileGL re-describes it per level): kept
            if res.levels:  # immutable storage: a respecify is a new texture name
                gl.glDeleteTextures(1, [res.name])
                res.name = int(gl.glGenTextures(1))
            gl.glBindTexture(res.target, res.name)
            if three:
                gl.glTexStorage3D(res.target, levels, fmt, w, h, depth)
            else:
                gl.glTexStorage2D(res.target, levels, fmt, w, h)
            self._check(what)
            res.internal_format, res.width, res.height, res.levels = fmt, w, h, levels
            res.depth = depth
            self.epoch += 1  # a texture name moved: bound units are re-applied
            return
        if isinstance(res, GlRenderbuffer):
            self._limit(w, h, self.limits.max_renderbuffer_size, "GL_MAX_RENDERBUFFER_SIZE", what)
            if fmt not in PIXEL_FORMATS and fmt not in DEPTH_STENCIL_FORMATS:
                raise DriverRefused(f"{what}.InternalFormat", f"0x{fmt:04x} is not renderable")
            samples = int(p.Samples)  # type: ignore[index]
            gl.glBindRenderbuffer(GL.GL_RENDERBUFFER, res.name)
            if samples > 1:
                gl.glRenderbufferStorageMultisample(GL.GL_RENDERBUFFER, samples, fmt, w, h)
            else:
                gl.glRenderbufferStorage(GL.GL_RENDERBUFFER, fmt, w, h)
            self._check(what)
            res.internal_format, res.width, res.height, res.samples = fmt, w, h, samples

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
        if res.internal_format not in PIXEL_FORMATS:  # never given storage (no format)
            raise DriverRefused(f"{what}.Res", f"the texture has no storage (internal format "
                                f"0x{res.internal_format:x})")  # fmt: skip
        fmt, typ, bpp = PIXEL_FORMATS[res.internal_format]
        level = int(p.Level)  # type: ignore[index]
        lw, lh = max(res.width >> level, 1), max(res.height >> level, 1)
        ld = max(res.depth >> level, 1) if res.target == GL.GL_TEXTURE_3D else res.depth
        if level >= res.levels:
            raise DriverRefused(f"{what}.Level", f"level {level} of {res.levels}")
        gl.glBindTexture(res.target, res.name)
        gl.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        rows = list(regions)  # type: ignore[call-overload]
        if not rows:  # RegionCount 0: one region, the union box, tightly packed from 0
            b = p.UnionBox  # type: ignore[attr-defined]
            rows = [(int(b.X), int(b.Y), int(b.Z), int(b.W), int(b.H), int(b.D), 0,
                     int(b.W) * bpp, 0)]  # fmt: skip
        else:
            rows = [(int(r.X), int(r.Y), int(r.Z), int(r.W), int(r.H), int(r.D), int(r.SrcOffset),
                     int(r.SrcRowStride), int(r.SrcSliceStride)) for r in rows]  # fmt: skip
        for x, y, z, w, h, d, src, stride, slice_ in rows:
            d = max(d, 1)
            if x < 0 or y < 0 or z < 0 or x + w > lw or y + h > lh or z + d > ld:
                raise DriverRefused(f"{what}.Region", f"{w}x{h}x{d}+{x}+{y}+{z} outside level "
                                    f"{level} ({lw}x{lh}x{ld})")  # fmt: skip
            slice_ = slice_ or stride * h
            if stride != w * bpp or slice_ != stride * h or src + slice_ * d > len(blob):
                raise DriverRefused(f"{what}.SrcRowStride", f"row stride {stride}, slice "
                                    f"{slice_} for {w}x{h}x{d} pixels of {bpp} bytes")  # fmt: skip
            data = bytes(blob[src : src + slice_ * d])
            if res.target == GL.GL_TEXTURE_CUBE_MAP:
                for f in range(d):  # Z = the face (0..5: +X, -X, +Y, -Y, +Z, -Z)
                    gl.glTexSubImage2D(GL.GL_TEXTURE_CUBE_MAP_POSITIVE_X + z + f, level, x, y,
                                       w, h, fmt, typ, data[f * slice_ : (f + 1) * slice_])  # fmt: skip
            elif res.target == GL.GL_TEXTURE_2D:
                gl.glTexSubImage2D(res.target, level, x, y, w, h, fmt, typ, data)
            else:
                gl.glTexSubImage3D(res.target, level, x, y, z, w, h, d, fmt, typ, data)
        self._check(what)
