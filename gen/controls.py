"""The negative controls of `mgpipe self-test`: one planted defect per gate (R-16).

Each :class:`Control` copies the catalogue (and ``generated/`` beside it) into a fresh
temporary tree, applies its :mod:`plants <mgpipe.gen.plants>`, runs the generator and
demands that it refuses **for its own reason**: the exit code of the kind (2 for a gate,
1 for a stale output), a ``: GATE: `` line carrying every ``expect`` text, and no error
from a gate outside ``{gate} | also``. ``also`` lists the collateral gates a defect
necessarily trips as well (documented per control in docs/SELFTEST.md); an error from any
other gate is "failing for another reason" and FAILS the control.

``registry`` names the :data:`~mgpipe.gen.gates.GATES` entry (or ``render-state``) whose
check the control proves: switching that entry off (``--disable-gate``) must make the
control FAIL. ``None`` marks checks that run outside the registry (parser, header reader,
diff gate, G4 template).
"""

from __future__ import annotations

from dataclasses import dataclass

from mgpipe.gen.sites import AtRow, DropRow, FieldRows, HeaderEdit, LockSite, MemberEdit, PayloadPin, SetValue
from mgpipe.gen.plants import (
    Append, AppendRow, AppendText, Delete, Edit, Encode, InsertAfter, Move, Remove, RemoveTree,
    Replace, Rewrite, Sub,
)  # fmt: skip

GATE, STALE, G4, CLEAN = "gate", "stale", "g4", "clean"
#: a literal plant whose text both the original shape and the bundled catalogue/MG_Pipe tree
#: (a MobileGL-shaped tree carrying mgpipe's overlay) hold: it runs on either, and is N/A on
#: MobileGL's own tree (no overlay), whose text it was not written against
BOTH = ("bundled", "overlay")

CALLS, FIELDS, SIZES = "PipeCalls.def", "PipeFields.def", "PayloadSizes.def"
SETTERS, OWNERS, COVER = "RenderStateSetters.def", "FieldOwnership.def", "Coverage.def"
TYPES, VALUES = "include/MGPipeTypes.h", "include/MGPipeValueTypes.h"
CALL_LIST = "MGP_CALL_LIST"
LOCK = "PipeCalls.lock"


@dataclass(frozen=True)
class Control:
    name: str
    gate: str  # the name that must appear (a gate, STALE, G4-BITS or CLEAN)
    planted: str  # the defect, in words
    expect: tuple[str, ...]  # texts the gate's line must carry (stale: the files named)
    edits: tuple[Edit, ...] = ()
    kind: str = GATE
    also: frozenset[str] = frozenset()
    registry: str | None = None
    #: the catalogue shapes whose text the plant is written against (empty: any tree - its
    #: sites are found by meaning, :mod:`mgpipe.gen.sites`)
    shapes: tuple[str, ...] = ("bundled",)


def _c(name: str, gate: str, planted: str, expect: str | tuple[str, ...], *edits: Edit,
       registry: str | None, also: tuple[str, ...] = (), kind: str = GATE,
       shapes: tuple[str, ...] = ("bundled",)) -> Control:
    exp = (expect,) if isinstance(expect, str) else expect
    return Control(name, gate, planted, exp, tuple(edits), kind, frozenset(also), registry, shapes)


def _m(name: str, gate: str, planted: str, expect: str | tuple[str, ...], *edits: object,
       registry: str | None, also: tuple[str, ...] = ()) -> Control:
    """A control whose plant sites are found by meaning: it runs on any catalogue."""
    return _c(name, gate, planted, expect, *edits, registry=registry, also=also, shapes=())  # type: ignore[arg-type]


