"""`mgpipe layout`, `mgpipe chunks`, `mgpipe calls`: the model, for people and programs.

The --json forms are the tool's machine interface and keep their shapes:
  layout -> {"structs": [names]} without a struct, else {"name", "size", "align", "members": [{"name", "offset", "size", "type", "class"}],
             "sub_members": [{"name", "offset", "size", "class"}]}
  chunks -> {"pipeline": [{"offset", "length"}], "dynamic": [...]}
  calls  -> {"calls": [{"opcode", "name", "payload", "class", "flags", "wait_class"}]}
"""

from __future__ import annotations

import argparse
import json

from mgpipe.cmd_gen import add_catalogue_arg, build_of
from mgpipe.refusal import unknown


def _dump(obj: object) -> None:
    print(json.dumps(obj, indent=2))


def run_layout(args: argparse.Namespace) -> int:
    model = build_of(args).model
    names = sorted(x.name for x in model.structs)
    if args.struct is None:  # no struct named: list them
        if args.json:
            _dump({"structs": names})
        else:
            print("\n".join(names))
        return 0
    try:
        s = model.struct(args.struct)
    except KeyError:
        raise unknown("UNKNOWN-STRUCT", "struct", args.struct, names,
                      " (`mgpipe layout` lists every struct)") from None
    rs = model.render_state
    subs = rs.sub_members if s.name == rs.struct else ()
    doc = {
        "name": s.name, "size": s.size, "align": s.align,
        "members": [{"name": m.name, "offset": m.offset, "size": m.size, "type": m.type, "class": m.cls}
                    for m in s.members],
        "sub_members": [{"name": x.path, "offset": x.offset, "size": x.size, "class": x.cls} for x in subs],
    }
    if args.json:
        _dump(doc)
        return 0
    print(f"struct {s.name}: size {s.size}, align {s.align}, {len(s.members)} members")
    print(f"  {'offset':>6} {'size':>5}  {'class':<10} {'type':<24} member")
    for m in doc["members"]:
        print(f"  {m['offset']:>6} {m['size']:>5}  {m['class'] or '-':<10} {m['type']:<24} {m['name']}")
    for x in doc["sub_members"]:
        print(f"  {x['offset']:>6} {x['size']:>5}  {x['class'] or '-':<10} {'':<24} {x['name']}")
    return 0


def run_chunks(args: argparse.Namespace) -> int:
    rs = build_of(args).model.render_state
    doc = {
        "pipeline": [{"offset": c.offset, "length": c.length} for c in rs.pipeline],
        "dynamic": [{"offset": c.offset, "length": c.length} for c in rs.dynamic],
    }
    if args.json:
        _dump(doc)
        return 0
    print(f"{rs.struct} ({rs.size} bytes): {len(rs.pipeline)} pipeline chunks = "
          f"{sum(c.length for c in rs.pipeline)} B, {len(rs.dynamic)} dynamic chunks = "
          f"{sum(c.length for c in rs.dynamic)} B")
    for c in rs.chunks:
        print(f"  [{c.offset:>4}, {c.offset + c.length:>4})  {c.length:>4} B  {c.cls:<9} "
              f"bit {c.index:<2} {', '.join(c.members)}")
    return 0


def run_calls(args: argparse.Namespace) -> int:
    model = build_of(args).model
    doc = {"calls": [{"opcode": c.opcode, "name": c.name, "payload": c.payload, "class": c.cls,
                      "flags": list(c.flags), "wait_class": c.wait_class} for c in model.calls]}
    if args.json:
        _dump(doc)
        return 0
    for c in model.calls:
        print(f"{c.opcode:>3}  {c.name:<26} {c.payload:<28} {c.cls:<11} "
              f"{'|'.join(c.flags) or 'kNone':<30} {c.wait_class}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("layout", help="a struct's members: offset, size, type, render-state class")
    p.add_argument("struct", nargs="?", help="a struct name (none: list every struct)")
    p.add_argument("--json", action="store_true")
    add_catalogue_arg(p)
    p.set_defaults(func=run_layout)
    p = subparsers.add_parser("chunks", help="the render-state pipeline/dynamic chunk table")
    p.add_argument("--json", action="store_true")
    add_catalogue_arg(p)
    p.set_defaults(func=run_chunks)
    p = subparsers.add_parser("calls", help="the call catalogue: opcode, name, payload, class, flags, wait class")
    p.add_argument("--json", action="store_true")
    add_catalogue_arg(p)
    p.set_defaults(func=run_calls)
