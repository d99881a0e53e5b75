"""The SPSC command ring (seed 001 §4, §11.2, §11.3, §11.6)."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.errors import (
    BarrierTimeout,
    ProtocolCorruption,
    RingOverrun,
    TransportShutdown,
)
from mgpipe.runtime.transport.doorbell import Doorbell
from mgpipe.runtime.transport.ring import Ring
from mgpipe.runtime.wire.header import (
    PAD_OP,
    RECORD_ALIGN,
    check_record,
    header_size,
    make_record,
    pack_header,
    read_header,
)

HDR = header_size()


def catalogue_op() -> tuple[int, str]:
    row = t.tables().CALLS[0]
    return row["opcode"], row["name"]


def record_of_size(size: int, op: int = 1, fill: int = 0xAB) -> bytes:
    return pack_header(op, 0, size) + bytes([fill]) * (size - HDR)


def test_header_layout_comes_from_the_tables() -> None:
    info = t.tables().STRUCTS["MGPWireRecHeader"]
    assert HDR == info["size"]
    rec = pack_header(0x1234, 0x5678, 0x9ABCDEF0)
    for m, value in zip(("Op", "Flags", "Size"), (0x1234, 0x5678, 0x9ABCDEF0)):
        f = t.field("MGPWireRecHeader", m)
        assert int.from_bytes(rec[f.offset : f.offset + f.size], "little") == value
    assert read_header(rec) == (0x1234, 0x5678, 0x9ABCDEF0)


@pytest.mark.parametrize("capacity", [0, 1, 3, 48, 100, 3 * 1024])
def test_capacity_must_be_a_power_of_two(capacity: int) -> None:
    with pytest.raises(ValueError):
        Ring(capacity)


def test_make_record_pads_to_alignment_and_describes_itself() -> None:
    for n in range(0, 3 * RECORD_ALIGN):
        rec = make_record(7, b"\x01" * n)
        assert len(rec) % RECORD_ALIGN == 0 and len(rec) >= HDR + n
        assert check_record(memoryview(rec)) == (7, 0, len(rec))


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        pack_header(PAD_OP, 0, HDR),  # op 0 is the pad, never a call
        pack_header(1, 0, HDR + RECORD_ALIGN),  # Size says more than the record holds
        pack_header(1, 0, HDR) + b"\0" * RECORD_ALIGN,  # Size says less
    ],
)
def test_producer_refuses_records_that_do_not_describe_themselves(bad: bytes) -> None:
    ring = Ring(64)
    with pytest.raises(ProtocolCorruption) as ei:
        ring.emit(bad)
    assert ei.value.reason == "Ring.Emit.Header"
    assert ring.emit_seq == 0


def test_half_capacity_is_the_single_record_limit() -> None:
    ring = Ring(128)
    op, name = catalogue_op()
    ring.emit(record_of_size(64, op))  # exactly half: accepted
    with pytest.raises(RingOverrun) as ei:
        ring.emit(record_of_size(64 + RECORD_ALIGN, op))
    assert ei.value.kind == "RingOverrun" and ei.value.reason == name
    unknown_op = max(t.tables().CALL_BY_OPCODE) + 1
    with pytest.raises(RingOverrun) as ei:
        ring.emit(record_of_size(72, unknown_op))
    assert ei.value.reason == "72B"


def test_records_stay_contiguous_across_the_wrap_and_pads_are_invisible() -> None:
    ring = Ring(64)
    a, b, c = (
        record_of_size(24, 1, 1),
        record_of_size(32, 2, 2),
        record_of_size(16, 3, 3),
    )
    out = []
    for rec in (a, b, c):
        ring.emit(rec)
        ring.publish()
        view = ring.pop()
        assert view is not None and view.readonly
        out.append(bytes(view))
        ring.release()
    assert out == [a, b, c]
    assert ring.emit_seq == ring.applied_seq == 3  # the pad before `c` is not a record
    assert ring.head == ring.tail == ring.capacity + 16  # `c` restarted at offset 0; never reset


def test_try_reserve_reports_full_and_reserve_times_out() -> None:
    ring = Ring(64)
    ring.emit(record_of_size(32))
    ring.emit(record_of_size(32))
    assert ring.try_reserve(RECORD_ALIGN) is None
    t0 = time.monotonic()
    with pytest.raises(BarrierTimeout) as ei:
        ring.reserve(RECORD_ALIGN, timeout=0.05)
    assert ei.value.reason == "Ring.Space" and time.monotonic() - t0 < 5
    assert ring.head == ring._write  # a blocked producer published what it had
    assert ring.pop() is not None
    ring.release()
    assert ring.try_reserve(32) is not None


def test_uncommitted_record_is_invisible_and_unpublished_record_too() -> None:
    ring = Ring(64)
    view = ring.try_reserve(16)
    assert view is not None
    view[:] = record_of_size(16)
    assert ring.peek() is None  # reserved, not committed
    assert ring.commit() == 1
    assert ring.peek() is None  # committed, not published
    ring.publish()
    assert ring.peek() is not None


def test_wait_applied() -> None:
    ring = Ring(64)
    seq = ring.emit(record_of_size(16))
    with pytest.raises(ValueError):
        ring.wait_applied(seq + 1)
    with pytest.raises(BarrierTimeout) as ei:
        ring.wait_applied(seq, timeout=0.02)
    assert ei.value.reason == "Ring.Applied"

    def consumer() -> None:
        while ring.pop() is None:
            ring.wait_readable(1.0)
        ring.release()

    th = threading.Thread(target=consumer)
    th.start()
    ring.wait_applied(seq, timeout=5.0)
    th.join()
    assert ring.applied_seq == seq


def _published(ring: Ring, *records: bytes) -> None:
    for rec in records:
        ring.emit(rec)
    ring.publish()


def _scribble(buf: bytearray, pos: int, op: int, size: int) -> None:
    buf[pos : pos + HDR] = pack_header(op, 0, size)


@pytest.mark.parametrize(
    "sizes, op, size",
    [
        ((16, 8), 1, 0),  # size 0
        ((16, 8), 1, RECORD_ALIGN + 1),  # not a multiple of the alignment
        ((16, 8), 1, 32),  # more than is published (within the record limit)
        ((32, 16), 1, 40),  # more than the record limit (within what is published)
        ((16, 8), PAD_OP, 16),  # a pad that does not reach the end of the buffer
    ],
)
def test_consumer_refuses_impossible_headers(sizes: tuple[int, ...], op: int, size: int) -> None:
    buf = bytearray(64)
    ring = Ring(64, buf)
    _published(ring, *(record_of_size(s) for s in sizes))
    _scribble(buf, 0, op, size)
    with pytest.raises(ProtocolCorruption) as ei:
        ring.pop()
    assert ei.value.reason == "Ring.Header"
    with pytest.raises(ProtocolCorruption):  # latched
        ring.peek()


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=64, max_size=64), head=st.integers(0, 4 * 64))
def test_consumer_over_arbitrary_bytes_raises_only_protocol_corruption(
    data: bytes, head: int
) -> None:
    ring = Ring(64, bytearray(data))
    ring.head = head  # a peer published these bytes
    try:
        while (rec := ring.pop()) is not None:
            op, _flags, size = read_header(rec)
            assert op != PAD_OP and size == len(rec) <= ring.max_record
            ring.release()
    except ProtocolCorruption as exc:
        assert exc.reason == "Ring.Header"


sizes = st.integers(1, 64 // RECORD_ALIGN).map(lambda k: k * RECORD_ALIGN)


@settings(max_examples=200, deadline=None)
@given(
    records=st.lists(st.tuples(sizes, st.integers(1, 0xFFFF), st.integers(0, 255)), max_size=60),
    batches=st.lists(st.integers(1, 5), min_size=1, max_size=8),
)
def test_wrap_property_single_thread(
    records: list[tuple[int, int, int]], batches: list[int]
) -> None:
    ring = Ring(128)
    wanted = [record_of_size(max(s, HDR), op, fill) for s, op, fill in records]
    out: list[bytes] = []
    i, b, last_head, last_tail = 0, 0, 0, 0
    while i < len(wanted) or ring.used:
        for _ in range(batches[b % len(batches)]):
            if i == len(wanted) or ring.try_reserve(len(wanted[i])) is None:
                break
            ring.emit(wanted[i], timeout=0)
            i += 1
        ring.publish()
        for _ in range(batches[(b + 1) % len(batches)]):
            rec = ring.pop()
            if rec is None:
                break
            assert read_header(rec)[0] != PAD_OP
            out.append(bytes(rec))
        ring.release()
        assert ring.head >= last_head and ring.tail >= last_tail
        assert 0 <= ring.head - ring.tail <= ring.capacity
        last_head, last_tail = ring.head, ring.tail
        b += 1
    assert out == wanted
    assert ring.emit_seq == ring.applied_seq == len(wanted)


def test_doorbell_rings_only_a_parked_waiter() -> None:
    bell = Doorbell(spin_s=0)
    bell.ring()
    assert bell.notifies == 0  # nobody parked: no wakeup is paid
    flag = threading.Event()
    result: list[bool] = []
    th = threading.Thread(target=lambda: result.append(bell.wait(flag.is_set, 5.0)))
    th.start()
    while not bell.parked:
        time.sleep(0.001)
    flag.set()
    bell.ring()
    th.join(5.0)
    assert result == [True] and bell.notifies >= 1 and not bell.parked


def test_doorbell_wait_is_bounded_and_kill_wakes_a_parked_waiter() -> None:
    bell = Doorbell(spin_s=0)
    assert bell.wait(lambda: False, 0.02) is False
    errors: list[BaseException] = []

    def waiter() -> None:
        try:
            bell.wait(lambda: False, 30.0)
        except TransportShutdown as exc:
            errors.append(exc)

    th = threading.Thread(target=waiter)
    th.start()
    while not bell.parked:
        time.sleep(0.001)
    bell.kill()
    th.join(5.0)
    assert not th.is_alive() and len(errors) == 1


def test_a_missing_layout_is_refused_by_name() -> None:
    with pytest.raises(t.TablesError, match="MGPWireRecHeader has no member 'Seq'"):
        t.field("MGPWireRecHeader", "Seq")
    with pytest.raises(t.TablesError, match="no struct 'MGPNoSuchThing'"):
        t.struct_info("MGPNoSuchThing")


def test_ring_over_a_caller_buffer_and_control_area_is_shared_by_two_views() -> None:
    """The spawn layout: records in one mapping, cursors in a control area; a second Ring
    attached to the same memory (a peer process) pops what the first one published."""
    import mmap

    from mgpipe.runtime.transport.ring import CONTROL_SIZE, CONTROL_SLOTS

    cap = 1 << 12
    mem = mmap.mmap(-1, cap + CONTROL_SIZE)
    producer = Ring(cap, memoryview(mem)[:cap], control=memoryview(mem)[cap:])
    consumer = Ring(cap, memoryview(mem)[:cap], control=memoryview(mem)[cap:], attach=True)
    recs = [make_record(1, bytes([i]) * (8 * (i % 5))) for i in range(40)]
    got = []
    for r in recs:
        producer.emit(r)
        producer.publish()
        rec = consumer.pop()
        got.append(bytes(rec))
        consumer.release()
    assert got == recs
    head = int.from_bytes(mem[cap : cap + 8], "little")
    assert head == producer.head == consumer.head and CONTROL_SLOTS[0] == "head"
    assert producer.applied_seq == 40  # the consumer's release, seen through the control area
    producer.kill()
    assert consumer.dead


# -- issue 20: the drain releases in batches (§11.6) ---------------------------------------------
def _released_seen(n: int, every: int | None = None) -> tuple[list[int], Ring]:
    """``applied_seq`` as the sink sees it at each of ``n`` records drained in one go."""
    ring = Ring(1 << 14)
    if every is not None:
        ring.release_every = every
    _published(ring, *[record_of_size(16, 1 + i % 5) for i in range(n)])
    seen: list[int] = []
    assert ring.drain(lambda rec: seen.append(ring.applied_seq)) == n
    return seen, ring


def test_the_drain_releases_every_64_records_and_when_dry() -> None:
    seen, ring = _released_seen(200)
    assert seen == [64 * (i // 64) for i in range(200)]  # released 3 times, not 200
    assert ring.applied_seq == 200 and ring.tail == ring.head  # and once more when dry


def test_control_a_release_per_record_goes_red() -> None:
    """Planted: the release after every record (the drain's old shape) -> the pin's
    sequence is the per-record one."""
    seen, _ = _released_seen(200, every=1)
    assert seen != [64 * (i // 64) for i in range(200)] and seen == list(range(200))


def test_a_raising_sink_releases_every_record_before_its_own() -> None:
    ring = Ring(1 << 14)
    _published(ring, *[record_of_size(16) for _ in range(100)])

    handed: list[int] = []

    def sink(rec: memoryview) -> None:
        handed.append(1)
        if len(handed) == 71:
            raise RuntimeError("sink")

    with pytest.raises(RuntimeError):
        ring.drain(sink)
    assert ring.applied_seq == 70 and ring.tail == 70 * 16  # applied, released
    assert ring._popped == 71  # its own record: popped, not released


def test_a_parked_waiter_is_released_to_record_by_record() -> None:
    """A producer parked on ``space_bell`` (wait_applied) is not kept waiting for the
    batch: while it is parked, each applied record is released."""
    ring = Ring(1 << 14, spin_s=0)
    _published(ring, *[record_of_size(16) for _ in range(100)])
    got: list[bool] = []
    th = threading.Thread(target=lambda: got.append(ring.space_bell.wait(
        lambda: ring.applied_seq >= 3, 5.0)))  # fmt: skip
    th.start()
    deadline = time.monotonic() + 5
    while not ring.space_bell.parked and time.monotonic() < deadline:
        time.sleep(0.001)
    gate, handed = threading.Event(), []

    def sink(rec: memoryview) -> None:
        handed.append(1)
        if len(handed) == 6:  # stuck on the 6th record until the waiter has its 3
            th.join(5)
            gate.set()

    ring.drain(sink)
    assert gate.is_set() and got == [True]
