"""The real spawn server against hostile handshakes (issue 21 items 7, 8): every ``Hello``
a client can send is a named ``Fatal`` before the server exits (exit 2 / 3, never a
traceback's exit 1); its log is its own (the environment's ``MGPIPE_SERVE_LOG``, never a
path in ``Hello``), one escaped line per event; no descriptor the client made
inheritable reaches it."""

from __future__ import annotations

import json
import os
import socket
import struct

import pytest

from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.server.reverse import EventRing, ReplyMailbox
from mgpipe.runtime.transport import control
from mgpipe.runtime.transport.framing import FrameReader, send_frame
from mgpipe.runtime.transport.handshake import SERVE_LOG_ENV, hello_segments, log_line
from mgpipe.runtime.transport.process import Child, child_env, inherited_fds
from mgpipe.runtime.transport.spawn import SpawnTransport, build_fingerprint

CMD, STAGE = _t.constant("kMGPipeSegCmd"), _t.constant("kMGPipeSegStage")
REPLY, EVENT = _t.constant("kMGPipeSegReply"), _t.constant("kMGPipeSegEvent")


def _segs(ring: object = 1 << 20, stage: object = 1 << 20) -> list:
    """The spawn client's segment table: SEG_CMD and SEG_STAGE as given, SEG_REPLY and
    SEG_EVENT at the reverse channel's own sizes."""
    return [{"seg": CMD, "size": ring}, {"seg": STAGE, "size": stage},
            {"seg": REPLY, "size": ReplyMailbox.size()}, {"seg": EVENT, "size": EventRing.segment_size()}]


def _hello(**over: object) -> bytes:
    body = dict(abi=control.CONTROL_ABI, fingerprint=build_fingerprint(), config={},
                segments=_segs())  # fmt: skip
    body.update(over)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return struct.pack("<HH", control.TAGS["Hello"], 0) + text.encode()


def _serve(payload: bytes, env: dict | None = None) -> tuple[object, int]:
    """(the server's reply, its exit status) for one raw Hello frame, sent with real
    segments and a doorbell (so each check is reached, not the segments' mapping)."""
    from mgpipe.runtime.transport.shared_ring import segment_size
    from mgpipe.runtime.transport.shm import SharedSegment

    ctrl, child_ctrl = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    bell, child_bell = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    child = Child(child_ctrl.fileno(), child_env(extra=env))
    child_ctrl.close()
    cmd, stage = SharedSegment.create("cmd", segment_size(1 << 20)), SharedSegment.create("stage", 1 << 20)
    reply = SharedSegment.create("reply", ReplyMailbox.size())
    event = SharedSegment.create("event", EventRing.segment_size())
    try:
        send_frame(ctrl, payload, [cmd.fd, stage.fd, child_bell.fileno(), reply.fd, event.fd])
        msg = control.decode(FrameReader(ctrl).read_frame())
    finally:
        for sock in (ctrl, bell, child_bell):
            sock.close()
        for seg in (cmd, stage, reply, event):
            seg.release_fd()
    return msg, child.wait()


