"""FieldOwnership.def of MobileGL's tree: every PipeInputs field in exactly one class.

RECORD_SUPPLIED is derived, not listed: the fields Coverage.def's emitted list names, minus
those the frontend refuses to treat as supplied whole (``EmittedCallSuppliesTheWholeField``
in ``MG_Impl/Pipe/PipeFill.cpp``, read where the tree holds it). Where the tree does not hold
that source, an emitted field that FieldOwnership.def classifies by hand is taken as refused
(the row is the refusal) and the model says so in the field's ``why``.

The gates (each one line, placed in the row at fault):

* ``OWNERSHIP-FIELD``   a row names no accessor of Coverage.def;
* ``OWNERSHIP-CLASS``   a class that is none of the four, or RECORD_SUPPLIED written by hand;
* ``OWNERSHIP-TWICE``   a field in two classes (two rows, or a row and the derivation);
* ``OWNERSHIP-PHASE``   a BARRIER_PULLED row that names no retiring phase, or another class
  that names one;
* ``OWNERSHIP-MISSING`` a field in no class;
* ``OWNERSHIP-FORWARD`` a forward row for a field that is not sticky, or whose class differs
  from its field row's;
* ``VERB-STAMP``        a stamp row (MGP_VERB_OP_LIST) naming no call or no verb, a call
  stamped twice, an exemption of a call that is not verb-shaped or with no reason, and every
  verb-shaped call (kCtxVerb, or named like a verb) with neither a stamp row nor an exemption.
"""

from __future__ import annotations

from mgpipe.gen.catalogue import Catalogue
from mgpipe.gen.errors import ErrorCollector, one_of
from mgpipe.gen.vocabulary import Vocabulary

#: field -> (class, retiring phase, why)
Ownership = dict[str, tuple[str, str, str]]


def derive(cat: Catalogue, vocab: Vocabulary, refused: tuple[tuple[str, ...], str] | None,
           errors: ErrorCollector) -> Ownership:
    fields = list(dict.fromkeys(r.accessor.text for r in cat.coverage))
    known = set(fields)
    listed = {r.field.text for r in cat.rows("MGP_FIELD_OWNERSHIP_LIST")}
    emitted = [r.accessor.text for r in cat.rows("MGP_COVERAGE_EMITTED_LIST")]
    if refused is None:
        refusals = {f for f in emitted if f in listed}
        how = ("derived: Coverage.def's emitted list; the tree holds no MG_Impl/Pipe/PipeFill.cpp, "
               "so a hand-classified emitted field is read as refused")
    else:
        refusals = set(refused[0])
        how = f"derived: Coverage.def's emitted list, not refused by {refused[1]}"
    own: Ownership = {}
    for f in emitted:
        if f not in refusals and f in known:
            own[f] = (vocab.record_supplied, vocab.no_phase, how)
    classes = vocab.ownership_classes
    rows = cat.rows("MGP_FIELD_OWNERSHIP_LIST")
    for r in rows:
        f, cls, phase = r.field.text, r.ownership.text, r.phase.text.strip()
        if f not in known:
            errors.add(r.field.loc.error(
                "OWNERSHIP-FIELD", f"{f} is not a PipeInputs field, expected an accessor of "
                f"Coverage.def's MGP_COVERAGE_ACCESSOR_LIST"))
            continue
        if cls not in classes:
            errors.add(r.ownership.loc.error(
                "OWNERSHIP-CLASS", f"{f} is in class {cls!r}, expected {one_of(classes[1:], '-')}"))
            own.setdefault(f, (cls, phase, r.why.text))  # classified, wrongly: not also missing
            continue
        if cls == vocab.record_supplied:
            errors.add(r.ownership.loc.error(
                "OWNERSHIP-CLASS", f"{f} is listed {cls}, which is derived (the emitted list minus "
                f"the frontend's refusals) and never written by hand, expected another class"))
            own.setdefault(f, (cls, phase, r.why.text))
            continue
        if f in own:
            first = ("the derivation (Coverage.def's emitted list)" if own[f][0] == vocab.record_supplied
                     else "an earlier row")
            errors.add(r.field.loc.error(
                "OWNERSHIP-TWICE", f"{f} is {cls} here and {own[f][0]} by {first}, expected "
                f"exactly one class"))
            continue
        if cls == vocab.barrier_pulled and phase in ("", vocab.no_phase):
            errors.add(r.phase.loc.error(
                "OWNERSHIP-PHASE", f"{f} is {cls} and names no retiring phase, expected the "
                f"phase that retires the pull"))
        elif cls != vocab.barrier_pulled and phase != vocab.no_phase:
            errors.add(r.phase.loc.error(
                "OWNERSHIP-PHASE", f"{f} is {cls} and names retiring phase {phase!r}, expected "
                f"'{vocab.no_phase}': only {vocab.barrier_pulled} rows are retired"))
        own[f] = (cls, phase, r.why.text)
    calls_loc = cat.coverage[0].loc if cat.coverage else None
    for f in fields:
        if f not in own and calls_loc is not None:
            loc = next(r.accessor.loc for r in cat.coverage if r.accessor.text == f)
            errors.add(loc.error(
                "OWNERSHIP-MISSING", f"PipeInputs field {f} is in no ownership class, expected a "
                f"MGP_FIELD_OWNERSHIP_LIST row or an emitted-list row"))
    sticky = {r.accessor.text for r in cat.rows("MGP_COVERAGE_STICKY_LIST")}
    seen: set[str] = set()
    for r in cat.rows("MGP_FIELD_OWNERSHIP_FORWARD_LIST"):
        f = r.field.text
        if f not in sticky:
            errors.add(r.field.loc.error(
                "OWNERSHIP-FORWARD", f"{f} has a forward row but is not sticky, expected one of "
                f"{one_of(sorted(sticky), 'the sticky accessors')}"))
        elif f in seen:
            errors.add(r.field.loc.error("OWNERSHIP-FORWARD", f"{f} has two forward rows, expected one"))
        elif f in own and own[f][0] != r.ownership.text:
            errors.add(r.ownership.loc.error(
                "OWNERSHIP-FORWARD", f"{f}'s forward row says {r.ownership.text} and its field row "
                f"{own[f][0]}, expected the same class"))
        seen.add(f)
    return own


