"""Control-plane framing and messages (seed 001 §11.4; seed 004 rule G)."""

from __future__ import annotations

import os
import socket
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mgpipe.runtime.transport import control
from mgpipe.runtime.transport.framing import (
    HEADER,
    MAGIC,
    MAX_FRAME,
    FrameReader,
    PeerClosed,
    ProtocolMismatch,
    encode_frame,
    send_frame,
)


@pytest.fixture
def pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield a, b
    a.close()
    b.close()


def test_frame_layout_is_magic_length_payload() -> None:
    assert encode_frame(b"xyz") == b"MGLF" + struct.pack("<I", 3) + b"xyz"
    assert HEADER.unpack(encode_frame(b"")[:8]) == (MAGIC, 0)


@given(st.lists(st.binary(max_size=300), max_size=8), st.integers(1, 40))
def test_frames_survive_any_split(payloads: list[bytes], chunk: int) -> None:
    stream = b"".join(encode_frame(p) for p in payloads)
    r = FrameReader(None)  # type: ignore[arg-type]
    out = []
    for i in range(0, len(stream), chunk):
        r.feed(stream[i : i + chunk])
        while (f := r.next_frame()) is not None:
            out.append(f)
    assert out == payloads


def test_bad_magic_latches_a_named_protocol_mismatch() -> None:
    r = FrameReader(None)  # type: ignore[arg-type]
    with pytest.raises(ProtocolMismatch) as e:
        r.feed(b"MGLX" + struct.pack("<I", 1) + b"z")
    assert str(e.value) == 'Fatal{ProtocolMismatch, "Frame.Magic"}'
    with pytest.raises(ProtocolMismatch):  # latched: a good frame after it is refused too
        r.feed(encode_frame(b"ok"))
    with pytest.raises(ProtocolMismatch):
        r.next_frame()


def test_over_long_length_is_refused_on_read_before_the_payload_arrives() -> None:
    r = FrameReader(None)  # type: ignore[arg-type]
    with pytest.raises(ProtocolMismatch) as e:
        r.feed(struct.pack("<II", MAGIC, MAX_FRAME + 1))
    assert e.value.reason == "Frame.Length"
    r2 = FrameReader(None)  # type: ignore[arg-type]
    r2.feed(struct.pack("<II", MAGIC, MAX_FRAME))  # exactly the cap: waits for the bytes
    assert r2.peek_frame_size() is None
    with pytest.raises(ValueError):
        encode_frame(bytes(MAX_FRAME + 1))


def test_a_short_receive_buffer_is_told_the_size_and_loses_nothing() -> None:
    r = FrameReader(None)  # type: ignore[arg-type]
    r.feed(encode_frame(b"0123456789") + encode_frame(b"ab"))
    small = bytearray(4)
    assert r.receive_into(small) == (False, 10)
    assert r.peek_frame_size() == 10  # still queued
    big = bytearray(10)
    assert r.receive_into(big) == (True, 10) and bytes(big) == b"0123456789"
    assert r.receive_into(small) == (True, 2) and bytes(small[:2]) == b"ab"
    assert r.receive_into(small) is None


def test_descriptors_cross_beside_a_frame_and_eof_is_peer_closed(pair) -> None:
    a, b = pair
    rfd, wfd = os.pipe()
    try:
        send_frame(a, b"with-fd", [wfd])
        r = FrameReader(b)
        assert r.read_frame() == b"with-fd"
        (got,) = r.recv_fds()
        assert got not in (rfd, wfd)  # the kernel renumbered it: a new descriptor
        os.write(got, b"!")
        assert os.read(rfd, 1) == b"!"
        os.close(got)
    finally:
        os.close(rfd)
        os.close(wfd)
    a.close()
    with pytest.raises(PeerClosed):
        r.read_frame()


def test_messages_roundtrip_and_refuse_undeclared_or_mistyped_fields() -> None:
    payload = control.encode("Fatal", kind="ProtocolCorruption", reason="Ring.Header")
    msg = control.decode(payload)
    assert msg.kind == "Fatal" and msg["reason"] == "Ring.Header"
    with pytest.raises(ProtocolMismatch) as e:  # rule G: no field the schema does not declare
        control.encode("Welcome", abi=1, fingerprint="x", segments=[], backend="r", pid=1)
    assert e.value.reason == "Welcome.pid"
    with pytest.raises(ProtocolMismatch):
        control.encode("Close", report=1)  # an int is not a bool
    bad = payload[:4] + b'{"kind":"x"}'
    with pytest.raises(ProtocolMismatch) as e:
        control.decode(bad)
    assert e.value.reason == "Fatal.reason"
    with pytest.raises(ProtocolMismatch):
        control.decode(b"\x63\x00\x00\x00{}")


def test_rule_g_no_message_declares_a_process_local_handle() -> None:
    """No fd number, pid, address or EGL value is a field of any control message."""
    local = ("fd", "pid", "addr", "address", "ptr", "egl", "display", "surface", "window")
    for kind, fields in control.SCHEMA.items():
        for name in fields:
            assert not any(word in name.lower() for word in local), f"{kind}.{name}"
