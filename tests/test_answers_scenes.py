"""Issue 18: the reverse channel end to end.

- the answer scenes (runtime/harness/scenes/answers.py) on gles and vulkan through
  monolith, inproc and spawn: every first-principles check holds, or the scene stops at a
  named refusal of the backend (GLES 3: no GL_SAMPLES_PASSED; its frame timer holds
  GL_TIME_ELAPSED);
- hostile replies and events are named faults on the reading side, never a hang (bad
  status, oversize, out-of-order seq, a ring whose head is impossible, a ring full forever);
- ReplyTooLarge is refused before emission; caps refuse a call the mask says is absent;
- the overflow rule: a full event ring stops apply until the client (blocked on credit)
  drains, then the server resumes and nothing is lost;
- the Minecraft-like frame makes 0 blocking round trips per frame in steady state.
"""

from __future__ import annotations

import struct
import time

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.client.api import Client, ClientError
from mgpipe.runtime.errors import PipeFatal, ProtocolCorruption, RingOverrun
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import ANSWER_SCENES
from mgpipe.runtime.server.reverse import (EventKind, EventRing, Reply, ReplyMailbox,
                                           ReplyStatus, read_events)  # fmt: skip

TRANSPORTS = ("monolith", "inproc", "spawn")
#: what a backend refuses by name (scene -> refusal); everything else must pass
REFUSED = {
    "gles": {"answers-occlusion-samples": 'Fatal{DriverRefused, "QueryCreate.Kind"}',
             "answers-time-elapsed": 'Fatal{DriverRefused, "QueryBegin.Kind"}'},
    "vulkan": {},
}  # fmt: skip


def _outcome(name: str, backend: str, transport: str):
    try:
        res = run_scene(name, backend, transport)
    except PipeFatal as exc:
        return "refused", str(exc).split(":")[0]
    if res.lost:
        return "refused", str(res.client.transport.lost_reason).split(":")[0]
    return "ok", res.client.answer_checks


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", list(ANSWER_SCENES))
@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_answer_scene(backend: str, name: str, transport: str) -> None:
    kind, got = _outcome(name, backend, transport)
    want_refusal = REFUSED[backend].get(name)
    if want_refusal is not None:
        assert (kind, got) == ("refused", want_refusal)
        return
    assert kind == "ok", got
    assert got, "the scene checked nothing"
    bad = [(n, w, g) for n, w, g in got if w != g]
    assert not bad


def test_negative_control_a_wrong_answer_fails_its_check(monkeypatch) -> None:
    """Planted: the gles ReadPixels answers one byte off; the readback check fails."""
    from mgpipe.runtime.backends.gles.answers import GlesAnswers

    real = GlesAnswers.ReadPixels

    def off_by_one(self, ctx, d):  # type: ignore[no-untyped-def]
        r = real(self, ctx, d)
        return Reply.ok(bytes([r.data[0] ^ 1]) + r.data[1:]) if r.data else r

    monkeypatch.setattr(GlesAnswers, "ReadPixels", off_by_one)
    kind, got = _outcome("answers-readback", "gles", "monolith")
    assert kind == "ok"
    assert [n for n, w, g in got if w != g] == [n for n, _, _ in got]  # every format fails


# -- hostile replies ---------------------------------------------------------------------
def test_reply_mailbox_round_trip_and_hostile_slots() -> None:
    mb = ReplyMailbox(slots=2, slot_size=64)
    mb.post(3, Reply.ok(b"abc"), "ReadPixels")
    with pytest.raises(ProtocolCorruption) as e:
        mb.take(3, 2, "ReadPixels")  # applied_seq does not prove it yet
    assert e.value.reason == "ReadPixels.ReplyMissing"
    assert mb.take(3, 3, "ReadPixels") == (ReplyStatus.OK, b"abc")
    with pytest.raises(ProtocolCorruption) as e:
        mb.take(3, 3, "ReadPixels")  # read once
    assert e.value.reason == "ReadPixels.ReplyMismatched"
    mb.post(5, Reply.ok(b"x"), "ReadPixels")  # slot 1 holds seq 5: a wait for 7 is out of order
    with pytest.raises(ProtocolCorruption) as e:
        mb.take(7, 7, "ReadPixels")
    assert e.value.reason == "ReadPixels.ReplyMismatched"
    struct.pack_into("<QII", mb.buf, 0, 4, 9, 0)  # a status outside {OK, DECLINED, ERROR}
    with pytest.raises(ProtocolCorruption) as e:
        mb.take(4, 4, "FenceStatus")
    assert e.value.reason == "FenceStatus.ReplyStatusInvalid"
    struct.pack_into("<QII", mb.buf, 0, 6, 0, 1 << 20)  # a size past the slot
    with pytest.raises(ProtocolCorruption) as e:
        mb.take(6, 6, "FenceStatus")
    assert e.value.reason == "FenceStatus.ReplyTooLarge"
    with pytest.raises(ProtocolCorruption) as e:
        mb.post(8, Reply.ok(bytes(49)), "ReadPixels")  # 64 - 16 = 48 bytes fit
    assert e.value.reason == "ReadPixels.ReplyTooLarge"
    with pytest.raises(ProtocolCorruption) as e:
        mb.post(0, Reply.ok(), "ReadPixels")
    assert e.value.reason == "ReadPixels.ReplyToNoSlot"
    mb.post(2, Reply.error("driver"), "QueryResult")
    assert mb.take(2, 2, "QueryResult")[0] == ReplyStatus.ERROR


