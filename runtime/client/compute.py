"""Issue 19's client calls: compute, storage and image bindings, memory barriers, transform
feedback and tessellation patches (a mixin of :class:`~.api.Client`).

* **Compute.** :meth:`ComputeCalls.dispatch_compute` / :meth:`dispatch_compute_indirect`:
  ``LaunchGrid`` after a ``kDispatch`` validate (program, texture uploads, samplers,
  constants, shader buffers, shader images). The block size comes from the program's
  reflection (``workgroup``); an indirect launch names its buffer in ``MGPGridInfo`` itself
  (``IndirectBuffer`` / ``IndirectOffset``, GL's ``GL_DISPATCH_INDIRECT_BUFFER`` binding).
* **Storage and atomic counters.** ``bind_buffer_base("storage" | "atomic_counter", ...)``
  (GL_SHADER_STORAGE_BUFFER / GL_ATOMIC_COUNTER_BUFFER): one ``SetShaderBuffers`` per class
  at the next draw or dispatch; ``WritableMask`` bit i is set unless the bound program
  declares the block at point i ``readonly`` (an atomic counter is always written).
* **GPU-written pending set** (seed 001 §8.1): at every draw / dispatch the client adds
  each buffer range bound at a writable point (and, inside a capture, each transform-feedback
  target) to :attr:`ComputeCalls.gpu_pending` -- conservatively: it cannot tell what the
  shader writes. :meth:`on_gpu_written` is the narrowing callback (``OnGpuWritten(res,
  ranges)``): the server's account of what was written replaces the client's guess for
  that resource. A ``buffer_sub_data`` over a pending range takes it out (the client's bytes
  are the current ones there). The callback arrives on the event ring (``SEG_EVENT``,
  :mod:`..server.gpu_written` on the server) on every transport, drained at the client's
  waits; a later record's guess is never dropped by an earlier record's event (the event's
  seq against the guess's). :meth:`sync_gpu_writes` is seed 001's stale-index rule for the
  client's max-index scan: a pending range inside the scanned bytes is read back
  (``ResourceReadback``) first. The ``*IndirectCount`` resolve does not sync GPU writes
  (seed 001 §10: only persistent-mapped ranges), so it reads the client's copy.
* **Images.** :meth:`bind_image_texture` (``glBindImageTexture``): ``BindShaderImage`` at the
  call (the GL arguments verbatim: Access is the GL token, Format the internal format) and
  the unit's ``MGPImageView`` row (Access as ``MGPipeImageAccess``) in ``SetShaderImages``
  at the next draw / dispatch.
* **Barriers.** :meth:`memory_barrier` / :meth:`memory_barrier_by_region`: ``MemoryBarrier``
  with GL's bitfield as it is.
* **Transform feedback.** Objects (:meth:`create_transform_feedback`) have no wire lifetime:
  ``BindStreamOutput`` / ``DeleteStreamOutput`` carry a client name and a lifetime id.
  ``bind_buffer_base("transform_feedback", i, buf)`` binds target i of the bound object;
  :meth:`begin_transform_feedback` sends ``BeginStreamOutput`` with the immutable snapshot
  (program, mode, targets); ``SetStreamOutputTargets`` (targets + per-target byte offset,
  ``0xFFFFFFFF`` = append where the last span stopped) goes at the next draw's validate;
  every draw inside the span is counted here (primitives of the begin mode, capped by the
  room left in the targets); :meth:`end_transform_feedback` sends the accounting
  (``EndStreamOutput``: captured vertices, primitives written, mode);
  :meth:`pause_transform_feedback` / :meth:`resume_transform_feedback` bracket draws that
  do not capture.
* **Tessellation.** :meth:`patch_parameter` (``glPatchParameteri(GL_PATCH_VERTICES, n)``):
  ``PatchParameter`` at the call, and the render state's ``PatchVertices`` (``SetPatchState``
  at the next validate); draw with mode ``GL_PATCHES``.

Misuse raises :class:`~.api.ClientError` (imported lazily: this module is a base of the
class that module defines) before any record, as GL would raise its error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..schema import tables as _t
from ..wire.handle import NULL, Handle
from .tracker import Buffer, Program, Texture

__all__ = ["ComputeCalls", "TransformFeedback", "GL_PATCHES", "GL_PATCH_VERTICES",
           "BARRIER_BITS", "IMAGE_ACCESS"]  # fmt: skip

GL_PATCHES = 0x000E
GL_PATCH_VERTICES = 0x8E72
GL_POINTS, GL_LINES, GL_TRIANGLES = 0x0000, 0x0001, 0x0004
GL_READ_ONLY, GL_WRITE_ONLY, GL_READ_WRITE = 0x88B8, 0x88B9, 0x88BA
#: glMemoryBarrier's bits (GL ES 3.1 §7.11.2), by name; ``memory_barrier`` takes the
#: names or GL's bitfield
BARRIER_BITS = {
    "vertex_attrib_array": 0x00000001, "element_array": 0x00000002, "uniform": 0x00000004,
    "texture_fetch": 0x00000008, "shader_image_access": 0x00000020, "command": 0x00000040,
    "pixel_buffer": 0x00000080, "texture_update": 0x00000100, "buffer_update": 0x00000200,
    "framebuffer": 0x00000400, "transform_feedback": 0x00000800, "atomic_counter": 0x00001000,
    "shader_storage": 0x00002000, "all": 0xFFFFFFFF,
}  # fmt: skip
_ALL_BARRIER_BITS = 0x3FEF  # every bit GL ES 3.1 defines (GL_ALL_BARRIER_BITS aside)
#: GL's access token -> MGPipeImageAccess enumerator
IMAGE_ACCESS = {GL_READ_ONLY: "ReadOnly", GL_WRITE_ONLY: "WriteOnly", GL_READ_WRITE: "ReadWrite"}
_ACCESS_NAMES = {"read_only": GL_READ_ONLY, "write_only": GL_WRITE_ONLY,
                 "read_write": GL_READ_WRITE}  # fmt: skip
#: the formats ES 3.1 lets an image unit name (Table 8.27: image unit formats)
IMAGE_FORMATS = frozenset({
    0x8814, 0x881A, 0x822E,  # RGBA32F, RGBA16F, R32F
    0x8D70, 0x8D76, 0x8235,  # RGBA32UI, RGBA16UI, R32UI
    0x8D82, 0x8D88, 0x8231,  # RGBA32I, RGBA16I, R32I
    0x8058, 0x8F97,  # RGBA8, RGBA8_SNORM
    0x8D7C, 0x8D8E,  # RGBA8UI, RGBA8I
})  # fmt: skip
#: primitive modes a capture may use -> vertices per primitive (GL ES 3.2 §12.1)
_XFB_MODES = {GL_POINTS: 1, GL_LINES: 2, GL_TRIANGLES: 3}
_APPEND = 0xFFFFFFFF


def _client_error(msg: str) -> Exception:
    from .api import ClientError

    return ClientError(msg)


@dataclass
class TransformFeedback:
    """A transform-feedback object: its targets and, inside a span, the span's state."""

    name: int  # the client's GL name (0: the default object)
    lifetime: int  # never reused: what the server keys its object by
    targets: dict[int, tuple[Buffer, int, int]] = field(default_factory=dict)
    active: bool = False
    paused: bool = False
    mode: int = 0
    program: Program | None = None
    #: per target: bytes written since the span began
    written: dict[int, int] = field(default_factory=dict)
    vertices: int = 0  # captured in the current (or last) span
    primitives: int = 0
    #: whether the next SetStreamOutputTargets restarts at each target's offset (a Begin)
    #: or appends (after a resume)
    append: bool = False
    deleted: bool = False
    spans: int = 0  # Begins so far


