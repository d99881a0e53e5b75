"""Hostile peers on the spawn transport: the server never spins or leaks, the client never hangs.

Server side (the real server process, recorder backend): a ``head`` no producer can
publish is ``Fatal{ProtocolCorruption, "Ring.Cursor"}`` and the server exits within 1 s;
a valid control frame other than ``Close`` never parks the consume loop (the non-blocking
control read really does not block); every descriptor a client sends beside a control
frame is closed (the server's descriptor count returns to its start).

Client side (a fake server, :data:`_PEER`, run as the child): a silent server fails the
constructor at its handshake deadline; garbage, a wrong schema, a ``Fatal``, JSON nested
too deep and a bad ``Report`` are named faults; a server that stays alive after any of
them is killed at teardown; descriptors a server sends are closed.

Every bound below belongs to the test harness (a thread join), never to the product.
"""

from __future__ import annotations

import gc
import os
import struct
import sys
import threading
import time

import pytest

from mgpipe.runtime.client.api import Client
from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.transport.control import CONTROL_ABI, encode
from mgpipe.runtime.transport.framing import send_frame
from mgpipe.runtime.transport.session import EXIT_FATAL
from mgpipe.runtime.transport.spawn import DeviceLost, SpawnTransport, _Latched, build_fingerprint

HARNESS_BOUND_S = 15.0  # a step that takes longer is a hang (the harness's bound)
EXIT_BOUND_S = 1.0  # the product's promise: a server whose client lied exits within 1 s
GRACE_S = 0.2  # teardown grace for the hostile peers (they never leave on their own)


def _bounded(fn, bound: float = HARNESS_BOUND_S) -> dict:
    """Run ``fn`` in a thread; fail (not hang) when it takes longer than ``bound``."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(bound)
    assert not th.is_alive(), f"hung for more than {bound} s"
    return out


def _exit_within(t: SpawnTransport, bound: float) -> float | None:
    """Seconds until the child exits, or None if it is still running after ``bound``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < bound:
        if t.child.poll() is not None:
            return time.monotonic() - t0
        time.sleep(0.002)
    return None


def _fd_count(pid: int | str) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _spawn() -> tuple[Client, SpawnTransport]:
    t = SpawnTransport()
    return Client(None, t.stage, transport=t), t  # type: ignore[arg-type]


def _kill_and_close(t: SpawnTransport) -> None:
    if t.child.poll() is None:
        t.child.kill()  # a spinning / parked server never answers Close: do not wait on it
    _bounded(t.close)


# -- server side: the lying cursor ---------------------------------------------------
@pytest.mark.parametrize("lie", ["behind", "ahead"])
def test_an_impossible_head_is_fatal_ring_cursor_and_the_server_exits_within_1s(lie: str) -> None:
    c, t = _spawn()
    try:
        for _ in range(3):
            c.present()
        t.wait_applied()
        ring = t.ring
        read = ring._write  # the server has applied everything: its read cursor is here
        ring.head = read - 8 if lie == "behind" else read + ring.capacity + 8
        t0 = time.monotonic()
        t.bell.ring()  # wake a parked server, as a publish would
        took = _exit_within(t, 5.0)
        assert took is not None and took < EXIT_BOUND_S, f"server still running ({took})"
        print(f"server exit after a lying cursor ({lie}): {1e3 * (time.monotonic() - t0):.1f} ms")
        assert t.child.returncode == EXIT_FATAL
        with pytest.raises(_Latched):
            t._on_control()
        assert (t.lost_reason.kind, t.lost_reason.reason) == ("ProtocolCorruption", "Ring.Cursor")
    finally:
        _kill_and_close(t)


# -- server side: control frames other than Close ------------------------------------
def _control_frame(kind: str) -> tuple[bytes, list[int]]:
    if kind == "Fatal":
        return encode("Fatal", kind="ProtocolCorruption", reason="client says so"), []
    if kind == "Report":
        return encode("Report", applied_seq=0, cpu_ns=0, knocks=0, parks=0, summary={}), []
    hello = encode("Hello", abi=CONTROL_ABI, fingerprint=build_fingerprint(),
                   config={}, segments=[])  # fmt: skip
    return hello, [0, 1, 2]  # a second Hello, with descriptors beside it


