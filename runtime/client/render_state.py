"""The frontend ``RenderState`` (seed 000 §2): the 1168-byte ``RenderStateParameters`` block
plus the two wrapping ``Uint16`` counters ``m_version`` / ``m_pipelineStateVersion``.

Every byte is addressed through the generated layout (a numpy view of
``STRUCTS["RenderStateParameters"]``); every public ``set_*`` method is one setter of
``SETTERS`` (CamelCase -> snake_case) and its bump decision comes from that setter's row:

- ``kBumpBoth``        ++version and ++pipeline version;
- ``kBumpVersion``     ++version;
- ``kBumpConditional`` ++version, and ++pipeline version only if a ``kPipeline`` byte the
                       row writes moved (``SetStencilFunc``: Func);
- ``kBumpNone``        nothing (``SetPixelStoreParam``: pixel store lives outside the block).

Guards are bitwise: a call that leaves every byte the row ``writes`` unchanged bumps nothing
(NaN is a legal value; ``-0.0`` differs from ``0.0``). Setter arguments that name an
enumerator accept the enumerator's name or its value (``ENUMS`` of the member's type).

The block, the counters (and their widened twins) and the one commit path every setter
goes through (patches, dirty dynamic chunks, the pipeline log) are
:class:`~.render_block.RenderBlock`'s; this module holds the setters.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ..schema import tables as _t
from ..schema.layouts import dtype as struct_dtype
from .gl_tokens import GLToken
from .render_block import PIPE_LOG_LIMIT, RenderBlock, _toggle_code, row_patch_plan
from .setter_kits import scalar_patch_kit, scalar_span_kit, span_kit, sub_kit
from .setter_rows import (
    B8,
    F32,
    GLenum,
    I32,
    U32,
    Arg,
    BlendEquationArg,
    BlendFactorArg,
    Cap,
    CullFaceArg,
    DepthFuncArg,
    DrawBufferIndex,
    Face,
    FrontFaceArg,
    Hint,
    LogicOpArg,
    PixelParam,
    ProvokingArg,
    SetterRow,
    StencilOpArg,
    ViewportIndex,
    KITS,
    clear_cache,
    index_bound,
    member,
    method_name,
    rs_struct,
    rows_of,
    setter_rows,
)

__all__ = [
    "Arg", "RenderState", "SetterRow", "setter_rows", "method_name", "clear_cache",
    "PIPE_LOG_LIMIT", "row_patch_plan",
]  # fmt: skip

_PIXEL_STORE = "PixelStoreParameters"
_FACES = "<faces>"  # the KITS entry of the face -> elements map
_VIEWPORTS = ViewportIndex.__metadata__[0].ref  # the viewport count: the Viewports array


def _every_box_written(setter: str) -> tuple | None:
    """``glScissor``'s span kit: the box in every element, every bit of the written mask."""
    return span_kit(setter, lambda boxes: (_all_bits(boxes["count"]),))


def _face_elements(_: str) -> dict[int | str, tuple[int, ...]]:
    """Every ``CullFaceMode`` name and value -> the elements ``RenderState._faces`` gives it."""
    faces = RenderState._faces
    names = _t.enum_members("CullFaceMode").items()
    return {f: tuple(faces(None, f)) for kv in names for f in kv}  # type: ignore[arg-type]


#: (method, setter row) of the span kits whose arguments are the kit's own (``__init__``)
_SPAN_SETTERS = (
    ("set_viewport", "SetViewport"),
    ("set_line_width", "SetLineWidth"),
    ("set_point_size", "SetPointSize"),
    ("set_polygon_offset_clamped", "SetPolygonOffsetClamped"),
    ("set_clear_color", "SetClearColor"),
    ("set_clear_depth", "SetClearDepth"),
    ("set_blend_color", "SetBlendColor"),
    ("set_depth_range", "SetDepthRange"),
    ("set_scissor_box", "SetScissorBox"),
)


