"""The catalogue's typed rows: one frozen record per .def list, one named field per column.

A row type's fields (before ``loc`` and ``row``) are the list's columns in order; a column
with a default may be left out of an entry. :func:`arity` reads a list's shape from its row
type, so the shape is stated once. Every column is a :class:`Tok` carrying its location.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields

from mgpipe.gen.errors import GenError


@dataclass(frozen=True, slots=True)
class Loc:
    path: str
    line: int
    col: int

    def error(self, gate: str, text: str) -> GenError:
        return GenError(self.path, self.line, self.col, gate, text)


@dataclass(frozen=True, slots=True)
class Tok:
    """One argument reduced to its text, its parts (for A|B) and its location."""

    text: str
    parts: tuple[str, ...]
    kind: str  # ident | flags | int | string | dash | text
    loc: Loc
    raw: str = ""  # the argument exactly as written in the file (where plants edit it)


@dataclass(frozen=True, slots=True)
class CallRow:  # PipeCalls.def MGP_CALL_LIST: X(Name, Payload, Class, Flags, WaitClass)
    name: Tok
    payload: Tok
    cls: Tok
    flags: Tok
    wait: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class LockRow:  # PipeCalls.lock MGP_CALL_LOCK: L(Name, Opcode)
    name: Tok
    opcode: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class FieldRow:  # PipeFields.def MGP_FIELDS_<Struct>: F(Member[, RenderStateClass])
    member: Tok
    cls: Tok | None = None
    loc: Loc = Loc("", 0, 0)
    row: int = 0


@dataclass(frozen=True, slots=True)
class SizeRow:  # PayloadSizes.def MGP_PAYLOAD_SIZES: S(Struct, Bytes)
    struct: Tok
    size: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class InputRow:  # PipeInputs.def MGP_PIPE_INPUTS: X(Accessor, Field, Lifetime)
    accessor: Tok
    field: Tok
    lifetime: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class CoverageRow:  # Coverage.def MGP_COVERAGE: C(Accessor, Call)
    accessor: Tok
    call: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class OwnershipRow:  # FieldOwnership.def MGP_FIELD_OWNERSHIP: O(Field, OwnershipClass)
    field: Tok
    ownership: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class VerbClassRow:  # FillPoints.def MGP_VERB_CLASSES: V(Call, ValidateClass)
    call: Tok
    cls: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class FillRow:  # FillPoints.def MGP_FILL_POINTS: F(ValidateClass, Field)
    cls: Tok
    field: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class SetterRow:  # RenderStateSetters.def: S(Setter, Arm, Bump, Writes)
    setter: Tok
    arm: Tok
    bump: Tok
    writes: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class TailRow:  # Tails.def MGP_TAILS: T(Call, Element, Count, Bound, CondField, CondBit, When)
    call: Tok
    element: Tok
    count: Tok
    bound: Tok
    cond_field: Tok
    cond_bit: Tok
    when: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class SpanRow:  # EsprytSpans.def MGP_ESPRYT_SPANS: E(Constant, Member)
    constant: Tok
    member: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class HandleRow:  # HandleFields.def MGP_HANDLE_FIELDS: H(Call, Field, Kind, NullRule)
    call: Tok
    field: Tok
    kind: Tok
    null: Tok
    loc: Loc
    row: int


# ---- the lists of a MobileGL-shaped tree (the real MG_Pipe directory) ------------------------


@dataclass(frozen=True, slots=True)
class VerifyRow:  # PipeFields.def MGP_VERIFY_PAYLOAD_LIST: P(Struct)
    struct: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class StickyRow:  # Coverage.def MGP_COVERAGE_STICKY_LIST: X(Accessor, Reason)
    accessor: Tok
    reason: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class DeltaRow:  # Coverage.def MGP_COVERAGE_DELTA_LIST: X(DeltaKind, Call); the kind is free text
    kind: Tok
    call: Tok
    loc: Loc
    row: int
    TEXT_COLUMNS = ("kind",)


@dataclass(frozen=True, slots=True)
class FieldClassRow:  # FieldOwnership.def MGP_FIELD_OWNERSHIP(_FORWARD)_LIST:
    #                   X(Accessor, Class, RetiringPhase, Why)
    field: Tok
    ownership: Tok
    phase: Tok
    why: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class FieldArgRow:  # FieldOwnership.def MGP_FIELD_OWNERSHIP_ARG_LIST: X(Accessor, Arg0, Class, Why)
    field: Tok
    arg: Tok
    ownership: Tok
    why: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class VerbOpRow:  # FieldOwnership.def MGP_VERB_OP_LIST: X(Call, Verb)
    call: Tok
    verb: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class ExemptRow:  # FieldOwnership.def MGP_VERB_OP_EXEMPT_LIST: X(Call, Why)
    call: Tok
    why: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class VerbRow:  # FillPoints.def MGP_FILL_VERB_LIST: X(Verb, ValidateClass)
    verb: Tok
    cls: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class ClassNameRow:  # FillPoints.def MGP_FILL_CLASS_LIST: X(ValidateClass)
    cls: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class DirtyRow:  # DirtySurface.def MGP_DIRTY_SURFACE_LIST: X(Mutator, Answer)
    mutator: Tok
    answer: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class FatalRow:  # FatalFamilies.def MGL_FATAL_FAMILY_LIST: X(Family, WireFatalCode, Why)
    family: Tok
    code: Tok
    why: Tok
    loc: Loc
    row: int


@dataclass(frozen=True, slots=True)
class SubsystemRow:  # SubsystemDeps.def MGL_SUBSYSTEM_DEPENDENCY_LIST: X(Family, Requires, Why)
    family: Tok
    requires: Tok
    why: Tok
    loc: Loc
    row: int


def text_columns(row_type: type) -> tuple[str, ...]:
    """Columns that take free text (any run of tokens C accepts as a macro argument)."""
    return tuple(getattr(row_type, "TEXT_COLUMNS", ()))


def columns(row_type: type) -> list[str]:
    return [f.name for f in fields(row_type) if f.name not in ("loc", "row")]


def arity(row_type: type) -> tuple[int, int]:
    """(fewest, most) arguments an entry of this list takes."""
    cols = [f for f in fields(row_type) if f.name not in ("loc", "row")]
    required = sum(1 for f in cols if f.default is MISSING)
    return required, len(cols)


def make_row(row_type: type, toks: list[Tok], loc: Loc, row: int):  # type: ignore[no-untyped-def]
    """A ``row_type`` from an entry's arguments (already checked against :func:`arity`)."""
    return row_type(**dict(zip(columns(row_type), toks)), loc=loc, row=row)


__all__ = [
    "ClassNameRow", "DeltaRow", "DirtyRow", "ExemptRow", "FatalRow", "FieldArgRow", "FieldClassRow",
    "StickyRow", "SubsystemRow", "VerbOpRow", "VerbRow", "VerifyRow", "text_columns",
    "CallRow", "CoverageRow", "FieldRow", "FillRow", "HandleRow", "InputRow", "Loc", "LockRow",
    "OwnershipRow", "SetterRow", "SizeRow", "SpanRow", "TailRow", "Tok", "VerbClassRow", "arity",
    "columns", "make_row",
]  # fmt: skip
