"""Client-side minting of handles: one :class:`SlotAllocator` per kind (seed 001 §2.1).

- Slots are dense from 1 per kind (free list, LIFO, plus a high-water mark).
- ``Gen`` starts at 1 on a fresh slot and is bumped only when a freed slot is reused,
  never on respecify. A slot whose ``Gen`` would wrap is retired, never reused.
- ``ShaderCso`` slots from ``kMGPipeShaderCsoCompositeSlotBase`` up are the composite
  band: only :meth:`SlotAllocator.alloc_composite` mints there.
"""

from __future__ import annotations

from ..errors import HandleExhausted, HandleRefused
from ..schema import tables as _t
from ..budgets import budgets
from ..wire.handle import COMPOSITE_BASE, COMPOSITE_KIND, Handle, check_kind, handle_limits

__all__ = ["SlotAllocator"]


class _Band:
    """One dense slot range ``[first, last]``: free list (LIFO) + high-water mark."""

    __slots__ = ("name", "first", "last", "gens", "live", "free", "high")

    def __init__(self, name: str, first: int, last: int) -> None:
        self.name, self.first, self.last = name, first, last
        self.gens: list[int] = []  # index = slot - first; current gen of the slot
        self.live: list[bool] = []
        self.free: list[int] = []  # LIFO
        self.high = 0  # slots ever minted in this band

    def alloc(self) -> Handle:
        if self.free:
            i = self.free.pop()
            self.gens[i] += 1
        else:
            if self.first + self.high > self.last:
                raise HandleExhausted(self.name)
            i = self.high
            self.high += 1
            self.gens.append(1)
            self.live.append(False)
        self.live[i] = True
        return Handle(self.first + i, self.gens[i])

    def index(self, slot: int) -> int | None:
        i = slot - self.first
        return i if 0 <= i < self.high else None


class SlotAllocator:
    """Client-side minting of handles of one kind."""

    def __init__(self, kind: str) -> None:
        check_kind(kind)
        self.kind = kind
        max_slot, self._max_gen = handle_limits()
        per_kind = budgets().objects_per_kind  # the server's tables stop at the same count
        top = min(max_slot, per_kind)
        self._composite: _Band | None = None
        if kind == COMPOSITE_KIND:
            base = _t.constant(COMPOSITE_BASE)
            if not 1 < base <= max_slot:
                raise _t.TablesError(f"{COMPOSITE_BASE} = {base:#x} is outside the slot range")
            self._composite = _Band(f"{kind}.Composite", base, min(max_slot, base - 1 + per_kind))
            top = min(top, base - 1)
        self._ordinary = _Band(f"{kind}.Slots", 1, top)

    # -- minting ------------------------------------------------------------
    def alloc(self) -> Handle:
        """A fresh handle: the most recently freed slot (gen + 1), else a new slot (gen 1)."""
        return self._ordinary.alloc()

    def alloc_composite(self) -> Handle:
        """A handle in the ``ShaderCso`` composite band."""
        if self._composite is None:
            raise ValueError(f"{self.kind} has no composite band (only {COMPOSITE_KIND})")
        return self._composite.alloc()

    def free(self, h: Handle) -> None:
        """Return ``h``'s slot; refuses null/reserved, unknown, stale and double frees."""
        band, i = self._locate(h, "Free")
        if band.gens[i] != h.gen:
            raise HandleRefused(f"{self.kind}.Free.Stale")
        if not band.live[i]:
            raise HandleRefused(f"{self.kind}.Free.DoubleFree")
        band.live[i] = False
        if band.gens[i] < self._max_gen:  # a gen that would wrap retires the slot
            band.free.append(i)

    # -- queries ------------------------------------------------------------
    def is_live(self, h: Handle) -> bool:
        try:
            band, i = self._locate(h, "Query")
        except HandleRefused:
            return False
        return band.live[i] and band.gens[i] == h.gen

    @property
    def high_water(self) -> int:
        """Slots ever minted in the ordinary band."""
        return self._ordinary.high

    @property
    def live_count(self) -> int:
        bands = [self._ordinary] + ([self._composite] if self._composite else [])
        return sum(b.live.count(True) for b in bands)

    @property
    def composite_base(self) -> int | None:
        return None if self._composite is None else self._composite.first

    def _locate(self, h: Handle, op: str) -> tuple[_Band, int]:
        if h.slot == 0:
            raise HandleRefused(f"{self.kind}.{op}.Reserved")
        for band in (self._ordinary, self._composite):
            if band is not None and band.first <= h.slot <= band.last:
                i = band.index(h.slot)
                if i is not None:
                    return band, i
        raise HandleRefused(f"{self.kind}.{op}.Unknown")
