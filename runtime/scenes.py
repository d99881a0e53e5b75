"""Scenes: short GL-like programs written against :class:`~.client.Client`, and the runner.

``run_scene(name, backend="recorder", transport="monolith", n=None)`` builds
stage -> backend -> applier -> client, runs the scene, closes the client (drain) and
returns a :class:`SceneResult`. Backends are a registry (:data:`BACKENDS`, name ->
factory) so the GLES / Vulkan backends plug in by adding a row.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .applier import Applier
from .backends.recorder import Recorder
from .client import GL_COLOR_BUFFER_BIT, GL_DEPTH_BUFFER_BIT, GL_TRIANGLES, Client
from .stage import StageSegment

__all__ = ["BACKENDS", "SCENES", "Scene", "SceneResult", "run_scene", "UnknownBackend"]

#: backend name -> factory of a backend table object.
BACKENDS: dict[str, Callable[[], Any]] = {"recorder": Recorder}

STAGE_CAPACITY = 4 << 20


class UnknownBackend(ValueError):
    pass


@dataclass(frozen=True)
class Scene:
    name: str
    run: Callable[[Client, int], None]
    default_n: int
    doc: str


@dataclass
class SceneResult:
    name: str
    draws: int
    records: int
    wire_bytes: int
    csos_minted: int
    recording_digest: str | None
    stage_bytes: int
    backend: Any
    client: Client
    lost: bool = False  # spawn: the device-lost latch was set
    transport_report: dict[str, Any] | None = None  # spawn: the server's Report

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "draws": self.draws, "records": self.records,
                "wire_bytes": self.wire_bytes, "csos_minted": self.csos_minted,
                "recording_digest": self.recording_digest,
                "stage_bytes": self.stage_bytes}  # fmt: skip


# -- shared setup ---------------------------------------------------------------
_TRIANGLE = struct.pack("<9f", -1, -1, 0, 1, -1, 0, 0, 1, 0)
_SPIRV_VS = b"\x03\x02\x23\x07" + b"mgpipe-scene-vs" + b"\0"
_SPIRV_FS = b"\x03\x02\x23\x07" + b"mgpipe-scene-fs" + b"\0"


def _setup(c: Client) -> None:
    """One triangle VBO, one program, attribute 0 -- what every draw scene shares."""
    vb = c.create_buffer(_TRIANGLE)
    prog = c.create_program({0: _SPIRV_VS, 4: _SPIRV_FS}, b'{"inputs":["pos"]}')
    c.use_program(prog)
    c.vertex_attrib_pointer(0, vb, 3, stride=12)
    c.viewport(0, 0, 640, 480)


# -- the scenes -------------------------------------------------------------------
def blend_toggle(c: Client, n: int) -> None:
    """Blaze3D batch: enable blend / draw / disable blend / draw, n times."""
    _setup(c)
    c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
    for _ in range(n):
        c.enable("Blend")
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.disable("Blend")
        c.draw_arrays(GL_TRIANGLES, 0, 3)
    c.present()


def viewport_churn(c: Client, n: int) -> None:
    """n distinct glViewport changes, a draw after each (pipeline subset never moves)."""
    _setup(c)
    for i in range(n):
        c.viewport(i % 37, i // 37, 640 - i % 97, 480 - i % 89)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
    c.present()


def clear_present(c: Client, n: int) -> None:
    """n frames: a new clear colour, clear colour+depth, present."""
    for i in range(n):
        c.clear_color(i / max(n, 1), 0.25, 0.5, 1.0)
        c.clear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT)
        c.present()


def readback(c: Client, n: int) -> None:
    """Render into a texture-backed FBO n times; read back a corner each time; present."""
    _setup(c)
    tex = c.create_texture_2d(64, 64)
    fb = c.create_framebuffer()
    c.framebuffer_texture(fb, 0, tex)
    c.pixel_store(True, "Alignment", 1)
    for i in range(n):
        c.bind_framebuffer(fb)
        c.viewport(0, 0, 64, 64)
        c.clear_color(0.0, i / max(n, 1), 0.0, 1.0)
        c.clear()
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.read_pixels(0, 0, 8, 8)
        c.bind_framebuffer(None)
        c.viewport(0, 0, 640, 480)
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.present()
    c.delete_framebuffer(fb)
    c.delete_texture(tex)


SCENES: dict[str, Scene] = {
    s.name: s
    for s in (
        Scene("blend-toggle", blend_toggle, 100, blend_toggle.__doc__ or ""),
        Scene("viewport-churn", viewport_churn, 1000, viewport_churn.__doc__ or ""),
        Scene("clear-present", clear_present, 8, clear_present.__doc__ or ""),
        Scene("readback", readback, 4, readback.__doc__ or ""),
    )
}


def make_backend(name: str) -> Any:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise UnknownBackend(
            f"unknown backend {name!r} (available: {', '.join(sorted(BACKENDS))})"
        ) from None


def run_scene(
    name: str,
    backend: str = "recorder",
    transport: str = "monolith",
    n: int | None = None,
    *,
    whole_block: bool = False,
    recording: bool = False,
) -> SceneResult:
    """Run one scene. ``recording``: a spawn run brings the backend's recording back
    (monolith / inproc backends live here and always have it)."""
    scene = SCENES[name]
    if transport == "spawn":
        return _run_spawned(scene, backend, n, whole_block, recording)
    be = make_backend(backend)
    stage = StageSegment(STAGE_CAPACITY)
    applier = Applier(be, stage)
    client = Client(applier.apply, stage, transport=transport, whole_block=whole_block)
    with client:  # closes (drains) on success; on error the original error wins
        scene.run(client, scene.default_n if n is None else n)
    digest = be.recording_digest() if hasattr(be, "recording_digest") else None
    return SceneResult(name, client.draws, client.records, client.wire_bytes,
                       client.csos_minted, digest, client.staged_bytes, be, client)  # fmt: skip


def _run_spawned(scene: Scene, backend: str, n: int | None, whole_block: bool,
                 recording: bool) -> SceneResult:  # fmt: skip
    """The scene with the applier and backend in a server process (``spawn``)."""
    from .spawn.transport import SpawnTransport

    if backend not in BACKENDS:
        make_backend(backend)  # raises UnknownBackend, naming the registered ones
    t = SpawnTransport(backend, stage_capacity=STAGE_CAPACITY)
    client = Client(None, t.stage, transport=t, whole_block=whole_block)  # type: ignore[arg-type]
    try:
        scene.run(client, scene.default_n if n is None else n)
        client.tr.cso.release_all()
    finally:
        report = t.close(report=recording)
    summary = (report or {}).get("summary", {})
    remote = Recorder.from_json(summary["recording"]) if "recording" in summary else None
    return SceneResult(scene.name, client.draws, client.records, client.wire_bytes,
                       client.csos_minted, summary.get("recording_digest"), client.staged_bytes,
                       remote, client, lost=t.lost, transport_report=report)  # fmt: skip
