"""Scenes: short GL-like programs written against :class:`~mgpipe.runtime.client.api.Client`.

:data:`SCENES` maps a scene name to its :class:`Scene` (the program, its default
repetition count and its one-line description); :mod:`..runner` runs one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...client.api import Client
from .core import blend_toggle, clear_present, readback, viewport_churn

__all__ = ["SCENES", "Scene"]


@dataclass(frozen=True)
class Scene:
    name: str
    run: Callable[[Client, int], None]
    default_n: int
    doc: str


SCENES: dict[str, Scene] = {
    s.name: s
    for s in (
        Scene("blend-toggle", blend_toggle, 100, blend_toggle.__doc__ or ""),
        Scene("viewport-churn", viewport_churn, 1000, viewport_churn.__doc__ or ""),
        Scene("clear-present", clear_present, 8, clear_present.__doc__ or ""),
        Scene("readback", readback, 4, readback.__doc__ or ""),
    )
}
