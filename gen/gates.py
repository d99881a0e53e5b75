"""The gates: every cross-check between the .def tables and the libclang layouts.

Each gate is one function with one stable name (the ``GATE`` column of
``file:line:col: GATE: text``); :data:`GATES` lists them in the order they run. A gate
never raises: it records errors, and the build refuses after all gates have spoken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mgpipe.gen.catalogue import Catalogue, Loc
from mgpipe.gen.rows import CallRow, InputRow, OwnershipRow, SizeRow, CoverageRow
from mgpipe.gen.errors import ErrorCollector, one_of
from mgpipe.gen.layout_model import Layouts, Struct

if TYPE_CHECKING:
    from mgpipe.gen.lock import LockPolicy

CLIENT_RESOLVED = "kClientResolved"
REPLY_FLAG, REPLY_WAIT = "kReplySlot", "kWaitReply"
BLOB_STRUCT = "MGPBlobRef"
RS_STRUCT = "RenderStateParameters"
INPUTS_STRUCT = "PipeInputs"


@dataclass
class Ctx:
    cat: Catalogue
    lay: Layouts
    errors: ErrorCollector = field(default_factory=ErrorCollector)
    disabled: frozenset[str] = frozenset()
    lock: LockPolicy | None = None  # generating: check the lock against the outputs' opcodes

    def enum(self, name: str) -> dict[str, int]:
        e = self.lay.enums.get(name)
        return e.values() if e else {}

    def err(self, loc: Loc, gate: str, text: str) -> None:
        self.errors.add(loc.error(gate, text))

    def struct_loc(self, s: Struct) -> Loc:
        return Loc(s.path, s.line, s.col)


def _one_of(values: dict[str, int]) -> str:
    return one_of(values, "an enumerator of an enum the headers do not declare (or leave empty)")


def holds(lay: Layouts, struct: str, target: str, depth: int = 0) -> bool:
    """Does ``struct`` contain a ``target`` member, directly or nested?"""
    s = lay.structs.get(struct)
    if s is None or depth > 8:
        return False
    return any(m.struct == target or (m.struct and holds(lay, m.struct, target, depth + 1))
               for m in s.members)


# ---- calls ---------------------------------------------------------------------------

def gate_call_tokens(ctx: Ctx) -> None:
    """UNKNOWN-PAYLOAD / UNKNOWN-CLASS / UNKNOWN-FLAG / UNKNOWN-WAIT-CLASS / DUPLICATE-CALL."""
    classes, flags, waits = (ctx.enum("MGPipeCallClass"), ctx.enum("MGPipeCallFlag"),
                             ctx.enum("MGPipeWaitClass"))
    seen: dict[str, CallRow] = {}
    for row in ctx.cat.calls:
        name, payload, cls, flg, wait = row.name, row.payload, row.cls, row.flags, row.wait
        if name.text in seen:
            ctx.err(name.loc, "DUPLICATE-CALL",
                    f"call {name.text} already has row {seen[name.text].row}, expected unique names")
        seen[name.text] = row
        if payload.text not in ctx.lay.structs:
            ctx.err(payload.loc, "UNKNOWN-PAYLOAD",
                    f"payload type {payload.text!r} of {name.text} is not a struct in catalogue/include, "
                    f"expected a declared POD struct")
        if cls.text not in classes:
            ctx.err(cls.loc, "UNKNOWN-CLASS",
                    f"unknown class {cls.text!r}, expected {_one_of(classes)}")
        for part in flg.parts:
            if part not in flags:
                ctx.err(flg.loc, "UNKNOWN-FLAG",
                        f"unknown flag {part!r}, expected {_one_of(flags)}")
        if wait.text not in waits:
            ctx.err(wait.loc, "UNKNOWN-WAIT-CLASS",
                    f"wait class {wait.text!r} is not an MGPipeWaitClass enumerator, "
                    f"expected {_one_of(waits)}")


def gate_wait_class(ctx: Ctx) -> None:
    """WAIT-CLASS: every kReplySlot row is kWaitReply and no other row is (seed 002 §1)."""
    for row in ctx.cat.calls:
        name, flg, wait = row.name, row.flags, row.wait
        has_slot = REPLY_FLAG in flg.parts
        if has_slot and wait.text != REPLY_WAIT:
            ctx.err(wait.loc, "WAIT-CLASS",
                    f"{name.text} has kReplySlot but wait class {wait.text}: a reply row that does "
                    f"not wait is a waiter that hangs, expected kWaitReply")
        elif wait.text == REPLY_WAIT and not has_slot:
            ctx.err(wait.loc, "WAIT-CLASS",
                    f"{name.text} is kWaitReply without kReplySlot: it blocks on an answer nobody "
                    f"posts, expected kReplySlot in its flags or another wait class")


def gate_blob_ref(ctx: Ctx) -> None:
    """BLOB-REF: a kHasBlob row's payload owns an MGPBlobRef member."""
    for row in ctx.cat.calls:
        name, payload, flg = row.name, row.payload, row.flags
        if "kHasBlob" in flg.parts and payload.text in ctx.lay.structs:
            if not holds(ctx.lay, payload.text, BLOB_STRUCT):
                ctx.err(flg.loc, "BLOB-REF",
                        f"{name.text} is kHasBlob but its payload {payload.text} holds no "
                        f"{BLOB_STRUCT} member, expected one")


