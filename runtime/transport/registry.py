"""Transport kinds by name: ``make_transport(kind, sink)``."""

from __future__ import annotations

from .base import Sink, Transport
from .inproc import InprocTransport
from .monolith import MonolithTransport

__all__ = ["TRANSPORTS", "DEFAULT_RING", "make_transport"]

TRANSPORTS = ("monolith", "inproc")
DEFAULT_RING = 1 << 20


def make_transport(kind: str, sink: Sink, ring_capacity: int = DEFAULT_RING) -> Transport:
    if kind == "monolith":
        return MonolithTransport(sink)
    if kind == "inproc":
        return InprocTransport(sink, ring_capacity)
    raise ValueError(f"unknown transport {kind!r} (expected one of: {', '.join(TRANSPORTS)})")
