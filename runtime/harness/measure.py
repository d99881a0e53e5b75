"""Per-draw costs of the client -> wire -> server path, measured in one process.

- :func:`cpu_per_draw`: process CPU (``time.process_time_ns``: every thread, so the inproc
  apply thread counts) per draw, in steady state: the difference between a run of ``n2``
  and a run of ``n1`` repetitions divided by the difference in draws, best of ``repeat``.
- :func:`calls_per_draw`: Python function calls per draw, counted with ``sys.setprofile``
  (``call`` and ``c_call`` events: Python frames and calls of builtins), same difference.

``side="client"`` runs the scene against a sink that does nothing (the client's own cost:
API, tracker, CSO cache, codec, transport); ``side="round"`` is the whole round trip
through the applier and the recorder backend (:func:`~.runner.run_scene`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from ..client.api import Client
from ..schema import tables as _t
from ..wire.stage import StageSegment
from .runner import STAGE_CAPACITY, run_scene
from .scenes import SCENES

__all__ = ["run_side", "cpu_per_draw", "calls_per_draw", "SIDES"]

SIDES = ("client", "round")


def _nothing(record: memoryview) -> None:
    return None


class _ClientOnly:
    """The client side's sink: applies nothing; a record that answers (``kReplySlot``) gets
    the recorder's answer in a local SEG_REPLY (so a scene that reads back runs), every
    other record costs one C call (its ``Op``) and one dict lookup."""

    def __init__(self, stage: StageSegment) -> None:
        import struct
        from types import SimpleNamespace

        from ..backends.recorder import _ANSWERS, Recorder
        from ..server.reverse import EventRing, ReplyMailbox
        from ..wire.codec import Decoder
        from ..wire.records import layout

        self.mailbox, self.events = ReplyMailbox(), EventRing()
        self.reverse = (self.mailbox, self.events)
        ops = _t.tables().OPCODE
        self._answers = {ops[name]: (name, fn) for name, fn in _ANSWERS.items()}
        hdr = layout("MGPWireRecHeader")
        #: the header's Op in one C call (offset and width from the tables)
        op = next(f for f in hdr.flat if f.path == "Op")
        self._op = struct.Struct("<" + "x" * op.offset + op.code).unpack_from
        self._decode = Decoder(stage).decode
        self._rec, self._ctx = Recorder(), SimpleNamespace(seq=0)

    def __call__(self, record: memoryview) -> None:
        ctx = self._ctx
        ctx.seq += 1
        hit = self._answers.get(self._op(record)[0])
        if hit is not None:
            self.mailbox.post(ctx.seq, hit[1](self._rec, ctx, self._decode(record)), hit[0])


def run_side(scene: str, transport: str, n: int, side: str) -> Client:
    """Run ``scene`` ``n`` times on one side; the (closed) client."""
    if side == "round":
        return run_scene(scene, "recorder", transport, n).client
    if side != "client":
        raise ValueError(f"side {side!r} is not one of {SIDES}")
    stage = StageSegment(STAGE_CAPACITY)
    client = Client(_ClientOnly(stage), stage, transport=transport)
    with client:
        SCENES[scene].run(client, n)
    return client


def _diff(measure: Callable[[int], tuple[float, int]], n1: int, n2: int) -> float:
    a, da = measure(n1)
    b, db = measure(n2)
    if db == da:
        raise ValueError(f"the scene draws as much at n={n1} as at n={n2}")
    return (b - a) / (db - da)


def cpu_per_draw(scene: str, transport: str, side: str, n1: int, n2: int,
                 repeat: int = 3) -> float:  # fmt: skip
    """Microseconds of process CPU per steady-state draw (best of ``repeat``)."""

    def measure(n: int) -> tuple[float, int]:
        t0 = time.process_time_ns()
        c = run_side(scene, transport, n, side)
        return (time.process_time_ns() - t0) / 1e3, c.draws

    measure(n1)  # warm: compile the codec and the handlers first
    return min(_diff(measure, n1, n2) for _ in range(repeat))


def calls_per_draw(scene: str, transport: str, side: str, n1: int, n2: int) -> float:
    """Python calls (``call`` + ``c_call`` profile events) per steady-state draw."""

    def measure(n: int) -> tuple[float, int]:
        count = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "call" or event == "c_call":
                count[0] += 1

        sys.setprofile(profile)
        try:
            c = run_side(scene, transport, n, side)
        finally:
            sys.setprofile(None)
        return float(count[0]), c.draws

    run_side(scene, transport, n1, side)  # warm: compile the codec and the handlers first
    return _diff(measure, n1, n2)
