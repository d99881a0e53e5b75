"""Transports (seed 001 §1.3, §11.3, §11.6, §17.1): monolith and inproc give one sink sequence."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mgpipe.runtime.errors import (
    BarrierTimeout,
    NullEntry,
    PipeFatal,
    ProtocolCorruption,
    RingOverrun,
    TransportShutdown,
)
from mgpipe.runtime.transport.inproc import InprocTransport
from mgpipe.runtime.transport.monolith import MonolithTransport
from mgpipe.runtime.wire.header import (
    PAD_OP,
    RECORD_ALIGN,
    header_size,
    make_record,
    pack_header,
    read_header,
)

HDR = header_size()


class Recorder:
    def __init__(self) -> None:
        self.calls: list[bytes] = []

    def __call__(self, rec: memoryview) -> None:
        assert isinstance(rec, memoryview) and rec.readonly
        self.calls.append(bytes(rec))


@pytest.fixture
def no_thread_tracebacks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    seen: list[object] = []
    monkeypatch.setattr(threading, "excepthook", seen.append)
    yield seen
    assert seen == [], "an exception escaped the apply thread"


def records(n: int, payload: int = 8) -> list[bytes]:
    return [make_record(1 + i % 7, bytes([i % 256]) * payload) for i in range(n)]


record_st = st.tuples(st.integers(1, 0xFFFF), st.integers(0, 2), st.binary(max_size=64 - HDR))


@settings(max_examples=60, deadline=None)
@given(
    recs=st.lists(record_st, max_size=80),
    capacity=st.sampled_from([128, 256]),
    publish_every=st.integers(1, 6),
)
def test_monolith_and_inproc_give_the_same_sink_calls(
    recs: list[tuple[int, int, bytes]], capacity: int, publish_every: int
) -> None:
    wanted = [make_record(op, payload, flags) for op, flags, payload in recs]
    mono, inproc = Recorder(), Recorder()
    m = MonolithTransport(mono)
    i = InprocTransport(inproc, capacity, spin_s=0, publish_every=publish_every, timeout=10)
    for rec in wanted:
        assert m.submit(rec) == i.submit(rec)
    i.wait_applied()
    assert i.applied_seq == i.emit_seq == m.applied_seq == len(wanted)
    m.close()
    i.close()
    assert mono.calls == inproc.calls == wanted
    assert all(read_header(c)[0] != PAD_OP for c in inproc.calls)


def test_submit_returns_record_ordinals_and_wait_applied_is_a_barrier() -> None:
    applied: list[int] = []
    t = InprocTransport(lambda rec: applied.append(read_header(rec)[0]), 256, timeout=10)
    seqs = [t.submit(r) for r in records(10)]
    assert seqs == list(range(1, 11))
    t.wait_applied(5)
    assert len(applied) >= 5 and t.applied_seq >= 5
    t.wait_applied()
    assert len(applied) == 10
    with pytest.raises(ValueError):
        t.wait_applied(11)
    t.close()


def test_a_parked_apply_thread_is_woken_by_publish() -> None:
    sink = Recorder()
    t = InprocTransport(sink, 256, spin_s=0, timeout=10)
    bell = t.ring.data_bell
    deadline = time.monotonic() + 5
    while not bell.parked and time.monotonic() < deadline:
        time.sleep(0.001)
    assert bell.parked  # idle consumer parks
    t.submit(records(1)[0])
    t.wait_applied(timeout=5)
    assert bell.notifies >= 1 and len(sink.calls) == 1
    t.close()


def test_back_pressure_through_a_tiny_ring() -> None:
    sink = Recorder()
    gate = threading.Event()

    def slow(rec: memoryview) -> None:
        gate.wait(5)
        sink(rec)

    t = InprocTransport(slow, 64, spin_s=0, timeout=10)
    wanted = records(40, payload=16)
    timer = threading.Timer(0.05, gate.set)
    timer.start()
    for rec in wanted:  # blocks on space until the apply thread releases
        t.submit(rec)
    t.close()
    timer.join()
    assert sink.calls == wanted


def test_capacity_wait_is_bounded() -> None:
    gate = threading.Event()
    t = InprocTransport(lambda rec: gate.wait(10), 64, spin_s=0, timeout=0.1)
    with pytest.raises(BarrierTimeout) as ei:
        for rec in records(10, payload=16):
            t.submit(rec)
    assert ei.value.reason == "Ring.Space"
    with pytest.raises(BarrierTimeout) as ei:
        t.wait_applied(1, timeout=0.05)
    assert ei.value.reason == "Ring.Applied"
    gate.set()
    t.close()


class Boom(RuntimeError):
    pass


def failing_sink(at: int) -> Recorder:
    class Failing(Recorder):
        def __call__(self, rec: memoryview) -> None:
            if len(self.calls) == at:
                raise Boom(f"record {at}")
            super().__call__(rec)

    return Failing()


def test_sink_error_is_reraised_on_the_client_and_never_printed(
    no_thread_tracebacks: list[object],
) -> None:
    sink = failing_sink(3)
    t = InprocTransport(sink, 256, timeout=10)
    for rec in records(3):
        t.submit(rec)
    with pytest.raises(Boom, match="record 3"):
        t.submit(records(4)[3])
        t.wait_applied()
    with pytest.raises(TransportShutdown) as ei:
        t.submit(records(1)[0])
    assert isinstance(ei.value.__cause__, Boom)
    t.close()  # the error was delivered once; closing a dead transport is quiet
    assert len(sink.calls) == 3


@pytest.mark.parametrize("make", ["monolith", "inproc"])
def test_sink_error_stops_the_pipe_at_the_same_record(
    make: str, no_thread_tracebacks: list[object]
) -> None:
    sink = failing_sink(2)
    t = MonolithTransport(sink) if make == "monolith" else InprocTransport(sink, 256, timeout=10)
    with pytest.raises(Boom):
        for rec in records(6):
            t.submit(rec)
        t.wait_applied()
    with pytest.raises(TransportShutdown):
        t.flush()
    t.close()
    assert sink.calls == records(2)


def test_close_reraises_an_error_not_yet_seen(
    no_thread_tracebacks: list[object],
) -> None:
    t = InprocTransport(failing_sink(0), 256, timeout=10)
    t.submit(records(1)[0])
    with pytest.raises(Boom):
        t.close()
    t.close()  # idempotent once delivered


def test_corrupt_header_written_by_a_peer_reaches_the_client(
    no_thread_tracebacks: list[object],
) -> None:
    buf = bytearray(256)
    first_seen, gate = threading.Event(), threading.Event()
    sink = Recorder()

    def blocking(rec: memoryview) -> None:
        first_seen.set()
        gate.wait(5)
        sink(rec)

    t = InprocTransport(blocking, 256, buffer=buf, timeout=10)
    a, b = records(2)
    t.submit(a)
    assert first_seen.wait(5)
    t.submit(b)
    buf[len(a) : len(a) + HDR] = pack_header(1, 0, 3)  # SEG_CMD scribbled concurrently
    gate.set()
    with pytest.raises(ProtocolCorruption) as ei:
        t.wait_applied()
    assert ei.value.reason == "Ring.Header"
    t.close()
    assert sink.calls == [a]


def test_oversize_and_malformed_records() -> None:
    big = make_record(1, b"\0" * (128 // 2))  # header + half the ring: over the limit
    i = InprocTransport(Recorder(), 128, timeout=10)
    with pytest.raises(RingOverrun):
        i.submit(big)
    m = MonolithTransport(Recorder())
    m.submit(big)  # no ring, no limit
    bad = pack_header(1, 0, HDR + RECORD_ALIGN)  # claims a payload it lacks
    for t in (i, m):
        with pytest.raises(ProtocolCorruption) as ei:
            t.submit(bad)
        assert ei.value.reason == "Ring.Emit.Header"
    assert i.emit_seq == 0 and m.emit_seq == 1
    i.close()
    m.close()


@pytest.mark.parametrize("make", ["monolith", "inproc"])
def test_closed_transport_refuses_work(make: str) -> None:
    sink = Recorder()
    with MonolithTransport(sink) if make == "monolith" else InprocTransport(sink, 256) as t:
        for rec in records(5):
            t.submit(rec)
    assert sink.calls == records(5)  # close drained
    for call in (lambda: t.submit(records(1)[0]), t.flush, t.wait_applied):
        with pytest.raises(TransportShutdown) as ei:
            call()
        assert ei.value.reason == "Transport.Closed"
    t.close()


def test_close_with_a_stuck_sink_is_bounded() -> None:
    gate = threading.Event()
    t = InprocTransport(lambda rec: gate.wait(10), 256, timeout=0.1)
    t.submit(records(1)[0])
    t0 = time.monotonic()
    with pytest.raises(BarrierTimeout):
        t.close()
    assert time.monotonic() - t0 < 5
    gate.set()


def test_an_aborted_close_applies_nothing_more() -> None:
    """A close that timed out on a stuck sink gives up the records still published: once
    the sink comes back, the apply thread hands it none of them (it used to test the
    abort before each record; the drain stops the same way)."""
    gate, applied = threading.Event(), []

    def stuck(rec: memoryview) -> None:
        gate.wait(10)
        applied.append(bytes(rec))

    t = InprocTransport(stuck, 1024, timeout=0.1)
    for rec in records(3):
        t.submit(rec)
    t.flush()
    with pytest.raises(BarrierTimeout):
        t.close()
    gate.set()
    t._thread.join(5)
    assert not t._thread.is_alive()
    assert len(applied) == 1


def test_fatal_spelling() -> None:
    assert (
        str(ProtocolCorruption("SetDynamicState.Blob"))
        == 'Fatal{ProtocolCorruption, "SetDynamicState.Blob"}'
    )
    e = NullEntry("DrawVbo")
    assert (e.kind, e.reason, e.call) == ("UnimplementedCall", "DrawVbo", "DrawVbo")
    assert str(RingOverrun("SetShaderBuffers")) == 'Fatal{RingOverrun, "SetShaderBuffers"}'
    assert str(BarrierTimeout("Ring.Applied")) == 'Fatal{BarrierTimeout, "Ring.Applied"}'
    for cls in (
        ProtocolCorruption,
        RingOverrun,
        BarrierTimeout,
        NullEntry,
        TransportShutdown,
    ):
        assert issubclass(cls, PipeFatal)


# -- issue 20: the compiled doors' per-record work ---------------------------------------------
def _struct_packer(values: int = 6) -> tuple[int, object, tuple]:
    """A tables-headed record of ``values`` u32 members, packed by one ``struct`` call (the
    shape of the emitter's direct packers): (size, pack_into, header prefix)."""
    import struct

    from mgpipe.runtime.wire.records import layout

    hl = layout("MGPWireRecHeader")
    size = HDR + 4 * values
    size += -size % RECORD_ALIGN
    fmt = struct.Struct("<" + hl.fmt + "I" * values + "x" * (size - HDR - 4 * values))
    head = {"Op": 3, "Flags": 0, "Size": size}
    return size, fmt.pack_into, tuple(head[f.path] for f in hl.flat)


def _builds_an_argument_list(door: object) -> bool:
    import dis

    return any(i.opname in ("CALL_FUNCTION_EX", "LIST_EXTEND") for i in dis.get_instructions(door))


def _door_records(make: str, capacity: int = 256, n: int = 100) -> list[bytes]:
    size, pack, prefix = _struct_packer()
    sink = Recorder()
    t = MonolithTransport(sink) if make == "monolith" else InprocTransport(sink, capacity, timeout=10)
    door = t.door(size, pack, prefix)
    for i in range(n):
        door(i, i + 1, i * 7, 0xFFFFFFFF, i % 3, 5)
    t.wait_applied()
    t.close()
    return sink.calls


def test_a_struct_packers_door_takes_its_values_by_position() -> None:
    """The doors of a ``struct`` packer take the values by position and hand them on so
    (no argument list built per record: about 100 ns a record); the records are those of
    the monolith's door, across the inproc ring's wrap."""
    from mgpipe.runtime.transport.base import door_arity

    size, pack, prefix = _struct_packer()
    assert door_arity(pack, prefix) == 6
    for t in (MonolithTransport(Recorder()), InprocTransport(Recorder(), 256, timeout=10)):
        door = t.door(size, pack, prefix)
        assert not _builds_an_argument_list(door), type(t).__name__
        with pytest.raises(TypeError):  # a wrong count is refused before the ring
            door(1, 2)
        assert t.emit_seq == 0
        t.close()
    assert _door_records("inproc") == _door_records("monolith")
    assert len(_door_records("inproc")) == 100


def test_control_a_door_of_unknown_arity_builds_the_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the arity unknown (the old ``*prefix, *values`` door) -> the pin goes red;
    the records stay the same."""
    from mgpipe.runtime.transport import base

    monkeypatch.setattr(base, "door_arity", lambda pack, prefix: None)
    size, pack, prefix = _struct_packer()
    for t in (MonolithTransport(Recorder()), InprocTransport(Recorder(), 256, timeout=10)):
        assert _builds_an_argument_list(t.door(size, pack, prefix))
        t.close()
    assert _door_records("inproc") == _door_records("monolith")


def _tail_reads(n: int = 2000) -> int:
    """Times an inproc door looked at the consumer's ``tail`` for ``n`` records."""
    size, pack, prefix = _struct_packer()
    t = InprocTransport(lambda rec: None, 1 << 16, timeout=10)
    ring, looks = t.ring, [0]
    real = ring._refill

    def counting(w: int) -> int:
        looks[0] += 1
        return real(w)

    ring._refill = counting  # type: ignore[method-assign]
    door = t.door(size, pack, prefix)
    for i in range(n):
        door(i, 0, 0, 0, 0, 0)
    t.wait_applied()
    t.close()
    assert t.applied_seq == n
    return looks[0]


def test_the_door_reads_tail_only_past_its_cached_end() -> None:
    assert _tail_reads(2000) <= 40  # ~1 a lap (2048 records a lap here), not 1 a record


def test_control_a_door_reading_tail_every_record_goes_red(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the cached end never kept (``tail`` read for every record, as before)."""
    from mgpipe.runtime.transport.ring import _TAIL, Ring

    def uncached(self: Ring, w: int) -> int:
        return min(self._ctl[_TAIL] + self.capacity, (w | self._mask) + 1)

    monkeypatch.setattr(Ring, "_refill", uncached)
    assert _tail_reads(2000) >= 2000
