"""G4 PipeVerify.inc: per-field comparators from PipeFields.def; floats compared by bits."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeVerify.inc"
TEMPLATE = "PipeVerify.inc.j2"
TITLE = "G4: per-field comparators (MOBILEGL_PIPE_VERIFY), floats compared by bits"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("structs", "field_lists")


def _how(member, listed: set[str]) -> str:  # type: ignore[no-untyped-def]
    if member.struct is not None and member.struct in listed:
        return "struct"
    if member.is_float or member.count > 1 or member.struct is not None:
        return "bits"
    return "value"


def context(model: Model) -> dict:
    listed = {f.struct for f in model.field_lists}
    comparators = []
    for s in model.structs:
        fl = next((f for f in model.field_lists if f.struct == s.name), None)
        if fl is None:
            continue
        by_name = {m.name: m for m in s.members}
        fields = [(by_name[n], _how(by_name[n], listed)) for n in fl.fields]
        comparators.append((s, fields))
    return {"comparators": comparators}
