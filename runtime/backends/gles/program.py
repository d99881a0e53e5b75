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
#: GL shader type of each ``Spirv[i]`` slot that GLES 3.0 can run (vertex, fragment).
_GL_STAGE = {0: GL.GL_VERTEX_SHADER, 4: GL.GL_FRAGMENT_SHADER}
#: reflection lists a GLES program of this backend cannot bind yet.
_UNBOUND = ("images", "push_constants")
DEFAULT_BLOCK = "gl_DefaultUniformBlock"

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
        self.samplers: list[tuple[int, str, int, str]] = []
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
                if b not in seen:
                    seen.add(b)
                    self.storage.append((str(e.get("name", "")), b))
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
                  what: str) -> GlProgram:  # fmt: skip
    """Translate, compile and link; refuse by name (nothing left behind on refusal)."""
    refl = load_reflection(what, reflection)  # an object of rows, bounded depth
    GlProgram(0, refl)  # the reflection's rows are readable (refused by name otherwise)
    unbound = [k for k in _UNBOUND if refl.get(k)]
    if unbound:
        raise DriverRefused(f"{what}.Reflection", f"program declares {', '.join(unbound)}; "
                            "the gles backend binds uniforms, uniform / storage blocks and samplers only")  # fmt: skip
    missing = [i for i in stages if i not in _GL_STAGE]
    if missing or set(_GL_STAGE) - set(stages):
        raise DriverRefused(f"{what}.StageMask", f"stages {sorted(stages)}: gles runs exactly "
                            f"a vertex and a fragment stage ({sorted(_GL_STAGE)})")  # fmt: skip
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
    out.base_instance_loc = int(gl.glGetUniformLocation(prog, "SPIRV_Cross_BaseInstance"))
    return out