def _gles_client(transport: str = "monolith", **kw) -> tuple[Client, object]:
    from mgpipe.runtime.backends.gles.backend import GlesBackend
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = GlesBackend()
    stage = StageSegment(1 << 22)
    ap = Applier(be, stage)
    return Client(ap.apply, stage, transport=transport, width=64, height=64, **kw), ap


def test_an_error_reply_and_a_bad_status_are_named_faults_on_the_client(monkeypatch) -> None:
    from mgpipe.runtime.backends.gles.answers import GlesAnswers

    monkeypatch.setattr(GlesAnswers, "FenceStatus", lambda self, ctx, d: Reply.error("planted"))
    c, _ = _gles_client()
    f = c.fence_sync()
    f.polls = 10**6  # escalate at once
    with pytest.raises(ProtocolCorruption) as e:
        c.fence_signalled(f)
    assert e.value.reason == "FenceStatus.ReplyError"
    c.transport.close()
    # a status no server posts: the poster refuses it before it reaches the slot
    monkeypatch.setattr(GlesAnswers, "FenceStatus", lambda self, ctx, d: Reply(7, b""))  # type: ignore[arg-type]
    c, _ = _gles_client()
    f = c.fence_sync()
    f.polls = 10**6
    with pytest.raises(ProtocolCorruption) as e:
        c.fence_signalled(f)
    assert e.value.reason == "FenceStatus.ReplyStatusInvalid"


def test_reply_too_large_is_refused_before_emission() -> None:
    c, ap = _gles_client()
    c.clear()
    assert c.caps.has_call("ReadPixels")  # the caps snapshot first (its own record)
    records = c.records
    side = 1024  # 1024 x 1024 x 4 = 4 MiB > the 2 MiB - 16 slot
    with pytest.raises(ProtocolCorruption) as e:
        c.read_pixels(0, 0, side, side)
    assert e.value.reason == "ReadPixels.ReplyTooLarge"
    assert c.records == records  # nothing left the client
    assert len(c.read_pixels(0, 0, 16, 16)) == 16 * 16 * 4  # control: a fitting read runs
    c.close()


def test_caps_refuse_a_call_the_server_has_no_entry_for(monkeypatch) -> None:
    from mgpipe.runtime.backends.gles.answers import GlesAnswers

    c, _ = _gles_client()
    assert c.caps.has_call("FenceCreate") and c.caps.has_cap("kCapOcclusionQuery")
    c.close()
    monkeypatch.setattr(GlesAnswers, "FenceCreate", None)  # planted: no entry
    c, _ = _gles_client()
    records = c.records
    with pytest.raises(ClientError, match="FenceCreate: absent by caps"):
        c.fence_sync()
    assert not c.caps.has_call("FenceCreate")
    assert c.records == records + 1  # only GetCaps went: FenceCreate was never emitted
    c.close()


def test_call_mask_follows_the_real_entry_table(monkeypatch) -> None:
    """A claimed kCapTimerQuery without a QueryCounter entry is not published."""
    from mgpipe.runtime.backends.gles.answers import GlesAnswers

    c, _ = _gles_client()
    timer = c.caps.has_cap("kCapTimerQuery")
    c.close()
    assert timer  # llvmpipe's GLES has GL_EXT_disjoint_timer_query
    monkeypatch.setattr(GlesAnswers, "QueryCounter", None)
    c, _ = _gles_client()
    assert not c.caps.has_cap("kCapTimerQuery") and c.caps.has_cap("kCapOcclusionQuery")
    with pytest.raises(ClientError, match="QueryTimestamp: absent by caps"):
        c.get_timestamp()
    c.close()


# -- hostile events ----------------------------------------------------------------------
def test_hostile_events_are_named_faults() -> None:
    ring = EventRing(size=1024)
    ring.seq = 5
    ring.gl_error(0x0500)
    evs, last = read_events(ring, 0, 10)
    assert [(e.kind, e.seq, e.values) for e in evs] == [(EventKind.GlError, 5, (0x0500,))]
    ring.seq = 3  # older than an event already read: out of order
    ring.gl_error(0x0501)
    with pytest.raises(ProtocolCorruption) as e:
        read_events(ring, last, 10)
    assert e.value.reason == "EventRing.GlError.Seq"
    ring = EventRing(size=1024)
    ring.seq = 12
    ring.fence_signalled((1, 1))
    with pytest.raises(ProtocolCorruption) as e:  # an event from a record never emitted
        read_events(ring, 0, 11)
    assert e.value.reason == "EventRing.FenceSignaled.Seq"
    ring = EventRing(size=1024)
    ring.gl_error(1)
    struct.pack_into("<H", ring.buf, 64, 99)  # an unknown kind
    with pytest.raises(ProtocolCorruption) as e:
        read_events(ring, 0, 10)
    assert e.value.reason == "EventRing.Kind"
    ring = EventRing(size=1024)
    struct.pack_into("<Q", ring.buf, 0, 4096)  # head past tail + capacity
    with pytest.raises(ProtocolCorruption) as e:
        read_events(ring, 0, 10)
    assert e.value.reason == "EventRing.Head"
    ring = EventRing(size=1024)
    ring.gl_error(1)
    struct.pack_into("<I", ring.buf, 64 + 4, 900)  # a size past what was published
    with pytest.raises(ProtocolCorruption) as e:
        read_events(ring, 0, 10)
    assert e.value.reason == "EventRing.GlError.Size"


