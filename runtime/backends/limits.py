"""Checks every backend makes before a driver call: values a record may carry, well-formed,
that a driver would crash on, misreport, or answer with a validation message.

All of them raise :class:`~.refusal.DriverRefused` naming the record and field, so a
hostile stream is a named refusal, never a crash:

- :class:`EnumTable`: an MG enumerator -> driver value table; a value past the enum is
  ``DriverRefused("<Enum>")`` (not an ``IndexError`` from the middle of a sync);
- :func:`viewport_box`: a viewport's floats -> the integers GL's ``glViewport`` takes; NaN
  or infinity is refused, a finite value past the driver's range is clamped as GL clamps;
- :func:`clip_box`: a readback rectangle clipped to the framebuffer (GL leaves the pixels
  outside undefined; the driver never sees a rectangle past its integer range);
- :func:`check_image`: an image's extents, mip levels and layers against a device's limits;
- :func:`check_spirv`: a SPIR-V module parsed far enough that the driver never sees a
  header-only, truncated or misframed one.
"""

from __future__ import annotations

import json
import math
import operator
import struct
from collections.abc import Iterable, Sequence

from .refusal import DriverRefused

__all__ = ["EnumTable", "viewport_box", "clip_box", "check_image", "mip_levels", "check_spirv",
           "INT32_MAX", "SPIRV_MAGIC"]  # fmt: skip

INT32_MAX = (1 << 31) - 1
INT32_MIN = -(1 << 31)
SPIRV_MAGIC = 0x07230203
_SPIRV_HEADER_WORDS = 5
_OP_MEMORY_MODEL, _OP_ENTRY_POINT, _OP_FUNCTION, _OP_FUNCTION_END = 14, 15, 54, 56


class EnumTable(tuple):
    """``table[mg_value] -> driver value``; an index outside the enum is refused by name."""

    def __new__(cls, values: Iterable[int], enum: str) -> "EnumTable":
        self = super().__new__(cls, values)
        self.enum = enum
        return self

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return tuple.__getitem__(self, i)
        i = operator.index(i)
        if not 0 <= i < len(self):  # a negative value would wrap round to another enumerator
            raise DriverRefused(self.enum, f"{i} is no {self.enum} enumerator "
                                f"(0..{len(self) - 1})")  # fmt: skip
        return tuple.__getitem__(self, i)

    def __reduce__(self) -> tuple[object, ...]:
        return (EnumTable, (tuple(self), self.enum))


def viewport_box(what: str, x: float, y: float, w: float, h: float,
                 max_w: int = INT32_MAX, max_h: int = INT32_MAX,
                 lo: int = INT32_MIN, hi: int = INT32_MAX) -> tuple[int, int, int, int]:  # fmt: skip
    """The integer box of a viewport (GL truncates toward zero): width / height clamped to
    ``[0, max_w]`` / ``[0, max_h]``, the origin to ``[lo, hi]`` and the far edge to ``hi``
    (GL clamps a viewport to the implementation's range; it has no NaN)."""
    vals = (float(x), float(y), float(w), float(h))
    for name, v in zip("XYWH", vals):
        if not math.isfinite(v):
            raise DriverRefused(f"{what}.Viewports", f"{name} = {v}: a viewport is finite")
    xi, yi, wi, hi_ = (int(v) for v in vals)
    wi, hi_ = min(max(wi, 0), max_w), min(max(hi_, 0), max_h)
    xi, yi = min(max(xi, lo), hi), min(max(yi, lo), hi)
    wi, hi_ = min(wi, hi - xi), min(hi_, hi - yi)
    return xi, yi, max(wi, 0), max(hi_, 0)


def clip_box(x: int, y: int, w: int, h: int, width: int, height: int
             ) -> tuple[int, int, int, int] | None:  # fmt: skip
    """``(x, y, w, h)`` intersected with ``[0, width) x [0, height)``; None if empty."""
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, width), min(y + h, height)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1 - x0, y1 - y0


def mip_levels(*extents: int) -> int:
    """The most mip levels an image of these extents has (``floor(log2(max)) + 1``)."""
    return max(max(extents, default=1), 1).bit_length()