class RenderState(RenderBlock):
    """GL render state: the parameter block, the two counters and the pixel-store pair."""

    def __init__(self, width: int = 0, height: int = 0) -> None:
        super().__init__()
        ps = struct_dtype(_PIXEL_STORE)
        self.pixel_pack = np.zeros(1, dtype=ps)[0]
        self.pixel_unpack = np.zeros(1, dtype=ps)[0]
        self._defaults(width, height)
        #: ``PrimitiveRestartIndex`` as an int, kept by its one setter (each draw carries it)
        self.restart_index = int(self.p["PrimitiveRestartIndex"])
        #: the span kits' setters, one frame each (``RenderBlock._span``): the methods of
        #: these names are their member writes, for what a packer refuses
        for name, setter in _SPAN_SETTERS:
            setattr(self, name, self._span(KITS[setter], getattr(self, name)))
        #: the member writes behind them (a caller's own checked form: ``span_setter``)
        self._span_general = {name: getattr(type(self), name).__get__(self)
                              for name, _ in _SPAN_SETTERS}  # fmt: skip
        #: glEnable / glDisable in one frame once their patch is remembered
        #: (render_block._toggle_code; the methods below say the same, a frame longer)
        self.enable = self._compiled(_toggle_code(("SetCapability", True)), "toggle",
                                     general=partial(self.set_capability, enabled=True))  # fmt: skip
        self.disable = self._compiled(_toggle_code(("SetCapability", False)), "toggle",
                                      general=partial(self.set_capability, enabled=False))  # fmt: skip
        offset = self._span(KITS["SetPolygonOffset"],
                            lambda f, u, c: RenderState.set_polygon_offset(self, f, u))  # fmt: skip
        self.set_polygon_offset = lambda factor, units: offset(factor, units, 0.0)

    def span_setter(self, name: str, refuse: Callable[..., Any]) -> Callable[..., Any]:
        """The span setter ``name`` (``set_viewport`` ...) with the caller's finite check in
        its one frame: ``refuse(*args)`` raises for arguments that are not finite numbers
        (``Client.viewport`` / ``scissor``)."""
        setter = dict(_SPAN_SETTERS)[name]
        return self._span(KITS[setter], self._span_general[name], refuse)

    def _defaults(self, width: int, height: int) -> None:
        """GL initial state (no counter moves: this is construction); ``width`` x ``height``
        is the surface the context is first made current on: every viewport and scissor box
        starts as (0, 0, width, height). Every value is checked row by row against GL ES
        3.2's state tables by tests/test_gl_initial_state.py."""
        p, e = self.p, _t.enum
        _put(p["Viewports"], (0.0, 0.0, float(width), float(height)))
        _put(p["ScissorBoxes"], (0, 0, int(width), int(height)))  # written mask stays 0
        p["ClipOrigin"], p["ClipDepthMode"] = GLToken.LOWER_LEFT, GLToken.NEGATIVE_ONE_TO_ONE
        for hint in ("LineSmoothHint", "PolygonSmoothHint", "TextureCompressionHint",
                     "FragmentShaderDerivativeHint"):  # fmt: skip
            p[hint] = GLToken.DONT_CARE
        p["PointFadeThresholdSize"] = 1.0
        p["PointSpriteCoordOrigin"] = GLToken.UPPER_LEFT
        p["ClampReadColor"] = GLToken.FIXED_ONLY
        p["PolygonModeFront"] = p["PolygonModeBack"] = GLToken.FILL
        _fill(p["ColorMasks"], True)
        p["DepthRanges"][_vec_names(p["DepthRanges"])[1]] = 1.0
        p["LineWidth"] = p["PointSize"] = 1.0
        p["ClearDepth"] = 1.0  # GL ES 3.2 Table 21.14 (Framebuffer Control): DEPTH_CLEAR_VALUE
        blend = p["BlendStates"]
        blend["SrcFactorRGB"] = blend["SrcFactorAlpha"] = e("BlendFactor")["One"]
        blend["DstFactorRGB"] = blend["DstFactorAlpha"] = e("BlendFactor")["Zero"]
        p["LogicOp"] = e("LogicOperation")["Copy"]
        p["DepthFunc"] = e("DepthTestFunc")["Less"]
        p["DepthMask"] = True
        p["StencilStates"]["Func"] = e("DepthTestFunc")["Always"]
        p["StencilStates"]["ValueMask"] = p["StencilStates"]["WriteMask"] = 0xFFFFFFFF
        p["CullFaceModeSetting"] = e("CullFaceMode")["Back"]
        # GL_LAST_VERTEX_CONVENTION (MobileGL numbers FirstVertex 0: a zero is not the default)
        p["ProvokingVertexModeSetting"] = e("ProvokingVertexMode")["LastVertex"]
        p["SampleCoverageValue"] = 1.0
        p["SampleMaskValue"] = 0xFFFFFFFF
        p["PatchVertices"] = 3
        _fill(p["PatchDefaultOuterLevel"], 1.0)
        _fill(p["PatchDefaultInnerLevel"], 1.0)
        p["DitherEnabled"] = p["MultisampleEnabled"] = True
        for ps in (self.pixel_pack, self.pixel_unpack):
            ps["Alignment"] = 4

    # -- member writes ------------------------------------------------------
    def _set(self, setter: str, **members: Any) -> None:
        """Write whole members named in the row (value coerced to each member's enum)."""

        def write(row: SetterRow) -> None:
            for name, value in members.items():
                self.p[name] = _coerce(rs_struct(), name, value)

        self._either(setter, tuple(members.items()), lambda: self._row(setter), write)

    def _sub(self, setter: str, face: int | str, values: tuple) -> bool:
        """A sub-member kit's patch (``setter_kits``) for the elements ``face`` names, through
        the general accounting; False, touching nothing, when the kit refuses the call."""
        k = KITS[setter]
        if not k:
            return False
        elems = KITS[_FACES].get(face)
        if elems is None:
            return False
        return self._put_subs(k, elems, values)

    def _faces(self, face: int | str) -> list[int]:
        names = {v: k for k, v in _t.enum("CullFaceMode").items()}
        f = face if isinstance(face, str) else names.get(face, "")
        return {"Front": [0], "Back": [1], "FrontAndBack": [0, 1]}.get(f) or _bad("face", face)

    # -- group B ------------------------------------------------------------
    def set_viewport(self, x: F32, y: F32, w: F32, h: F32) -> None:
        self._commit(self._row("SetViewport"), lambda: _put(self.p["Viewports"], (x, y, w, h)))

    def set_viewport_indexed(self, index: ViewportIndex, x: F32, y: F32, w: F32, h: F32) -> None:
        v = self.p["Viewports"]
        self._commit(self._row("SetViewportIndexed"), lambda: _put(v[index], (x, y, w, h)))

    def set_line_width(self, width: F32) -> None:
        self._set("SetLineWidth", LineWidth=width)

    def set_hint(self, target: Hint, mode: GLenum) -> None:
        row = self._row("SetHint", target, "HintTarget")
        self._commit(row, lambda: self.p.__setitem__(row.writes[0], mode))

    def set_point_fade_threshold_size(self, size: F32) -> None:
        self._set("SetPointFadeThresholdSize", PointFadeThresholdSize=size)

    def set_point_sprite_coord_origin(self, origin: GLenum) -> None:
        self._set("SetPointSpriteCoordOrigin", PointSpriteCoordOrigin=origin)

    def set_clamp_read_color(self, clamp: GLenum) -> None:
        self._set("SetClampReadColor", ClampReadColor=clamp)

    def set_primitive_restart_index(self, index: U32) -> None:
        self._set("SetPrimitiveRestartIndex", PrimitiveRestartIndex=index)
        self.restart_index = int(self.p["PrimitiveRestartIndex"])

    def set_point_size(self, size: F32) -> None:
        self._set("SetPointSize", PointSize=size)

    def set_polygon_offset(self, factor: F32, units: F32) -> None:
        self._set("SetPolygonOffset", PolygonOffsetFactor=factor, PolygonOffsetUnits=units,
                  PolygonOffsetClamp=0.0)  # fmt: skip

    def set_polygon_offset_clamped(self, factor: F32, units: F32, clamp: F32) -> None:
        self._set("SetPolygonOffsetClamped", PolygonOffsetFactor=factor,
                  PolygonOffsetUnits=units, PolygonOffsetClamp=clamp)  # fmt: skip

    def set_clip_control(self, origin: GLenum, depth_mode: GLenum) -> None:
        self._set("SetClipControl", ClipOrigin=origin, ClipDepthMode=depth_mode)

    def set_stencil_mask(self, face: Face, mask: U32) -> None:
        if self._sub("SetStencilMask", face, (mask,)):
            return
        s = self.p["StencilStates"]
        self._commit(
            self._row("SetStencilMask"), lambda: _each(s, self._faces(face), WriteMask=mask)
        )

    def set_clear_color(self, r: F32, g: F32, b: F32, a: F32) -> None:
        self._commit(
            self._row("SetClearColor"), lambda: _put(self.p["ClearColor"], (r, g, b, a))
        )

    def set_clear_depth(self, depth: F32) -> None:
        self._set("SetClearDepth", ClearDepth=depth)

    def set_clear_stencil(self, s: U32) -> None:
        self._set("SetClearStencil", ClearStencil=s)

    def set_blend_color(self, r: F32, g: F32, b: F32, a: F32) -> None:
        self._commit(
            self._row("SetBlendColor"), lambda: _put(self.p["BlendColor"], (r, g, b, a))
        )

    def set_depth_range(self, near: F32, far: F32) -> None:
        self._commit(
            self._row("SetDepthRange"), lambda: _put(self.p["DepthRanges"], (near, far))
        )

    def set_depth_range_indexed(self, index: ViewportIndex, near: F32, far: F32) -> None:
        v = self.p["DepthRanges"]
        self._commit(self._row("SetDepthRangeIndexed"), lambda: _put(v[index], (near, far)))

    def set_scissor_box(self, x: I32, y: I32, w: I32, h: I32) -> None:

        def write() -> None:
            _put(self.p["ScissorBoxes"], (x, y, w, h))
            self.p["ScissorBoxWrittenMask"] = _all_bits(len(self.p["ScissorBoxes"]))

        self._commit(self._row("SetScissorBox"), write)

    def set_scissor_box_indexed(self, index: ViewportIndex, x: I32, y: I32, w: I32, h: I32) -> None:
        def write() -> None:
            _put(self.p["ScissorBoxes"][index], (x, y, w, h))
            self.p["ScissorBoxWrittenMask"] |= 1 << index

        self._commit(self._row("SetScissorBoxIndexed"), write)

    # -- group A ------------------------------------------------------------
    def set_polygon_mode(self, front: GLenum, back: GLenum) -> None:
        if self._put_scalars(KITS["SetPolygonMode"], (front, back)):
            return
        self._set("SetPolygonMode", PolygonModeFront=front, PolygonModeBack=back)

    def set_patch_vertices(self, count: U32) -> None:
        if self._put_scalars(KITS["SetPatchVertices"], (count,)):
            return
        self._set("SetPatchVertices", PatchVertices=count)

    def set_patch_default_outer_level(self, x: F32, y: F32, z: F32, w: F32) -> None:
        v = self.p["PatchDefaultOuterLevel"]
        self._commit(self._row("SetPatchDefaultOuterLevel"), lambda: _put(v, (x, y, z, w)))

    def set_patch_default_inner_level(self, x: F32, y: F32) -> None:
        v = self.p["PatchDefaultInnerLevel"]
        self._commit(self._row("SetPatchDefaultInnerLevel"), lambda: _put(v, (x, y)))

    def enable(self, cap: Cap) -> None:
        """``set_capability(cap, True)``; each instance has it as one compiled frame
        (``__init__``: ``Client.enable`` is that one)."""
        self.set_capability(cap, True)

    def disable(self, cap: Cap) -> None:
        """``set_capability(cap, False)`` (see :meth:`enable`)."""
        self.set_capability(cap, False)

    def set_capability(self, cap: Cap, enabled: B8) -> None:
        try:
            row, patch, check = self._memo[("SetCapability", cap, enabled)]
        except KeyError:
            row = self._row("SetCapability", cap, "CapabilityInput")
            if self._cap_is_mask(row):  # a read-modify-write of a bit mask: no memo
                self._commit(row, lambda: self._write_cap(row, None, enabled))
                return
            self._memo_commit(("SetCapability", cap, enabled), lambda: row,
                              lambda r: self._write_cap(r, None, enabled))  # fmt: skip
            return
        self._apply(row, patch, check)

    def _cap_is_mask(self, row: SetterRow) -> bool:
        head, _, sub = row.writes[0].partition(".")
        return not sub and member(rs_struct(), head)["scalar"] != "b8"

    def set_capability_indexed(self, cap: Cap, index: DrawBufferIndex, enabled: B8) -> None:
        row = self._row("SetCapabilityIndexed", cap, "CapabilityInput")
        self._commit(row, lambda: self._write_cap(row, index, enabled))

    def _write_cap(self, row: SetterRow, index: int | None, on: bool) -> None:
        """Write the member the row names: a Bool, each element's ``.Enabled``, or a mask."""
        head, _, sub = row.writes[0].partition(".")
        p = self.p
        if sub:  # an array of per-element structs (BlendStates.Enabled)
            target = p[head][sub]
            if index is None:
                target[:] = on
            else:
                target[index] = on
            return
        if member(rs_struct(), head)["scalar"] == "b8":
            p[head] = on
            return
        # a bit mask: the arm's rank among the rows writing the same member picks the bit
        # (ClipDistance0..7); a member one arm owns alone covers every viewport (ScissorTest).
        peers = [r for r in rows_of(row.setter) if r.writes == row.writes]
        if index is not None:
            bits = 1 << index
        elif len(peers) > 1:
            bits = 1 << peers.index(row)
        else:
            bits = _all_bits(index_bound(_VIEWPORTS))
        p[head] = (int(p[head]) | bits) if on else (int(p[head]) & ~bits)

    def set_blend_func(self, src_rgb: BlendFactorArg, dst_rgb: BlendFactorArg,
                       src_alpha: BlendFactorArg, dst_alpha: BlendFactorArg) -> None:  # fmt: skip
        self._blend("SetBlendFunc", None, SrcFactorRGB=src_rgb, DstFactorRGB=dst_rgb,
                    SrcFactorAlpha=src_alpha, DstFactorAlpha=dst_alpha)  # fmt: skip

    def set_blend_func_indexed(self, index: DrawBufferIndex, src_rgb: BlendFactorArg,
                               dst_rgb: BlendFactorArg, src_alpha: BlendFactorArg,
                               dst_alpha: BlendFactorArg) -> None:  # fmt: skip
        self._blend("SetBlendFuncIndexed", index, SrcFactorRGB=src_rgb, DstFactorRGB=dst_rgb,
                    SrcFactorAlpha=src_alpha, DstFactorAlpha=dst_alpha)  # fmt: skip

    def set_blend_equation(self, mode_rgb: BlendEquationArg,
                           mode_alpha: BlendEquationArg) -> None:  # fmt: skip
        self._blend("SetBlendEquation", None, ColorEquation=mode_rgb, AlphaEquation=mode_alpha)

    def set_blend_equation_indexed(self, index: DrawBufferIndex, mode_rgb: BlendEquationArg,
                                   mode_alpha: BlendEquationArg) -> None:  # fmt: skip
        self._blend("SetBlendEquationIndexed", index, ColorEquation=mode_rgb,
                    AlphaEquation=mode_alpha)  # fmt: skip

    def _blend(self, setter: str, index: int | None, **subs: Any) -> None:
        states = self.p["BlendStates"]
        rows = range(len(states)) if index is None else [index]
        self._either(setter, (("index", index),) + tuple(subs.items()), lambda: self._row(setter),
                     lambda r: _each(states, rows, **_coerce_subs("BlendStates", subs)))

    def set_logic_op(self, op: LogicOpArg) -> None:
        if self._put_scalars(KITS["SetLogicOp"], (op,)):
            return
        self._set("SetLogicOp", LogicOp=op)

    def set_depth_func(self, func: DepthFuncArg) -> None:
        if self._put_scalars(KITS["SetDepthFunc"], (func,)):
            return
        self._set("SetDepthFunc", DepthFunc=func)

    def set_depth_mask(self, enabled: B8) -> None:
        if self._put_scalars(KITS["SetDepthMask"], (enabled,)):
            return
        self._set("SetDepthMask", DepthMask=enabled)

    def set_stencil_func(self, face: Face, func: DepthFuncArg, ref: I32, mask: U32) -> None:
        if self._sub("SetStencilFunc", face, (func, ref, mask)):
            return
        s = self.p["StencilStates"]
        subs = _coerce_subs("StencilStates", {"Func": func, "Ref": ref, "ValueMask": mask})
        self._commit(self._row("SetStencilFunc"), lambda: _each(s, self._faces(face), **subs))

    def set_stencil_op(self, face: Face, fail: StencilOpArg,
                       depth_fail: StencilOpArg,
                       depth_pass: StencilOpArg) -> None:  # fmt: skip
        if self._sub("SetStencilOp", face, (fail, depth_fail, depth_pass)):
            return
        s = self.p["StencilStates"]
        subs = _coerce_subs("StencilStates", {"FailOp": fail, "PassDepthFailOp": depth_fail,
                                "PassDepthPassOp": depth_pass})  # fmt: skip
        self._commit(self._row("SetStencilOp"), lambda: _each(s, self._faces(face), **subs))

    def set_color_mask(self, r: B8, g: B8, b: B8, a: B8) -> None:
        self._commit(
            self._row("SetColorMask"), lambda: _put(self.p["ColorMasks"], (r, g, b, a))
        )

    def set_color_mask_indexed(self, index: DrawBufferIndex, r: B8, g: B8, b: B8, a: B8) -> None:
        v = self.p["ColorMasks"]
        self._commit(self._row("SetColorMaskIndexed"), lambda: _put(v[index], (r, g, b, a)))

    def set_sample_coverage(self, value: F32, invert: B8) -> None:
        self._set("SetSampleCoverage", SampleCoverageValue=value, SampleCoverageInvert=invert)

    def set_sample_mask_value(self, mask: U32) -> None:
        if self._put_scalars(KITS["SetSampleMaskValue"], (mask,)):
            return
        self._set("SetSampleMaskValue", SampleMaskValue=mask)

    def set_min_sample_shading_value(self, value: F32) -> None:
        self._set("SetMinSampleShadingValue", MinSampleShadingValue=value)

    def set_cull_face_mode(self, mode: CullFaceArg) -> None:
        if self._put_scalars(KITS["SetCullFaceMode"], (mode,)):
            return
        self._set("SetCullFaceMode", CullFaceModeSetting=mode)

    def set_front_face_mode(self, mode: FrontFaceArg) -> None:
        if self._put_scalars(KITS["SetFrontFaceMode"], (mode,)):
            return
        self._set("SetFrontFaceMode", FrontFaceModeSetting=mode)

    def set_provoking_vertex_mode(self, mode: ProvokingArg) -> None:
        if self._put_scalars(KITS["SetProvokingVertexMode"], (mode,)):
            return
        self._set("SetProvokingVertexMode", ProvokingVertexModeSetting=mode)

    # -- group D ------------------------------------------------------------
    def set_pixel_store_param(self, pack: B8, param: PixelParam, value: I32) -> None:
        """``glPixelStore*``: one member of the pack or unpack ``PixelStoreParameters``."""
        target = self.pixel_pack if pack else self.pixel_unpack
        if member(_PIXEL_STORE, param)["scalar"] == "b8":
            value = int(bool(value))
        self._commit(self._row("SetPixelStoreParam"), lambda: target.__setitem__(param, value))


