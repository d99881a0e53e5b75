"""Server-side object tables: one :class:`HandleTable` per kind, keyed by slot (seed 001 §2.1).

A table is a dict from slot to entry, so a record naming any slot costs O(1) whatever the
slot's value (a record naming slot 2^20 allocates one entry, not a million). ``ShaderCso``
has a second band from ``kMGPipeShaderCsoCompositeSlotBase`` (seed 002 §4.3).

Every refusal is a :class:`HandleRefused` whose reason is ``f"{what}.{Fault}"``; ``what``
names the place, e.g. ``"BindRenderState.Cso"``. Faults:

``Null``     slot 0 where an object is required;
``Range``    a slot outside the table's bounds;
``Unknown``  a slot never created, or a gen ahead of the slot's;
``Stale``    a gen behind the slot's, or an object already destroyed;
``Backward`` a create on a live slot, or naming a gen not above the slot's last.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ..errors import HandleRefused
from ..schema import tables as _t
from ..wire.handle import COMPOSITE_BASE, COMPOSITE_KIND, Handle, check_kind, handle_limits

__all__ = ["HandleTable", "Entry"]

T = TypeVar("T")


class Entry:
    """One slot of a table: its last gen, its object and whether the object is live."""

    __slots__ = ("gen", "obj", "live")

    def __init__(self, gen: int, obj: Any, live: bool) -> None:
        self.gen = gen
        self.obj = obj
        self.live = live


class HandleTable(Generic[T]):
    """Server-side object table of one kind (see the module docstring)."""

    def __init__(self, kind: str, max_slots: int = 1 << 20) -> None:
        check_kind(kind)
        self.kind = kind
        max_slot, _ = handle_limits()
        self.ordinary_last = min(max_slots, max_slot)
        self.composite_first: int | None = None
        self.composite_last = 0
        if kind == COMPOSITE_KIND:
            base = _t.constant(COMPOSITE_BASE)
            self.ordinary_last = min(self.ordinary_last, base - 1)
            self.composite_first = base
            self.composite_last = min(max_slot, base - 1 + max_slots)
        self.rows: dict[int, Entry] = {}  # slot -> entry (both bands)

    def in_range(self, slot: int) -> bool:
        if 1 <= slot <= self.ordinary_last:
            return True
        first = self.composite_first
        return first is not None and first <= slot <= self.composite_last

    def _fault(self, h: Handle, what: str) -> HandleRefused:
        """The refusal of a handle with no live entry at its gen."""
        slot, gen = h
        if slot == 0:
            return HandleRefused(f"{what}.Null")
        if not self.in_range(slot):
            return HandleRefused(f"{what}.Range")
        e = self.rows.get(slot)
        if e is None or gen > e.gen:
            return HandleRefused(f"{what}.Unknown")
        return HandleRefused(f"{what}.Stale")

    def resolve(self, h: Handle, what: str) -> T:
        """The live object ``h`` names."""
        e = self.rows.get(h[0])
        if e is not None and e.live and e.gen == h[1]:
            return e.obj
        raise self._fault(h, what)

    def resolve_optional(self, h: Handle, what: str) -> T | None:
        """Like :meth:`resolve`, but the null handle resolves to None."""
        return None if h.is_null else self.resolve(h, what)

    def check_create(self, h: Handle, what: str) -> None:
        """Refuse (without changing anything) a create :meth:`create` would refuse."""
        slot, gen = h
        if slot == 0:
            raise HandleRefused(f"{what}.Null")
        if not self.in_range(slot):
            raise HandleRefused(f"{what}.Range")
        e = self.rows.get(slot)
        if e is not None and (e.live or gen <= e.gen):
            raise HandleRefused(f"{what}.Backward")

    def create(self, h: Handle, obj: T, what: str) -> None:
        """Install ``obj`` at ``h`` (a create record)."""
        self.check_create(h, what)
        self.rows[h[0]] = Entry(h[1], obj, True)

    def replace(self, h: Handle, obj: T, what: str) -> T:
        """Swap the object of a live handle (respecify: the gen does not move); returns the old one."""
        old = self.resolve(h, what)
        self.rows[h[0]].obj = obj
        return old

    def destroy(self, h: Handle, what: str) -> T:
        """Drop the object of a live handle and return it; the slot keeps its gen."""
        obj = self.resolve(h, what)
        e = self.rows[h[0]]
        e.obj, e.live = None, False
        return obj

    def __contains__(self, h: object) -> bool:
        if not isinstance(h, Handle):
            return False
        e = self.rows.get(h[0])
        return e is not None and e.live and e.gen == h[1]

    def live_items(self) -> list[tuple[Handle, T]]:
        """Every live (handle, object), in slot order (for teardown)."""
        return [(Handle(s, e.gen), e.obj) for s, e in sorted(self.rows.items()) if e.live]

    def __len__(self) -> int:
        return sum(e.live for e in self.rows.values())
