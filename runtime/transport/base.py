"""Transports: how an encoded record reaches the applier's sink (seed 001 §1.3, §11, §17.1).

Both transports take whole records (``MGPWireRecHeader`` + payload, as the encoder
writes them: :meth:`Transport.submit`), or let a compiled packer write one in place
(:meth:`Transport.put`: straight into the ring, or into the monolith's scratch record),
and hand the sink a read-only ``memoryview`` of exactly that record, in submission order.
The view is valid only for the duration of the sink call (the server copies it once).

Single producer: the inproc ring (and any transport over an SPSC ring) binds to the
first thread that submits; another thread's submit is refused with
:class:`~mgpipe.runtime.errors.SecondProducer` before it touches the ring. Every timeout
accepts ``math.inf``.

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

import linecache
import struct
from collections.abc import Callable
from string import Template
from types import CellType, TracebackType
from typing import Any, Protocol

from ..errors import TransportShutdown

__all__ = ["Sink", "Record", "Transport", "Lifecycle", "as_record", "remembered", "door_arity",
           "compile_door"]

Sink = Callable[[memoryview], object]
Record = bytes | bytearray | memoryview


class Transport(Protocol):
    @property
    def emit_seq(self) -> int: ...

    @property
    def applied_seq(self) -> int: ...

    def submit(self, record: Record) -> int: ...

    def put(self, size: int, pack: Callable[..., None], values: tuple) -> int:
        """Write one record of ``size`` bytes in place with ``pack(buf, offset, *values)``
        (the packer writes every byte, header included), then submit it; the seq."""
        ...

    def flush(self) -> None: ...

    def wait_applied(self, seq: int | None = None, timeout: float | None = None) -> None: ...

    def close(self) -> None: ...


class remembered(dict):  # noqa: N801 -- a dict, named for what it holds
    """Records of one compiled door remembered by their values: ``get(values) or
    fill(values)`` is the record's ``bytes`` (:meth:`fill` packs a new one; past ``limit``
    records the memory starts over). Only for doors whose values are integers: equal
    values, equal bytes."""

    def __init__(self, size: int, pack: Callable[..., None], prefix: tuple, limit: int) -> None:
        super().__init__()
        self._scratch, self._pack, self._prefix, self._limit = bytearray(size), pack, prefix, limit

    def fill(self, values: tuple) -> bytes:
        self._pack(self._scratch, 0, *self._prefix, *values)
        if len(self) >= self._limit:
            self.clear()
        record = self[values] = bytes(self._scratch)
        return record


def door_cell(door: Callable[..., object]) -> CellType:
    """The cell holding a door's record count: the door's free variable ``sent``, which it
    bumps with ``sent += 1`` in its own frame (a closure store, no list subscript); its
    readers take ``cell.cell_contents`` where a count is asked for. A door wrapped with
    :func:`functools.wraps` counts in the cell of the door it wraps."""
    while hasattr(door, "__wrapped__"):
        door = door.__wrapped__
    return door.__closure__[door.__code__.co_freevars.index("sent")]  # type: ignore[index]


def door_arity(pack: Callable[..., None], prefix: tuple) -> int | None:
    """How many values a door of ``pack`` takes after ``prefix``: a ``struct.Struct``'s
    ``pack_into`` (the tables' one-C-call packers) knows its members; None for any other."""
    fmt = getattr(pack, "__self__", None)
    if not isinstance(fmt, struct.Struct) or getattr(pack, "__name__", "") != "pack_into":
        return None
    n = len(fmt.unpack(bytes(fmt.size))) - len(prefix)
    return n if n >= 0 else None


_DOORS = 0


#: a door's two writes of its record, ``$put`` at ``pos`` of the ring's ``buf`` and
#: ``$put_view`` into a reserved ``view``: packed from its values, or (``memo``) a remembered
#: record's bytes copied (``values`` the memory's key: :class:`remembered`)
_PUTS = {
    False: ("pack(buf, pos, $args)", "pack(view, 0, $args)"),
    True: ("buf[pos : pos + size] = get(values) or fill(values)",
           "view[:] = get(values) or fill(values)"),
}


#: a ring door's fast path (``$ring_put`` in its source, at the line's indentation): a record
#: that fits before ``ring._end`` written in place (``$put``), the write cursor and
#: ``emit_seq`` moved; the ``else:`` branch it opens is the door's own (the ring's path)
RING_PUT = """\
w = ring._write
e = w + size
if e <= ring._end or e <= ring._refill(w):
    pos = w & mask
    $put
    ring._write = e
    seq = ring.emit_seq = ring.emit_seq + 1
else:"""


def _expand(body: str, name: str, text: str) -> str:
    """``body`` with each line ``<indent>$name`` replaced by ``text``'s lines at that indent."""
    out = []
    for line in body.split("\n"):
        if line.strip() == "$" + name:
            pad = line[: len(line) - len(line.lstrip())]
            out += [pad + t for t in text.split("\n")]
        else:
            out.append(line)
    return "\n".join(out)


def compile_door(body: str, env: dict[str, Any], pack: Callable[..., None], prefix: tuple,
                 name: str = "door", memo: bool = False) -> Callable[..., Any]:  # fmt: skip
    """A door compiled from ``body`` (the source of ``def door($params): ...``, which packs
    with ``pack(buffer, offset, $args)`` and counts in ``nonlocal sent``) for ``pack``'s
    arity: where :func:`door_arity` knows it, the door takes its values by position and
    hands ``pack`` the prefix and the values by position (no argument list is built per
    record: a ``pack(b, o, *prefix, *values)`` call builds one, about 100 ns); otherwise
    ``$params`` is ``*values`` and ``$args`` ``*prefix, *values``. ``env``'s names (and
    ``pack``, ``prefix``, ``p0``...) are the door's closure cells, ``sent`` its count
    (:func:`door_cell`). ``$put`` / ``$put_view``: the record's write (:data:`_PUTS`); a
    ``memo`` door copies a remembered record (``env``'s ``get`` and ``fill``), its values
    the memory's key."""
    global _DOORS
    put, put_view = _PUTS[memo]
    body = _expand(body, "ring_put", RING_PUT)
    body = body.replace("$put_view", put_view).replace("$put", put)
    n = None if memo else door_arity(pack, prefix)
    env = {**env, "pack": pack, "prefix": prefix}
    if n is None:
        params, args = "*values", "*prefix, *values" if prefix else "*values"
    else:
        vs = [f"v{i}" for i in range(n)]
        ps = [f"p{i}" for i in range(len(prefix))]
        env.update(zip(ps, prefix))
        params, args = ", ".join(vs), ", ".join(ps + vs)
    names = sorted(env)
    code = Template(body).substitute(params=params, args=args)
    src = (f"def _make({', '.join(names)}):\n    sent = 0\n"
           + "".join(f"    {line}\n" if line else "\n" for line in code.strip("\n").split("\n"))
           + "    return door\n")  # fmt: skip
    _DOORS += 1
    filename = f"<mgpipe {name} {_DOORS}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # tracebacks
    ns: dict[str, Any] = {}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102 - our own template
    return ns["_make"](*(env[k] for k in names))  # type: ignore[no-any-return]


def as_record(record: Record) -> memoryview:
    view = memoryview(record).cast("B")
    return view if view.readonly else view.toreadonly()


class Lifecycle:
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

    def __enter__(self) -> "Lifecycle":
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
