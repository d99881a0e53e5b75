"""Server-side object tables: one :class:`HandleTable` per kind, indexed by slot (seed 001 §2.1)."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ..errors import HandleRefused
from ..schema import tables as _t
from ..wire.handle import COMPOSITE_BASE, COMPOSITE_KIND, Handle, check_kind, handle_limits

__all__ = ["HandleTable"]


T = TypeVar("T")


class _Entry:
    __slots__ = ("gen", "obj", "live")

    def __init__(self) -> None:
        self.gen = 0  # 0 = never created
        self.obj: Any = None
        self.live = False


class HandleTable(Generic[T]):
    """Server-side object table of one kind: arrays indexed by slot, holding (gen, object).

    Every refusal is a :class:`HandleRefused` whose reason is ``f"{what}.{Fault}"``;
    ``what`` names the place, e.g. ``"BindRenderState.Cso"``. Faults:

    ``Null``     slot 0 where an object is required;
    ``Range``    a slot outside the table's bounds;
    ``Unknown``  a slot never created, or a gen ahead of the slot's;
    ``Stale``    a gen behind the slot's, or an object already destroyed;
    ``Backward`` a create on a live slot, or naming a gen not above the slot's last.
    """

    def __init__(self, kind: str, max_slots: int = 1 << 20) -> None:
        check_kind(kind)
        self.kind = kind
        max_slot, _ = handle_limits()
        self._ordinary_last = min(max_slots, max_slot)
        self._composite_first: int | None = None
        if kind == COMPOSITE_KIND:
            base = _t.constant(COMPOSITE_BASE)
            self._ordinary_last = min(self._ordinary_last, base - 1)
            self._composite_first = base
            self._composite_last = min(max_slot, base - 1 + max_slots)
        self._rows: list[_Entry] = []  # index = slot - 1
        self._crows: list[_Entry] = []  # composite band, index = slot - base

    def _entry(self, h: Handle, what: str, grow: bool) -> _Entry:
        if h.slot == 0:
            raise HandleRefused(f"{what}.Null")
        if 1 <= h.slot <= self._ordinary_last:
            rows, i = self._rows, h.slot - 1
        elif self._composite_first is not None and (
            self._composite_first <= h.slot <= self._composite_last
        ):
            rows, i = self._crows, h.slot - self._composite_first
        else:
            raise HandleRefused(f"{what}.Range")
        if i >= len(rows):
            if not grow:
                raise HandleRefused(f"{what}.Unknown")
            rows.extend(_Entry() for _ in range(i + 1 - len(rows)))
        return rows[i]

    def create(self, h: Handle, obj: T, what: str) -> None:
        """Install ``obj`` at ``h`` (a create record)."""
        e = self._entry(h, what, grow=True)
        if e.live or h.gen <= e.gen:
            raise HandleRefused(f"{what}.Backward")
        e.gen, e.obj, e.live = h.gen, obj, True

    def resolve(self, h: Handle, what: str) -> T:
        """The live object ``h`` names."""
        e = self._entry(h, what, grow=False)
        if h.gen > e.gen:
            raise HandleRefused(f"{what}.Unknown")
        if h.gen < e.gen or not e.live:
            raise HandleRefused(f"{what}.Stale")
        return e.obj

    def resolve_optional(self, h: Handle, what: str) -> T | None:
        """Like :meth:`resolve`, but the null handle resolves to None."""
        return None if h.is_null else self.resolve(h, what)

    def replace(self, h: Handle, obj: T, what: str) -> T:
        """Swap the object of a live handle (respecify: the gen does not move); returns the old one."""
        old = self.resolve(h, what)
        self._entry(h, what, grow=False).obj = obj
        return old

    def destroy(self, h: Handle, what: str) -> T:
        """Drop the object of a live handle and return it; the slot keeps its gen."""
        obj = self.resolve(h, what)
        e = self._entry(h, what, grow=False)
        e.obj, e.live = None, False
        return obj

    def __contains__(self, h: object) -> bool:
        if not isinstance(h, Handle):
            return False
        try:
            self.resolve(h, "Contains")
        except HandleRefused:
            return False
        return True

    def live_items(self) -> list[tuple[Handle, T]]:
        """Every live (handle, object), in slot order (for teardown)."""
        out = [(Handle(i + 1, e.gen), e.obj) for i, e in enumerate(self._rows) if e.live]
        if self._composite_first is not None:
            base = self._composite_first
            out += [(Handle(base + i, e.gen), e.obj) for i, e in enumerate(self._crows) if e.live]
        return out

    def __len__(self) -> int:
        return sum(e.live for e in self._rows) + sum(e.live for e in self._crows)
