"""The client state tracker (seed 001 §5, seed 004 §5.1–§5.4).

Frontend objects live here; pushes happen only in :meth:`Tracker.validate`, called once
before each verb (never inside a GL setter). The verb's validate class comes from
``CALLS[...]["validate_class"]``; each class pushes the groups it reads, in MobileGL's
validate order: framebuffer, program, texture sub-data drain, sampler views / states,
global constants, render state (CSO cache), pixel pack, patch, vertex attrib defaults,
context values, vertex elements / buffers / index buffer.

Every group has its own dirty generation (:meth:`Tracker.touch` names the groups a client
call moved): a texture rebind re-checks the sampler group only. Texture uploads accumulate
client-side and leave as one ``ResourceSubData`` per ``(texture, level)`` at the next
validate point (seed 001 §6). A texture's bind mask is sticky (MobileGL's ``MGPipeBindBit``):
the first time it is resolved as a sampler view or attached to a pushed framebuffer, a
``ResourceRespecify`` of its descriptor with the new bit goes before the record that uses it.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..schema import tables as _t
from ..schema.kinds import handle_kinds, resource_kinds
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.stage import stage_align
from .cso_cache import RenderStateCsoCache
from .emitter import Emitter
from .render_state import RenderState
from .row_packers import row_packer
from .slots import SlotAllocator
from .compute_tracker import TrackerCompute
from .suppressor import SetHashSuppressor

__all__ = ["Buffer", "Texture", "Program", "Framebuffer", "Attrib", "Tracker", "GROUPS"]

#: Which groups each validate class pushes, in MobileGL's order (tracker policy, not a layout).
_GROUPS: dict[str, tuple[str, ...]] = {
    "kDraw": ("framebuffer", "program", "subdata", "samplers", "constants", "shader_buffers",
              "render_state", "pixel_pack", "patch", "attrib_defaults", "context_values", "vertex",
              "images", "stream_output"),
    "kDispatch": ("program", "subdata", "samplers", "constants", "shader_buffers", "images"),
    "kXfbSpan": ("program", "subdata"),
    "kClear": ("framebuffer", "subdata", "clear_samplers", "render_state", "pixel_pack", "patch",
               "attrib_defaults", "context_values", "vertex"),
    "kReadback": ("read_framebuffer", "subdata", "pixel_pack"),
    "kBlitOrCopy": ("blit_framebuffers", "subdata"),
}  # fmt: skip
#: every group a generation covers (``touch()`` with no name moves them all)
GROUPS = ("framebuffer", "program", "samplers", "constants", "shader_buffers", "vertex",
          "attrib_defaults", "context_values", "images", "stream_output")  # fmt: skip
#: bind_buffer_base / range targets -> the MGPShaderBuffers.Class constant's name
SHADER_BUFFER_CLASSES = {"uniform": "kMGPipeShaderBufferClassUniform",
                         "storage": "kMGPipeShaderBufferClassShaderStorage",
                         "atomic_counter": "kMGPipeShaderBufferClassAtomicCounter"}  # fmt: skip
#: groups that read another group's generation
_GEN_OF = {"clear_samplers": "samplers", "read_framebuffer": "framebuffer",
           "blit_framebuffers": "framebuffer"}  # fmt: skip
#: groups whose inputs no generation covers: checked at every validate
_ALWAYS = frozenset({"subdata", "render_state", "pixel_pack", "patch"})
_DRAW_CLASS = "kDraw"


@dataclass
class Buffer:
    handle: Handle
    size: int = 0
    bind_mask: int = 0
    usage: int = 0


@dataclass
class Texture:
    handle: Handle
    target: str = "Tex2D"
    internal_format: int = 0
    width: int = 0
    height: int = 0
    levels: int = 0
    view: Handle = NULL  # sampler view, addressed by texture identity (D-F2)
    pending: dict[int, list[tuple[int, int, int, int, bytes]]] = field(default_factory=dict)
    depth: int = 1
    layers: int = 1
    samples: int = 0
    bind_mask: int = 0  # sticky MGPipeBindBit bits sent so far
    #: the texture's built-in sampler (its glTexParameter sampler state; the client's
    #: default sampler until the first glTexParameter)
    sampler: Handle = NULL
    params: dict[str, Any] = field(default_factory=dict)  # SamplerParameters members set
    base_level: int = 0
    max_level: int = 1000
    min_lod: float = -1000.0
    max_lod: float = 1000.0
    lod_bias: float = 0.0
    swizzle: tuple[int, int, int, int] = (0, 1, 2, 3)
    depth_stencil_mode: int = 0


@dataclass
class Program:
    handle: Handle
    spirv: dict[int, bytes] = field(default_factory=dict)
    reflection: bytes = b""
    #: default-block uniforms: name -> (location, offset or -1 for a sampler, glsl type)
    uniforms: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    block: bytearray = field(default_factory=bytearray)  # the default block's bytes
    version: int = 0  # moves with every uniform write that changed the block
    sampler_units: dict[int, int] = field(default_factory=dict)  # location -> unit
    block_bindings: list[int] = field(default_factory=list)  # uniform block index -> binding
    bindings_version: int = 0
    created: bool = False  # CreateShaderState sent


@dataclass
class Framebuffer:
    handle: Handle
    color: dict[int, tuple[Texture, int]] = field(default_factory=dict)  # index -> (tex, level)
    depth: tuple[Texture, int] | None = None  # a texture or renderbuffer (target says which)
    stencil: tuple[Texture, int] | None = None
    read: int = 0  # the colour attachment glReadBuffer names
    layer: dict[int, int] = field(default_factory=dict)  # colour index -> layer / cube face


@dataclass(frozen=True)
class Attrib:
    buffer: Handle
    size: int
    gl_type: int
    normalized: bool
    stride: int
    offset: int
    divisor: int = 0


class Tracker(TrackerCompute):
    """Frontend state + validate-time pushes."""

    def __init__(
        self, emitter: Emitter, *, width: int, height: int, whole_block: bool = False
    ) -> None:
        self.em = emitter
        self.rs = RenderState(width, height)
        #: MGPipeKind name -> value: every MGPHandleOnly record names its handle's kind
        self._kind = handle_kinds()
        self.alloc = {k: SlotAllocator(k) for k in self._kind}
        resources = self.alloc["Buffer"]  # one slot space for every resource kind (the
        for kind in resource_kinds():  # server cannot tell two kinds' slot 1 apart)
            self.alloc[kind] = resources
        self.cso = RenderStateCsoCache(
            emitter, whole_block=whole_block, allocator=self.alloc["RenderStateCso"]
        )
        self.sup = SetHashSuppressor()
        self.width, self.height = width, height
        self.draw_fbo: Framebuffer | None = None  # None = default framebuffer {0,1}
        self.read_fbo: Framebuffer | None = None
        self.program: Program | None = None
        self.units: dict[int, tuple[Texture | None, Handle]] = {}  # unit -> (texture, sampler)
        self._dirty_units: set[int] = set()  # units whose rows may have moved
        self._unresolved: set[int] = set()  # units sent with no view yet (a clear's push)
        self._sent_units: dict[int, tuple[Any, Handle]] = {}  # unit -> (view row, state) sent
        self.active_unit = 0
        self.attribs: dict[int, Attrib] = {}
        #: glVertexAttrib* current values: index -> (value class Float / Int / Uint, 4 u32 bits)
        self.attrib_values: dict[int, tuple[str, tuple[int, int, int, int]]] = {}
        self.index_buffer: Buffer | None = None
        #: (class name, index) -> (buffer, offset, size): glBindBufferBase / Range
        self.buffer_bindings: dict[tuple[str, int], tuple[Buffer, int, int]] = {}
        #: how many of them are storage / atomic-counter points (a draw may write them)
        self.writable_points = 0
        self.textures_pending: dict[Handle, Texture] = {}
        self._pushed: dict[str, Any] = {"program": NULL}
        self._validate_class = {c["name"]: c["validate_class"] for c in _t.tables().CALLS}
        self._bind = _t.enum("MGPipeBindBit")
        self._targets = _t.enum("MGPipeResourceTarget")
        self._fb_target = _t.enum("MGPipeFramebufferTarget")
        self._max_attribs = int(_t.constant("kMGPipeMaxVertexAttribs"))
        #: the binding generation: every client call that changes what a group other than
        #: the render state reads moves it and its groups' generations; a group pushed at its
        #: current generation is skipped with one integer compare
        self.gen = 0
        self.group_ver: dict[str, int] = dict.fromkeys(GROUPS, 0)
        self.group_gen: dict[str, int] = {}
        self.draw_gen = -1  # the generation every group of a draw was last pushed at
        self._init_compute()  # issue 19: images, transform feedback, the pending set

    def touch(self, *groups: str) -> None:
        """A binding changed: the named groups (every group when none is named) re-check at
        their next validate."""
        self.gen += 1
        ver = self.group_ver
        for g in groups or GROUPS:
            ver[g] += 1

    # -- validate -----------------------------------------------------------
    def validate(self, verb: str) -> None:
        """The one push point: before ``verb`` (a catalogue call), push what it reads."""
        cls = self._validate_class[verb]
        ver, seen = self.group_ver, self.group_gen
        for group in _GROUPS.get(cls, ("subdata",)):
            if group in _ALWAYS:
                getattr(self, f"_push_{group}")()
                continue
            v = ver[_GEN_OF.get(group, group)]
            if seen.get(group) != v:
                getattr(self, f"_push_{group}")()
                seen[group] = v
        if cls == _DRAW_CLASS:
            self.draw_gen = self.gen

    # -- resources ----------------------------------------------------------
    def texture_desc(self, tex: Texture, *, storage: bool = True) -> dict[str, Any]:
        """The texture's ``MGPResourceDesc`` (``storage`` False: the constructor's, no extent)."""
        desc: dict[str, Any] = {"Resource": tex.handle, "Target": self._targets[tex.target],
                                "StorageKind": _t.enum("TextureStorageType")["Mipmap"],
                                "BindMask": tex.bind_mask}  # fmt: skip
        if storage:
            desc |= {"InternalFormat": tex.internal_format, "Width": tex.width,
                     "Height": tex.height, "Depth": tex.depth, "ArrayLayers": tex.layers,
                     "Levels": tex.levels, "Samples": tex.samples, "Immutable": 1}  # fmt: skip
        return desc

    def sticky_bind(self, tex: Texture, bit: str) -> None:
        """Add ``bit`` to the texture's sticky bind mask; the first time, respecify it."""
        b = self._bind[bit]
        if tex.bind_mask & b:
            return
        tex.bind_mask |= b
        self.em.emit("ResourceRespecify", self.texture_desc(tex))

    def _push_subdata(self) -> None:
        """One ResourceSubData per dirty (texture, level): union box, the region list (none
        when one region is the union box: RegionCount 0) and the bytes."""
        align = stage_align()
        for tex in list(self.textures_pending.values()):
            for level, regions in sorted(tex.pending.items()):
                x0 = min(r[0] for r in regions)
                y0 = min(r[1] for r in regions)
                x1 = max(r[0] + r[2] for r in regions)
                y1 = max(r[1] + r[3] for r in regions)
                z0 = min(r[5] for r in regions)
                z1 = max(r[5] + r[6] for r in regions)
                parts: list[bytes] = []
                rows, at = [], 0
                for x, y, w, h, data, z, d in regions:
                    rows.append({"X": x, "Y": y, "Z": z, "W": w, "H": h, "D": d,
                                 "SrcOffset": at,
                                 "SrcRowStride": len(data) // max(h * d, 1),
                                 "SrcSliceStride": len(data) // max(d, 1)})  # fmt: skip
                    pad = -len(data) % align
                    parts += (data, b"\0" * pad) if pad else (data,)
                    at += len(data) + pad
                if len(rows) == 1:  # the region's own bytes: no copy
                    rows, blob = [], regions[0][4]
                else:  # one copy of every region, whatever their number
                    blob = b"".join(parts)
                payload = {
                    "Res": tex.handle, "Target": self._targets[tex.target], "Level": level,
                    "UnionBox": {"X": x0, "Y": y0, "Z": z0, "W": x1 - x0, "H": y1 - y0,
                                 "D": z1 - z0},
                    "RegionCount": len(rows),
                }  # fmt: skip
                self.em.emit("ResourceSubData", payload, (rows,), blob=blob)
            tex.pending.clear()
        self.textures_pending.clear()

    # -- framebuffers ---------------------------------------------------------
    def _push_framebuffer(self) -> None:
        if self.read_fbo is self.draw_fbo:
            self._push_fb(self.draw_fbo, "Both")
        else:
            self._push_fb(self.draw_fbo, "Draw")

    def _push_read_framebuffer(self) -> None:
        self._push_fb(self.read_fbo, "Both" if self.read_fbo is self.draw_fbo else "Read")

    def _push_blit_framebuffers(self) -> None:
        if self.read_fbo is self.draw_fbo:
            self._push_fb(self.draw_fbo, "Both")
            return
        for fb in (self.read_fbo, self.draw_fbo):  # MobileGL sticks the bits of both first
            self._stick_attachments(fb)
        self._push_fb(self.read_fbo, "Read")
        self._push_fb(self.draw_fbo, "Draw")

    def _stick_attachments(self, fb: Framebuffer | None) -> None:
        if fb is None:
            return
        for tex, _level in fb.color.values():
            self.sticky_bind(tex, "kMGPipeBindRenderTarget")
        for att in (fb.depth, fb.stencil):
            if att is not None:
                self.sticky_bind(att[0], "kMGPipeBindDepthStencil")

    def _push_fb(self, fb: Framebuffer | None, target: str) -> None:
        if fb is None:
            payload: dict[str, Any] = {
                "Fbo": default_framebuffer(), "Width": self.width, "Height": self.height,
                "Layers": 1, "Samples": 0, "IsDefault": 1, "Complete": 1,
                "DrawBuffers": [0] + [-1] * 7,
                "Color": [_no_surface()], "ReadSurface": _no_surface(),
            }  # fmt: skip
        else:
            self._stick_attachments(fb)
            color, draw = [], []
            for i in range(_t.constant("kMGMaxDrawBuffers")):
                tex, level = fb.color.get(i, (None, 0))
                color.append(self._surface(tex, level, fb.layer.get(i, 0)))
                draw.append(i if tex is not None else -1)
            first = next(iter(fb.color.values()), fb.depth or fb.stencil or (None, 0))
            w = max(first[0].width >> first[1], 1) if first[0] else 0
            h = max(first[0].height >> first[1], 1) if first[0] else 0
            payload = {
                "Fbo": fb.handle, "Color": color, "ReadSurface": color[fb.read],
                "DrawBuffers": draw, "Width": w, "Height": h, "Layers": 1, "IsDefault": 0,
                "Samples": first[0].samples if first[0] else 0,
                "Depth": self._surface(*(fb.depth or (None, 0))),
                "Stencil": self._surface(*(fb.stencil or (None, 0))),
                "Complete": int(bool(fb.color or fb.depth or fb.stencil)),
            }  # fmt: skip
        payload["Target"] = self._fb_target[target]
        digest = self.sup.offer("SetFramebufferState", payload)
        if digest is not None:
            payload["ContentHash"] = digest
            self.em.emit("SetFramebufferState", payload)

    @staticmethod
    def _surface(tex: Texture | None, level: int, layer: int = 0) -> dict[str, Any]:
        if tex is None:
            return _no_surface()
        target = _t.enum("MGPipeResourceTarget")[tex.target]
        # MGPSurface.Kind: kMGPipeSurfaceKind*, which MobileGL defines as the MGPipeKind
        # of what is attached
        kind = _t.enum("MGPipeKind")["Renderbuffer" if tex.target == "Renderbuffer" else "Texture"]
        return {"Res": tex.handle, "InternalFormat": tex.internal_format, "Kind": kind,
                "Level": level, "Layer": layer, "UploadTarget": target}  # fmt: skip

    # -- program ----------------------------------------------------------------
    def _push_program(self) -> None:
        prog = self.program
        h = prog.handle if prog else NULL
        if prog is not None and not prog.created:
            self._create_program(prog)
        if prog is not None and self._pushed.get("bindings") != (h, prog.bindings_version):
            self._push_bindings(prog)
        if self._pushed.get("program") != h:
            kind = self._kind["ShaderCso"]
            if prog is not None:
                self.em.emit("BindShaderState", {"Handle": h, "Kind": kind})
            self.em.emit("SetDrawProgram", {"Handle": h, "Kind": kind})
            self.em.emit("SetDispatchProgram", {"Handle": h, "Kind": kind})
            self._pushed["program"] = h

    def _create_program(self, prog: Program) -> None:
        g = self.em.stage.granule  # each blob's end rounded up (the stage's room rule)
        total = sum(len(b) + g for b in prog.spirv.values()) + len(prog.reflection) + g
        self.em.room(total)
        stages: list[dict[str, int]] = [{} for _ in range(_program_stage_count())]
        mask = 0
        for stage, code in sorted(prog.spirv.items()):
            off, size, seg = self.em.stage_bytes(code)
            stages[stage] = {"Offset": off, "Size": size, "Seg": seg}
            mask |= 1 << stage
        off, size, seg = self.em.stage_bytes(prog.reflection)
        self.em.emit("CreateShaderState", {
            "Cso": prog.handle, "StageMask": mask, "SpirvStatus": 1, "LinkStatus": 1,
            "GlobalUboSize": len(prog.block),
            "Spirv": stages, "Reflection": {"Offset": off, "Size": size, "Seg": seg},
        })  # fmt: skip
        prog.created = True

    def _push_bindings(self, prog: Program) -> None:
        units = [{"Location": loc, "Unit": unit} for loc, unit in sorted(prog.sampler_units.items())]
        blocks = list(prog.block_bindings)
        self.em.emit("SetProgramBindings", {
            "Cso": prog.handle, "BlockBindingCount": len(blocks),
            "SamplerUnitCount": len(units), "StorageOverrideCount": 0,
        }, (np.array(blocks, np.int32), units, []))  # fmt: skip
        self._pushed["bindings"] = (prog.handle, prog.bindings_version)

    def _push_constants(self) -> None:
        prog = self.program
        if prog is None or not prog.block:
            return
        key = (prog.handle, prog.version)
        if self._pushed.get("constants") == key:
            return
        off, size, seg = self.em.stage_blob(bytes(prog.block))
        self.em.emit("SetGlobalConstants", {"ShaderCso": prog.handle, "Version": prog.version,
                                            "Blob": {"Offset": off, "Size": size, "Seg": seg}})  # fmt: skip
        self._pushed["constants"] = key

    def _push_shader_buffers(self) -> None:
        """One SetShaderBuffers per class with a bound point: rows [0, highest + 1); a storage
        or atomic-counter point is writable unless the program in use declares its storage
        block ``readonly`` (the client cannot tell more of what the shader writes)."""
        words = int(_t.constant("kMGPipeShaderBufferWritableMaskWords"))
        for cls, const in SHADER_BUFFER_CLASSES.items():
            points = {i: b for (c, i), b in self.buffer_bindings.items() if c == cls}
            if not points and self._pushed.get(("buffers", cls)) is None:
                continue
            count = max(points, default=-1) + 1
            rows: list[Any] = []
            mask = [0] * words
            for i in range(count):
                b = points.get(i)
                if b is None:
                    rows.append(None)
                    continue
                buf, offset, size = b
                rows.append((buf.handle[0], buf.handle[1], offset,
                             size if size else max(buf.size - offset, 0)))  # fmt: skip
                if cls != "uniform" and i not in self.readonly_points(cls):
                    mask[i >> 5] |= 1 << (i & 31)
            head = {"Class": int(_t.constant(const)), "Start": 0, "Count": count,
                    "WritableMask": mask, "HostSpanCount": 0}  # fmt: skip
            tail = _ROWS["SetShaderBuffers"]().rows(rows, "SetShaderBuffers")
            digest = self.sup.offer("SetShaderBuffers", head, (tail,))  # per class (its slot)
            if digest is not None:
                self.em.emit("SetShaderBuffers", dict(head, ContentHash=digest), (tail, []))
            self._pushed[("buffers", cls)] = count

    # -- samplers ---------------------------------------------------------------
    def _push_samplers(self) -> None:
        self._push_sampler_sets(resolve=True)

    def _push_clear_samplers(self) -> None:
        self._push_sampler_sets(resolve=False)

    def mark_units(self, *units: int) -> None:
        """These units' rows (every unit's when none is named) re-check at the next sampler
        push; the sampler group is touched."""
        if units:
            self._dirty_units.update(units)
        else:
            self._dirty_units.update(self.units)
            self._dirty_units.update(self._sent_units)
        self.touch("samplers")

    def _push_sampler_sets(self, *, resolve: bool) -> None:
        """Only the units whose rows moved, as one window [first, last] of each set: a draw
        costs the units that changed, not the units bound."""
        dirty = self._dirty_units
        if resolve and self._unresolved:
            dirty |= self._unresolved
            self._unresolved = set()
        if not dirty:
            return
        changed: dict[int, tuple[Any, Handle]] = {}
        sent = self._sent_units
        for unit in sorted(dirty):
            tex, sampler = self.units.get(unit, (None, NULL))
            if tex is not None and tex.view.is_null:
                if resolve:
                    self.sticky_bind(tex, "kMGPipeBindSampler")
                    tex.view = self.alloc["SamplerViewCso"].alloc()
                    self.em.emit("CreateSamplerView", {
                        "Cso": tex.view, "Texture": tex.handle,
                        "InternalFormat": tex.internal_format,
                        "Target": self._targets[tex.target],
                        "NumLevels": tex.levels, "NumLayers": tex.layers,
                    })  # fmt: skip
                else:
                    self._unresolved.add(unit)
            view = (tex.view, tex.handle) if tex is not None else None
            state = sampler if not sampler.is_null or tex is None else tex.sampler
            row = (view, state)
            if sent.get(unit) != row:
                changed[unit] = row
        dirty.clear()
        if not changed:
            return
        first, last = min(changed), max(changed)
        for call, col in (("SetSamplerViews", 0), ("BindSamplerStates", 1)):
            moved = [u for u, r in changed.items() if sent.get(u, (None, NULL))[col] != r[col]
                     or u not in sent]  # fmt: skip
            if not moved:
                continue
            lo, hi = min(moved), max(moved)
            rows: list[Any] = []
            for u in range(lo, hi + 1):
                r = changed.get(u) or sent.get(u) or (None, NULL)
                if col == 0:
                    v = r[0]
                    rows.append((v[0][0], v[0][1], v[1][0], v[1][1]) if v else None)
                else:
                    rows.append(r[1])  # a handle: (Slot, Gen)
            head = {"Start": lo, "Count": hi - lo + 1}
            tail = _ROWS[call]().rows(rows, call)
            digest = self.sup.offer(call, head, (tail,))
            if digest is not None:
                self.em.emit(call, dict(head, ContentHash=digest), (tail,))
        del first, last
        sent.update(changed)

    # -- render state and the context's other state ------------------------------
    def _push_render_state(self) -> None:
        self.cso.validate(self.rs)

    def _push_pixel_pack(self) -> None:
        pack = self.rs.pixel_pack.tobytes()
        if self._pushed.get("pack") != pack:
            self.em.emit("SetPixelPackState", {"Pack": pack})
            self._pushed["pack"] = pack

    def _push_patch(self) -> None:
        p = self.rs.p
        outer = _floats(p["PatchDefaultOuterLevel"].tolist())
        inner = _floats(p["PatchDefaultInnerLevel"].tolist())
        state = (int(p["PatchVertices"]), tuple(outer), tuple(inner))
        if self._pushed.get("patch") != state:
            self.em.emit("SetPatchState", {"Vertices": state[0], "Outer": outer[:4],
                                           "Inner": inner[:2]})  # fmt: skip
            self._pushed["patch"] = state

    def _push_attrib_defaults(self) -> None:
        n = self._max_attribs
        one = _struct.unpack("<I", _struct.pack("<f", 1.0))[0]
        values = tuple(self.attrib_values.get(i, ("Float", (0, 0, 0, one))) for i in range(n))
        if self._pushed.get("attrib_defaults") == values:
            return
        rows = [{"Location": i, "ValueClass": attrib_class(cls), f"{cls}View": list(bits)}
                for i, (cls, bits) in enumerate(values)]  # fmt: skip
        # every attribute's current value is carried: Mask names them all (Count = its bits)
        self.em.emit("SetVertexAttribDefaults", {"Mask": (1 << n) - 1, "Count": n}, (rows,))
        self._pushed["attrib_defaults"] = values

    def _push_context_values(self) -> None:
        values = (self.active_unit, max(self.units, default=0))
        if self._pushed.get("context_values") == values:
            return
        self.em.emit("SetContextValues", {"ActiveTextureUnit": values[0],
                                          "MaxTouchedTextureUnit": values[1]})  # fmt: skip
        self._pushed["context_values"] = values

    # -- vertex input -------------------------------------------------------------
    def _push_vertex(self) -> None:
        count = max(self.attribs, default=-1) + 1
        attribs = tuple(self.attribs.get(i) for i in range(self._max_attribs))
        if self._pushed.get("attribs") != attribs:
            self._push_vertex_elements(attribs)
        rows = [(a.buffer[0], a.buffer[1], a.offset, a.stride) if a else None
                for a in attribs[:count]]  # fmt: skip
        tail = _ROWS["SetVertexBuffers"]().rows(rows, "SetVertexBuffers")
        head = {"Start": 0, "Count": count}
        digest = self.sup.offer("SetVertexBuffers", head, (tail,))
        if digest is not None:
            self.em.emit("SetVertexBuffers", dict(head, ContentHash=digest), (tail,))
        ib = self.index_buffer.handle if self.index_buffer else NULL
        if self._pushed.get("index") != ib:
            self.em.emit("SetIndexBuffer", {"Res": ib})
            self._pushed["index"] = ib

    def _push_vertex_elements(self, attribs: tuple[Attrib | None, ...]) -> None:
        """One VAO, one handle: a configuration change re-sends the create (D-G1). Every
        one of the kMGPipeMaxVertexAttribs attributes and binding points is sent."""
        handle = self._pushed.get("ve")
        first = handle is None
        if first:
            handle = self.alloc["VertexElementsCso"].alloc()
        # memory order: Offset, Type, Size, Enabled, Normalized, BindingIndex
        wires = [(0, a.gl_type, a.size, 1, a.normalized, i) if a else (0, 0, 0, 0, 0, i)
                 for i, a in enumerate(attribs)]  # fmt: skip
        binds = [(a.stride, a.divisor) if a else None for a in attribs]
        blob = (_attrib_wires().rows(wires, "MGPVertexAttribWire")
                + _binding_wires().rows(binds, "MGPVertexBindingPointWire"))  # fmt: skip
        self.em.emit("CreateVertexElements",
                     {"Cso": handle, "AttributeCount": len(attribs),
                      "BindingPointCount": len(attribs)}, blob=blob)  # fmt: skip
        if first:
            self.em.emit("BindVertexElements",
                         {"Handle": handle, "Kind": self._kind["VertexElementsCso"]})  # fmt: skip
        self._pushed["ve"], self._pushed["attribs"] = handle, attribs

    # -- deaths ---------------------------------------------------------------
    def death(self, kind: str, handle: Handle, delete_call: str | None) -> None:
        """The wire delete (if the kind has one), ``ObjectDeath``, the death forwarded to
        every client emitter that may name the handle, then the slot freed (seed 001 §5.6)."""
        if delete_call is not None:
            self.em.emit(delete_call, {"Handle": handle, "Kind": self._kind[kind]})
        self.em.emit("ObjectDeath", {"Handle": handle, "Kind": self._kind[kind]})
        for key in [k for k, v in self._pushed.items() if v == handle]:
            del self._pushed[key]  # e.g. the bound program: re-pushed at the next validate
        if self._pushed.get("program") is None:
            self._pushed["program"] = NULL
        self.sup.forget()  # a recycled {slot, gen} must never match a remembered set
        self._sent_units.clear()  # ... and no remembered sampler row either
        self.mark_units()
        self.touch()  # ... so every group offers its set again
        self.alloc[kind].free(handle)


def attrib_class(name: str) -> int:
    """``MGPAttribValue.ValueClass`` of value class ``name`` (``Float``, ``Int``, ``Uint``):
    the tables' ``kMGPipeAttribValueClass<name>``."""
    return int(_t.constant(f"kMGPipeAttribValueClass{name}"))


def _no_surface() -> dict[str, Any]:
    """An empty attachment point: ``MGPSurface.Kind`` ``kMGPipeSurfaceKindNone``, MobileGL's
    ``MGPipeKind::None``."""
    return {"Kind": _t.enum("MGPipeKind")["None"]}


def _floats(value: Any) -> list[float]:
    """A (nested) tuple / list of numbers, flat."""
    if isinstance(value, (tuple, list)):
        return [f for v in value for f in _floats(v)]
    return [float(value)]


def _tail_element(call: str) -> str:
    return next(t["element"] for t in _t.tables().TAILS if t["call"] == call)


def _rows_of(call: str, names: tuple[str, ...]) -> Any:
    """The row packer of ``call``'s first tail (its element from ``TAILS``), built on first use."""
    return lambda: row_packer(_tail_element(call), names)


#: the group pushes' tail rows: members in the element's memory order (the packer checks)
_ROWS = {
    "SetSamplerViews": _rows_of("SetSamplerViews", ("View.Slot", "View.Gen", "Texture.Slot",
                                                    "Texture.Gen")),
    "BindSamplerStates": _rows_of("BindSamplerStates", ("Slot", "Gen")),
    "SetShaderBuffers": _rows_of("SetShaderBuffers", ("Res.Slot", "Res.Gen", "Offset", "Size")),
    "SetVertexBuffers": _rows_of("SetVertexBuffers", ("Res.Slot", "Res.Gen", "Offset", "Stride")),
}  # fmt: skip


def _attrib_wires() -> Any:
    return row_packer("MGPVertexAttribWire",
                      ("Offset", "Type", "Size", "Enabled", "Normalized", "BindingIndex"))


def _binding_wires() -> Any:
    return row_packer("MGPVertexBindingPointWire", ("Stride", "Divisor"))


def _program_stage_count() -> int:
    info = _t.struct_info("MGPProgramDesc")
    return next(int(m["count"]) for m in info["members"] if m["name"] == "Spirv")
