"""G2 PipeThunks.inc: monolith direct-call thunks MGP_<Name>()."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeThunks.inc"
TEMPLATE = "PipeThunks.inc.j2"
TITLE = "G2: monolith direct-call thunks MGP_<Name>()"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls",)


def context(model: Model) -> dict:
    return {
        "tables": list(dict.fromkeys(c.table for c in model.calls)),
        "thunks": [(c, "kOptional" in c.flags) for c in model.calls],
    }
