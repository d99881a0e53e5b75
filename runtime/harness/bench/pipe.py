"""The bench's one door into the runtime: every runtime name the bench uses, imported once.

The bench drives the runtime exactly as a user does (client API, applier, backend
registry, transport list); nothing here re-implements a runtime piece.
"""

from __future__ import annotations

from ...backends.registry import BACKENDS, make_backend
from ...client.api import TRANSPORTS, Client
from ...client.cso_cache import CsoStats, RenderStateCsoCache
from ...client.render_state import RenderState
from ...schema import tables
from ...server.applier import Applier
from ...transport.spawn import SpawnTransport
from ...wire.handle import NULL
from ...wire.stage import StageSegment
from ..shaders.programs import load as load_program

__all__ = [
    "Applier",
    "BACKENDS",
    "Client",
    "CsoStats",
    "NULL",
    "RenderState",
    "RenderStateCsoCache",
    "SpawnTransport",
    "StageSegment",
    "TRANSPORTS",
    "load_program",
    "make_backend",
    "tables",
]