@pytest.mark.parametrize("kind", ["Fatal", "Report", "Hello"])
def test_a_control_frame_other_than_close_never_parks_the_consume_loop(kind: str) -> None:
    c, t = _spawn()
    try:
        c.present()
        t.wait_applied()  # the server is parked in its wait, polling the control socket
        payload, fds = _control_frame(kind)
        send_frame(t._ctrl, payload, fds)
        time.sleep(0.05)  # let it read the frame (and, if it blocks, block)

        first = t.emit_seq

        def feed() -> int:
            for _ in range(100):
                c.present()
            t.wait_applied()
            return t.applied_seq - first

        out = _bounded(feed, 5.0)
        assert out.get("value") == 100 and not t.lost
    finally:
        _kill_and_close(t)


def test_descriptors_a_client_floods_the_server_with_are_all_closed() -> None:
    c, t = _spawn()
    try:
        c.present()
        t.wait_applied()
        start = _fd_count(t.child_pid)
        payload, _ = _control_frame("Fatal")
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            for _ in range(100):  # 1,000 descriptors, 10 beside each frame
                send_frame(t._ctrl, payload, [null] * 10)
        finally:
            os.close(null)
        c.present()
        _bounded(t.wait_applied, 5.0)
        deadline = time.monotonic() + 2.0
        while _fd_count(t.child_pid) != start and time.monotonic() < deadline:
            time.sleep(0.01)
        after = _fd_count(t.child_pid)
        print(f"server fds: {start} before, {after} after 1,000 sent")
        assert after == start and not t.lost
    finally:
        _kill_and_close(t)


# -- client side: a hostile server ------------------------------------------------------
_PEER = r"""
import json, os, socket, struct, sys, time
from mgpipe.runtime.transport.control import CONTROL_ABI, TAGS, decode, encode
from mgpipe.runtime.transport.framing import FrameReader, encode_frame, send_frame
from mgpipe.runtime.transport.spawn import build_fingerprint

mode = sys.argv[1]
ctrl = socket.socket(fileno=3)
reader = FrameReader(ctrl)
hello = decode(reader.read_frame())
reader.recv_fds()

def hang():
    time.sleep(120)
    os._exit(0)

def raw(kind, text):
    send_frame(ctrl, struct.pack("<HH", TAGS[kind], 0) + text)

welcome = dict(abi=CONTROL_ABI, fingerprint=build_fingerprint(), segments=hello["segments"],
               backend="hostile")
null = os.open(os.devnull, os.O_RDONLY)
if mode == "silent":
    hang()
if mode == "garbage":
    ctrl.sendall(b"not a frame at all" * 4)
    hang()
if mode == "schema":
    raw("Welcome", json.dumps(dict(welcome, abi="1")).encode())
    hang()
if mode == "fatal":
    send_frame(ctrl, encode("Fatal", kind="BackendInit", reason="hostile"))
    hang()
if mode == "nested":
    raw("Welcome", b'{"a":' * 100000 + b"1" + b"}" * 100000)
    hang()
if mode == "welcome-fatal":  # one write: the client reads both frames in one read
    fatal = encode("Fatal", kind="BackendError", reason="hostile")
    ctrl.sendall(encode_frame(encode("Welcome", **welcome)) + encode_frame(fatal))
    hang()
send_frame(ctrl, encode("Welcome", **welcome), [null] * 16 if mode == "fds" else None)
if mode == "late-fatal":
    send_frame(ctrl, encode("Fatal", kind="BackendError", reason="hostile"))
    hang()
if mode == "late-garbage":
    ctrl.sendall(b"\0" * 64)
    hang()
if mode == "early-report":
    send_frame(ctrl, encode("Report", applied_seq=0, cpu_ns=0, knocks=0, parks=0, summary={}))
    hang()
while decode(reader.read_frame()).kind != "Close":
    pass
report = dict(applied_seq=0, cpu_ns=0, knocks=0, parks=0, summary={})
if mode == "report-seq":
    send_frame(ctrl, encode("Report", **dict(report, applied_seq=10**6)))
elif mode == "report-schema":
    raw("Report", json.dumps(dict(report, cpu_ns="soon")).encode())
elif mode == "report-nested":
    raw("Report", b'{"summary":' * 100000 + b"1" + b"}" * 100000)
elif mode == "fds":
    send_frame(ctrl, encode("Report", **report), [null] * 16)
    os._exit(0)
hang()
"""


