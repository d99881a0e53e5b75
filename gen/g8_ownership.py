"""G8 PipeFieldOwnership.inc: every PipeInputs field in exactly one ownership class."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeFieldOwnership.inc"
TEMPLATE = "PipeFieldOwnership.inc.j2"
TITLE = "G8: PipeInputs field ownership (RECORD-SUPPLIED / APPLIER-DERIVED / BARRIER-PULLED / FATAL)"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("pipe_inputs", "ownership_classes")


def context(model: Model) -> dict:
    counts = [(c, sum(1 for p in model.pipe_inputs if p.ownership == c)) for c in model.ownership_classes]
    return {"fields": model.pipe_inputs, "counts": counts}
