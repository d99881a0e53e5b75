"""G3 PipeWire.inc: wire opcodes, per-call tables, layout static_asserts, bounds checks."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeWire.inc"
TEMPLATE = "PipeWire.inc.j2"
TITLE = "G3: wire opcodes, per-call flag/wait tables, layout asserts, decoder bounds checks"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "structs", "constants", "enums")
HEADER_STRUCT = "MGPWireRecHeader"
OP_PREFIX = "kMGPWireOp"  # enumerator prefix of the opcode enum (the lock's witness reads it)
OP_SENTINELS = ("Pad", "Count")  # the enum's own entries: opcode 0 and the table size
RECORD_ALIGN = "kMGPipeRecordAlign"  # the header constant (seed 001 section 4)
#: declarations this output reads by name (render_all refuses a model without them)
NEEDS = (("struct", HEADER_STRUCT), ("constant", RECORD_ALIGN))


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def context(model: Model) -> dict:
    header = model.struct(HEADER_STRUCT)
    align = dict(model.constants)[RECORD_ALIGN]
    rows = []
    for c in model.calls:
        rows.append({
            "call": c,
            "fixed_record": _align(header.size + c.payload_size, align),
            "var_tail": "kVarTail" in c.flags,
        })
    asserted = [s for s in model.structs]
    return {
        "rows": rows,
        "header": header,
        "op_count": len(model.calls) + 1,
        "asserted": asserted,
        "flag_enum": model.enum("MGPipeCallFlag").values,
        "record_align": RECORD_ALIGN,
        "op_prefix": OP_PREFIX,
    }
