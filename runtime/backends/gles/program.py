"""Shader state: SPIR-V + reflection in, a linked GLES program out (seed 001 §7).

``CreateShaderState`` carries one SPIR-V blob per stage (``StageMask`` bit *i* =
``Spirv[i]``, GL stage order) and a reflection record (JSON). Each stage is turned into
ESSL 3.00 by SPIRV-Cross (``spirv-cross --es --version 300``); the text is memoised by the
SPIR-V bytes' xxh64 for the life of the process (a second program from the same SPIR-V
spawns nothing), and the linked program is kept on the shader handle's object.

A stage SPIRV-Cross refuses, a compile or a link failure is
``Fatal{DriverRefused, "CreateShaderState.<Spirv|Compile|Link>"}`` with the tool's message
or the driver's info log attached; the record's GL objects are deleted first.
"""

from __future__ import annotations

import shutil
import subprocess
import threading

import numpy as np
import xxhash

from ..limits import load_reflection
from .errors import DriverRefused
from .gl import GL, CountedGL

__all__ = ["GlProgram", "spirv_to_essl", "build_program", "ESSL_VERSION"]

ESSL_VERSION = "310"  # explicit binding = N on blocks and samplers (ESSL 3.10)
#: GL shader type of each ``Spirv[i]`` slot (GL stage order; GLES 3.2's token values for
#: the stages PyOpenGL's GLES3 module does not name).
_GL_STAGE = {0: int(GL.GL_VERTEX_SHADER), 1: 0x8E88, 2: 0x8E87, 3: 0x8DD9,
             4: int(GL.GL_FRAGMENT_SHADER), 5: int(GL.GL_COMPUTE_SHADER)}  # fmt: skip
#: the stage sets a GLES program links: compute alone, or vertex + fragment with an
#: optional tessellation pair and an optional geometry stage
_STAGE_SETS = ({5}, {0, 4}, {0, 1, 2, 4}, {0, 3, 4}, {0, 1, 2, 3, 4})
#: stages that need GLES 3.2 or the named extension
_STAGE_EXT = {1: "GL_EXT_tessellation_shader", 2: "GL_EXT_tessellation_shader",
              3: "GL_EXT_geometry_shader"}  # fmt: skip
#: reflection lists a GLES program of this backend cannot bind yet.
_UNBOUND = ("push_constants",)
DEFAULT_BLOCK = "gl_DefaultUniformBlock"
#: glslang's relaxed rules make an ``atomic_uint`` at GL binding N a storage block of this
#: name + N (its own SSBO binding is the row's): bound from the AtomicCounter class
ATOMIC_BLOCK = "gl_AtomicCounterBlock_"
#: ESSL image format qualifiers -> GL internal formats (GL ES 3.1 Table 8.27)
IMAGE_FORMATS = {"rgba32f": 0x8814, "rgba16f": 0x881A, "r32f": 0x822E, "rgba8": 0x8058,
                 "rgba8_snorm": 0x8F97, "rgba32ui": 0x8D70, "rgba16ui": 0x8D76,
                 "rgba8ui": 0x8D7C, "r32ui": 0x8236, "rgba32i": 0x8D82, "rgba16i": 0x8D88,
                 "rgba8i": 0x8D8E, "r32i": 0x8235}  # fmt: skip

_essl: dict[str, str] = {}
_essl_lock = threading.Lock()