#: controls that find their sites by meaning, so they run on the bundled catalogue and on
#: MobileGL's own tree alike (``{name}`` etc. in the expectation are the site's facts)
ANY_TREE: tuple[Control, ...] = (
    _m("any-wait-class-reply", "WAIT-CLASS", "a reply-slot call's wait class set to kWaitNone",
       "{name} has kReplySlot but wait class kWaitNone",
       AtRow(CALL_LIST, "reply-slot call", "wait", "kWaitNone"), registry="wait-class"),
    _m("any-wait-class-no-slot", "WAIT-CLASS", "a plain verb call's wait class set to kWaitReply",
       "{name} is kWaitReply without kReplySlot",
       AtRow(CALL_LIST, "plain verb call", "wait", "kWaitReply"), registry="wait-class"),
    _m("any-flag-none", "FLAG-NONE", "a plain verb call's kNone combined with another flag",
       "{name} combines kNone with {free_flag}",
       AtRow(CALL_LIST, "plain verb call", "flags", "kNone|{free_flag}"), registry="flag-values"),
    _m("any-unknown-flag", "UNKNOWN-FLAG", "a plain verb call flagged kSelfTestFlag",
       "unknown flag 'kSelfTestFlag'",
       AtRow(CALL_LIST, "plain verb call", "flags", "kSelfTestFlag"), registry="call-tokens"),
    _m("any-unknown-class", "UNKNOWN-CLASS", "a plain verb call's class set to kSelfTestClass",
       "unknown class 'kSelfTestClass'",
       AtRow(CALL_LIST, "plain verb call", "cls", "kSelfTestClass"), registry="call-tokens",
       also=("VERB-STAMP",)),
    _m("any-unknown-wait-class", "UNKNOWN-WAIT-CLASS", "a plain verb call's wait class set to kWaitSoon",
       "wait class 'kWaitSoon' is not an MGPipeWaitClass enumerator",
       AtRow(CALL_LIST, "plain verb call", "wait", "kWaitSoon"), registry="call-tokens"),
    _m("any-unknown-payload", "UNKNOWN-PAYLOAD", "a plain verb call's payload renamed <payload>SelfTest",
       "payload type '{payload}SelfTest' of {name}",
       AtRow(CALL_LIST, "plain verb call", "payload", "{payload}SelfTest"), registry="call-tokens",
       also=("HANDLE-FIELDS",)),
    _m("any-def-shape", "DEF-SHAPE", "a plain verb call's last column deleted",
       "X(...) in MGP_CALL_LIST has 4 arguments, expected 5",
       AtRow(CALL_LIST, "plain verb call", "wait", None), registry=None,
       also=("VERB-STAMP", "FILL-POINTS", "COVERAGE-CALL", "HANDLE-FIELDS")),
    _m("any-field-unknown", "FIELD-UNKNOWN", "a field list's first member renamed SelfTestBogus",
       "{struct} has no member 'SelfTestBogus'",
       AtRow("MGP_FIELDS", "payload field list", "member", "SelfTestBogus"), registry="field-lists",
       also=("FIELD-MISSING", "CHUNK-PARTITION", "SETTER-COVERAGE", "RS-CLASS", "HEADER-COMPILE")),
    _m("documented-count", "DOCUMENTED-COUNT", "MGP_CALL_LIST_DOCUMENTED_COUNT one more than the rows",
       "MGP_CALL_LIST has {rows} rows, expected {rows}",
       SetValue("MGP_CALL_LIST_DOCUMENTED_COUNT", "{more}"), registry="documented-count",
       also=("HEADER-COMPILE",)),
    _m("ownership-phase", "OWNERSHIP-PHASE", "a BARRIER_PULLED row's retiring phase set to \"-\"",
       "{field} is BARRIER_PULLED and names no retiring phase",
       AtRow("MGP_FIELD_OWNERSHIP_LIST", "barrier-pulled row", "phase", '"-"'), registry="ownership"),
    _m("ownership-record-supplied", "OWNERSHIP-CLASS", "an APPLIER_DERIVED row relabelled RECORD_SUPPLIED",
       "{field} is listed RECORD_SUPPLIED, which is derived",
       AtRow("MGP_FIELD_OWNERSHIP_LIST", "applier-derived row", "ownership", "RECORD_SUPPLIED"),
       registry="ownership"),
    _m("flag-bit", "FLAG-BIT", "the flag enum gains kSelfTestFlag on the bit of kOptional",
       ("kSelfTestFlag sets bit", "which {free_flag} already sets"),
       HeaderEdit("flag_enum", line="kSelfTestFlag = {free_flag},"), registry="flag-values"),
    _m("chunk-table", "CHUNK-TABLE", "the chunk-boundary table renamed throughout its header",
       "the headers define no {decl}",
       HeaderEdit("chunk_boundaries", rename="kSelfTestRenamedBoundaries"), registry=None),
    _m("ownership-field", "OWNERSHIP-FIELD", "an ownership row's field renamed GetSelfTestNothing",
       "GetSelfTestNothing is not a PipeInputs field",
       AtRow("MGP_FIELD_OWNERSHIP_LIST", "applier-derived row", "field", "GetSelfTestNothing"),
       registry="ownership", also=("OWNERSHIP-MISSING",)),
    _m("ownership-missing", "OWNERSHIP-MISSING", "a BARRIER_PULLED ownership row deleted",
       "PipeInputs field {field} is in no ownership class",
       DropRow("MGP_FIELD_OWNERSHIP_LIST", "unemitted barrier-pulled row"), registry="ownership"),
    _m("ownership-twice", "OWNERSHIP-TWICE", "an APPLIER_DERIVED ownership row written twice",
       "{field} is APPLIER_DERIVED here and APPLIER_DERIVED by an earlier row",
       DropRow("MGP_FIELD_OWNERSHIP_LIST", "applier-derived row", copy=True), registry="ownership"),
    _m("ownership-forward", "OWNERSHIP-FORWARD", "a BARRIER_PULLED forward row relabelled FATAL",
       "{field}'s forward row says FATAL and its field row BARRIER_PULLED",
       AtRow("MGP_FIELD_OWNERSHIP_FORWARD_LIST", "barrier-pulled row", "ownership", "FATAL"),
       registry="ownership"),
    _m("verify-list", "VERIFY-LIST", "a MGP_VERIFY_PAYLOAD_LIST row renamed SelfTestNoList",
       "MGP_VERIFY_PAYLOAD_LIST names SelfTestNoList, which has no MGP_FIELDS_SelfTestNoList list",
       AtRow("MGP_VERIFY_PAYLOAD_LIST", "verify row", "struct", "SelfTestNoList"),
       registry="verify-list"),
    _m("dirty-surface-twice", "DIRTY-SURFACE", "a DirtySurface.def row written twice",
       "mutator {mutator} has two rows",
       DropRow("MGP_DIRTY_SURFACE_LIST", "dirty-surface row", copy=True), registry="dirty-surface"),
    _m("subsystem-deps", "SUBSYSTEM-DEPS", "a SubsystemDeps.def row written twice",
       "family {family} has two rows",
       DropRow("MGL_SUBSYSTEM_DEPENDENCY_LIST", "subsystem row", copy=True), registry="subsystem-deps",
       also=("HEADER-COMPILE",)),
    _m("fatal-family-twice", "FATAL-FAMILY", "a FatalFamilies.def row written twice",
       "family {family} has two rows",
       DropRow("MGL_FATAL_FAMILY_LIST", "fatal-family row", copy=True), registry="fatal-families"),
    _m("any-append-only-moved", "APPEND-ONLY", "two adjacent plain verb calls trade rows under the lock",
       "call {name} is row {row} but PipeCalls.lock pins opcode {op}",
       LockSite("swap"), registry="append-only"),
    _m("any-lock-opcode-edited", "LOCK-WITNESS", "a plain verb call's lock row re-pinned one opcode up",
       "{lock} pins {name} at opcode {new} but generated/PipeWire.inc:",
       LockSite("opcode"), registry="lock", also=("APPEND-ONLY",)),
    _m("any-lock-missing", "LOCK-MISSING", "the tree's PipeCalls.lock deleted (generated/ still there)",
       "PipeCalls.lock not found next to existing outputs",
       LockSite("remove"), registry="lock"),
    _m("any-duplicate-call", "DUPLICATE-CALL", "a plain verb call's row written twice",
       "call {name} already has row",
       DropRow(CALL_LIST, "plain verb call", copy=True), registry="call-tokens",
       also=("APPEND-ONLY", "DOCUMENTED-COUNT", "HEADER-COMPILE", "VERB-STAMP")),
    _m("any-field-missing", "FIELD-MISSING", "a payload field list's first row deleted",
       "member {struct}::{member} has no row in MGP_FIELDS_{struct}",
       FieldRows("drop"), registry="field-lists"),
    _m("any-field-order", "FIELD-ORDER", "a payload field list's first two rows swapped",
       "MGP_FIELDS_{struct} lists {second} where {struct} declares {first}",
       FieldRows("swap"), registry="field-lists"),
    _m("any-field-list", "FIELD-LIST", "a payload's field list renamed MGP_FIELDS_SelfTestNoSuchStruct",
       "payload {struct} has no MGP_FIELDS_{struct} list",
       FieldRows("rename"), registry="field-lists", also=("VERIFY-LIST", "HEADER-COMPILE")),
    _m("any-pod-pointer", "WIRE-POD", "a payload's Uint64 member redeclared Uint64*",
       "{struct}::{member} is a pointer", MemberEdit("pointer"), registry="wire-pod"),
    _m("any-size-pin", "HEADER-COMPILE", "a payload's MGP_ASSERT_POD pin moved 4 bytes off",
       ("{header}:", "static assertion failed"), PayloadPin(4), registry=None),
    _m("any-header-vocabulary", "HEADER-VOCABULARY", "the wait-class enum renamed throughout the headers",
       "the headers declare no enum {decl}",
       HeaderEdit("wait_enum", rename="SelfTestRenamedWaitClass"), registry=None,
       also=("HEADER-COMPILE",)),
    _m("any-name-keyword-call", "NAME-RESERVED", "a plain verb call renamed 'class'",
       "call name 'class' is a C++ keyword",
       AtRow(CALL_LIST, "plain verb call", "name", "class"), registry="names",
       also=("APPEND-ONLY", "LOCK-WITNESS", "VERB-STAMP", "HANDLE-FIELDS", "COVERAGE-CALL", "FILL-POINTS",
             "DIRTY-SURFACE", "TAILS")),
    _m("any-coverage-call", "COVERAGE-CALL", "an accessor row's call renamed SelfTestNoCall",
       "maps to 'SelfTestNoCall', which PipeCalls.def does not declare",
       AtRow("MGP_COVERAGE_ACCESSOR_LIST", "coverage row", "call", "SelfTestNoCall"), registry="coverage"),
    _m("any-coverage-accessor", "COVERAGE-ACCESSOR", "a sticky row's accessor renamed GetSelfTestNothing",
       "names 'GetSelfTestNothing', which is not an accessor of MGP_COVERAGE_ACCESSOR_LIST",
       AtRow("MGP_COVERAGE_STICKY_LIST", "coverage row", "accessor", "GetSelfTestNothing"), registry="coverage",
       also=("OWNERSHIP-FORWARD",)),
    _m("any-fill-points", "FILL-POINTS", "a fill verb row's class set to kSelfTestClass",
       "has class 'kSelfTestClass'",
       AtRow("MGP_FILL_VERB_LIST", "fill verb row", "cls", "kSelfTestClass"), registry="fill-points",
       also=("VERB-STAMP",)),
    _m("any-setter-both-writes-dynamic", "SETTER-CONSISTENCY",
       "a kBumpVersion setter row (it writes dynamic bytes) declared kBumpBoth",
       "{setter} bumps m_pipelineStateVersion but writes dynamic bytes",
       AtRow("MGP_RENDER_STATE_SETTERS", "version-bump setter row", "bump", "kBumpBoth"),
       registry="render-state"),
    _m("any-setter-version-writes-pipeline", "SETTER-CONSISTENCY",
       "a kBumpBoth setter row (it writes pipeline bytes) declared kBumpVersion",
       "{setter} bumps only m_version but writes pipeline-subset bytes",
       AtRow("MGP_RENDER_STATE_SETTERS", "both-bump setter row", "bump", "kBumpVersion"),
       registry="render-state"),
    _m("verb-stamp-missing", "VERB-STAMP", "the stamp row of a kCtxVerb call deleted",
       "{call} is verb-shaped (kCtxVerb) and has no MGP_VERB_OP_LIST row",
       DropRow("MGP_VERB_OP_LIST", "stamp row of a verb call"), registry="verb-stamps"),
)


