"""Handles = ``{Slot, Gen}`` (seed 001 §2.1, ``MG_Pipe/MGPipeHandles.h``).

The client mints every handle (:class:`SlotAllocator`, one per kind); the server never
returns one and keeps its objects in arrays indexed by slot (:class:`HandleTable`).

- Slots are dense from 1 per kind (free list, LIFO, plus a high-water mark).
- ``{0,0}`` is null; ``{0,kMGPipeDefaultFramebufferGen}`` (``{0,1}``) of ``Framebuffer``
  is the default framebuffer. Slot 0 is never allocated, so neither can be minted.
- ``Gen`` starts at 1 on a fresh slot and is bumped only when a freed slot is reused,
  never on respecify. A slot whose ``Gen`` would wrap is retired, never reused.
- ``ShaderCso`` slots from ``kMGPipeShaderCsoCompositeSlotBase`` up are the composite
  band (program-pipeline composites): only :meth:`SlotAllocator.alloc_composite`
  mints there.

Member names, widths, the kind list and the composite base come from the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from . import tables as _t
from .errors import HandleExhausted, HandleRefused

__all__ = [
    "Handle",
    "NULL",
    "DEFAULT_FRAMEBUFFER",
    "default_framebuffer",
    "handle_kinds",
    "SlotAllocator",
    "HandleTable",
]

_HANDLE = "MGPipeHandle"
_KIND_ENUM = "MGPipeHandleKind"
_COMPOSITE_KIND = "ShaderCso"
_COMPOSITE_BASE = "kMGPipeShaderCsoCompositeSlotBase"


@lru_cache(maxsize=None)
def _packer() -> _t.Packer:
    return _t.packer(_HANDLE, ("Slot", "Gen"))


def _limits() -> tuple[int, int]:
    """(max slot, max gen) as the wire can carry them."""
    slot, gen = _packer().fields
    return slot.max_value, gen.max_value


@dataclass(frozen=True, slots=True)
class Handle:
    """A ``{slot, gen}`` handle: a small immutable, hashable value."""

    slot: int
    gen: int

    @property
    def is_null(self) -> bool:
        return self.slot == 0 and self.gen == 0

    def pack(self) -> bytes:
        """The handle's wire bytes (``MGPipeHandle`` layout from the tables)."""
        return _packer().pack(self.slot, self.gen)

    def pack_into(self, buf: bytearray | memoryview, offset: int) -> None:
        _packer().pack_into(buf, offset, self.slot, self.gen)

    @classmethod
    def unpack_from(cls, buf: bytes | bytearray | memoryview, offset: int = 0) -> "Handle":
        slot, gen = _packer().unpack_from(buf, offset)
        return cls(slot, gen)

    @staticmethod
    def wire_size() -> int:
        return _packer().size

    def __str__(self) -> str:
        return f"{{{self.slot},{self.gen}}}"


NULL = Handle(0, 0)
_DEFAULT_FB_GEN = "kMGPipeDefaultFramebufferGen"


def default_framebuffer() -> Handle:
    """``{0, kMGPipeDefaultFramebufferGen}`` of kind ``Framebuffer`` (gen from the tables)."""
    return Handle(0, _t.constant(_DEFAULT_FB_GEN))


def __getattr__(name: str) -> Handle:
    # ``DEFAULT_FRAMEBUFFER`` is read from the tables on first use, not at import.
    if name == "DEFAULT_FRAMEBUFFER":
        return default_framebuffer()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def handle_kinds() -> dict[str, int]:
    """``MGPipeHandleKind`` enumerator -> value, from the tables."""
    return dict(_t.enum(_KIND_ENUM))


def _check_kind(kind: str) -> None:
    kinds = _t.enum(_KIND_ENUM)
    if kind not in kinds:
        raise ValueError(f"unknown handle kind {kind!r} (expected one of {', '.join(kinds)})")


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
        _check_kind(kind)
        self.kind = kind
        max_slot, self._max_gen = _limits()
        top = max_slot
        self._composite: _Band | None = None
        if kind == _COMPOSITE_KIND:
            base = _t.constant(_COMPOSITE_BASE)
            if not 1 < base <= max_slot:
                raise _t.TablesError(f"{_COMPOSITE_BASE} = {base:#x} is outside the slot range")
            self._composite = _Band(f"{kind}.Composite", base, max_slot)
            top = base - 1
        self._ordinary = _Band(f"{kind}.Slots", 1, top)

    # -- minting ------------------------------------------------------------
    def alloc(self) -> Handle:
        """A fresh handle: the most recently freed slot (gen + 1), else a new slot (gen 1)."""
        return self._ordinary.alloc()

    def alloc_composite(self) -> Handle:
        """A handle in the ``ShaderCso`` composite band."""
        if self._composite is None:
            raise ValueError(f"{self.kind} has no composite band (only {_COMPOSITE_KIND})")
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
        _check_kind(kind)
        self.kind = kind
        max_slot, _ = _limits()
        self._ordinary_last = min(max_slots, max_slot)
        self._composite_first: int | None = None
        if kind == _COMPOSITE_KIND:
            base = _t.constant(_COMPOSITE_BASE)
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
