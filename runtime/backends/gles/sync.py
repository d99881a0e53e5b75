"""``SyncRenderState`` in Espryt's shape (seed 000 §3): working block -> GLES calls.

Inputs: the server's working ``RenderStateParameters`` bytes and their ``Uint16`` version
(one per context, written by ``BindRenderState`` / ``SetDynamicState``), and the size of the
bound draw surface. State kept here (the file-scope shadows of §3.1):

- ``synced_version`` / ``has_synced``: the early-out (§3.2): an unchanged version returns
  before anything is compared;
- ``shadow``: a byte copy of the block as last synced. Three spans are compared (§3.3):
  head ``[0, kMGPipeBlendSpanBegin)``, blend ``[kMGPipeBlendSpanBegin, kMGPipeBlendSpanEnd)``,
  tail ``[kMGPipeBlendSpanEnd, sizeof)`` -- the bounds come from the generated tables
  (``RENDER_STATE["espryt_spans"]`` and ``["size"]``). Each gated block (§3.4) runs only
  when its span differs and issues only the GL calls whose members differ from the shadow;
  each dirty span is copied back into the shadow (§3.5);
- the resolved viewport and scissor shadows (§3.6): integers as last given to
  ``glViewport`` / ``glScissor``. A written scissor box of zero size stays zero:
  ``glScissor(0, 0, 0, 0)`` with the test on rejects every fragment.

Members are read by name through the generated layout (a numpy record over the bytes).
GLES 3.0 has no logic op, polygon mode, point size, sample mask or sample shading: those
members are left alone (as Espryt leaves a null entry point alone).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...schema import layouts
from ...schema import tables as _t
from .errors import DriverRefused
from .gl import GL, CountedGL
from .glenums import gl_table
from ..limits import viewport_box

__all__ = ["RenderStateSync", "DrawBuffersIndexedMissing", "span_bounds"]


class DrawBuffersIndexedMissing(DriverRefused):
    """Per-draw-buffer state differs, and the context has no indexed draw-buffer calls."""

    def __init__(self, member: str) -> None:
        super().__init__(
            f"SyncRenderState.{member}",
            "per-draw-buffer state needs GLES 3.2 " "or GL_OES_draw_buffers_indexed",
        )


#: Bool member -> the GL capability it switches (Espryt's SYNC_CAPABILITY list, GLES 3.0).
_CAPS = (
    ("DepthTestEnabled", GL.GL_DEPTH_TEST),
    ("DitherEnabled", GL.GL_DITHER),
    ("SampleAlphaToCoverageEnabled", GL.GL_SAMPLE_ALPHA_TO_COVERAGE),
    ("SampleCoverageEnabled", GL.GL_SAMPLE_COVERAGE),
    ("PolygonOffsetFillEnabled", GL.GL_POLYGON_OFFSET_FILL),
    ("RasterizerDiscardEnabled", GL.GL_RASTERIZER_DISCARD),
    ("StencilTestEnabled", GL.GL_STENCIL_TEST),
    ("CullFaceEnabled", GL.GL_CULL_FACE),
)
_FACES = (GL.GL_FRONT, GL.GL_BACK)


@lru_cache(maxsize=None)
def span_bounds() -> tuple[str, int, int, int]:
    """(struct, blend begin, blend end, size) from the generated tables."""
    rs = _t.tables().RENDER_STATE
    spans = rs["espryt_spans"]
    return (rs["struct"], int(spans["kMGPipeBlendSpanBegin"]), int(spans["kMGPipeBlendSpanEnd"]),
            int(rs["size"]))  # fmt: skip


@dataclass(frozen=True)
class BlendLayout:
    """Where ``BlendStates`` lies in the block and its members' byte slices per element."""

    start: int
    size: int  # one PerBufferBlendState
    count: int
    enable: tuple[tuple[int, int], ...]
    func: tuple[tuple[int, int], ...]  # SrcFactorRGB, DstFactorRGB, SrcFactorAlpha, DstFactorAlpha
    equation: tuple[tuple[int, int], ...]  # ColorEquation, AlphaEquation

    @staticmethod
    def words(elem: bytes, group: tuple[tuple[int, int], ...]) -> list[int]:
        return [int.from_bytes(elem[o:e], "little") for o, e in group]


