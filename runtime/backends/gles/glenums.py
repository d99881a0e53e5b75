"""MG enumerators -> GLES values, by enumerator name.

The values of ``BlendFactor``, ``DepthTestFunc``... come from the generated tables
(``ENUMS``); the GL spelling of each is the GL token named like the enumerator
(``OneMinusSrcAlpha`` -> ``GL_ONE_MINUS_SRC_ALPHA``), except where GL spells it otherwise
(:data:`_GL_SPELLING`). :func:`gl_table` returns a tuple indexed by the MG value; a value the
tables add without a GL token here fails :func:`gl_table` by name (tests call it for every
enum the backend translates).
"""

from __future__ import annotations

import re
from functools import lru_cache

from OpenGL.GLES2.EXT import blend_func_extended as _blend_func_extended

from ...schema import tables as _t
from ..limits import EnumTable
from .gl import GL

#: GLES extension namespaces a token may come from when the GLES 3 core has no such token
#: (dual-source blend factors: ``GL_EXT_blend_func_extended``; a driver without the
#: extension answers ``GL_INVALID_ENUM``, which the backend's ``glGetError`` check reports).
_EXTENSIONS = (_blend_func_extended,)

__all__ = ["TRANSLATED", "gl_table", "gl_token"]

#: The MG enums the GLES backend turns into GL values.
TRANSLATED = ("BlendFactor", "BlendEquation", "DepthTestFunc",
              "StencilOperation", "CullFaceMode", "FrontFaceMode")  # fmt: skip

_GL_SPELLING: dict[tuple[str, str], str] = {
    ("BlendEquation", "Add"): "GL_FUNC_ADD",
    ("BlendEquation", "Subtract"): "GL_FUNC_SUBTRACT",
    ("BlendEquation", "ReverseSubtract"): "GL_FUNC_REVERSE_SUBTRACT",
    ("DepthTestFunc", "LessEqual"): "GL_LEQUAL",
    ("DepthTestFunc", "GreaterEqual"): "GL_GEQUAL",
    ("DepthTestFunc", "NotEqual"): "GL_NOTEQUAL",
    ("StencilOperation", "IncrementClamp"): "GL_INCR",
    ("StencilOperation", "DecrementClamp"): "GL_DECR",
    ("StencilOperation", "IncrementWrap"): "GL_INCR_WRAP",
    ("StencilOperation", "DecrementWrap"): "GL_DECR_WRAP",
    ("FrontFaceMode", "CounterClockwise"): "GL_CCW",
    ("FrontFaceMode", "Clockwise"): "GL_CW",
    ("BlendFactor", "Src1Color"): "GL_SRC1_COLOR_EXT",
    ("BlendFactor", "OneMinusSrc1Color"): "GL_ONE_MINUS_SRC1_COLOR_EXT",
    ("BlendFactor", "Src1Alpha"): "GL_SRC1_ALPHA_EXT",
    ("BlendFactor", "OneMinusSrc1Alpha"): "GL_ONE_MINUS_SRC1_ALPHA_EXT",
}


def gl_token(enum: str, name: str) -> int:
    """The GL value of enumerator ``name`` of MG enum ``enum``."""
    token = _GL_SPELLING.get((enum, name)) or "GL_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()
    value = getattr(GL, token, None)
    for ns in _EXTENSIONS:
        if value is None:
            value = getattr(ns, token, None)
    if value is None:
        raise LookupError(f"{enum}.{name}: no GL token {token}")
    return int(value)


@lru_cache(maxsize=None)
def gl_table(enum: str) -> tuple[int, ...]:
    """``table[mg_value] == gl_value`` for every enumerator of ``enum`` (dense from 0; the
    enum's ``...Count`` and ``Unknown`` sentinels name no GL value and are left out)."""
    values = _t.enum_members(enum)
    out = [0] * (max(values.values()) + 1)
    for name, v in values.items():
        out[int(v)] = gl_token(enum, name)
    return EnumTable(out, enum)  # a value past the enum: DriverRefused(enum), not IndexError