def test_a_ring_full_forever_is_a_named_fault_not_a_hang() -> None:
    ring = EventRing(size=256)
    ring.budget = 0.2
    t0 = time.monotonic()
    with pytest.raises(RingOverrun) as e:
        for _ in range(100):  # nobody drains
            ring.gl_error(1)
    assert e.value.reason == "EventRing.Full" and time.monotonic() - t0 < 5
    assert ring.full  # eventRingFull is raised for the client to see
    # control: lossy log lines on a full ring are dropped and counted, never block
    assert ring.log(2, "warn") is False and ring.dropped == 1


def test_log_lines_lossy_at_warn_lossless_rate_limited_at_error() -> None:
    ring = EventRing(size=1 << 16)
    assert all(ring.log(4, f"error {i}") for i in range(64))
    assert ring.log(4, "one too many this second") is False and ring.dropped == 1
    evs, _ = read_events(ring, 0, 1)
    assert [e.data.decode() for e in evs] == [f"error {i}" for i in range(64)]
    assert all(e.kind == EventKind.LogLine and e.flags == 4 for e in evs)


def test_a_pack_buffer_readback_says_gpu_written_then_done() -> None:
    c, _ = _gles_client()
    c.clear()
    pbo = c.create_buffer(bytes(64))
    seq = c.read_pixels_to_buffer(pbo, 0, 0, 0, 4, 4)
    c.present()
    c.drain_events()
    assert c.readbacks_done == [seq]
    assert c.gpu_written == [(pbo.handle, ((0, 64),))]
    c.close()


def test_overflow_rule_client_blocked_on_credit_drains_and_the_server_resumes() -> None:
    """Fault injection (§11.7): every Present pushes more lossless events than the ring
    holds; the inproc apply thread stops at the record boundary until the client --
    blocked on present credit -- drains; every event arrives, in order."""
    from mgpipe.runtime.backends.recorder import Recorder
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    rec = Recorder()
    stage = StageSegment(1 << 20)
    ring = EventRing(size=512)  # 512 / 32 bytes per event = 16 events
    ap = Applier(rec, stage, events=ring)
    real = rec.Present

    def noisy_present(ctx, d):  # type: ignore[no-untyped-def]
        real(ctx, d)
        for i in range(40):
            ctx.events.gl_error(0x0500 + i % 3)

    rec.Present = noisy_present  # type: ignore[method-assign]
    ap2 = Applier(rec, stage, events=ring)  # rebuilt so the table sees the noisy entry
    c = Client(ap2.apply, stage, transport="inproc", present_credit=1)
    for _ in range(5):
        c.present()
    c.link.wait(c.transport.emit_seq, "Test.Drain")  # a client wait drains while it waits
    c.drain_events()
    assert len(c.gl_errors) == 5 * 40
    assert [s for _, s in c.gl_errors] == sorted(s for _, s in c.gl_errors)
    assert ring.stalls > 0  # the server did stop on a full ring
    assert ring.dropped == 0
    c.close()
    del ap


# -- round trips per frame ---------------------------------------------------------------
@pytest.mark.parametrize("transport", ["monolith", "inproc"])
def test_minecraft_frame_makes_no_blocking_round_trip_in_steady_state(transport: str) -> None:
    """The bench workload MinecraftFrame on gles: blocking round trips (the reverse link's
    counter: reply waits, applied waits, stage drains) per frame are 0 once set up; the
    control: a frame that reads a pixel back makes exactly 1."""
    from mgpipe.runtime.harness.bench.workloads import MinecraftFrame

    c, _ = _gles_client(transport)
    w = MinecraftFrame(draws_per_frame=200)
    w.setup(c)
    per_frame = []
    for i in range(8):
        before = sum(c.link.round_trips.values())
        w.frame(c, i)
        c.present()
        per_frame.append(sum(c.link.round_trips.values()) - before)
    steady = per_frame[2:]
    assert steady == [0] * len(steady), per_frame
    assert c.caps.has_call("ReadPixels")  # the caps snapshot (once per client) first
    before = sum(c.link.round_trips.values())
    w.frame(c, 8)
    c.read_pixels(0, 0, 1, 1)
    c.present()
    assert sum(c.link.round_trips.values()) - before == 1  # the control
    c.close()
