"""HANDLE-FIELDS: every handle a record carries is mapped to a handle kind, and only those."""

from __future__ import annotations

from mgpipe.gen.ctx import HANDLE_STRUCT, Ctx
from mgpipe.gen.layout_model import Layouts
from mgpipe.gen.rows import CallRow

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
    kinds = set(ctx.enum(ctx.vocab.handle_kind_enum)) | set(EXTRA_HANDLE_KINDS)
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
                    f"unknown handle kind {kind.text!r}, expected an {ctx.vocab.handle_kind_enum} enumerator "
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

__all__ = ["call_handle_paths", "gate_handle_fields", "handle_paths"]
