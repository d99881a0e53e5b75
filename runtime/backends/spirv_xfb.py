"""Transform-feedback layout read from SPIR-V, and the same module without it.

A vertex (or last pre-rasterisation) stage that captures declares it in SPIR-V itself:
``OpExecutionMode Xfb`` and, per output variable, ``XfbBuffer`` / ``XfbStride`` /
``Offset`` decorations (GLSL's ``xfb_buffer`` / ``xfb_stride`` / ``xfb_offset``). Vulkan
consumes them as they are. ESSL has no spelling for them (SPIRV-Cross refuses
``GL_ARB_enhanced_layouts`` for ES), so a GLES backend reads the layout here
(:func:`xfb_layout`: per output, its name, buffer, byte offset, component count, and the
buffer's stride), drops the decorations (:func:`strip_xfb`) before translating, and hands
the names to ``glTransformFeedbackVaryings`` before the link.

The words are SPIR-V's (the Khronos SPIR-V specification, "Physical Layout" and the
opcode / decoration / execution-mode enumerants); nothing here executes a shader.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["XfbVarying", "XfbLayout", "SpirvError", "xfb_layout", "strip_xfb"]

MAGIC = 0x07230203
# opcodes (SPIR-V specification, "Instructions")
_OP_NAME = 5
_OP_EXECUTION_MODE = 16
_OP_CAPABILITY = 17
_OP_TYPE_INT = 21
_OP_TYPE_FLOAT = 22
_OP_TYPE_VECTOR = 23
_OP_TYPE_ARRAY = 28
_OP_TYPE_POINTER = 32
_OP_CONSTANT = 43
_OP_VARIABLE = 59
_OP_DECORATE = 71
_OP_MEMBER_DECORATE = 72
# enumerants
_EXEC_MODE_XFB = 11
_CAP_TRANSFORM_FEEDBACK = 53
_DEC_LOCATION = 30
_DEC_OFFSET = 35
_DEC_XFB_BUFFER = 36
_DEC_XFB_STRIDE = 37
_STORAGE_OUTPUT = 3
_XFB_DECORATIONS = (_DEC_XFB_BUFFER, _DEC_XFB_STRIDE)


class SpirvError(ValueError):
    """The words are not a SPIR-V module this reader can walk (named)."""


@dataclass(frozen=True)
class XfbVarying:
    name: str
    buffer: int
    offset: int  # bytes from the vertex's start in its buffer
    components: int  # 32-bit components
    location: int = -1


@dataclass(frozen=True)
class XfbLayout:
    varyings: tuple[XfbVarying, ...]  # by buffer, then offset
    strides: dict[int, int]  # buffer -> bytes per vertex

    def packed(self) -> bool:
        """Every buffer's varyings tile its stride with no hole (what a GLES
        ``glTransformFeedbackVaryings`` list can say without gl_SkipComponents)."""
        for buf, stride in self.strides.items():
            at = 0
            for v in (v for v in self.varyings if v.buffer == buf):
                if v.offset != at:
                    return False
                at += 4 * v.components
            if at != stride:
                return False
        return True


def _words(code: bytes) -> list[int]:
    if len(code) % 4 or len(code) < 20:
        raise SpirvError(f"SPIR-V of {len(code)} bytes (a whole number of words, header 5)")
    words = list(struct.unpack(f"<{len(code) // 4}I", code))
    if words[0] != MAGIC:
        raise SpirvError(f"SPIR-V magic {words[0]:#010x}, expected {MAGIC:#010x}")
    return words


def _instructions(words: list[int]):
    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise SpirvError(f"instruction at word {i} of length {count} runs past the module")
        yield i, op, words[i + 1 : i + count]
        i += count


def _string(ops: list[int]) -> str:
    raw = struct.pack(f"<{len(ops)}I", *ops)
    return raw.split(b"\0", 1)[0].decode()


def xfb_layout(code: bytes) -> XfbLayout | None:
    """The module's capture layout, or None when it declares no ``Xfb`` execution mode."""
    words = _words(code)
    names: dict[int, str] = {}
    decor: dict[int, dict[int, int]] = {}
    types: dict[int, tuple] = {}
    consts: dict[int, int] = {}
    outputs: dict[int, int] = {}  # variable id -> pointee type
    xfb = False
    for _at, op, ops in _instructions(words):
        if op == _OP_EXECUTION_MODE and len(ops) >= 2 and ops[1] == _EXEC_MODE_XFB:
            xfb = True
        elif op == _OP_NAME:
            names[ops[0]] = _string(ops[1:])
        elif op == _OP_DECORATE and len(ops) >= 3:
            decor.setdefault(ops[0], {})[ops[1]] = ops[2]
        elif op in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
            types[ops[0]] = ("scalar", ops[1] // 32)
        elif op == _OP_TYPE_VECTOR:
            types[ops[0]] = ("vector", ops[1], ops[2])
        elif op == _OP_TYPE_ARRAY:
            types[ops[0]] = ("array", ops[1], ops[2])
        elif op == _OP_TYPE_POINTER:
            types[ops[0]] = ("pointer", ops[1], ops[2])
        elif op == _OP_CONSTANT and len(ops) >= 3:
            consts[ops[1]] = ops[2]
        elif op == _OP_VARIABLE and ops[2] == _STORAGE_OUTPUT:
            ptr = types.get(ops[0])
            if ptr is not None:
                outputs[ops[1]] = ptr[2]
    if not xfb:
        return None

    def comps(tid: int) -> int:
        t = types.get(tid)
        if t is None:
            raise SpirvError(f"captured output of type %{tid}: not a scalar / vector / array")
        if t[0] == "scalar":
            return t[1]
        if t[0] == "vector":
            return comps(t[1]) * t[2]
        if t[0] == "array":
            return comps(t[1]) * consts.get(t[2], 0)
        raise SpirvError(f"captured output of type %{tid} ({t[0]})")

    rows, strides = [], {}
    for var, pointee in outputs.items():
        d = decor.get(var, {})
        if _DEC_XFB_BUFFER not in d or _DEC_OFFSET not in d:
            continue  # an output the stage does not capture (or a block: not read here)
        buf = d[_DEC_XFB_BUFFER]
        if _DEC_XFB_STRIDE in d:
            strides[buf] = d[_DEC_XFB_STRIDE]
        rows.append(XfbVarying(names.get(var, f"_{var}"), buf, d[_DEC_OFFSET], comps(pointee),
                               d.get(_DEC_LOCATION, -1)))  # fmt: skip
    rows.sort(key=lambda v: (v.buffer, v.offset))
    for v in rows:
        if v.buffer not in strides:
            raise SpirvError(f"xfb buffer {v.buffer} has no XfbStride")
    return XfbLayout(tuple(rows), strides)


def strip_xfb(code: bytes) -> bytes:
    """The module without its capture: no ``Xfb`` execution mode, no ``TransformFeedback``
    capability, no ``XfbBuffer`` / ``XfbStride`` and no ``Offset`` on output variables
    (``Offset`` on block members, ``OpMemberDecorate``, is a block layout and stays)."""
    words = _words(code)
    outputs: set[int] = set()
    for _at, op, ops in _instructions(words):
        if op == _OP_VARIABLE and ops[2] == _STORAGE_OUTPUT:
            outputs.add(ops[1])
    out = words[:5]
    for at, op, ops in _instructions(words):
        count = words[at] >> 16
        drop = (
            (op == _OP_EXECUTION_MODE and len(ops) >= 2 and ops[1] == _EXEC_MODE_XFB)
            or (op == _OP_CAPABILITY and ops[0] == _CAP_TRANSFORM_FEEDBACK)
            or (op == _OP_DECORATE and len(ops) >= 2 and (ops[1] in _XFB_DECORATIONS
                                                          or (ops[1] == _DEC_OFFSET
                                                              and ops[0] in outputs)))
        )  # fmt: skip
        if not drop:
            out.extend(words[at : at + count])
    return struct.pack(f"<{len(out)}I", *out)
