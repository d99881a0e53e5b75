"""G1 PipeTables.inc: the MGPipeScreen / MGPipeContext function-pointer tables.

One member per call, in catalogue order within its table; each member's signature is the
call's flags made into parameters (:data:`SIGNATURE`), so a flag edit is a signature edit.
The table counts and their agreement with the list's documented count are asserted.
"""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeTables.inc"
TEMPLATE = "PipeTables.inc.j2"
TITLE = "G1: MGPipeScreen / MGPipeContext function-pointer tables, one member per call"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "structs", "documented_count")

#: the parameters of a call's entry point, in this order: (flag that adds them or None for
#: every call, declaration, argument names). The payload parameter's ``{payload}`` is the
#: call's payload struct.
SIGNATURE: tuple[tuple[str | None, str, str], ...] = (
    (None, "const {payload}* payload", "payload"),
    ("kHasBlob", "const void* blobBytes, Uint64 blobByteCount", "blobBytes, blobByteCount"),
    ("kVarTail", "const void* varTail, Uint32 varTailCount", "varTail, varTailCount"),
    ("kReplySlot", "MGPReplySlot* reply", "reply"),
)
#: the struct a reply-slot parameter points to
REPLY_STRUCT = "MGPReplySlot"
#: the table a kScreen row belongs to (share-group scope); every other row is a context call
SCREEN_CLASS = "kScreen"
#: the macro the call list documents its own row count in
DOCUMENTED_COUNT = "MGP_CALL_LIST_DOCUMENTED_COUNT"
#: the C++ name of each table's count constant
COUNT_NAMES = {"MGPipeScreen": "kMGPipeScreenCallCount", "MGPipeContext": "kMGPipeContextCallCount"}


def signature(call) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(parameter declarations, argument list) of ``call``'s entry point."""
    decls, args = [], []
    for flag, decl, arg in SIGNATURE:
        if flag is None or flag in call.flags:
            decls.append(decl.format(payload=call.payload))
            args.append(arg)
    return ", ".join(decls), ", ".join(args)


def tables(model: Model) -> list[tuple[str, list]]:
    """(table, its calls in catalogue order), the share-group table first."""
    names = list(dict.fromkeys(c.table for c in model.calls))
    names.sort(key=lambda t: t != "MGPipeScreen")
    return [(t, [c for c in model.calls if c.table == t]) for t in names]


def context(model: Model) -> dict:
    rows = [(t, COUNT_NAMES[t], [(c, signature(c)[0]) for c in calls]) for t, calls in tables(model)]
    known = {s.name for s in model.structs}
    return {
        "tables": rows,
        "call_count": len(model.calls),
        # asserted where the tree documents the count
        "documented_count": DOCUMENTED_COUNT if model.documented_count is not None else None,
        # a reply slot is only ever passed by pointer: a tree that does not declare the struct
        # still gets a table that compiles
        "declare_reply": REPLY_STRUCT if REPLY_STRUCT not in known else None,
    }
