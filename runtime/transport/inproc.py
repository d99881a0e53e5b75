"""The inproc transport: a :class:`~.ring.Ring` plus a real apply thread (seed 001 §17.1)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NoReturn

from ..errors import BarrierTimeout, SecondProducer, TransportShutdown
from .base import Lifecycle, Record, Sink, as_record, compile_door, remembered
from .doorbell import DEFAULT_SPIN_S
from .ring import _DATA_PARKED, _HEAD, _PUB, DEFAULT_TIMEOUT_S, Ring

__all__ = ["InprocTransport"]

# The doors' source (compiled per door by :func:`~.base.compile_door`). A record that
# fits before ``ring._end`` is packed in place; any other takes the ring's own path.
_DOOR = """
def door($params):
    nonlocal sent
    if get_ident() != t._live:
        t._enter()
    # base.RING_PUT: the record written in place; the lines below: its else: branch
    $ring_put
        try:
            view = ring.reserve(size, None, t._timeout)
        except TransportShutdown as exc:
            t._died(exc)
        $put_view
        seq = ring.commit()
        e = ring._write
$publish
    sent += 1
    return seq
"""
#: Ring.publish, inline: every record (publish_every 1: no test) ...
_PUBLISH_EACH = """
    ctl[_HEAD] = e
    ctl[_PUB] = seq
    if ctl[_DATA_PARKED]:
        ring_bell()
""".strip("\n")
#: ... or every ``every`` records (the producer's own copy of published_seq: no slot read)
_PUBLISH_EVERY = """
    if seq - ring._published >= every:
        ctl[_HEAD] = e
        ctl[_PUB] = ring._published = seq
        if ctl[_DATA_PARKED]:
            ring_bell()
