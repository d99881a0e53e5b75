"""The Python tables module the runtime imports (generated/pipe_tables.py)."""

from __future__ import annotations

from mgpipe.gen.model import SOURCES, Model

FILE = "pipe_tables.py"
TEMPLATE = "pipe_tables.py.j2"
TITLE = "the Python tables the runtime executes (layouts, opcodes, chunks, coverage)"
#: the model fields this output reads: its header lists exactly their inputs
READS = tuple(SOURCES)


def _struct(s) -> dict:  # type: ignore[no-untyped-def]
    return {
        "size": s.size,
        "align": s.align,
        "members": tuple(
            {"name": m.name, "offset": m.offset, "size": m.size, "type": m.type,
             "scalar": m.scalar, "struct": m.struct, "count": m.count, "elem_size": m.elem_size}
            for m in s.members
        ),
    }


def context(model: Model) -> dict:
    rs = model.render_state
    calls = tuple(
        {"opcode": c.opcode, "name": c.name, "payload": c.payload, "class": c.cls,
         "flags": c.flags, "wait_class": c.wait_class, "validate_class": c.validate_class}
        for c in model.calls
    )
    sub_class = {}
    for sm in rs.sub_members:
        sub_class.setdefault(sm.path.split(".")[-1], sm.cls)
    render_state = {
        "struct": rs.struct,
        "size": rs.size,
        "member_class": {m.name: m.cls for m in rs.members},
        "sub_member_class": sub_class,
        "pipeline_chunks": tuple((c.offset, c.length) for c in rs.pipeline),
        "dynamic_chunks": tuple((c.offset, c.length) for c in rs.dynamic),
        "chunks": tuple((c.offset, c.length, c.cls) for c in rs.chunks),
        "espryt_spans": {sp.constant: sp.offset for sp in rs.spans},
        "sub_members": tuple((sm.path, sm.offset, sm.size, sm.cls) for sm in rs.sub_members),
    }
    return {
        "calls": calls,
        "structs": {s.name: _struct(s) for s in (*model.structs, *model.transport_structs)},
        "enums": {e.name: dict(e.values) for e in model.enums},
        "constants": dict(model.constants),
        "render_state": render_state,
        "setters": tuple({"setter": s.setter, "arm": s.arm, "bump": s.bump, "writes": s.writes}
                         for s in model.setters),
        "tails": tuple(
            {"call": t.call, "element": t.element, "elem_size": t.elem_size, "scalar": t.scalar,
             "count_field": t.count_field, "bound": t.bound_value, "cond_field": t.cond_field,
             "cond_value": t.cond_value, "when": t.when}
            for t in model.tails
        ),
        "handle_fields": {
            c.name: {h.field: h.kind + ("?" if h.nullable else "")
                     for h in model.handle_fields if h.call == c.name}
            for c in model.calls
        },
        "pipe_inputs": tuple({"id": p.id, "accessor": p.accessor, "field": p.field,
                              "ownership": p.ownership, "sticky": p.lifetime == "kSticky"}
                             for p in model.pipe_inputs),
        "coverage": tuple({"accessor": p.accessor, "call": p.call} for p in model.pipe_inputs),
        "fill_points": {c: fs for c, fs in model.fill_points},
        "field_lists": {f.struct: f.fields for f in model.field_lists},
    }