#: WIRE-POD controls: each appends one standalone struct (in no list, so no other gate
#: sees it) whose member is the planted kind of type.
_POD_CASES: tuple[tuple[str, str, str], ...] = (
    ("pointer", "Uint32* P;", "SelfTestPod::P is a pointer"),
    ("reference", "Uint32& R;", "SelfTestPod::R is a reference"),
    ("function-pointer", "void (*Fn)(Uint32);", "SelfTestPod::Fn is a function pointer"),
    ("anonymous-union", "union { Uint32 A; Float B; };", "is an anonymous union"),
    ("long-double", "long double D;", "SelfTestPod::D is long double"),
    ("int128", "__int128 I;", "SelfTestPod::I is __int128"),
    ("float16", "_Float16 H;", "SelfTestPod::H is _Float16"),
    ("vector", "float V __attribute__((vector_size(16)));", "SelfTestPod::V is a vector type"),
    ("not-fixed-width", "long L;", "SelfTestPod::L is long (32 bits on LLP64, 64 on LP64)"),
)


def _pod(kind: str, member: str, expect: str) -> Control:
    return _c(f"pod-{kind}", "WIRE-POD", f"MGPipeTypes.h: struct SelfTestPod {{ {member} }} appended",
              expect, AppendText(TYPES, f"struct SelfTestPod {{ {member} Uint32 Tail; }};"),
              registry="wire-pod")


