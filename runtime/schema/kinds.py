"""Handle kinds from the tables: the ``MGPipeKind`` enum and the kind masks.

- :data:`RESOURCE_KINDS` share ONE slot space (``kMGPipeResourceKindMask``): buffers,
  textures and renderbuffers (``ResourceDestroy``/``ResourceSubData`` carry a bare handle,
  so the server could not tell two kinds' slot 1 apart).
- :data:`REISSUE_KINDS` may re-issue their create on a live handle
  (``kMGPipeReissuableKindMask``; seed 001 D-G1, seed 002 §1).

Both are read from the tables on first use (module ``__getattr__``), never at import.
"""

from __future__ import annotations

from functools import lru_cache

from . import tables as _t

__all__ = ["handle_kinds", "kinds_in", "resource_kinds", "reissue_kinds"]

_KIND_ENUM = "MGPipeKind"


#: ``MGPipeKind::None``: the kind of no object (the null handle's), not a kind of object.
_NO_KIND = "None"


def handle_kinds() -> dict[str, int]:
    """``MGPipeKind`` enumerator -> value, from the tables: the kinds of objects, i.e. the
    enum without ``None`` (no object) and its count member."""
    return {k: v for k, v in _t.enum_members(_KIND_ENUM).items() if k != _NO_KIND}


def kinds_in(mask_name: str) -> tuple[str, ...]:
    """The MGPipeKind enumerators a header mask constant names, in enum order."""
    mask = _t.constant(mask_name)
    kinds = sorted(_t.enum(_KIND_ENUM).items(), key=lambda kv: kv[1])
    return tuple(name for name, value in kinds if mask >> value & 1)


@lru_cache(maxsize=None)
def resource_kinds() -> tuple[str, ...]:
    """Kinds sharing the Resource slot space, in enum order."""
    return kinds_in("kMGPipeResourceKindMask")


@lru_cache(maxsize=None)
def reissue_kinds() -> frozenset[str]:
    """Kinds whose create may be re-issued on the same live handle."""
    return frozenset(kinds_in("kMGPipeReissuableKindMask"))


def __getattr__(name: str) -> object:
    if name == "RESOURCE_KINDS":
        return resource_kinds()
    if name == "REISSUE_KINDS":
        return reissue_kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
