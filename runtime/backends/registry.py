"""Backends by name: :data:`BACKENDS` (name -> factory of a backend table object).

A backend package registers itself by adding a row (``BACKENDS["gles"] = GlesBackend``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .recorder import Recorder

__all__ = ["BACKENDS", "UnknownBackend", "make_backend"]

def _gles() -> Any:
    from .gles import GlesBackend  # imports PyOpenGL / EGL only when asked for

    return GlesBackend()


#: backend name -> factory of a backend table object.
BACKENDS: dict[str, Callable[[], Any]] = {"recorder": Recorder, "gles": _gles}


class UnknownBackend(ValueError):
    pass


def make_backend(name: str) -> Any:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise UnknownBackend(
            f"unknown backend {name!r} (available: {', '.join(sorted(BACKENDS))})"
        ) from None
