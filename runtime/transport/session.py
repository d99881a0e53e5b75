"""The server end of one spawn connection: handshake, segments, the consume loop, the report.

:meth:`Session.accept` reads ``Hello`` from the control socket, refuses a different build
fingerprint (``Fatal{AbiMismatch}``, exit :data:`EXIT_ABI`), and maps the segments and
the doorbell end that arrived through ``SCM_RIGHTS``. :meth:`Session.consume` takes
records out of the shared ring (each copied once, then checked) and hands them to an
``apply`` callable until the client's ``Close``; it releases ``tail`` / ``appliedSeq``
every :data:`RELEASE_EVERY` records (§11.6) and whenever it runs dry, before it parks.

The client's death (EOF / hangup on the control socket or the doorbell) ends the process
at once (exit 0) after releasing the backend; a refusal is sent as ``Fatal{kind,
reason}`` before the process exits (:meth:`Session.fatal`).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from ..schema import tables as _t
from .control import CONTROL_ABI, decode, encode
from .control_page import CONSUMER_PARKED, PRODUCER_PARKED, ControlPage
from .framing import FrameReader, PeerClosed, ProtocolMismatch, send_frame
from .handshake import append_log, hello_config, hello_segments
from .shared_ring import SharedRing, segment_size
from .shm import SharedSegment
from .sockbell import SocketBell
from ..server.reverse import EventRing, ReplyMailbox

__all__ = ["Session", "RELEASE_EVERY", "EXIT_ABI", "EXIT_FATAL", "EXIT_BACKEND", "fingerprint"]

#: applied records between two releases of ``tail`` / ``appliedSeq`` (and on every idle).
RELEASE_EVERY = 64  # §11.6: "the consumer updates appliedSeq every 64 records"
EXIT_ABI, EXIT_FATAL, EXIT_BACKEND = 2, 3, 4


def fingerprint() -> str:
    """``kMGPipeBuildFingerprint`` of the tables this process runs."""
    return str(_t.tables().CATALOGUE_FINGERPRINT)


class _Close(Exception):
    def __init__(self, report: bool) -> None:
        self.report = report


class Session:
    """One accepted connection (see the module docstring)."""

    def __init__(self, ctrl: socket.socket) -> None:
        self.ctrl = ctrl
        self.reader = FrameReader(ctrl)
        self.config: dict[str, Any] = {}
        self.segments: list[dict[str, int]] = []
        self.releasers: list[Callable[[], None]] = []  # run before the process leaves
        self.ring: SharedRing
        self.bell: SocketBell
        self.stage_buf: memoryview
        self.stage_capacity = 0
        self.mailbox: ReplyMailbox
        self.events: EventRing
        self._cpu0 = self._cpu1 = 0

    # -- leaving ---------------------------------------------------------------
    def log(self, line: str) -> None:
        """Append ``line`` to this process's own log (its environment's
        ``MGPIPE_SERVE_LOG``, never a path the client sent), escaped to one line."""
        append_log(f"{line} pid={os.getpid()} tag={self.config.get('tag', '')}")

    def exit(self, code: int) -> None:
        for release in self.releasers:
            try:
                release()
            except Exception:  # noqa: BLE001 - leaving anyway
                pass
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def fatal(self, kind: str, reason: str, code: int) -> None:
        self.log(f'fatal Fatal{{{kind}, "{reason}"}}')
        try:
            send_frame(self.ctrl, encode("Fatal", kind=kind, reason=reason))
        except OSError:
            pass
        self.exit(code)

    # -- handshake -------------------------------------------------------------
    @classmethod
    def accept(cls, ctrl: socket.socket) -> "Session":
        s = cls(ctrl)
        try:
            msg = decode(s.reader.read_frame())
        except PeerClosed:
            s.exit(0)
        except ProtocolMismatch as exc:
            s.fatal(exc.kind, exc.reason, EXIT_FATAL)
        fds = s.reader.recv_fds()
        s.reader.accept_fds = False  # from here on every descriptor that arrives is closed
        if len(fds) != 5:
            for fd in fds:
                os.close(fd)
        if msg.kind != "Hello":
            s.fatal("ProtocolMismatch", f"Handshake.{msg.kind}", EXIT_FATAL)
        mine = fingerprint()
        if msg["abi"] != CONTROL_ABI:
            s.fatal("AbiMismatch", f"Hello.abi {msg['abi']} != {CONTROL_ABI}", EXIT_ABI)
        if msg["fingerprint"] != mine:
            s.fatal("AbiMismatch", f"Hello.fingerprint {msg['fingerprint']} != {mine}", EXIT_ABI)
        seg_cmd, seg_stage = _t.constant("kMGPipeSegCmd"), _t.constant("kMGPipeSegStage")
        seg_reply, seg_event = _t.constant("kMGPipeSegReply"), _t.constant("kMGPipeSegEvent")
        if len(fds) != 5:
            s.fatal("ProtocolMismatch", "Hello.segments", EXIT_FATAL)
        try:
            segs = hello_segments(msg["segments"])
        except ProtocolMismatch as exc:
            s.fatal(exc.kind, exc.reason, EXIT_FATAL)
        s.segments = msg["segments"]
        ring_cap, s.stage_capacity = segs[seg_cmd], segs[seg_stage]
        try:
            cmd = SharedSegment.adopt(fds[0], segment_size(ring_cap))
            stage = SharedSegment.adopt(fds[1], s.stage_capacity)
            bell_sock = socket.socket(fileno=fds[2])
            s.stage_buf = stage.buf
            page = ControlPage(cmd.buf)
            s.bell = SocketBell(page, bell_sock, ctrl, CONSUMER_PARKED, PRODUCER_PARKED,
                                s._on_control)  # fmt: skip
            s.ring = SharedRing(cmd.buf, ring_cap, "consumer", s.bell, s.bell)
            reply = SharedSegment.adopt(fds[3], segs[seg_reply])
            event = SharedSegment.adopt(fds[4], segs[seg_event])
            s.mailbox = ReplyMailbox(reply.buf)
            s.events = EventRing(event.buf)
            s.events.on_full = s.bell.ring  # knock a parked client: it drains, apply resumes
        except (OSError, ValueError) as exc:  # not the segments / doorbell Hello announced
            s.fatal("ProtocolMismatch", f"Hello.segments: {exc}", EXIT_FATAL)
        try:  # every config field of its type before the server reads one
            s.config = hello_config(msg["config"])
        except ProtocolMismatch as exc:
            s.fatal(exc.kind, exc.reason, EXIT_FATAL)
        s.log(f"serve transport=spawn backend={s.config.get('backend')}")
        return s

    def welcome(self, backend: str) -> None:
        self._cpu0 = time.process_time_ns()  # the Report's cpu_ns counts serving, not start-up
        send_frame(self.ctrl, encode("Welcome", abi=CONTROL_ABI, fingerprint=fingerprint(),
                                     segments=self.segments, backend=backend))  # fmt: skip

    # -- the loop ----------------------------------------------------------------
    def _on_control(self) -> None:
        """The control socket is readable or hung up: read what is there without blocking
        (a frame other than ``Close`` is read and dropped; the wait goes on)."""
        try:
            while True:  # frames already queued first (one read may carry several)
                while (payload := self.reader.next_frame()) is not None:
                    msg = decode(payload)
                    if msg.kind == "Close":
                        raise _Close(bool(msg["report"]))
                if not self.reader.fill(blocking=False):
                    break
        except PeerClosed:
            self.exit(0)  # the client is gone: release and leave at once
        except ProtocolMismatch as exc:
            self.fatal(exc.kind, exc.reason, EXIT_FATAL)
        if self.bell.dead:  # the doorbell hung up before the control socket did: the
            self.exit(0)  # client is gone all the same (its Close, if any, was read above)

    def consume(self, apply: Callable[[bytes], object]) -> bool:
        """Apply records until ``Close``; returns whether the client asked for the recording."""
        ring, bell = self.ring, self.bell
        pop, drain = ring.pop_copy, ring.drain_copy
        try:
            if self.reader.buffered:
                self._on_control()  # a frame that came with Hello: no poll will see it
            while True:  # every published record (released as it goes), then the wait
                if not drain(apply, RELEASE_EVERY):
                    bell.wait(lambda: ring.head != ring._read)
        except _Close as close:  # the client published everything before Close
            while (rec := pop()) is not None:
                apply(rec)
            ring.release()
            self._cpu1 = time.process_time_ns()  # serving ends here; the summary is not serving
            return close.report

    def report(self, summary: dict[str, Any]) -> None:
        send_frame(self.ctrl, encode("Report", applied_seq=self.ring.applied_seq,
                                     cpu_ns=(self._cpu1 or time.process_time_ns()) - self._cpu0, knocks=self.bell.knocks,
                                     parks=self.bell.parks, summary=summary))  # fmt: skip