def gate_verb_stamps(cat: Catalogue, vocab: Vocabulary, errors: ErrorCollector) -> None:
    calls = {r.name.text: r for r in cat.calls}
    verbs = {r.verb.text for r in cat.rows("MGP_FILL_VERB_LIST")}
    stamped: dict[str, object] = {}
    for r in cat.rows("MGP_VERB_OP_LIST"):
        if r.call.text not in calls:
            errors.add(r.call.loc.error("VERB-STAMP", f"stamp row names call {r.call.text!r}, "
                                        f"which PipeCalls.def does not declare, expected a call"))
        if r.verb.text not in verbs:
            errors.add(r.verb.loc.error("VERB-STAMP", f"stamp row names verb {r.verb.text!r}, which "
                                        f"FillPoints.def's MGP_FILL_VERB_LIST does not, expected a verb"))
        if r.call.text in stamped:
            errors.add(r.call.loc.error("VERB-STAMP", f"{r.call.text} has two stamp rows, expected one"))
        stamped[r.call.text] = r
    shaped = [n for n, r in calls.items() if r.cls.text == vocab.verb_call_class or n in verbs]
    exempt: set[str] = set()
    for r in cat.rows("MGP_VERB_OP_EXEMPT_LIST"):
        name = r.call.text
        if name not in calls:
            errors.add(r.call.loc.error("VERB-STAMP", f"exemption names call {name!r}, which "
                                        f"PipeCalls.def does not declare, expected a call"))
        elif name not in shaped:
            errors.add(r.call.loc.error("VERB-STAMP", f"{name} is exempted but is not verb-shaped "
                                        f"(not {vocab.verb_call_class}, no verb of its name), expected "
                                        f"no exemption"))
        elif name in stamped:
            errors.add(r.call.loc.error("VERB-STAMP", f"{name} has a stamp row and an exemption, "
                                        f"expected one of them"))
        if r.why.kind != "string" or not r.why.text.strip():
            errors.add(r.why.loc.error("VERB-STAMP", f"{name}'s exemption gives no reason, expected "
                                       f"a string that says why it is not a stamp point"))
        exempt.add(name)
    for name in shaped:
        if name not in stamped and name not in exempt:
            errors.add(calls[name].name.loc.error(
                "VERB-STAMP", f"{name} is verb-shaped ({calls[name].cls.text}) and has no "
                f"MGP_VERB_OP_LIST row and no MGP_VERB_OP_EXEMPT_LIST row, expected X({name}, "
                f"<Verb>) or an exemption with its reason"))


__all__ = ["Ownership", "derive", "gate_verb_stamps"]
