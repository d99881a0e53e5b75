"""The gates: every cross-check between the .def tables and the libclang layouts.

Each gate is one function with one stable name (the ``GATE`` column of
``file:line:col: GATE: text``); :data:`GATES` lists them in the order they run. A gate
never raises: it records errors, and the build refuses after all gates have spoken.
"""

from __future__ import annotations

import re

from collections.abc import Callable

from mgpipe.gen.catalogue import Loc
from mgpipe.gen.ctx import (
    BLOB_STRUCT, CLIENT_RESOLVED, HANDLE_KIND_ENUM, HANDLE_STRUCT, INPUTS_STRUCT, REPLY_FLAG,
    REPLY_WAIT, RS_STRUCT, Ctx, holds,
)  # fmt: skip
from mgpipe.gen.ctx import one_of_enum as _one_of
from mgpipe.gen.handlegates import gate_handle_fields
from mgpipe.gen.inputgates import (
    SCALAR_TAILS, gate_coverage, gate_fill_points, gate_ownership, gate_pipe_inputs, gate_spans,
    gate_tails,
)  # fmt: skip
from mgpipe.gen.layout_model import Layouts
from mgpipe.gen.lock import gate_lock
from mgpipe.gen.rows import CallRow, SizeRow
from mgpipe.gen.wiregates import gate_names, gate_wire_pod

# ---- calls ---------------------------------------------------------------------------

def gate_call_tokens(ctx: Ctx) -> None:
    """UNKNOWN-PAYLOAD / UNKNOWN-CLASS / UNKNOWN-FLAG / UNKNOWN-WAIT-CLASS / DUPLICATE-CALL."""
    v = ctx.vocab
    classes, flags, waits = ctx.enum(v.class_enum), ctx.enum(v.flag_enum), ctx.enum(v.wait_enum)
    seen: dict[str, CallRow] = {}
    for row in ctx.cat.calls:
        name, payload, cls, flg, wait = row.name, row.payload, row.cls, row.flags, row.wait
        if name.text in seen:
            ctx.err(name.loc, "DUPLICATE-CALL",
                    f"call {name.text} already has row {seen[name.text].row}, expected unique names")
        seen[name.text] = row
        if payload.text not in ctx.lay.structs:
            ctx.err(payload.loc, "UNKNOWN-PAYLOAD",
                    f"payload type {payload.text!r} of {name.text} is not a struct the catalogue's "
                    f"headers declare, expected a declared POD struct")
        if cls.text not in classes:
            ctx.err(cls.loc, "UNKNOWN-CLASS",
                    f"unknown class {cls.text!r}, expected {_one_of(classes)}")
        for part in flg.parts:
            if part not in flags:
                ctx.err(flg.loc, "UNKNOWN-FLAG",
                        f"unknown flag {part!r}, expected {_one_of(flags)}")
        if wait.text not in waits:
            ctx.err(wait.loc, "UNKNOWN-WAIT-CLASS",
                    f"wait class {wait.text!r} is not an {v.wait_enum} enumerator, "
                    f"expected {_one_of(waits)}")


def gate_flag_values(ctx: Ctx) -> None:
    """FLAG-NONE / FLAG-BIT: kNone stands alone; no two flags share a bit; no flag is 0 but kNone."""
    v = ctx.vocab
    enum = ctx.lay.enums.get(v.flag_enum)
    if enum is None:
        return
    owner: dict[int, str] = {}
    for e in enum.enumerators:
        if e.name == v.no_flag:
            if e.value != 0:
                ctx.err(Loc(enum.path, e.line, e.col), "FLAG-BIT",
                        f"{v.flag_enum}::{e.name} is {e.value}, expected 0: it means no flag")
            continue
        bits = [b for b in range(64) if e.value >> b & 1]
        if not bits:
            ctx.err(Loc(enum.path, e.line, e.col), "FLAG-BIT",
                    f"{v.flag_enum}::{e.name} is 0, expected a bit of its own ({v.no_flag} is the "
                    f"only flag without one)")
        for b in bits:
            if b in owner:
                ctx.err(Loc(enum.path, e.line, e.col), "FLAG-BIT",
                        f"{v.flag_enum}::{e.name} sets bit {b}, which {owner[b]} already sets, "
                        f"expected one bit per flag")
            owner.setdefault(b, e.name)
    for row in ctx.cat.calls:
        parts = row.flags.parts
        if v.no_flag in parts and len(parts) > 1:
            ctx.err(row.flags.loc, "FLAG-NONE",
                    f"{row.name.text} combines {v.no_flag} with {'|'.join(p for p in parts if p != v.no_flag)}, "
                    f"expected {v.no_flag} alone or only the flags")
        seen: set[str] = set()
        for p in parts:
            if p in seen:
                ctx.err(row.flags.loc, "FLAG-NONE", f"{row.name.text} names {p} twice, expected each flag once")
            seen.add(p)