class ComputeCalls:
    """The calls of issue 19 (see the module docstring); mixed into :class:`~.api.Client`."""

    tr: Any
    em: Any
    draws: int

    # -- state -------------------------------------------------------------------
    def _compute_state(self) -> dict[str, Any]:
        st = self.__dict__.get("_c19")
        if st is None:
            default = TransformFeedback(0, 0)
            st = self.__dict__["_c19"] = {
                "dispatch_indirect": None, "default_xfb": default, "xfb": default,
                "next_xfb": 1, "next_lifetime": 1, "dispatches": 0, "gen": -1,
                #: LaunchGrid packed straight into the transport (MGPGridInfo's memory order)
                "launch": self.em.fast("LaunchGrid", (
                    "GridX", "GridY", "GridZ", "BlockX", "BlockY", "BlockZ",
                    "IndirectBuffer.Slot", "IndirectBuffer.Gen", "IndirectOffset",
                    "IsIndirect")),
            }
            self.tr.xfb = default
        return st

    @property
    def gpu_pending(self) -> dict[Handle, list[tuple[int, int]]]:
        """Buffer handle -> the byte ranges ``[start, end)`` a draw or dispatch may have
        written since the client last knew their bytes (seed 001 §8.1's pending set)."""
        return self.tr.gpu_pending

    def on_gpu_written(self, res: Handle, ranges: list[tuple[int, int]], *,
                       seq: int | None = None) -> None:
        """``OnGpuWritten(res, ranges[])``: the server's account of what the GPU wrote to
        ``res`` (``(offset, size)`` pairs) narrows the pending set to exactly those bytes.
        ``seq`` is the record the event answers: where a later record guessed ``res`` again
        (its own event is still to come), the server's ranges join the guess instead of
        replacing it."""
        tr = self.tr
        pend = tr.gpu_pending
        exact = sorted((o, o + s) for o, s in ranges if s > 0)
        later = seq is not None and tr.gpu_guess_seq.get(res, 0) > seq
        if later:
            if exact:
                pend[res] = _merge(pend.get(res, []) + exact)
        elif exact:
            pend[res] = _merge(exact)
        else:
            pend.pop(res, None)
        self.gpu_written_events = getattr(self, "gpu_written_events", 0) + 1

    def sync_gpu_writes(self, buf: Buffer, start: int, end: int, what: str) -> int:
        """Seed 001's stale-index rule for a scan of ``buf``'s bytes ``[start, end)`` on the
        client (the max-index scan): the events that arrived narrow the pending set first;
        every pending range left inside the span is read back (``ResourceReadback``, one
        round trip each) into the client's copy. Returns the bytes read back. Without a
        reverse channel the scan cannot see the GPU's bytes: a named ClientError."""
        link = getattr(self, "link", None)
        if link is not None and buf.handle in self.tr.gpu_pending:
            link.drain()
        pend = self.tr.gpu_pending.get(buf.handle)
        if not pend:
            return 0
        hits = [(max(a, start), min(b, end)) for a, b in pend if a < end and b > start]
        if not hits:
            return 0
        if link is None:
            a, b = hits[0]
            raise _client_error(f"{what}: bytes [{a}, {b}) of the index buffer were written by "
                                "the GPU and this client has no reverse channel to read "
                                "them back (ResourceReadback); the scan would read stale "
                                "bytes")  # fmt: skip
        got = 0
        for a, b in hits:
            self.get_buffer_sub_data(buf, a, b - a)  # type: ignore[attr-defined]
            got += b - a
        self.gpu_sync_bytes = getattr(self, "gpu_sync_bytes", 0) + got
        return got

    # -- compute ---------------------------------------------------------------------
    def _workgroup(self, what: str) -> tuple[int, int, int]:
        prog = self.tr.program
        if prog is None:
            raise _client_error(f"{what}: no program in use")
        hit = prog.__dict__.get("_workgroup")
        if hit is not None:
            return hit
        if 5 not in prog.spirv:
            raise _client_error(f"{what}: the program in use has no compute stage")
        try:
            wg = json.loads(prog.reflection or b"{}").get("workgroup")
        except ValueError:
            wg = None
        if not wg or len(wg) != 3:
            raise _client_error(f"{what}: the program's reflection names no workgroup size")
        out = prog.__dict__["_workgroup"] = (int(wg[0]), int(wg[1]), int(wg[2]))
        return out

    def _launch(self, grid: tuple[int, int, int], block: tuple[int, int, int],
                indirect: Any, offset: int) -> None:
        """Validate (skipped when no binding moved since the last launch), note the pending
        set, send LaunchGrid."""
        st = self._compute_state()
        tr = self.tr
        if tr.gen != st["gen"] or tr.textures_pending:
            tr.validate("LaunchGrid")
            st["gen"] = tr.gen
        if tr.buffer_bindings:
            tr.note_gpu_writes(self.em.transport.emit_seq + 1)  # the LaunchGrid's seq
        h = indirect.handle if indirect is not None else NULL
        st["launch"](*grid, *block, h[0], h[1], offset, int(indirect is not None))
        st["dispatches"] += 1

    def dispatch_compute(self, x: int, y: int = 1, z: int = 1) -> None:
        """``glDispatchCompute(x, y, z)``: ``LaunchGrid`` of x * y * z workgroups."""
        if min(x, y, z) < 0:
            raise _client_error(f"dispatch_compute: negative grid {x}, {y}, {z}")
        self._launch((x, y, z), self._workgroup("dispatch_compute"), None, 0)

    def bind_dispatch_indirect_buffer(self, buf: Buffer | None) -> None:
        """``glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, buf)``."""
        self._compute_state()["dispatch_indirect"] = buf

    def dispatch_compute_indirect(self, offset: int = 0) -> None:
        """``glDispatchComputeIndirect(offset)``: the grid is the three uint32 at ``offset``
        of the bound dispatch-indirect buffer, read by the GPU when the launch runs."""
        buf = self._compute_state()["dispatch_indirect"]
        if buf is None:
            raise _client_error("dispatch_compute_indirect: no dispatch-indirect buffer bound")
        if offset < 0 or offset % 4:
            raise _client_error(f"dispatch_compute_indirect: offset {offset} (a multiple of 4)")
        if offset + 12 > buf.size:
            raise _client_error(f"dispatch_compute_indirect: [{offset}, {offset + 12}) outside "
                                f"the buffer's {buf.size} bytes")  # fmt: skip
        self._launch((0, 0, 0), self._workgroup("dispatch_compute_indirect"), buf, offset)

    @property
    def dispatches(self) -> int:
        return int(self._compute_state()["dispatches"])

    # -- barriers ----------------------------------------------------------------------
    def memory_barrier(self, bits: int | str | tuple[str, ...], *, by_region: bool = False) -> None:
        """``glMemoryBarrier(bits)`` (names of :data:`BARRIER_BITS` or GL's bitfield)."""
        if isinstance(bits, str):
            bits = (bits,)
        if not isinstance(bits, int):
            try:
                value = 0
                for b in bits:
                    value |= BARRIER_BITS[b]
            except KeyError as exc:
                raise _client_error(f"memory_barrier: unknown barrier {exc.args[0]!r} "
                                    f"(one of {', '.join(BARRIER_BITS)})") from None  # fmt: skip
            bits = value
        if bits != 0xFFFFFFFF and bits & ~_ALL_BARRIER_BITS or bits == 0:
            raise _client_error(f"memory_barrier: bits {bits:#x} (GL ES 3.1's barrier bits)")
        self.tr.validate("MemoryBarrier")
        self.em.emit("MemoryBarrier", {"Bits": bits, "ByRegion": int(by_region)})

    def memory_barrier_by_region(self, bits: int | str | tuple[str, ...]) -> None:
        """``glMemoryBarrierByRegion(bits)``."""
        self.memory_barrier(bits, by_region=True)

    # -- images --------------------------------------------------------------------------
    def bind_image_texture(self, unit: int, tex: Texture | None, level: int = 0,
                           layered: bool = False, layer: int = 0,
                           access: int | str = GL_READ_WRITE, format: int = 0x8058) -> None:  # fmt: skip
        """``glBindImageTexture(unit, tex, level, layered, layer, access, format)``; ``tex``
        None unbinds the unit. ``access`` GL_READ_ONLY / GL_WRITE_ONLY / GL_READ_WRITE (or
        "read_only" ...), ``format`` the unit's internal format (GL_RGBA8 ...)."""
        top = int(_t.constant("kMGPipeMaxImageUnits"))
        if not 0 <= unit < top:
            raise _client_error(f"bind_image_texture: unit {unit} outside 0..{top - 1}")
        acc = _ACCESS_NAMES.get(access, access) if isinstance(access, str) else access
        if acc not in IMAGE_ACCESS:
            raise _client_error(f"bind_image_texture: access {access!r} (GL_READ_ONLY, "
                                "GL_WRITE_ONLY or GL_READ_WRITE)")  # fmt: skip
        if format not in IMAGE_FORMATS:
            raise _client_error(f"bind_image_texture: format {format:#x} is no image unit format")
        if tex is not None:
            if tex.target == "Renderbuffer":
                raise _client_error("bind_image_texture: a renderbuffer is no texture")
            if not 0 <= level < tex.levels:
                raise _client_error(f"bind_image_texture: level {level} outside 0..{tex.levels - 1}")
            if layer < 0 or layer >= max(tex.layers, tex.depth):
                raise _client_error(f"bind_image_texture: layer {layer} outside the texture")
            self.tr.sticky_bind(tex, "kMGPipeBindShaderImage")
            self.tr.images[unit] = (tex, level, bool(layered), layer, acc, format)
        else:
            self.tr.images.pop(unit, None)
        self.tr.touch("images")
        self.tr.validate("BindShaderImage")
        self.em.emit("BindShaderImage", {
            "Res": tex.handle if tex is not None else NULL, "Unit": unit,
            "GlName": tex.handle[0] if tex is not None else 0, "Level": level,
            "Layer": layer, "Access": acc, "Format": format, "Layered": int(bool(layered)),
        })  # fmt: skip

    # -- transform feedback ------------------------------------------------------------
    def create_transform_feedback(self) -> TransformFeedback:
        """``glGenTransformFeedbacks`` (+ the first bind's object creation): no record."""
        st = self._compute_state()
        xfb = TransformFeedback(st["next_xfb"], st["next_lifetime"])
        st.setdefault("objects", []).append(xfb)
        st["next_xfb"] += 1
        st["next_lifetime"] += 1
        return xfb

    def bind_transform_feedback(self, xfb: TransformFeedback | None) -> None:
        """``glBindTransformFeedback(GL_TRANSFORM_FEEDBACK, xfb)`` (None: the default)."""
        st = self._compute_state()
        cur = st["xfb"]
        if cur.active and not cur.paused:
            raise _client_error("bind_transform_feedback: the bound object is capturing "
                                "(pause or end it first)")  # fmt: skip
        obj = xfb if xfb is not None else st["default_xfb"]
        if obj.deleted:
            raise _client_error(f"bind_transform_feedback: object {obj.name} was deleted")
        st["xfb"] = self.tr.xfb = obj
        self.tr.validate("BindStreamOutput")
        self.em.emit("BindStreamOutput", {"GlName": obj.name, "LifetimeId": obj.lifetime})
        self.tr.touch("stream_output")

    def delete_transform_feedback(self, xfb: TransformFeedback) -> None:
        """``glDeleteTransformFeedbacks``; the bound one reverts to the default object."""
        if xfb.name == 0:
            raise _client_error("delete_transform_feedback: the default object")
        if xfb.active:
            raise _client_error("delete_transform_feedback: the object is in a capture")
        st = self._compute_state()
        if st["xfb"] is xfb:
            self.bind_transform_feedback(None)
        xfb.deleted = True
        st.setdefault("objects", [])
        st["objects"] = [o for o in st["objects"] if o is not xfb]
        self.tr.validate("DeleteStreamOutput")
        self.em.emit("DeleteStreamOutput", {"GlName": xfb.name, "LifetimeId": xfb.lifetime})

    def _bind_xfb_target(self, index: int, buf: Buffer | None, offset: int, size: int) -> None:
        top = int(_t.constant("kMGPipeMaxStreamOutputTargets"))
        xfb = self._compute_state()["xfb"]
        if not 0 <= index < top:
            raise _client_error(f"bind_buffer_range: transform feedback index {index} outside "
                                f"0..{top - 1}")  # fmt: skip
        if xfb.active:
            raise _client_error("bind_buffer_range: a target of a capturing object")
        if buf is None:
            xfb.targets.pop(index, None)
        else:
            if offset % 4 or size % 4:
                raise _client_error(f"bind_buffer_range: transform feedback offset {offset} / "
                                    f"size {size} (multiples of 4)")  # fmt: skip
            xfb.targets[index] = (buf, offset, size if size else max(buf.size - offset, 0))
        self.tr.touch("stream_output")

    def begin_transform_feedback(self, mode: int) -> None:
        """``glBeginTransformFeedback(mode)`` (GL_POINTS / GL_LINES / GL_TRIANGLES): the span
        captures the program in use into the bound object's targets."""
        st = self._compute_state()
        xfb: TransformFeedback = st["xfb"]
        if xfb.active:
            raise _client_error("begin_transform_feedback: already capturing")
        if mode not in _XFB_MODES:
            raise _client_error(f"begin_transform_feedback: mode {mode:#x} (GL_POINTS, GL_LINES "
                                "or GL_TRIANGLES)")  # fmt: skip
        prog = self.tr.program
        layout = _xfb_rows(prog)
        if not layout:
            raise _client_error("begin_transform_feedback: the program in use captures nothing")
        for buf_index in sorted({r["buffer"] for r in layout}):
            if buf_index not in xfb.targets:
                raise _client_error(f"begin_transform_feedback: no buffer bound at transform "
                                    f"feedback index {buf_index}")  # fmt: skip
        xfb.active, xfb.paused, xfb.mode, xfb.program = True, False, mode, prog
        xfb.written = dict.fromkeys(xfb.targets, 0)
        xfb.vertices = xfb.primitives = 0
        xfb.append = False
        xfb.spans += 1
        self.tr.validate("BeginStreamOutput")
        top = int(_t.constant("kMGPipeMaxStreamOutputTargets"))
        targets = []
        for i in range(top):
            t = xfb.targets.get(i)
            targets.append({"Res": t[0].handle, "Offset": t[1], "Size": t[2]} if t else {})
        self.em.emit("BeginStreamOutput", {"PrimitiveMode": mode,
                                           "CaptureProgram": prog.handle,
                                           "LifetimeId": xfb.lifetime, "Targets": targets})  # fmt: skip
        self.tr.touch("stream_output")

    def pause_transform_feedback(self) -> None:
        """``glPauseTransformFeedback``: draws until the resume capture nothing."""
        xfb = self._compute_state()["xfb"]
        if not xfb.active or xfb.paused:
            raise _client_error("pause_transform_feedback: no capture running")
        xfb.paused = True
        self.tr.validate("PauseStreamOutput")
        self.em.emit("PauseStreamOutput", {"Reserved": 0})

    def resume_transform_feedback(self) -> None:
        """``glResumeTransformFeedback``: the capture appends where it stopped."""
        xfb = self._compute_state()["xfb"]
        if not xfb.active or not xfb.paused:
            raise _client_error("resume_transform_feedback: no paused capture")
        xfb.paused = False
        xfb.append = True
        self.tr.validate("ResumeStreamOutput")
        self.em.emit("ResumeStreamOutput", {"Reserved": 0})
        self.tr.touch("stream_output")

    def end_transform_feedback(self) -> tuple[int, int]:
        """``glEndTransformFeedback``; returns (captured vertices, primitives written) of the
        span -- what ``GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN`` reads, counted here."""
        xfb = self._compute_state()["xfb"]
        if not xfb.active:
            raise _client_error("end_transform_feedback: no capture running")
        xfb.active = xfb.paused = False
        self.tr.validate("EndStreamOutput")
        self.em.emit("EndStreamOutput", {"CapturedVertices": xfb.vertices,
                                         "PrimitivesWritten": xfb.primitives,
                                         "PrimitiveMode": xfb.mode})  # fmt: skip
        self.tr.touch("stream_output")
        return xfb.vertices, xfb.primitives

    def transform_feedback_primitives_written(self, xfb: TransformFeedback | None = None) -> int:
        """The primitives the object's current or last span wrote."""
        return (xfb or self._compute_state()["xfb"]).primitives

    def _xfb_check(self, mode: int) -> None:
        """A draw inside a running capture must use the capture's mode and program (GL's
        INVALID_OPERATION, raised before the draw's record)."""
        xfb = self.tr.xfb
        if xfb.paused:
            return
        if mode != xfb.mode:
            raise _client_error(f"draw mode {mode:#x} inside a capture begun with "
                                f"{xfb.mode:#x}")  # fmt: skip
        if self.tr.program is not xfb.program:
            raise _client_error("a draw inside a capture with another program than the "
                                "capture's (pause it first)")  # fmt: skip

    def _xfb_count(self, mode: int, count: int, instances: int) -> None:
        """A draw inside a running span: add the primitives that fit (GL stops a capture
        at the first primitive some target has no room for) and the targets they wrote."""
        xfb = self.tr.xfb
        if xfb is None or not xfb.active or xfb.paused:
            return
        per = _XFB_MODES[xfb.mode]
        strides = _xfb_strides(xfb.program)
        prims = count // per * max(instances, 1)
        for i, stride in strides.items():
            buf, _off, size = xfb.targets[i]
            room = (size - xfb.written.get(i, 0)) // (stride * per)
            prims = min(prims, max(room, 0))
        for i, stride in strides.items():
            xfb.written[i] = xfb.written.get(i, 0) + prims * per * stride
            buf, off, _size = xfb.targets[i]
            _add_range(self.tr.gpu_pending, buf.handle, off, xfb.written[i])
            self.tr.gpu_guess_seq[buf.handle] = self.em.transport.emit_seq
        xfb.primitives += prims
        xfb.vertices += prims * per

    # -- tessellation --------------------------------------------------------------------
    def patch_parameter(self, pname: int, value: int) -> None:
        """``glPatchParameteri(GL_PATCH_VERTICES, value)``: ``PatchParameter`` at the call;
        the render state's patch size goes as ``SetPatchState`` at the next validate."""
        if pname != GL_PATCH_VERTICES:
            raise _client_error(f"patch_parameter: pname {pname:#x} (GL_PATCH_VERTICES; the "
                                "default levels are render state)")  # fmt: skip
        top = int(_t.constant("kMGPipeMaxPatchVertices")) if "kMGPipeMaxPatchVertices" in \
            _t.tables().CONSTANTS else 32  # GL ES 3.2's minimum GL_MAX_PATCH_VERTICES
        if not 0 < value <= top:
            raise _client_error(f"patch_parameter: {value} vertices (1..{top})")
        self.tr.rs.set_patch_vertices(value)
        self.tr.validate("PatchParameter")
        self.em.emit("PatchParameter", {"Pname": pname, "Value": value})

    # -- deaths --------------------------------------------------------------------------
    def _unbind_from_compute_points(self, res: Buffer | Texture) -> None:
        """A buffer or texture dies: GL unbinds it everywhere it is bound (dispatch-indirect,
        transform-feedback targets, image units) and no GPU write of it is pending."""
        st = self._compute_state()
        tr = self.tr
        tr.gpu_pending.pop(res.handle, None)
        if isinstance(res, Buffer):
            if st["dispatch_indirect"] is res:
                st["dispatch_indirect"] = None
            for obj in [st["default_xfb"], *st.get("objects", [])]:
                for i, (b, _o, _s) in list(obj.targets.items()):
                    if b is res:
                        del obj.targets[i]
                        tr.touch("stream_output")
        else:
            for unit, b in list(tr.images.items()):
                if b[0] is res:
                    del tr.images[unit]
                    tr.touch("images")

    # -- the pending set ---------------------------------------------------------------
    def _after_draw(self, mode: int, count: int, instances: int) -> None:
        """A draw left: its capture accounting and its writable bindings' pending ranges."""
        tr = self.tr
        if tr.xfb is not None and tr.xfb.active:
            self._xfb_count(mode, count, instances)
        if tr.buffer_bindings:
            tr.note_gpu_writes(self.em.transport.emit_seq)  # the draw just emitted

    def _note_gpu_writes(self) -> None:
        """A draw or dispatch is about to be emitted: every range bound at a writable point
        joins the pending set (conservatively)."""
        self.tr.note_gpu_writes(self.em.transport.emit_seq + 1)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _add_range(pend: dict, res: Handle, start: int, end: int) -> None:
    if end > start:
        pend[res] = _merge(pend.get(res, []) + [(start, end)])


def _xfb_rows(prog: Program | None) -> list[dict]:
    if prog is None:
        return []
    try:
        return list(json.loads(prog.reflection or b"{}").get("xfb", ()))
    except ValueError:
        return []


def _xfb_strides(prog: Program | None) -> dict[int, int]:
    return {int(r["buffer"]): int(r["stride"]) for r in _xfb_rows(prog)}
