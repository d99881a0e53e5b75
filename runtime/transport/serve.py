"""The server process (seed 001 §15.1 ``mobilegl_server_main``): ``python -m`` this, or ``mgpipe serve``.

It accepts one :class:`~.session.Session` on descriptor :data:`~.process.CONTROL_FD`,
builds the backend named in the config (any registered backend; a GPU context is created
here, in the child) and the applier, answers ``Welcome``, applies records until the
client's ``Close`` and sends its ``Report`` (applied count, its own CPU time since
``Welcome``, doorbell counts, and what the backend says about itself: its recording
digest, its raw stream digest, ``stats()``, ``info()`` and, when asked, the recording).
The config's ``summary`` (a list of :data:`SUMMARY_METHODS` keys) narrows what the
backend is asked at the end: a recorder's recording digest replays every record, which a
caller that only wants the server's CPU need not wait for.

- The transport is hard-set to the in-process path: records go straight to the applier,
  and the transport settings are dropped from this process's environment before anything
  is built, so nothing here can spawn again.
- A record it refuses (``PipeFatal``, e.g. ``ProtocolCorruption`` from bytes a hostile
  client wrote) is reported as ``Fatal{kind, reason}`` on the control socket (exit 3);
  a backend fault as ``Fatal{BackendError, ...}`` (exit 4).
- The client's departure ends it quietly (exit 0, no traceback) whenever it happens, a
  reply to a client that has gone included; it ignores SIGINT (the client handles Ctrl-C).
- The config's ``capture`` (true): after the last record, before the backend is released,
  its default framebuffer (``read_default_framebuffer()``) is written at the start of
  ``SEG_STAGE`` and the summary's ``capture`` gives its ``[width, height]``.
- Everything it compiles is compiled before ``Welcome`` (:func:`prepare`: every opcode's
  handler and decoder), so the first frames pay no ``compile()`` and the Report's CPU is
  serving alone.
- Its own log (the config's ``log`` file) gets one line per start:
  ``serve transport=spawn backend=<name> pid=<its own pid> tag=<config tag>``.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import Any

from ..errors import PipeFatal
from ..server.applier import Applier
from ..wire.spec import all_specs
from ..wire.stage import StageSegment, _ref_fields
from .process import CONTROL_FD, child_env
from .session import EXIT_BACKEND, EXIT_FATAL, Session

__all__ = [
    "main",
    "serve",
    "prepare",
    "server_applier",
    "CopyingStage",
    "DecoderStage",
    "backend_summary",
    "SUMMARY_METHODS",
]


class CopyingStage(StageSegment):
    """``SEG_STAGE`` as the server sees it: every read view is a private copy (the client
    may rewrite shared bytes at any time; a checked value is never read again).

    Once :meth:`follow` names the server context, the copy is made once per record: every
    read view of the same bytes while one record is applied (the decoder's view of the
    blob, then the backend's own ``ctx.stage.view`` of the same reference, as the GLES
    backend's ``_blob`` asks) is the same private copy -- one copy between the shared
    segment and the driver call, and one value of those bytes for everyone who reads them
    in that record (issue 20: a 2 MiB upload was copied twice here). The next record copies
    afresh. A writable view (a read-back's destination) is the shared bytes, never kept.
    ``copies`` / ``copied_bytes`` count the copies made."""

    def __init__(self, capacity: int, buffer: Any = None) -> None:
        super().__init__(capacity, buffer)
        self.copies = 0
        self.copied_bytes = 0
        self._ctx: Any = None
        self._memo_seq = -1
        self._memo: dict[tuple[int, int], tuple[bytes, memoryview]] = {}

    def follow(self, ctx: Any) -> None:
        """Key the per-record copy on ``ctx.seq`` (the applier's record ordinal)."""
        self._ctx = ctx

    def private(self, ref: Any, what: str = "Blob") -> bytes:
        """The record's private copy of the bytes ``ref`` names (made on its first ask)."""
        ref = ref if type(ref) is tuple else _ref_fields(ref)
        ctx = self._ctx
        if ctx is not None:
            if ctx.seq != self._memo_seq:
                self._memo_seq, self._memo = ctx.seq, {}
            kept = self._memo.get(ref[:2])
            if kept is not None:
                return kept[0]
        v = super().view(ref, what)
        self.copies += 1
        self.copied_bytes += len(v)
        mine = bytes(v)
        if ctx is not None:
            self._memo[ref[:2]] = (mine, memoryview(mine))
        return mine

    def view(self, ref: Any, what: str = "Blob", writable: bool = False) -> memoryview:
        if writable:
            return super().view(ref, what, writable)
        ref = ref if type(ref) is tuple else _ref_fields(ref)
        mine = self.private(ref, what)
        kept = self._memo.get(ref[:2]) if self._ctx is not None else None
        return kept[1] if kept is not None else memoryview(mine)

    def for_decoder(self) -> "DecoderStage":
        """This stage as the applier's decoder should read it (:class:`DecoderStage`)."""
        return DecoderStage(self)


class DecoderStage:
    """The decoder's door to a :class:`CopyingStage`: ``view`` answers the record's private
    copy as the ``bytes`` object itself, so the decoder's ``bytes(view)`` (``Decoded.blob``)
    is that object, not a second copy, and the backend's ``ctx.stage.view`` of the same
    reference is a view of it: one private copy per record, one value of those bytes."""

    def __init__(self, stage: CopyingStage) -> None:
        self._stage = stage

    def view(self, ref: Any, what: str = "Blob", writable: bool = False) -> Any:
        if writable:
            return self._stage.view(ref, what, writable)
        return self._stage.private(ref, what)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stage, name)


#: what a backend may report about itself (each a method, each answer JSON): name -> method.
SUMMARY_METHODS = {"recording_digest": "recording_digest", "stream_digest": "stream_digest",
                   "stats": "stats", "info": "info"}  # fmt: skip


def backend_summary(backend: Any, recording: bool, only: Any = None) -> dict[str, Any]:
    """What the backend says about itself, for the client's copy (``RemoteBackend``);
    ``only``: the keys to ask for (None: every one)."""
    out: dict[str, Any] = {}
    for key, method in SUMMARY_METHODS.items():
        if only is not None and key not in only:
            continue
        fn = getattr(backend, method, None)
        if callable(fn):
            out[key] = fn()
    if recording and callable(getattr(backend, "to_json", None)):
        out["recording"] = backend.to_json()
    return out


def server_applier(backend: Any, stage: CopyingStage, **kw: Any) -> Applier:
    """The server's applier over ``stage``: one private copy per record of the bytes a
    record names (the stage follows the applier's context), which the decoder keeps as
    ``Decoded.blob`` without copying it again (its door is :class:`DecoderStage`)."""
    applier = Applier(backend, stage, **kw)
    stage.follow(applier.ctx)
    applier.decoder.stage = stage.for_decoder()  # before any handler binds its view
    return applier


def prepare(applier: Applier) -> int:
    """Compile, ahead of the first record, the handler (and with it the decoder) of every
    opcode the catalogue defines: what ``apply`` would compile lazily on an opcode's first
    record (``Applier._compile``), stored where it looks first (``_handlers``). A null
    backend entry compiles to its refusing handler, as it would lazily. An opcode whose
    compilation raises is left out: its first record compiles it as before and meets the
    same refusal there (``Wire.Op`` for one without a decoder), so no behaviour changes.
    Returns the number of handlers ready."""
    handlers = applier._handlers
    for spec in all_specs():
        if spec.opcode in handlers:
            continue
        try:
            applier._compile(spec.opcode)
        except Exception:  # noqa: BLE001 - left lazy: the first record meets it as before
            handlers.pop(spec.opcode, None)
    return len(handlers)


def serve(ctrl: socket.socket) -> None:
    from ..backends.registry import make_backend  # any registered backend

    s = Session.accept(ctrl)
    name = str(s.config.get("backend", "recorder"))
    only = s.config.get("summary")
    if only is not None and (not isinstance(only, list) or not set(only) <= set(SUMMARY_METHODS)):
        s.fatal("ProtocolMismatch", f"Hello.config.summary: expected a list of "
                f"{', '.join(SUMMARY_METHODS)}", EXIT_FATAL)  # fmt: skip
    try:
        backend = make_backend(name)
    except Exception as exc:  # noqa: BLE001 - reported to the client by name
        s.fatal("BackendInit", f"{name}: {exc}", EXIT_BACKEND)
    close = getattr(backend, "close", None)
    if callable(close):
        s.releasers.append(close)
    applier = server_applier(backend, CopyingStage(s.stage_capacity, s.stage_buf),
                             mailbox=s.mailbox, events=s.events)  # fmt: skip
    prepare(applier)  # every handler and decoder compiled before Welcome (issue 20)
    s.welcome(name)
    try:
        want_recording = s.consume(applier.apply)
    except PipeFatal as exc:
        s.fatal(exc.kind, exc.reason, EXIT_FATAL)
    except Exception as exc:  # noqa: BLE001 - a backend fault, reported by name
        s.fatal("BackendError", f"{type(exc).__name__}: {exc}", EXIT_BACKEND)
    shot = None
    if s.config.get("capture"):  # as the in-process runner does: outside every count
        shot = _capture(s, backend)
    if callable(close):  # as the in-process runner does: release the driver, then ask
        s.releasers.remove(close)
        close()
    summary = backend_summary(backend, want_recording, only)
    if shot is not None:
        summary["capture"] = shot
    try:
        s.report(summary)
    except OSError:  # the client went before its answer: nothing is left to tell
        pass
    s.exit(0)


def _capture(s: Session, backend: Any) -> list[int] | None:
    """The config's ``capture``: the backend's default framebuffer, written at the start
    of ``SEG_STAGE`` (the client drained and closed: nothing else uses it now); its
    ``[width, height]``, or None when the backend has none to give."""
    read = getattr(backend, "read_default_framebuffer", None)
    try:
        shot = read() if callable(read) else None
    except Exception as exc:  # noqa: BLE001 - a backend fault, reported by name
        s.fatal("BackendError", f"capture: {type(exc).__name__}: {exc}", EXIT_BACKEND)
    if shot is None:
        return None
    w, h, rgba = shot
    if len(rgba) > s.stage_capacity:
        s.fatal("BackendError", f"capture: {w}x{h} needs {len(rgba)} bytes, the stage "
                f"segment holds {s.stage_capacity}", EXIT_BACKEND)  # fmt: skip
    s.stage_buf[: len(rgba)] = rgba
    return [int(w), int(h)]


def main() -> int:
    # The client decides when a session ends; an interrupt meant for it (a terminal's
    # Ctrl-C sent to a whole process group) is not this process's to act on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    env = child_env()  # hard-set the in-process path (the spawner dropped it too)
    os.environ.clear()
    os.environ.update(env)
    try:
        serve(socket.socket(fileno=CONTROL_FD))
    except (BrokenPipeError, ConnectionError):  # the client went while it was answered
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
