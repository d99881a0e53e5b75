"""G5b PipeFillPoints.inc: the frontend verbs, their validate classes, and each class's
may-read field mask (its own fields and every sticky field)."""

from __future__ import annotations

from mgpipe.gen.errors import GenError
from mgpipe.gen.model import Model, Verb

FILE = "PipeFillPoints.inc"
TEMPLATE = "PipeFillPoints.inc.j2"
TITLE = "G5b: frontend verbs, their validate classes and the fields each class may read"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("verbs", "calls", "validate_classes", "fill_points", "pipe_inputs")
#: the ABI's field-mask width in 64-bit words (MGPipeFieldMask::Words): room for 128
#: fields; a field set that outgrows it is a static_assert, not a silent widening
MASK_WORDS = 2
STICKY = "kSticky"


def context(model: Model) -> dict:
    fields = sorted(model.pipe_inputs, key=lambda f: f.id)
    if fields and fields[-1].id >= 64 * MASK_WORDS:
        raise GenError(f"generated/{FILE}", 1, 1, "FIELD-MASK",
                       f"PipeInputs field {fields[-1].accessor} has id {fields[-1].id}, past the "
                       f"{64 * MASK_WORDS}-bit field mask, expected at most {64 * MASK_WORDS} "
                       f"fields (or a wider MASK_WORDS in gen/g5b_fill_points.py)")  # fmt: skip
    sticky = {f.accessor for f in fields if f.lifetime == STICKY}
    own = dict(model.fill_points)
    masks = []
    for cls in model.validate_classes:
        mine = set(own.get(cls, ()))
        words = [0] * MASK_WORDS
        for f in fields:
            if f.accessor in mine or f.field in mine or f.accessor in sticky:
                words[f.id // 64] |= 1 << (f.id % 64)
        n_own = sum(1 for f in fields if (f.accessor in mine or f.field in mine) and f.accessor not in sticky)
        masks.append((cls, [f"0x{w:016x}ull" for w in words], n_own, len(sticky)))
    # a tree without a verb list (the bundled catalogue) has its verbs in PipeCalls.def: the
    # calls that carry a validate class
    verbs = list(model.verbs) or [Verb(name=c.name, cls=c.validate_class) for c in model.calls
                                  if c.validate_class]
    return {"verbs": verbs, "classes": model.validate_classes, "masks": masks,
            "mask_words": MASK_WORDS}
