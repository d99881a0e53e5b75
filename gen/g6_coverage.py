"""G6 PipeCoverage.inc: every backend read point -> the MGPipe call that answers it."""

from __future__ import annotations

from mgpipe.gen.gates import CLIENT_RESOLVED
from mgpipe.gen.model import Model

FILE = "PipeCoverage.inc"
TEMPLATE = "PipeCoverage.inc.j2"
TITLE = "G6: backend read point -> MGPipe call; 0 UNMAPPED is the gate"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "pipe_inputs")


def context(model: Model) -> dict:
    ops = {c.name: c.opcode for c in model.calls}
    rows = [(p, ops.get(p.call, 0)) for p in model.pipe_inputs]
    return {
        "rows": rows,
        "client_resolved": CLIENT_RESOLVED,
        "mapped": sum(1 for p, op in rows if op),
        "resolved": sum(1 for p, op in rows if not op),
    }
