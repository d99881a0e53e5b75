"""The bench's one door into the runtime: every runtime name the bench uses, imported once.

The bench drives the runtime exactly as a user does (client API, applier, backend
registry, transport list); nothing here re-implements a runtime piece.
"""

from __future__ import annotations

from ... import tables
from ...applier import Applier
from ...client import TRANSPORTS, Client
from ...cso_cache import CsoStats
from ...handles import NULL
from ...render_state import RenderState
from ...scenes import BACKENDS, make_backend
from ...stage import StageSegment

__all__ = [
    "Applier", "BACKENDS", "Client", "CsoStats", "NULL", "RenderState", "StageSegment",
    "TRANSPORTS", "make_backend", "tables",
]
