"""``spawn``: the applier and backend in a child process, over shared memory (seed 001 §11, §15).

:class:`SpawnTransport` is a transport like ``inproc`` -- records are encoded into a
:class:`~.shared_ring.SharedRing` -- except that the consumer is a child process
(:mod:`.serve`) holding the applier and the backend. The client creates the segments
(``SEG_CMD`` = control page + ring, ``SEG_STAGE``), starts the child, and sends
``Hello{abi, fingerprint, config, segments}`` with the segments' descriptors and the
child's doorbell end through ``SCM_RIGHTS``; the child answers ``Welcome`` or
``Fatal{AbiMismatch}``.

**The device-lost latch** (seed 001 §15.3, seed 004 P6). The peer's death is seen as
hangup / EOF of the control socket or the doorbell; a ``Fatal`` from the peer (e.g.
``ProtocolCorruption`` found in what this side wrote) arrives on the control socket.
Either latches :attr:`lost` (with :attr:`lost_reason`): from then on ``submit``,
``flush``, ``wait_applied`` and ``close`` return at once and move nothing -- nothing
blocks, nothing raises. After :meth:`close` of a live context they raise
``TransportShutdown("Transport.Closed")``, as on the other transports; a thread that
submits while another is submitting is ``SecondProducer`` (the ring has one producer;
the context may move between threads, as a GL context may). A stopped peer is neither: every wait blocks (no timeout)
until it continues.

**A hostile server** never hangs the client: the constructor gives the server
``handshake_timeout`` seconds to answer ``Hello`` (``DeviceLost("Handshake.Deadline")``
past it); a reply no server of this protocol sends -- garbage, a wrong schema, a
control message a server never sends, a ``Report`` counting records that were never
emitted -- is a named :class:`~.framing.ProtocolMismatch`; descriptors a server sends
are closed on arrival; and every teardown waits at most ``grace`` seconds for the child
to leave after its sockets close, then kills it.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from typing import Any

from ..schema import tables as _t
from ..errors import PipeFatal, SecondProducer, TransportShutdown
from ..wire.stage import StageSegment
from .base import compile_door, remembered
from .control import CONTROL_ABI, decode, encode
from .control_page import CONSUMER_PARKED, PRODUCER_PARKED, ControlPage
from .framing import FrameReader, PeerClosed, ProtocolMismatch, send_frame
from .handshake import SERVE_LOG_ENV
from .process import Child, child_env
from .shared_ring import SharedRing, segment_size
from .shm import SharedSegment
from ..server.reverse import EventRing, ReplyMailbox
from .sockbell import SocketBell

__all__ = ["SpawnTransport", "DeviceLost", "AbiMismatch", "build_fingerprint"]

DEFAULT_RING = 1 << 20
DEFAULT_STAGE = 4 << 20
#: records committed between two publishes (§11.6: "every record, or amortised over 8-16");
#: every wait publishes first, so this only thins the doorbell traffic.
DEFAULT_PUBLISH_EVERY = 16
#: seconds the server has to answer ``Hello`` (it builds its backend first: a GPU context).
DEFAULT_HANDSHAKE_S = 30.0
#: seconds a torn-down child has to leave once its sockets are closed before it is killed.
DEFAULT_GRACE_S = 1.0


# The doors' source (compiled per door by :func:`~.base.compile_door`). A record that
# fits before ``ring._end`` is packed in place; any other takes the ring's own path.
_DOOR = """
def door($params):
    nonlocal sent
    if not acquire(False):
        raise SecondProducer("Transport.Producer")
    try:
        if t.lost or t._closed:
            return t._after_close()
        # base.RING_PUT: the record written in place; the lines below: its else: branch
        $ring_put
            try:
                view = ring.reserve(size)
                $put_view
                seq = ring.commit()
            except _Latched:
                return ring.emit_seq
        if seq - ring._published >= every:
            try:
                ring.publish()
            except _Latched:
                return ring.emit_seq
        sent += 1
        return seq
    finally:
        release()
