"""G4 PipeVerify.inc: per-field comparators from PipeFields.def; floats compared by bits.

Two comparator families over the same field lists: ``MGPipeVerify(a, b, &field)``, one
overload per listed struct (MobileGL's), and this project's ``MGPipeVerify_<Struct>``. A
tree that spells arrays with MobileGL's ``Array<T, N>`` (MG_Util) also gets the overloads
for that vocabulary: ``Array`` and vector types (``VecBase``) compared element by element,
and the field-list macros included for its includers.
"""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeVerify.inc"
TEMPLATE = "PipeVerify.inc.j2"
TITLE = "G4: per-field comparators (MOBILEGL_PIPE_VERIFY), floats compared by bits"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("structs", "field_lists", "constants")


def _how(member, listed: set[str]) -> str:  # type: ignore[no-untyped-def]
    if member.struct is not None and member.struct in listed:
        return "struct"
    if member.is_float or member.count > 1 or member.struct is not None:
        return "bits"
    return "value"


#: MobileGL's array alias and vector base (MG_Util): a member type spelt ``Array<...>`` marks
#: a tree that has them
ARRAY_ALIAS, VECTOR_BASE = "Array", "VecBase"
#: a tree's constant saying its Array<T, N> is an alias of T[N] (mgpipe's overlay states it)
ARRAY_IS_C_ARRAY = "kMGPipeArrayIsCArray"
#: where the field-list macros are, seen from generated/ inside the tree
FIELD_LISTS_INCLUDE = "../PipeFields.def"


def context(model: Model) -> dict:
    listed = {f.struct for f in model.field_lists}
    known = {s.name for s in model.structs}
    vocabulary = any(m.type.startswith(ARRAY_ALIAS + "<") for s in model.structs for m in s.members)
    comparators = []
    for s in model.structs:
        fl = next((f for f in model.field_lists if f.struct == s.name), None)
        if fl is None:
            continue
        by_name = {m.name: m for m in s.members}
        fields = [(by_name[n], _how(by_name[n], listed)) for n in fl.fields]
        comparators.append((s, fields))
    return {
        "comparators": comparators,
        "verified": [(f.struct, f.fields) for f in model.field_lists if f.struct in known],
        "vocabulary": vocabulary,
        # an Array<T, N> overload beside the C array one, unless the tree says its Array is
        # T[N] (the bundled tree's overlay: the two would be one function, defined twice)
        "array_overload": ARRAY_IS_C_ARRAY not in dict(model.constants),
        "array_alias": ARRAY_ALIAS,
        "vector_base": VECTOR_BASE,
        "field_lists_include": FIELD_LISTS_INCLUDE,
    }
