"""GL's error model on the client: misuse is answered here, by name, and never reaches the
wire.

A GL implementation answers a wrong enum, an out-of-range value or a call on a deleted
object with ``GL_INVALID_ENUM`` / ``GL_INVALID_VALUE`` / ``GL_INVALID_OPERATION`` and goes
on; a record that carried the same misuse to the server would be refused there as
``ProtocolCorruption`` and the context would be lost. So the client checks first:

- :class:`ClientError` (a ``ValueError``): every client-side refusal; ``gl_error`` names the
  GL error the call would raise (``"GL_INVALID_ENUM"``...);
- :func:`enum_arg`: an enumerator name or value of a table enum (``blend_func("NOPE")``,
  ``depth_func(12345)``);
- :func:`number_args`: finite numbers (``viewport(None, ...)``, NaN, infinity);
- :func:`draw_mode`, :func:`count_arg`: a draw's mode and counts;
- :func:`live`: an object the client has not deleted (a second delete, a use after delete).
  A deleted object is a dead Python object here (not a GL name that could be reused), so
  its use is the caller's bug, and the answer is an error, not GL's silent ignore.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from numbers import Real
from typing import Any

from ..schema import tables as _t

__all__ = ["ClientError", "enum_arg", "number_args", "draw_mode", "count_arg", "live",
           "GL_DRAW_MODES"]  # fmt: skip


class ClientError(ValueError):
    """A client-side misuse of the API (the GL error the call would raise): named, and never
    a wire record."""

    def __init__(self, message: str, gl_error: str = "GL_INVALID_VALUE") -> None:
        super().__init__(message)
        self.gl_error = gl_error


#: GL's primitive modes (GL registry values; the wire's ``DrawVbo.Mode`` carries them).
GL_DRAW_MODES = {
    "GL_POINTS": 0x0000, "GL_LINES": 0x0001, "GL_LINE_LOOP": 0x0002, "GL_LINE_STRIP": 0x0003,
    "GL_TRIANGLES": 0x0004, "GL_TRIANGLE_STRIP": 0x0005, "GL_TRIANGLE_FAN": 0x0006,
    "GL_LINES_ADJACENCY": 0x000A, "GL_LINE_STRIP_ADJACENCY": 0x000B,
    "GL_TRIANGLES_ADJACENCY": 0x000C, "GL_TRIANGLE_STRIP_ADJACENCY": 0x000D,
    "GL_PATCHES": 0x000E,
}  # fmt: skip
DRAW_MODE_VALUES = _MODES = frozenset(GL_DRAW_MODES.values())


@lru_cache(maxsize=None)
def _members(enum: str) -> tuple[dict[str, int], frozenset[int]]:
    names = {str(k): int(v) for k, v in _t.enum_members(enum).items()}  # no sentinels
    return names, frozenset(names.values())


def enum_arg(what: str, enum: str, value: Any) -> Any:
    """``value`` (a name or a value of table enum ``enum``) unchanged; else
    ``ClientError(GL_INVALID_ENUM)``."""
    names, values = _members(enum)
    if isinstance(value, str):
        if value in names:
            return value
    elif isinstance(value, int) and not isinstance(value, bool) and value in values:
        return value
    raise ClientError(f"{what}: {value!r} is no {enum} (one of {', '.join(names)})",
                      "GL_INVALID_ENUM")  # fmt: skip


def number_args(what: str, *values: Any) -> None:
    """Every value a finite real number (not None, not a bool, not NaN or infinity)."""
    for i, v in enumerate(values):
        if not isinstance(v, Real) or isinstance(v, bool) or not math.isfinite(v):
            raise ClientError(f"{what}: argument {i} is {v!r}, expected a finite number")


def draw_mode(what: str, mode: Any) -> None:
    if isinstance(mode, bool) or not isinstance(mode, int) or mode not in _MODES:
        raise ClientError(f"{what}: mode {mode!r} is no GL primitive mode "
                          f"({', '.join(GL_DRAW_MODES)})", "GL_INVALID_ENUM")  # fmt: skip


def count_arg(what: str, name: str, value: Any, top: int = (1 << 32) - 1) -> None:
    """An integer in ``[0, top]`` (GL: a negative count is ``GL_INVALID_VALUE``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise ClientError(f"{what}: {name} {value!r}, expected an integer in 0..{top}")


_KINDS = {"Buffer": "Buffer", "Program": "ShaderCso", "Framebuffer": "Framebuffer"}


def live(what: str, obj: Any, allocs: Any) -> None:
    """``obj`` (a Buffer / Texture / Program / Framebuffer) is one the client has not
    deleted: its handle is still live in its kind's slot allocator (``allocs``: the
    tracker's ``alloc``, kind -> allocator)."""
    name = type(obj).__name__
    if name == "Texture":
        kind = "Renderbuffer" if getattr(obj, "target", "") == "Renderbuffer" else "Texture"
    else:
        kind = _KINDS.get(name)
    h = getattr(obj, "handle", None)
    if kind is None or h is None:
        raise ClientError(f"{what}: {obj!r} is no Buffer, Texture, Program or Framebuffer",
                          "GL_INVALID_OPERATION")  # fmt: skip
    if not allocs[kind].is_live(h):
        raise ClientError(f"{what}: {name} {tuple(h)} was deleted", "GL_INVALID_OPERATION")


#: How deep a reflection record may nest (the server's backends refuse deeper ones too).
REFLECTION_DEPTH = 8


def reflection_record(what: str, raw: bytes) -> dict:
    """The reflection JSON the client reads the default block's layout from: an object,
    at most :data:`REFLECTION_DEPTH` deep, whose ``default_block`` rows are objects with a
    ``name`` and a ``type`` and whose ``samplers`` rows are objects with a ``name``. Bytes
    that are not JSON stay opaque (``{}``: the server judges them); JSON of another shape
    is a :class:`ClientError` (``GL_INVALID_OPERATION``, a program that cannot link)."""
    depth = top = 0
    in_str = esc = False
    for ch in bytes(raw):
        if in_str:
            esc, in_str = (False, True) if esc else (ch == 0x5C, ch != 0x22)
        elif ch == 0x22:
            in_str = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            top = max(top, depth)
        elif ch in (0x5D, 0x7D):
            depth -= 1
    if top > REFLECTION_DEPTH:
        raise ClientError(f"{what}: the reflection record nests {top} deep (at most "
                          f"{REFLECTION_DEPTH})", "GL_INVALID_OPERATION")  # fmt: skip
    try:
        refl = json.loads(bytes(raw))
    except ValueError:
        return {}
    bad = None
    if not isinstance(refl, dict):
        bad = f"a JSON {type(refl).__name__}, expected an object"
    else:
        for key, need in (("default_block", ("name", "type")), ("samplers", ("name",))):
            rows = refl.get(key, [])
            if not isinstance(rows, list) or not all(
                    isinstance(r, dict) and all(isinstance(r.get(k), str) for k in need)
                    for r in rows):  # fmt: skip
                bad = f"{key!r} is not a list of objects with {' and '.join(need)}"
                break
    if bad is not None:
        raise ClientError(f"{what}: reflection record: {bad}", "GL_INVALID_OPERATION")
    return refl
