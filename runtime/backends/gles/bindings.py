"""Shader resources on GLES: sampler objects, texture parameters and the draw-time binding
of a program's default block, uniform / storage blocks and samplers.

A program keeps the bindings SPIRV-Cross wrote (``layout(binding = N)``, ESSL 3.10): its
default block (``gl_DefaultUniformBlock``) reads GL uniform-buffer point N, a uniform block
at binding B reads point B, a sampler at binding U reads texture unit U. At a draw the
backend fills those GL points from the pushed windows: block B takes the ``SetShaderBuffers``
Uniform row ``SetProgramBindings`` names for it (its own binding when not overridden), a
sampler takes the ``SetSamplerViews`` / ``BindSamplerStates`` rows of its unit (overridden
by the program's sampler units), the default block the bytes ``SetGlobalConstants`` brought
for the program (uploaded once per ``Version`` into the program's own buffer). The work is
memoised on a bindings serial (any binding record moves it) and the resources' epoch: a
draw under the same bindings issues no GL call for them.

Anything GLES cannot express is refused by name at the record (``DriverRefused``): a LOD
bias, anisotropy without GL_EXT_texture_filter_anisotropic, a non-identity swizzle (the tables name no swizzle
values), a sampler view narrower than its texture (GLES has no texture views).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from OpenGL.GLES2.EXT import texture_border_clamp as _border_ext
from OpenGL.GLES2.EXT import texture_filter_anisotropic as _aniso_ext

from ...schema import layouts
from ...schema import tables as _t
from ...server.handle_fields import table_of
from ...server.program_bindings import program_overrides
from .errors import DriverRefused
from .gl import GL, CountedGL, has_entry
from .program import GlProgram
from .resources import GlBuffer, GlTexture

__all__ = ["GlSampler", "GlSamplerView", "make_sampler", "apply_texture_params", "Binder"]

_CLAMP_TO_BORDER = int(_border_ext.GL_CLAMP_TO_BORDER_EXT)  # = GLES 3.2's GL_CLAMP_TO_BORDER
_BORDER_COLOR = int(_border_ext.GL_TEXTURE_BORDER_COLOR_EXT)


class GlSampler:
    def __init__(self, name: int) -> None:
        self.name = name


class GlSamplerView:
    """A sampler view CSO: the texture it names (resolved at the bind) and its range."""

    def __init__(self, p: Any) -> None:
        self.target = int(p.Target)
        self.min_level, self.num_levels = int(p.MinLevel), int(p.NumLevels)
        self.min_layer, self.num_layers = int(p.MinLayer), int(p.NumLayers)
        self.texture = p.Texture


def _names(enum: str) -> dict[int, str]:
    return {int(v): k for k, v in _t.enum_members(enum).items()}


def make_sampler(gl: CountedGL, raw: bytes, where: str, max_anisotropy: float = 0.0) -> GlSampler:
    """A GL sampler object from one ``SamplerParameters`` record (``max_anisotropy``: the
    driver's GL_MAX_TEXTURE_MAX_ANISOTROPY_EXT, 0 without GL_EXT_texture_filter_anisotropic)."""
    dt = layouts.dtype("SamplerParameters")
    if len(raw) < dt.itemsize:
        raise DriverRefused(where, f"{len(raw)} bytes, a SamplerParameters is {dt.itemsize}")
    p = np.frombuffer(raw, dt, count=1)[0]
    wrap, filt, mip = (
        _names("SamplerWrapMode"),
        _names("SamplerFilterMode"),
        _names("SamplerMipmapMode"),
    )
    cfunc, cmode = _names("SamplerCompareFunc"), _names("SamplerCompareMode")
    wraps = {"ClampToEdge": int(GL.GL_CLAMP_TO_EDGE), "MirroredRepeat": int(GL.GL_MIRRORED_REPEAT),
             "Repeat": int(GL.GL_REPEAT), "ClampToBorder": _CLAMP_TO_BORDER}  # fmt: skip
    funcs = {"Never": GL.GL_NEVER, "Less": GL.GL_LESS, "Equal": GL.GL_EQUAL,
             "LessEqual": GL.GL_LEQUAL, "Greater": GL.GL_GREATER, "NotEqual": GL.GL_NOTEQUAL,
             "GreaterEqual": GL.GL_GEQUAL, "Always": GL.GL_ALWAYS}  # fmt: skip

    def pick(table: dict, names: dict, member: str) -> int:
        v = int(p[member])
        name = names.get(v)
        if name not in table:
            raise DriverRefused(f"{where}.{member}", f"{v} ({name}): no GLES sampler state")
        return int(table[name])

    address = [pick(wraps, wrap, m) for m in ("wrapS", "wrapT", "wrapR")]
    mag = pick({"Nearest": GL.GL_NEAREST, "Linear": GL.GL_LINEAR}, filt, "magFilter")
    minf = filt.get(int(p["minFilter"]))
    mipname = mip.get(int(p["mipmapMode"]))
    table = {("Nearest", "None"): GL.GL_NEAREST, ("Linear", "None"): GL.GL_LINEAR,
             ("Nearest", "Nearest"): GL.GL_NEAREST_MIPMAP_NEAREST,
             ("Linear", "Nearest"): GL.GL_LINEAR_MIPMAP_NEAREST,
             ("Nearest", "Linear"): GL.GL_NEAREST_MIPMAP_LINEAR,
             ("Linear", "Linear"): GL.GL_LINEAR_MIPMAP_LINEAR}  # fmt: skip
    if (minf, mipname) not in table:
        raise DriverRefused(f"{where}.minFilter", f"{minf} / mipmap {mipname}: no GL min filter")
    if float(p["lodBias"]) != 0.0:
        raise DriverRefused(f"{where}.lodBias", f"{float(p['lodBias'])}: GLES has no LOD bias")
    aniso = float(p["maxAnisotropy"])
    if aniso > 1.0 and max_anisotropy < 1.0:
        raise DriverRefused(f"{where}.maxAnisotropy", f"{aniso}: the driver has no "
                            "GL_EXT_texture_filter_anisotropic")  # fmt: skip
    compare = cmode.get(int(p["compareMode"])) == "CompareToTexture"
    border = None
    if _CLAMP_TO_BORDER in address:
        form = _names("BorderColorForm").get(int(p["borderColorForm"]))
        member = {"Float": "borderColor", "Int": "borderColorI", "Uint": "borderColorUI"}.get(
            form or "")  # fmt: skip
        if member is None:
            raise DriverRefused(f"{where}.borderColorForm", f"{int(p['borderColorForm'])}")
        if form != "Float" and not has_entry(
            f"glSamplerParameterI{'iv' if form == 'Int' else 'uiv'}"
        ):
            raise DriverRefused(f"{where}.borderColorForm", f"{form}: the driver exports no "
                                "glSamplerParameterI*v (GLES 3.2)")  # fmt: skip
        bc = p[member]
        border = (form, [bc[n] for n in ("X", "Y", "Z", "W")])
    name = int(gl.glGenSamplers(1))
    for pname, v in zip(
        (GL.GL_TEXTURE_WRAP_S, GL.GL_TEXTURE_WRAP_T, GL.GL_TEXTURE_WRAP_R), address
    ):
        gl.glSamplerParameteri(name, pname, v)
    gl.glSamplerParameteri(name, GL.GL_TEXTURE_MIN_FILTER, int(table[(minf, mipname)]))
    gl.glSamplerParameteri(name, GL.GL_TEXTURE_MAG_FILTER, mag)
    gl.glSamplerParameterf(name, GL.GL_TEXTURE_MIN_LOD, float(p["minLod"]))
    gl.glSamplerParameterf(name, GL.GL_TEXTURE_MAX_LOD, float(p["maxLod"]))
    gl.glSamplerParameteri(name, GL.GL_TEXTURE_COMPARE_MODE,
                           GL.GL_COMPARE_REF_TO_TEXTURE if compare else GL.GL_NONE)  # fmt: skip
    gl.glSamplerParameteri(name, GL.GL_TEXTURE_COMPARE_FUNC, pick(funcs, cfunc, "compareFunc"))
    if aniso > 1.0:
        gl.glSamplerParameterf(name, _aniso_ext.GL_TEXTURE_MAX_ANISOTROPY_EXT,
                               min(aniso, max_anisotropy))  # fmt: skip
    if border is not None:
        form, values = border
        if form == "Float":
            gl.glSamplerParameterfv(name, _BORDER_COLOR, np.array(values, np.float32))
        elif form == "Int":
            gl.glSamplerParameterIiv(
                name, _BORDER_COLOR, (ctypes.c_int * 4)(*(int(v) for v in values))
            )
        else:
            gl.glSamplerParameterIuiv(name, _BORDER_COLOR,
                                      (ctypes.c_uint * 4)(*(int(v) for v in values)))  # fmt: skip
    err = int(gl.glGetError())
    if err:
        gl.glDeleteSamplers(1, [name])
        raise DriverRefused(where, f"GL error 0x{err:04x}")
    return GlSampler(name)


def apply_texture_params(gl: CountedGL, tex: GlTexture, p: Any, where: str) -> None:
    """``SetTextureParams``' texture-side state: base / max level, LODs, depth-stencil
    mode (the swizzle must be the identity; a LOD bias 0)."""
    sw = [int(x) for x in p.Swizzle]
    if sw != list(range(4)):
        raise DriverRefused(f"{where}.Swizzle", f"{sw}: the tables name no swizzle component "
                            "values; the gles backend takes the identity only")  # fmt: skip
    if float(p.LodBias) != 0.0:
        raise DriverRefused(f"{where}.LodBias", f"{float(p.LodBias)}: GLES has no LOD bias")
    t = tex.target
    gl.glBindTexture(t, tex.name)
    gl.glTexParameteri(t, GL.GL_TEXTURE_BASE_LEVEL, int(p.BaseLevel))
    gl.glTexParameteri(t, GL.GL_TEXTURE_MAX_LEVEL, int(p.MaxLevel))
    gl.glTexParameterf(t, GL.GL_TEXTURE_MIN_LOD, float(p.MinLod))
    gl.glTexParameterf(t, GL.GL_TEXTURE_MAX_LOD, float(p.MaxLod))
    mode = int(p.DepthStencilMode)
    if mode == _t.constant("kMGPipeDepthStencilModeStencil"):
        gl.glTexParameteri(t, GL.GL_DEPTH_STENCIL_TEXTURE_MODE, GL.GL_STENCIL_INDEX)
    elif tex.internal_format == GL.GL_DEPTH24_STENCIL8:
        gl.glTexParameteri(t, GL.GL_DEPTH_STENCIL_TEXTURE_MODE, GL.GL_DEPTH_COMPONENT)
    err = int(gl.glGetError())
    if err:
        raise DriverRefused(where, f"GL error 0x{err:04x}")
    tex.params = p


def _obj(ctx: Any, kind: str, h: Any, where: str) -> Any:
    return ctx.tables[table_of(kind)].resolve(h, where)


class Binder:
    """The draw-time binding of a program's resources (see the module docstring)."""

    def __init__(self, gl: CountedGL) -> None:
        self.gl = gl
        self.serial = 0  # moves with every binding record
        self.globals: dict[Any, tuple[int, bytes]] = {}  # ShaderCso -> (Version, bytes)
        self._default_sampler = 0
        self._units: dict[int, tuple[int, int, int]] = {}  # GL unit -> (target, tex, sampler)
        self._points: dict[tuple[int, int], tuple[int, int, int]] = {}  # (target, point) -> range
        self._active = -1
        self._align = 0
        self._applied: tuple | None = None
        self.cls_uniform = _t.constant("kMGPipeShaderBufferClassUniform")
        self.cls_storage = _t.constant("kMGPipeShaderBufferClassShaderStorage")
        self.cls_atomic = _t.constant("kMGPipeShaderBufferClassAtomicCounter")
        self._images: dict[int, tuple] = {}  # image unit -> glBindImageTexture arguments
        self._access = {int(v): k for k, v in _t.enum_members("MGPipeImageAccess").items()}
        self._objs: dict[tuple[int, int], GlBuffer] = {}  # (target, point) -> its buffer
        #: per shader-buffer class: the WritableMask words of its last SetShaderBuffers
        self.writable: dict[int, list[int]] = {}

    def disturbed(self) -> None:
        """A texture was bound on the active unit outside the draw path (an upload, a
        respecify, texture parameters, mipmap generation): that unit is re-bound at the
        next draw."""
        self._units.pop(self._active, None)
        self.serial += 1

    def forget_program(self, prog: GlProgram) -> None:
        if prog.ubo:
            self.gl.glDeleteBuffers(1, [prog.ubo])
            prog.ubo = 0

    def bind(self, ctx: Any, handle: Any, prog: GlProgram, epoch: int, base_instance: int,
             what: str) -> None:  # fmt: skip
        gl = self.gl
        if prog.base_instance_loc >= 0 and prog.base_instance != base_instance:
            gl.glUniform1i(prog.base_instance_loc, base_instance)  # the program is in use
            prog.base_instance = base_instance
        if prog.default is not None:
            self._default_block(handle, prog, what)
        key = (self.serial, epoch, prog)
        if self._applied == key:
            return
        blocks, units = program_overrides(ctx, handle, f"{what}.ShaderCso")
        for pos, name, b in prog.blocks:
            point = blocks.get(pos, b)
            self._buffer(ctx, GL.GL_UNIFORM_BUFFER, self.cls_uniform, point, b,
                         f"{what}.uniform block {name!r} (binding point {point})")  # fmt: skip
        for name, b in prog.storage:
            self._buffer(ctx, GL.GL_SHADER_STORAGE_BUFFER, self.cls_storage, b, b,
                         f"{what}.storage block {name!r} (binding point {b})")  # fmt: skip
        storage_points = {b for _n, b in prog.storage}
        for name, point, b in prog.atomic:  # an atomic counter is a storage block on GLES
            if b in storage_points:
                raise DriverRefused(f"{what}.atomic counter binding {point}", f"its storage "
                                    f"block {name!r} shares SSBO binding {b} with a storage block")  # fmt: skip
            self._buffer(ctx, GL.GL_SHADER_STORAGE_BUFFER, self.cls_atomic, point, b,
                         f"{what}.atomic counter binding {point}")  # fmt: skip
        if prog.images:
            self._bind_images(ctx, prog, what)
        views, states = ctx.windows["SetSamplerViews"], ctx.windows["BindSamplerStates"]
        for loc, name, b, _type in prog.samplers:
            unit = units.get(loc, b)
            where = f"{what}.sampler {name!r} (unit {unit})"
            row = views[unit] if unit < len(views) else None
            if row is None or (row.Texture.is_null and row.View.is_null):
                raise DriverRefused(where, "no texture is bound to the unit")
            view = None
            if not row.View.is_null:
                view = _obj(ctx, "SamplerViewCso", row.View, where).backend
            tex_h = row.Texture if not row.Texture.is_null else getattr(view, "texture", None)
            tex = _obj(ctx, "Texture", tex_h, where).backend if tex_h is not None else None
            if not isinstance(tex, GlTexture) or not tex.levels:
                raise DriverRefused(where, "the texture has no storage")
            if isinstance(view, GlSamplerView):
                narrow = view.min_level or view.min_layer or (
                    view.num_levels and view.num_levels < tex.levels) or (
                    view.num_layers and view.num_layers < tex.depth
                    and tex.target == GL.GL_TEXTURE_2D_ARRAY)  # fmt: skip
                if narrow:
                    raise DriverRefused(f"{where}.View", "a view narrower than its texture "
                                        "(GLES has no texture views)")  # fmt: skip
            sh = states[unit] if unit < len(states) else None
            sampler = None
            if sh is not None and not sh.is_null:
                sampler = _obj(ctx, "SamplerCso", sh, where).backend
            elif tex.params is not None and not tex.params.BuiltinSampler.is_null:
                sampler = _obj(ctx, "SamplerCso", tex.params.BuiltinSampler, where).backend
            sname = sampler.name if isinstance(sampler, GlSampler) else self._gl_default()
            want = (tex.target, tex.name, sname)
            if self._units.get(b) != want:
                if self._active != b:
                    gl.glActiveTexture(GL.GL_TEXTURE0 + b)
                    self._active = b
                old = self._units.get(b)
                if old is not None and old[0] != tex.target:
                    gl.glBindTexture(old[0], 0)
                gl.glBindTexture(tex.target, tex.name)
                gl.glBindSampler(b, sname)
                self._units[b] = want
        self._applied = key

    def _gl_default(self) -> int:
        """A sampler object in GL's initial sampler state (a fresh glGenSamplers)."""
        if not self._default_sampler:
            self._default_sampler = int(self.gl.glGenSamplers(1))
        return self._default_sampler

    def _default_block(self, handle: Any, prog: GlProgram, what: str) -> None:
        gl = self.gl
        b, size = prog.default  # type: ignore[misc]
        version, data = self.globals.get(handle, (0, b""))
        if not prog.ubo:
            prog.ubo = int(gl.glGenBuffers(1))
            prog.globals_version = -1
        if prog.globals_version != version or prog.ubo_size != max(size, len(data), 16):
            n = max(size, len(data), 16)
            buf = data + bytes(n - len(data))  # never written: GL's zero values
            gl.glBindBuffer(GL.GL_UNIFORM_BUFFER, prog.ubo)
            gl.glBufferData(GL.GL_UNIFORM_BUFFER, n, buf, GL.GL_DYNAMIC_DRAW)
            prog.globals_version, prog.ubo_size = version, n
            self._points.pop((int(GL.GL_UNIFORM_BUFFER), b), None)
        want = (prog.ubo, 0, prog.ubo_size)
        if self._points.get((int(GL.GL_UNIFORM_BUFFER), b)) != want:
            gl.glBindBufferBase(GL.GL_UNIFORM_BUFFER, b, prog.ubo)
            self._points[(int(GL.GL_UNIFORM_BUFFER), b)] = want
            self._applied = None  # a block at the same point must be re-bound after it

    def _buffer(self, ctx: Any, target: int, cls: int, point: int, binding: int,
                where: str) -> None:  # fmt: skip
        window = ctx.windows[f"SetShaderBuffers[{cls}]"]
        row = window[point] if point < len(window) else None
        if row is None or row.Res.is_null:
            raise DriverRefused(where, "no buffer is bound there")
        buf = _obj(ctx, "Buffer", row.Res, where).backend
        if not isinstance(buf, GlBuffer):
            raise DriverRefused(where, "not a buffer")
        off = int(row.Offset)
        size = int(row.Size) or (buf.size - off)
        if off < 0 or size <= 0 or off + size > buf.size:
            raise DriverRefused(
                where, f"[{off}, {off + size}) outside a buffer of {buf.size} bytes"
            )
        if target == GL.GL_UNIFORM_BUFFER:
            if not self._align:
                self._align = int(np.asarray(self.gl.glGetIntegerv(
                    GL.GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT)).reshape(-1)[0])  # fmt: skip
            if off % self._align:
                raise DriverRefused(where, f"offset {off} is not a multiple of "
                                    f"GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT {self._align}")  # fmt: skip
        want = (buf.name, off, size)
        key = (int(target), binding)
        self._objs[key] = buf
        if self._points.get(key) != want:
            self.gl.glBindBufferRange(target, binding, buf.name, ctypes.c_ssize_t(off).value,
                                      ctypes.c_ssize_t(size).value)  # fmt: skip
            self._points[key] = want

    _GL_ACCESS = {"ReadOnly": 0x88B8, "WriteOnly": 0x88B9, "ReadWrite": 0x88BA}

    def _bind_images(self, ctx: Any, prog: GlProgram, what: str) -> None:
        """Each image uniform's unit from the ``SetShaderImages`` window: the texture,
        level, layer and access the client bound; the format must be the one the shader
        declares (GL ES 3.1 §8.22: a mismatch reads undefined values -- refused here)."""
        window = ctx.windows["SetShaderImages"]
        for name, unit, fmt in prog.images:
            where = f"{what}.image {name!r} (unit {unit})"
            row = window[unit] if unit < len(window) else None
            if row is None or row.Res.is_null:
                raise DriverRefused(where, "no texture is bound to the image unit")
            tex = _obj(ctx, "Texture", row.Res, where).backend
            if not isinstance(tex, GlTexture) or not tex.levels:
                raise DriverRefused(where, "the texture has no storage")
            if int(row.InternalFormat) != fmt:
                raise DriverRefused(f"{where}.InternalFormat", f"0x{int(row.InternalFormat):04x}, "
                                    f"the shader declares 0x{fmt:04x}")  # fmt: skip
            level = int(row.Level)
            if level >= tex.levels:
                raise DriverRefused(f"{where}.Level", f"{level} of a texture of {tex.levels}")
            access = self._GL_ACCESS.get(self._access.get(int(row.Access), ""))
            if access is None:
                raise DriverRefused(f"{where}.Access", f"{int(row.Access)}")
            args = (tex.name, level, bool(row.Layered), int(row.Layer), access, fmt)
            if self._images.get(unit) != args:
                self.gl.glBindImageTexture(unit, *args)
                self._images[unit] = args

    def bound_image(self, unit: int, args: tuple | None) -> None:
        """``BindShaderImage`` bound ``args`` on ``unit`` at the call (None: unbound)."""
        if args is None:
            self._images.pop(unit, None)
        else:
            self._images[unit] = args

    def writable_buffers(self, prog: GlProgram) -> list[GlBuffer]:
        """The buffers bound at the program's storage and atomic-counter points whose
        ``WritableMask`` bit is set (what a draw or dispatch of it may write)."""
        ssbo = int(GL.GL_SHADER_STORAGE_BUFFER)
        out = []
        for cls, points in ((self.cls_storage, [(b, b) for _n, b in prog.storage]),
                            (self.cls_atomic, [(pt, b) for _n, pt, b in prog.atomic])):  # fmt: skip
            words = self.writable.get(cls, [])
            for point, binding in points:  # bit i = binding point i (MobileGL's mask helpers)
                if 0 <= point < 32 * len(words) and words[point >> 5] >> (point & 31) & 1:
                    buf = self._objs.get((ssbo, binding))
                    if buf is not None:
                        out.append(buf)
        return out

    def forget_buffer(self, name: int) -> None:
        self._points = {k: v for k, v in self._points.items() if v[0] != name}
        self._objs = {k: v for k, v in self._objs.items() if v.name != name}

    def forget_texture(self, name: int) -> None:
        self._units = {k: v for k, v in self._units.items() if v[1] != name}
        self._images = {k: v for k, v in self._images.items() if v[0] != name}

    def forget_sampler(self, name: int) -> None:
        self._units = {k: v for k, v in self._units.items() if v[2] != name}