def gate_append_only(ctx: Ctx) -> None:
    """APPEND-ONLY: a locked call keeps its opcode; a retired call keeps its row."""
    now = {r.name.text: (i + 1, r) for i, r in enumerate(ctx.cat.calls)}
    for lock in ctx.cat.lock:
        name, op = lock.name.text, lock.opcode.text
        if name not in now:
            ctx.err(lock.name.loc, "APPEND-ONLY",
                    f"locked call {name} (opcode {op}) has no row in PipeCalls.def: a retired call "
                    f"keeps its row so no opcode after it moves, expected the row back")
        elif str(now[name][0]) != op:
            ctx.err(now[name][1].loc, "APPEND-ONLY",
                    f"call {name} is row {now[name][0]} but PipeCalls.lock pins opcode {op}: rows "
                    f"are append-only, expected {name} back at row {op} and new calls at the end")


# ---- sizes and field lists -------------------------------------------------------------

def gate_sizes(ctx: Ctx) -> None:
    """SIZE-PIN / SIZE-DRIFT: every payload is pinned, and libclang agrees with its pin."""
    pins: dict[str, SizeRow] = {}
    for row in ctx.cat.sizes:
        name, size = row.struct, row.size
        if name.text not in ctx.lay.structs:
            ctx.err(name.loc, "SIZE-PIN", f"pinned struct {name.text} is not declared, expected a struct")
            continue
        pins[name.text] = row
        actual = ctx.lay.structs[name.text].size
        if size.kind != "int" or int(size.text) != actual:
            s = ctx.lay.structs[name.text]
            ctx.err(ctx.struct_loc(s), "SIZE-DRIFT",
                    f"sizeof({name.text}) is {actual} bytes but PayloadSizes.def pins {size.text}: "
                    f"a wire payload changed size, expected {size.text} (or a reviewed new pin)")
    for row in ctx.cat.calls:
        payload = row.payload
        if payload.text in ctx.lay.structs and payload.text not in pins:
            ctx.err(payload.loc, "SIZE-PIN",
                    f"payload {payload.text} has no PayloadSizes.def pin, expected S({payload.text}, "
                    f"{ctx.lay.structs[payload.text].size})")


def gate_field_lists(ctx: Ctx) -> None:
    """FIELD-MISSING / FIELD-UNKNOWN / FIELD-ORDER / FIELD-LIST: PipeFields.def mirrors."""
    for struct, rows in ctx.cat.field_lists.items():
        s = ctx.lay.structs.get(struct)
        if s is None:
            ctx.err(ctx.cat.field_list_locs[struct], "FIELD-LIST",
                    f"MGP_FIELDS_{struct} names no struct in catalogue/include, expected a declared struct")
            continue
        declared = [m.name for m in s.members]
        listed = [r.member.text for r in rows]
        for r in rows:
            if r.member.text not in declared:
                ctx.err(r.member.loc, "FIELD-UNKNOWN",
                        f"{struct} has no member {r.member.text!r}, expected one of its members")
        for m in s.members:
            if m.name not in listed:
                ctx.err(Loc(s.path, m.line, m.col), "FIELD-MISSING",
                        f"member {struct}::{m.name} has no row in MGP_FIELDS_{struct} (PipeFields.def), "
                        f"expected F({m.name}) in declaration order")
        common = [n for n in listed if n in declared]
        order = [n for n in declared if n in common]
        for r, want in zip([r for r in rows if r.member.text in declared], order):
            if r.member.text != want:
                ctx.err(r.member.loc, "FIELD-ORDER",
                        f"MGP_FIELDS_{struct} lists {r.member.text} where {struct} declares {want}, "
                        f"expected declaration order")
                break
    for row in ctx.cat.calls:
        payload = row.payload
        if payload.text in ctx.lay.structs and payload.text not in ctx.cat.field_lists:
            ctx.err(payload.loc, "FIELD-LIST",
                    f"payload {payload.text} has no MGP_FIELDS_{payload.text} list in PipeFields.def, "
                    f"expected one (the G4 comparator walks it)")


# ---- PipeInputs, ownership, coverage, fill points ------------------------------------

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


HANDLE_STRUCT = "MGPipeHandle"
HANDLE_KIND_ENUM = "MGPipeHandleKind"
EXTRA_HANDLE_KINDS = ("Resource", "KindFromRecord")
NULL_RULES = ("kNullable", "kNonNull")


def handle_paths(lay: Layouts, struct: str, prefix: str = "", depth: int = 0) -> list[str]:
    """Generic paths of every MGPipeHandle inside ``struct`` (``[]`` = every element)."""
    s = lay.structs.get(struct)
    if s is None or depth > 8:
        return []
    out: list[str] = []
    for m in s.members:
        name = f"{prefix}{m.name}" + ("[]" if m.count > 1 else "")
        if m.struct == HANDLE_STRUCT:
            out.append(name)
        elif m.struct is not None:
            out.extend(handle_paths(lay, m.struct, name + ".", depth + 1))
    return out


