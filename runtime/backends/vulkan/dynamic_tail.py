"""The dynamic tail of a draw (Magma's ``ApplyDynamicDrawStateTail``, seed 000 §4.3).

Two gates before any ``vkCmdSet*``:

1. the version gate: the working block's ``Uint16`` version, the surface extent and the
   target identity are what the last apply saw, in the same command buffer -> nothing;
2. the value gate: a :class:`DynamicTailKey` built from the block (viewport 0, depth
   range 0, blend colour, polygon offset, line width, the stencil masks and references,
   scissor box 0 and scissor-test bit 0, extent, target) equals the last one -> nothing
   (and the version gate re-arms).

Otherwise each of the six groups whose part of the key moved is issued (a new command
buffer issues all six: dynamic state does not outlive it). Every ``vkCmdSet*`` is counted
by name in :attr:`DynamicTail.issued`.

GL -> Vulkan: the viewport is flipped (negative height, origin at the bottom-left), the
scissor rectangle is mirrored the same way; scissor test off is the full surface; a
scissor box of zero area rejects every fragment; a viewport never written (zero size) is
GL's initial one, the surface.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import vulkan as vk

from ..limits import viewport_box

__all__ = ["DynamicTailKey", "DynamicTail", "tail_key", "vector"]

_FRONT = vk.VK_STENCIL_FACE_FRONT_BIT
_BACK = vk.VK_STENCIL_FACE_BACK_BIT


@dataclass(frozen=True)
class DynamicTailKey:
    viewport: tuple[float, float, float, float]
    depth_range: tuple[float, float]
    blend_color: tuple[float, float, float, float]
    polygon_offset: tuple[float, float, float]  # factor, units, clamp
    line_width: float
    stencil_value_mask: tuple[int, int]
    stencil_write_mask: tuple[int, int]
    stencil_ref: tuple[int, int]
    scissor_box: tuple[int, int, int, int]
    scissor_enabled: bool
    extent: tuple[int, int]
    target: int  # identity of the render target (default framebuffer or an FBO)


def vector(v: np.void) -> tuple[Any, ...]:
    """The components of one vector member (``MGPipeVectors.h``: a struct of ``X, Y[, Z[, W]]``)
    in their declared order, read by the generated layout's member names."""
    return tuple(v[name] for name in v.dtype.names)


def _floats(v: np.void) -> tuple[float, ...]:
    return tuple(float(x) for x in vector(v))


def tail_key(p: np.void, extent: tuple[int, int], target: int) -> DynamicTailKey:
    """The key of the block's dynamic inputs (generated layout: member names only)."""
    st = p["StencilStates"]
    return DynamicTailKey(
        viewport=_floats(p["Viewports"][0]),
        depth_range=_floats(p["DepthRanges"][0]),
        blend_color=_floats(p["BlendColor"]),
        polygon_offset=(float(p["PolygonOffsetFactor"]), float(p["PolygonOffsetUnits"]),
                        float(p["PolygonOffsetClamp"])),
        line_width=float(p["LineWidth"]),
        stencil_value_mask=(int(st[0]["ValueMask"]), int(st[1]["ValueMask"])),
        stencil_write_mask=(int(st[0]["WriteMask"]), int(st[1]["WriteMask"])),
        stencil_ref=(int(st[0]["Ref"]), int(st[1]["Ref"])),
        scissor_box=tuple(int(x) for x in vector(p["ScissorBoxes"][0])),
        scissor_enabled=bool(int(p["ScissorTestEnabledMask"]) & 1),
        extent=extent, target=target,
    )  # fmt: skip


#: The members the tail reads, and how much of each (array members: element 0).
_TAIL_MEMBERS = ("Viewports", "DepthRanges", "BlendColor", "PolygonOffsetFactor",
                 "PolygonOffsetUnits", "PolygonOffsetClamp", "LineWidth", "StencilStates",
                 "ScissorBoxes", "ScissorTestEnabledMask")  # fmt: skip


def tail_ranges(dt: np.dtype) -> tuple[tuple[int, int], ...]:
    """(offset, size) of every tail input in the block, from the generated layout."""
    out = []
    for name in _TAIL_MEMBERS:
        sub, off = dt.fields[name][:2]
        size = sub.itemsize if name == "StencilStates" else sub.base.itemsize
        out.append((int(off), int(size)))
    return tuple(out)


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def scissor_rect(key: DynamicTailKey) -> tuple[int, int, int, int]:
    """(x, y, w, h) in image coordinates (top-left origin)."""
    W, H = key.extent
    if not key.scissor_enabled:
        return (0, 0, W, H)
    x, y, w, h = key.scissor_box
    if w <= 0 or h <= 0:
        return (0, 0, 0, 0)
    x0, x1 = _clamp(x, 0, W), _clamp(x + w, 0, W)
    y0, y1 = _clamp(y, 0, H), _clamp(y + h, 0, H)
    return (x0, H - y1, x1 - x0, y1 - y0)