"""


class DeviceLost(PipeFatal):
    """The server process is gone (``reason``: how it was seen)."""

    def __init__(self, reason: str) -> None:
        super().__init__("DeviceLost", reason)


class AbiMismatch(PipeFatal):
    def __init__(self, reason: str) -> None:
        super().__init__("AbiMismatch", reason)


class _Latched(Exception):
    """Unwinds a wait once the latch is set."""


def build_fingerprint() -> str:
    """The build fingerprint of the tables this process runs (``kMGPipeBuildFingerprint``)."""
    return str(_t.tables().CATALOGUE_FINGERPRINT)


class SpawnTransport:
    """The client side of ``spawn`` (see the module docstring)."""

    def __init__(
        self,
        backend: str = "recorder",
        *,
        ring_capacity: int = DEFAULT_RING,
        stage_capacity: int = DEFAULT_STAGE,
        publish_every: int = DEFAULT_PUBLISH_EVERY,
        config: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        server_argv: list[str] | None = None,
        handshake_timeout: float = DEFAULT_HANDSHAKE_S,
        grace: float = DEFAULT_GRACE_S,
    ) -> None:
        self.lost = False
        self._grace = grace
        self.lost_reason: PipeFatal | None = None
        self.report: dict[str, Any] | None = None
        self._closed = False
        self._close_sent = False
        #: held while a record goes into the ring: a second thread arriving meanwhile is
        #: refused by name before it touches the ring (a context may move between threads)
        self._producing = threading.Lock()
        self._publish_every = max(1, publish_every)
        self._cmd = SharedSegment.create("cmd", segment_size(ring_capacity))
        self._stage_seg = SharedSegment.create("stage", stage_capacity)
        self.stage = StageSegment(stage_capacity, self._stage_seg.buf)
        # the reverse channel: SEG_REPLY (server-written slots) and SEG_EVENT (the event ring)
        self._reply_seg = SharedSegment.create("reply", ReplyMailbox.size())
        self._event_seg = SharedSegment.create("event", EventRing.segment_size())
        #: (mailbox, events) the client's ReverseLink reads
        self.reverse = (ReplyMailbox(self._reply_seg.buf), EventRing(self._event_seg.buf))
        ctrl, child_ctrl = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        bell, child_bell = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._ctrl, self._bell = ctrl, bell
        self._reader = FrameReader(ctrl, accept_fds=False)  # a server sends none
        cfg = {"backend": backend, **(config or {})}
        log = cfg.pop("log", None)  # the server's own log: its environment, not the Hello
        env = {**(env or {}), SERVE_LOG_ENV: str(log)} if log else env
        try:
            self.child = Child(child_ctrl.fileno(), child_env(extra=env), server_argv)
        finally:
            child_ctrl.close()
        page = ControlPage(self._cmd.buf)
        self.bell = SocketBell(page, bell, ctrl, PRODUCER_PARKED, CONSUMER_PARKED, self._on_control)
        self.ring = SharedRing(self._cmd.buf, ring_capacity, "producer", self.bell, self.bell)
        segs = [
            {"seg": _t.constant("kMGPipeSegCmd"), "size": ring_capacity},
            {"seg": _t.constant("kMGPipeSegStage"), "size": stage_capacity},
            {"seg": _t.constant("kMGPipeSegReply"), "size": ReplyMailbox.size()},
            {"seg": _t.constant("kMGPipeSegEvent"), "size": EventRing.segment_size()},
        ]
        try:
            hello = encode("Hello", abi=CONTROL_ABI, fingerprint=build_fingerprint(),
                           config=cfg, segments=segs)  # fmt: skip
            send_frame(ctrl, hello, [self._cmd.fd, self._stage_seg.fd, child_bell.fileno(),
                                     self._reply_seg.fd, self._event_seg.fd])  # fmt: skip
        finally:
            child_bell.close()
        self.welcome = self._handshake(handshake_timeout)
        if self._reader.buffered:  # a frame came with Welcome: no
            try:  # wait's poll will see it (it is read already), so it is handled here
                self._on_control()
            except _Latched:
                pass
        for seg in (self._cmd, self._stage_seg, self._reply_seg, self._event_seg):
            seg.release_fd()  # the child has mapped them: the mappings keep the memory

    # -- handshake / control ---------------------------------------------------
    def _read_reply(self, timeout: float) -> bytes:
        """The server's first frame, within ``timeout`` seconds (DeviceLost past it)."""
        deadline = time.monotonic() + timeout
        poll = select.poll()
        poll.register(self._ctrl.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        while (frame := self._reader.next_frame()) is None:
            left = deadline - time.monotonic()
            if left <= 0 or not poll.poll(left * 1000.0):
                raise DeviceLost("Handshake.Deadline")
            self._reader.fill(blocking=False)
        return frame

    def _handshake(self, timeout: float) -> dict[str, Any]:
        try:
            msg = decode(self._read_reply(timeout))
        except PeerClosed as exc:
            self._teardown()
            raise DeviceLost(f"Handshake.{type(exc).__name__}") from exc
        except (ProtocolMismatch, DeviceLost):
            self._teardown()
            raise
        if msg.kind == "Fatal":
            self._teardown()
            raise PipeFatal(msg["kind"], msg["reason"])
        if msg.kind != "Welcome" or msg["abi"] != CONTROL_ABI:
            self._teardown()
            raise ProtocolMismatch(f"Handshake.{msg.kind}")
        if msg["fingerprint"] != build_fingerprint():
            self._teardown()
            raise AbiMismatch(f"Welcome.fingerprint {msg['fingerprint']} != {build_fingerprint()}")
        return msg.body

    def _latch(self, reason: PipeFatal) -> None:
        if not self.lost:
            self.lost = True
            self.lost_reason = reason
            self.bell.kill()

    def _on_control(self) -> None:
        """Control socket readable / hung up during a wait: latch on EOF or a Fatal.

        A doorbell that hung up while the control socket has not (the kernel closes a
        dead process's descriptors in no set order) gives the control socket
        :data:`DEFAULT_GRACE_S` to say how -- its EOF or a Fatal -- then latches
        ``DeviceLost("Doorbell.Hangup")``."""
        deadline = time.monotonic() + DEFAULT_GRACE_S
        self._read_control()
        while not self.lost and self.bell.dead and self.report is None and not self._reader.eof:
            if not self._reader.readable_within(deadline - time.monotonic()):
                self._latch(DeviceLost("Doorbell.Hangup"))
                break
            self._read_control()
        if self.lost:
            raise _Latched()

    def _read_control(self) -> None:
        """Handle every frame queued or readable now, without blocking; latch on a fault."""
        try:
            while True:  # frames already queued first (one read may carry several)
                while (payload := self._reader.next_frame()) is not None:
                    msg = decode(payload)
                    if msg.kind == "Fatal":
                        self._latch(PipeFatal(msg["kind"], msg["reason"]))
                    elif msg.kind == "Report":
                        if not self._close_sent:  # a Report answers Close, nothing else
                            raise ProtocolMismatch("Report.Early")
                        if not 0 <= msg["applied_seq"] <= self.ring.emit_seq:
                            raise ProtocolMismatch("Report.applied_seq")
                        self.report = msg.body
                    else:  # a server never sends Hello / Welcome-again / Close
                        raise ProtocolMismatch(f"Ctrl.{msg.kind}")
                if not self._reader.fill(blocking=False):
                    break
        except PeerClosed:
            if self.report is None:  # after the Report, EOF is the orderly exit
                self._latch(DeviceLost("Control.Hangup"))
        except ProtocolMismatch as exc:
            self._latch(exc)

    # -- transport API -----------------------------------------------------------
    @property
    def emit_seq(self) -> int:
        return self.ring.emit_seq

    @property
    def applied_seq(self) -> int:
        return self.ring.applied_seq

    @property
    def child_pid(self) -> int:
        return self.child.pid

    def put(self, size: int, pack: Any, values: tuple) -> int:
        """Reserve ``size`` bytes in the ring, ``pack(view, 0, *values)`` there, commit
        (the emitter's compiled path); a no-op once lost, refused after :meth:`close` and
        while another thread is inside ``put`` / ``submit`` (:class:`SecondProducer`)."""
        if not self._producing.acquire(False):
            raise SecondProducer("Transport.Producer")
        try:
            if self.lost or self._closed:
                return self._after_close()
            ring = self.ring
            try:
                view = ring.reserve(size)
                pack(view, 0, *values)
                seq = ring.commit()
                if seq - ring.published_seq >= self._publish_every:
                    ring.publish()
            except _Latched:
                return ring.emit_seq
            return seq
        finally:
            self._producing.release()

    def door(self, size: int, pack: Any, prefix: tuple, memo: int = 0) -> Any:
        """A compiled :meth:`put` for records of one ``size`` (the emitter's hot path):
        the same checks, the record packed straight into the shared ring's next bytes when
        it fits before :attr:`Ring._end` (the end of the lap or of the space released when
        the producer last looked at ``tail``: ``tail`` is read again only past it;
        otherwise through :meth:`Ring.reserve`), committed, published per
        ``publish_every`` (against the producer's own copy of ``published_seq``: no
        shared slot read per record), counted (``sent``, the emitter's
        :func:`~.base.door_cell`), in one frame (``pack`` writes the header from the
        tables; a struct packer's door takes its values by position:
        :func:`~.base.compile_door`). ``memo`` > 0: records remembered by their values
        (:class:`~.base.remembered`), copied, not packed."""
        ring = self.ring
        ring._check_size(size, None)
        env = {"ring": ring, "buf": ring._buf, "mask": ring._mask, "size": size,
               "every": self._publish_every, "acquire": self._producing.acquire,
               "release": self._producing.release, "t": self, "_Latched": _Latched,
               "SecondProducer": SecondProducer}  # fmt: skip
        if memo:
            cache = remembered(size, pack, prefix, memo)
            env.update(get=cache.get, fill=cache.fill)
            return compile_door(_DOOR, env, pack, (), "spawn memo door", memo=True)
        return compile_door(_DOOR, env, pack, prefix, "spawn door")

    def submit(self, record: bytes | bytearray | memoryview) -> int:
        if not self._producing.acquire(False):  # two producers at once corrupt the ring
            raise SecondProducer("Transport.Producer")
        try:
            if self.lost or self._closed:
                return self._after_close()
            ring = self.ring
            try:
                seq = ring.emit(record)
                if seq - ring.published_seq >= self._publish_every:
                    ring.publish()
            except _Latched:
                return ring.emit_seq
            return seq
        finally:
            self._producing.release()

    def _after_close(self) -> int:
        """A call after :meth:`close` raises (a lost context's calls stay no-ops: GL's)."""
        if self._closed and not self.lost:
            raise TransportShutdown("Transport.Closed")
        return self.ring.emit_seq

    def flush(self) -> None:
        if self._closed and not self.lost:
            raise TransportShutdown("Transport.Closed")
        if not self.lost:
            self.ring.publish()

    def wait_applied(self, seq: int | None = None, timeout: float | None = None) -> None:
        """Block until record ``seq`` (default: all) is applied; returns at once when lost."""
        if self._closed and not self.lost:
            raise TransportShutdown("Transport.Closed")
        if self.lost:
            return
        ring = self.ring
        target = ring.emit_seq if seq is None else seq
        try:
            ring.wait_applied(target)
        except _Latched:
            return

    def wait_polling(self, seq: int, poll: Any) -> None:
        """Block until record ``seq`` is applied, running ``poll()`` at every wake-up (the
        reverse link drains the event ring there: a server stopped on a full ring knocks
        and resumes once drained); returns at once when lost."""
        if self.lost:
            return
        ring = self.ring
        if seq > ring.published_seq:
            ring.publish()
        try:
            self.bell.wait(lambda: bool(poll()) or ring.applied_seq >= seq)
        except _Latched:
            return

    def stage_bytes(self, size: int) -> bytes:
        """The first ``size`` bytes of ``SEG_STAGE`` as they are now (after :meth:`close`:
        what the server left there, e.g. the capture a ``capture`` config asks for)."""
        return bytes(self._stage_seg.buf[:size])

    def close(self, report: bool = False) -> dict[str, Any] | None:
        """Drain, ask the server for its report (``report``: with the recording), reap it."""
        if self._closed:
            return self.report
        self._closed = True
        try:
            if not self.lost:
                self.ring.wait_applied(self.ring.emit_seq)  # drain (wait_applied refuses now)
            if not self.lost:
                self._close_sent = True
                send_frame(self._ctrl, encode("Close", report=report))
                while self.report is None and not self.lost:
                    self.bell.wait(lambda: self.report is not None)
        except _Latched:
            pass
        except OSError:
            self._latch(DeviceLost("Control.Send"))
        self._teardown()
        return self.report

    def abandon(self, grace: float = 1.0) -> None:
        """Leave without a report (the client is unwinding: Ctrl-C, an error): close the
        sockets -- the server sees EOF at its next wait and exits quietly, releasing its
        backend -- and reap it; one still busy after ``grace`` seconds is killed."""
        if self._closed:
            return
        self._closed = True
        for s in (self._ctrl, self._bell):
            s.close()
        for seg in (self._cmd, self._stage_seg, self._reply_seg, self._event_seg):
            seg.release_fd()
        self._reap(grace)

    def _teardown(self) -> None:
        """Close the sockets and reap the child: it has ``grace`` seconds to leave (a
        correct server exits at EOF at once), then it is killed -- never an unbounded wait."""
        for s in (self._ctrl, self._bell):
            s.close()
        for seg in (self._cmd, self._stage_seg, self._reply_seg, self._event_seg):
            seg.release_fd()
        self._closed = True
        self._reap(self._grace)

    def _reap(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        while self.child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        if self.child.poll() is None:
            self.child.kill()
        self.child.wait()

    def __enter__(self) -> "SpawnTransport":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
