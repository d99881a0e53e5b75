"""Render-state gates (G7): member classes, the chunk partition, setter consistency.

``RS-CLASS`` refuses a class token that is not an ``MGPipeRenderStateClass`` enumerator;
``CHUNK-PARTITION`` refuses a table that does not partition the struct (see
:mod:`mgpipe.gen.chunks`); ``CHUNK-MASK`` a half with more chunks than a ``ChunkMask``
has bits; ``SETTER-CONSISTENCY`` a setter whose bump group disagrees with the classes of
the bytes it writes; ``SETTER-MEMBER`` a write naming no member; ``SETTER-COVERAGE`` a
member no setter writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from mgpipe.gen.catalogue import Loc
from mgpipe.gen.errors import one_of
from mgpipe.gen.chunks import DYNAMIC, PIPELINE, SPLIT, ClassRow, chunk_table, member_extents
from mgpipe.gen.ctx import RS_STRUCT, Ctx
from mgpipe.gen.model import Chunk, Setter, SubMember

MASK_BITS_MEMBER = ("MGPDynamicState", "ChunkMask")


@dataclass(frozen=True, slots=True)
class RsResult:
    member_classes: dict[str, str | None]
    sub_classes: dict[str, str | None]
    chunks: tuple[Chunk, ...]
    sub_members: tuple[SubMember, ...]
    setters: tuple[Setter, ...]


def _class_rows(ctx: Ctx, struct: str) -> dict[str, ClassRow]:
    allowed = ctx.enum("MGPipeRenderStateClass")
    out: dict[str, ClassRow] = {}
    for r in ctx.cat.field_lists.get(struct, ()):
        name = r.member.text
        if r.cls is None:
            out[name] = ClassRow(frozenset(), r.member.loc)
            continue
        tok = r.cls
        for part in tok.parts:
            if part not in allowed:
                ctx.err(tok.loc, "RS-CLASS",
                        f"{struct}.{name} has render-state class {part!r}, expected "
                        f"{one_of(allowed, 'an MGPipeRenderStateClass enumerator (the headers declare none)')}")
        out[name] = ClassRow(frozenset(p for p in tok.parts if p in allowed), tok.loc)
    return out


def _sub_struct_rows(ctx: Ctx, classes: dict[str, ClassRow]) -> dict[str, dict[str, ClassRow]]:
    rs = ctx.lay.structs[RS_STRUCT]
    subs: dict[str, dict[str, ClassRow]] = {}
    for m in rs.members:
        row = classes.get(m.name)
        if row and SPLIT in row.classes:
            if m.struct is None or m.struct not in ctx.cat.field_lists:
                ctx.err(row.loc, "RS-CLASS",
                        f"{RS_STRUCT}.{m.name} is kSplit but its type {m.type} has no classified "
                        f"MGP_FIELDS_{m.struct or m.type} list, expected a struct whose sub-members carry classes")
                continue
            subs[m.struct] = _class_rows(ctx, m.struct)
    return subs


def _write_classes(ctx: Ctx, path: str, loc: Loc, classes: dict[str, ClassRow],
                   subs: dict[str, dict[str, ClassRow]]) -> tuple[str, frozenset[str]] | None:
    rs = ctx.lay.structs[RS_STRUCT]
    head, _, sub = path.partition(".")
    member = next((m for m in rs.members if m.name == head), None)
    if member is None:
        ctx.err(loc, "SETTER-MEMBER", f"{RS_STRUCT} has no member {head!r}, expected a member name")
        return None
    row = classes.get(head)
    own = row.classes if row else frozenset()
    if sub:
        inner = ctx.lay.structs.get(member.struct or "")
        if inner is None or all(m.name != sub for m in inner.members):
            ctx.err(loc, "SETTER-MEMBER", f"{head} ({member.type}) has no sub-member {sub!r}, expected one")
            return None
        if SPLIT in own:
            srow = subs.get(member.struct or "", {}).get(sub)
            return head, srow.classes if srow else frozenset()
        return head, own
    if SPLIT in own:
        return head, frozenset().union(*(r.classes for r in subs.get(member.struct or "", {}).values()))
    return head, own


def check_setters(ctx: Ctx, classes: dict[str, ClassRow],
                  subs: dict[str, dict[str, ClassRow]]) -> tuple[Setter, ...]:
    bumps = ctx.enum("MGPipeSetterBump")
    enumerators = {e.name for en in ctx.lay.enums.values() for e in en.enumerators}
    written: set[str] = set()
    setters: list[Setter] = []
    for r in ctx.cat.setters:
        name, arm, bump, writes = r.setter, r.arm, r.bump, r.writes
        label = name.text + (f"({arm.text})" if arm.text != "kNoArm" else "")
        if bump.text not in bumps:
            ctx.err(bump.loc, "SETTER-CONSISTENCY",
                    f"{label}: unknown bump group {bump.text!r}, expected "
                    f"{one_of(bumps, 'an MGPipeSetterBump enumerator (the headers declare none)')}")
            continue
        if arm.text != "kNoArm" and arm.text not in enumerators:
            ctx.err(arm.loc, "SETTER-MEMBER", f"{label}: arm {arm.text!r} is no enumerator, expected one")
        touched: set[str] = set()
        paths = () if writes.kind == "dash" else writes.parts
        for path in paths:
            got = _write_classes(ctx, path, writes.loc, classes, subs)
            if got is None:
                continue
            written.add(got[0])
            touched |= got[1]
        p, d = PIPELINE in touched, DYNAMIC in touched
        problem = None
        if bump.text == "kBumpVersion" and p:
            problem = ("bumps only m_version but writes pipeline-subset bytes: the pipeline hash would "
                       "move with m_pipelineStateVersion still, expected kBumpBoth or dynamic members")
        elif bump.text == "kBumpBoth" and d:
            problem = ("bumps m_pipelineStateVersion but writes dynamic bytes: the version would move "
                       "with the pipeline hash still, expected kBumpVersion or pipeline members")
        elif bump.text == "kBumpBoth" and not p:
            problem = "bumps m_pipelineStateVersion but writes no pipeline-subset byte, expected pipeline members"
        elif bump.text == "kBumpConditional" and not (p and d):
            problem = "is conditional but does not write both pipeline and dynamic bytes, expected both"
        elif bump.text == "kBumpNone" and paths:
            problem = "bumps nothing but writes the parameter block, expected '-' or a bumping group"
        if problem:
            ctx.err(writes.loc, "SETTER-CONSISTENCY", f"{label} {problem}")
        setters.append(Setter(setter=name.text, arm=None if arm.text == "kNoArm" else arm.text,
                              bump=bump.text, writes=tuple(paths)))
    rs = ctx.lay.structs[RS_STRUCT]
    for m in rs.members:
        if m.name not in written and ctx.cat.setters:
            row = classes.get(m.name)
            loc = row.loc if row else Loc(rs.path, m.line, m.col)
            ctx.err(loc, "SETTER-COVERAGE",
                    f"no RenderStateSetters.def row writes {RS_STRUCT}.{m.name}, expected the setter that does")
    return tuple(setters)


def check_render_state(ctx: Ctx) -> RsResult | None:
    rs = ctx.lay.structs.get(RS_STRUCT)
    if rs is None:
        ctx.err(Loc(ctx.cat.path_of("PipeFields.def"), 1, 1), "RS-CLASS",
                f"struct {RS_STRUCT} is not declared, expected it in catalogue/include")
        return None
    classes = _class_rows(ctx, RS_STRUCT)
    subs = _sub_struct_rows(ctx, classes)
    extents, sub_members = member_extents(ctx.lay, rs, classes, subs)
    chunks = chunk_table(rs.size, extents, ctx.errors, RS_STRUCT)
    bits = 32
    mask = ctx.lay.structs.get(MASK_BITS_MEMBER[0])
    if mask is not None:
        bits = 8 * next((m.size for m in mask.members if m.name == MASK_BITS_MEMBER[1]), 4)
    for half in (PIPELINE, DYNAMIC):
        n = sum(1 for c in chunks if c.cls == half)
        if n > bits:
            ctx.err(Loc(rs.path, rs.line, rs.col), "CHUNK-MASK",
                    f"{n} {half} chunks exceed the {bits}-bit ChunkMask, expected at most {bits}")
    setters = check_setters(ctx, classes, subs)

    def only(row: ClassRow | None) -> str | None:
        return next(iter(row.classes)) if row and len(row.classes) == 1 else None

    sub_cls = {name: only(r) for table in subs.values() for name, r in table.items()}
    return RsResult({m.name: only(classes.get(m.name)) for m in rs.members}, sub_cls,
                    chunks, tuple(sub_members), setters)


__all__ = ["RsResult", "check_render_state"]
