"""A headless EGL display and GLES 3 context (no window, no pbuffer).

The display is found in this order, the first that initialises wins:

1. ``eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)`` (Mesa: llvmpipe, or a GPU
   driver, with no window system);
2. ``eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, device 0)`` (the vendor drivers'
   headless path, e.g. NVIDIA);
3. ``eglGetDisplay(EGL_DEFAULT_DISPLAY)``.

The context is made current with no surface (``EGL_KHR_surfaceless_context``); the
backend renders into its own framebuffer objects, so no config is asked for a surface.
None of these values ever leaves this module except as the opaque :class:`EglContext`.

PyOpenGL reads ``PYOPENGL_PLATFORM`` when it is first imported: this module sets it to
``egl`` (unless the caller chose one) before importing it, and turns PyOpenGL's
per-call ``glGetError`` off (the backend checks errors itself where a driver may refuse).
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field

os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

import OpenGL  # noqa: E402
from OpenGL import EGL  # noqa: E402  (EGL's own bindings need PyOpenGL's error checker)

# GL entry points are bound at their first import (in .gl): no per-call glGetError there.
from OpenGL import _configflags  # noqa: E402

OpenGL.ERROR_CHECKING = _configflags.ERROR_CHECKING = False
OpenGL.ERROR_LOGGING = _configflags.ERROR_LOGGING = False

__all__ = ["EglError", "EglContext", "display_info", "create_context"]

# Extension tokens PyOpenGL's EGL module does not name (EGL registry values).
EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
EGL_PLATFORM_DEVICE_EXT = 0x313F
EGL_CONTEXT_MAJOR_VERSION = 0x3098
EGL_CONTEXT_MINOR_VERSION = 0x30FB
EGL_OPENGL_ES3_BIT = 0x0040


class EglError(RuntimeError):
    """No display initialised, or no GLES 3 context could be made current."""


@dataclass
class _Display:
    handle: object
    platform: str
    version: tuple[int, int]
    vendor: str
    tried: list[str] = field(default_factory=list)


_lock = threading.Lock()
_display: _Display | None = None


def _client_extensions() -> set[str]:
    raw = EGL.eglQueryString(EGL.EGL_NO_DISPLAY, EGL.EGL_EXTENSIONS)
    return set((raw or b"").decode().split())


def _initialise(handle: object) -> tuple[int, int] | None:
    if not handle:
        return None
    major, minor = EGL.EGLint(), EGL.EGLint()
    try:
        ok = EGL.eglInitialize(handle, ctypes.pointer(major), ctypes.pointer(minor))
    except EGL.EGLError:
        return None
    return (major.value, minor.value) if ok else None


def _devices() -> list[object]:
    try:
        query = EGL.eglQueryDevicesEXT
    except AttributeError:
        return []
    count = EGL.EGLint()
    devices = (EGL.EGLDeviceEXT * 8)()
    try:
        if not query(8, devices, ctypes.pointer(count)):
            return []
    except Exception:
        return []
    return [devices[i] for i in range(count.value)]


def _find_display() -> _Display:
    tried: list[str] = []
    ext = _client_extensions()
    candidates: list[tuple[str, object]] = []
    if "EGL_MESA_platform_surfaceless" in ext:
        candidates.append(("surfaceless", lambda: EGL.eglGetPlatformDisplayEXT(
            EGL_PLATFORM_SURFACELESS_MESA, EGL.EGL_DEFAULT_DISPLAY, None)))  # fmt: skip
    if "EGL_EXT_platform_device" in ext:
        for i, dev in enumerate(_devices()):
            candidates.append((f"device{i}", lambda dev=dev: EGL.eglGetPlatformDisplayEXT(
                EGL_PLATFORM_DEVICE_EXT, dev, None)))  # fmt: skip
    candidates.append(("default", lambda: EGL.eglGetDisplay(EGL.EGL_DEFAULT_DISPLAY)))
    for name, get in candidates:
        try:
            handle = get()
        except Exception as exc:  # a platform the loader lists but cannot open
            tried.append(f"{name}: {exc.__class__.__name__}")
            continue
        version = _initialise(handle)
        if version is None:
            tried.append(f"{name}: eglInitialize failed")
            continue
        if not _can_make_es3(handle):
            tried.append(f"{name}: no GLES 3 surfaceless context")
            continue
        vendor = (EGL.eglQueryString(handle, EGL.EGL_VENDOR) or b"").decode()
        return _Display(handle, name, version, vendor, tried)
    raise EglError("no EGL display gives a GLES 3 context (" + "; ".join(tried) + ")")


def _config(handle: object) -> object | None:
    attrs = (EGL.EGLint * 5)(EGL.EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
                             EGL.EGL_SURFACE_TYPE, 0, EGL.EGL_NONE)  # fmt: skip
    cfg, n = EGL.EGLConfig(), EGL.EGLint()
    if not EGL.eglChooseConfig(handle, attrs, ctypes.pointer(cfg), 1, ctypes.pointer(n)):
        return None
    return cfg if n.value else None


def _new_context(handle: object) -> object | None:
    if not EGL.eglBindAPI(EGL.EGL_OPENGL_ES_API):
        return None
    attrs = (EGL.EGLint * 5)(EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                             EGL.EGL_NONE)  # fmt: skip
    cfg = _config(handle)
    try:
        ctx = EGL.eglCreateContext(handle, cfg, EGL.EGL_NO_CONTEXT, attrs)
    except EGL.EGLError:
        return None
    return ctx if ctx else None


def _can_make_es3(handle: object) -> bool:
    ctx = _new_context(handle)
    if ctx is None:
        return False
    EGL.eglDestroyContext(handle, ctx)
    return True


def display_info() -> dict[str, object]:
    """Which platform gave the display, its EGL version and vendor (for stats)."""
    d = _get_display()
    return {"platform": d.platform, "egl": f"{d.version[0]}.{d.version[1]}", "vendor": d.vendor}


def _get_display() -> _Display:
    global _display
    with _lock:
        if _display is None:
            _display = _find_display()
        return _display


class EglContext:
    """One GLES 3 context, current on the thread that created it."""

    def __init__(self) -> None:
        self._display = _get_display()
        ctx = _new_context(self._display.handle)
        if ctx is None:
            raise EglError(f"eglCreateContext (GLES 3) failed on the {self._display.platform} display")
        self._ctx = ctx
        self.thread = threading.get_ident()
        self.make_current()

    @property
    def platform(self) -> str:
        return self._display.platform

    def make_current(self) -> None:
        d = self._display.handle
        if not EGL.eglMakeCurrent(d, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, self._ctx):
            raise EglError("eglMakeCurrent (surfaceless) failed")
        self.thread = threading.get_ident()

    def destroy(self) -> None:
        """Release (on the owning thread) and destroy the context; idempotent."""
        if self._ctx is None:
            return
        d = self._display.handle
        if threading.get_ident() == self.thread:
            EGL.eglMakeCurrent(d, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)
        EGL.eglDestroyContext(d, self._ctx)
        self._ctx = None


def create_context() -> EglContext:
    return EglContext()
