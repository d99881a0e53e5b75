"""The monolith transport: the sink is called directly, on the caller's thread (seed 001 §1.3)."""

from __future__ import annotations

from collections.abc import Callable
from types import CellType
from typing import Any

from ..wire.header import check_record
from .base import Lifecycle, Record, Sink, as_record, compile_door, door_cell, remembered

__all__ = ["MonolithTransport"]

# The packed door's source (:func:`~.base.compile_door`): a sink that raises is recorded
# with the record counted in the door's own cell (it was sent).
_DOOR = """
def door($params):
    nonlocal sent
    pack(scratch, 0, $args)
    try:
        t._to(ro[:size])
    except BaseException as exc:
        t._failed(exc, door_cell(door))
        raise
    sent += 1
"""


class MonolithTransport(Lifecycle):
    """Direct, synchronous calls: ``submit`` returns after the sink has applied the record."""

    def __init__(self, sink: Sink) -> None:
        super().__init__()
        self._sink = sink
        #: what every record goes to: ``_sink``, or once the transport is closed or a sink
        #: raised, :meth:`_refuse` (the doors test no flag: they call what is here)
        self._to = sink
        #: records sent by :meth:`put` / :meth:`submit`; a door counts its own in its cell
        #: (``_cells``): :attr:`emit_seq` is their sum, read where it is asked for
        self._sent = 0
        self._cells: list[CellType] = []
        #: the last record the sink took; read only once a sink raised (until then every
        #: emitted record was applied: :attr:`applied_seq` is ``emit_seq``)
        self._applied = 0
        self._grow(256)

    @property
    def emit_seq(self) -> int:
        return self._sent + sum([c.cell_contents for c in self._cells])

    def _refuse(self, record: Any) -> None:
        self._raise_pending()

    def _grow(self, size: int) -> None:
        self._room = max(size, 256)
        self._scratch = bytearray(self._room)
        self._ro = memoryview(self._scratch).toreadonly()

    def put(self, size: int, pack: Callable[..., None], values: tuple) -> int:
        """Write one record of ``size`` bytes with ``pack(buf, 0, *values)`` and apply it.

        The record is packed straight into a scratch buffer the sink then reads (the
        packer writes every byte, header included); no intermediate ``bytes``.
        """
        self._raise_pending()
        if size > self._room:
            self._grow(size)
        pack(self._scratch, 0, *values)
        self._sent += 1
        try:
            self._sink(self._ro[:size])
        except BaseException as exc:
            self._failed(exc)
            raise
        return self.emit_seq

    def _failed(self, exc: BaseException, cell: CellType | None = None) -> None:
        """The sink raised on record ``emit_seq`` (a door's: counted in its ``cell`` here,
        it was sent): the transport is dead from here."""
        if self._to is not self._sink:  # already dead or closed: _refuse's own refusal
            return
        if cell is not None:
            cell.cell_contents += 1
        self._error, self._error_delivered, self._to = exc, True, self._refuse
        self._applied = self.emit_seq - 1

    def door(self, size: int, pack: Callable[..., None], prefix: tuple,
             memo: int = 0) -> Callable[..., None]:  # fmt: skip
        """A compiled :meth:`put` for records of one ``size``: ``door(*values)`` packs
        ``pack(buf, 0, *prefix, *values)`` into the scratch record, applies it and counts it
        (its ``sent``, :func:`~.base.door_cell`: its share of :attr:`emit_seq`), all in its
        one frame (the emitter's hot path). ``memo`` > 0: the records are remembered by
        their values (up to ``memo`` of them, then forgotten at once), and a remembered one
        goes to the sink as its ``bytes`` (no pack)."""
        if size > self._room:
            self._grow(size)
        # this door's records are all ``size`` bytes: the scratch of now always holds them
        # (a later _grow makes a new one for the larger records; this one stays valid)
        t, scratch, ro = self, self._scratch, self._ro
        sent, cell = 0, None
        if memo:
            cache = remembered(size, pack, prefix, memo)
            get, fill = cache.get, cache.fill

            def door(*values: Any) -> None:  # a remembered record: its bytes, not packed
                nonlocal sent
                record = get(values) or fill(values)  # a value it cannot pack: nothing sent
                try:
                    t._to(record)
                except BaseException as exc:
                    t._failed(exc, cell)
                    raise
                sent += 1

        else:  # packed: a struct packer's door takes its values by position
            door = compile_door(_DOOR, {"t": t, "scratch": scratch, "ro": ro, "size": size,
                                        "door_cell": door_cell}, pack, prefix, "monolith door")

        cell = door_cell(door)
        self._cells.append(cell)
        return door

    @property
    def applied_seq(self) -> int:
        return self.emit_seq if self._error is None else self._applied

    def submit(self, record: Record) -> int:
        self._raise_pending()
        view = as_record(record)
        check_record(view)
        self._sent += 1
        try:
            self._sink(view)
        except BaseException as exc:
            self._failed(exc)
            raise
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
        self._closed, self._to = True, self._refuse
        if self._error is not None and not self._error_delivered:
            self._error_delivered = True
            raise self._error
