"""G2 PipeThunks.inc: monolith direct-call thunks MGP_<Name>() over the installed tables."""

from __future__ import annotations

from mgpipe.gen.g1_tables import signature, tables
from mgpipe.gen.model import Model

FILE = "PipeThunks.inc"
TEMPLATE = "PipeThunks.inc.j2"
TITLE = "G2: monolith direct-call thunks MGP_<Name>()"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls",)


def context(model: Model) -> dict:
    table_of = {c.name: t for t, calls in tables(model) for c in calls}
    return {
        "tables": [t for t, _ in tables(model)],
        "thunks": [(c, f"g{table_of[c.name]}", *signature(c)) for c in model.calls],
    }