HOSTILE = {  # name -> (Hello payload, Fatal kind, reason prefix, exit status)
    "abi_2": (_hello(abi=2), "AbiMismatch", "Hello.abi 2 != 1", 2),
    "segment_size_float": (_hello(segments=_segs(65536.5)), "ProtocolMismatch",
                           "Hello.segments", 3),
    "segment_size_bool": (_hello(segments=_segs(stage=True)), "ProtocolMismatch",
                          "Hello.segments", 3),
    "stage_size_0": (_hello(segments=_segs(stage=0)), "ProtocolMismatch",
                     "Hello.segments.Stage", 3),
    "stage_size_4097": (_hello(segments=_segs(stage=4097)), "ProtocolMismatch",
                        "Hello.segments.Stage", 3),
    "stage_size_-8": (_hello(segments=_segs(stage=-8)), "ProtocolMismatch",
                      "Hello.segments.Stage", 3),
    "ring_not_power_of_two": (_hello(segments=_segs(ring=3 << 12)), "ProtocolMismatch",
                              "Hello.segments.Cmd", 3),
    "segments_rows_wrong_type": (_hello(segments=["cmd", 7]), "ProtocolMismatch",
                                 "Hello.segments", 3),
    "segments_wrong_type": (_hello(segments="x"), "ProtocolMismatch", "Hello.segments", 3),
    "config_log_path": (_hello(config={"log": "/tmp/x"}), "ProtocolMismatch",
                        "Hello.config.log", 3),
    "config_log_3": (_hello(config={"log": 3}), "ProtocolMismatch", "Hello.config.log", 3),
    "config_summary_wrong_type": (_hello(config={"summary": "stats"}), "ProtocolMismatch",
                                  "Hello.config.summary", 3),
    "config_summary_rows": (_hello(config={"summary": [[1]]}), "ProtocolMismatch",
                            "Hello.config.summary", 3),
    "nested_2000": (struct.pack("<HH", control.TAGS["Hello"], 0) + b'{"abi":' + b"[" * 2000
                    + b"]" * 2000 + b"}", "ProtocolMismatch", "Hello.Depth", 3),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_hello_is_a_named_fatal_and_no_traceback(name: str) -> None:
    payload, kind, reason, status = HOSTILE[name]
    msg, code = _serve(payload)
    assert msg.kind == "Fatal" and msg["kind"] == kind, msg  # type: ignore[attr-defined]
    assert msg["reason"].startswith(reason), msg["reason"]  # type: ignore[index]
    assert code == status  # a traceback would be exit 1


def test_segment_checks_accept_what_the_client_sends() -> None:
    """Control: the spawn client's own table passes (and a planted float fails)."""
    assert hello_segments(_segs(1 << 20, 4 << 20)) == {
        CMD: 1 << 20, STAGE: 4 << 20, REPLY: ReplyMailbox.size(), EVENT: EventRing.segment_size()}
    with pytest.raises(Exception, match="Hello.segments"):
        hello_segments(_segs(1 << 20, float(4 << 20)))


@pytest.mark.parametrize("where", ["missing_dir", "a_directory"])
def test_an_unwritable_log_is_no_failure(where: str, tmp_path) -> None:
    path = tmp_path / "nope" / "log" if where == "missing_dir" else tmp_path
    t = SpawnTransport(env={SERVE_LOG_ENV: str(path)})
    t.close()
    assert t.child.returncode == 0


def test_the_log_is_the_servers_own_and_one_line_per_event(tmp_path) -> None:
    log = tmp_path / "server.log"
    t = SpawnTransport(config={"log": str(log), "tag": "a\nserve transport=forged pid=1 tag=x"})
    t.close()
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("serve transport=spawn backend=recorder pid=")
    assert "\\x0aserve transport=forged" in lines[0]  # the newline escaped, not a line
    assert log_line("a\tb") == "a\\x09b"


def test_an_inheritable_client_descriptor_does_not_reach_the_server() -> None:
    r, w = os.pipe()
    os.set_inheritable(r, True)
    try:
        assert r in inherited_fds(-1)
        t = SpawnTransport()
        try:
            fds = os.listdir(f"/proc/{t.child_pid}/fd")
            target = os.readlink(f"/proc/self/fd/{r}")
            theirs = {os.readlink(f"/proc/{t.child_pid}/fd/{fd}") for fd in fds
                      if os.path.exists(f"/proc/{t.child_pid}/fd/{fd}")}  # fmt: skip
            assert target not in theirs
        finally:
            t.close()
    finally:
        os.close(r)
        os.close(w)


def test_a_well_formed_hello_is_welcomed() -> None:
    """Control: the same frame with every field right is answered ``Welcome`` (and the
    server leaves quietly, exit 0, when the client then goes)."""
    msg, code = _serve(_hello(config={"backend": "recorder", "tag": "t", "summary": ["stats"],
                                      "capture": False}))  # fmt: skip
    assert msg.kind == "Welcome" and code == 0  # type: ignore[attr-defined]
