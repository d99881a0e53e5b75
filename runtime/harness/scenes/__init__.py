"""Scenes: short GL-like programs written against :class:`~mgpipe.runtime.client.api.Client`.

:data:`SCENES` maps a scene name to its :class:`Scene` (the program, its default
repetition count and its one-line description); :mod:`..runner` runs one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...client.api import Client
from . import answers, compute, pixel_draw, pixel_state, render
from .core import blend_toggle, clear_present, readback, viewport_churn
from .kit import Image, Probe

__all__ = ["SCENES", "PIXEL_SCENES", "RENDER_SCENES", "COMPUTE_SCENES", "ANSWER_SCENES", "GROUPS",
           "scene_names", "Scene", "Image", "Probe"]


@dataclass(frozen=True)
class Scene:
    name: str
    run: Callable[[Client, int], Any]  # a pixel scene returns its read-back images
    default_n: int
    doc: str
    width: int = 640
    height: int = 480
    #: n -> the pixels the images must show, from first principles (pixel scenes only)
    probes: Callable[[int], list[Probe]] | None = None


def _pixel(name: str, module: Any, fn: str, default_n: int = 1) -> Scene:
    run = getattr(module, fn)
    size = getattr(module, "SIZE", 64)
    return Scene(name, run, default_n, (run.__doc__ or "").split("\n")[0], size, size,
                 getattr(module, f"probes_{fn}"))  # fmt: skip


#: The pixel scenes (any backend that renders runs them; probes checked by the tests).
PIXEL_SCENES: tuple[Scene, ...] = (
    _pixel("clears", pixel_state, "clears"),
    _pixel("blend", pixel_state, "blend"),
    _pixel("depth", pixel_state, "depth"),
    _pixel("stencil", pixel_state, "stencil"),
    _pixel("cull", pixel_state, "cull"),
    _pixel("scissor", pixel_state, "scissor"),
    _pixel("viewports", pixel_draw, "viewport_churn", 8),
    _pixel("color-mask", pixel_draw, "color_mask"),
    _pixel("polygon-offset", pixel_draw, "polygon_offset"),
    _pixel("restart-strip", pixel_draw, "restart_strip"),
    _pixel("instanced", pixel_draw, "instanced"),
    _pixel("texture-upload", pixel_draw, "texture_upload"),
    _pixel("blaze3d-frame", pixel_draw, "blaze3d_frame", 64),
)


SCENES: dict[str, Scene] = {
    s.name: s
    for s in (
        Scene("blend-toggle", blend_toggle, 100, blend_toggle.__doc__ or ""),
        Scene("viewport-churn", viewport_churn, 1000, viewport_churn.__doc__ or ""),
        Scene("clear-present", clear_present, 8, clear_present.__doc__ or ""),
        Scene("readback", readback, 4, readback.__doc__ or ""),
    )
}
SCENES.update((s.name, s) for s in PIXEL_SCENES)


#: Issue 17's scenes (:mod:`.render`, :mod:`.minecraft`): textures of every target and
#: format, samplers, sRGB, MSAA, uniforms, integer textures, a Minecraft-like frame. Each
#: runs by name (``mgpipe run tex-rgba8``, ``mgpipe compare tex-rgba8``) and as the group
#: ``render`` (:data:`GROUPS`), which ``mgpipe compare all`` includes; they are not in the
#: iteration of :data:`SCENES` (``mgpipe run all``, and every per-scene suite that walks it):
#: tests/test_render_coverage.py runs them on both backends through monolith, inproc and
#: spawn (probes, goldens, compare).
RENDER_SCENES: dict[str, Scene] = {
    name: Scene(name, run, 2048 if name == "minecraft-frame" else 1,
                (run.__doc__ or "").split("\n")[0], render.SIZE, render.SIZE, probes)
    for name, (run, probes) in render.SCENE_FNS.items()
}
#: Issue 19's scenes (:mod:`.compute`): compute, images, atomic counters, transform
#: feedback, tessellation -- held the same way (by name, not in ``all``), by
#: tests/test_compute_coverage.py.
COMPUTE_SCENES: dict[str, Scene] = dict(
    (name, Scene(name, run, 1, (run.__doc__ or "").split("\n")[0], compute.SIZE, compute.SIZE,
                 probes))
    for name, (run, probes) in compute.SCENE_FNS.items())  # fmt: skip


#: Issue 18's scenes (:mod:`.answers`): fences, queries, readbacks, copies, GL errors,
#: persistent maps; found by name like the render scenes, checked by
#: tests/test_answers_scenes.py (each appends its checks to ``client.answer_checks``).
ANSWER_SCENES: dict[str, Scene] = {
    name: Scene(name, run, 1, (run.__doc__ or "").split("\n")[0], answers.SIZE, answers.SIZE)
    for name, run in answers.ANSWER_FNS.items()
}


class _SceneTable(dict):
    """:data:`SCENES`: iterating gives the established scenes (``all``); a name of
    :data:`RENDER_SCENES` is found too (``SCENES["tex-rgba8"]``, ``"tex-rgba8" in SCENES``)."""

    def __missing__(self, key: str) -> Scene:
        for table in (RENDER_SCENES, COMPUTE_SCENES, ANSWER_SCENES):
            if key in table:
                return table[key]
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return (dict.__contains__(self, key) or key in RENDER_SCENES or key in COMPUTE_SCENES
                or key in ANSWER_SCENES)  # fmt: skip

    def get(self, key, default=None):  # type: ignore[override]
        return self[key] if key in self else default


SCENES = _SceneTable(SCENES)


#: named groups of scenes a command takes in place of one scene's name
GROUPS: dict[str, tuple[str, ...]] = {"render": tuple(RENDER_SCENES),
                                       "compute": tuple(COMPUTE_SCENES)}


def scene_names(arg: str, *, include: tuple[str, ...] = ()) -> list[str] | None:
    """The scenes ``arg`` names: ``all`` (the established scenes, then each group of
    ``include`` in turn), a group of :data:`GROUPS`, or one scene; None: none of those."""
    if arg == "all":
        return list(SCENES) + [n for g in include for n in GROUPS[g]]
    if arg in GROUPS:
        return list(GROUPS[arg])
    return [arg] if arg in SCENES else None
