"""The client state tracker (seed 001 §5, seed 004 §5.1–§5.4).

Frontend objects live here; pushes happen only in :meth:`Tracker.validate`, called once
before each verb (never inside a GL setter). The verb's validate class comes from
``CALLS[...]["validate_class"]``; each class pushes the groups it reads, in the
recommended (not contractual) order of seed 004 §5.3: framebuffer, program, sampler
views / states, render state (CSO cache), vertex elements / buffers / index buffer.
Texture uploads accumulate client-side and leave as one ``ResourceSubData`` per
``(texture, level)`` at the next validate point (seed 001 §6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..schema import layouts
from ..schema import tables as _t
from ..schema.kinds import handle_kinds, resource_kinds
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.stage import stage_align
from .cso_cache import RenderStateCsoCache
from .emitter import Emitter
from .render_state import RenderState
from .slots import SlotAllocator
from .suppressor import SetHashSuppressor

__all__ = ["Buffer", "Texture", "Program", "Framebuffer", "Attrib", "Tracker"]

#: Which groups each validate class pushes (tracker policy, not a layout).
_GROUPS: dict[str, tuple[str, ...]] = {
    "kDraw": ("subdata", "framebuffer", "program", "samplers", "render_state", "vertex"),
    "kClear": ("subdata", "framebuffer", "render_state"),
    "kReadback": ("subdata", "framebuffer", "pixel_pack"),
    "kBlitOrCopy": ("subdata", "framebuffer"),
}


@dataclass
class Buffer:
    handle: Handle
    size: int = 0


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


@dataclass
class Program:
    handle: Handle


@dataclass
class Framebuffer:
    handle: Handle
    color: dict[int, tuple[Texture, int]] = field(default_factory=dict)  # index -> (tex, level)
    depth: tuple[Texture, int] | None = None  # a texture or renderbuffer (target says which)
    stencil: tuple[Texture, int] | None = None
    read: int = 0  # the colour attachment glReadBuffer names


@dataclass(frozen=True)
class Attrib:
    buffer: Handle
    size: int
    gl_type: int
    normalized: bool
    stride: int
    offset: int
    divisor: int = 0


#: groups whose inputs no generation covers: checked at every validate
_ALWAYS = frozenset({"subdata", "render_state", "pixel_pack"})
_DRAW_CLASS = "kDraw"


class Tracker:
    """Frontend state + validate-time pushes."""

    def __init__(
        self, emitter: Emitter, *, width: int, height: int, whole_block: bool = False
    ) -> None:
        self.em = emitter
        self.rs = RenderState()
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
        self.program: Program | None = None
        self.units: dict[int, tuple[Texture | None, Handle]] = {}  # unit -> (texture, sampler)
        self.attribs: dict[int, Attrib] = {}
        self.index_buffer: Buffer | None = None
        self.textures_pending: dict[Handle, Texture] = {}
        self._pushed: dict[str, Any] = {}
        self._validate_class = {c["name"]: c["validate_class"] for c in _t.tables().CALLS}
        #: the binding generation: every client call that changes what a group other than
        #: the render state reads moves it; a group pushed at the current generation is
        #: skipped with one integer compare (its suppressor would skip it anyway)
        self.gen = 0
        self.group_gen: dict[str, int] = {}
        self.draw_gen = -1  # the generation every group of a draw was last pushed at

    def touch(self) -> None:
        """A binding changed: every group re-checks at its next validate."""
        self.gen += 1

    # -- validate -----------------------------------------------------------
    def validate(self, verb: str) -> None:
        """The one push point: before ``verb`` (a catalogue call), push what it reads."""
        cls = self._validate_class[verb]
        gen, seen = self.gen, self.group_gen
        for group in _GROUPS.get(cls, ("subdata",)):
            if group in _ALWAYS or seen.get(group) != gen:
                getattr(self, f"_push_{group}")()
                seen[group] = gen
        if cls == _DRAW_CLASS:
            self.draw_gen = gen

    def _push_subdata(self) -> None:
        """One ResourceSubData per dirty (texture, level): union box + region list + bytes."""
        target_enum = _t.enum("MGPipeResourceTarget")
        for tex in list(self.textures_pending.values()):
            for level, regions in sorted(tex.pending.items()):
                x0 = min(r[0] for r in regions)
                y0 = min(r[1] for r in regions)
                x1 = max(r[0] + r[2] for r in regions)
                y1 = max(r[1] + r[3] for r in regions)
                blob, rows, align = b"", [], stage_align()
                for x, y, w, h, data in regions:
                    rows.append({"X": x, "Y": y, "Z": 0, "W": w, "H": h, "D": 1,
                                 "SrcOffset": len(blob), "SrcRowStride": len(data) // max(h, 1),
                                 "SrcSliceStride": len(data)})  # fmt: skip
                    blob += data + b"\0" * (-len(data) % align)
                payload = {
                    "Res": tex.handle, "Target": target_enum[tex.target], "Level": level,
                    "UnionBox": {"X": x0, "Y": y0, "Z": 0, "W": x1 - x0, "H": y1 - y0, "D": 1},
                    "RegionCount": len(rows),
                }  # fmt: skip
                self.em.emit("ResourceSubData", payload, (rows,), blob=blob)
            tex.pending.clear()
        self.textures_pending.clear()

    def _push_framebuffer(self) -> None:
        fb = self.draw_fbo
        if fb is None:
            payload: dict[str, Any] = {
                "Fbo": default_framebuffer(), "Width": self.width, "Height": self.height,
                "Layers": 1, "Samples": 0, "IsDefault": 1, "Complete": 1,
                "DrawBuffers": [0] + [-1] * 7,
                "Color": [_no_surface()], "ReadSurface": _no_surface(),
            }  # fmt: skip
        else:
            color, draw = [], []
            for i in range(_t.constant("kMGMaxDrawBuffers")):
                tex, level = fb.color.get(i, (None, 0))
                color.append(self._surface(tex, level))
                draw.append(i if tex is not None else -1)
            first = next(iter(fb.color.values()), fb.depth or fb.stencil or (None, 0))
            w = max(first[0].width >> first[1], 1) if first[0] else 0
            h = max(first[0].height >> first[1], 1) if first[0] else 0
            payload = {
                "Fbo": fb.handle, "Color": color, "ReadSurface": color[fb.read],
                "DrawBuffers": draw, "Width": w, "Height": h, "Layers": 1, "IsDefault": 0,
                "Depth": self._surface(*(fb.depth or (None, 0))),
                "Stencil": self._surface(*(fb.stencil or (None, 0))),
                "Complete": int(bool(fb.color or fb.depth or fb.stencil)),
            }  # fmt: skip
        payload["Target"] = _t.enum("MGPipeFramebufferTarget")["Both"]
        digest = self.sup.offer("SetFramebufferState", payload)
        if digest is not None:
            payload["ContentHash"] = digest
            self.em.emit("SetFramebufferState", payload)

    @staticmethod
    def _surface(tex: Texture | None, level: int) -> dict[str, Any]:
        if tex is None:
            return _no_surface()
        target = _t.enum("MGPipeResourceTarget")[tex.target]
        # MGPSurface.Kind: kMGPipeSurfaceKind*, which MobileGL defines as the MGPipeKind
        # of what is attached
        kind = _t.enum("MGPipeKind")["Renderbuffer" if tex.target == "Renderbuffer" else "Texture"]
        return {"Res": tex.handle, "InternalFormat": tex.internal_format, "Kind": kind,
                "Level": level, "UploadTarget": target}  # fmt: skip

    def _push_program(self) -> None:
        h = self.program.handle if self.program else NULL
        if self._pushed.get("program") != h:
            self.em.emit("SetDrawProgram", {"Handle": h, "Kind": self._kind["ShaderCso"]})
            self._pushed["program"] = h

    def _push_samplers(self) -> None:
        count = max(self.units, default=-1) + 1
        views, states = [], []
        for unit in range(count):
            tex, sampler = self.units.get(unit, (None, NULL))
            if tex is not None and tex.view.is_null:
                tex.view = self.alloc["SamplerViewCso"].alloc()
                self.em.emit("CreateSamplerView", {
                    "Cso": tex.view, "Texture": tex.handle, "InternalFormat": tex.internal_format,
                    "Target": _t.enum("MGPipeResourceTarget")[tex.target],
                    "NumLevels": tex.levels, "NumLayers": 1,
                })  # fmt: skip
            views.append({"View": tex.view, "Texture": tex.handle} if tex else {})
            states.append(sampler)
        head = {"Start": 0, "Count": count}
        for call, rows in (("SetSamplerViews", views), ("BindSamplerStates", states)):
            tail = layouts.array(layouts.dtype(_tail_element(call)), rows, call)
            digest = self.sup.offer(call, head, (tail,))
            if digest is not None:
                self.em.emit(call, dict(head, ContentHash=digest), (tail,))

    def _push_render_state(self) -> None:
        self.cso.validate(self.rs)

    def _push_vertex(self) -> None:
        count = max(self.attribs, default=-1) + 1
        attribs = tuple(self.attribs.get(i) for i in range(count))
        if self._pushed.get("attribs") != attribs:
            self._push_vertex_elements(attribs)
        rows = [{"Res": a.buffer, "Offset": a.offset, "Stride": a.stride} if a else {}
                for a in attribs]  # fmt: skip
        tail = layouts.array(layouts.dtype(_tail_element("SetVertexBuffers")), rows)
        head = {"Start": 0, "Count": count}
        digest = self.sup.offer("SetVertexBuffers", head, (tail,))
        if digest is not None:
            self.em.emit("SetVertexBuffers", dict(head, ContentHash=digest), (tail,))
        ib = self.index_buffer.handle if self.index_buffer else NULL
        if self._pushed.get("index") != ib:
            self.em.emit("SetIndexBuffer", {"Res": ib})
            self._pushed["index"] = ib

    def _push_vertex_elements(self, attribs: tuple[Attrib | None, ...]) -> None:
        """One VAO, one handle: a configuration change re-sends the create (D-G1)."""
        handle = self._pushed.get("ve")
        first = handle is None
        if first:
            handle = self.alloc["VertexElementsCso"].alloc()
        wires = [{"Type": a.gl_type, "Size": a.size, "Normalized": a.normalized,
                  "Offset": 0, "BindingIndex": i, "Enabled": 1} if a else {}
                 for i, a in enumerate(attribs)]  # fmt: skip
        binds = [{"Stride": a.stride, "Divisor": a.divisor} if a else {} for a in attribs]
        blob = (layouts.array(layouts.dtype("MGPVertexAttribWire"), wires).tobytes()
                + layouts.array(layouts.dtype("MGPVertexBindingPointWire"), binds).tobytes())  # fmt: skip
        self.em.emit("CreateVertexElements",
                     {"Cso": handle, "AttributeCount": len(attribs),
                      "BindingPointCount": len(attribs)}, blob=blob)  # fmt: skip
        if first:
            self.em.emit("BindVertexElements",
                         {"Handle": handle, "Kind": self._kind["VertexElementsCso"]})  # fmt: skip
        self._pushed["ve"], self._pushed["attribs"] = handle, attribs

    def _push_pixel_pack(self) -> None:
        pack = self.rs.pixel_pack.tobytes()
        if self._pushed.get("pack") != pack:
            self.em.emit("SetPixelPackState", {"Pack": pack})
            self._pushed["pack"] = pack

    # -- deaths ---------------------------------------------------------------
    def death(self, kind: str, handle: Handle, delete_call: str | None) -> None:
        """The wire delete (if the kind has one), ``ObjectDeath``, the death forwarded to
        every client emitter that may name the handle, then the slot freed (seed 001 §5.6)."""
        if delete_call is not None:
            self.em.emit(delete_call, {"Handle": handle, "Kind": self._kind[kind]})
        self.em.emit("ObjectDeath", {"Handle": handle, "Kind": self._kind[kind]})
        for key in [k for k, v in self._pushed.items() if v == handle]:
            del self._pushed[key]  # e.g. the bound program: re-pushed at the next validate
        self.sup.forget()  # a recycled {slot, gen} must never match a remembered set
        self.touch()  # ... so every group offers its set again
        self.alloc[kind].free(handle)


def _no_surface() -> dict[str, Any]:
    """An empty attachment point: ``MGPSurface.Kind`` ``kMGPipeSurfaceKindNone``, MobileGL's
    ``MGPipeKind::None``."""
    return {"Kind": _t.enum("MGPipeKind")["None"]}


def _tail_element(call: str) -> str:
    return next(t["element"] for t in _t.tables().TAILS if t["call"] == call)