CONTROLS: tuple[Control, ...] = (
    # ---- wire types are PODs of fixed-width scalars (wire-pod) -------------------------------
    *(_pod(*case) for case in _POD_CASES),
    _c("pod-bit-field", "WIRE-POD", "MGPipeTypes.h: MGPFlush.Flags made a bit-field",
       "MGPFlush::Flags is a bit-field",
       Replace(TYPES, "struct MGPFlush {\n    Uint32 Flags;", "struct MGPFlush {\n    Uint32 Flags : 4;"),
       registry="wire-pod"),
    _c("pod-named-union", "WIRE-POD",
       "MGPipeTypes.h: union SelfTestUnion and a struct holding one appended",
       ("SelfTestHolder::U is union SelfTestUnion",),
       AppendText(TYPES, "union SelfTestUnion { Uint32 A; Float B; };\n"
                         "struct SelfTestHolder { SelfTestUnion U; };"), registry="wire-pod"),
    _c("pod-packed-attribute", "WIRE-POD",
       "MGPipeTypes.h: struct __attribute__((packed)) SelfTestPod { Uint8 A; Uint32 B; } appended",
       "alignof(SelfTestPod) is 1 but its members need 4",
       AppendText(TYPES, "struct __attribute__((packed)) SelfTestPod { Uint8 A; Uint32 B; };"),
       registry="wire-pod"),
    _c("pod-pragma-pack", "WIRE-POD",
       "MGPipeTypes.h: struct SelfTestPod { Uint8 A; Uint32 B; } under #pragma pack(1) appended",
       "alignof(SelfTestPod) is 1 but its members need 4",
       AppendText(TYPES, "#pragma pack(push, 1)\nstruct SelfTestPod { Uint8 A; Uint32 B; };\n"
                         "#pragma pack(pop)"), registry="wire-pod"),
    # ---- names C++ can carry (names) ------------------------------------------------------------
    _c("name-keyword-call", "NAME-RESERVED", "PipeCalls.def: a call named 'class' appended",
       "call name 'class' is a C++ keyword",
       AppendRow(CALLS, CALL_LIST, "X(class, MGPFlush, kCtxVerb, kNone, kWaitNone)"), registry="names"),
    _c("name-reserved-struct", "NAME-RESERVED", "MGPipeTypes.h: struct _SelfTestPod appended",
       "struct name '_SelfTestPod' is reserved",
       AppendText(TYPES, "struct _SelfTestPod { Uint32 A; };"), registry="names"),
    _c("name-reserved-member", "NAME-RESERVED", "MGPipeTypes.h: struct SelfTestPod { Uint32 __x; } appended",
       "member name SelfTestPod::__x is reserved",
       AppendText(TYPES, "struct SelfTestPod { Uint32 __x; };"), registry="names"),
    # ---- the call catalogue (call-tokens, wait-class, blob-ref, append-only) -------------
    _c("append-only-moved", "APPEND-ONLY", "PipeCalls.def: row QueryBegin moved after QueryResult",
       "call QueryBegin is row 16 but PipeCalls.lock pins opcode 13",
       Move(CALLS, "X(QueryBegin,", "X(QueryResult,"), registry="append-only"),
    _c("append-only-deleted", "APPEND-ONLY", "PipeCalls.def: row QueryDestroy deleted mid-file",
       "locked call QueryDestroy (opcode 17) has no row",
       Delete(CALLS, "X(QueryDestroy,"), registry="append-only", also=("HANDLE-FIELDS",)),
    # ---- the lock has a witness: generated/PipeWire.inc (lock) --------------------------------
    _c("lock-missing", "LOCK-MISSING", "PipeCalls.lock deleted (generated/ still there)",
       "PipeCalls.lock not found next to existing outputs",
       Remove(LOCK), registry="lock"),
    _c("lock-swap-and-unlock", "LOCK-WITNESS",
       "PipeCalls.def: rows QueryBegin and QueryEnd swapped, and both lock rows deleted",
       "call QueryBegin would move from opcode 13 (generated/PipeWire.inc:",
       Move(CALLS, "X(QueryBegin,", "X(QueryEnd,"), Delete(LOCK, "L(QueryBegin,"),
       Delete(LOCK, "L(QueryEnd,"), registry="lock"),
    _c("lock-row-deleted", "LOCK-WITNESS", "PipeCalls.lock: the QueryDestroy row deleted",
       "numbers QueryDestroy opcode 17 but catalogue/PipeCalls.lock has no row for it",
       Delete(LOCK, "L(QueryDestroy,"), registry="lock"),
    _c("lock-opcode-edited", "LOCK-WITNESS", "PipeCalls.lock: QueryEnd re-pinned to opcode 15",
       "catalogue/PipeCalls.lock pins QueryEnd at opcode 15 but generated/PipeWire.inc:",
       Sub(LOCK, "L(QueryEnd,", "14", "15"), registry="lock", also=("APPEND-ONLY",)),
    _c("wait-class-reply-slot", "WAIT-CLASS", "PipeCalls.def: GetCaps (kReplySlot) given kWaitNone",
       "GetCaps has kReplySlot but wait class kWaitNone",
       Sub(CALLS, "X(GetCaps,", "kWaitReply", "kWaitNone"), registry="wait-class", shapes=BOTH),
    _c("wait-class-no-slot", "WAIT-CLASS", "PipeCalls.def: FenceStatus kWaitReply with flags kNone",
       "FenceStatus is kWaitReply without kReplySlot",
       Sub(CALLS, "X(FenceStatus,", "kReplySlot", "kNone"), registry="wait-class", shapes=BOTH),
    _c("flag-none", "FLAG-NONE", "PipeCalls.def: Flush flags kNone|kOptional",
       "Flush combines kNone with kOptional",
       Sub(CALLS, "X(Flush,", "kNone", "kNone|kOptional"), registry="flag-values", shapes=BOTH),
    _c("unknown-wait-class", "UNKNOWN-WAIT-CLASS", "PipeCalls.def: Flush wait class kWaitSoon",
       "wait class 'kWaitSoon' is not an MGPipeWaitClass enumerator",
       Sub(CALLS, "X(Flush,", "kWaitNone", "kWaitSoon"), registry="call-tokens", shapes=BOTH),
    _c("unknown-payload", "UNKNOWN-PAYLOAD", "PipeCalls.def: Flush payload MGPFlushh",
       "payload type 'MGPFlushh' of Flush",
       Sub(CALLS, "X(Flush,", "MGPFlush", "MGPFlushh"), registry="call-tokens", shapes=BOTH),
    _c("unknown-class", "UNKNOWN-CLASS", "PipeCalls.def: Flush class kCtxVerbb",
       "unknown class 'kCtxVerbb'",
       Sub(CALLS, "X(Flush,", "kCtxVerb", "kCtxVerbb"), registry="call-tokens"),
    _c("unknown-flag", "UNKNOWN-FLAG", "PipeCalls.def: Flush flag kHasBlobb",
       "unknown flag 'kHasBlobb'",
       Sub(CALLS, "X(Flush,", "kNone", "kHasBlobb"), registry="call-tokens", shapes=BOTH),
    _c("duplicate-call", "DUPLICATE-CALL", "PipeCalls.def: a second Flush row appended",
       "call Flush already has row 69",
       AppendRow(CALLS, CALL_LIST, "X(Flush, MGPFlush, kCtxVerb, kNone, kWaitNone)"),
       registry="call-tokens", also=("APPEND-ONLY",)),
    _c("blob-ref", "BLOB-REF", "PipeCalls.def: Flush (payload MGPFlush, no blob) flagged kHasBlob",
       "Flush is kHasBlob but its payload MGPFlush holds no MGPBlobRef",
       Sub(CALLS, "X(Flush,", "kNone", "kHasBlob"), registry="blob-ref", shapes=BOTH),
    # ---- sizes and field lists -------------------------------------------------------------
    _c("size-drift", "SIZE-DRIFT",
       "MGPipeTypes.h: Uint32 SelfTestExtra appended to MGPBindRenderState (+ its PipeFields row)",
       "sizeof(MGPBindRenderState) is 16 bytes but PayloadSizes.def pins 12",
       Replace(TYPES, "    Uint16 PipelineVersion;\n};", "    Uint16 PipelineVersion;\n    Uint32 SelfTestExtra;\n};"),
       Append(FIELDS, "F(PipelineVersion)", "F(SelfTestExtra)"), registry="sizes"),
    _c("size-pin", "SIZE-PIN", "PayloadSizes.def: the MGPFlush pin deleted",
       "payload MGPFlush has no PayloadSizes.def pin",
       Delete(SIZES, "S(MGPFlush,"), registry="sizes"),
    _c("field-missing", "FIELD-MISSING",
       "MGPipeValueTypes.h: Bool SelfTestProbe added to RenderStateParameters in the 3-byte hole "
       "after SampleCoverageInvert (sizeof stays 1168), no PipeFields.def row",
       "member RenderStateParameters::SelfTestProbe has no row",
       Replace(VALUES, "    Bool SampleCoverageInvert;\n", "    Bool SampleCoverageInvert;\n    Bool SelfTestProbe;\n"),
       registry="field-lists", also=("CHUNK-PARTITION", "SETTER-COVERAGE")),
    _c("field-unknown", "FIELD-UNKNOWN", "PipeFields.def: F(SelfTestBogus) added to MGPHandleOnly",
       "MGPHandleOnly has no member 'SelfTestBogus'",
       Replace(FIELDS, "MGP_FIELDS_MGPHandleOnly(F) \\\n    F(Res)\n",
               "MGP_FIELDS_MGPHandleOnly(F) \\\n    F(Res) \\\n    F(SelfTestBogus)\n"),
       registry="field-lists"),
    _c("field-order", "FIELD-ORDER", "PipeFields.def: MGPBox rows X and Y swapped",
       "MGP_FIELDS_MGPBox lists Y where MGPBox declares X",
       Replace(FIELDS, "MGP_FIELDS_MGPBox(F) \\\n    F(X) \\\n    F(Y) \\",
               "MGP_FIELDS_MGPBox(F) \\\n    F(Y) \\\n    F(X) \\"), registry="field-lists"),
    _c("field-list", "FIELD-LIST", "PipeFields.def: MGP_FIELDS_SelfTestNoSuchStruct added",
       "MGP_FIELDS_SelfTestNoSuchStruct names no struct",
       Replace(FIELDS, "#define MGP_FIELDS_MGPHandleOnly(F)",
               "#define MGP_FIELDS_SelfTestNoSuchStruct(F) \\\n    F(A)\n\n#define MGP_FIELDS_MGPHandleOnly(F)"),
       registry="field-lists"),
    # ---- PipeInputs, ownership, coverage, fill points, tails, spans --------------------------
    _c("pipe-inputs", "PIPE-INPUTS", "PipeInputs.def: GetClearDepth lifetime kForever",
       "unknown lifetime 'kForever'",
       Sub("PipeInputs.def", "X(GetClearDepth,", "kPerVerb", "kForever"), registry="pipe-inputs"),
    _c("ownership-two", "OWNERSHIP", "FieldOwnership.def: m_clearDepth in kApplierDerived|kFatal",
       "PipeInputs field m_clearDepth is in 2 ownership classes",
       Sub(OWNERS, "O(m_clearDepth,", "kApplierDerived", "kApplierDerived|kFatal"), registry="ownership"),
    _c("ownership-none", "OWNERSHIP", "FieldOwnership.def: the m_clearDepth row deleted",
       "PipeInputs field m_clearDepth is in no ownership class",
       Delete(OWNERS, "O(m_clearDepth,"), registry="ownership"),
    _c("coverage-call", "COVERAGE-CALL", "Coverage.def: GetClearDepth answered by SetDynamicStat",
       "names call 'SetDynamicStat'",
       Sub(COVER, "C(GetClearDepth,", "SetDynamicState", "SetDynamicStat"), registry="coverage"),
    _c("coverage-unmapped", "COVERAGE-UNMAPPED", "Coverage.def: the GetClearDepth row deleted",
       "accessor GetClearDepth is UNMAPPED",
       Delete(COVER, "C(GetClearDepth,"), registry="coverage"),
    _c("coverage-accessor", "COVERAGE-ACCESSOR", "Coverage.def: a row for accessor GetSelfTestNothing",
       "accessor 'GetSelfTestNothing', which PipeInputs.def does not declare",
       InsertAfter(COVER, "C(GetClearDepth,", "    C(GetSelfTestNothing, Flush) \\"), registry="coverage"),
    _c("fill-points", "FILL-POINTS", "FillPoints.def: DrawVbo validate class kDrawz",
       "unknown validate class 'kDrawz'",
       Sub("FillPoints.def", "V(DrawVbo,", "kDraw", "kDrawz"), registry="fill-points"),
    _c("tails", "TAILS", "Tails.def: SetVertexBuffers bound kMGPipeMaxVertexAttribz",
       "bound 'kMGPipeMaxVertexAttribz' is no named constant",
       Sub("Tails.def", "T(SetVertexBuffers,", "kMGPipeMaxVertexAttribs", "kMGPipeMaxVertexAttribz"),
       registry="tails", shapes=BOTH),
    _c("spans", "SPANS", "EsprytSpans.def: kMGPipeBlendSpanEnd moved to Viewports (offset 0)",
       "kMGPipeBlendSpanEnd at offset 0 does not follow the previous boundary",
       Sub("EsprytSpans.def", "E(kMGPipeBlendSpanEnd,", "LogicOp", "Viewports"), registry="spans", shapes=BOTH),
    _c("handle-unmapped", "HANDLE-FIELDS", "HandleFields.def: the SetIndexBuffer.Res row deleted",
       "SetIndexBuffer carries a handle at Res that HandleFields.def does not map",
       Delete("HandleFields.def", "H(SetIndexBuffer,"), registry="handle-fields", shapes=BOTH),
    _c("handle-kind", "HANDLE-FIELDS", "HandleFields.def: SetIndexBuffer.Res given kind Bufer",
       "unknown handle kind 'Bufer'",
       Sub("HandleFields.def", "H(SetIndexBuffer,", "Buffer", "Bufer"), registry="handle-fields", shapes=BOTH),
    # ---- render state (rsgates: render-state) ------------------------------------------------
    _c("chunk-unclassified", "CHUNK-PARTITION", "PipeFields.def: LineWidth's class column dropped",
       "bytes [256, 260) of RenderStateParameters.LineWidth are in no chunk",
       Rewrite(FIELDS, "F(LineWidth,", "F(LineWidth) \\"), registry="render-state"),
    _c("chunk-overlap", "CHUNK-PARTITION", "PipeFields.def: PointSize classed kPipeline|kDynamic",
       "RenderStateParameters.PointSize are claimed by both the pipeline and the dynamic chunks",
       Sub(FIELDS, "F(PointSize,", "kDynamic", "kPipeline|kDynamic"),
       registry="render-state", also=("SETTER-CONSISTENCY",)),
    _c("rs-class", "RS-CLASS", "PipeFields.def: PointSize classed kDynamik",
       "RenderStateParameters.PointSize has render-state class 'kDynamik'",
       Sub(FIELDS, "F(PointSize,", "kDynamic", "kDynamik"),
       registry="render-state", also=("CHUNK-PARTITION",)),
    _c("chunk-mask", "CHUNK-MASK",
       "MGPipeTypes.h: MGPDynamicState.ChunkMask narrowed to Uint8 (size unchanged); DitherEnabled "
       "reclassed kDynamic (with its setter kBumpVersion) so the dynamic half has 9 chunks",
       "9 kDynamic chunks exceed the 8-bit ChunkMask",
       Replace(TYPES, "    Uint32 ChunkMask;\n    Uint16 Version;", "    Uint8 ChunkMask;\n    Uint16 Version;"),
       Sub(FIELDS, "F(DitherEnabled,", "kPipeline", "kDynamic"),
       Sub(SETTERS, "S(SetCapability, Dither,", "kBumpBoth", "kBumpVersion"),
       registry="render-state"),
    _c("setter-version-writes-pipeline", "SETTER-CONSISTENCY",
       "RenderStateSetters.def: SetPolygonMode (writes kPipeline members) declared kBumpVersion",
       "SetPolygonMode bumps only m_version but writes pipeline-subset bytes",
       Sub(SETTERS, "S(SetPolygonMode,", "kBumpBoth", "kBumpVersion"), registry="render-state"),
    _c("setter-both-writes-dynamic", "SETTER-CONSISTENCY",
       "RenderStateSetters.def: SetLineWidth (writes kDynamic LineWidth) declared kBumpBoth",
       "SetLineWidth bumps m_pipelineStateVersion but writes dynamic bytes",
       Sub(SETTERS, "S(SetLineWidth,", "kBumpVersion", "kBumpBoth"), registry="render-state"),
    _c("setter-member", "SETTER-MEMBER", "RenderStateSetters.def: SetLineWidth also writes SelfTestNoMember",
       "RenderStateParameters has no member 'SelfTestNoMember'",
       Sub(SETTERS, "S(SetLineWidth,", "LineWidth", "LineWidth|SelfTestNoMember"), registry="render-state", shapes=BOTH),
    _c("setter-coverage", "SETTER-COVERAGE", "RenderStateSetters.def: the SetClampReadColor row deleted",
       "no RenderStateSetters.def row writes RenderStateParameters.ClampReadColor",
       Delete(SETTERS, "S(SetClampReadColor,"), registry="render-state", shapes=BOTH),
    # ---- outside the registry: parser, shapes, header reader ---------------------------------
    _c("def-syntax", "DEF-SYNTAX", "PipeCalls.def: the Flush row's closing parenthesis removed",
       ("PipeCalls.def:", "inside an argument list, expected ',' or ')'"),
       Sub(CALLS, "X(Flush,", "kWaitNone)", "kWaitNone"), registry=None, shapes=BOTH),
    _c("def-shape", "DEF-SHAPE", "PipeCalls.def: a 4-argument row appended",
       "X(...) in MGP_CALL_LIST has 4 arguments, expected 5",
       AppendRow(CALLS, CALL_LIST, "X(SelfTestShape, MGPFlush, kCtxVerb, kNone)"), registry=None, shapes=BOTH),
    _c("def-missing", "DEF-MISSING", "Tails.def removed from the catalogue",
       "catalogue file Tails.def not found", Remove("Tails.def"), registry=None),
    _c("def-encoding", "DEF-ENCODING", "Tails.def re-encoded as UTF-16",
       ("catalogue/Tails.def:1:1", "byte 0xff is not UTF-8 (the file starts with a UTF-16 byte-order mark)"),
       Encode("Tails.def", "utf-16"), registry=None),
    _c("catalogue-missing", "CATALOGUE-MISSING", "the catalogue directory removed",
       "catalogue directory not found", RemoveTree("."), registry=None, shapes=BOTH),
    _c("header-missing", "HEADER-MISSING", "the catalogue's include/ directory removed",
       "the catalogue's include/ directory not found", RemoveTree("include"), registry=None),
    _c("header-vocabulary", "HEADER-VOCABULARY", "MGPipe.h: enum MGPipeSetterBump renamed",
       "the headers declare no enum MGPipeSetterBump",
       Replace("include/MGPipe.h", "enum MGPipeSetterBump :", "enum SelfTestRenamedBump :"),
       registry=None),
    _c("header-compile", "HEADER-COMPILE", "MGPipeTypes.h: MGPFlush's ';' after Flags removed",
       ("include/MGPipeTypes.h:", "expected ';'"),
       Replace(TYPES, "struct MGPFlush {\n    Uint32 Flags;", "struct MGPFlush {\n    Uint32 Flags"),
       registry=None),
    _c("header-duplicate", "HEADER-DUPLICATE", "MGPipeTypes.h: a second struct MGPFlush in a namespace",
       "struct 'MGPFlush' is declared again",
       Replace(TYPES, "struct MGPPresent {", "namespace selftest { struct MGPFlush { Uint32 Flags; }; }\n\n"
               "struct MGPPresent {"), registry=None),
    # ---- the same defects on a MobileGL-shaped tree: its own file names ------------------------
    _c("def-missing-mg", "DEF-MISSING", "FillPoints.def removed from the MobileGL-shaped tree",
       "catalogue file FillPoints.def not found", Remove("FillPoints.def"), registry=None,
       shapes=("mobilegl",)),
    _c("def-encoding-mg", "DEF-ENCODING", "FillPoints.def re-encoded as UTF-16",
       ("FillPoints.def:1:1", "byte 0xff is not UTF-8 (the file starts with a UTF-16 byte-order mark)"),
       Encode("FillPoints.def", "utf-16"), registry=None, shapes=("mobilegl",)),
    _c("header-compile-mg", "HEADER-COMPILE", "MGPipeTypes.h: a struct whose member lacks its ';' appended",
       ("MGPipeTypes.h:", "expected ';'"),
       AppendText("MGPipeTypes.h", "struct SelfTestBroken { int A };"), registry=None, shapes=("mobilegl",)),
    _c("header-duplicate-mg", "HEADER-DUPLICATE", "MGPipeTypes.h: a second struct MGPHandleOnly in a namespace",
       "struct 'MGPHandleOnly' is declared again",
       AppendText("MGPipeTypes.h", "namespace MobileGL { namespace selftest { struct MGPHandleOnly { int A; }; } }"),
       registry=None, shapes=("mobilegl",)),
    # ---- the diff gate (`gen --check`) ---------------------------------------------------------
    _c("stale-hand-edit", "STALE", "generated/PipeWire.inc: one hand-edited line",
       ("generated/PipeWire.inc",),
       Replace("generated/PipeWire.inc", "#pragma once\n", "#pragma once\n// a hand edit\n"),
       registry=None, kind=STALE, shapes=()),
    _c("stale-after-change", "STALE",
       "PipeCalls.def: valid call SelfTestPing (MGPFlush) appended; generated/ not regenerated",
       ("{catalogue}/PipeCalls.lock", "generated/PipeTables.inc", "generated/PipeWire.inc",
        "generated/pipe_tables.py"),
       AppendRow(CALLS, CALL_LIST, "X(SelfTestPing, MGPFlush, kCtxVerb, kNone, kWaitNone)"),
       registry=None, kind=STALE),
    _c("stale-after-change-mg-pipe", "STALE",
       "MG_Pipe/PipeCalls.def: valid call SelfTestPing (MGPFlush, kCtxState) appended and the "
       "documented count bumped; generated/ not regenerated",
       ("{catalogue}/PipeCalls.lock", "generated/PipeTables.inc", "generated/PipeWire.inc",
        "generated/pipe_tables.py"),
       AppendRow(CALLS, CALL_LIST, "X(SelfTestPing, MGPFlush, kCtxState, kNone, kWaitNone)"),
       SetValue("MGP_CALL_LIST_DOCUMENTED_COUNT", "{rows}"),
       registry=None, kind=STALE, shapes=("overlay",)),
    # ---- G4: floats compared by bits -------------------------------------------------------------
    _c("g4-float-bits", "G4-BITS",
       "PipeVerify.inc rendered with scalar floats compared by value (a != b)",
       ("real comparator reports LineWidth for 0.0/-0.0 and two NaN payloads; "
        "the by-value comparator misses 0.0/-0.0",), registry=None, kind=G4),
    *ANY_TREE,
    # ---- the control of the controls -----------------------------------------------------------
    _c("clean", "CLEAN", "nothing (the unplanted copy)",
       ("gen --check exits 0: no gate error, no stale file",), registry=None, kind=CLEAN, shapes=()),
)


def select(names: list[str] | None) -> list[Control]:
    """Controls whose name contains any of ``names`` (all when empty)."""
    if not names:
        return list(CONTROLS)
    return [c for c in CONTROLS if any(n in c.name for n in names)]


def by_name(name: str) -> Control:
    return next(c for c in CONTROLS if c.name == name)


__all__ = ["ANY_TREE", "BOTH", "CLEAN", "CONTROLS", "Control", "G4", "GATE", "STALE", "by_name", "select"]
