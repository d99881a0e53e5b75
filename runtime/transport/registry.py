"""Transport kinds by name: ``make_transport(kind, sink)``.

:data:`TRANSPORTS` is importable on its own (the command line checks a name against it
before anything runs); the transports' modules are imported only when one is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Sink, Transport

__all__ = ["TRANSPORTS", "DEFAULT_RING", "make_transport"]

TRANSPORTS = ("monolith", "inproc", "spawn")
DEFAULT_RING = 1 << 20


def make_transport(kind: str, sink: "Sink", ring_capacity: int = DEFAULT_RING) -> "Transport":
    if kind == "monolith":
        from .monolith import MonolithTransport

        return MonolithTransport(sink)
    if kind == "inproc":
        from .inproc import InprocTransport

        return InprocTransport(sink, ring_capacity)
    if kind == "spawn":
        raise ValueError("a spawn transport holds its own stage: pass a SpawnTransport object")
    raise ValueError(f"unknown transport {kind!r} (expected one of: {', '.join(TRANSPORTS)})")
