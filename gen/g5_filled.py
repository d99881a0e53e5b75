"""G5 PipeFilled.inc: PipeInputs field ids, the sticky set, who fills and who emits each
field, and the per-verb poison generations; beside them this project's per-class fill
masks and verb entry.
"""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeFilled.inc"
TEMPLATE = "PipeFilled.inc.j2"
TITLE = "G5: PipeInputs field ids, per-verb fill table and poison generations"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "pipe_inputs", "fill_points", "validate_classes", "lists", "enums")
NO_CLASS = "kMGPipeNoValidateClass"
STICKY = "kSticky"  # the lifetime of a field valid across verbs
STICKY_LIST = "MGP_COVERAGE_STICKY_LIST"  # where a tree argues each sticky field
NO_EMITTER = "kNone"  # the emitter enum's "still pulled"


def context(model: Model) -> dict:
    fields = sorted(model.pipe_inputs, key=lambda f: f.id)
    words = (len(fields) + 63) // 64
    masks = []
    for cls, filled in model.fill_points:
        bits = [0] * words
        for f in fields:
            if f.field in filled:
                bits[f.id // 64] |= 1 << (f.id % 64)
        masks.append((cls, [f"0x{b:016x}ull" for b in bits], len(filled)))
    verbs = [(c.name, c.validate_class or NO_CLASS) for c in model.calls]
    why = {r.key: r.why for r in model.rows_of(STICKY_LIST)}
    emitters = sorted({f.emitted_by for f in fields if f.emitted_by})
    # the per-opcode class table is spelt in the headers' validate-class enum; a tree whose
    # classes are declared by PipeFillPoints.inc instead (MobileGL's) has its own verb entry
    classes = set(model.validate_classes)
    project_poison = any(classes <= {n for n, _ in e.values} for e in model.enums)
    return {
        "project_poison": project_poison,
        "fields": [(f, f.lifetime == STICKY, why.get(f.accessor)) for f in fields],
        "sticky_count": sum(1 for f in fields if f.lifetime == STICKY),
        "emitters": [NO_EMITTER, *emitters],
        "no_emitter": NO_EMITTER,
        "emitted_count": sum(1 for f in fields if f.emitted_by),
        "words": words, "masks": masks, "verbs": verbs,
        "no_class": NO_CLASS, "class_count": len(model.validate_classes),
    }
