"""The server side of the pipe (seed 001 §10.1): one compiled handler per opcode.

``Applier(backend, stage).apply(record)`` (also callable: it is a transport ``Sink``)
copies the record's bytes once (``bytes``: the ring may be written by its peer while a
record is applied, so nothing is read from it twice; ``bytes`` is already a snapshot),
reads the header, and runs the opcode's handler (:mod:`.dispatch`): decode -> null entry
-> resolve every handle -> the call's checks and the object it names -> mutate ->
``entry(server_ctx, decoded)`` (or the entry's lean form: docs/BACKENDS.md §3). A record
refused at any step leaves the tables and the context as they were.

Handles refuse by name (``HandleRefused("<Call>.<Field>.<Fault>")``, faults ``Null``,
``Range``, ``Unknown``, ``Stale``, ``Backward``, ``Kind``). The backend contract is
docs/BACKENDS.md.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..backends.base import Entry, build_table
from ..errors import HandleRefused, NullEntry, ProtocolCorruption
from ..schema.kinds import handle_kinds
from ..wire.codec import Decoded, Decoder, WireDecoded
from ..wire.compiled import decoder_namespace
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.header import record_align, header_size
from ..wire.records import format_of, layout
from ..schema.tables import TablesError
from ..wire.spec import spec_for_opcode
from ..wire.stage import StageSegment
from ..budgets import budgets
from .apply_state import PREPARE, PUSH, inline_namespace
from .context import LastPayloads, ServerContext, ServerObject
from .dispatch import COUNTER, LAST_BUILDER, handler_code
from ..schema.kinds import reissue_kinds, resource_kinds
from .handle_fields import KIND_FROM_RECORD, RESOURCE, sites, table_of
from .handle_table import HandleTable
from .reverse import ACCEPTANCE, EventRing, Reply, ReplyMailbox, answering_calls

__all__ = ["Applier", "Tally"]

Handler = Callable[[bytes, int], object]
#: (table, handle, what, field name) of an implicit object first seen in this record.
Implicit = tuple[HandleTable, Handle, str, str]
_EMPTY: dict[str, Any] = {}


class Tally(Counter):
    """A :class:`~collections.Counter` whose ``c[k] += 1`` costs what a dict's does
    (``Counter.__delitem__``, a Python method, would route every item store through a
    Python-level slot; ``del`` of a missing key raises ``KeyError`` here)."""

    __slots__ = ()
    __delitem__ = dict.__delitem__


def _make_tables(max_slots: int) -> dict[str, HandleTable]:
    out: dict[str, HandleTable] = {}
    for kind in handle_kinds():
        name = table_of(kind)
        if name not in out:
            out[name] = HandleTable(resource_kinds()[0] if name == RESOURCE else kind, max_slots)
    return out


def _lazy(entry: Entry) -> bool:
    """Whether ``entry`` reads no decoded record (``reads_decoded = False``, or a lean form:
    docs/BACKENDS.md §3)."""
    return getattr(entry, "reads_decoded", True) is False or _lean_form(entry) is not None


def _lean_form(entry: Entry) -> Callable[[ServerContext], Callable[..., object]] | None:
    form = getattr(entry, "lean_form", None)
    return form if callable(form) else None


def _plan_implicit(table: HandleTable, h: Handle, what: str, name: str,
                   implicit: list[Implicit]) -> None:  # fmt: skip
    """Check that a first use of an implicit kind may create its object; plan the create."""
    exc = table._fault(h, what)
    if not exc.reason.endswith(".Unknown"):
        raise exc
    table.check_create(h, what)
    for other, h2, _, _ in implicit:
        if other is table and h2[0] == h[0] and h2 != h:
            raise HandleRefused(f"{what}.Backward")
    implicit.append((table, h, what, name))


class _Handlers(dict):
    """opcode -> handler; a missing one is compiled (``compile(op)``: an opcode of no call
    is ``ProtocolCorruption("Wire.Op")``) by the lookup itself (no ``try`` per record)."""

    __slots__ = ("_compile",)

    def __init__(self, compile: Callable[[int], Handler]) -> None:
        super().__init__()
        self._compile = compile

    def __missing__(self, op: int) -> Handler:
        return self._compile(op)


class Applier:
    """One context's applier over ``backend`` (an object with one attribute per call).

    ``max_slots`` bounds every object table (a slot above it is ``"<Call>.<Field>.Range"``).
    """

    def __init__(self, backend: object, stage: StageSegment, max_slots: int | None = None, *,
                 mailbox: ReplyMailbox | None = None, events: EventRing | None = None,
                 post_replies: bool = True) -> None:  # fmt: skip
        if max_slots is None:  # the budget both sides know (the client's allocators stop there)
            max_slots = budgets().objects_per_kind
        self.backend = backend
        self.table: dict[str, Entry | None] = build_table(backend)
        self.decoder = Decoder(stage)
        self.tables = _make_tables(max_slots)
        self.ctx = ServerContext(stage, self.tables)
        if any(entry is not None and _lazy(entry) for entry in self.table.values()):
            # a lazy handler keeps a kCtxState payload's members, built when read
            self.ctx.last = LastPayloads()
        # the reverse channel (docs/REVERSE_CHANNEL.md): SEG_REPLY, SEG_EVENT, the record seq
        self.mailbox = mailbox if mailbox is not None else ReplyMailbox()
        self.events = events if events is not None else EventRing()
        self.ctx.seq = 0
        self.ctx.events = self.events
        self.events.follows = self.ctx  # its events stamped with ctx.seq (one counter)
        self.ctx.reply_capacity = self.mailbox.capacity
        tick = getattr(backend, "tick", None)
        self._tick = tick if callable(tick) else None
        #: the calls whose replies are posted (none on a replay: nobody reads them)
        self._answering = answering_calls() if post_replies else frozenset()
        #: call -> (its handler's namespace, whether it has an entry): the counts' source
        self._counted: dict[str, tuple[dict[str, Any], bool]] = {}
        self._kind_names = {v: k for k, v in handle_kinds().items()}
        # table -> slot -> (gen, kind) of objects a wire delete retired and ObjectDeath has
        # not yet seen
        self._awaiting_death: dict[str, dict[int, tuple[int, str]]] = {t: {} for t in self.tables}
        self._handlers: dict[int, Handler] = _Handlers(self._compile)
        #: ``apply(record) -> object``: the transport sink (compiled, see _compile_apply)
        self.apply: Callable[[memoryview | bytes | bytearray], object] = self._compile_apply()
        self.apply.reverse = (self.mailbox, self.events)  # type: ignore[attr-defined]

    def __call__(self, record: memoryview | bytes) -> object:
        return self.apply(record)

    def _tally(self, entries: bool) -> Counter[str]:
        return Tally({call: ns[COUNTER] for call, (ns, entry) in self._counted.items()
                      if entry is entries and ns[COUNTER]})  # fmt: skip

    @property
    def applied(self) -> Counter[str]:
        """Records applied (their entry called), by call: a snapshot of the handlers'
        counts (each handler counts in its own namespace, one store per record)."""
        return self._tally(True)

    @property
    def skipped(self) -> Counter[str]:
        """Records of a null ``kOptional`` entry applied to the tables and skipped, by call."""
        return self._tally(False)

    def _compile_apply(self) -> Callable[[Any], object]:
        """Snapshot the record, read ``Op`` and ``Size`` with one precompiled ``unpack_from``
        (a struct over the header layout of the tables: the other members are padding),
        check the size, run the opcode's handler (the backend's ``tick`` every 64 records,
        when it has one)."""
        hdr = header_size()
        lay = layout("MGPWireRecHeader")
        wanted = ("Op", "Size")
        header = struct.Struct("<" + format_of(lay.flat, lay.size, 0, frozenset(wanted)))
        if header.size != hdr:
            raise TablesError("MGPWireRecHeader: the header reader is not the header's size")
        order = ", ".join(f.path.lower() for f in lay.flat if f.path in wanted)
        # bytes(record) is record itself for bytes (what the monolith's remembered records
        # are): the one copy of anything else (a view of a ring the peer may write)
        # the rest of the wrapper is the try's else: no jump past the handler
        src = (
            "def apply(record):\n"
            "    raw = bytes(record)\n"
            "    try:\n"
            f"        {order} = _header(raw)\n"
            "    except _StructError:\n"
            "        raise _PC('Wire.Header') from None\n"
            "    else:\n"
            # a record whose Size is its length (what every transport hands) is at least a
            # header long (the unpack read one): the full test only for any other
            f"        if size != len(raw) or size % {record_align()}:\n"
            f"            if size < {hdr} or size % {record_align()} or size > len(raw):\n"
            "                raise _PC('Wire.Size')\n"
            # an opcode without a handler yet compiles it (_Handlers.__missing__)
            "        handler = _handlers[op]\n"
        )
        if self._tick is None:  # the events follow ctx.seq (EventRing.follows)
            src += ("        _ctx.seq += 1\n"
                    "        return handler(raw, size)\n")  # fmt: skip
        else:
            src += ("        seq = _ctx.seq = _ctx.seq + 1\n"
                    "        out = handler(raw, size)\n"
                    "        if not seq & 63:\n"
                    "            _tick(_ctx)\n"
                    "        return out\n")  # fmt: skip
        ns: dict[str, Any] = {"_PC": ProtocolCorruption, "_handlers": self._handlers,
                              "_ctx": self.ctx, "_tick": self._tick,
                              "_header": header.unpack_from, "_StructError": struct.error}  # fmt: skip
        exec(compile(src, "<mgpipe apply>", "exec"), ns)
        return ns["apply"]

    # -- compilation -----------------------------------------------------------
    def _compile(self, op: int) -> Handler:
        spec = spec_for_opcode(op)
        if spec is None or self.decoder.function(op) is None:
            raise ProtocolCorruption("Wire.Op")
        call = spec.name
        entry = self.table[call]
        if entry is not None and call in self._answering:
            entry = self._poster(call, entry)
        # an entry that reads no record (``reads_decoded = False``, or a lean form: the
        # recorder's raw capture) lets the handler skip building it where nothing else
        # reads it; a lean form is called with the record's bytes (and its one blob)
        lazy = entry is not None and _lazy(entry)
        form = _lean_form(entry) if lazy else None
        lean = form is not None and len(spec.blob_paths) <= 1
        code, tables = handler_code(call, entry is not None, lazy, lean)
        ctx = self.ctx
        ns: dict[str, Any] = decoder_namespace(call, self.decoder.stage.view, WireDecoded)
        ns |= {
            "_NullEntry": NullEntry, "_HR": HandleRefused, "_NULL": NULL,
            "_DFB": default_framebuffer(), "_ctx": ctx, "_EMPTY": _EMPTY,
            "_plan_implicit": _plan_implicit, "_make_implicit": self._make_implicit,
            "_plan_create": self._plan_create, "_plan_delete": self._plan_delete,
            "_plan_respecify": self._plan_respecify, "_commit": self._commit,
            "_prepare": PREPARE.get(call), "_push": PUSH.get(call), "_entry": entry,
            "_last": ctx.last, "_last_tails": ctx.last_tails,
            COUNTER: 0, "_memo": {},
            "_lean": form(ctx) if lean else None,
        }  # fmt: skip
        ns |= inline_namespace(ctx)
        for t in tables:
            ns[f"_rows_{t}"] = self.tables[t].rows
            ns[f"_T_{t}"] = self.tables[t]
        exec(code, ns)
        if LAST_BUILDER in ns:  # kept members, built into the payload record when read
            ctx.last.builders[call] = ns[LAST_BUILDER]
        self._counted[call] = (ns, entry is not None)
        handler = self._handlers[op] = ns["handle"]
        return handler

    def _poster(self, call: str, entry: Entry) -> Entry:
        """An answering entry: its :class:`Reply` goes into the record's SEG_REPLY slot."""
        post, optional = self.mailbox.post, call in ACCEPTANCE

        def answer(ctx: ServerContext, d: Decoded) -> object:
            reply = entry(ctx, d)
            if not isinstance(reply, Reply):
                if optional:
                    return reply
                raise ProtocolCorruption(f"{call}.ReplyMissing")
            post(ctx.seq, reply, call)
            return reply

        return answer

    # -- the object a record names --------------------------------------------
    def _make_implicit(self, implicit: list[Implicit], res: dict[str, Any]) -> None:
        for table, h, what, name in implicit:  # first use of a Framebuffer / Xfb / Context
            if h not in table:
                table.create(h, ServerObject(table.kind, h), what)
            res[name] = table.resolve(h, what)

    def _plan_create(self, d: Decoded, h: Handle, name: str, prepared: dict[str, Any]) -> tuple:
        what = f"{d.name}.{name}"
        kind = self._object_kind(d, prepared)
        if h.is_null:
            raise HandleRefused(f"{what}.Null")
        table_name = table_of(kind)
        table = self.tables[table_name]
        reissue = kind in reissue_kinds() and h in table
        if not reissue:
            table.check_create(h, what)
        obj = ServerObject(kind, h, d.payload, None, dict(prepared))
        if d.blob is not None:
            obj.blob = d.blob
            blobs = self.decoder.blob_views(d)
            if len(blobs) > 1:
                obj.data["blobs"] = {k: bytes(v) for k, v in blobs.items()}
        return ("create", table_name, table, h, what, name, obj, reissue)

    def _plan_delete(self, d: Decoded, h: Handle, name: str, prepared: dict[str, Any]) -> tuple:
        what = f"{d.name}.{name}"
        kind = self._object_kind(d, prepared)
        if h.is_null:
            raise HandleRefused(f"{what}.Null")
        table_name = table_of(kind)
        table = self.tables[table_name]
        awaiting = self._awaiting_death[table_name].get(h[0])
        if d.name == "ObjectDeath" and awaiting is not None and awaiting[0] == h[1]:
            if kind in resource_kinds() and awaiting[1] != kind:
                raise HandleRefused(f"{what}.Kind")
            return ("death", table_name, table, h, what, name, None, False)
        obj = table.resolve(h, what)
        if kind in resource_kinds() and obj.kind != kind:
            raise HandleRefused(f"{what}.Kind")
        return ("delete", table_name, table, h, what, name, obj, False)

    def _plan_respecify(self, d: Decoded, h: Handle, name: str, prepared: dict[str, Any]) -> tuple:
        what = f"{d.name}.{name}"
        kind = self._object_kind(d, prepared)
        if h.is_null:
            raise HandleRefused(f"{what}.Null")
        table_name = table_of(kind)
        obj = self.tables[table_name].resolve(h, what)
        if obj.kind != kind:
            raise HandleRefused(f"{what}.Kind")
        return ("respecify", table_name, None, h, what, name, obj, False)

    def _commit(self, plan: tuple, d: Decoded, res: dict[str, Any]) -> ServerObject | None:
        action, table_name, table, h, what, name, obj, reissue = plan
        if action == "create":
            if reissue:
                table.replace(h, obj, what)
            else:
                table.create(h, obj, what)
            self._awaiting_death[table_name].pop(h[0], None)
        elif action == "death":
            del self._awaiting_death[table_name][h[0]]
        elif action == "delete":
            table.destroy(h, what)
            if d.name != "ObjectDeath":
                self._awaiting_death[table_name][h[0]] = (h[1], obj.kind)
        res[name] = obj
        return obj

    def _object_kind(self, d: Decoded, prepared: dict[str, Any]) -> str:
        kind = sites(d.name)[0].kind
        if kind == KIND_FROM_RECORD:
            value = d.payload.Kind
            kind = self._kind_names.get(value)
            if kind is None:
                raise ProtocolCorruption(f"{d.name}.Kind")
        if kind == RESOURCE and "kind" in prepared:
            kind = prepared["kind"]
        return kind