def check_image(what: str, *, width: int, height: int, depth: int = 1, layers: int = 1,
                levels: int = 1, max_dim: int, max_layers: int, three_d: bool = False,
                cube: bool = False) -> None:  # fmt: skip
    """An image the device can make: each extent in ``[1, max_dim]``, ``levels`` within its
    mip chain, ``layers`` within ``max_layers`` (a cube is square)."""
    dims = (width, height, depth) if three_d else (width, height)
    if any(v < 1 for v in dims):
        raise DriverRefused(f"{what}.Width", f"{'x'.join(map(str, dims))}: an empty image")
    if any(v > max_dim for v in dims):
        raise DriverRefused(f"{what}.Width", f"{'x'.join(map(str, dims))} > the device's "
                            f"largest {'3-D ' if three_d else ''}image dimension {max_dim}")  # fmt: skip
    if cube and width != height:
        raise DriverRefused(f"{what}.Height", f"a {width}x{height} cube (faces are square)")
    top = mip_levels(*dims)
    if not 1 <= max(levels, 1) <= top:
        raise DriverRefused(f"{what}.Levels", f"{levels} levels for {'x'.join(map(str, dims))} "
                            f"(at most {top})")  # fmt: skip
    if not three_d and not 1 <= max(layers, 1) <= max_layers:
        raise DriverRefused(f"{what}.ArrayLayers", f"{layers} layers > the device's "
                            f"{max_layers}")  # fmt: skip


def check_spirv(what: str, module: bytes) -> None:
    """A SPIR-V module framed as the specification frames it: a whole number of 32-bit
    words, the magic number (either byte order), a five-word header, then instructions whose
    word counts tile the rest exactly, with an ``OpMemoryModel`` and an ``OpEntryPoint``
    whose function the module defines, every ``OpFunction`` closed by ``OpFunctionEnd``
    (what a driver's front end walks before it validates anything)."""
    n = len(module)
    if n % 4:
        raise DriverRefused(what, f"{n} bytes: not a whole number of words")
    if n < 4 * _SPIRV_HEADER_WORDS:
        raise DriverRefused(what, f"{n} bytes: shorter than a SPIR-V header")
    magic = struct.unpack_from("<I", module)[0]
    if magic == SPIRV_MAGIC:
        order = "<"
    elif magic == struct.unpack("<I", struct.pack(">I", SPIRV_MAGIC))[0]:
        order = ">"
    else:
        raise DriverRefused(what, f"magic {magic:#010x}, expected {SPIRV_MAGIC:#010x}")
    words: Sequence[int] = struct.unpack(f"{order}{n // 4}I", module)
    i, seen = _SPIRV_HEADER_WORDS, set()
    entries, functions, open_fn = [], set(), None
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise DriverRefused(what, f"instruction at word {i} (opcode {op}) claims "
                                f"{count} words; {len(words) - i} remain")  # fmt: skip
        seen.add(op)
        if op == _OP_ENTRY_POINT and count >= 3:
            entries.append(words[i + 2])
        elif op == _OP_FUNCTION and count >= 3:
            if open_fn is not None:
                raise DriverRefused(what, f"function %{words[i + 2]} opens inside "
                                    f"function %{open_fn}")  # fmt: skip
            open_fn = words[i + 2]
            functions.add(open_fn)
        elif op == _OP_FUNCTION_END:
            if open_fn is None:
                raise DriverRefused(what, f"OpFunctionEnd at word {i} ends no function")
            open_fn = None
        i += count
    for op, name in ((_OP_MEMORY_MODEL, "OpMemoryModel"), (_OP_ENTRY_POINT, "OpEntryPoint")):
        if op not in seen:
            raise DriverRefused(what, f"no {name}: not a shader module")
    if open_fn is not None:
        raise DriverRefused(what, f"function %{open_fn} has no OpFunctionEnd")
    for fn in entries:
        if fn not in functions:
            raise DriverRefused(what, f"the entry point names function %{fn}, which "
                                "the module does not define")  # fmt: skip


#: How deep a reflection record may nest (the deepest well-formed one is an object of
#: lists of objects of arrays: 4).
REFLECTION_DEPTH = 8


def load_reflection(what: str, raw: bytes) -> dict:
    """A program's reflection record: a JSON object whose list members hold objects, at
    most :data:`REFLECTION_DEPTH` deep (empty: ``{}``). Anything else is
    ``DriverRefused("<what>.Reflection")``, not a ``RecursionError`` / ``AttributeError``
    from the middle of a backend."""
    place = f"{what}.Reflection"
    depth = top = 0
    in_str = esc = False
    for ch in bytes(raw):  # nesting measured before the parser recurses into it
        if in_str:
            esc, in_str = (False, True) if esc else (ch == 0x5C, ch != 0x22)
        elif ch == 0x22:
            in_str = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            top = max(top, depth)
            if top > REFLECTION_DEPTH:
                raise DriverRefused(place, f"nested deeper than {REFLECTION_DEPTH}")
        elif ch in (0x5D, 0x7D):
            depth -= 1
    try:
        refl = json.loads(bytes(raw).decode() or "{}")
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DriverRefused(place, f"not JSON: {exc}") from None
    if not isinstance(refl, dict):
        raise DriverRefused(place, f"a JSON {type(refl).__name__}, expected an object")
    for key, value in refl.items():
        if key == "workgroup":  # a compute program's local size: three counts
            if not (isinstance(value, list) and len(value) == 3 and all(
                    isinstance(e, int) and not isinstance(e, bool) and e > 0 for e in value)):
                raise DriverRefused(place, "'workgroup': three positive integers expected")
            continue
        if isinstance(value, list) and not all(isinstance(e, dict) for e in value):
            raise DriverRefused(place, f"{key!r}: a list of objects expected")
    return refl


