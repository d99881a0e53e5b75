"""The GL-like client API that scenes are written against (client role of the runtime).

State setters (``enable``, ``viewport``, ``blend_func`` ... and everything on
:attr:`Client.state`, the :class:`RenderState`) emit nothing; resource ops the monolith
dispatches at GL-call time (buffer create / data / subdata) emit at once; texture uploads
accumulate; each verb runs ``Tracker.validate`` and then emits itself. Handles are minted
here, per kind; a death sends the delete record, forwards the death, then frees the slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

import numpy as np

from ..schema import layouts
from ..schema import tables as _t
from ..transport.base import Sink, Transport
from ..transport.registry import DEFAULT_RING, TRANSPORTS, make_transport
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.stage import StageSegment
from .emitter import Emitter
from .render_state import RenderState
from .tracker import Attrib, Buffer, Framebuffer, Program, Texture, Tracker

__all__ = ["TRANSPORTS", "Client", "make_transport"]

GL_COLOR_BUFFER_BIT = 0x4000
GL_DEPTH_BUFFER_BIT = 0x0100
GL_TRIANGLES = 0x0004
GL_RGBA8 = 0x8058
GL_FLOAT = 0x1406
GL_NO_ERROR = 0
GL_UNKNOWN_CONTEXT_RESET = 0x8255
#: What :meth:`Client.present` returns once the device is lost (``EGL_CONTEXT_LOST``).
EGL_CONTEXT_LOST = 0x300E


class Client:
    """One context, one flow: GL-like calls in, MGPipe records out."""

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
    ) -> None:
        self.transport = (make_transport(transport, sink, ring_capacity)
                          if isinstance(transport, str) else transport)  # fmt: skip
        self.em = Emitter(self.transport, stage)
        self.tr = Tracker(self.em, width=width, height=height, whole_block=whole_block)
        #: DrawVbo with one MGPDrawRange, packed straight into the transport (names in
        #: MGPDrawInfo's memory order: the packer's one-C-call path)
        self._draw_vbo = self.em.fast(
            "DrawVbo",
            ("Mode", "IndexSize", "InstanceCount", "RestartIndex", "IndexResource.Slot",
             "IndexResource.Gen", "NumDraws"), ("Start", "Count", "IndexBias"))  # fmt: skip
        #: the indexed form also carries Flags (kDrawPrimitiveRestart)
        self._draw_indexed = self.em.fast(
            "DrawVbo",
            ("Mode", "IndexSize", "Flags", "InstanceCount", "RestartIndex",
             "IndexResource.Slot", "IndexResource.Gen", "NumDraws"),
            ("Start", "Count", "IndexBias"))  # fmt: skip
        self._restart_flag = _t.enum("MGPDrawFlagBit")["kDrawPrimitiveRestart"]
        self.draws = 0
        self.frame_serial = 0

    # -- counters -----------------------------------------------------------
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
        hashes, transition hits, byte compares and version-check answers."""
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
        }

    # -- render state (no emission) ------------------------------------------
    def enable(self, cap: str) -> None:
        self.tr.rs.set_capability(cap, True)

    def disable(self, cap: str) -> None:
        self.tr.rs.set_capability(cap, False)

    def viewport(self, x: float, y: float, w: float, h: float) -> None:
        self.tr.rs.set_viewport(x, y, w, h)

    def scissor(self, x: int, y: int, w: int, h: int) -> None:
        self.tr.rs.set_scissor_box(x, y, w, h)

    def clear_color(self, r: float, g: float, b: float, a: float) -> None:
        self.state.set_clear_color(r, g, b, a)

    def clear_depth(self, d: float) -> None:
        self.state.set_clear_depth(d)

    def blend_func(self, src: str, dst: str) -> None:
        self.state.set_blend_func(src, dst, src, dst)

    def depth_func(self, func: str) -> None:
        self.state.set_depth_func(func)

    def pixel_store(self, pack: bool, param: str, value: int) -> None:
        self.state.set_pixel_store_param(pack, param, value)

    # -- buffers (pushed at GL-call time, seed 001 §5.1) ---------------------
    def create_buffer(self, data: bytes | None = None, bind_mask: int = 0) -> Buffer:
        buf = Buffer(self.tr.alloc["Buffer"].alloc())
        self.em.emit("ResourceCreate", {"Resource": buf.handle, "StorageKind": 1,
                                        "BindMask": bind_mask,
                                        "Target": self._target("Buffer")})  # fmt: skip
        if data is not None:
            self.buffer_data(buf, data)
        return buf

    def buffer_data(self, buf: Buffer, data: bytes | int) -> None:
        """``glBufferData``: ``data`` the initial bytes, or an int, the size of a buffer with
        no defined content (``glBufferData(size, NULL)``: a respecify and no upload)."""
        defined = not isinstance(data, int)
        buf.size = len(data) if defined else data
        if buf.size < 0:
            raise ValueError(f"buffer_data: negative size {buf.size}")
        self.em.emit("ResourceRespecify", {"Resource": buf.handle, "StorageKind": 1,
                                           "Width": buf.size, "Target": self._target("Buffer"),
                                           "HasDefinedContent": int(defined)})  # fmt: skip
        if defined:
            self.buffer_sub_data(buf, 0, data)

    def buffer_sub_data(self, buf: Buffer, offset: int, data: bytes) -> None:
        if offset < 0 or offset + len(data) > buf.size:
            raise ValueError(f"buffer_sub_data [{offset}, {offset + len(data)}) outside {buf.size}")
        self.em.emit("ResourceSubData", {"Res": buf.handle, "Target": self._target("Buffer"),
                                         "UnionBox": {"X": offset, "W": len(data), "H": 1, "D": 1},
                                         "RegionCount": 0}, ((),), blob=bytes(data))  # fmt: skip

    def delete_buffer(self, buf: Buffer) -> None:
        if self.tr.index_buffer is buf:
            self.tr.index_buffer = None
        self.tr.death("Buffer", buf.handle, "ResourceDestroy")

    # -- textures ------------------------------------------------------------
    def create_texture_2d(self, width: int, height: int, internal_format: int = GL_RGBA8,
                          levels: int = 1) -> Texture:  # fmt: skip
        tex = Texture(self.tr.alloc["Texture"].alloc(), "Tex2D", internal_format,
                      width, height, levels)  # fmt: skip
        desc = {"Resource": tex.handle, "Target": self._target(tex.target), "StorageKind": 0}
        self.em.emit("ResourceCreate", desc)
        self.em.emit("ResourceRespecify", dict(desc, InternalFormat=internal_format, Width=width,
                                               Height=height, Depth=1, ArrayLayers=1, Levels=levels,
                                               Immutable=1))  # fmt: skip
        return tex

    def tex_sub_image_2d(self, tex: Texture, level: int, x: int, y: int, w: int, h: int,
                         data: bytes) -> None:  # fmt: skip
        """Accumulates; the upload leaves at the next validate point (seed 001 §6)."""
        tex.pending.setdefault(level, []).append((x, y, w, h, bytes(data)))
        self.tr.textures_pending[tex.handle] = tex

    def delete_texture(self, tex: Texture) -> None:
        self.tr.textures_pending.pop(tex.handle, None)
        for unit, (t, s) in list(self.tr.units.items()):
            if t is tex:
                self.tr.units[unit] = (None, s)
        if not tex.view.is_null:  # the view dies before its storage owner
            self.tr.death("SamplerViewCso", tex.view, "DeleteSamplerView")
        kind = "Renderbuffer" if tex.target == "Renderbuffer" else "Texture"
        self.tr.death(kind, tex.handle, "ResourceDestroy")

    # -- samplers ------------------------------------------------------------
    def create_sampler(self, **params: Any) -> Handle:
        h = self.tr.alloc["SamplerCso"].alloc()
        rec = np.zeros(1, _sampler_dtype())[0]
        for k, v in params.items():  # an enumerator name reads through the member's enum
            rec[k] = _t.enum(_sampler_member(k)["type"])[v] if isinstance(v, str) else v
        self.em.emit("CreateSamplerState", {"Cso": h}, blob=rec.tobytes())
        return h

    def delete_sampler(self, h: Handle) -> None:
        for unit, (t, s) in list(self.tr.units.items()):
            if s == h:
                self.tr.units[unit] = (t, NULL)
        self.tr.death("SamplerCso", h, "DeleteSamplerState")

    def bind_texture(self, unit: int, tex: Texture | None) -> None:
        self.tr.units[unit] = (tex, self.tr.units.get(unit, (None, NULL))[1])
        self.tr.gen += 1

    def bind_sampler(self, unit: int, sampler: Handle) -> None:
        self.tr.units[unit] = (self.tr.units.get(unit, (None, NULL))[0], sampler)
        self.tr.gen += 1

    # -- program -------------------------------------------------------------
    def create_program(self, spirv: Mapping[int, bytes], reflection: bytes = b"") -> Program:
        """CreateShaderState at link time (SPIR-V and reflection are opaque bytes here)."""
        prog = Program(self.tr.alloc["ShaderCso"].alloc())
        total = sum(len(b) + 8 for b in spirv.values()) + len(reflection) + 8
        self.em.room(total)
        stages: list[dict[str, int]] = [{} for _ in range(_program_stage_count())]
        mask = 0
        for stage, code in sorted(spirv.items()):
            off, size, seg = self.em.stage_bytes(code)
            stages[stage] = {"Offset": off, "Size": size, "Seg": seg}
            mask |= 1 << stage
        off, size, seg = self.em.stage_bytes(reflection)
        self.em.emit("CreateShaderState", {
            "Cso": prog.handle, "StageMask": mask, "SpirvStatus": 1, "LinkStatus": 1,
            "Spirv": stages, "Reflection": {"Offset": off, "Size": size, "Seg": seg},
        })  # fmt: skip
        return prog

    def use_program(self, prog: Program | None) -> None:
        self.tr.program = prog
        self.tr.gen += 1

    def delete_program(self, prog: Program) -> None:
        if self.tr.program is prog:
            self.tr.program = None
        self.tr.death("ShaderCso", prog.handle, "DeleteShaderState")

    # -- vertex input --------------------------------------------------------
    def vertex_attrib_pointer(self, index: int, buf: Buffer, size: int, gl_type: int = GL_FLOAT,
                              normalized: bool = False, stride: int = 0, offset: int = 0,
                              divisor: int = 0) -> None:  # fmt: skip
        """``glVertexAttribPointer`` (+ ``glVertexAttribDivisor``: 0 per vertex, n per n instances)."""
        self.tr.attribs[index] = Attrib(buf.handle, size, gl_type, normalized, stride, offset,
                                        divisor)  # fmt: skip
        self.tr.gen += 1

    def disable_vertex_attrib(self, index: int) -> None:
        self.tr.attribs.pop(index, None)
        self.tr.gen += 1

    def bind_index_buffer(self, buf: Buffer | None) -> None:
        self.tr.index_buffer = buf
        self.tr.gen += 1

    # -- framebuffers --------------------------------------------------------
    def create_framebuffer(self) -> Framebuffer:
        return Framebuffer(self.tr.alloc["Framebuffer"].alloc())

    def framebuffer_texture(
        self, fb: Framebuffer, index: int, tex: Texture, level: int = 0
    ) -> None:
        """Colour attachment ``index``: a 2D texture level or a renderbuffer (level 0)."""
        fb.color[index] = (tex, level)
        self.tr.gen += 1

    def framebuffer_depth_stencil(self, fb: Framebuffer, depth: Texture | None,
                                  stencil: Texture | None = None) -> None:  # fmt: skip
        """Depth and stencil attachments (one packed renderbuffer may be both)."""
        fb.depth = (depth, 0) if depth is not None else None
        fb.stencil = (stencil, 0) if stencil is not None else None
        self.tr.gen += 1

    def read_buffer(self, fb: Framebuffer, index: int) -> None:
        """``glReadBuffer(GL_COLOR_ATTACHMENT0 + index)`` of ``fb``."""
        if index not in fb.color:
            raise ValueError(f"read_buffer: colour attachment {index} is empty")
        fb.read = index
        self.tr.gen += 1

    def create_renderbuffer(self, width: int, height: int, internal_format: int) -> Texture:
        """A renderbuffer (``glRenderbufferStorage``); delete it with :meth:`delete_texture`."""
        rb = Texture(self.tr.alloc["Renderbuffer"].alloc(), "Renderbuffer",
                     internal_format, width, height, 1)  # fmt: skip
        desc = {"Resource": rb.handle, "Target": self._target(rb.target), "StorageKind": 0}
        self.em.emit("ResourceCreate", desc)
        self.em.emit("ResourceRespecify", dict(desc, InternalFormat=internal_format, Width=width,
                                               Height=height, Depth=1, ArrayLayers=1, Levels=1,
                                               Immutable=1))  # fmt: skip
        return rb

    def bind_framebuffer(self, fb: Framebuffer | None) -> None:
        self.tr.draw_fbo = fb
        self.tr.gen += 1

    def delete_framebuffer(self, fb: Framebuffer) -> None:
        if self.tr.draw_fbo is fb:
            self.tr.draw_fbo = None
        self.tr.death("Framebuffer", fb.handle, None)

    # -- verbs -----------------------------------------------------------------
    def draw_arrays(self, mode: int, first: int, count: int, instances: int = 1) -> None:
        tr = self.tr
        if tr.gen != tr.draw_gen or tr.textures_pending:
            tr.validate("DrawVbo")
        else:  # no binding moved since the last draw: only the render state can have
            tr.cso.validate(tr.rs)
        self._draw_vbo(mode, 0, instances, tr.rs.restart_index, 0, 0, 1, first, count, 0)
        self.draws += 1

    def draw_elements(self, mode: int, count: int, index_size: int, offset: int = 0,
                      instances: int = 1) -> None:  # fmt: skip
        tr = self.tr
        if tr.index_buffer is None:
            raise ValueError("draw_elements with no index buffer bound")
        if offset % index_size:
            raise ValueError(f"index offset {offset} is not a multiple of {index_size}")
        if tr.gen != tr.draw_gen or tr.textures_pending:
            tr.validate("DrawVbo")
        else:
            tr.cso.validate(tr.rs)
        ib = tr.index_buffer.handle
        p, restart, flags = tr.rs.p, tr.rs.restart_index, 0
        if p["PrimitiveRestartFixedIndexEnabled"]:  # GL: the index type's maximum
            restart, flags = (1 << (8 * index_size)) - 1, self._restart_flag
        elif p["PrimitiveRestartEnabled"]:
            flags = self._restart_flag
        self._draw_indexed(mode, index_size, flags, instances, restart, ib[0], ib[1], 1,
                           offset // index_size, count, 0)  # fmt: skip
        self.draws += 1

    def clear(self, mask: int = GL_COLOR_BUFFER_BIT) -> None:
        self.tr.validate("Clear")
        p = self.state.p
        fb = self.tr.draw_fbo.handle if self.tr.draw_fbo else default_framebuffer()
        color = p["ClearColor"]  # a FloatVec4: its components' bits go as ColorValue
        self.em.emit("Clear", {
            "Kind": _t.constant("kMGPipeClearKindWhole"), "BufferMask": mask,
            "DrawBufferIndex": -1,  # a whole clear names no one draw buffer (glClearBuffer does)
            "ValueClass": _t.constant("kMGPipeClearValueClassFloat"),
            "ColorValue": np.array([color[c] for c in color.dtype.names],
                                   np.float32).view(np.uint32).tolist(),
            "DepthValue": float(p["ClearDepth"]), "StencilValue": int(p["ClearStencil"]),
            "Fbo": fb,
        })  # fmt: skip

    def present(self) -> int:
        """Present the default framebuffer; returns the 1-based frame serial, or
        :data:`EGL_CONTEXT_LOST` once the device is lost (the call then did nothing)."""
        self.tr.validate("Present")
        self.frame_serial += 1
        self.em.emit("Present", {"FrameSerial": self.frame_serial})  # waits once, on its credit
        if self.device_lost:
            return EGL_CONTEXT_LOST
        self.em.stage.reset()  # every staged byte has been applied (the reset rule)
        return self.frame_serial

    @property
    def device_lost(self) -> bool:
        """The transport latched device-lost (its server process died or refused a record)."""
        return bool(getattr(self.transport, "lost", False))

    def get_graphics_reset_status(self) -> int:
        """``glGetGraphicsResetStatus``: ``GL_UNKNOWN_CONTEXT_RESET`` once the device is lost."""
        return GL_UNKNOWN_CONTEXT_RESET if self.device_lost else GL_NO_ERROR

    def read_pixels(self, x: int, y: int, w: int, h: int, fmt: int = 0x1908,
                    type_: int = 0x1401, bytes_per_pixel: int = 4) -> bytes:  # fmt: skip
        """ReadPixels into a staged destination; returns the bytes the server wrote there
        (rows padded to the pack alignment, as GL lays them out)."""
        self.tr.validate("ReadPixels")
        align = int(self.state.pixel_pack["Alignment"]) or 1
        stride = -(-w * bytes_per_pixel // align) * align
        size = stride * (h - 1) + w * bytes_per_pixel if h else 0
        self.em.room(size)
        dst = self.em.stage_bytes(bytes(size))
        # MGPReadbackInfo names no segment: its destination is a range of the stage
        self.em.emit("ReadPixels", {"Box": {"X": x, "Y": y, "Z": 0, "W": w, "H": h, "D": 1},
                                    "Format": fmt, "Type": type_,
                                    "DstOffset": dst[0], "DstSize": dst[1]})  # fmt: skip
        return bytes(self.em.stage.view(dst))

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