class DynamicTail:
    """Per-context shadow of the eight dynamic states; :meth:`apply` before each draw."""

    def __init__(self, limits: Any, features: dict[str, bool]) -> None:
        lo, hi = limits.lineWidthRange[0], limits.lineWidthRange[1]
        self._line = (float(lo), float(hi)) if features.get("wideLines") else (1.0, 1.0)
        self._bias_clamp = bool(features.get("depthBiasClamp"))
        dims, bounds = limits.maxViewportDimensions, limits.viewportBoundsRange
        self._vp = (int(dims[0]), int(dims[1]), int(bounds[0]), int(bounds[1]))  # clamp to these
        self.issued: Counter[str] = Counter()
        self.version_hits = 0
        self.value_hits = 0
        self._serial = -1
        self._gate: tuple[int, tuple[int, int], int] | None = None
        self._key: DynamicTailKey | None = None
        self._raw: bytes | None = None
        self._ranges: tuple[tuple[int, int], ...] | None = None

    def apply(self, cmd: Any, serial: int, version: int, block: np.void,
              extent: tuple[int, int], target: int) -> None:  # fmt: skip
        """``serial`` names the command buffer being recorded (a new one has no state)."""
        fresh = serial != self._serial
        gate = (version, extent, target)
        if not fresh and gate == self._gate:
            self.version_hits += 1
            return
        if self._ranges is None:
            self._ranges = tail_ranges(block.dtype)
        data = block.tobytes()
        raw = b"".join(data[o : o + n] for o, n in self._ranges) + repr((extent, target)).encode()
        if not fresh and raw == self._raw:  # the value key, compared as the bytes it reads
            self.value_hits += 1
            self._gate = gate
            return
        key = tail_key(block, extent, target)
        old = None if fresh else self._key
        if old == key:
            self.value_hits += 1
        else:
            self._issue(cmd, key, old)
        self._serial, self._gate, self._key, self._raw = serial, gate, key, raw

    def _issue(self, cmd: Any, k: DynamicTailKey, old: DynamicTailKey | None) -> None:
        W, H = k.extent
        if old is None or (k.viewport, k.depth_range, k.extent) != (old.viewport, old.depth_range,
                                                                    old.extent):  # fmt: skip
            x, y, w, h = viewport_box("RenderState", *k.viewport, *self._vp)  # integers
            if w <= 0 or h <= 0:  # never written: GL's initial viewport, the surface
                x, y, w, h = 0, 0, W, H
            n, f = (min(max(v, 0.0), 1.0) for v in k.depth_range)
            lo, hi = self._vp[2:]
            top = min(max(H - y, lo), hi)  # Vulkan's y (top-left origin) in the bounds range
            vp = vk.VkViewport(x=x, y=top, width=w, height=-min(h, top - lo), minDepth=n,
                               maxDepth=f)  # fmt: skip
            vk.vkCmdSetViewport(cmd, 0, 1, [vp])
            self.issued["vkCmdSetViewport"] += 1
        if old is None or scissor_rect(k) != scissor_rect(old):
            sx, sy, sw, sh = scissor_rect(k)
            rect = vk.VkRect2D(offset=vk.VkOffset2D(x=sx, y=sy),
                               extent=vk.VkExtent2D(width=sw, height=sh))  # fmt: skip
            vk.vkCmdSetScissor(cmd, 0, 1, [rect])
            self.issued["vkCmdSetScissor"] += 1
        if old is None or k.blend_color != old.blend_color:
            vk.vkCmdSetBlendConstants(cmd, list(k.blend_color))
            self.issued["vkCmdSetBlendConstants"] += 1
        if old is None or k.polygon_offset != old.polygon_offset:
            factor, units, clamp = k.polygon_offset
            vk.vkCmdSetDepthBias(cmd, units, clamp if self._bias_clamp else 0.0, factor)
            self.issued["vkCmdSetDepthBias"] += 1
        if old is None or k.line_width != old.line_width:
            lo, hi = self._line
            vk.vkCmdSetLineWidth(cmd, min(max(k.line_width, lo), hi))
            self.issued["vkCmdSetLineWidth"] += 1
        for name, fn, now, was in (
            ("vkCmdSetStencilCompareMask", vk.vkCmdSetStencilCompareMask, k.stencil_value_mask,
             None if old is None else old.stencil_value_mask),
            ("vkCmdSetStencilWriteMask", vk.vkCmdSetStencilWriteMask, k.stencil_write_mask,
             None if old is None else old.stencil_write_mask),
            ("vkCmdSetStencilReference", vk.vkCmdSetStencilReference,
             tuple(max(r, 0) for r in k.stencil_ref),
             None if old is None else tuple(max(r, 0) for r in old.stencil_ref)),
        ):  # fmt: skip
            if now == was:
                continue
            if now[0] == now[1]:
                fn(cmd, _FRONT | _BACK, now[0])
                self.issued[name] += 1
            else:
                fn(cmd, _FRONT, now[0])
                fn(cmd, _BACK, now[1])
                self.issued[name] += 2

    def reset(self) -> None:
        """Forget the shadow (a new command buffer starts with no dynamic state)."""
        self._serial = -1
        self._gate = self._key = self._raw = None

    @property
    def total_issued(self) -> int:
        return sum(self.issued.values())
