"""The render-state chunk table (G7): computed from the libclang layout and the classes.

Every byte of ``RenderStateParameters`` gets the class of the member (or, for a kSplit
member, the sub-member) that owns it; padding joins the member before it. Adjacent bytes
of one class merge into a chunk. The result must partition ``[0, sizeof)`` exactly: a byte
in no class or in both is a ``CHUNK-PARTITION`` error naming the member and the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from mgpipe.gen.catalogue import Loc
from mgpipe.gen.errors import ErrorCollector
from mgpipe.gen.layout_model import Layouts, Member, Struct
from mgpipe.gen.model import Chunk, SubMember

PIPELINE = "kPipeline"
DYNAMIC = "kDynamic"
SPLIT = "kSplit"
HALVES = (PIPELINE, DYNAMIC)


@dataclass(frozen=True, slots=True)
class ClassRow:
    """One member's class as the mirror states it: a set (empty = unclassified)."""

    classes: frozenset[str]
    loc: Loc


@dataclass(frozen=True, slots=True)
class Extent:
    label: str  # member or sub-member path
    begin: int
    end: int  # padding up to the next member included
    classes: frozenset[str]
    loc: Loc


def _extents(members: tuple[Member, ...], size: int) -> list[tuple[Member, int, int]]:
    out = []
    for i, m in enumerate(members):
        end = members[i + 1].offset if i + 1 < len(members) else size
        out.append((m, m.offset, end))
    return out


def member_extents(
    layouts: Layouts,
    struct: Struct,
    member_classes: dict[str, ClassRow],
    sub_classes: dict[str, dict[str, ClassRow]],
) -> tuple[list[Extent], list[SubMember]]:
    """Byte extents of every member, split members expanded per element and sub-member."""
    extents: list[Extent] = []
    subs: list[SubMember] = []
    for m, begin, end in _extents(struct.members, struct.size):
        row = member_classes.get(m.name)
        classes = row.classes if row else frozenset()
        loc = row.loc if row else Loc(struct.path, m.line, m.col)
        if classes != frozenset({SPLIT}):
            extents.append(Extent(m.name, begin, end, classes, loc))
            continue
        inner = layouts.structs.get(m.struct or "")
        table = sub_classes.get(m.struct or "", {})
        if inner is None:
            extents.append(Extent(m.name, begin, end, frozenset(), loc))
            continue
        for i in range(m.count):
            base = begin + i * m.elem_size
            for sm, sb, se in _extents(inner.members, inner.size):
                srow = table.get(sm.name)
                scls = srow.classes if srow else frozenset()
                path = f"{m.name}[{i}].{sm.name}" if m.count > 1 else f"{m.name}.{sm.name}"
                extents.append(Extent(path, base + sb, base + se, scls, srow.loc if srow else loc))
                only = next(iter(scls)) if len(scls) == 1 else None
                subs.append(SubMember(path=path, offset=base + sm.offset, size=sm.size,
                                      scalar=sm.scalar, cls=only))
        tail = begin + m.count * m.elem_size
        if tail < end:  # padding after the array joins its last element
            last = extents[-1]
            extents[-1] = Extent(last.label, last.begin, end, last.classes, last.loc)
    return extents, subs


def chunk_table(
    size: int, extents: list[Extent], errors: ErrorCollector, struct_name: str
) -> tuple[Chunk, ...]:
    """Merge extents into alternating chunks; refuse unclassified and doubly classed bytes.

    The extents come from consecutive libclang offsets (padding joined to the member before
    it), so they tile ``[0, size)`` by construction; what the catalogue can get wrong is the
    class of each extent, and that is what ``CHUNK-PARTITION`` names.
    """
    bad = False
    for ext in extents:
        if not ext.classes:
            bad = True
            errors.add(ext.loc.error(
                "CHUNK-PARTITION",
                f"bytes [{ext.begin}, {ext.end}) of {struct_name}.{ext.label} are in no chunk: "
                f"the member has no render-state class, expected kPipeline, kDynamic or kSplit",
            ))
        elif len(ext.classes & set(HALVES)) > 1:
            bad = True
            errors.add(ext.loc.error(
                "CHUNK-PARTITION",
                f"bytes [{ext.begin}, {ext.end}) of {struct_name}.{ext.label} are claimed by both "
                f"the pipeline and the dynamic chunks, expected exactly one class",
            ))
    if bad:
        return ()
    chunks: list[Chunk] = []
    counters = {PIPELINE: 0, DYNAMIC: 0}
    run: list[Extent] = []

    def close() -> None:
        cls = next(iter(run[0].classes))
        chunks.append(Chunk(offset=run[0].begin, length=run[-1].end - run[0].begin, cls=cls,
                            index=counters[cls], members=tuple(e.label for e in run)))
        counters[cls] += 1

    for ext in sorted(extents, key=lambda e: e.begin):
        if run and ext.classes != run[-1].classes:
            close()
            run = []
        run.append(ext)
    if run:
        close()
    # Internal invariant (not a gate): consecutive offsets tile the struct exactly.
    assert sum(c.length for c in chunks) == size and chunks[0].offset == 0, struct_name
    return tuple(chunks)


__all__ = ["ClassRow", "Extent", "chunk_table", "member_extents", "PIPELINE", "DYNAMIC", "SPLIT"]
