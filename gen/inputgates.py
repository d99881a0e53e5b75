"""Gates on the PipeInputs side: accessors, ownership (G8), coverage (G6), fill points (G5),
variable tails and Espryt spans."""

from __future__ import annotations

from mgpipe.gen.catalogue import Loc
from mgpipe.gen.ctx import CLIENT_RESOLVED, INPUTS_STRUCT, RS_STRUCT, Ctx
from mgpipe.gen.ctx import one_of_enum as _one_of
from mgpipe.gen.rows import CoverageRow, InputRow, OwnershipRow

def gate_pipe_inputs(ctx: Ctx) -> None:
    """PIPE-INPUTS: PipeInputs.def rows and struct PipeInputs fields correspond one to one."""
    s = ctx.lay.structs.get(INPUTS_STRUCT)
    if s is None:
        ctx.err(Loc(ctx.cat.path_of("PipeInputs.def"), 1, 1), "PIPE-INPUTS",
                "struct PipeInputs is not declared in catalogue/include, expected it")
        return
    fields = [m.name for m in s.members]
    seen_acc: set[str] = set()
    seen_field: set[str] = set()
    for r in ctx.cat.pipe_inputs:
        acc, fld, life = r.accessor, r.field, r.lifetime
        if acc.text in seen_acc:
            ctx.err(acc.loc, "PIPE-INPUTS", f"accessor {acc.text} has two rows, expected one")
        if fld.text in seen_field:
            ctx.err(fld.loc, "PIPE-INPUTS", f"field {fld.text} backs two accessors, expected one")
        seen_acc.add(acc.text)
        seen_field.add(fld.text)
        if fld.text not in fields:
            ctx.err(fld.loc, "PIPE-INPUTS",
                    f"PipeInputs has no field {fld.text!r} (accessor {acc.text}), expected a member of struct PipeInputs")
        if life.text not in ("kPerVerb", "kSticky"):
            ctx.err(life.loc, "PIPE-INPUTS", f"unknown lifetime {life.text!r}, expected kPerVerb or kSticky")
    for m in s.members:
        if m.name not in seen_field:
            ctx.err(Loc(s.path, m.line, m.col), "PIPE-INPUTS",
                    f"PipeInputs::{m.name} has no accessor row in PipeInputs.def, expected X(Get..., {m.name}, kPerVerb)")


def _fields(ctx: Ctx) -> dict[str, InputRow]:
    return {r.field.text: r for r in ctx.cat.pipe_inputs}


def gate_ownership(ctx: Ctx) -> None:
    """OWNERSHIP: every PipeInputs field in exactly one ownership class (G8)."""
    classes = ctx.enum("MGPipeFieldOwnership")
    fields = _fields(ctx)
    owned: dict[str, list[tuple[str, OwnershipRow]]] = {}
    for r in ctx.cat.ownership:
        fld, own = r.field, r.ownership
        if fld.text not in fields:
            ctx.err(fld.loc, "OWNERSHIP", f"{fld.text} is not a PipeInputs field, expected one of PipeInputs.def's fields")
            continue
        for part in own.parts:
            if part not in classes:
                ctx.err(own.loc, "OWNERSHIP", f"unknown ownership class {part!r}, expected {_one_of(classes)}")
            owned.setdefault(fld.text, []).append((part, r))
    for name, r in fields.items():
        got = owned.get(name, [])
        if not got:
            ctx.err(r.field.loc, "OWNERSHIP",
                    f"PipeInputs field {name} is in no ownership class, expected exactly one O({name}, ...) "
                    f"row in FieldOwnership.def")
        elif len(got) > 1:
            ctx.err(got[1][1].field.loc, "OWNERSHIP",
                    f"PipeInputs field {name} is in {len(got)} ownership classes "
                    f"({', '.join(g[0] for g in got)}), expected exactly one")


def gate_coverage(ctx: Ctx) -> None:
    """COVERAGE-ACCESSOR / COVERAGE-CALL / COVERAGE-UNMAPPED (G6: zero unmapped)."""
    accessors = {r.accessor.text: r for r in ctx.cat.pipe_inputs}
    calls = {r.name.text for r in ctx.cat.calls}
    mapped: dict[str, CoverageRow] = {}
    for r in ctx.cat.coverage:
        acc, call = r.accessor, r.call
        if acc.text not in accessors:
            ctx.err(acc.loc, "COVERAGE-ACCESSOR",
                    f"coverage row names accessor {acc.text!r}, which PipeInputs.def does not declare, "
                    f"expected a PipeInputs accessor")
        elif acc.text in mapped:
            ctx.err(acc.loc, "COVERAGE-ACCESSOR", f"accessor {acc.text} is mapped twice, expected one row")
        mapped[acc.text] = r
        if call.text != CLIENT_RESOLVED and call.text not in calls:
            ctx.err(call.loc, "COVERAGE-CALL",
                    f"coverage row names call {call.text!r}, which PipeCalls.def does not declare, "
                    f"expected a call name or {CLIENT_RESOLVED}")
    for name, r in accessors.items():
        if name not in mapped:
            ctx.err(r.accessor.loc, "COVERAGE-UNMAPPED",
                    f"accessor {name} is UNMAPPED: no Coverage.def row says which call answers it, "
                    f"expected C({name}, <Call>) or C({name}, {CLIENT_RESOLVED})")


