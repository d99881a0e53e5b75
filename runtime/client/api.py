"""The GL-like client API that scenes are written against (client role of the runtime).

State setters (``enable``, ``viewport``, ``blend_func`` ... and everything on
:attr:`Client.state`, the :class:`RenderState`) emit nothing; resource ops the monolith
dispatches at GL-call time (buffer create / data / subdata, texture creation in MobileGL's
respecify sequence, ``tex_parameter``'s built-in sampler and SetTextureParams) emit at once;
texture uploads, uniforms, bindings and programs accumulate; each verb runs
``Tracker.validate`` (MobileGL's validate order) and then emits itself. Handles are minted
here, per kind; a death sends the delete record, forwards the death, then frees the slot.
Misuse raises :class:`ClientError` before any record.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from functools import partial
from types import TracebackType
from typing import Any

import numpy as np

from ..schema import layouts
from ..schema import tables as _t
from ..transport.base import Sink, Transport
from ..transport.registry import DEFAULT_RING, TRANSPORTS, make_transport
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.stage import StageSegment
from .. import budgets as _budgets
from .answers import AnswersMixin
from .compute import ComputeCalls
from .draws import DrawsMixin
from .emitter import Emitter
from .cso_cache import RenderStateCsoCache
from .inline import inline_call
from .gl_errors import (DRAW_MODE_VALUES as _DRAW_MODES, ClientError, count_arg, draw_mode,
                        enum_arg, live, number_args, reflection_record)
from .reverse import link_for
from .sampler_cache import SamplerCache
from .render_state import RenderState
from .tracker import Attrib, Buffer, Framebuffer, Program, Texture, Tracker

__all__ = ["TRANSPORTS", "Client", "ClientError", "make_transport"]

GL_COLOR_BUFFER_BIT = 0x4000
GL_DEPTH_BUFFER_BIT = 0x0100
GL_STENCIL_BUFFER_BIT = 0x0400
GL_NEAREST = 0x2600
GL_LINEAR = 0x2601
GL_NEAREST_MIPMAP_NEAREST = 0x2700
GL_LINEAR_MIPMAP_NEAREST = 0x2701
GL_NEAREST_MIPMAP_LINEAR = 0x2702
GL_LINEAR_MIPMAP_LINEAR = 0x2703
GL_REPEAT = 0x2901
GL_CLAMP_TO_EDGE = 0x812F
GL_MIRRORED_REPEAT = 0x8370
GL_CLAMP_TO_BORDER = 0x812D
GL_TEXTURE_MAG_FILTER = 0x2800
GL_TEXTURE_MIN_FILTER = 0x2801
GL_TEXTURE_WRAP_S = 0x2802
GL_TEXTURE_WRAP_T = 0x2803
GL_TEXTURE_WRAP_R = 0x8072
GL_TEXTURE_BORDER_COLOR = 0x1004
GL_TEXTURE_MIN_LOD = 0x813A
GL_TEXTURE_MAX_LOD = 0x813B
GL_TEXTURE_BASE_LEVEL = 0x813C
GL_TEXTURE_MAX_LEVEL = 0x813D
GL_TEXTURE_LOD_BIAS = 0x8501
GL_TEXTURE_COMPARE_MODE = 0x884C
GL_TEXTURE_COMPARE_FUNC = 0x884D
GL_COMPARE_REF_TO_TEXTURE = 0x884E
GL_TEXTURE_MAX_ANISOTROPY = 0x84FE
GL_COLOR = 0x1800
GL_DEPTH = 0x1801
GL_STENCIL = 0x1802
GL_DEPTH_STENCIL = 0x84F9
GL_TRIANGLES = 0x0004
GL_RGBA8 = 0x8058
GL_FLOAT = 0x1406
GL_NO_ERROR = 0
GL_UNKNOWN_CONTEXT_RESET = 0x8255
#: What :meth:`Client.present` returns once the device is lost (``EGL_CONTEXT_LOST``).
EGL_CONTEXT_LOST = 0x300E
_U32 = (1 << 32) - 1
#: draw records remembered per door by their values (a frame's distinct draws repeat
#: frame after frame: a remembered one is sent without packing)
DRAW_MEMO = 4096


class Client(AnswersMixin, ComputeCalls, DrawsMixin):
    """One context, one flow: GL-like calls in, MGPipe records out (answers: the mixin,
    runtime/client/answers.py; ``present_credit``: presents in flight, seed default 1;
    issue 19's compute, image, barrier, transform-feedback and patch calls:
    :class:`~.compute.ComputeCalls`; indirect and client-memory draws:
    :class:`~.draws.DrawsMixin`)."""

    def __init__(
        self,
        sink: Sink,
        stage: StageSegment,
        *,
        transport: str | Transport = "monolith",
        width: int = 640,
        height: int = 480,
        whole_block: bool = False,
        ring_capacity: int = DEFAULT_RING,
        present_credit: int = 1,
        reverse: Any = None,
    ) -> None:
        self.transport = (make_transport(transport, sink, ring_capacity)
                          if isinstance(transport, str) else transport)  # fmt: skip
        self.em = Emitter(self.transport, stage)
        #: the reverse channel (replies, events, caps; None: a sink with no applier)
        self.link = link_for(self.transport, sink, reverse)
        if self.link is not None:
            self.em.waiter = self.link.wait
        if present_credit < 0:
            raise ClientError(f"present_credit {present_credit} (0 or more)")
        self.present_credit = present_credit
        self._present_seqs: list[int] = []
        self._init_answers()
        self.tr = Tracker(self.em, width=width, height=height, whole_block=whole_block)
        #: the sampler-state cache (sampler objects and textures' built-in samplers)
        self._samplers = SamplerCache(self._mint_sampler, self._kill_sampler)
        self._sampler_params: dict[Handle, dict[str, Any]] = {}
        #: the context's default sampler: GL's initial parameters, the built-in sampler of
        #: every texture until its first glTexParameter (never evicted: held as built-in)
        self.default_sampler = self._samplers.acquire(_sampler_bytes({}), builtin=True)
        #: DrawVbo with one MGPDrawRange, packed straight into the transport (names in
        #: MGPDrawInfo's memory order: the packer's one-C-call path)
        #: the direct form names only what varies (every member it leaves out packs as
        #: zero: no index buffer, no index size, no bias) and one draw range
        self._draw_vbo = self.em.fast(
            "DrawVbo",
            ("Mode", "InstanceCount", "StartInstance", "RestartIndex", "NumDraws"),
            ("Start", "Count"), memo=DRAW_MEMO)  # fmt: skip
        vbo_cell = self.em.last_cell
        #: the indexed form also carries Flags (kDrawPrimitiveRestart)
        self._draw_indexed = self.em.fast(
            "DrawVbo",
            ("Mode", "IndexSize", "Flags", "InstanceCount", "StartInstance", "RestartIndex",
             "IndexResource.Slot", "IndexResource.Gen", "NumDraws"),
            ("Start", "Count", "IndexBias"), memo=DRAW_MEMO)  # fmt: skip
        indexed_cell = self.em.last_cell
        self._restart_flag = _t.enum("MGPDrawFlagBit")["kDrawPrimitiveRestart"]
        #: draws sent through the two draw doors count in the doors' own cells (no counter
        #: per draw here); the other draw forms (draws.py) count here
        self._draw_cells = (vbo_cell, indexed_cell)
        self._draws_other = 0
        #: glEnable / glDisable: the render state's own (no frame of this class between)
        self.enable, self.disable = self.tr.rs.enable, self.tr.rs.disable
        #: glViewport / glScissor: the render state's span setters with this class's finite
        #: check compiled into their one frame (the methods below say the same, a frame longer)
        rs = self.tr.rs
        self.viewport = rs.span_setter("set_viewport", partial(number_args, "viewport"))
        self.scissor = rs.span_setter("set_scissor_box", partial(number_args, "scissor"))
        b = _budgets.budgets()
        self._draw_limits = (b.draw_instances, b.draw_vertices)  # the draws' fast check
        self.frame_serial = 0
        self._draws_init()  # indirect and client-memory draws (draws.py)

    # -- counters -----------------------------------------------------------
    @property
    def draws(self) -> int:
        """Draws sent (every form)."""
        a, b = self._draw_cells
        return a.cell_contents + b.cell_contents + self._draws_other

    @property
    def state(self) -> RenderState:
        return self.tr.rs

    @property
    def records(self) -> int:
        return self.em.records

    @property
    def wire_bytes(self) -> int:
        return self.em.wire_bytes

    @property
    def staged_bytes(self) -> int:
        return self.em.staged_bytes

    @property
    def csos_minted(self) -> int:
        return self.tr.cso.stats.minted

    def stats(self) -> dict[str, int]:
        """The client's counters, flat (JSON-ready): records and bytes, and the CSO cache's
        hashes, transition hits, byte compares and version-check answers, and the sampler
        cache's mints, hits, evictions and over-capacity mints."""
        cso = self.tr.cso.stats
        return {
            "draws": self.draws,
            "records": self.em.records,
            "wire_bytes": self.em.wire_bytes,
            "staged_bytes": self.em.staged_bytes,
            "cso_minted": cso.minted,
            "cso_binds": cso.binds,
            "cso_hashes": cso.hashes,
            "cso_transition_hits": cso.transition_hits,
            "cso_byte_compares": cso.byte_compares,
            "cso_content_hits": cso.hits,
            "cso_collisions": cso.collisions,
            "cso_version_checks": cso.reuses,
            "cso_evictions": cso.evictions,
            "dynamic_pushes": cso.dynamic_pushes,
            "suppressor_hashes": self.tr.sup.hashes,
            "suppressor_skips": self.tr.sup.skipped,
            "sampler_minted": self._samplers.stats.minted,
            "sampler_hits": self._samplers.stats.hits,
            "sampler_evictions": self._samplers.stats.evictions,
            "sampler_over_capacity_mints": self._samplers.stats.over_capacity_mints,
        }

    # -- render state (no emission) ------------------------------------------
    def enable(self, cap: str) -> None:  # each instance binds ``RenderState.enable`` over it
        self.tr.rs.set_capability(cap, True)

    def disable(self, cap: str) -> None:  # and ``RenderState.disable`` over this
        self.tr.rs.set_capability(cap, False)

    def viewport(self, x: float, y: float, w: float, h: float) -> None:  # see __init__
        try:  # no call on the hot path: v - v is 0 for a finite number, NaN for NaN / inf
            ok = (x - x) == (y - y) == (w - w) == (h - h) == 0
        except TypeError:
            ok = False
        if not ok:
            number_args("viewport", x, y, w, h)
        self.tr.rs.set_viewport(x, y, w, h)

    def scissor(self, x: int, y: int, w: int, h: int) -> None:  # see __init__
        try:
            ok = (x - x) == (y - y) == (w - w) == (h - h) == 0
        except TypeError:
            ok = False
        if not ok:
            number_args("scissor", x, y, w, h)
        self.tr.rs.set_scissor_box(x, y, w, h)

    def clear_color(self, r: float, g: float, b: float, a: float) -> None:
        self.state.set_clear_color(r, g, b, a)

    def clear_depth(self, d: float) -> None:
        self.state.set_clear_depth(d)

    def blend_func(self, src: str, dst: str) -> None:
        enum_arg("blend_func", "BlendFactor", src), enum_arg("blend_func", "BlendFactor", dst)
        self.state.set_blend_func(src, dst, src, dst)

    def depth_func(self, func: str) -> None:
        self.state.set_depth_func(enum_arg("depth_func", "DepthTestFunc", func))

    def pixel_store(self, pack: bool, param: str, value: int) -> None:
        self.state.set_pixel_store_param(pack, param, value)

    # -- buffers (pushed at GL-call time, seed 001 §5.1) ---------------------
    def create_buffer(self, data: bytes | None = None, bind_mask: int = 0) -> Buffer:
        buf = Buffer(self.tr.alloc["Buffer"].alloc())
        self.em.emit("ResourceCreate", {"Resource": buf.handle, "StorageKind": _storage("Buffer"),
                                        "BindMask": bind_mask,
                                        "Target": self._target("Buffer")})  # fmt: skip
        if data is not None:
            self.buffer_data(buf, data)
        return buf

    def buffer_data(self, buf: Buffer, data: bytes | int) -> None:
        """``glBufferData``: ``data`` the initial bytes, or an int, the size of a buffer with
        no defined content (``glBufferData(size, NULL)``: a respecify and no upload)."""
        live("buffer_data", buf, self.tr.alloc)
        defined = not isinstance(data, int)
        size = len(data) if defined else data
        if size < 0:
            raise ClientError(f"buffer_data: negative size {size}")
        _budgets.client_buffer("buffer_data", size)
        buf.size = size
        self._shadow_respecify(buf, buf.size)  # the client's copy of the bytes (draws.py)
        self.em.emit("ResourceRespecify", {"Resource": buf.handle, "StorageKind": _storage("Buffer"),
                                           "Width": buf.size, "Target": self._target("Buffer"),
                                           "HasDefinedContent": int(defined)})  # fmt: skip
        if defined:
            self.buffer_sub_data(buf, 0, data)

    def buffer_sub_data(self, buf: Buffer, offset: int, data: bytes) -> None:
        live("buffer_sub_data", buf, self.tr.alloc)
        if offset < 0 or offset + len(data) > buf.size:
            raise ValueError(f"buffer_sub_data [{offset}, {offset + len(data)}) outside {buf.size}")
        self._shadow_write(buf, offset, data)
        self.em.emit("ResourceSubData", {"Res": buf.handle, "Target": self._target("Buffer"),
                                         "UnionBox": {"X": offset, "W": len(data), "H": 1, "D": 1},
                                         "RegionCount": 0}, ((),), blob=bytes(data))  # fmt: skip
        self.tr.clear_pending(buf.handle, offset, offset + len(data))

    def bind_buffer_base(self, target: str | int, index: int, buf: Buffer | None) -> None:
        """``glBindBufferBase``: ``target`` "uniform" (GL_UNIFORM_BUFFER), "storage"
        (GL_SHADER_STORAGE_BUFFER), "atomic_counter" (GL_ATOMIC_COUNTER_BUFFER) or
        "transform_feedback" (GL_TRANSFORM_FEEDBACK_BUFFER: a target of the bound
        transform-feedback object); the whole buffer at point ``index`` (None unbinds)."""
        self.bind_buffer_range(target, index, buf, 0, 0)

    def bind_buffer_range(self, target: str | int, index: int, buf: Buffer | None,
                          offset: int = 0, size: int = 0) -> None:  # fmt: skip
        """``glBindBufferRange`` (size 0: to the buffer's end); pushed as SetShaderBuffers of
        the target's class at the next draw."""
        cls = _BUFFER_TARGETS.get(target, target) if isinstance(target, int) else target
        if cls == "transform_feedback":
            return self._bind_xfb_target(index, buf, offset, size)
        if cls not in ("uniform", "storage", "atomic_counter"):
            raise ClientError(f"bind_buffer_range: target {target!r} (uniform, storage, "
                              "atomic_counter or transform_feedback)")  # fmt: skip
        if cls == "atomic_counter" and (offset % 4 or size % 4):
            raise ClientError(f"bind_buffer_range: atomic counter offset {offset} / size "
                              f"{size} (multiples of 4)")  # fmt: skip
        top = int(_t.constant("kMGPipeMaxBufferBindingPoints"))
        if not 0 <= index < top:
            raise ClientError(f"bind_buffer_range: index {index} outside 0..{top - 1}")
        if buf is None:
            self.tr.buffer_bindings.pop((cls, index), None)
        else:
            if offset < 0 or size < 0 or offset + size > buf.size:
                raise ClientError(f"bind_buffer_range: [{offset}, {offset + size}) outside "
                                  f"the buffer's {buf.size} bytes")  # fmt: skip
            self.tr.buffer_bindings[(cls, index)] = (buf, offset, size)
        self.tr.writable_points = sum(c != "uniform" for c, _ in self.tr.buffer_bindings)
        self.tr.touch("shader_buffers")

    def delete_buffer(self, buf: Buffer) -> None:
        live("delete_buffer", buf, self.tr.alloc)
        for key, (b, _o, _s) in list(self.tr.buffer_bindings.items()):
            if b is buf:
                del self.tr.buffer_bindings[key]
        self.tr.writable_points = sum(c != "uniform" for c, _ in self.tr.buffer_bindings)
        if self.tr.index_buffer is buf:
            self.tr.index_buffer = None
        self._unbind_from_compute_points(buf)
        self._unbind_draw_buffer(buf)  # GL_DRAW_INDIRECT_BUFFER / GL_PARAMETER_BUFFER (draws.py)
        self.tr.death("Buffer", buf.handle, "ResourceDestroy")

    # -- textures ------------------------------------------------------------
    def create_texture(self, target: str, width: int, height: int, depth: int = 1,
                       levels: int = 1, internal_format: int = GL_RGBA8) -> Texture:  # fmt: skip
        """``glTexStorage*``: ``target`` "2d" | "cube" | "3d" | "2d_array" (``depth`` the
        3D depth or the array's layers; a cube has 6 faces). MobileGL's sequence: the object
        (ResourceCreate, the constructor's ResourceRespecify with no extent, SetTextureParams),
        then the storage (ResourceRespecify, one more per level, SetTextureParams)."""
        try:
            wire_target = _TEX_TARGETS[target]
        except KeyError:
            raise ClientError(f"create_texture: unknown target {target!r} "
                              f"(one of {', '.join(_TEX_TARGETS)})") from None  # fmt: skip
        if width <= 0 or height <= 0 or depth <= 0:
            raise ClientError(f"create_texture: extent {width}x{height}x{depth} is empty")
        if target == "cube" and (width != height or depth != 1):
            raise ClientError("create_texture: a cube's faces are square and it has depth 1")
        if target == "2d" and depth != 1:
            raise ClientError("create_texture: a 2d texture has depth 1")
        top = max(width, height, depth if target == "3d" else 1).bit_length()
        if not 1 <= levels <= top:
            raise ClientError(f"create_texture: {levels} levels for {width}x{height}x{depth} "
                              f"(1..{top})")  # fmt: skip
        layers = 6 if target == "cube" else depth if target == "2d_array" else 1
        _budgets.client_image("create_texture", width, height, depth if target == "3d" else 1,
                              layers, levels)  # fmt: skip
        tex = Texture(self.tr.alloc["Texture"].alloc(), wire_target, internal_format,
                      width, height, levels)  # fmt: skip
        tex.sampler = self.default_sampler
        tex.depth = depth if target == "3d" else 1
        tex.layers = 6 if target == "cube" else depth if target == "2d_array" else 1
        tr = self.tr
        self.em.emit("ResourceCreate", tr.texture_desc(tex, storage=False))
        self.em.emit("ResourceRespecify", tr.texture_desc(tex, storage=False))
        self._texture_params(tex)
        whole = tr.texture_desc(tex)
        self.em.emit("ResourceRespecify", whole)
        for level in range(levels):
            self.em.emit("ResourceRespecify", dict(
                whole, HasRespecifiedLevel=1, RespecifiedLevel=level,
                RespecifiedUploadTarget=self._target(wire_target)))  # fmt: skip
        self._texture_params(tex)
        return tex

    def create_texture_2d(self, width: int, height: int, internal_format: int = GL_RGBA8,
                          levels: int = 1) -> Texture:  # fmt: skip
        return self.create_texture("2d", width, height, 1, levels, internal_format)

    def _texture_params(self, tex: Texture) -> None:
        self.em.emit("SetTextureParams", {
            "Res": tex.handle, "BuiltinSampler": tex.sampler, "BaseLevel": tex.base_level,
            "MaxLevel": min(tex.max_level, 0xFFFF), "Swizzle": list(tex.swizzle),
            "DepthStencilMode": tex.depth_stencil_mode,
            "MinLod": tex.min_lod, "MaxLod": tex.max_lod, "LodBias": tex.lod_bias,
        })  # fmt: skip

    def tex_sub_image(self, tex: Texture, level: int, x: int, y: int, w: int, h: int,
                      data: bytes, *, z: int = 0, d: int = 1, layer: int | None = None,
                      face: int | None = None) -> None:  # fmt: skip
        """``glTexSubImage2D/3D``: accumulates; the upload leaves at the next validate point
        (seed 001 §6). ``layer`` (2d_array), ``face`` (cube, 0..5) or ``z``/``d`` (3d)."""
        live("tex_sub_image", tex, self.tr.alloc)
        if tex.target == "Renderbuffer":
            raise ClientError("tex_sub_image: a renderbuffer has no image to upload")
        if not 0 <= level < tex.levels:
            raise ClientError(f"tex_sub_image: level {level} outside 0..{tex.levels - 1}")
        if face is not None:
            if tex.target != "TexCube" or not 0 <= face < 6:
                raise ClientError(f"tex_sub_image: face {face} on a {tex.target}")
            z, d = face, 1
        elif layer is not None:
            if tex.target != "Tex2DArray":
                raise ClientError(f"tex_sub_image: layer on a {tex.target}")
            z, d = layer, 1
        lw, lh = max(tex.width >> level, 1), max(tex.height >> level, 1)
        ld = max(tex.depth >> level, 1) if tex.target == "Tex3D" else tex.layers
        if x < 0 or y < 0 or z < 0 or x + w > lw or y + h > lh or z + d > ld or w < 0 or h < 0:
            raise ClientError(f"tex_sub_image: box {x},{y},{z} {w}x{h}x{d} outside level "
                              f"{level} ({lw}x{lh}x{ld})")  # fmt: skip
        tex.pending.setdefault(level, []).append((x, y, w, h, bytes(data), z, d))
        self.tr.textures_pending[tex.handle] = tex

    def tex_sub_image_2d(self, tex: Texture, level: int, x: int, y: int, w: int, h: int,
                         data: bytes) -> None:  # fmt: skip
        """Accumulates; the upload leaves at the next validate point (seed 001 §6)."""
        self.tex_sub_image(tex, level, x, y, w, h, data)

    def tex_image(self, tex: Texture, level: int, data: bytes, *, layer: int | None = None,
                  face: int | None = None) -> None:  # fmt: skip
        """The whole of ``level`` (of one layer / face when named)."""
        w, h = max(tex.width >> level, 1), max(tex.height >> level, 1)
        d = 1 if layer is not None or face is not None else (
            max(tex.depth >> level, 1) if tex.target == "Tex3D" else tex.layers)
        self.tex_sub_image(tex, level, 0, 0, w, h, data, d=d, layer=layer, face=face)

    def tex_parameter(self, tex: Texture, pname: int | str, value: Any) -> None:
        """``glTexParameter*``: a sampler parameter changes the texture's built-in sampler
        (CreateSamplerState for a parameter set not cached yet; the GL defaults are NULL), then
        SetTextureParams names it; level / LOD / swizzle parameters go in SetTextureParams."""
        name = _TEX_PNAMES.get(pname, pname) if isinstance(pname, int) else pname
        if name not in _TEX_PNAME_SET:
            raise ClientError(f"tex_parameter: unknown pname {pname!r}")
        if tex.target == "Renderbuffer":
            raise ClientError("tex_parameter: a renderbuffer has no texture parameters")
        if name in ("base_level", "max_level"):
            if int(value) < 0:
                raise ClientError(f"tex_parameter: {name} {value} is negative")
            setattr(tex, name, int(value))
        elif name == "lod_bias":
            tex.lod_bias = float(value)
            tex.params["lodBias"] = float(value)
        else:
            tex.params.update(_sampler_params(name, value, "tex_parameter"))
            if name == "min_lod":
                tex.min_lod = float(value)
            elif name == "max_lod":
                tex.max_lod = float(value)
        old = tex.sampler
        params = _sampler_bytes(tex.params)
        tex.sampler = self._samplers.acquire(params, builtin=True)
        self._samplers.release(old, builtin=True)
        self._texture_params(tex)
        if old != tex.sampler:
            self.tr.mark_units(*[u for u, (t, _s) in self.tr.units.items() if t is tex])

    def generate_mipmap(self, tex: Texture) -> None:
        """``glGenerateMipmap``: GenerateMipmap {Res, Target, BaseLevel, LevelCount}."""
        if tex.target == "Renderbuffer":
            raise ClientError("generate_mipmap: a renderbuffer has no mip levels")
        self.tr.validate("GenerateMipmap")
        base = min(tex.base_level, tex.levels - 1)
        top = min(tex.max_level, tex.levels - 1)
        self.em.emit("GenerateMipmap", {"Res": tex.handle, "Target": self._target(tex.target),
                                        "BaseLevel": base, "LevelCount": top - base + 1})  # fmt: skip

    def delete_texture(self, tex: Texture) -> None:
        live("delete_texture", tex, self.tr.alloc)
        self.tr.textures_pending.pop(tex.handle, None)
        for unit, (t, s) in list(self.tr.units.items()):
            if t is tex:
                self.tr.units[unit] = (None, s)
                self.tr.mark_units(unit)
        if not tex.view.is_null:  # the view dies before its storage owner
            self.tr.death("SamplerViewCso", tex.view, "DeleteSamplerView")
        self._samplers.release(tex.sampler, builtin=True)
        self._unbind_from_compute_points(tex)
        kind = "Renderbuffer" if tex.target == "Renderbuffer" else "Texture"
        self.tr.death(kind, tex.handle, "ResourceDestroy")

    # -- samplers ------------------------------------------------------------
    def create_sampler(self, **params: Any) -> Handle:
        """A sampler object with these ``SamplerParameters`` members (an enumerator name reads
        through the member's enum); equal parameter sets share one cached SamplerCso."""
        for k in params:
            _sampler_member(k)
        return self._samplers.acquire(_sampler_bytes(params))

    def sampler_parameter(self, sampler: Handle, pname: int | str, value: Any) -> Handle:
        """``glSamplerParameter*`` on a sampler object: a content-addressed cache means a new
        parameter set is another CSO; the returned handle replaces ``sampler`` on every unit it
        was bound to (use it from now on)."""
        if sampler not in self._samplers:
            raise ClientError(f"sampler_parameter: {sampler} is no live sampler")
        name = _TEX_PNAMES.get(pname, pname) if isinstance(pname, int) else pname
        if name not in _TEX_PNAME_SET or name in ("base_level", "max_level"):
            raise ClientError(f"sampler_parameter: unknown pname {pname!r}")
        params = dict(self._sampler_params[sampler]) if sampler in self._sampler_params else {}
        params.update({"lodBias": float(value)} if name == "lod_bias"
                      else _sampler_params(name, value, "sampler_parameter"))  # fmt: skip
        new = self._samplers.acquire(_sampler_bytes(params))
        self._sampler_params[new] = params
        self._samplers.release(sampler)
        for unit, (t, s) in list(self.tr.units.items()):
            if s == sampler:
                self.tr.units[unit] = (t, new)
                self.tr.mark_units(unit)
        return new

    def delete_sampler(self, h: Handle) -> None:
        for unit, (t, s) in list(self.tr.units.items()):
            if s == h:
                self.tr.units[unit] = (t, NULL)
                self.tr.mark_units(unit)
        if h in self._samplers:
            refs, builtin = self._samplers.refs(h)
            self._samplers.release(h)
            if refs <= 1 and not builtin:
                self._samplers.drop(h)
        self.tr.mark_units()

    def _mint_sampler(self, params: bytes) -> Handle:
        h = self.tr.alloc["SamplerCso"].alloc()
        self.em.emit("CreateSamplerState", {"Cso": h}, blob=params)
        return h

    def _kill_sampler(self, h: Handle) -> None:
        self._sampler_params.pop(h, None)
        self.tr.death("SamplerCso", h, "DeleteSamplerState")

    @property
    def sampler_cache(self) -> SamplerCache:
        return self._samplers

    def bind_texture(self, unit: int, tex: Texture | None) -> None:
        self._check_unit(unit, "bind_texture")
        if tex is not None:
            live("bind_texture", tex, self.tr.alloc)
        self.tr.units[unit] = (tex, self.tr.units.get(unit, (None, NULL))[1])
        self.tr.active_unit = unit
        self.tr.mark_units(unit)
        self.tr.touch("context_values")

    def bind_sampler(self, unit: int, sampler: Handle) -> None:
        self._check_unit(unit, "bind_sampler")
        if not sampler.is_null and sampler not in self._samplers:
            raise ClientError(f"bind_sampler: {sampler} is no live sampler")
        self.tr.units[unit] = (self.tr.units.get(unit, (None, NULL))[0], sampler)
        self.tr.mark_units(unit)

    @staticmethod
    def _check_unit(unit: int, what: str) -> None:
        top = int(_t.constant("kMGPipeMaxTextureUnits"))
        if not 0 <= unit < top:
            raise ClientError(f"{what}: unit {unit} outside 0..{top - 1}")

    # -- program -------------------------------------------------------------
    def create_program(self, spirv: Mapping[int, bytes], reflection: bytes = b"", *,
                       uniforms: Mapping[str, tuple[int | None, str]] | None = None) -> Program:  # fmt: skip
        """A linked program. Nothing leaves now: CreateShaderState, SetProgramBindings,
        BindShaderState, SetDrawProgram and SetDispatchProgram go at the first validate that
        uses it (SPIR-V and reflection are opaque bytes here). The default block's layout is
        ``uniforms`` ({name: (byte offset, glsl type)}; a sampler's offset is None) or the
        reflection JSON's ``default_block`` rows ({name, type, offset})."""
        layout: dict[str, tuple[int | None, str]] = dict(uniforms or {})
        refl = reflection_record("create_program", reflection) if reflection and not uniforms else {}
        prog = Program(self.tr.alloc["ShaderCso"].alloc(), dict(spirv), bytes(reflection))
        if not uniforms:
            for row in refl.get("default_block", ()):
                layout[row["name"]] = (row.get("offset"), row["type"])
            for row in refl.get("samplers", ()):
                layout.setdefault(row["name"], (None, row.get("type", "sampler2D")))
        size = 0
        for loc, (name, (offset, gl_type)) in enumerate(layout.items()):
            if gl_type not in _UNIFORM_TYPES and not gl_type.startswith(("sampler", "isampler", "usampler")):
                raise ClientError(f"create_program: uniform {name!r} has unknown type {gl_type!r}")
            if gl_type in _UNIFORM_TYPES:
                if offset is None or offset < 0:
                    raise ClientError(f"create_program: uniform {name!r} has no offset")
                size = max(size, offset + _uniform_size(gl_type))
                prog.uniforms[name] = (loc, offset, gl_type)
            else:
                prog.uniforms[name] = (loc, -1, gl_type)
        prog.block = bytearray(-(-size // 16) * 16)
        if isinstance(refl, dict):
            prog.block_bindings = [int(b.get("binding", -1)) for b in refl.get("uniforms", ())]
        return prog

    def uniform(self, prog: Program, name: str, *values: float | int) -> None:
        """``glUniform{1,2,3,4}{f,i,ui}``; a sampler takes one int, its texture unit."""
        loc, offset, gl_type = self._uniform_slot(prog, name, "uniform")
        if offset < 0:  # a sampler: its unit feeds SetProgramBindings
            if len(values) != 1 or not isinstance(values[0], int):
                raise ClientError(f"uniform: sampler {name!r} takes one int unit")
            self._check_unit(values[0], "uniform")
            if prog.sampler_units.get(loc) != values[0]:
                prog.sampler_units[loc] = values[0]
                prog.bindings_version += 1
                self.tr.touch("program")
            return
        fmt, n, cols = _UNIFORM_TYPES[gl_type]
        if cols != 1:
            raise ClientError(f"uniform: {name!r} is a {gl_type}: use uniform_matrix")
        if len(values) != n:
            raise ClientError(f"uniform: {name!r} is a {gl_type} ({n} values), got {len(values)}")
        self._write_block(prog, offset, struct.pack(f"<{n}{fmt}", *values))

    def uniform_matrix(self, prog: Program, name: str, values: Any, transpose: bool = False) -> None:
        """``glUniformMatrix{2,3,4}fv``: ``values`` column major (row major with transpose)."""
        _loc, offset, gl_type = self._uniform_slot(prog, name, "uniform_matrix")
        if offset < 0 or _UNIFORM_TYPES[gl_type][2] == 1:
            raise ClientError(f"uniform_matrix: {name!r} is a {gl_type}, not a matrix")
        _fmt, rows, cols = _UNIFORM_TYPES[gl_type]
        m = np.asarray(values, np.float32).ravel()
        if m.size != rows * cols:
            raise ClientError(f"uniform_matrix: {name!r} takes {rows * cols} values, got {m.size}")
        m = m.reshape(cols, rows) if not transpose else m.reshape(rows, cols).T
        data = b"".join(col.tobytes() + bytes(16 - 4 * rows) for col in m)  # vec4 columns
        self._write_block(prog, offset, data)

    def _uniform_slot(self, prog: Program, name: str, what: str) -> tuple[int, int, str]:
        try:
            return prog.uniforms[name]
        except KeyError:
            raise ClientError(f"{what}: the program has no uniform {name!r}") from None

    def _write_block(self, prog: Program, offset: int, data: bytes) -> None:
        if prog.block[offset: offset + len(data)] != data:
            prog.block[offset: offset + len(data)] = data
            prog.version += 1
            self.tr.touch("constants")

    def uniform_block_binding(self, prog: Program, block_index: int, binding: int) -> None:
        """``glUniformBlockBinding``: a post-link binding change (SetProgramBindings)."""
        top = int(_t.constant("kMGPipeMaxBufferBindingPoints"))
        if not 0 <= block_index < len(prog.block_bindings):
            raise ClientError(f"uniform_block_binding: block {block_index} outside "
                              f"0..{len(prog.block_bindings) - 1}")  # fmt: skip
        if not 0 <= binding < top:
            raise ClientError(f"uniform_block_binding: binding {binding} outside 0..{top - 1}")
        if prog.block_bindings[block_index] != binding:
            prog.block_bindings[block_index] = binding
            prog.bindings_version += 1
            self.tr.touch("program")

    def use_program(self, prog: Program | None) -> None:
        if prog is not None:
            live("use_program", prog, self.tr.alloc)
        self.tr.program = prog
        self.tr.touch("program", "constants", "shader_buffers")  # the writable mask reads it

    def delete_program(self, prog: Program) -> None:
        live("delete_program", prog, self.tr.alloc)
        if self.tr.program is prog:
            self.tr.program = None
        if prog.created:
            self.tr.death("ShaderCso", prog.handle, "DeleteShaderState")
        else:  # never on the wire: nothing to delete there
            self.tr.alloc["ShaderCso"].free(prog.handle)
            self.tr.touch("program")

    # -- vertex input --------------------------------------------------------
    def vertex_attrib_pointer(self, index: int, buf: Any, size: int, gl_type: int = GL_FLOAT,
                              normalized: bool = False, stride: int = 0, offset: int = 0,
                              divisor: int = 0) -> None:  # fmt: skip
        """``glVertexAttribPointer`` (+ ``glVertexAttribDivisor``: 0 per vertex, n per n instances);
        ``buf`` a Buffer, or client memory (bytes / an array: a client vertex array, draws.py)."""
        if not isinstance(buf, Buffer):
            return self._client_array_pointer(index, buf, size, gl_type, normalized, stride,
                                              offset, divisor)  # fmt: skip
        live("vertex_attrib_pointer", buf, self.tr.alloc)
        self._forget_client_array(index)
        self.tr.attribs[index] = Attrib(buf.handle, size, gl_type, normalized, stride, offset,
                                        divisor)  # fmt: skip
        self.tr.touch("vertex")

    def vertex_attrib(self, index: int, *values: float | int, value_class: str = "float") -> None:
        """``glVertexAttrib{1,2,3,4}f`` / ``glVertexAttribI4{i,ui}``: the current value of a
        disabled attribute (missing components are GL's 0, 0, 0, 1); SetVertexAttribDefaults."""
        top = int(_t.constant("kMGPipeMaxVertexAttribs"))
        if not 0 <= index < top:
            raise ClientError(f"vertex_attrib: index {index} outside 0..{top - 1}")
        if not 1 <= len(values) <= 4:
            raise ClientError(f"vertex_attrib: 1 to 4 values, got {len(values)}")
        classes = ("float", "int", "uint")
        if value_class not in classes:
            raise ClientError(f"vertex_attrib: value class {value_class!r}")
        fill = (0, 0, 0, 1)
        full = list(values) + list(fill[len(values):])
        dt = {"float": np.float32, "int": np.int32, "uint": np.uint32}[value_class]
        bits = tuple(np.array(full, dt).view(np.uint32).tolist())
        self.tr.attrib_values[index] = (value_class.title(), bits)
        self.tr.touch("attrib_defaults")

    def disable_vertex_attrib(self, index: int) -> None:
        self._forget_client_array(index)
        self.tr.attribs.pop(index, None)
        self.tr.touch("vertex")

    def bind_index_buffer(self, buf: Buffer | None) -> None:
        if buf is not None:
            live("bind_index_buffer", buf, self.tr.alloc)
        self.tr.index_buffer = buf
        self.tr.touch("vertex")

    # -- framebuffers --------------------------------------------------------
    def create_framebuffer(self) -> Framebuffer:
        return Framebuffer(self.tr.alloc["Framebuffer"].alloc())

    def framebuffer_texture(
        self, fb: Framebuffer, index: int, tex: Texture, level: int = 0, *,
        layer: int | None = None, face: int | None = None,
    ) -> None:
        """Colour attachment ``index``: a texture level (one ``layer`` of an array / 3D texture,
        one ``face`` of a cube: ``glFramebufferTextureLayer`` / ``...2D(CUBE_MAP_POSITIVE_X +
        face)``) or a renderbuffer (level 0)."""
        if not 0 <= index < int(_t.constant("kMGMaxDrawBuffers")):
            raise ClientError(f"framebuffer_texture: colour attachment {index} out of range")
        live("framebuffer_texture", tex, self.tr.alloc)
        if not 0 <= level < max(tex.levels, 1):
            raise ClientError(f"framebuffer_texture: level {level} outside 0..{tex.levels - 1}")
        z = 0
        if face is not None:
            if tex.target != "TexCube" or not 0 <= face < 6:
                raise ClientError(f"framebuffer_texture: face {face} of a {tex.target}")
            z = face
        elif layer is not None:
            top = max(tex.depth >> level, 1) if tex.target == "Tex3D" else tex.layers
            if tex.target not in ("Tex2DArray", "Tex3D") or not 0 <= layer < top:
                raise ClientError(f"framebuffer_texture: layer {layer} of a {tex.target}")
            z = layer
        elif tex.target in ("TexCube", "Tex2DArray", "Tex3D"):
            raise ClientError(f"framebuffer_texture: a {tex.target} attaches one layer / face")
        fb.color[index] = (tex, level)
        fb.layer[index] = z
        self.tr.touch("framebuffer")

    def framebuffer_depth_stencil(self, fb: Framebuffer, depth: Texture | None,
                                  stencil: Texture | None = None) -> None:  # fmt: skip
        """Depth and stencil attachments (one packed renderbuffer may be both)."""
        fb.depth = (depth, 0) if depth is not None else None
        fb.stencil = (stencil, 0) if stencil is not None else None
        self.tr.touch("framebuffer")

    def read_buffer(self, fb: Framebuffer, index: int) -> None:
        """``glReadBuffer(GL_COLOR_ATTACHMENT0 + index)`` of ``fb``."""
        if index not in fb.color:
            raise ValueError(f"read_buffer: colour attachment {index} is empty")
        fb.read = index
        self.tr.touch("framebuffer")

    def create_renderbuffer(self, width: int, height: int, internal_format: int,
                            samples: int = 0) -> Texture:  # fmt: skip
        """A renderbuffer (``glRenderbufferStorage[Multisample]``); delete it with
        :meth:`delete_texture`."""
        if width <= 0 or height <= 0:
            raise ClientError(f"create_renderbuffer: extent {width}x{height} is empty")
        if samples < 0:
            raise ClientError(f"create_renderbuffer: {samples} samples")
        rb = Texture(self.tr.alloc["Renderbuffer"].alloc(), "Renderbuffer",
                     internal_format, width, height, 1)  # fmt: skip
        rb.samples = samples
        self.em.emit("ResourceCreate", self.tr.texture_desc(rb, storage=False))
        self.em.emit("ResourceRespecify", self.tr.texture_desc(rb))
        return rb

    def bind_framebuffer(self, fb: Framebuffer | None, target: str = "both") -> None:
        """``glBindFramebuffer``: ``target`` "both" (GL_FRAMEBUFFER), "draw" or "read"."""
        if target not in ("both", "draw", "read"):
            raise ClientError(f"bind_framebuffer: target {target!r} (both, draw or read)")
        if target in ("both", "draw"):
            self.tr.draw_fbo = fb
        if target in ("both", "read"):
            self.tr.read_fbo = fb
        self.tr.touch("framebuffer")

    def delete_framebuffer(self, fb: Framebuffer) -> None:
        if self.tr.draw_fbo is fb:
            self.tr.draw_fbo = None
        if self.tr.read_fbo is fb:
            self.tr.read_fbo = None
        self.tr.death("Framebuffer", fb.handle, None)

    def blit_framebuffer(self, sx0: int, sy0: int, sx1: int, sy1: int, dx0: int, dy0: int,
                         dx1: int, dy1: int, mask: int = GL_COLOR_BUFFER_BIT,
                         filter: int = GL_NEAREST) -> None:  # fmt: skip
        """``glBlitFramebuffer`` from the read framebuffer to the draw framebuffer (an MSAA
        resolve when the read side is multisampled)."""
        if mask & ~(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT) or not mask:
            raise ClientError(f"blit_framebuffer: mask {mask:#x}")
        if filter not in (GL_NEAREST, GL_LINEAR):
            raise ClientError(f"blit_framebuffer: filter {filter:#x} (GL_NEAREST or GL_LINEAR)")
        if filter == GL_LINEAR and mask & (GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT):
            raise ClientError("blit_framebuffer: depth / stencil blits filter GL_NEAREST only")
        tr = self.tr
        tr.cso.validate(tr.rs)  # a blit is scissored: the server needs the scissor state now
        tr.validate("Blit")
        dfb = default_framebuffer()
        self.em.emit("Blit", {
            "ReadFbo": tr.read_fbo.handle if tr.read_fbo else dfb,
            "DrawFbo": tr.draw_fbo.handle if tr.draw_fbo else dfb,
            "SrcX0": sx0, "SrcY0": sy0, "SrcX1": sx1, "SrcY1": sy1,
            "DstX0": dx0, "DstY0": dy0, "DstX1": dx1, "DstY1": dy1,
            "Mask": mask, "Filter": filter,
        })  # fmt: skip

    # -- verbs -----------------------------------------------------------------
    def draw_arrays(self, mode: int, first: int, count: int, instances: int = 1,
                    base_instance: int = 0) -> None:  # fmt: skip
        mi, mv = self._draw_limits
        try:  # the whole check without a call: ints (a float / None has no |) in 0..2^32-1
            ok = (mode in _DRAW_MODES and 0 <= (first | count | instances | base_instance) <= _U32
                  and instances <= mi and count * (instances or 1) <= mv)  # fmt: skip
        except TypeError:
            ok = False
        if not ok:  # which one, by name (or, past a budget, ResourceLimit)
            self._draw_args("draw_arrays", mode, first, count, instances, base_instance)
        if self._client_arrays:  # client vertex arrays: their bytes ship first (draws.py)
            return self._draw_client(mode, first, count, instances, base_instance)
        if self._persistent:  # live persistent maps push their blocks at validate (§12)
            self.push_persistent()
        self._validate_draw()  # inlined (the end of this module)
        tr = self.tr
        if tr.xfb is not None and tr.xfb.active:
            self._xfb_check(mode)
        self._draw_vbo(mode, instances, base_instance, tr.rs.restart_index, 1, first, count)
        if tr.writable_points or tr.xfb is not None:  # no call on a draw that writes nothing
            self._after_draw(mode, count, instances)

    def draw_elements(self, mode: int, count: int, index_size: int, offset: int = 0,
                      instances: int = 1, base_vertex: int = 0,
                      base_instance: int = 0, indices: Any = None) -> None:  # fmt: skip
        """``glDrawElements``: from the bound index buffer at byte ``offset``, or from a user
        index array ``indices`` (client memory, byte ``offset`` into it; draws.py)."""
        mi, mv = self._draw_limits
        try:
            ok = (mode in _DRAW_MODES and 0 <= (offset | count | instances | base_instance) <= _U32
                  and instances <= mi and count * (instances or 1) <= mv)  # fmt: skip
        except TypeError:
            ok = False
        if not ok:
            self._draw_args("draw_elements", mode, offset, count, instances, base_instance)
        if indices is not None or self._client_arrays:
            return self._draw_elements_client(mode, count, index_size, offset, indices,
                                              instances, base_vertex, base_instance)  # fmt: skip
        tr = self.tr
        if tr.index_buffer is None:
            raise ClientError("draw_elements with no index buffer bound", "GL_INVALID_OPERATION")
        if index_size not in (1, 2, 4):
            raise ClientError(f"draw_elements: index size {index_size} (1, 2 or 4 bytes)")
        if offset % index_size:
            raise ValueError(f"index offset {offset} is not a multiple of {index_size}")
        if self._persistent:
            self.push_persistent()
        self._validate_draw()  # inlined (the end of this module)
        if tr.xfb is not None and tr.xfb.active:
            self._xfb_check(mode)
        ib = tr.index_buffer.handle
        p, restart, flags = tr.rs.p, tr.rs.restart_index, 0
        if p["PrimitiveRestartFixedIndexEnabled"]:  # GL: the index type's maximum
            restart, flags = (1 << (8 * index_size)) - 1, self._restart_flag
        elif p["PrimitiveRestartEnabled"]:
            flags = self._restart_flag
        self._draw_indexed(mode, index_size, flags, instances, base_instance, restart, ib[0],
                           ib[1], 1, offset // index_size, count, base_vertex)  # fmt: skip
        if tr.writable_points or tr.xfb is not None:  # no call on a draw that writes nothing
            self._after_draw(mode, count, instances)

    @staticmethod
    def _draw_args(what: str, mode: Any, first: Any, count: Any, instances: Any,
                   base_instance: Any) -> None:  # fmt: skip
        """GL's draw errors (mode, negative counts) and the draw budgets, on the client."""
        draw_mode(what, mode)
        for name, v in (("first", first), ("count", count), ("instances", instances),
                        ("base_instance", base_instance)):  # fmt: skip
            count_arg(what, name, v)
        _budgets.client_draw(what, count, instances)

    def clear(self, mask: int = GL_COLOR_BUFFER_BIT) -> None:
        self.tr.validate("Clear")
        p = self.state.p
        fb = self.tr.draw_fbo.handle if self.tr.draw_fbo else default_framebuffer()
        color = p["ClearColor"]  # a FloatVec4: its components' bits go as ColorValue
        self.em.emit("Clear", {
            "Kind": _t.constant("kMGPipeClearKindWhole"), "BufferMask": mask,
            # a whole clear names no one draw buffer (glClearBuffer does)
            "DrawBufferIndex": _t.constant("kMGPipeClearDrawBufferAll"),
            "ValueClass": _t.constant("kMGPipeClearValueClassFloat"),
            "ColorValue": np.array([color[c] for c in color.dtype.names],
                                   np.float32).view(np.uint32).tolist(),
            "DepthValue": float(p["ClearDepth"]), "StencilValue": int(p["ClearStencil"]),
            "Fbo": fb,
        })  # fmt: skip

    def clear_buffer(self, buffer: int | str, draw_buffer: int, values: Any, *,
                     value_class: str = "float") -> None:
        """``glClearBuffer{f,i,ui,fi}v``: ``buffer`` GL_COLOR / GL_DEPTH / GL_STENCIL /
        GL_DEPTH_STENCIL (or "color" ...); ``values`` 4 colour components (of
        ``value_class`` "float" | "int" | "uint"), (depth,), (stencil,) or (depth, stencil)."""
        name = _CLEAR_BUFFERS.get(buffer, buffer) if isinstance(buffer, int) else buffer
        if name not in ("color", "depth", "stencil", "depth_stencil"):
            raise ClientError(f"clear_buffer: buffer {buffer!r}")
        if value_class not in ("float", "int", "uint"):
            raise ClientError(f"clear_buffer: value class {value_class!r}")
        vals = list(values)
        payload: dict[str, Any] = {"DepthValue": 0.0, "StencilValue": 0}
        if name == "color":
            if not 0 <= draw_buffer < int(_t.constant("kMGMaxDrawBuffers")):
                raise ClientError(f"clear_buffer: draw buffer {draw_buffer} out of range")
            if len(vals) != 4:
                raise ClientError(f"clear_buffer: a colour takes 4 values, got {len(vals)}")
            dt = {"float": np.float32, "int": np.int32, "uint": np.uint32}[value_class]
            payload |= {"ColorValue": np.array(vals, dt).view(np.uint32).tolist(),
                        "BufferMask": GL_COLOR_BUFFER_BIT,
                        "ValueClass": _t.constant(f"kMGPipeClearValueClass{value_class.title()}")}  # fmt: skip
        else:
            if draw_buffer != 0:
                raise ClientError(f"clear_buffer: {name} takes draw buffer 0, got {draw_buffer}")
            want = 2 if name == "depth_stencil" else 1
            if len(vals) != want:
                raise ClientError(f"clear_buffer: {name} takes {want} values, got {len(vals)}")
            if name in ("depth", "depth_stencil"):
                payload["DepthValue"] = float(vals[0])
            if name in ("stencil", "depth_stencil"):
                payload["StencilValue"] = int(vals[-1])
            payload["BufferMask"] = {"depth": GL_DEPTH_BUFFER_BIT, "stencil": GL_STENCIL_BUFFER_BIT,
                                     "depth_stencil": GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT}[name]
            payload["ValueClass"] = _t.constant("kMGPipeClearValueClassFloat")
        kind = {"color": "Color", "depth": "Depth", "stencil": "Stencil",
                "depth_stencil": "DepthStencil"}[name]  # fmt: skip
        self.tr.validate("Clear")
        fb = self.tr.draw_fbo.handle if self.tr.draw_fbo else default_framebuffer()
        self.em.emit("Clear", dict(payload, Kind=_t.constant(f"kMGPipeClearKind{kind}"),
                                   DrawBufferIndex=draw_buffer, Fbo=fb))  # fmt: skip

    def present(self) -> int:
        """Present the default framebuffer; returns the 1-based frame serial, or
        :data:`EGL_CONTEXT_LOST` once the device is lost (the call then did nothing)."""
        self.tr.validate("Present")
        self.frame_serial += 1
        seq = self.em.emit("Present", {"FrameSerial": self.frame_serial})
        # present credit (seed 001 §11.6): at most ``present_credit`` presents in flight --
        # wait for the present ``credit`` frames back (credit 0, or a frame whose staged
        # bytes used the whole stage segment: this one)
        credit = self.present_credit
        self._present_seqs.append(seq)
        stage = self.em.stage
        back = seq if credit == 0 or stage.wide else (
            self._present_seqs[-1 - credit] if len(self._present_seqs) > credit else 0)  # fmt: skip
        del self._present_seqs[: -1 - credit]
        if back:
            if self.link is not None:
                self.link.credit_wait(back)
            else:
                self.transport.wait_applied(back)
        if self.device_lost:
            return EGL_CONTEXT_LOST
        # the next frame's stage window (deterministic: the same on every transport)
        stage.region((self.frame_serial + 1) % (credit + 1), credit + 1)
        return self.frame_serial

    @property
    def device_lost(self) -> bool:
        """The transport latched device-lost (its server process died or refused a record)."""
        return bool(getattr(self.transport, "lost", False))

    def get_graphics_reset_status(self) -> int:
        """``glGetGraphicsResetStatus``: ``GL_UNKNOWN_CONTEXT_RESET`` once the device is lost."""
        return GL_UNKNOWN_CONTEXT_RESET if self.device_lost else GL_NO_ERROR

    # -- lifetime --------------------------------------------------------------
    def close(self) -> None:
        """Drain and stop the transport (context teardown releases the cached CSOs first)."""
        self.tr.cso.release_all()
        self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        if et is None:
            self.close()
        else:
            try:
                self.transport.close()
            except Exception:  # the original error wins
                pass

    @staticmethod
    def _target(name: str) -> int:
        return _t.enum("MGPipeResourceTarget")[name]


def _storage(name: str) -> int:
    """``MGPResourceDesc.StorageKind``: the tables' ``TextureStorageType`` (Mipmap, Buffer)."""
    return _t.enum("TextureStorageType")[name]


def _sampler_dtype() -> np.dtype:
    return layouts.dtype("SamplerParameters")


def _sampler_member(name: str) -> dict:
    for m in _t.struct_info("SamplerParameters")["members"]:
        if m["name"] == name:
            return m
    raise ValueError(f"SamplerParameters has no member {name!r}")


def _program_stage_count() -> int:
    info = _t.struct_info("MGPProgramDesc")
    return next(int(m["count"]) for m in info["members"] if m["name"] == "Spirv")


#: create_texture's targets -> MGPipeResourceTarget names
_TEX_TARGETS = {"2d": "Tex2D", "cube": "TexCube", "3d": "Tex3D", "2d_array": "Tex2DArray"}
_TEX_PNAMES = {
    GL_TEXTURE_MIN_FILTER: "min_filter", GL_TEXTURE_MAG_FILTER: "mag_filter",
    GL_TEXTURE_WRAP_S: "wrap_s", GL_TEXTURE_WRAP_T: "wrap_t", GL_TEXTURE_WRAP_R: "wrap_r",
    GL_TEXTURE_MIN_LOD: "min_lod", GL_TEXTURE_MAX_LOD: "max_lod",
    GL_TEXTURE_BASE_LEVEL: "base_level", GL_TEXTURE_MAX_LEVEL: "max_level",
    GL_TEXTURE_LOD_BIAS: "lod_bias", GL_TEXTURE_COMPARE_MODE: "compare_mode",
    GL_TEXTURE_COMPARE_FUNC: "compare_func", GL_TEXTURE_BORDER_COLOR: "border_color",
    GL_TEXTURE_MAX_ANISOTROPY: "max_anisotropy",
}  # fmt: skip
_TEX_PNAME_SET = frozenset(_TEX_PNAMES.values())
#: GL filter enum -> (SamplerFilterMode, SamplerMipmapMode) names
_MIN_FILTERS = {
    GL_NEAREST: ("Nearest", "None"), GL_LINEAR: ("Linear", "None"),
    GL_NEAREST_MIPMAP_NEAREST: ("Nearest", "Nearest"), GL_LINEAR_MIPMAP_NEAREST: ("Linear", "Nearest"),
    GL_NEAREST_MIPMAP_LINEAR: ("Nearest", "Linear"), GL_LINEAR_MIPMAP_LINEAR: ("Linear", "Linear"),
}  # fmt: skip
_WRAPS = {GL_REPEAT: "Repeat", GL_CLAMP_TO_EDGE: "ClampToEdge",
          GL_MIRRORED_REPEAT: "MirroredRepeat", GL_CLAMP_TO_BORDER: "ClampToBorder"}  # fmt: skip
#: GL_NEVER .. GL_ALWAYS (0x0200 + i) in GL's order, by SamplerCompareFunc name
_COMPARE_FUNCS = ("Never", "Less", "Equal", "LessEqual", "Greater", "NotEqual", "GreaterEqual",
                  "Always")  # fmt: skip
_BUFFER_TARGETS = {0x8A11: "uniform", 0x90D2: "storage",  # GL_UNIFORM_BUFFER, GL_SHADER_STORAGE_BUFFER
                   0x92C0: "atomic_counter", 0x8C8E: "transform_feedback"}  # fmt: skip
_CLEAR_BUFFERS = {GL_COLOR: "color", GL_DEPTH: "depth", GL_STENCIL: "stencil",
                  GL_DEPTH_STENCIL: "depth_stencil"}  # fmt: skip
#: GL ES 3.2's initial sampler state (glTexParameter / glSamplerParameter tables)
_SAMPLER_DEFAULTS: dict[str, Any] = {
    "wrapS": "Repeat", "wrapT": "Repeat", "wrapR": "Repeat", "minFilter": "Nearest",
    "magFilter": "Linear", "mipmapMode": "Linear", "minLod": -1000.0, "maxLod": 1000.0,
    "lodBias": 0.0, "maxAnisotropy": 1.0, "compareFunc": "LessEqual", "compareMode": "None",
}  # fmt: skip
#: glsl type -> (struct format, components per column, columns)
_UNIFORM_TYPES: dict[str, tuple[str, int, int]] = {
    "float": ("f", 1, 1), "vec2": ("f", 2, 1), "vec3": ("f", 3, 1), "vec4": ("f", 4, 1),
    "int": ("i", 1, 1), "ivec2": ("i", 2, 1), "ivec3": ("i", 3, 1), "ivec4": ("i", 4, 1),
    "uint": ("I", 1, 1), "uvec2": ("I", 2, 1), "uvec3": ("I", 3, 1), "uvec4": ("I", 4, 1),
    "bool": ("i", 1, 1), "bvec2": ("i", 2, 1), "bvec3": ("i", 3, 1), "bvec4": ("i", 4, 1),
    "mat2": ("f", 2, 2), "mat3": ("f", 3, 3), "mat4": ("f", 4, 4),
}  # fmt: skip


def _uniform_size(gl_type: str) -> int:
    _fmt, n, cols = _UNIFORM_TYPES[gl_type]
    return 4 * n if cols == 1 else 16 * cols  # a matrix: one vec4 per column (std140)


def _sampler_params(name: str, value: Any, what: str) -> dict[str, Any]:
    """A glTexParameter / glSamplerParameter pname and GL value -> SamplerParameters members."""
    try:
        if name == "min_filter":
            f, m = _MIN_FILTERS[value]
            return {"minFilter": f, "mipmapMode": m}
        if name == "mag_filter":
            return {"magFilter": _MIN_FILTERS[value][0] if value in (GL_NEAREST, GL_LINEAR) else {}[value]}
        if name.startswith("wrap_"):
            return {"wrap" + name[-1].upper(): _WRAPS[value]}
        if name == "compare_mode":
            return {"compareMode": {0: "None", GL_COMPARE_REF_TO_TEXTURE: "CompareToTexture"}[value]}
        if name == "compare_func":
            return {"compareFunc": _COMPARE_FUNCS[value - 0x0200] if 0x0200 <= value <= 0x0207 else {}[value]}
    except (KeyError, TypeError):
        raise ClientError(f"{what}: {name} {value!r} is no GL value of it") from None
    if name in ("min_lod", "max_lod", "max_anisotropy"):
        member = {"min_lod": "minLod", "max_lod": "maxLod", "max_anisotropy": "maxAnisotropy"}[name]
        return {member: float(value)}
    if name == "border_color":
        vals = [float(v) for v in value]
        if len(vals) != 4:
            raise ClientError(f"{what}: border_color takes 4 values")
        return {"borderColor": tuple(vals)}
    raise ClientError(f"{what}: unknown pname {name!r}")


def _sampler_bytes(params: Mapping[str, Any]) -> bytes:
    """The SamplerParameters bytes of GL's defaults overridden by ``params``."""
    rec = np.zeros(1, _sampler_dtype())[0]
    for k, v in {**_SAMPLER_DEFAULTS, **params}.items():  # a name reads through its enum
        rec[k] = _t.enum(_sampler_member(k)["type"])[v] if isinstance(v, str) else v
    return rec.tobytes()


#: the direct draws with the draw's validate -- its gate, the CSO cache's validate and the
#: stage copy of the dynamic push -- in their own frame (the steady-state draw's calls
#: saved: :mod:`.inline`; each stays written once, in draws.py, cso_cache.py, stage.py)
_VALIDATE_INLINE = (("cso.validate(rs)", RenderStateCsoCache, "validate",
                     (("off, size, seg = stage.stage(data)", StageSegment, "stage"),)),)  # fmt: skip
for _name in ("draw_arrays", "draw_elements"):
    setattr(Client, _name, inline_call(getattr(Client, _name), "self._validate_draw()", Client,
                                       "_validate_draw", inner=_VALIDATE_INLINE))  # fmt: skip
