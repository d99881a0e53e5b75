"""Bad bytes from a hostile client (seed 001 §11.2, §10.1): the server process refuses them by
name, tells the client over the control socket, and the client latches.

``MGPIPE_SPAWN_FULL=1`` runs the long fuzz sweep through the server process; CI runs a
quick form.
"""

from __future__ import annotations

import os
import random
import struct

import pytest

from mgpipe.runtime.client.api import EGL_CONTEXT_LOST, Client
from mgpipe.runtime.harness.scenes import SCENES
from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.transport.control_page import PAGE_SIZE
from mgpipe.runtime.transport.monolith import MonolithTransport
from mgpipe.runtime.transport.session import EXIT_FATAL
from mgpipe.runtime.transport.shared_ring import SharedRing, segment_size
from mgpipe.runtime.transport.spawn import SpawnTransport
from mgpipe.runtime.wire.header import header_size, make_record, pack_header, read_header
from mgpipe.runtime.wire.stage import StageSegment

FULL = os.environ.get("MGPIPE_SPAWN_FULL") == "1"
SIZE = _t.field("MGPWireRecHeader", "Size")
OP = _t.field("MGPWireRecHeader", "Op")


def _emit_then_overwrite(t: SpawnTransport, record: bytes, field: _t.Field, value: int) -> None:
    """What a hostile client does: commit a good record, then rewrite a header byte in the ring."""
    ring = t.ring
    seq = ring.emit(record)
    start = (ring._write - len(record)) & ring._mask
    struct.pack_into("<" + field.fmt, ring._buf, start + field.offset, value)
    ring.publish()
    t.wait_applied(seq)


def _scene_records(scene: str, n: int) -> list[bytes]:
    """The records a scene emits (captured through monolith)."""
    stage = StageSegment(4 << 20)
    applier = Applier(Recorder(), stage)
    out: list[bytes] = []

    def sink(rec: memoryview) -> None:
        out.append(bytes(rec))
        applier.apply(rec)

    c = Client(None, stage, transport=MonolithTransport(sink),  # type: ignore[arg-type]
               reverse=applier.apply.reverse)  # the applier's SEG_REPLY / SEG_EVENT  # fmt: skip
    SCENES[scene].run(c, n)
    return out


@pytest.mark.parametrize("field,value,reason", [
    (SIZE, header_size() + 3, "Ring.Header"),  # unaligned size
    (SIZE, 1 << 30, "Ring.Header"),  # larger than what was published
])  # fmt: skip
def test_a_corrupted_ring_header_is_fatal_protocol_corruption_and_the_client_latches(
    field: _t.Field, value: int, reason: str
) -> None:
    t = SpawnTransport()
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    _emit_then_overwrite(t, make_record(1, bytes(16)), field, value)
    assert t.lost and t.lost_reason is not None
    assert (t.lost_reason.kind, t.lost_reason.reason) == ("ProtocolCorruption", reason)
    assert c.present() == EGL_CONTEXT_LOST
    c.close()
    assert t.child.returncode == EXIT_FATAL


def test_an_unknown_opcode_in_the_ring_is_refused_by_the_server_process() -> None:
    t = SpawnTransport()
    _emit_then_overwrite(t, make_record(1, bytes(16)), OP, OP.max_value)
    assert t.lost and t.lost_reason.kind == "ProtocolCorruption"
    t.close()
    assert t.child.returncode == EXIT_FATAL


def test_the_server_copies_then_checks_a_peer_rewrite_after_the_read_changes_nothing(
    monkeypatch,
) -> None:
    """A peer racing the server: the header bytes change right after the server read them.
    The record the server goes on with is the one it checked, never a second read."""
    cap = 1 << 12
    seg = memoryview(bytearray(segment_size(cap)))
    prod = SharedRing(seg, cap, "producer", _NoBell(), _NoBell())
    cons = SharedRing(seg, cap, "consumer", _NoBell(), _NoBell())
    good = make_record(7, b"payload!")
    prod.emit(good)
    prod.publish()
    real = cons._hcodec

    class PeerRewritesAfterRead:  # the header codec, with a hostile write right after a read
        pack = real.pack

        @staticmethod
        def unpack_from(buf, pos=0):
            got = real.unpack_from(buf, pos)
            buf[pos : pos + header_size()] = pack_header(9, 0, 1 << 20)
            return got

    monkeypatch.setattr(cons, "_hcodec", PeerRewritesAfterRead)
    rec = cons.pop_copy()
    assert rec == good and read_header(rec) == (7, 0, len(good))
    assert bytes(seg[PAGE_SIZE : PAGE_SIZE + header_size()]) != good[: header_size()]


class _NoBell:
    dead = False

    def ring(self) -> None:
        pass

    def wait(self, ready, timeout=None) -> bool:
        return bool(ready())


def _mutate(rng: random.Random, rec: bytes) -> bytes:
    b = bytearray(rec)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(b))
        b[i] = rng.choice([0, 0xFF, b[i] ^ (1 << rng.randrange(8)), rng.randrange(256)])
    return bytes(b)


def test_fuzz_the_server_process_through_the_shared_ring(record_property) -> None:
    """Valid scene streams with one record mutated in place in the ring: the server either
    applies it or refuses with a named Fatal; it never crashes, hangs or reports a
    backend fault, and the client always ends either latched or fully applied."""
    stream = _scene_records("readback", 2) + _scene_records("blend-toggle", 3)
    rng = random.Random(0xF022)
    trials = 120 if FULL else 8
    outcomes: dict[str, int] = {}
    for _ in range(trials):
        t = SpawnTransport()
        target = rng.randrange(len(stream))
        for i, rec in enumerate(stream):
            if i == target:
                t.ring.emit(rec)
                start = (t.ring._write - len(rec)) & t.ring._mask
                mutated = _mutate(rng, rec)
                t.ring._buf[start : start + len(rec)] = mutated  # the hostile write
            else:
                t.submit(rec)
        t.close()
        if t.lost:
            assert t.lost_reason is not None and t.lost_reason.kind != "DeviceLost"
            assert t.child.returncode == EXIT_FATAL, t.lost_reason
            key = t.lost_reason.kind
        else:
            assert t.child.returncode == 0 and t.report["applied_seq"] == t.emit_seq
            key = "applied"
        outcomes[key] = outcomes.get(key, 0) + 1
    assert sum(outcomes.values()) == trials
    record_property("spawn_fuzz_outcomes", dict(sorted(outcomes.items())))