def _hostile(mode: str, **kw) -> SpawnTransport:
    return SpawnTransport(server_argv=[sys.executable, "-P", "-c", _PEER, mode], grace=GRACE_S,
                          **kw)  # fmt: skip


@pytest.mark.parametrize("mode,kind,reason", [
    ("silent", "DeviceLost", "Handshake.Deadline"),
    ("garbage", "ProtocolMismatch", "Frame.Magic"),
    ("schema", "ProtocolMismatch", "Welcome.abi"),
    ("fatal", "BackendInit", "hostile"),
    ("nested", "ProtocolMismatch", "Welcome.Depth"),
])  # fmt: skip
def test_a_bad_handshake_reply_is_a_named_fault_and_the_constructor_returns(
    mode: str, kind: str, reason: str
) -> None:
    t0 = time.monotonic()
    out = _bounded(lambda: _hostile(mode, handshake_timeout=3.0))
    took = time.monotonic() - t0
    err = out.get("error")
    assert isinstance(err, PipeFatal), err
    assert not isinstance(err, RecursionError)
    assert (err.kind, err.reason) == (kind, reason)
    if mode == "silent":
        assert isinstance(err, DeviceLost) and 3.0 <= took < 3.0 + HARNESS_BOUND_S / 2


@pytest.mark.parametrize("mode,reason", [
    ("late-fatal", ("BackendError", "hostile")),
    ("welcome-fatal", ("BackendError", "hostile")),
    ("late-garbage", ("ProtocolMismatch", "Frame.Magic")),
    ("early-report", ("ProtocolMismatch", "Report.Early")),
])  # fmt: skip
def test_a_server_that_stays_alive_after_a_bad_frame_is_latched_and_killed(
    mode: str, reason: tuple[str, str]
) -> None:
    t = _hostile(mode)

    def run() -> None:
        Client(None, t.stage, transport=t).present()  # type: ignore[arg-type]
        t.wait_applied()  # the peer applies nothing: only its bad frame ends this wait
        t.close()

    out = _bounded(run)
    assert "error" not in out, out.get("error")
    assert t.lost and (t.lost_reason.kind, t.lost_reason.reason) == reason
    assert t.child.returncode == -9  # it never left on its own: teardown killed it


@pytest.mark.parametrize("mode,reason", [
    ("report-seq", "Report.applied_seq"),
    ("report-schema", "Report.cpu_ns"),
    ("report-nested", "Report.Depth"),
])  # fmt: skip
def test_a_bad_report_is_a_named_fault_and_close_returns(mode: str, reason: str) -> None:
    t = _hostile(mode)
    out = _bounded(t.close)
    assert "error" not in out, out.get("error")
    assert out["value"] is None and t.lost
    assert (t.lost_reason.kind, t.lost_reason.reason) == ("ProtocolMismatch", reason)
    assert t.child.returncode == -9


def test_descriptors_a_server_sends_are_closed_by_the_client() -> None:
    gc.collect()  # earlier transports' mappings (mmap's own descriptors) go first
    start = _fd_count("self")
    t = _hostile("fds")
    report = _bounded(t.close).get("value")
    assert report is not None and report["applied_seq"] == 0 and not t.lost
    del t  # its mappings hold descriptors (mmap's own) until they are collected
    gc.collect()
    after = _fd_count("self")
    print(f"client fds: {start} before, {after} after 32 sent")
    assert after == start
