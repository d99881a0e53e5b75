"""The scene runner: ``run_scene(name, backend="recorder", transport="monolith", n=None)``.

Builds stage -> backend -> applier -> client, runs the scene, closes the client (drain)
and returns a :class:`SceneResult`. Backends come from the registry
(:data:`~mgpipe.runtime.backends.registry.BACKENDS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..backends.recorder import Recorder
from ..backends.registry import BACKENDS, UnknownBackend, make_backend, renders_pixels
from ..client.api import Client
from ..server.applier import Applier
from ..wire.stage import StageSegment
from .scenes import SCENES, Scene
from .scenes.kit import Image

__all__ = ["BACKENDS", "SCENES", "Scene", "SceneResult", "run_scene", "UnknownBackend", "STAGE_CAPACITY"]

STAGE_CAPACITY = 4 << 20


@dataclass
class SceneResult:
    name: str
    draws: int
    records: int
    wire_bytes: int
    csos_minted: int
    stage_bytes: int
    backend: Any
    client: Client
    images: list = field(default_factory=list)  # a pixel scene's read-back images
    lost: bool = False  # spawn: the device-lost latch was set
    transport_report: dict[str, Any] | None = None  # spawn: the server's Report

    @property
    def recording_digest(self) -> str | None:
        """The backend's recording digest (built on demand: JSON is never on a hot path)."""
        digest = getattr(self.backend, "recording_digest", None)
        return digest() if digest is not None else None

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "draws": self.draws, "records": self.records,
                "wire_bytes": self.wire_bytes, "csos_minted": self.csos_minted,
                "recording_digest": self.recording_digest,
                "stage_bytes": self.stage_bytes}  # fmt: skip


def run_scene(
    name: str,
    backend: str = "recorder",
    transport: str = "monolith",
    n: int | None = None,
    *,
    whole_block: bool = False,
    capture: bool = False,
    recording: bool = False,
    spawn_config: dict[str, Any] | None = None,
) -> SceneResult:
    """Run one scene. ``capture``: on a backend that renders pixels, a scene that reads
    nothing back gets its default framebuffer read after it ran, outside the measured
    part -- after the client closed, through the backend's ``read_default_framebuffer()``
    (no record, no stage bytes, no driver call counted), so every number the scene
    reports is the same with or without it (``mgpipe run --out`` writes one PNG per scene);
    ``recording``: a spawn run brings the backend's recording back (monolith / inproc
    backends live here and always have it); ``spawn_config``: extra ``Hello.config``
    entries for the server process (``log``, ``tag``)."""
    scene = SCENES[name]
    if transport == "spawn":
        return _run_spawned(scene, backend, n, whole_block, recording, spawn_config, capture)
    be = make_backend(backend)
    stage = StageSegment(STAGE_CAPACITY)
    applier = Applier(be, stage)
    client = Client(applier.apply, stage, transport=transport, whole_block=whole_block,
                    width=scene.width, height=scene.height)  # fmt: skip
    try:
        with client:  # closes (drains) on success; on error the original error wins
            images = scene.run(client, scene.default_n if n is None else n) or []
        if capture and not images and renders_pixels(backend):
            images = _image(be.read_default_framebuffer())
    finally:
        close = getattr(be, "close", None)  # a backend holding a driver context lets it go
        if close is not None:
            close()
    return SceneResult(name, client.draws, client.records, client.wire_bytes,
                       client.csos_minted, client.staged_bytes, be, client,
                       list(images))  # fmt: skip


def _run_spawned(scene: Scene, backend: str, n: int | None, whole_block: bool,
                 recording: bool, config: dict[str, Any] | None,
                 capture: bool) -> SceneResult:  # fmt: skip
    """The scene with the applier and backend in a server process (``spawn``)."""
    from ..transport.spawn import SpawnTransport

    if backend not in BACKENDS:
        make_backend(backend)  # raises UnknownBackend, naming the registered ones
    config = dict(config or {})
    if capture and renders_pixels(backend):
        config["capture"] = True  # the server reads its default framebuffer after Close
    t = SpawnTransport(backend, stage_capacity=STAGE_CAPACITY, config=config)
    client = Client(None, t.stage, transport=t, whole_block=whole_block,  # type: ignore[arg-type]
                    width=scene.width, height=scene.height)  # fmt: skip
    try:
        images = scene.run(client, scene.default_n if n is None else n) or []
        client.tr.cso.release_all()
    except BaseException:  # Ctrl-C or an error: the server leaves without its report
        t.abandon()
        raise
    report = t.close(report=recording)
    summary = (report or {}).get("summary", {})
    shot = summary.get("capture")
    if shot and not images and not t.lost:  # the server left the pixels in the stage segment
        w, h = int(shot[0]), int(shot[1])
        images = [Image(w, h, t.stage_bytes(w * h * 4))]
    return SceneResult(scene.name, client.draws, client.records, client.wire_bytes,
                       client.csos_minted, client.staged_bytes, RemoteBackend(summary), client,
                       list(images), lost=t.lost,
                       transport_report=report)  # fmt: skip


def _image(shot: tuple[int, int, bytes] | None) -> list[Image]:
    return [] if shot is None else [Image(*shot)]


class RemoteBackend:
    """The client's copy of what a spawned backend reported about itself at ``Close``:
    ``recording_digest()``, ``stats()``, ``info()``, ``to_json()`` -- each only where the
    backend in the server process has it."""

    def __init__(self, summary: dict[str, Any]) -> None:
        for key in ("recording_digest", "stats", "info"):
            if key in summary:
                setattr(self, key, lambda v=summary[key]: v)
        if "recording" in summary:
            self.recording = Recorder.from_json(summary["recording"])  # digest-checked
            self.to_json = self.recording.to_json
