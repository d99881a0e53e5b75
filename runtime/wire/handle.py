"""The handle value ``{Slot, Gen}`` (seed 001 §2.1, ``MG_Pipe/MGPipeHandles.h``).

The client mints handles (``client.slots``); the server keeps objects by slot
(``server.handle_table``); both speak this value.

- ``{0,0}`` is null; ``{0,kMGPipeDefaultFramebufferGen}`` (``{0,1}``) of ``Framebuffer``
  is the default framebuffer. Slot 0 is never allocated, so neither can be minted.
- ``ShaderCso`` slots from ``kMGPipeShaderCsoCompositeSlotBase`` up are the composite
  band (program-pipeline composites).

Member names, widths, the kind list and the composite base come from the tables.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ..schema import tables as _t
from ..schema.kinds import handle_kinds

__all__ = [
    "Handle",
    "NULL",
    "DEFAULT_FRAMEBUFFER",
    "default_framebuffer",
    "handle_kinds",
    "handle_limits",
    "check_kind",
    "COMPOSITE_KIND",
    "COMPOSITE_BASE",
]

_HANDLE = "MGPipeHandle"
#: The kind with a composite band, and the constant naming the band's first slot.
COMPOSITE_KIND = "ShaderCso"
COMPOSITE_BASE = "kMGPipeShaderCsoCompositeSlotBase"


@lru_cache(maxsize=None)
def _packer() -> _t.Packer:
    return _t.packer(_HANDLE, ("Slot", "Gen"))


def handle_limits() -> tuple[int, int]:
    """(max slot, max gen) as the wire can carry them."""
    slot, gen = _packer().fields
    return slot.max_value, gen.max_value


class Handle(NamedTuple):
    """A ``{slot, gen}`` handle: a small immutable, hashable value (a named tuple)."""

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


def check_kind(kind: str) -> None:
    """ValueError unless ``kind`` is an ``MGPipeKind`` enumerator."""
    kinds = handle_kinds()
    if kind not in kinds:
        raise ValueError(f"unknown handle kind {kind!r} (expected one of {', '.join(kinds)})")
