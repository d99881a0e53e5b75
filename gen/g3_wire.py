"""G3 PipeWire.inc: the wire record header, MGPWireOp, the per-opcode tables (flags, class,
wait class), one record struct per call with its size assertion, the applier's bounds gate,
and this project's own additions (fixed record sizes, the record checker, layout asserts).

Every name the tables are spelt in comes from the model: the enum that holds the call flags
(and its zero enumerator), the class and wait-class enums and their count enumerators, the
record header's Op type, the record granularity constant.
"""

from __future__ import annotations

from mgpipe.gen.model import Enum, Model

FILE = "PipeWire.inc"
TEMPLATE = "PipeWire.inc.j2"
TITLE = "G3: wire opcodes, per-call flag/class/wait tables, records, decoder bounds checks"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("calls", "structs", "constants", "enums", "field_lists", "shape")
HEADER_STRUCT = "MGPWireRecHeader"
OP_ENUM = "MGPWireOp"
#: the opcode enum's own entries: opcode 0 and the table size (the lock's witness reads them)
OP_SENTINELS = ("kInvalid", "kOpCount")
OP_PREFIX = ""  # enumerator prefix of a call's opcode (the lock's witness reads it)
RECORD_ALIGN = "kMGPipeRecordAlign"  # the record granularity constant
#: the cell types of the per-opcode tables
FLAGS_CELL, CLASS_CELL, WAIT_CELL = "Uint32", "Uint8", "Uint8"
#: the build option under which a split build installs its record decoder
SPLIT_BUILD = "MOBILEGL_BUILD_DISAGGREGATED"
#: the ratchet: a block whose size may only go down, pinned by a macro of MobileGL's headers
RATCHET = ("ResidualValueBlock", "MGL_RESIDUAL_BLOCK_SIZE")
RATCHET_SHAPE = "mobilegl"  # the tree shape whose headers define the ratchet's macro


def wire_header(model: Model) -> tuple[object, int]:
    """(the record header struct, the record granularity).

    Both are mgpipe's own facts where a tree does not state them: MobileGL's MG_Pipe tree
    declares neither (its generator writes the header), so they are read from the bundled
    catalogue's headers, mgpipe's own, until the front end carries its overlay.
    """
    constants = dict(model.constants)
    if RECORD_ALIGN in constants and any(s.name == HEADER_STRUCT for s in model.structs):
        return model.struct(HEADER_STRUCT), constants[RECORD_ALIGN]
    return _own_header()


def _own_header():  # type: ignore[no-untyped-def]
    global _OWN
    if _OWN is None:
        from mgpipe.gen import CATALOGUE_DIR
        from mgpipe.gen.build import build

        own = build(CATALOGUE_DIR).model
        _OWN = (own.struct(HEADER_STRUCT), dict(own.constants)[RECORD_ALIGN])
    return _OWN


_OWN = None


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def enum_holding(model: Model, names: set[str]) -> Enum:
    """The enum whose enumerators include every one of ``names``."""
    for e in model.enums:
        if names <= {n for n, _ in e.values}:
            return e
    raise KeyError(f"no enum declares {sorted(names)}")


def sentinel(e: Enum, used: set[str]) -> tuple[str | None, int]:
    """(the count enumerator of ``e`` when it declares one, the count): the one enumerator
    no row uses whose value is the number of the others."""
    real = [(n, v) for n, v in e.values if n in used or not n.endswith("Count")]
    for n, v in e.values:
        if n not in used and n.endswith("Count") and v == len(real):
            return n, v
    return None, len(real)


def context(model: Model) -> dict:
    header, align = wire_header(model)
    constants = dict(model.constants)
    used_flags = {f for c in model.calls for f in c.flags}
    flag_enum = enum_holding(model, used_flags)
    zero = next(n for n, v in flag_enum.values if v == 0)
    bits = [(n, v.bit_length() - 1) for n, v in flag_enum.values if v]
    class_enum = enum_holding(model, {c.cls for c in model.calls})
    wait_enum = enum_holding(model, {c.wait_class for c in model.calls})
    class_sentinel = sentinel(class_enum, {c.cls for c in model.calls})
    wait_sentinel = sentinel(wait_enum, {c.wait_class for c in model.calls})
    op_type = next(m.type for m in header.members if m.name == "Op")
    rows = [{"call": c, "flags": " | ".join(c.flags) if c.flags else zero,
             "fixed_record": _align(header.size + c.payload_size, align)} for c in model.calls]
    ratchet = None
    fl = {f.struct: f.fields for f in model.field_lists}
    if RATCHET[0] in fl and fl[RATCHET[0]] and (RATCHET[1] in constants or model.shape == RATCHET_SHAPE):
        ratchet = (RATCHET[0], fl[RATCHET[0]][0], RATCHET[1])
    return {
        "rows": rows,
        "header": header,
        "op_enum": OP_ENUM,
        "op_type": op_type,
        "op_count": len(model.calls) + 1,
        "sentinels": OP_SENTINELS,
        "asserted": list(model.structs),
        "flag_enum": flag_enum.name,
        "zero_flag": zero,
        "bits": bits,
        "all_bits": " | ".join(n for n, _ in bits),
        "all_bits_value": f"0x{sum(1 << b for _, b in bits):X}u",
        "class_enum": class_enum.name,
        "class_none": class_sentinel[0] or f"static_cast<{class_enum.name}>({class_sentinel[1]})",
        "wait_enum": wait_enum.name,
        "wait_none": wait_sentinel[0] or f"static_cast<{wait_enum.name}>({wait_sentinel[1]})",
        "cells": {"flags": FLAGS_CELL, "class": CLASS_CELL, "wait": WAIT_CELL},
        "record_align": RECORD_ALIGN,
        "align_mask": align - 1,
        "split_build": SPLIT_BUILD,
        "ratchet": ratchet,
    }
