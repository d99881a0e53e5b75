"""The backend table: one entry per catalogue call (seed 001 §1.2, G1).

A backend is any object whose attribute named exactly like a call (``backend.DrawVbo``)
is a callable ``(server_ctx, decoded) -> object``, or None / absent (a null entry).
:func:`build_table` turns such an object into ``{call: entry | None}`` over every call
of ``CALLS`` and refuses an attribute that looks like a call but is not one (a typo
would otherwise silently become a null entry).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..schema import tables as _t

if TYPE_CHECKING:
    from ..server.context import ServerContext
    from ..wire.codec import Decoded

__all__ = ["Entry", "Backend", "call_names", "build_table", "looks_like_call"]

Entry = Callable[["ServerContext", "Decoded"], object]

#: CamelCase with a lower-case second letter: ``DrawVbo``, ``GetCaps`` (not ``KIND``).
_CALL_LIKE = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*$")


class Backend(Protocol):
    """Structural type of a backend: attributes named like the calls (see the module)."""

    def __getattr__(self, name: str) -> Entry | None: ...


def call_names() -> tuple[str, ...]:
    """Every call name, in opcode order."""
    return tuple(str(row["name"]) for row in _t.tables().CALLS)


def looks_like_call(name: str) -> bool:
    return bool(_CALL_LIKE.match(name))


def build_table(backend: Any) -> dict[str, Entry | None]:
    """``{call: entry | None}`` for every call; ValueError names a mistyped entry."""
    names = call_names()
    known = set(names)
    for attr in dir(backend):
        if attr in known or not looks_like_call(attr):
            continue
        value = getattr(backend, attr, None)
        if callable(value) and not isinstance(value, type):
            near = difflib.get_close_matches(attr, names, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(
                f"{type(backend).__name__}.{attr} looks like a backend entry but is not a "
                f"catalogue call{hint}"
            )
    table: dict[str, Entry | None] = {}
    for name in names:
        entry = getattr(backend, name, None)
        if entry is not None and not callable(entry):
            raise ValueError(f"{type(backend).__name__}.{name} is not callable")
        table[name] = entry
    return table
