"""The scene runner: ``run_scene(name, backend="recorder", transport="monolith", n=None)``.

Builds stage -> backend -> applier -> client, runs the scene, closes the client (drain)
and returns a :class:`SceneResult`. Backends come from the registry
(:data:`~mgpipe.runtime.backends.registry.BACKENDS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..backends.registry import BACKENDS, UnknownBackend, make_backend
from ..client.api import Client
from ..server.applier import Applier
from ..wire.stage import StageSegment
from .scenes import SCENES, Scene

__all__ = ["BACKENDS", "SCENES", "Scene", "SceneResult", "run_scene", "UnknownBackend", "STAGE_CAPACITY"]

STAGE_CAPACITY = 4 << 20


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
) -> SceneResult:
    scene = SCENES[name]
    be = make_backend(backend)
    stage = StageSegment(STAGE_CAPACITY)
    applier = Applier(be, stage)
    client = Client(applier.apply, stage, transport=transport, whole_block=whole_block)
    with client:  # closes (drains) on success; on error the original error wins
        scene.run(client, scene.default_n if n is None else n)
    digest = be.recording_digest() if hasattr(be, "recording_digest") else None
    return SceneResult(name, client.draws, client.records, client.wire_bytes,
                       client.csos_minted, digest, client.staged_bytes, be, client)  # fmt: skip
