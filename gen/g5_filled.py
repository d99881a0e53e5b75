"""G5 PipeFilled.inc: PipeInputs field ids, the per-verb fill table, poison generations."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeFilled.inc"
TEMPLATE = "PipeFilled.inc.j2"
TITLE = "G5: PipeInputs field ids, per-verb fill table and poison generations"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "pipe_inputs", "fill_points", "validate_classes")
NO_CLASS = "kMGPipeNoValidateClass"


def context(model: Model) -> dict:
    fields = model.pipe_inputs
    words = (len(fields) + 63) // 64
    masks = []
    for cls, filled in model.fill_points:
        bits = [0] * words
        for f in fields:
            if f.field in filled:
                bits[f.id // 64] |= 1 << (f.id % 64)
        masks.append((cls, [f"0x{b:016x}ull" for b in bits], len(filled)))
    verbs = [(c.name, c.validate_class or NO_CLASS) for c in model.calls]
    return {"fields": fields, "words": words, "masks": masks, "verbs": verbs,
            "no_class": NO_CLASS, "class_count": len(model.validate_classes)}
