"""G8 PipeFieldOwnership.inc: every PipeInputs field in exactly one ownership class.

Where the tree's headers do not declare the ownership enum (MobileGL's MG_Pipe), this output
declares it, with an unclassified sentinel at 0, and carries FieldOwnership.def's whole
table: the class and retiring phase of every field, the forward rows of the sticky fields,
the per-argument rows, the verb each verb-boundary opcode stamps, and the class sizes.
"""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeFieldOwnership.inc"
TEMPLATE = "PipeFieldOwnership.inc.j2"
TITLE = "G8: PipeInputs field ownership (RECORD-SUPPLIED / APPLIER-DERIVED / BARRIER-PULLED / FATAL)"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("pipe_inputs", "ownership_classes", "enums", "lists", "verbs")
ENUM = "MGPipeFieldOwnership"
UNCLASSIFIED = "UNCLASSIFIED"  # the sentinel a field no row classifies reads as
NO_PHASE = "-"
FORWARD_LIST = "MGP_FIELD_OWNERSHIP_FORWARD_LIST"
ARG_LIST = "MGP_FIELD_OWNERSHIP_ARG_LIST"
VERB_OP_LIST = "MGP_VERB_OP_LIST"
VERB_OP_EXEMPT_LIST = "MGP_VERB_OP_EXEMPT_LIST"


def enumerator(cls: str) -> str:
    """The C++ enumerator of a class: ``RECORD_SUPPLIED`` -> ``kRecordSupplied`` (a class
    already spelt as an enumerator stays as it is)."""
    if cls.startswith("k"):
        return cls
    return "k" + "".join(w.capitalize() for w in cls.split("_"))


def context(model: Model) -> dict:
    fields = sorted(model.pipe_inputs, key=lambda f: f.id)
    declared = any(e.name == ENUM for e in model.enums)
    classes = list(model.ownership_classes)
    counts = [(c, enumerator(c), sum(1 for f in fields if f.ownership == c)) for c in classes]
    by_field = {f.accessor: f for f in fields}
    forward = [(r.key, enumerator(r.values[0]), r.values[1] if len(r.values) > 1 else NO_PHASE, r.why)
               for r in model.rows_of(FORWARD_LIST)]
    args = [(r.key, r.values[0], enumerator(r.values[1]), r.why) for r in model.rows_of(ARG_LIST)]
    return {
        "declare_enum": not declared,
        "enum": ENUM,
        "unclassified": enumerator(UNCLASSIFIED),
        "names": [UNCLASSIFIED.replace("_", "-"), *(c.replace("_", "-") for c in classes)],
        "classes": [enumerator(c) for c in classes],
        "fields": [(f, enumerator(f.ownership) if f.ownership else enumerator(UNCLASSIFIED),
                    f.phase or NO_PHASE) for f in fields],
        "counts": counts,
        "forward": [row for row in forward if row[0] in by_field],
        "args": [row for row in args if row[0] in by_field],
        "verb_ops": [(r.key, r.values[0]) for r in model.rows_of(VERB_OP_LIST)],
        "exempt_count": len(model.rows_of(VERB_OP_EXEMPT_LIST)),
        "has_verbs": bool(model.verbs),
    }
