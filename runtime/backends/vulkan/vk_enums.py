"""Translations from the catalogue's enumerators and GL's enums to Vulkan's.

The catalogue enums (``BlendFactor``, ``BlendEquation``, ``LogicOperation``,
``DepthTestFunc``, ``StencilOperation``, ``CullFaceMode``, ``FrontFaceMode``) are keyed
here by enumerator *name*; their values come from the generated tables
(:func:`catalogue_map` joins the two and refuses an enumerator this module does not
name, so a catalogue addition fails loudly instead of decoding to garbage).

An enumerator that names no state (MobileGL's ``<Enum>Count`` bound and ``Unknown``) is
named here with :data:`NOT_A_VALUE`: a record that carries it is refused by name
(:class:`UnsupportedEnum` from the map's lookup), as is any value the enum does not list.

GL enums are GL's registry values (the wire carries them as the GL API defines them:
draw modes, polygon modes, vertex attribute types, internal formats).
"""

from __future__ import annotations

from functools import lru_cache

import vulkan as vk

from ...schema import tables as _t
from .errors import VulkanRefused

__all__ = ["catalogue_map", "TRANSLATED", "NOT_A_VALUE", "DUAL_SOURCE_FACTORS", "GL", "topology", "polygon_mode", "vertex_format",
           "texture_format", "DEPTH_FORMATS", "UnsupportedEnum"]  # fmt: skip


class UnsupportedEnum(VulkanRefused):
    """A value the Vulkan backend has no translation for (names the place and the value)."""


#: The translation of an enumerator that is a bound or a marker, not a state.
NOT_A_VALUE = None