class GlProgram:
    """A linked program and what it binds, from its reflection record: ``default``
    (the default block's binding and size, or None), ``blocks`` (uniform blocks: (index,
    name, binding) -- index = the first reflection row naming that binding, what
    ``SetProgramBindings``' block bindings run over), ``storage`` ((name, binding)),
    ``samplers`` ((location, name, binding, glsl type): the location is the client's --
    the default block's members, then the samplers, names once each, in reflection
    order)."""

    def __init__(self, name: int, reflection: dict) -> None:
        self.name = name
        self.reflection = reflection
        self.default: tuple[int, int] | None = None
        self.blocks: list[tuple[int, str, int]] = []
        self.storage: list[tuple[str, int]] = []
        self.atomic: list[tuple[str, int, int]] = []  # (name, GL counter binding, SSBO binding)
        self.images: list[tuple[str, int, int]] = []  # (name, unit, GL format)
        self.samplers: list[tuple[int, str, int, str]] = []
        self.compute = False
        self.xfb = None  # the capture layout (spirv_xfb.XfbLayout) or None
        #: GLES's capture mode: interleaved (one buffer) or separate (one varying a buffer)
        self.xfb_mode = 0
        self.base_instance_loc = -1  # SPIRV-Cross's SPIRV_Cross_BaseInstance uniform
        self.base_instance = 0
        self.globals_version = -1  # the default-block bytes the UBO holds
        self.ubo = 0  # the default block's GL buffer
        self.ubo_size = 0
        seen: set[int] = set()
        try:
            for pos, e in enumerate(reflection.get("uniforms", ())):
                b = int(e["binding"])
                if b in seen:
                    continue
                seen.add(b)
                if str(e.get("name")) == DEFAULT_BLOCK:
                    self.default = (b, int(e.get("block_size", 0)))
                else:
                    self.blocks.append((pos, str(e.get("name", "")), b))
            seen = set()
            for e in reflection.get("storage", ()):
                b = int(e["binding"])
                name = str(e.get("name", ""))
                if b not in seen:
                    seen.add(b)
                    if name.startswith(ATOMIC_BLOCK):
                        self.atomic.append((name, int(name[len(ATOMIC_BLOCK):]), b))
                    else:
                        self.storage.append((name, b))
            seen = set()
            for e in reflection.get("images", ()):
                b = int(e["binding"])
                if b in seen:
                    continue
                seen.add(b)
                fmt = IMAGE_FORMATS.get(str(e.get("format", "")))
                if fmt is None:
                    raise DriverRefused("CreateShaderState.Reflection", f"image {e.get('name')!r}: "
                                        f"format {e.get('format')!r} is no ESSL image format")  # fmt: skip
                self.images.append((str(e.get("name", "")), b, fmt))
            locations: dict[str, int] = {}
            for e in list(reflection.get("default_block", ())) + list(
                reflection.get("samplers", ())
            ):
                locations.setdefault(str(e.get("name", "")), len(locations))
            seen = set()
            for pos, e in enumerate(reflection.get("samplers", ())):
                b = int(e["binding"])
                if b in seen:
                    continue
                seen.add(b)
                if e.get("array") and int(np.prod(e["array"])) > 1:
                    raise DriverRefused("CreateShaderState.Reflection",
                                        f"sampler array {e.get('name')!r}")  # fmt: skip
                name = str(e.get("name", ""))
                self.samplers.append((locations.get(name, pos), name, b, str(e.get("type", ""))))
        except (KeyError, TypeError, ValueError):
            raise DriverRefused(
                "CreateShaderState.Reflection",
                "a uniforms / storage / samplers row without a binding",
            ) from None

    @property
    def binds(self) -> bool:
        return bool(
            self.default
            or self.blocks
            or self.storage
            or self.samplers
            or self.atomic
            or self.images
            or self.base_instance_loc >= 0
        )


def spirv_to_essl(spirv: bytes, what: str) -> str:
    key = xxhash.xxh64_hexdigest(spirv)
    with _essl_lock:
        hit = _essl.get(key)
    if hit is not None:
        return hit
    tool = shutil.which("spirv-cross")
    if tool is None:
        raise DriverRefused(f"{what}.Spirv", "spirv-cross not found on PATH (Debian: spirv-cross)")
    res = subprocess.run([tool, "-", "--es", "--version", ESSL_VERSION], input=spirv,
                         capture_output=True)  # fmt: skip
    if res.returncode != 0:
        raise DriverRefused(f"{what}.Spirv", res.stderr.decode(errors="replace").strip())
    text = res.stdout.decode()
    with _essl_lock:
        _essl[key] = text
    return text


def _log(gl: CountedGL, getter: str, name: int) -> str:
    raw = getattr(gl, getter)(name)
    return (raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw or "")).strip()


