"""The scene runner: ``run_scene(name, backend="recorder", transport="monolith", n=None)``.

Builds stage -> backend -> applier -> client, runs the scene, closes the client (drain)
and returns a :class:`SceneResult`. Backends come from the registry
(:data:`~mgpipe.runtime.backends.registry.BACKENDS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..backends.registry import BACKENDS, UnknownBackend, make_backend
from ..client.api import Client
from ..server.applier import Applier
from ..wire.stage import StageSegment
from .scenes import SCENES, Scene
from .scenes.kit import capture as capture_image

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
) -> SceneResult:
    """``capture``: a scene that reads nothing back gets the default framebuffer read back
    after it ran (``mgpipe run --out`` writes one PNG per scene)."""
    scene = SCENES[name]
    be = make_backend(backend)
    stage = StageSegment(STAGE_CAPACITY)
    applier = Applier(be, stage)
    client = Client(applier.apply, stage, transport=transport, whole_block=whole_block,
                    width=scene.width, height=scene.height)  # fmt: skip
    try:
        with client:  # closes (drains) on success; on error the original error wins
            images = scene.run(client, scene.default_n if n is None else n) or []
            if capture and not images:
                client.bind_framebuffer(None)
                images = [capture_image(client, scene.width, scene.height)]
    finally:
        close = getattr(be, "close", None)  # a backend holding a driver context lets it go
        if close is not None:
            close()
    return SceneResult(name, client.draws, client.records, client.wire_bytes,
                       client.csos_minted, client.staged_bytes, be, client,
                       list(images))  # fmt: skip