#: catalogue enum -> {enumerator name -> Vulkan value, or NOT_A_VALUE}.
TRANSLATED: dict[str, dict[str, int | None]] = {
    "BlendFactor": {
        "Zero": vk.VK_BLEND_FACTOR_ZERO, "One": vk.VK_BLEND_FACTOR_ONE,
        "SrcColor": vk.VK_BLEND_FACTOR_SRC_COLOR,
        "OneMinusSrcColor": vk.VK_BLEND_FACTOR_ONE_MINUS_SRC_COLOR,
        "DstColor": vk.VK_BLEND_FACTOR_DST_COLOR,
        "OneMinusDstColor": vk.VK_BLEND_FACTOR_ONE_MINUS_DST_COLOR,
        "SrcAlpha": vk.VK_BLEND_FACTOR_SRC_ALPHA,
        "OneMinusSrcAlpha": vk.VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA,
        "DstAlpha": vk.VK_BLEND_FACTOR_DST_ALPHA,
        "OneMinusDstAlpha": vk.VK_BLEND_FACTOR_ONE_MINUS_DST_ALPHA,
        "ConstantColor": vk.VK_BLEND_FACTOR_CONSTANT_COLOR,
        "OneMinusConstantColor": vk.VK_BLEND_FACTOR_ONE_MINUS_CONSTANT_COLOR,
        "ConstantAlpha": vk.VK_BLEND_FACTOR_CONSTANT_ALPHA,
        "OneMinusConstantAlpha": vk.VK_BLEND_FACTOR_ONE_MINUS_CONSTANT_ALPHA,
        "Src1Color": vk.VK_BLEND_FACTOR_SRC1_COLOR,
        "OneMinusSrc1Color": vk.VK_BLEND_FACTOR_ONE_MINUS_SRC1_COLOR,
        "Src1Alpha": vk.VK_BLEND_FACTOR_SRC1_ALPHA,
        "OneMinusSrc1Alpha": vk.VK_BLEND_FACTOR_ONE_MINUS_SRC1_ALPHA,
        "BlendFactorCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
    "BlendEquation": {
        "Add": vk.VK_BLEND_OP_ADD, "Subtract": vk.VK_BLEND_OP_SUBTRACT,
        "ReverseSubtract": vk.VK_BLEND_OP_REVERSE_SUBTRACT,
        "Min": vk.VK_BLEND_OP_MIN, "Max": vk.VK_BLEND_OP_MAX,
        "BlendEquationCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
    "LogicOperation": {
        "Clear": vk.VK_LOGIC_OP_CLEAR, "And": vk.VK_LOGIC_OP_AND,
        "AndReverse": vk.VK_LOGIC_OP_AND_REVERSE, "Copy": vk.VK_LOGIC_OP_COPY,
        "AndInverted": vk.VK_LOGIC_OP_AND_INVERTED, "Noop": vk.VK_LOGIC_OP_NO_OP,
        "Xor": vk.VK_LOGIC_OP_XOR, "Or": vk.VK_LOGIC_OP_OR, "Nor": vk.VK_LOGIC_OP_NOR,
        "Equiv": vk.VK_LOGIC_OP_EQUIVALENT, "Invert": vk.VK_LOGIC_OP_INVERT,
        "OrReverse": vk.VK_LOGIC_OP_OR_REVERSE, "CopyInverted": vk.VK_LOGIC_OP_COPY_INVERTED,
        "OrInverted": vk.VK_LOGIC_OP_OR_INVERTED, "Nand": vk.VK_LOGIC_OP_NAND,
        "Set": vk.VK_LOGIC_OP_SET,
        "LogicOperationCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
    "DepthTestFunc": {
        "Never": vk.VK_COMPARE_OP_NEVER, "Less": vk.VK_COMPARE_OP_LESS,
        "Equal": vk.VK_COMPARE_OP_EQUAL, "LessEqual": vk.VK_COMPARE_OP_LESS_OR_EQUAL,
        "Greater": vk.VK_COMPARE_OP_GREATER, "NotEqual": vk.VK_COMPARE_OP_NOT_EQUAL,
        "GreaterEqual": vk.VK_COMPARE_OP_GREATER_OR_EQUAL, "Always": vk.VK_COMPARE_OP_ALWAYS,
        "DepthTestFuncCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
    "StencilOperation": {
        "Keep": vk.VK_STENCIL_OP_KEEP, "Zero": vk.VK_STENCIL_OP_ZERO,
        "Replace": vk.VK_STENCIL_OP_REPLACE,
        "IncrementClamp": vk.VK_STENCIL_OP_INCREMENT_AND_CLAMP,
        "DecrementClamp": vk.VK_STENCIL_OP_DECREMENT_AND_CLAMP,
        "Invert": vk.VK_STENCIL_OP_INVERT,
        "IncrementWrap": vk.VK_STENCIL_OP_INCREMENT_AND_WRAP,
        "DecrementWrap": vk.VK_STENCIL_OP_DECREMENT_AND_WRAP,
        "StencilOperationCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
    "CullFaceMode": {
        "Front": vk.VK_CULL_MODE_FRONT_BIT, "Back": vk.VK_CULL_MODE_BACK_BIT,
        "FrontAndBack": vk.VK_CULL_MODE_FRONT_AND_BACK,
        "CullFaceModeCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
    # The backend renders with a negative-height viewport (GL's lower-left origin), which
    # keeps GL's winding: GL counter-clockwise is Vulkan counter-clockwise.
    "FrontFaceMode": {
        "CounterClockwise": vk.VK_FRONT_FACE_COUNTER_CLOCKWISE,
        "Clockwise": vk.VK_FRONT_FACE_CLOCKWISE,
        "FrontFaceModeCount": NOT_A_VALUE, "Unknown": NOT_A_VALUE,
    },
}  # fmt: skip

#: Blend factors that read the second fragment output (the ``dualSrcBlend`` feature).
DUAL_SOURCE_FACTORS = frozenset(
    {vk.VK_BLEND_FACTOR_SRC1_COLOR, vk.VK_BLEND_FACTOR_ONE_MINUS_SRC1_COLOR,
     vk.VK_BLEND_FACTOR_SRC1_ALPHA, vk.VK_BLEND_FACTOR_ONE_MINUS_SRC1_ALPHA}
)  # fmt: skip


class CatalogueMap(dict):
    """``{catalogue value -> Vulkan value}``; a value it lacks is refused by name."""

    def __init__(self, enum: str, pairs: dict[int, int], refused: dict[int, str]) -> None:
        super().__init__(pairs)
        self.enum = enum
        self.refused = refused  # value -> the enumerator that names no state

    def __missing__(self, value: int) -> int:
        name = self.refused.get(value)
        what = f"{self.enum}::{name} ({value}) names no state" if name else (
            f"{value} is no {self.enum} enumerator")  # fmt: skip
        raise UnsupportedEnum(self.enum, what)


@lru_cache(maxsize=None)
def catalogue_map(enum: str) -> CatalogueMap:
    """``{catalogue value -> Vulkan value}`` for every enumerator of ``enum`` that names a
    state; looking up one that does not (:data:`NOT_A_VALUE`), or a value the enum lacks,
    raises :class:`UnsupportedEnum`."""
    names = _t.enum(enum)
    table = TRANSLATED[enum]
    missing = sorted(set(names) - set(table))
    if missing:
        raise UnsupportedEnum(enum, f"no Vulkan translation for {', '.join(missing)}")
    pairs = {int(v): table[n] for n, v in names.items() if table[n] is not NOT_A_VALUE}
    refused = {int(v): n for n, v in names.items() if table[n] is NOT_A_VALUE}
    return CatalogueMap(enum, pairs, refused)  # type: ignore[arg-type]


class GL:
    """GL registry values the wire carries (draw modes, polygon modes, types, formats)."""

    POINTS, LINES, LINE_LOOP, LINE_STRIP = 0x0000, 0x0001, 0x0002, 0x0003
    TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN = 0x0004, 0x0005, 0x0006
    POINT, LINE, FILL = 0x1B00, 0x1B01, 0x1B02
    BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT = 0x1400, 0x1401, 0x1402, 0x1403
    INT, UNSIGNED_INT, FLOAT, HALF_FLOAT = 0x1404, 0x1405, 0x1406, 0x140B
    RGBA8, RGBA16F, RGBA32F, R8 = 0x8058, 0x881A, 0x8814, 0x8229
    DEPTH24_STENCIL8, DEPTH32F_STENCIL8 = 0x88F0, 0x8CAD
    DEPTH_COMPONENT16, DEPTH_COMPONENT24, DEPTH_COMPONENT32F = 0x81A5, 0x81A6, 0x8CAC
    COLOR_BUFFER_BIT, DEPTH_BUFFER_BIT, STENCIL_BUFFER_BIT = 0x4000, 0x0100, 0x0400
    RGBA = 0x1908


_TOPOLOGY = {
    GL.POINTS: vk.VK_PRIMITIVE_TOPOLOGY_POINT_LIST,
    GL.LINES: vk.VK_PRIMITIVE_TOPOLOGY_LINE_LIST,
    GL.LINE_STRIP: vk.VK_PRIMITIVE_TOPOLOGY_LINE_STRIP,
    GL.TRIANGLES: vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
    GL.TRIANGLE_STRIP: vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP,
    GL.TRIANGLE_FAN: vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_FAN,
}
TRIANGLE_TOPOLOGIES = frozenset(
    {vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP,
     vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_FAN}
)  # fmt: skip
LIST_TOPOLOGIES = frozenset(
    {vk.VK_PRIMITIVE_TOPOLOGY_POINT_LIST, vk.VK_PRIMITIVE_TOPOLOGY_LINE_LIST,
     vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST}
)  # fmt: skip


def topology(mode: int) -> int:
    try:
        return _TOPOLOGY[mode]
    except KeyError:
        raise UnsupportedEnum(
            "DrawVbo.Mode", f"draw mode {mode:#x} has no Vulkan topology"
        ) from None


def polygon_mode(gl_mode: int) -> int:
    """``PolygonModeFront`` -> VkPolygonMode (0, never written, is GL's initial FILL)."""
    if gl_mode in (0, GL.FILL):
        return vk.VK_POLYGON_MODE_FILL
    if gl_mode == GL.LINE:
        return vk.VK_POLYGON_MODE_LINE
    if gl_mode == GL.POINT:
        return vk.VK_POLYGON_MODE_POINT
    raise UnsupportedEnum(
        "RenderStateParameters.PolygonModeFront", f"{gl_mode:#x} is no polygon mode"
    )


_VERTEX_FORMATS: dict[tuple[int, bool], tuple[int, int, int, int]] = {
    # (GL type, normalized) -> formats for 1..4 components
    (GL.FLOAT, False): (vk.VK_FORMAT_R32_SFLOAT, vk.VK_FORMAT_R32G32_SFLOAT,
                        vk.VK_FORMAT_R32G32B32_SFLOAT, vk.VK_FORMAT_R32G32B32A32_SFLOAT),
    (GL.UNSIGNED_BYTE, True): (vk.VK_FORMAT_R8_UNORM, vk.VK_FORMAT_R8G8_UNORM,
                               vk.VK_FORMAT_R8G8B8_UNORM, vk.VK_FORMAT_R8G8B8A8_UNORM),
    (GL.UNSIGNED_BYTE, False): (vk.VK_FORMAT_R8_USCALED, vk.VK_FORMAT_R8G8_USCALED,
                                vk.VK_FORMAT_R8G8B8_USCALED, vk.VK_FORMAT_R8G8B8A8_USCALED),
    (GL.BYTE, True): (vk.VK_FORMAT_R8_SNORM, vk.VK_FORMAT_R8G8_SNORM,
                      vk.VK_FORMAT_R8G8B8_SNORM, vk.VK_FORMAT_R8G8B8A8_SNORM),
    (GL.UNSIGNED_SHORT, True): (vk.VK_FORMAT_R16_UNORM, vk.VK_FORMAT_R16G16_UNORM,
                                vk.VK_FORMAT_R16G16B16_UNORM, vk.VK_FORMAT_R16G16B16A16_UNORM),
    (GL.SHORT, True): (vk.VK_FORMAT_R16_SNORM, vk.VK_FORMAT_R16G16_SNORM,
                       vk.VK_FORMAT_R16G16B16_SNORM, vk.VK_FORMAT_R16G16B16A16_SNORM),
    (GL.HALF_FLOAT, False): (vk.VK_FORMAT_R16_SFLOAT, vk.VK_FORMAT_R16G16_SFLOAT,
                             vk.VK_FORMAT_R16G16B16_SFLOAT, vk.VK_FORMAT_R16G16B16A16_SFLOAT),
}  # fmt: skip


def vertex_format(gl_type: int, size: int, normalized: bool) -> int:
    formats = _VERTEX_FORMATS.get((gl_type, bool(normalized)))
    if formats is None or not 1 <= size <= 4:
        raise UnsupportedEnum(
            "CreateVertexElements.MGPVertexAttribWire",
            f"type {gl_type:#x} x{size} normalized={int(normalized)} has no Vulkan vertex format",
        )
    return formats[size - 1]


_TEXTURE_FORMATS = {
    GL.RGBA8: vk.VK_FORMAT_R8G8B8A8_UNORM,
    GL.R8: vk.VK_FORMAT_R8_UNORM,
    GL.RGBA16F: vk.VK_FORMAT_R16G16B16A16_SFLOAT,
    GL.RGBA32F: vk.VK_FORMAT_R32G32B32A32_SFLOAT,
}
DEPTH_FORMATS = frozenset(
    {GL.DEPTH24_STENCIL8, GL.DEPTH32F_STENCIL8, GL.DEPTH_COMPONENT16, GL.DEPTH_COMPONENT24,
     GL.DEPTH_COMPONENT32F}
)  # fmt: skip


def texture_format(internal_format: int) -> int:
    try:
        return _TEXTURE_FORMATS[internal_format]
    except KeyError:
        raise UnsupportedEnum(
            "ResourceRespecify.InternalFormat", f"{internal_format:#x} has no Vulkan colour format"
        ) from None
