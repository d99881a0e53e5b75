"""Transports: how an encoded record reaches the applier's sink (seed 001 §1.3, §11, §17.1).

Both transports take whole records (``MGPWireRecHeader`` + payload, as the encoder
writes them) and hand the sink a read-only ``memoryview`` of exactly that record, in
submission order. The view is valid only for the duration of the sink call.

- :class:`MonolithTransport` calls the sink directly, synchronously, on the caller's thread.
- :class:`InprocTransport` copies the record into a :class:`~.ring.Ring` and a real apply
  thread calls the sink. Exceptions raised by the sink (or by the ring's consumer, e.g.
  a corrupt header) are captured on the apply thread and re-raised on the client thread
  at its next ``submit`` / ``flush`` / ``wait_applied`` / ``close``; the transport is dead
  from then on (later calls raise :class:`TransportShutdown` chained to the cause).

Both refuse the same malformed records (``ProtocolCorruption("Ring.Emit.Header")``), so
the same submissions give the same sink calls. Only :class:`InprocTransport` has a
single-record limit (``capacity // 2`` -> :class:`RingOverrun`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import NoReturn, Protocol

from .errors import BarrierTimeout, TransportShutdown
from .ring import DEFAULT_SPIN_S, DEFAULT_TIMEOUT_S, Ring, check_record

__all__ = ["Sink", "Transport", "MonolithTransport", "InprocTransport"]

Sink = Callable[[memoryview], object]
Record = bytes | bytearray | memoryview


class Transport(Protocol):
    @property
    def emit_seq(self) -> int: ...

    @property
    def applied_seq(self) -> int: ...

    def submit(self, record: Record) -> int: ...

    def flush(self) -> None: ...

    def wait_applied(self, seq: int | None = None, timeout: float | None = None) -> None: ...

    def close(self) -> None: ...


def _as_record(record: Record) -> memoryview:
    view = memoryview(record).cast("B")
    return view if view.readonly else view.toreadonly()


class _Lifecycle:
    """Closed / dead bookkeeping shared by both transports."""

    def __init__(self) -> None:
        self._error: BaseException | None = None
        self._error_delivered = False
        self._closed = False

    def _raise_pending(self) -> None:
        err = self._error
        if err is not None:
            if not self._error_delivered:
                self._error_delivered = True
                raise err
            raise TransportShutdown("Transport.Dead") from err
        if self._closed:
            raise TransportShutdown("Transport.Closed")

    def __enter__(self) -> "_Lifecycle":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class MonolithTransport(_Lifecycle):
    """Direct, synchronous calls: ``submit`` returns after the sink has applied the record."""

    def __init__(self, sink: Sink) -> None:
        super().__init__()
        self._sink = sink
        self.emit_seq = 0
        self._applied = 0

    @property
    def applied_seq(self) -> int:
        return self._applied

    def submit(self, record: Record) -> int:
        self._raise_pending()
        view = _as_record(record)
        check_record(view)
        self.emit_seq += 1
        try:
            self._sink(view)
        except BaseException as exc:
            self._error, self._error_delivered = exc, True
            raise
        self._applied = self.emit_seq
        return self.emit_seq

    def flush(self) -> None:
        self._raise_pending()

    def wait_applied(self, seq: int | None = None, timeout: float | None = None) -> None:
        self._raise_pending()
        if seq is not None and seq > self.emit_seq:
            raise ValueError(f"seq {seq} was never emitted (emit_seq {self.emit_seq})")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._error is not None and not self._error_delivered:
            self._error_delivered = True
            raise self._error


class InprocTransport(_Lifecycle):
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
        self._thread = threading.Thread(target=self._apply_loop, name=name, daemon=True)
        self._thread.start()

    # -- apply thread -------------------------------------------------------
    def _apply_loop(self) -> None:
        ring = self._ring
        try:
            while not self._abort:
                rec = ring.pop()
                if rec is None:
                    if self._stopping or ring.data_bell.dead:
                        return
                    try:
                        ring.wait_readable(self._timeout)
                    except TransportShutdown:
                        pass  # killed: drain what is published, then leave
                    continue
                self._sink(rec)
                ring.release()
        except BaseException as exc:  # delivered to the client thread, never printed here
            self._error = exc
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

    def submit(self, record: Record) -> int:
        self._raise_pending()
        ring = self._ring
        try:
            seq = ring.emit(_as_record(record), self._timeout)
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
                    self._abort = True
        finally:
            self._closed = True
            self._stopping = True
            ring.kill()
            self._thread.join(self._timeout)
        if self._error is not None and not self._error_delivered:
            self._error_delivered = True
            raise self._error
        if drain_error is not None:
            raise drain_error
        if self._thread.is_alive():
            raise BarrierTimeout("Transport.Join")