def _coerce(struct: str, name: str, value: Any) -> Any:
    if isinstance(value, str):
        return _t.enum(member(struct, name)["type"])[value]
    return value


def _coerce_subs(name: str, subs: dict[str, Any]) -> dict[str, Any]:
    elem = member(rs_struct(), name)["struct"]
    return {k: _coerce(elem, k, v) for k, v in subs.items()}


def _each(arr: np.ndarray, rows: Any, **subs: Any) -> None:
    for i in rows:
        for k, v in subs.items():
            arr[i][k] = v


def _vec_names(target: np.ndarray | np.void) -> tuple[str, ...]:
    """The component members of a vector struct (``FloatVec4``: X, Y, Z, W), in order."""
    names = target.dtype.names
    if not names:
        raise TypeError(f"not a vector struct: {target.dtype}")
    return names


def _put(target: np.ndarray | np.void, values: tuple) -> None:
    """Write a vector struct (or every element of an array of them) component by component."""
    for name, value in zip(_vec_names(target), values, strict=True):
        target[name] = value


def _fill(target: np.ndarray | np.void, value: Any) -> None:
    """Every component of a vector struct (or of every element of an array of them)."""
    for name in _vec_names(target):
        target[name] = value


def _all_bits(n: int) -> int:
    return (1 << n) - 1


def _bad(what: str, value: object) -> list[int]:
    raise ValueError(f"bad {what}: {value!r}")


KITS.builders.update({
    "SetViewport": span_kit, "SetClearColor": span_kit, "SetBlendColor": span_kit,
    "SetDepthRange": span_kit, "SetScissorBox": _every_box_written,
    "SetLineWidth": scalar_span_kit, "SetPointSize": scalar_span_kit,
    "SetPolygonOffset": scalar_span_kit, "SetPolygonOffsetClamped": scalar_span_kit,
    "SetClearDepth": scalar_span_kit,
    "SetStencilFunc": sub_kit, "SetStencilOp": sub_kit, "SetStencilMask": sub_kit,
    "SetLogicOp": scalar_patch_kit, "SetDepthFunc": scalar_patch_kit,
    "SetDepthMask": scalar_patch_kit, "SetCullFaceMode": scalar_patch_kit,
    "SetFrontFaceMode": scalar_patch_kit, "SetProvokingVertexMode": scalar_patch_kit,
    "SetSampleMaskValue": scalar_patch_kit, "SetPatchVertices": scalar_patch_kit,
    "SetPolygonMode": scalar_patch_kit,
    _FACES: _face_elements,
})  # fmt: skip