_OP_DECORATE, _OP_VARIABLE = 71, 59
_DECORATION_LOCATION, _STORAGE_INPUT = 30, 1


def spirv_input_locations(module: bytes) -> frozenset[int]:
    """The ``Location`` of every ``Input`` variable of a (framed: :func:`check_spirv`)
    module: what a vertex stage fetches from vertex attributes."""
    order = "<" if struct.unpack_from("<I", module)[0] == SPIRV_MAGIC else ">"
    words = struct.unpack(f"{order}{len(module) // 4}I", module)
    loc: dict[int, int] = {}
    inputs: list[int] = []
    i = _SPIRV_HEADER_WORDS
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if op == _OP_DECORATE and count >= 4 and words[i + 2] == _DECORATION_LOCATION:
            loc[words[i + 1]] = words[i + 3]
        elif op == _OP_VARIABLE and count >= 4 and words[i + 3] == _STORAGE_INPUT:
            inputs.append(words[i + 2])
        i += max(count, 1)
    return frozenset(loc[v] for v in inputs if v in loc)


_OP_MEMBER_DECORATE, _OP_TYPE_POINTER, _OP_CONSTANT, _OP_STORE = 72, 32, 43, 62
_OP_ACCESS_CHAINS = (65, 66)  # OpAccessChain, OpInBoundsAccessChain
_DECORATION_BUILTIN, _BUILTIN_POINT_SIZE, _STORAGE_OUTPUT = 11, 1, 3


def spirv_writes_point_size(module: bytes) -> bool:
    """Does a (framed) vertex module store ``gl_PointSize``: an ``OpStore`` through the
    ``PointSize`` built-in, a variable of its own or the member of an ``Output`` block
    (glslang declares the member in every ``gl_PerVertex``; declared is not written)."""
    order = "<" if struct.unpack_from("<I", module)[0] == SPIRV_MAGIC else ">"
    words = struct.unpack(f"{order}{len(module) // 4}I", module)
    members: dict[int, int] = {}  # block struct type -> PointSize member index
    direct: set[int] = set()  # variables decorated PointSize themselves
    pointee: dict[int, int] = {}  # pointer type -> pointee type
    outputs: dict[int, int] = {}  # Output variable -> its pointee type
    consts: dict[int, int] = {}
    chains: list[tuple[int, int, int]] = []  # (result, base, first index id)
    stores: list[int] = []
    i = _SPIRV_HEADER_WORDS
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        w = words[i + 1: i + max(count, 1)]
        if op == _OP_MEMBER_DECORATE and len(w) >= 4 and w[2] == _DECORATION_BUILTIN \
                and w[3] == _BUILTIN_POINT_SIZE:
            members[w[0]] = w[1]
        elif op == _OP_DECORATE and len(w) >= 3 and w[1] == _DECORATION_BUILTIN \
                and w[2] == _BUILTIN_POINT_SIZE:
            direct.add(w[0])
        elif op == _OP_TYPE_POINTER and len(w) >= 3:
            pointee[w[0]] = w[2]
        elif op == _OP_VARIABLE and len(w) >= 3 and w[2] == _STORAGE_OUTPUT:
            outputs[w[1]] = pointee.get(w[0], -1)
        elif op == _OP_CONSTANT and len(w) >= 3:
            consts[w[1]] = w[2]
        elif op in _OP_ACCESS_CHAINS and len(w) >= 4:
            chains.append((w[1], w[2], w[3]))
        elif op == _OP_STORE and len(w) >= 2:
            stores.append(w[0])
        i += max(count, 1)
    written = {v for v in outputs if v in direct}
    written |= {r for r, base, first in chains
                if base in outputs and members.get(outputs[base], -1) == consts.get(first, -2)}
    return any(p in written for p in stores)


def clear_depth(what: str, value: float) -> float:
    """A clear depth as GL takes it: clamped to [0, 1]; NaN is refused by name."""
    v = float(value)
    if math.isnan(v):
        raise DriverRefused(f"{what}.DepthValue", "NaN")
    return min(max(v, 0.0), 1.0)
