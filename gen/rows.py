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
    kind: str  # ident | flags | int | string | dash
    loc: Loc


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
    "CallRow", "CoverageRow", "FieldRow", "FillRow", "HandleRow", "InputRow", "Loc", "LockRow",
    "OwnershipRow", "SetterRow", "SizeRow", "SpanRow", "TailRow", "Tok", "VerbClassRow", "arity",
    "columns", "make_row",
]  # fmt: skip
