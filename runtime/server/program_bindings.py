"""``SetProgramBindings`` as the backends read it: one decode of the record's tails.

The applier keeps the last ``SetProgramBindings`` of a program on its ``ShaderCso`` object
(``obj.data["bindings"] = (payload, tails)``, :mod:`.apply_state`); a backend that binds the
program's resources asks :func:`program_overrides` for the post-link changes: uniform block
index -> binding point (the ``BlockBindingCount`` tail, ``Int32`` per block) and sampler
location -> texture unit (the ``SamplerUnitCount`` tail, ``MGPProgramSamplerUnit`` rows);
``-1`` in either is "unchanged" (the reflection's own binding stays). The tails are found by
their count field in the generated ``TAILS`` table, never by a typed position.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..schema import tables as _t
from .handle_fields import table_of

__all__ = ["program_overrides", "tail_index"]

_CALL = "SetProgramBindings"


@lru_cache(maxsize=None)
def tail_index(call: str, count_field: str) -> int:
    """The position among ``call``'s decoded tails of the one counted by ``count_field``."""
    rows = [r for r in _t.tables().TAILS if r["call"] == call]
    for i, row in enumerate(rows):
        if row["count_field"] == count_field:
            return i
    raise _t.TablesError(f"{call} has no tail counted by {count_field} (tails: "
                         + ", ".join(str(r["count_field"]) for r in rows) + ")")  # fmt: skip


def program_overrides(ctx: Any, handle: Any, where: str) -> tuple[dict[int, int], dict[int, int]]:
    """The program's ``SetProgramBindings``: (block index -> binding point, sampler location
    -> unit), entries of ``-1`` left out; both empty when none was pushed. ``handle`` is the
    program's ``ShaderCso``, resolved at ``where`` (the record field, for a refusal)."""
    obj = ctx.tables[table_of("ShaderCso")].resolve(handle, where)
    pushed = obj.data.get("bindings")
    blocks: dict[int, int] = {}
    units: dict[int, int] = {}
    if pushed is None:
        return blocks, units
    _, tails = pushed
    bi, ui = tail_index(_CALL, "BlockBindingCount"), tail_index(_CALL, "SamplerUnitCount")
    if len(tails) > bi:
        blocks = {i: int(v) for i, v in enumerate(tails[bi]) if int(v) >= 0}
    if len(tails) > ui:
        units = {int(row.Location): int(row.Unit) for row in tails[ui] if int(row.Unit) >= 0}
    return blocks, units