""".strip("\n")


class InprocTransport(Lifecycle):
    """A ring plus a real apply thread (``inproc``, §17.1).

    ``publish_every`` records are committed between publishes (§11.6 amortisation; 1 =
    publish each record); :meth:`flush`, :meth:`wait_applied` and a full ring always
    publish. Every wait is bounded by ``timeout`` seconds (-> :class:`BarrierTimeout`).
    """

    def __init__(
        self,
        sink: Sink,
        capacity: int,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        spin_s: float = DEFAULT_SPIN_S,
        publish_every: int = 1,
        buffer: bytearray | memoryview | None = None,
        name: str = "mgl-srv-apply",
    ) -> None:
        super().__init__()
        if publish_every < 1:
            raise ValueError("publish_every must be >= 1")
        self._sink = sink
        self._ring = Ring(capacity, buffer, spin_s=spin_s)
        self._timeout = timeout
        self._publish_every = publish_every
        self._stopping = False
        self._abort = False
        self._producer: int | None = None
        #: what a door compares the calling thread with: the producer's ident while the
        #: transport lives (None before the first record), -1 (no thread's) once it is
        #: dead or closed -- one test per record for all three
        self._live: int | None = None
        self._thread = threading.Thread(target=self._apply_loop, name=name, daemon=True)
        self._thread.start()

    # -- apply thread -------------------------------------------------------
    def _apply_loop(self) -> None:
        ring = self._ring
        try:
            while not self._abort:
                if ring.drain(self._sink):  # every published record, then look again
                    continue
                if self._stopping or ring.data_bell.dead:
                    return
                try:
                    ring.wait_readable(self._timeout)
                except TransportShutdown:
                    pass  # killed: drain what is published, then leave
        except BaseException as exc:  # delivered to the client thread, never printed here
            self._error, self._live = exc, -1
            ring.kill()

    # -- client thread ------------------------------------------------------
    @property
    def ring(self) -> Ring:
        return self._ring

    @property
    def emit_seq(self) -> int:
        return self._ring.emit_seq

    @property
    def applied_seq(self) -> int:
        return self._ring.applied_seq

    def _died(self, exc: TransportShutdown) -> NoReturn:
        self._raise_pending()
        raise exc

    def _claim(self) -> None:
        """The first submitting thread is the producer; any other is refused by name."""
        me = threading.get_ident()
        if self._producer is None:
            self._producer = me
        elif self._producer != me:
            raise SecondProducer("Transport.Producer")
        if self._error is None and not self._closed:
            self._live = me

    def _enter(self) -> None:
        """A door's one test failed: another thread (refused), the first record (claimed),
        or a dead or closed transport (its error)."""
        self._claim()
        if self._error is not None or self._closed:
            self._raise_pending()

    def put(self, size: int, pack: Callable[..., None], values: tuple) -> int:
        """Reserve ``size`` bytes in the ring, ``pack(view, 0, *values)`` there, commit."""
        if threading.get_ident() != self._producer:
            self._claim()
        if self._error is not None or self._closed:
            self._raise_pending()
        ring = self._ring
        try:
            view = ring.reserve(size, None, self._timeout)
        except TransportShutdown as exc:
            self._died(exc)
        pack(view, 0, *values)
        seq = ring.commit()
        if seq - ring.published_seq >= self._publish_every:
            ring.publish()
        return seq

    def door(self, size: int, pack: Callable[..., None], prefix: tuple,
             memo: int = 0) -> Callable[..., int]:  # fmt: skip
        """A compiled :meth:`put` for records of one ``size`` (the emitter's hot path):
        ``door(*values)`` packs ``pack(buf, pos, *prefix, *values)`` straight into the
        ring's next bytes when the record fits before :attr:`Ring._end` (the end of the
        lap or of the space released when the producer last looked at ``tail``: one
        comparison, ``tail`` read again only past it; then through :meth:`Ring.reserve`:
        the wrap pad, the wait for space), commits, publishes per ``publish_every`` and
        counts it (``sent``, the emitter's :func:`~.base.door_cell`), in one frame; a
        struct packer's door takes its values by position (:func:`~.base.compile_door`).
        ``pack`` writes the header from the tables, so the commit's header check has
        nothing to catch here. ``memo`` > 0: records remembered by their values
        (:class:`~.base.remembered`), copied into the ring instead of packed."""
        ring = self._ring
        ring._check_size(size, None)
        every = self._publish_every
        env = {"ring": ring, "buf": ring._buf, "ctl": ring._ctl, "mask": ring._mask,
               "size": size, "every": every, "get_ident": threading.get_ident, "t": self,
               "ring_bell": ring.data_bell.ring, "TransportShutdown": TransportShutdown,
               "_HEAD": _HEAD, "_PUB": _PUB, "_DATA_PARKED": _DATA_PARKED}  # fmt: skip
        publish = _PUBLISH_EACH if every == 1 else _PUBLISH_EVERY
        if memo:
            cache = remembered(size, pack, prefix, memo)
            env.update(get=cache.get, fill=cache.fill)
            return compile_door(_DOOR.replace("$publish", publish), env, pack, (),
                                "inproc memo door", memo=True)  # fmt: skip
        return compile_door(_DOOR.replace("$publish", publish), env, pack, prefix, "inproc door")

    def submit(self, record: Record) -> int:
        if threading.get_ident() != self._producer:
            self._claim()
        self._raise_pending()
        ring = self._ring
        try:
            seq = ring.emit(as_record(record), self._timeout)
        except TransportShutdown as exc:
            self._died(exc)
        if seq - ring.published_seq >= self._publish_every:
            ring.publish()
        return seq

    def flush(self) -> None:
        self._raise_pending()
        self._ring.publish()

    def wait_applied(self, seq: int | None = None, timeout: float | None = None) -> None:
        """Block until record ``seq`` (default: every record submitted) has been applied."""
        self._raise_pending()
        target = self._ring.emit_seq if seq is None else seq
        try:
            self._ring.wait_applied(target, self._timeout if timeout is None else timeout)
        except TransportShutdown as exc:
            self._died(exc)
        self._raise_pending()

    def close(self) -> None:
        """Publish, drain (bounded), stop and join the apply thread; re-raise a captured error."""
        if self._closed:
            if self._error is not None and not self._error_delivered:
                self._raise_pending()
            return
        ring = self._ring
        drain_error: BaseException | None = None
        try:
            if self._error is None:
                ring.publish()
                try:
                    ring.wait_applied(ring.emit_seq, self._timeout)
                except TransportShutdown:
                    pass  # the apply thread died meanwhile; its error is raised below
                except BarrierTimeout as exc:
                    drain_error = exc
                    self._abort = self._ring.halted = True
        finally:
            self._closed, self._live = True, -1
            self._stopping = True
            ring.kill()
            self._thread.join(min(self._timeout, threading.TIMEOUT_MAX))
        if self._error is not None and not self._error_delivered:
            self._error_delivered = True
            raise self._error
        if drain_error is not None:
            raise drain_error
        if self._thread.is_alive():
            raise BarrierTimeout("Transport.Join")
