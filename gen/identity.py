"""The wire identity: an xxh64 over what makes the ABI, never over a file's text.

It covers every call row's name, opcode, flags and wait class; every wire struct's name,
size and alignment and every member's name, type, offset and size; the render-state chunk
table. A comment edit in PipeCalls.def leaves it where it is; a member reorder, a new flag
or a moved chunk boundary moves it. The catalogue directory's name and location are in none
of its inputs.
"""

from __future__ import annotations

import json

import xxhash


def abi_fingerprint(calls, structs, chunks) -> str:  # type: ignore[no-untyped-def]
    doc = {
        "calls": [[c.opcode, c.name, c.payload, c.cls, list(c.flags), c.flag_bits, c.wait_class]
                  for c in calls],
        "structs": [[s.name, s.size, s.align, [[m.name, m.type, m.offset, m.size] for m in s.members]]
                    for s in sorted(structs, key=lambda s: s.name)],
        "chunks": [[c.offset, c.length, c.cls] for c in chunks],
    }
    return xxhash.xxh64(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


__all__ = ["abi_fingerprint"]