def gate_wait_class(ctx: Ctx) -> None:
    """WAIT-CLASS: every kReplySlot row is kWaitReply and no other row is (seed 002 §1)."""
    for row in ctx.cat.calls:
        name, flg, wait = row.name, row.flags, row.wait
        has_slot = ctx.vocab.reply_flag in flg.parts
        if has_slot and wait.text != ctx.vocab.reply_wait:
            ctx.err(wait.loc, "WAIT-CLASS",
                    f"{name.text} has kReplySlot but wait class {wait.text}: a reply row that does "
                    f"not wait is a waiter that hangs, expected kWaitReply")
        elif wait.text == ctx.vocab.reply_wait and not has_slot:
            ctx.err(wait.loc, "WAIT-CLASS",
                    f"{name.text} is kWaitReply without kReplySlot: it blocks on an answer nobody "
                    f"posts, expected kReplySlot in its flags or another wait class")


def gate_blob_ref(ctx: Ctx) -> None:
    """BLOB-REF: a kHasBlob row's payload owns an MGPBlobRef member."""
    for row in ctx.cat.calls:
        name, payload, flg = row.name, row.payload, row.flags
        if ctx.vocab.blob_flag in flg.parts and payload.text in ctx.lay.structs:
            if not holds(ctx.lay, payload.text, ctx.vocab.blob_struct):
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
    """FIELD-MISSING / FIELD-UNKNOWN / FIELD-ORDER / FIELD-LIST: PipeFields.def mirrors every
    member in declaration order (a tree whose vocabulary names a padding member never lists it)."""
    pad = re.compile(f"^(?:{ctx.vocab.padding_member})$") if ctx.vocab.padding_member else None
    for struct, rows in ctx.cat.field_lists.items():
        s = ctx.lay.structs.get(struct)
        if s is None:
            ctx.err(ctx.cat.field_list_locs[struct], "FIELD-LIST",
                    f"MGP_FIELDS_{struct} names no struct the headers declare, expected a declared struct")
            continue
        declared = [m.name for m in s.members if not (pad and pad.match(m.name))]
        listed = [r.member.text for r in rows]
        for r in rows:
            if r.member.text not in declared:
                why = " (a Pad member is padding and is never listed)" if pad and pad.match(r.member.text) else ""
                ctx.err(r.member.loc, "FIELD-UNKNOWN",
                        f"{struct} has no member {r.member.text!r}{why}, expected one of its members")
        for m in s.members:
            if m.name in declared and m.name not in listed:
                ctx.err(Loc(s.path, m.line, m.col), "FIELD-MISSING",
                        f"member {struct}::{m.name} has no row in MGP_FIELDS_{struct} (PipeFields.def), "
                        f"expected F({m.name}) in declaration order")
        order = [n for n in declared if n in listed]
        for r, want in zip([r for r in rows if r.member.text in declared], order):
            if r.member.text != want:
                ctx.err(r.member.loc, "FIELD-ORDER",
                        f"MGP_FIELDS_{struct} lists {r.member.text} where {struct} declares {want}, "
                        f"expected declaration order")
                break
    for row in ctx.cat.calls:
        p = row.payload.text
        if p in ctx.lay.structs and p not in ctx.cat.field_lists:
            ctx.err(row.payload.loc, "FIELD-LIST",
                    f"payload {p} has no MGP_FIELDS_{p} list in PipeFields.def, expected one (the "
                    f"G4 comparator walks it)")


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


#: Every catalogue-level gate, in run order. Render-state gates (CHUNK-PARTITION,
#: RS-CLASS, SETTER-CONSISTENCY) live in :mod:`mgpipe.gen.rsgates`.
GATES: tuple[tuple[str, GateFn], ...] = (
    ("wire-pod", gate_wire_pod),
    ("names", gate_names),
    ("call-tokens", gate_call_tokens),
    ("flag-values", gate_flag_values),
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

__all__ = ["gate_append_only", "gate_blob_ref", "gate_call_tokens", "gate_field_lists",
           "gate_flag_values", "gate_wait_class", "CLIENT_RESOLVED", "Ctx", "GATES", "INPUTS_STRUCT", "RS_STRUCT", "SCALAR_TAILS", "VOCABULARY",
           "holds", "missing_vocabulary"]
