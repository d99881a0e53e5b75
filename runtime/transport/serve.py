"""The server process (seed 001 §15.1 ``mobilegl_server_main``): ``python -m`` this, or ``mgpipe serve``.

It finds the control socket on descriptor :data:`~.process.CONTROL_FD`, reads ``Hello``,
refuses a different build fingerprint (``Fatal{AbiMismatch}``, exit 2), maps the
segments that arrived through ``SCM_RIGHTS``, builds the backend named in the config
(any registered backend; a GPU context is created here, in the child) and the applier,
answers ``Welcome`` and applies records until the client's ``Close`` (then it sends its
``Report``: applied count, its own CPU time, doorbell counts, the backend's summary).

- The transport is hard-set to the in-process path: records go straight to the applier;
  the transport settings are dropped from this process's environment before anything
  is built, so nothing here can spawn again.
- The client's death (EOF / hangup) releases the backend and exits at once (exit 0).
- A record it refuses (``PipeFatal``, e.g. ``ProtocolCorruption`` from bytes a hostile
  client wrote) is reported as ``Fatal{kind, reason}`` on the control socket; exit 3.
- Every start appends one line to the config's ``log`` file:
  ``serve pid=<its own pid> transport=spawn backend=<name> tag=<config tag>``.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import Any

from ..schema import tables as _t
from ..server.applier import Applier
from ..errors import PipeFatal
from ..wire.stage import StageSegment
from .control import CONTROL_ABI, Message, decode, encode
from .control_page import CONSUMER_PARKED, PRODUCER_PARKED, ControlPage
from .framing import FrameReader, PeerClosed, ProtocolMismatch, send_frame
from .process import CONTROL_FD, child_env
from .shared_ring import SharedRing, segment_size
from .shm import SharedSegment
from .sockbell import SocketBell

__all__ = ["main", "CopyingStage"]

#: applied records between two releases of ``tail`` / ``appliedSeq`` (and on every idle).
RELEASE_EVERY = 16
EXIT_ABI, EXIT_FATAL, EXIT_BACKEND = 2, 3, 4


class CopyingStage(StageSegment):
    """``SEG_STAGE`` as the server sees it: every read view is a private copy (the client
    may rewrite shared bytes at any time; a checked value is never read again)."""

    def view(self, ref: Any, what: str = "Blob", writable: bool = False) -> memoryview:
        v = super().view(ref, what, writable)
        return v if writable else memoryview(bytes(v))


class _Close(Exception):
    def __init__(self, report: bool) -> None:
        self.report = report


class _Server:
    def __init__(self, ctrl: socket.socket) -> None:
        self.ctrl = ctrl
        self.reader = FrameReader(ctrl)
        self.backend: Any = None

    def fatal(self, kind: str, reason: str, code: int) -> None:
        try:
            send_frame(self.ctrl, encode("Fatal", kind=kind, reason=reason))
        except OSError:
            pass
        self.exit(code)

    def exit(self, code: int) -> None:
        close = getattr(self.backend, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001 - leaving anyway
                pass
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def on_control(self) -> None:
        try:
            while self.reader.fill(blocking=False):
                while (payload := self.reader.next_frame()) is not None:
                    msg = decode(payload)
                    if msg.kind == "Close":
                        raise _Close(bool(msg["report"]))
        except PeerClosed:
            self.exit(0)  # the client is gone: release and leave at once
        except ProtocolMismatch as exc:
            self.fatal(exc.kind, exc.reason, EXIT_FATAL)

    def hello(self) -> tuple[Message, list[int]]:
        try:
            msg = decode(self.reader.read_frame())
        except PeerClosed:
            self.exit(0)
        except ProtocolMismatch as exc:
            self.fatal(exc.kind, exc.reason, EXIT_FATAL)
        fds = self.reader.recv_fds()
        if msg.kind != "Hello":
            self.fatal("ProtocolMismatch", f"Handshake.{msg.kind}", EXIT_FATAL)
        mine = str(_t.tables().CATALOGUE_FINGERPRINT)
        if msg["abi"] != CONTROL_ABI or msg["fingerprint"] != mine:
            self.fatal("AbiMismatch", f"Hello.fingerprint {msg['fingerprint']} != {mine}", EXIT_ABI)
        return msg, fds


def _log(config: dict[str, Any]) -> None:
    path = config.get("log")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"serve pid={os.getpid()} transport=spawn "
                    f"backend={config.get('backend')} tag={config.get('tag', '')}\n")  # fmt: skip


def _make_backend(name: str) -> Any:
    from ..backends.registry import make_backend  # any registered backend

    return make_backend(name)


def serve(ctrl: socket.socket) -> None:
    srv = _Server(ctrl)
    msg, fds = srv.hello()
    config = msg["config"]
    segs = {int(s["seg"]): int(s["size"]) for s in msg["segments"]}
    seg_cmd, seg_stage = _t.constant("kMGPipeSegCmd"), _t.constant("kMGPipeSegStage")
    if len(fds) != 3 or set(segs) != {seg_cmd, seg_stage}:
        srv.fatal("ProtocolMismatch", "Hello.segments", EXIT_FATAL)
    _log(config)
    ring_cap, stage_cap = segs[seg_cmd], segs[seg_stage]
    cmd = SharedSegment.adopt(fds[0], segment_size(ring_cap))
    stage_seg = SharedSegment.adopt(fds[1], stage_cap)
    bell_sock = socket.socket(fileno=fds[2])
    page = ControlPage(cmd.buf)
    bell = SocketBell(page, bell_sock, ctrl, CONSUMER_PARKED, PRODUCER_PARKED, srv.on_control)
    ring = SharedRing(cmd.buf, ring_cap, "consumer", bell, bell)
    try:
        srv.backend = _make_backend(str(config.get("backend", "recorder")))
    except Exception as exc:  # noqa: BLE001 - reported to the client by name
        srv.fatal("BackendInit", f"{config.get('backend')}: {exc}", EXIT_BACKEND)
    applier = Applier(srv.backend, CopyingStage(stage_cap, stage_seg.buf))
    send_frame(ctrl, encode("Welcome", abi=CONTROL_ABI, fingerprint=str(_t.tables().CATALOGUE_FINGERPRINT),
                            segments=msg["segments"], backend=str(config.get("backend"))))  # fmt: skip
    apply = applier.apply
    pop = ring.pop_copy
    pending = 0
    report = False
    try:
        try:
            while True:
                rec = pop()
                if rec is None:
                    if pending:
                        ring.release()
                        pending = 0
                    bell.wait(lambda: ring.head != ring._read)
                    continue
                apply(rec)
                pending += 1
                if pending >= RELEASE_EVERY:
                    ring.release()
                    pending = 0
        except _Close as close:  # the client published everything before Close
            report = close.report
            while (rec := pop()) is not None:
                apply(rec)
            ring.release()
    except PipeFatal as exc:
        srv.fatal(exc.kind, exc.reason, EXIT_FATAL)
    except Exception as exc:  # noqa: BLE001 - a backend fault, reported by name
        srv.fatal("BackendError", f"{type(exc).__name__}: {exc}", EXIT_BACKEND)
    summary: dict[str, Any] = {}
    digest = getattr(srv.backend, "recording_digest", None)
    if callable(digest):
        summary["recording_digest"] = digest()
    if report and callable(getattr(srv.backend, "to_json", None)):
        summary["recording"] = srv.backend.to_json()
    send_frame(ctrl, encode("Report", applied_seq=ring.applied_seq, cpu_ns=time.process_time_ns(),
                            knocks=bell.knocks, parks=bell.parks, summary=summary))  # fmt: skip
    srv.exit(0)


def main() -> int:
    # hard-set the in-process path before anything is built (the spawner dropped it too)
    env = child_env()
    os.environ.clear()
    os.environ.update(env)
    ctrl = socket.socket(fileno=CONTROL_FD)
    serve(ctrl)
    return 0


if __name__ == "__main__":
    sys.exit(main())
