"""Test helpers for the GLES backend: a client wired to a fresh ``gles`` backend."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mgpipe.runtime.backends.gles import GlesBackend
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.harness.runner import STAGE_CAPACITY
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.stage import StageSegment

TRANSPORTS = ("monolith", "inproc")


@contextmanager
def gles_client(
    transport: str = "monolith", size: int = 64
) -> Iterator[tuple[Client, GlesBackend]]:
    be = GlesBackend()
    stage = StageSegment(STAGE_CAPACITY)
    client = Client(Applier(be, stage).apply, stage, transport=transport, width=size, height=size)
    try:
        with client:
            yield client, be
    finally:
        be.close()
