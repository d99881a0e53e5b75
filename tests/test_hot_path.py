"""The draw path's shape: calls per draw, counter wrap, waits, timeouts, one producer."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest

from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.client.api import GL_TRIANGLES, Client
from mgpipe.runtime.errors import SecondProducer
from mgpipe.runtime.harness.measure import calls_per_draw
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.transport.doorbell import Doorbell
from mgpipe.runtime.transport.inproc import InprocTransport
from mgpipe.runtime.wire.header import make_record
from mgpipe.runtime.wire.spec import call_spec
from mgpipe.runtime.wire.stage import StageSegment

MAX_CALLS_PER_DRAW = 40


def test_a_steady_state_blend_toggle_draw_makes_at_most_40_python_calls() -> None:
    """Client + server + recorder, monolith: every Python frame and builtin call counted."""
    round_trip = calls_per_draw("blend-toggle", "monolith", "round", 20, 60)
    client = calls_per_draw("blend-toggle", "monolith", "client", 20, 60)
    assert 0 < client < round_trip <= MAX_CALLS_PER_DRAW, (client, round_trip)


def test_every_hot_writer_packs_in_one_c_call() -> None:
    """The fast writers name their members in the payload's memory order (a member the ABI
    moved, MGPDrawInfo.NumDraws, would otherwise cost every draw a Python frame)."""
    client, _ = _pipe()
    cso = client.tr.cso
    writers = {"DrawVbo": client._draw_vbo, "DrawVbo (indexed)": client._draw_indexed,
               "BindRenderState": cso._bind_fast, "SetDynamicState": cso._dyn_fast}  # fmt: skip
    assert [name for name, w in writers.items() if not w.direct] == []
    # control: the pre-switch order (NumDraws before IndexResource) is not memory order now
    moved = client.em.fast("DrawVbo", ("Mode", "IndexSize", "InstanceCount", "RestartIndex",
                                       "NumDraws", "IndexResource.Slot", "IndexResource.Gen"),
                           ("Start", "Count", "IndexBias"))  # fmt: skip
    assert not moved.direct


def _pipe(transport: str = "monolith") -> tuple[Client, Applier]:
    stage = StageSegment(1 << 20)
    applier = Applier(Recorder(), stage)
    client = Client(applier.apply, stage, transport=transport)
    vb = client.create_buffer(bytes(36))
    client.use_program(client.create_program({0: b"vs", 4: b"fs"}))
    client.vertex_attrib_pointer(0, vb, 3, stride=12)
    return client, applier


def _subset(block: bytes | bytearray, chunks: Any) -> bytes:
    return b"".join(bytes(block[o : o + n]) for o, n in chunks)


@pytest.mark.parametrize("calls", [65536, 131072])
def test_counter_wrap_pushes_never_misses(calls: int) -> None:
    """Exactly 2^16 (and 2^17) setter calls between two draws wrap the wire's Uint16
    counters back to their old values; the next draw still pushes, pipeline and dynamic."""
    client, applier = _pipe()
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    rs = client.state
    before = (rs.version, rs.pipeline_version)
    for i in range(calls):  # Greater, Equal, Greater, ...: every call moves the block
        rs.set_depth_func("Greater" if i % 2 == 0 else "Equal")
    assert (rs.version, rs.pipeline_version) == before  # the Uint16s wrapped exactly
    binds = client.stats()["cso_binds"]
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    assert client.stats()["cso_binds"] == binds + 1  # an extra push, never a missed one
    chunks = t.tables().RENDER_STATE
    server = applier.ctx.render_state.data
    assert _subset(server, chunks["pipeline_chunks"]) == _subset(rs.block, chunks["pipeline_chunks"])

    before = rs.version
    for i in range(calls):  # the dynamic half: clear colours, every one different from the last
        rs.set_clear_color(float(i % 3), 0.0, 0.0, 1.0)
    assert rs.version == before
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    assert _subset(server, chunks["dynamic_chunks"]) == _subset(rs.block, chunks["dynamic_chunks"])
    client.close()


class CountingWaits:
    def __init__(self, transport: Any) -> None:
        self.inner, self.waits = transport, 0
        self.real = transport.wait_applied

    def __call__(self, seq: int | None = None, timeout: float | None = None) -> None:
        self.waits += 1
        self.real(seq, timeout)


@pytest.mark.parametrize("transport", ["monolith", "inproc"])
def test_present_waits_on_its_credit_and_buffer_subdata_never(transport: str) -> None:
    """Blocking round trips by call (the reverse link's counter): the buffer half of
    ResourceSubData none, the texture half one; a present at credit 1 leaves at most one
    present in flight (present k returns with present k - 1 applied), and never waits for
    itself once the stage is in its per-frame regions."""
    client, _ = _pipe(transport)
    rt = client.link.round_trips
    buf = client.create_buffer(bytes(64))
    before = sum(rt.values())
    client.buffer_sub_data(buf, 0, b"\x01" * 16)  # the buffer half: fire-and-forget
    assert sum(rt.values()) == before
    tex = client.create_texture_2d(4, 4)
    client.tex_sub_image_2d(tex, 0, 0, 0, 4, 4, bytes(64))
    client.draw_arrays(GL_TRIANGLES, 0, 3)  # the upload leaves here: the texture half waits
    assert rt["ResourceSubData"] == 1
    seqs, before = [], sum(rt.values())
    for _ in range(4):
        client.draw_arrays(GL_TRIANGLES, 0, 3)
        client.present()
        seqs.append(client.transport.emit_seq)
        if len(seqs) > 1:
            assert client.transport.applied_seq >= seqs[-2]  # credit 1
    assert client.em.stage.wide is False  # frames stage into regions: no self-wait
    assert sum(rt.values()) == before  # presents are credit waits, not round trips
    client.close()


def test_negative_control_credit_0_waits_for_every_present() -> None:
    client, _ = _pipe("inproc")
    client.present_credit = 0
    for _ in range(3):
        client.draw_arrays(GL_TRIANGLES, 0, 3)
        client.present()
        assert client.transport.applied_seq == client.transport.emit_seq
    client.close()


def test_infinite_timeouts_are_accepted_everywhere() -> None:
    stage = StageSegment(1 << 16)
    applier = Applier(Recorder(), stage)
    tr = InprocTransport(applier.apply, 1 << 12, timeout=math.inf)
    rec = make_record(call_spec("Present").opcode, (1).to_bytes(8, "little"))
    for _ in range(50):
        tr.submit(rec)
    tr.wait_applied(timeout=math.inf)
    assert tr.applied_seq == 50
    tr.close()  # the apply thread waited with an infinite budget and was not killed
    bell, flag = Doorbell(), []
    threading.Timer(0.05, lambda: (flag.append(1), bell.ring())).start()
    assert bell.wait(lambda: bool(flag), math.inf)


def test_a_second_producer_is_refused_by_name_before_the_ring() -> None:
    seen: list[bytes] = []
    tr = InprocTransport(lambda r: seen.append(bytes(r)), 1 << 12)
    rec = make_record(call_spec("Present").opcode, (1).to_bytes(8, "little"))
    tr.submit(rec)
    errors: list[BaseException] = []

    def other() -> None:
        try:
            tr.submit(rec)
        except BaseException as exc:  # noqa: BLE001 - delivered to the test thread
            errors.append(exc)

    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert len(errors) == 1 and isinstance(errors[0], SecondProducer)
    assert str(errors[0]) == 'Fatal{SecondProducer, "Transport.Producer"}'
    assert tr.emit_seq == 1  # the ring never saw the second producer's record
    tr.submit(rec)  # the producer carries on
    tr.close()
    assert len(seen) == 2


def test_draw_path_benchmark_runs_and_reports_every_scene() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "draw_path.py"), "-n", "40",
                          "--floor-transports", "monolith"],
                         capture_output=True, text=True, timeout=300, cwd=root)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "lean path: byte-identical records" in out.stdout
    for scene in ("blend-toggle", "viewport-churn"):  # the lean-floor rows, both sides
        for side in ("client", "round"):
            assert any(line.split()[:3] == [scene, "monolith", side]
                       for line in out.stdout.splitlines()), (scene, side)
    for scene in ("blend-toggle", "viewport-churn", "readback"):
        for transport in ("monolith", "inproc"):
            assert any(line.split()[:2] == [scene, transport] for line in out.stdout.splitlines())
    assert "whole-block control" in out.stdout


def test_draws_count_through_draw_doors_their_caller_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Client.draws reads the draw doors' own count cells (no counter per draw): a caller
    that wraps the doors the emitter hands out (an instrumenting or fuzzing layer) still
    gets every draw counted, once."""
    from mgpipe.runtime.client.emitter import Emitter

    real = Emitter.fast

    def wrapping(self: Emitter, *a: object, **k: object) -> object:
        door = real(self, *a, **k)
        return lambda *values: door(*values)

    monkeypatch.setattr(Emitter, "fast", wrapping)
    res = run_scene("blend-toggle", "recorder", "monolith", 10)
    assert res.draws == 20
