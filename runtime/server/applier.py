"""The server side of the pipe (seed 001 §10.1): decode -> handles -> tables -> backend.

``Applier(backend, stage).apply(record)`` (also callable: it is a transport ``Sink``):

1. decodes the record (:class:`~.wire.Decoder`: every bounds check first);
2. looks the call up in the backend table: a None entry of a ``kOptional`` call is
   applied to the tables and then skipped (counted in ``skipped``); of any other call
   it raises :class:`~.errors.NullEntry` before anything changes;
3. resolves every handle field (:mod:`.handle_fields`: the one mapping table) and
   refuses by name (``HandleRefused("<Call>.<Field>.<Fault>")``, faults ``Null``,
   ``Range``, ``Unknown``, ``Stale``, ``Backward``, ``Kind``);
4. validates the record's state (:data:`~.apply_state.PREPARE`), then mints / retires /
   replaces the object the record names, and pushes the state
   (:data:`~.apply_state.PUSH`, plus a copy of every ``kCtxState`` payload);
5. calls ``entry(server_ctx, decoded)`` and returns what it returns.

A record refused at any step leaves the tables and the context as they were.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..backends.base import Entry, build_table
from ..errors import HandleRefused, NullEntry, ProtocolCorruption
from ..schema.kinds import handle_kinds
from ..schema.layouts import get_path, path_name
from ..wire.codec import Decoded, Decoder
from ..wire.handle import Handle, default_framebuffer
from ..wire.spec import call_spec
from ..wire.stage import StageSegment
from .apply_state import PREPARE, PUSH
from .context import ServerContext, ServerObject, handle_of
from .handle_fields import (
    KIND_FROM_RECORD,
    REISSUE_KINDS,
    RESOURCE,
    RESOURCE_KINDS,
    Site,
    implicit_kinds,
    role,
    sites,
    table_of,
)
from .handle_table import HandleTable

__all__ = ["Applier"]

_STATE_CLASS = "kCtxState"
#: (table, handle, what, field name) of an implicit object first seen in this record.
Implicit = tuple[str, Handle, str, str]


def _make_tables(max_slots: int) -> dict[str, HandleTable]:
    out: dict[str, HandleTable] = {}
    for kind in handle_kinds():
        name = table_of(kind)
        if name not in out:
            out[name] = HandleTable(RESOURCE_KINDS[0] if name == RESOURCE else kind, max_slots)
    return out


class Applier:
    """One context's applier over ``backend`` (an object with one attribute per call).

    ``max_slots`` bounds every object table (a slot above it is ``"<Call>.<Field>.Range"``).
    """

    def __init__(self, backend: object, stage: StageSegment, max_slots: int = 1 << 20) -> None:
        self.backend = backend
        self.table: dict[str, Entry | None] = build_table(backend)
        self.decoder = Decoder(stage)
        self.tables = _make_tables(max_slots)
        self.ctx = ServerContext(stage, self.tables)
        self.applied: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self._implicit = implicit_kinds()
        self._default_fb = default_framebuffer()
        # table -> slot -> gen of objects a wire delete retired and ObjectDeath has not yet seen
        self._awaiting_death: dict[str, dict[int, int]] = {t: {} for t in self.tables}

    def __call__(self, record: memoryview) -> object:
        return self.apply(record)

    def apply(self, record: memoryview | bytes) -> object:
        d = self.decoder.decode(record)
        call = d.name
        spec = call_spec(call)
        entry = self.table[call]
        if entry is None and not spec.optional:
            raise NullEntry(call)
        ctx = self.ctx
        ctx.call = call
        ctx.resolved = {}
        r = role(call)
        all_sites = sites(call)
        object_site = all_sites[0] if all_sites and r != "use" else None
        implicit: list[Implicit] = []
        for site in all_sites:
            if site is not object_site:
                self._resolve_site(d, site, implicit)
        prepared = PREPARE[call](ctx, d) if call in PREPARE else {}
        obj = self._object(d, object_site, r, prepared) if object_site is not None else None
        for table, h, what, name in implicit:  # first use of a Framebuffer / Xfb / Context
            if h not in self.tables[table]:
                self.tables[table].create(h, ServerObject(table, h), what)
            ctx.resolved[name] = self.tables[table].resolve(h, what)
        if obj is None and all_sites and r == "use":
            obj = ctx.resolved.get(all_sites[0].field)
        if call in PUSH:
            PUSH[call](ctx, d, obj)
        if spec.cls == _STATE_CLASS:
            ctx.remember(call, d.payload, d.tails)
        if entry is None:
            self.skipped[call] += 1
            return None
        self.applied[call] += 1
        return entry(ctx, d)

    # -- handles -------------------------------------------------------------
    def _concrete(self, d: Decoded, site: Site) -> list[tuple[str, Handle]]:
        """(path name, handle) of every handle a site covers in this record."""
        if site.tail is None:
            return [(path_name(p), handle_of(get_path(d.payload, p))) for p in site.paths]
        spec = call_spec(d.name)
        out = []
        for t, arr in zip(spec.present_tails(d.payload), d.tails):
            if t.element != site.tail:
                continue
            for p in site.paths:
                sub = get_path(arr, p) if p else arr
                slots, gens = np.asarray(sub["Slot"]), np.asarray(sub["Gen"])
                suffix = f".{path_name(p)}" if p else ""
                for i in range(len(arr)):
                    out.append((f"{t.element}[{i}]{suffix}", Handle(int(slots[i]), int(gens[i]))))
        return out

    def _resolve_site(self, d: Decoded, site: Site, implicit: list[Implicit]) -> None:
        for name, h in self._concrete(d, site):
            what = f"{d.name}.{name}"
            if h.is_null:
                if not site.nullable:
                    raise HandleRefused(f"{what}.Null")
                self.ctx.resolved[name] = None
                continue
            self.ctx.resolved[name] = self._lookup(site.kind, h, what, name, implicit)

    def _lookup(
        self, kind: str, h: Handle, what: str, name: str, implicit: list[Implicit]
    ) -> ServerObject | None:
        if kind == "Framebuffer" and h == self._default_fb:
            return self.ctx.default_framebuffer
        table = self.tables[table_of(kind)]
        if kind in self._implicit:
            try:
                return table.resolve(h, what)
            except HandleRefused as exc:
                if not exc.reason.endswith(".Unknown") or h.slot == 0:
                    raise
                implicit.append((table_of(kind), h, what, name))
                return None
        obj = table.resolve(h, what)
        if kind in RESOURCE_KINDS and obj.kind != kind:
            raise HandleRefused(f"{what}.Kind")
        return obj

    def _object(
        self, d: Decoded, site: Site, r: str, prepared: dict[str, Any]
    ) -> ServerObject | None:
        """Mint / retire / respecify the object the record's first handle field names."""
        ((name, h),) = self._concrete(d, site)
        what = f"{d.name}.{name}"
        kind = site.kind
        if kind == KIND_FROM_RECORD:
            kind = self._kind_from_record(d)
        if kind == RESOURCE and "kind" in prepared:
            kind = prepared["kind"]
        if h.is_null:
            raise HandleRefused(f"{what}.Null")
        table_name = table_of(kind)
        table = self.tables[table_name]
        if r == "create":
            obj = ServerObject(kind, h, _copy(d.payload), None, dict(prepared))
            blobs = self.decoder.blob_views(d) if d.blob is not None else {}
            if blobs:
                obj.blob = bytes(d.blob)
                if len(blobs) > 1:
                    obj.data["blobs"] = {k: bytes(v) for k, v in blobs.items()}
            if kind in REISSUE_KINDS and h in table:
                table.replace(h, obj, what)
            else:
                table.create(h, obj, what)
            self._awaiting_death[table_name].pop(h.slot, None)
        elif r == "delete":
            if d.name == "ObjectDeath" and self._awaiting_death[table_name].get(h.slot) == h.gen:
                del self._awaiting_death[table_name][h.slot]
                obj = None
            else:
                obj = table.resolve(h, what)
                if kind in RESOURCE_KINDS and obj.kind != kind:
                    raise HandleRefused(f"{what}.Kind")
                table.destroy(h, what)
                if d.name != "ObjectDeath":
                    self._awaiting_death[table_name][h.slot] = h.gen
        else:  # respecify: the description changes, the handle and the kind do not
            obj = table.resolve(h, what)
            if obj.kind != kind:
                raise HandleRefused(f"{what}.Kind")
        self.ctx.resolved[name] = obj
        return obj

    @staticmethod
    def _kind_from_record(d: Decoded) -> str:
        value = int(d.payload["Kind"])
        for name, v in handle_kinds().items():
            if v == value:
                return name
        raise ProtocolCorruption(f"{d.name}.Kind")


def _copy(rec: np.void) -> np.void:
    out = np.zeros(1, rec.dtype)
    out[0] = rec
    return out[0]
