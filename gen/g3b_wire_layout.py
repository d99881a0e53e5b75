"""PipeWireLayout.inc: the wire layout as data, for the layout digest both ends compute.

One row per wire struct (its name and size) followed by one per member (``Struct.Member``,
its offset and size), every size and offset spelt as the compiler's own ``sizeof`` /
``offsetof``; then one row per call (name, payload, opcode, flags, wait class). The structs
are those with a field list, in the lists' order, then the handle and the record header.
"""

from __future__ import annotations

from mgpipe.gen.g3_wire import HEADER_STRUCT, OP_ENUM, enum_holding, wire_header
from mgpipe.gen.model import Model

FILE = "PipeWireLayout.inc"
TEMPLATE = "PipeWireLayout.inc.j2"
TITLE = "the wire layout as data: every wire struct's members, every call's columns"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "structs", "enums", "field_lists", "constants", "lists")
#: wire structs without a field list that the layout still covers: the object handle every
#: payload names objects with, and the record header
UNLISTED = ("MGPipeHandle", HEADER_STRUCT)
VERIFY_LIST = "MGP_VERIFY_PAYLOAD_LIST"
PAD_PREFIX = "Pad"  # explicit padding members: bytes, not layout


def context(model: Model) -> dict:
    known = {s.name for s in model.structs}
    listed = [f for f in model.field_lists if f.struct in known]
    # where the tree lists the verified payloads, the layout follows that list's order
    order = [r.key for r in model.rows_of(VERIFY_LIST)]
    if order:
        rank = {name: i for i, name in enumerate(order)}
        listed.sort(key=lambda f: rank.get(f.struct, len(rank)))
    rows = [(f.struct, list(f.fields)) for f in listed]
    header = wire_header(model)[0]
    for name in UNLISTED:
        if name not in {f.struct for f in listed} and (name in known or name == header.name):
            s = model.struct(name) if name in known else header
            rows.append((name, [m.name for m in s.members if not m.name.startswith(PAD_PREFIX)]))
    flag_enum = enum_holding(model, {f for c in model.calls for f in c.flags})
    zero = next(n for n, v in flag_enum.values if v == 0)
    calls = [(c, " | ".join(c.flags) if c.flags else zero) for c in model.calls]
    return {"structs": rows, "calls": calls, "op_enum": OP_ENUM}