def call_handle_paths(ctx: Ctx, call: CallRow) -> list[str]:
    paths = handle_paths(ctx.lay, call.payload.text)
    for t in ctx.cat.tails:
        if t.call.text != call.name.text:
            continue
        elem = t.element.text
        if elem == HANDLE_STRUCT:
            paths.append(f"{elem}[]")
        else:
            paths.extend(f"{elem}[].{p}" for p in handle_paths(ctx.lay, elem))
    return list(dict.fromkeys(paths))


def gate_handle_fields(ctx: Ctx) -> None:
    """HANDLE-FIELDS: every handle a record carries is mapped to a kind, and only those."""
    kinds = set(ctx.enum(HANDLE_KIND_ENUM)) | set(EXTRA_HANDLE_KINDS)
    calls = {r.name.text: r for r in ctx.cat.calls}
    mapped: dict[str, set[str]] = {}
    for r in ctx.cat.handle_fields:
        call, fld, kind, null = r.call, r.field, r.kind, r.null
        if call.text not in calls:
            ctx.err(call.loc, "HANDLE-FIELDS", f"row names unknown call {call.text!r}, expected a PipeCalls.def name")
            continue
        where = call_handle_paths(ctx, calls[call.text])
        if fld.text not in where:
            ctx.err(fld.loc, "HANDLE-FIELDS",
                    f"{call.text} carries no handle at {fld.text!r}, expected one of "
                    f"{', '.join(where) or '(none: the call carries no handle)'}")
        if fld.text in mapped.setdefault(call.text, set()):
            ctx.err(fld.loc, "HANDLE-FIELDS", f"{call.text}.{fld.text} is mapped twice, expected one row")
        mapped[call.text].add(fld.text)
        if kind.text not in kinds:
            ctx.err(kind.loc, "HANDLE-FIELDS",
                    f"unknown handle kind {kind.text!r}, expected an {HANDLE_KIND_ENUM} enumerator "
                    f"or {' / '.join(EXTRA_HANDLE_KINDS)}")
        if null.text not in NULL_RULES:
            ctx.err(null.loc, "HANDLE-FIELDS", f"unknown null rule {null.text!r}, expected {' or '.join(NULL_RULES)}")
    for name, row in calls.items():
        if row.payload.text not in ctx.lay.structs:
            continue
        for path in call_handle_paths(ctx, row):
            if path not in mapped.get(name, set()):
                ctx.err(row.payload.loc, "HANDLE-FIELDS",
                        f"{name} carries a handle at {path} that HandleFields.def does not map, "
                        f"expected H({name}, {path}, <Kind>, kNullable|kNonNull)")


#: The header declarations the gates and the outputs read by name. One that is missing is a
#: root cause (HEADER-VOCABULARY): every row that names it would otherwise be refused too.
VOCABULARY: tuple[tuple[str, str], ...] = (
    *(("struct", s) for s in (RS_STRUCT, INPUTS_STRUCT, BLOB_STRUCT, HANDLE_STRUCT, "MGPWireRecHeader")),
    *(("enum", e) for e in ("MGPipeCallClass", "MGPipeCallFlag", "MGPipeWaitClass",
                            "MGPipeValidateClass", "MGPipeFieldOwnership", "MGPipeRenderStateClass",
                            "MGPipeSetterBump", HANDLE_KIND_ENUM)),
    ("constant", "kMGPipeRecordAlign"),
)


def missing_vocabulary(lay: Layouts) -> list[str]:
    """``kind name`` of each :data:`VOCABULARY` entry the headers do not declare."""
    have = {"struct": lay.structs, "enum": lay.enums, "constant": lay.constants}
    return [f"{kind} {name}" for kind, name in VOCABULARY if name not in have[kind]]


GateFn = Callable[[Ctx], None]

from mgpipe.gen.lock import gate_lock  # noqa: E402
from mgpipe.gen.wiregates import gate_names, gate_wire_pod  # noqa: E402 (needs Ctx above)

#: Every catalogue-level gate, in run order. Render-state gates (CHUNK-PARTITION,
#: RS-CLASS, SETTER-CONSISTENCY) live in :mod:`mgpipe.gen.rsgates`.
GATES: tuple[tuple[str, GateFn], ...] = (
    ("wire-pod", gate_wire_pod),
    ("names", gate_names),
    ("call-tokens", gate_call_tokens),
    ("wait-class", gate_wait_class),
    ("blob-ref", gate_blob_ref),
    ("append-only", gate_append_only),
    ("lock", gate_lock),
    ("sizes", gate_sizes),
    ("field-lists", gate_field_lists),
    ("pipe-inputs", gate_pipe_inputs),
    ("ownership", gate_ownership),
    ("coverage", gate_coverage),
    ("fill-points", gate_fill_points),
    ("tails", gate_tails),
    ("spans", gate_spans),
    ("handle-fields", gate_handle_fields),
)

__all__ = ["Ctx", "GATES", "holds"]