@lru_cache(maxsize=None)
def blend_layout(struct: str) -> BlendLayout:
    member = next(m for m in _t.struct_info(struct)["members"] if m["name"] == "BlendStates")
    slices = {m["name"]: (int(m["offset"]), int(m["offset"]) + int(m["size"]))
              for m in _t.struct_info(member["struct"])["members"]}  # fmt: skip

    def group(*names: str) -> tuple[tuple[int, int], ...]:
        return tuple(slices[n] for n in names)

    return BlendLayout(int(member["offset"]), int(member["elem_size"]), int(member["count"]),
                       group("Enabled"),
                       group("SrcFactorRGB", "DstFactorRGB", "SrcFactorAlpha", "DstFactorAlpha"),
                       group("ColorEquation", "AlphaEquation"))  # fmt: skip


def _i(v: object) -> int:
    return int(v)  # type: ignore[call-overload]


def _vec(v: np.ndarray | np.void) -> np.ndarray:
    """A vector member (``FloatVec4``, ``IntVec4``, ``BoolVec4``, ... : a struct of ``X``,
    ``Y``, ... in the tables), or an array of them, as components on the last axis."""
    return np.stack([np.asarray(v[n]) for n in v.dtype.names], axis=-1)


class RenderStateSync:
    """One context's shadows; :meth:`sync` is Espryt's ``SyncRenderState``."""

    def __init__(self, gl: CountedGL, indexed_draw_buffers: bool) -> None:
        self.gl = gl
        self.struct, self.begin, self.end, self.size = span_bounds()
        self.shadow = bytearray(self.size)
        self.sv = layouts.view(self.struct, self.shadow)
        self.synced_version = 0
        self.has_synced = False
        self.force_full = True
        self.viewport = (-1, -1, -1, -1)
        self.scissor = (-1, -1, -1, -1)
        self.surface = (0, 0)
        self.surface_moved = False
        self.indexed = indexed_draw_buffers
        self.stats: Counter[str] = Counter()
        self._bf, self._be = gl_table("BlendFactor"), gl_table("BlendEquation")
        self._df, self._so = gl_table("DepthTestFunc"), gl_table("StencilOperation")
        self._cullm, self._front = gl_table("CullFaceMode"), gl_table("FrontFaceMode")
        self._blend_layout = blend_layout(self.struct)
        vp = next(m for m in _t.struct_info(self.struct)["members"] if m["name"] == "Viewports")
        self._vp_bytes = (int(vp["offset"]), int(vp["offset"]) + int(vp["elem_size"]))  # [0]
        self._vp_raw = b""

    def invalidate(self) -> None:
        """The next sync compares nothing and issues every block (a new context)."""
        self.force_full = True
        self.viewport = self.scissor = (-1, -1, -1, -1)

    def set_surface(self, width: int, height: int) -> None:
        """The bound draw surface: the viewport / scissor fallbacks read its size."""
        if (width, height) != self.surface:
            self.surface = (width, height)
            self.surface_moved = True
            self._vp_raw = b""  # the fallback reads the surface: resolve again

    # -- SyncRenderState ---------------------------------------------------------
    def sync(self, data: bytearray, version: int, view: np.void) -> None:
        """``data`` is the working block, ``view`` a layout record over it."""
        full = self.force_full or not self.has_synced
        if not full and version == self.synced_version and not self.surface_moved:
            self.stats["early_out"] += 1
            return
        self.force_full = False
        b, e, n = self.begin, self.end, self.size
        shadow = self.shadow
        head = full or data[:b] != shadow[:b]
        blend = full or data[b:e] != shadow[b:e]
        tail = full or data[e:n] != shadow[e:n]
        self.stats["runs"] += 1
        p, s = view, self.sv
        self._viewport(p, data)
        if self.surface_moved and not tail:
            self._scissor(p, s, full)  # only the resolved box can have moved
        self.surface_moved = False
        if tail:
            self.stats["tail"] += 1
            self._caps(p, s, full)
        if blend:
            self.stats["blend"] += 1
            self._blend(data, full)
        if tail:
            self._depth(p, s, full)
            self._stencil(p, s, full)
            self._color_mask(p, s, full)
            self._clear_values(p, s, full)
            self._cull(p, s, full)
            self._scissor(p, s, full)
            self._sample_coverage(p, s, full)
        if head:
            self.stats["head"] += 1
            self._head(p, s, full)
        # write-back, span by span (padding included: the next compare is exact)
        self.synced_version = version
        if head:
            shadow[:b] = data[:b]
        if blend:
            shadow[b:e] = data[b:e]
        if tail:
            shadow[e:n] = data[e:n]
        self.has_synced = True

    # -- ungated -------------------------------------------------------------------
    def _viewport(self, p: np.void, data: bytearray) -> None:
        o, e = self._vp_bytes
        raw = bytes(data[o:e])
        if raw == self._vp_raw and self.viewport != (-1, -1, -1, -1):
            return  # Viewports[0] and the surface as at the last resolve
        self._vp_raw = raw
        x, y, w, h = viewport_box("RenderState", *_vec(p["Viewports"][0]))  # NaN refused
        if w <= 0 or h <= 0:  # never set: the surface (GL's initial viewport)
            x, y, (w, h) = 0, 0, self.surface
        box = (x, y, w, h)
        if box != self.viewport:
            self.gl.glViewport(*box)
            self.viewport = box

    # -- tail ------------------------------------------------------------------------
    def _caps(self, p: np.void, s: np.void, full: bool) -> None:
        gl = self.gl
        for member, cap in _CAPS:
            on = bool(p[member])
            if full or on != bool(s[member]):
                (gl.glEnable if on else gl.glDisable)(cap)
        on = bool(_i(p["ScissorTestEnabledMask"]) & 1)
        if full or on != bool(_i(s["ScissorTestEnabledMask"]) & 1):
            (gl.glEnable if on else gl.glDisable)(GL.GL_SCISSOR_TEST)
        restart = bool(p["PrimitiveRestartEnabled"]) or bool(p["PrimitiveRestartFixedIndexEnabled"])
        was = bool(s["PrimitiveRestartEnabled"]) or bool(s["PrimitiveRestartFixedIndexEnabled"])
        if full or restart != was:
            (gl.glEnable if restart else gl.glDisable)(GL.GL_PRIMITIVE_RESTART_FIXED_INDEX)

    def _depth(self, p: np.void, s: np.void, full: bool) -> None:
        gl = self.gl
        if full or p["DepthFunc"] != s["DepthFunc"]:
            gl.glDepthFunc(self._df[_i(p["DepthFunc"])])
        if full or p["DepthMask"] != s["DepthMask"]:
            gl.glDepthMask(bool(p["DepthMask"]))
        near, far = _vec(p["DepthRanges"][0])
        if full or (near, far) != tuple(_vec(s["DepthRanges"][0])):
            gl.glDepthRangef(float(near), float(far))

    def _stencil(self, p: np.void, s: np.void, full: bool) -> None:
        gl = self.gl
        ps, ss = p["StencilStates"], s["StencilStates"]
        for i, face in enumerate(_FACES):
            a, z = ps[i], ss[i]
            if full or (a["Func"], a["Ref"], a["ValueMask"]) != (
                z["Func"],
                z["Ref"],
                z["ValueMask"],
            ):
                gl.glStencilFuncSeparate(face, self._df[_i(a["Func"])], _i(a["Ref"]),
                                         _i(a["ValueMask"]))  # fmt: skip
            if full or a["WriteMask"] != z["WriteMask"]:
                gl.glStencilMaskSeparate(face, _i(a["WriteMask"]))
            ops = (a["FailOp"], a["PassDepthFailOp"], a["PassDepthPassOp"])
            if full or ops != (z["FailOp"], z["PassDepthFailOp"], z["PassDepthPassOp"]):
                gl.glStencilOpSeparate(face, *(self._so[_i(o)] for o in ops))

    def _color_mask(self, p: np.void, s: np.void, full: bool) -> None:
        cur, old = _vec(p["ColorMasks"]), _vec(s["ColorMasks"])
        if not full and np.array_equal(cur, old):
            return
        if (cur == cur[0]).all():
            self.gl.glColorMask(*(bool(c) for c in cur[0]))
            return
        if not self.indexed:
            raise DrawBuffersIndexedMissing("ColorMasks")
        for i in range(len(cur)):
            if full or not np.array_equal(cur[i], old[i]):
                self.gl.glColorMaski(i, *(bool(c) for c in cur[i]))

    def _clear_values(self, p: np.void, s: np.void, full: bool) -> None:
        gl = self.gl
        if full or p["ClearColor"].tobytes() != s["ClearColor"].tobytes():  # bits, not floats
            gl.glClearColor(*(float(c) for c in _vec(p["ClearColor"])))
        if full or p["ClearDepth"] != s["ClearDepth"]:
            gl.glClearDepthf(float(p["ClearDepth"]))
        if full or p["ClearStencil"] != s["ClearStencil"]:
            gl.glClearStencil(_i(p["ClearStencil"]))
        if full or p["BlendColor"].tobytes() != s["BlendColor"].tobytes():  # bits, not floats
            gl.glBlendColor(*(float(c) for c in _vec(p["BlendColor"])))

    def _cull(self, p: np.void, s: np.void, full: bool) -> None:
        if full or p["CullFaceModeSetting"] != s["CullFaceModeSetting"]:
            self.gl.glCullFace(self._cullm[_i(p["CullFaceModeSetting"])])
        if full or p["FrontFaceModeSetting"] != s["FrontFaceModeSetting"]:
            self.gl.glFrontFace(self._front[_i(p["FrontFaceModeSetting"])])

    def _scissor(self, p: np.void, s: np.void, full: bool) -> None:
        if _i(p["ScissorBoxWrittenMask"]) & 1:
            box = tuple(int(v) for v in _vec(p["ScissorBoxes"][0]))
        else:  # never written: the whole surface (GL's initial scissor box)
            box = (0, 0) + self.surface
        if box != self.scissor:
            self.gl.glScissor(*box)
            self.scissor = box

    def _sample_coverage(self, p: np.void, s: np.void, full: bool) -> None:
        cur = (p["SampleCoverageValue"], p["SampleCoverageInvert"])
        if full or cur != (s["SampleCoverageValue"], s["SampleCoverageInvert"]):
            self.gl.glSampleCoverage(float(cur[0]), bool(cur[1]))

    # -- blend ---------------------------------------------------------------------------
    def _blend(self, data: bytearray, full: bool) -> None:
        """Broadcast calls when every draw buffer agrees, per-buffer calls otherwise; a
        call is issued only where a draw buffer's shadow differs from the new state. Each
        draw buffer's ``PerBufferBlendState`` is compared as bytes (the member slices come
        from the generated layout), decoded only for the calls it issues."""
        lay = self._blend_layout
        start, size, count = lay.start, lay.size, lay.count
        cur = [bytes(data[start + k * size : start + (k + 1) * size]) for k in range(count)]
        old = [bytes(self.shadow[start + k * size : start + (k + 1) * size]) for k in range(count)]
        gl = self.gl
        first = cur[0]
        uniform = all(c == first for c in cur)
        if not uniform and not self.indexed:
            raise DrawBuffersIndexedMissing("BlendStates")
        for i in (0,) if uniform else range(count):
            a = cur[i]
            # a broadcast undoes every buffer: compare against each distinct shadow row
            refs = set(old) if uniform else (old[i],)

            def moved(group: tuple[tuple[int, int], ...]) -> bool:
                return full or any(r[o:e] != a[o:e] for r in refs for o, e in group)

            if moved(lay.enable):
                on = any(a[o:e].strip(b"\0") for o, e in lay.enable)
                if uniform:
                    (gl.glEnable if on else gl.glDisable)(GL.GL_BLEND)
                else:
                    (gl.glEnablei if on else gl.glDisablei)(GL.GL_BLEND, i)
            if moved(lay.func):
                args = tuple(self._bf[v] for v in lay.words(a, lay.func))
                if uniform:
                    gl.glBlendFuncSeparate(*args)
                else:
                    gl.glBlendFuncSeparatei(i, *args)
            if moved(lay.equation):
                args2 = tuple(self._be[v] for v in lay.words(a, lay.equation))
                if uniform:
                    gl.glBlendEquationSeparate(*args2)
                else:
                    gl.glBlendEquationSeparatei(i, *args2)

    # -- head ----------------------------------------------------------------------------
    def _head(self, p: np.void, s: np.void, full: bool) -> None:
        cur = (p["PolygonOffsetFactor"], p["PolygonOffsetUnits"])
        if full or cur != (s["PolygonOffsetFactor"], s["PolygonOffsetUnits"]):
            self.gl.glPolygonOffset(float(cur[0]), float(cur[1]))
        if full or p["LineWidth"] != s["LineWidth"]:
            self.gl.glLineWidth(float(p["LineWidth"]))