def build_program(gl: CountedGL, stages: dict[int, bytes], reflection: bytes,
                  what: str, *, version: int = 30, exts: frozenset[str] = frozenset()) -> GlProgram:  # fmt: skip
    """Translate, compile and link; refuse by name (nothing left behind on refusal).
    ``version`` is the context's GLES version (32 = 3.2), ``exts`` its extensions: a stage
    the driver cannot run is refused before any GL object is made. A capturing stage
    (SPIR-V ``Xfb``) has its decorations read and stripped (:mod:`..spirv_xfb`) and its
    varyings named to ``glTransformFeedbackVaryings`` before the link."""
    refl = load_reflection(what, reflection)  # an object of rows, bounded depth
    GlProgram(0, refl)  # the reflection's rows are readable (refused by name otherwise)
    unbound = [k for k in _UNBOUND if refl.get(k)]
    if unbound:
        raise DriverRefused(f"{what}.Reflection", f"program declares {', '.join(unbound)}; "
                            "the gles backend binds uniforms, uniform / storage blocks and samplers only")  # fmt: skip
    if set(stages) not in _STAGE_SETS:
        raise DriverRefused(f"{what}.StageMask", f"stages {sorted(stages)}: a GLES program links "
                            f"one of {[sorted(s) for s in _STAGE_SETS]}")  # fmt: skip
    if 5 in stages and version < 31:
        raise DriverRefused(f"{what}.StageMask", "a compute stage needs GLES 3.1")
    for slot in stages:
        ext = _STAGE_EXT.get(slot)
        if ext and version < 32 and ext not in exts:
            raise DriverRefused(f"{what}.StageMask", f"stage {slot}: the driver has neither "
                                f"GLES 3.2 nor {ext}")  # fmt: skip
    from ..spirv_xfb import SpirvError, strip_xfb, xfb_layout

    layout = None
    try:
        for slot in (3, 2, 0):  # the last pre-rasterisation stage captures
            if slot in stages:
                layout = xfb_layout(stages[slot])
                if layout is not None:
                    stages = dict(stages)
                    stages[slot] = strip_xfb(stages[slot])
                break
    except SpirvError as exc:
        raise DriverRefused(f"{what}.Spirv", f"transform feedback layout: {exc}") from None
    names: list[str] = []
    xfb_mode = int(GL.GL_INTERLEAVED_ATTRIBS)
    if layout is not None:
        per = {b: [v for v in layout.varyings if v.buffer == b] for b in layout.strides}
        if len(per) > 1:
            if any(len(vs) != 1 for vs in per.values()):
                raise DriverRefused(f"{what}.Xfb", f"captures {[len(per[b]) for b in sorted(per)]} "
                                    f"varyings into buffers {sorted(per)}: GLES interleaves into "
                                    "one buffer or separates one varying per buffer "
                                    "(no gl_NextBuffer)")  # fmt: skip
            xfb_mode = int(GL.GL_SEPARATE_ATTRIBS)
        names = [v.name for b in sorted(per) for v in per[b]]
    sources = {slot: spirv_to_essl(code, what) for slot, code in stages.items()}
    shaders: list[int] = []
    prog = 0
    try:
        for slot, text in sorted(sources.items()):
            sh = int(gl.glCreateShader(_GL_STAGE[slot]))
            shaders.append(sh)
            gl.glShaderSource(sh, text)
            gl.glCompileShader(sh)
            if not gl.glGetShaderiv(sh, GL.GL_COMPILE_STATUS):
                raise DriverRefused(f"{what}.Compile", _log(gl, "glGetShaderInfoLog", sh))
        prog = int(gl.glCreateProgram())
        for sh in shaders:
            gl.glAttachShader(prog, sh)
        if names:
            gl.glTransformFeedbackVaryings(prog, len(names), _c_strings(names), xfb_mode)
        gl.glLinkProgram(prog)
        if not gl.glGetProgramiv(prog, GL.GL_LINK_STATUS):
            raise DriverRefused(f"{what}.Link", _log(gl, "glGetProgramInfoLog", prog))
    except DriverRefused:
        if prog:
            gl.glDeleteProgram(prog)
        raise
    finally:
        for sh in shaders:
            gl.glDeleteShader(sh)
    out = GlProgram(prog, refl)
    out.compute = 5 in stages
    if layout is not None:
        out.xfb = layout
        out.xfb_mode = xfb_mode
    out.base_instance_loc = int(gl.glGetUniformLocation(prog, "SPIRV_Cross_BaseInstance"))
    return out


def _c_strings(names: list[str]) -> object:
    """A ``const GLchar* const*`` of ``names`` (kept alive by the caller's expression)."""
    import ctypes

    arr = (ctypes.c_char_p * len(names))(*(n.encode() for n in names))
    return ctypes.cast(arr, ctypes.POINTER(ctypes.POINTER(ctypes.c_char)))
