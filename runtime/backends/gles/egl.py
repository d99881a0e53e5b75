"""A headless EGL display and GLES 3 context (no window, no pbuffer).

The display is found in this order, the first that gives a GLES 3 context wins:

1. ``eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, dev)`` for every *hardware* EGL
   device (one without ``EGL_MESA_device_software``): a vendor driver's headless path, e.g.
   NVIDIA's -- so a GPU is used where there is one, even beside Mesa;
2. ``eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)`` (Mesa with no window system:
   llvmpipe on a machine without a GPU);
3. the software EGL devices, then ``eglGetDisplay(EGL_DEFAULT_DISPLAY)``.

``MGPIPE_EGL_PLATFORM=surfaceless|device|default`` keeps only that kind of candidate.

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
#: restricts the display search to one kind: surfaceless | device | default
PLATFORM_ENV = "MGPIPE_EGL_PLATFORM"
#: the kinds of display candidate (what ``MGPIPE_EGL_PLATFORM`` may name)
PLATFORMS = ("surfaceless", "device", "default")


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


EGL_EXTENSIONS_TOKEN = 0x3055  # eglQueryDeviceStringEXT(dev, EGL_EXTENSIONS)
_SOFTWARE_DEVICE_EXT = "EGL_MESA_device_software"


def _proc(name: str, restype: object, *argtypes: object) -> object | None:
    addr = EGL.eglGetProcAddress(name.encode())
    ptr = ctypes.cast(addr, ctypes.c_void_p).value if addr else None
    return ctypes.CFUNCTYPE(restype, *argtypes)(ptr) if ptr else None


def _devices() -> list[tuple[int, bool]]:
    """(device handle, is software) of every EGL device (``EGL_EXT_device_enumeration``)."""
    query = _proc("eglQueryDevicesEXT", ctypes.c_uint, ctypes.c_int,
                  ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int))  # fmt: skip
    string = _proc("eglQueryDeviceStringEXT", ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)
    if query is None:
        return []
    devices, count = (ctypes.c_void_p * 16)(), ctypes.c_int()
    if not query(16, devices, ctypes.byref(count)):
        return []
    out = []
    for i in range(count.value):
        exts = (string(devices[i], EGL_EXTENSIONS_TOKEN) or b"").decode() if string else ""
        out.append((devices[i], _SOFTWARE_DEVICE_EXT in exts.split()))
    return out


def _find_display() -> _Display:
    """Hardware EGL devices first (a GPU, e.g. NVIDIA's headless path), then the Mesa
    surfaceless platform, then software devices, then the default display.
    ``MGPIPE_EGL_PLATFORM`` (surfaceless | device | default) keeps only that kind."""
    tried: list[str] = []
    ext = _client_extensions()
    devices = _devices() if "EGL_EXT_platform_device" in ext else []
    hardware = [(f"device{i}", d) for i, (d, soft) in enumerate(devices) if not soft]
    software = [(f"device{i}", d) for i, (d, soft) in enumerate(devices) if soft]

    def device(dev: object) -> object:
        return lambda: EGL.eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT,
                                                    ctypes.c_void_p(dev), None)  # fmt: skip

    candidates: list[tuple[str, object]] = [(n, device(d)) for n, d in hardware]
    if "EGL_MESA_platform_surfaceless" in ext:
        candidates.append(("surfaceless", lambda: EGL.eglGetPlatformDisplayEXT(
            EGL_PLATFORM_SURFACELESS_MESA, EGL.EGL_DEFAULT_DISPLAY, None)))  # fmt: skip
    candidates += [(n, device(d)) for n, d in software]
    candidates.append(("default", lambda: EGL.eglGetDisplay(EGL.EGL_DEFAULT_DISPLAY)))
    only = os.environ.get(PLATFORM_ENV, "")
    if only:
        candidates = [c for c in candidates if c[0].rstrip("0123456789") == only]
    for name, get in candidates:
        try:
            handle = get()  # type: ignore[operator]
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
    which = f" ({PLATFORM_ENV}={only})" if only else ""
    raise EglError(
        f"no EGL display gives a GLES 3 context{which}: " + ("; ".join(tried) or "none listed")
    )


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


_thread_state = threading.local()


class _ReleaseAtThreadExit:
    """Kept in a thread-local: when the thread ends, its current context is released there
    (a context current to a dead thread could never be destroyed)."""

    def __init__(self, display: object) -> None:
        self.display = display

    def __del__(self) -> None:
        try:
            EGL.eglMakeCurrent(self.display, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE,
                               EGL.EGL_NO_CONTEXT)  # fmt: skip
            EGL.eglReleaseThread()
        except Exception:  # interpreter shutdown: EGL may be gone already
            pass


class EglContext:
    """One GLES 3 context, current on the thread that created it."""

    def __init__(self) -> None:
        self._display = _get_display()
        # Another API of this process may have torn the display down since it was found
        # (NVIDIA's Vulkan driver terminates the shared EGL device display when its device
        # goes away: the next eglCreateContext then fails with EGL_NOT_INITIALIZED), so it
        # is initialised again here; on a display that is initialised this changes nothing.
        _initialise(self._display.handle)
        ctx = _new_context(self._display.handle)
        if ctx is None:
            raise EglError(
                f"eglCreateContext (GLES 3) failed on the {self._display.platform} display "
                f"(EGL error {EGL.eglGetError():#x})"
            )
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
        if getattr(_thread_state, "release", None) is None:
            _thread_state.release = _ReleaseAtThreadExit(d)

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
