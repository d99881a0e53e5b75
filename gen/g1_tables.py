"""G1 PipeTables.inc: the MGPipeScreen / MGPipeContext function-pointer tables."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeTables.inc"
TEMPLATE = "PipeTables.inc.j2"
TITLE = "G1: MGPipeScreen / MGPipeContext function-pointer tables, one member per call"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls",)


def context(model: Model) -> dict:
    tables = []
    for table in dict.fromkeys(c.table for c in model.calls):
        calls = [c for c in model.calls if c.table == table]
        classes = dict.fromkeys(c.cls for c in calls)
        tables.append((table, [(cls, [c for c in calls if c.cls == cls]) for cls in classes]))
    return {"tables": tables}
