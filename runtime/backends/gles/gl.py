"""A counted dispatch over PyOpenGL's GLES 3 entry points.

``gl = CountedGL()``; ``gl.glEnable(GL.GL_BLEND)`` calls PyOpenGL's ``glEnable`` and adds
one to ``gl.counts["glEnable"]``. Each wrapper is made on first use and then kept as a
plain attribute, so a call costs one dict increment over PyOpenGL's own. Every GL call the
backend makes goes through one instance: ``gl.total()`` is the backend's GL call count.

``GL`` is PyOpenGL's GLES 3 namespace (constants: ``GL.GL_BLEND``).
"""

from __future__ import annotations

import ctypes
from collections import Counter
from collections.abc import Callable
from typing import Any

from . import egl as _egl  # noqa: F401  (sets the PyOpenGL platform before the import below)
from OpenGL import GLES3 as GL  # noqa: E402
from OpenGL import EGL  # noqa: E402

__all__ = ["GL", "CountedGL", "gl_string", "has_entry"]

_u, _b, _i = ctypes.c_uint, ctypes.c_ubyte, ctypes.c_int
_pu, _pu64 = ctypes.POINTER(_u), ctypes.POINTER(ctypes.c_uint64)
#: Entry points PyOpenGL's GLES3 module lacks (GLES 3.2, GL_EXT_disjoint_timer_query):
#: (GLES 3.2 base vertex draws too)
#: loaded with eglGetProcAddress (argument types from the Khronos prototypes; all return
#: void).
_PROC_ARGS: dict[str, tuple] = {
    "glEnablei": (_u, _u), "glDisablei": (_u, _u),
    "glColorMaski": (_u, _b, _b, _b, _b),
    "glBlendFuncSeparatei": (_u, _u, _u, _u, _u),
    "glBlendEquationSeparatei": (_u, _u, _u),
    "glDrawElementsBaseVertex": (_u, _i, _u, ctypes.c_void_p, _i),
    "glSamplerParameterIiv": (_u, _u, ctypes.POINTER(_i)),
    "glSamplerParameterIuiv": (_u, _u, _pu),
    "glDrawElementsInstancedBaseVertex": (_u, _i, _u, ctypes.c_void_p, _i, _i),
    "glPatchParameteri": (_u, _i),
    "glGenQueriesEXT": (_i, _pu), "glDeleteQueriesEXT": (_i, _pu),
    "glBeginQueryEXT": (_u, _u), "glEndQueryEXT": (_u,),
    "glGetQueryObjectuivEXT": (_u, _u, _pu), "glGetQueryObjectui64vEXT": (_u, _u, _pu64),
    "glQueryCounterEXT": (_u, _u), "glGetInteger64vEXT": (_u, ctypes.POINTER(ctypes.c_int64)),
}  # fmt: skip

_procs: dict[str, Callable[..., Any] | None] = {}


def _proc(name: str) -> Callable[..., Any] | None:
    if name not in _procs:
        addr = EGL.eglGetProcAddress(name.encode())
        ptr = ctypes.cast(addr, ctypes.c_void_p).value if addr else None
        _procs[name] = ctypes.CFUNCTYPE(None, *_PROC_ARGS[name])(ptr) if ptr else None
    return _procs[name]


def _lookup(name: str) -> Callable[..., Any]:
    if name in _PROC_ARGS:
        fn = _proc(name)
        if fn is None:
            raise AttributeError(f"the driver exports no {name}")
        return fn
    return getattr(GL, name)


def has_entry(name: str) -> bool:
    """Whether the driver exports ``name`` (asked with a context current)."""
    try:
        return bool(_lookup(name))
    except AttributeError:
        return False


class CountedGL:
    """Attribute ``glX`` -> counted call of PyOpenGL's ``glX``."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if not name.startswith("gl"):
            raise AttributeError(name)
        fn = _lookup(name)
        counts = self.counts

        def call(*args: Any) -> Any:
            counts[name] += 1
            return fn(*args)

        call.__name__ = name
        setattr(self, name, call)
        return call

    def total(self) -> int:
        return sum(self.counts.values())

    def snapshot(self) -> Counter[str]:
        return Counter(self.counts)


def gl_string(gl: CountedGL, name: int) -> str:
    """``glGetString`` as text (PyOpenGL's GLES binding returns an array object)."""
    raw = gl.glGetString(name)
    ptr = ctypes.cast(raw, ctypes.c_char_p) if raw is not None else None
    return (ptr.value or b"").decode() if ptr is not None else ""
