"""Backends by name: :data:`BACKENDS` (name -> factory of a backend table object).

A backend package registers itself by adding a row (``BACKENDS["gles"] = GlesBackend``).
A factory whose ``renders_pixels`` attribute is true makes a backend that draws real
pixels (``read_default_framebuffer()``, read-back images worth comparing);
:func:`renders_pixels` asks a row without making its backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .recorder import Recorder

__all__ = ["BACKENDS", "UnknownBackend", "make_backend", "renders_pixels"]


def _gles() -> Any:
    from .gles import GlesBackend  # imports PyOpenGL / EGL only when asked for

    return GlesBackend()


_gles.renders_pixels = True  # type: ignore[attr-defined]


def _vulkan() -> Any:
    from .vulkan.backend import VulkanBackend  # imports the Vulkan binding only when asked for

    return VulkanBackend()


_vulkan.renders_pixels = True  # type: ignore[attr-defined]


#: backend name -> factory of a backend table object.
BACKENDS: dict[str, Callable[[], Any]] = {"recorder": Recorder, "gles": _gles, "vulkan": _vulkan}


class UnknownBackend(ValueError):
    pass


def renders_pixels(name: str) -> bool:
    """Whether backend ``name`` draws pixels (False for an unknown name or the recorder)."""
    return bool(getattr(BACKENDS.get(name), "renders_pixels", False))


def make_backend(name: str) -> Any:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise UnknownBackend(
            f"unknown backend {name!r} (available: {', '.join(sorted(BACKENDS))})"
        ) from None
