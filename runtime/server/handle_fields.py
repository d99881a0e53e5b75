"""Which handle field of which record names which kind of object: HandleFields.def.

The table is the catalogue's (``catalogue/MG_Pipe/HandleFields.def``, generated into
``HANDLE_FIELDS``): ``HANDLE_FIELDS[call][field] = "<Kind>"`` or ``"<Kind>?"`` (``?``: the
null handle is legal, meaning "nothing bound"). ``field`` is a generic path: payload
members joined by ``.``, ``[]`` for "every element of an array member"; a tail is
``<Element>[]``, e.g. ``"MGPBoundView[].View"`` or ``"MGPipeHandle[]"``. The generator's
HANDLE-FIELDS gate guarantees every handle a record carries has exactly one row.

Kinds are ``MGPipeKind`` enumerators, plus the catalogue's two spellings:

- ``Resource`` -- any of :data:`RESOURCE_KINDS`. Buffers, textures and renderbuffers
  share ONE slot space (``ResourceDestroy``/``ResourceSubData`` carry a bare handle, so
  the server could not tell two kinds' slot 1 apart): the client mints every resource
  handle from a single allocator. The object remembers its kind (``ResourceCreate``'s
  ``Target``) and a field typed ``Buffer``/``Texture``/``Renderbuffer`` is checked
  against it (``"<Call>.<Field>.Kind"``).
- ``KindFromRecord`` -- the kind is the record's own ``Kind`` member (``ObjectDeath``'s
  ``MGPHandleOnly.Kind``; ``MGPipeKind::None`` and the count name no object).

The role of the FIRST field of a call comes from the call's name: ``Create*`` /
``*Create`` mint it, ``Delete*`` / ``*Destroy`` / ``ObjectDeath`` retire it,
``*Respecify`` replaces its description; every other field is resolved. Kinds no call
creates (:func:`implicit_kinds`: ``Framebuffer``, ``Xfb``, ``Context``) come into being
at their first use and leave by ``ObjectDeath`` (MobileGL's ABI has no record field of
kind ``Xfb``: ``BindStreamOutput`` names its object by GL name and lifetime id, so that table
stays empty). ``{0, kMGPipeDefaultFramebufferGen}``
of ``Framebuffer`` is the default framebuffer and always resolves.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..schema import layouts
from ..schema.kinds import handle_kinds, reissue_kinds, resource_kinds
from ..schema.tables import tables as _tables
from ..wire.spec import all_specs, call_spec

__all__ = [
    "HANDLE_FIELDS",
    "handle_fields",
    "RESOURCE",
    "RESOURCE_KINDS",
    "REISSUE_KINDS",
    "KIND_FROM_RECORD",
    "Site",
    "sites",
    "role",
    "table_of",
    "implicit_kinds",
    "handle_locations",
    "coverage_problems",
]

RESOURCE = "Resource"


KIND_FROM_RECORD = "KindFromRecord"


def handle_fields() -> dict[str, dict[str, str]]:
    """call -> {field path: kind} (``HANDLE_FIELDS``; the tables', unless replaced here)."""
    table = globals().get("HANDLE_FIELDS")
    return table if table is not None else _tables().HANDLE_FIELDS


def __getattr__(name: str) -> object:
    # Read from the tables on first use, never at import:
    # HANDLE_FIELDS; RESOURCE_KINDS (the Resource slot space, kMGPipeResourceKindMask);
    # REISSUE_KINDS (creates re-issued on a live handle: seed 001 D-G1, seed 002 §1).
    if name == "HANDLE_FIELDS":
        return _tables().HANDLE_FIELDS
    if name == "RESOURCE_KINDS":
        return resource_kinds()
    if name == "REISSUE_KINDS":
        return reissue_kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_H = "MGPipeHandle"


def role(call: str) -> str:
    """``create`` / ``delete`` / ``respecify`` / ``use`` for the call's first field."""
    if call.startswith("Create") or call.endswith("Create"):
        return "create"
    if call.startswith("Delete") or call.endswith("Destroy") or call == "ObjectDeath":
        return "delete"
    if call.endswith("Respecify"):
        return "respecify"
    return "use"


def table_of(kind: str) -> str:
    """The server table a kind lives in (resources share one)."""
    return RESOURCE if kind in resource_kinds() else kind


@lru_cache(maxsize=None)
def implicit_kinds() -> frozenset[str]:
    """Kinds with no creating call: they come into being at first use."""
    created = {
        table_of(next(iter(f.values())).rstrip("?"))
        for c, f in handle_fields().items()
        if f and role(c) == "create"
    }
    return frozenset(k for k in handle_kinds() if table_of(k) not in created)


def _generic(path: layouts.Path) -> str:
    return "".join("[]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")


@lru_cache(maxsize=None)
def handle_locations(call: str) -> tuple[str, ...]:
    """Every place a record of ``call`` carries an ``MGPipeHandle``, as generic paths."""
    spec = call_spec(call)
    out: list[str] = []
    for p in layouts.paths_of(spec.payload, _H):
        g = _generic(p)
        if g not in out:
            out.append(g)
    for t in spec.tails:
        if t.dtype.names:
            for p in layouts.paths_of(t.element, _H):
                g = f"{t.element}[]" + (f".{_generic(p)}" if p else "")
                if g not in out:
                    out.append(g)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Site:
    """One handle field of a call, compiled: concrete paths, kind, null rule."""

    field: str  # the generic path, as written in HANDLE_FIELDS
    kind: str  # an MGPipeKind, RESOURCE, or KIND_FROM_RECORD
    nullable: bool
    tail: str | None  # tail element name, None for a payload field
    paths: tuple[layouts.Path, ...]  # concrete payload paths, or the path inside one element


@lru_cache(maxsize=None)
def sites(call: str) -> tuple[Site, ...]:
    """The compiled sites of ``call``; the first one is the object the call names."""
    spec = call_spec(call)
    out = []
    for fld, kind_spec in handle_fields()[call].items():
        nullable = kind_spec.endswith("?")
        kind = kind_spec.rstrip("?")
        if "[]" in fld and fld.split("[]", 1)[0] in {t.element for t in spec.tails}:
            element, _, rest = fld.partition("[]")
            inner = tuple(
                p for p in layouts.paths_of(element, _H) if _generic(p) == rest.lstrip(".")
            )
            out.append(Site(fld, kind, nullable, element, inner))
        else:
            concrete = tuple(p for p in layouts.paths_of(spec.payload, _H) if _generic(p) == fld)
            out.append(Site(fld, kind, nullable, None, concrete))
    return tuple(out)


def coverage_problems() -> list[str]:
    """Every disagreement between HANDLE_FIELDS and the tables (empty = covered)."""
    problems = []
    calls = {s.name for s in all_specs()}
    table = handle_fields()
    for c in sorted(calls - set(table)):
        problems.append(f"{c}: not in HANDLE_FIELDS")
    for c in sorted(set(table) - calls):
        problems.append(f"{c}: in HANDLE_FIELDS but not a catalogue call")
    for c in sorted(calls & set(table)):
        want, have = set(handle_locations(c)), set(table[c])
        problems += [f"{c}.{f}: handle field not mapped" for f in sorted(want - have)]
        problems += [f"{c}.{f}: mapped but carries no handle" for f in sorted(have - want)]
    return problems