def gate_fill_points(ctx: Ctx) -> None:
    """FILL-POINTS: verbs and fields of FillPoints.def exist; every per-verb field is filled."""
    vclasses = ctx.enum("MGPipeValidateClass")
    calls = {r.name.text for r in ctx.cat.calls}
    fields = _fields(ctx)
    seen: set[str] = set()
    for r in ctx.cat.verb_classes:
        call, cls = r.call, r.cls
        if call.text not in calls:
            ctx.err(call.loc, "FILL-POINTS", f"V({call.text}, ...) names no call, expected a PipeCalls.def name")
        if call.text in seen:
            ctx.err(call.loc, "FILL-POINTS", f"call {call.text} has two validate classes, expected one")
        seen.add(call.text)
        if cls.text not in vclasses:
            ctx.err(cls.loc, "FILL-POINTS", f"unknown validate class {cls.text!r}, expected {_one_of(vclasses)}")
    filled: set[str] = set()
    for r in ctx.cat.fill_points:
        cls, fld = r.cls, r.field
        if cls.text not in vclasses:
            ctx.err(cls.loc, "FILL-POINTS", f"unknown validate class {cls.text!r}, expected {_one_of(vclasses)}")
        if fld.text not in fields:
            ctx.err(fld.loc, "FILL-POINTS", f"{fld.text} is not a PipeInputs field, expected one of PipeInputs.def's fields")
        filled.add(fld.text)
    for name, r in fields.items():
        if name not in filled:
            ctx.err(r.field.loc, "FILL-POINTS",
                    f"PipeInputs field {name} is filled by no validate class: every read would be "
                    f"Fatal{{UnmigratedPipeInput}}, expected an F(<class>, {name}) row")


SCALAR_TAILS = {"Int32": "i32", "Uint32": "u32"}
WHEN = ("kAlways", "kWhenSet", "kWhenClear")


def gate_tails(ctx: Ctx) -> None:
    """TAILS: every kVarTail call has tails, and every tail names real members and bounds."""
    calls = {r.name.text: r for r in ctx.cat.calls}
    consts = ctx.lay.constants
    enumerators = {e.name: e.value for en in ctx.lay.enums.values() for e in en.enumerators}
    has_tail: set[str] = set()
    for r in ctx.cat.tails:
        call, elem, count, bound = r.call, r.element, r.count, r.bound
        cfield, cbit, when = r.cond_field, r.cond_bit, r.when
        has_tail.add(call.text)
        row = calls.get(call.text)
        if row is None:
            ctx.err(call.loc, "TAILS", f"tail of unknown call {call.text!r}, expected a PipeCalls.def name")
            continue
        if "kVarTail" not in row.flags.parts:
            ctx.err(call.loc, "TAILS", f"{call.text} has a tail but no kVarTail flag, expected kVarTail")
        if elem.text not in ctx.lay.structs and elem.text not in SCALAR_TAILS:
            ctx.err(elem.loc, "TAILS", f"tail element {elem.text!r} is no struct or scalar, expected one")
        payload = ctx.lay.structs.get(row.payload.text)
        members = {m.name for m in payload.members} if payload else set()
        if count.kind != "int" and count.text not in members:
            ctx.err(count.loc, "TAILS", f"{row.payload.text} has no count member {count.text!r}, expected a member or 1")
        elif count.kind == "int" and count.text != "1":
            ctx.err(count.loc, "TAILS", f"a literal count must be 1, not {count.text}")
        if bound.kind != "dash" and bound.text not in consts:
            ctx.err(bound.loc, "TAILS", f"bound {bound.text!r} is no named constant, expected one or -")
        if count.kind != "int" and bound.kind == "dash":
            ctx.err(bound.loc, "TAILS", f"count {count.text} of {call.text} has no bound, expected a named constant")
        if when.text not in WHEN:
            ctx.err(when.loc, "TAILS", f"unknown condition {when.text!r}, expected one of {', '.join(WHEN)}")
        elif when.text != "kAlways":
            if cfield.text not in members:
                ctx.err(cfield.loc, "TAILS", f"{row.payload.text} has no member {cfield.text!r}, expected a flags member")
            if cbit.text not in enumerators:
                ctx.err(cbit.loc, "TAILS", f"condition bit {cbit.text!r} is no enumerator, expected one")
    for r in ctx.cat.calls:
        if "kVarTail" in r.flags.parts and r.name.text not in has_tail:
            ctx.err(r.flags.loc, "TAILS", f"{r.name.text} is kVarTail but Tails.def describes no tail, expected T({r.name.text}, ...) rows")


def gate_spans(ctx: Ctx) -> None:
    """SPANS: each Espryt span boundary names a member of RenderStateParameters, in order."""
    rs = ctx.lay.structs.get(RS_STRUCT)
    if rs is None:
        return
    offs = {m.name: m.offset for m in rs.members}
    last = -1
    for r in ctx.cat.spans:
        const, member = r.constant, r.member
        if member.text not in offs:
            ctx.err(member.loc, "SPANS", f"{RS_STRUCT} has no member {member.text!r}, expected a member name")
            continue
        if offs[member.text] <= last:
            ctx.err(member.loc, "SPANS", f"{const.text} at offset {offs[member.text]} does not follow the previous boundary, expected ascending spans")
        last = offs[member.text]



__all__ = ["SCALAR_TAILS", "WHEN", "gate_coverage", "gate_fill_points", "gate_ownership",
           "gate_pipe_inputs", "gate_spans", "gate_tails"]
