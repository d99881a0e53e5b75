"""The gates of a MobileGL-shaped tree's own lists (the shared ones live in :mod:`gates`).

* ``DOCUMENTED-COUNT`` MGP_CALL_LIST_DOCUMENTED_COUNT equals the rows of MGP_CALL_LIST;
* sizes: the headers pin them themselves (``MGP_ASSERT_POD(T, N)``, ``static_assert(sizeof(T)
  == N)``), so a drifted size is the compiler's refusal (HEADER-COMPILE at the pin); the pins
  are read into the model (``Struct.pinned_size``) and a payload left unpinned keeps
  libclang's size;
* ``FIELD-MISSING`` / ``FIELD-UNKNOWN`` / ``FIELD-ORDER`` / ``FIELD-LIST``: each
  ``MGP_FIELDS_<T>`` names exactly the direct members of ``T`` in declaration order, members
  named ``Pad<n>`` excepted (and never listed); every payload has a list;
* ``VERIFY-LIST`` MGP_VERIFY_PAYLOAD_LIST names exactly the structs that have a field list;
* ``COVERAGE-CALL`` / ``COVERAGE-ACCESSOR``: the accessor list names real calls (or a
  pseudo-call ``k...``); the sticky and emitted lists name accessors, the emitted list real
  calls; an accessor is sticky once;
* ``FILL-POINTS`` the verb classes are MGP_FILL_CLASS_LIST's, each verb once, each may-read
  row a class and an accessor; the verbs are exactly the verb table's function-pointer
  members (GLFunctionsTable) in declaration order, where the headers declare it;
* ``SUBSYSTEM-DEPS`` each family is one subsystem bit the headers define, once; each
  requirement names such bits (or is ``0``); ``FATAL-FAMILY`` one row per family, each with
  its reason;
* ``DIRTY-SURFACE`` one row per mutator, and - where the tree holds the frontend's sources
  (``MG_Impl/GLImpl`` beside ``MG_Pipe``) - both directions against the ``pGLContext->``
  mutators they call (a tree without them, like the snapshot, is checked for duplicates only).
"""

from __future__ import annotations

import re
from pathlib import Path

from mgpipe.gen.catalogue import DOCUMENTED_COUNT, Loc
from mgpipe.gen.ctx import Ctx
from mgpipe.gen.errors import one_of
from mgpipe.gen.gates import gate_field_lists  # one gate for both shapes: its vocabulary names the padding


def gate_documented_count(ctx: Ctx) -> None:
    v = ctx.cat.values.get(DOCUMENTED_COUNT)
    if v is None:
        return  # the loader names the missing definition (a root cause)
    rows = len(ctx.cat.calls)
    if not v.value.isdigit():
        ctx.err(Loc(v.path, v.line, v.value_col), "DOCUMENTED-COUNT",
                f"{DOCUMENTED_COUNT} is {v.value!r}, expected the number of MGP_CALL_LIST rows ({rows})")
    elif int(v.value) != rows:
        ctx.err(Loc(v.path, v.line, v.value_col), "DOCUMENTED-COUNT",
                f"{DOCUMENTED_COUNT} is {v.value} but MGP_CALL_LIST has {rows} rows, expected "
                f"{rows} (or the rows the count documents)")


def gate_verify_list(ctx: Ctx) -> None:
    rows = ctx.cat.rows("MGP_VERIFY_PAYLOAD_LIST")
    named = [r.struct.text for r in rows]
    seen: set[str] = set()
    for r in rows:
        if r.struct.text not in ctx.cat.field_lists:
            ctx.err(r.struct.loc, "VERIFY-LIST",
                    f"MGP_VERIFY_PAYLOAD_LIST names {r.struct.text}, which has no MGP_FIELDS_"
                    f"{r.struct.text} list, expected a struct with a field list")
        if r.struct.text in seen:
            ctx.err(r.struct.loc, "VERIFY-LIST", f"{r.struct.text} is named twice, expected once")
        seen.add(r.struct.text)
    if rows:
        for struct, loc in ctx.cat.field_list_locs.items():
            if struct not in named:
                ctx.err(loc, "VERIFY-LIST",
                        f"MGP_FIELDS_{struct} is in no MGP_VERIFY_PAYLOAD_LIST row, expected "
                        f"P({struct}): the comparator is generated from that list")


def _pseudo(call: str) -> bool:
    return call.startswith("k") and call[1:2].isupper()


def gate_coverage(ctx: Ctx) -> None:
    calls = {r.name.text for r in ctx.cat.calls}
    accessors = {r.accessor.text for r in ctx.cat.coverage}
    for r in ctx.cat.coverage:
        if r.call.text not in calls and not _pseudo(r.call.text):
            ctx.err(r.call.loc, "COVERAGE-CALL",
                    f"accessor {r.accessor.text} maps to {r.call.text!r}, which PipeCalls.def does not "
                    f"declare, expected a call or a pseudo-call (kClientResolved, ...)")
    for lst, calls_too in (("MGP_COVERAGE_STICKY_LIST", False), ("MGP_COVERAGE_EMITTED_LIST", True)):
        seen: set[str] = set()
        for r in ctx.cat.rows(lst):
            if r.accessor.text not in accessors:
                ctx.err(r.accessor.loc, "COVERAGE-ACCESSOR",
                        f"{lst} names {r.accessor.text!r}, which is not an accessor of "
                        f"MGP_COVERAGE_ACCESSOR_LIST, expected one")
            if r.accessor.text in seen:
                ctx.err(r.accessor.loc, "COVERAGE-ACCESSOR",
                        f"{lst} names {r.accessor.text} twice, expected once")
            seen.add(r.accessor.text)
            if calls_too and r.call.text not in calls:
                ctx.err(r.call.loc, "COVERAGE-CALL",
                        f"{lst} names call {r.call.text!r}, which PipeCalls.def does not declare, "
                        f"expected a call")
    for r in ctx.cat.rows("MGP_COVERAGE_DELTA_LIST"):
        if r.call.text not in calls and not _pseudo(r.call.text):
            ctx.err(r.call.loc, "COVERAGE-CALL",
                    f"delta {r.kind.text!r} maps to {r.call.text!r}, which PipeCalls.def does not "
                    f"declare, expected a call or a pseudo-call")


def gate_fill_points(ctx: Ctx) -> None:
    classes = [r.cls.text for r in ctx.cat.rows("MGP_FILL_CLASS_LIST")]
    accessors = {r.accessor.text for r in ctx.cat.coverage}
    verbs = ctx.cat.rows("MGP_FILL_VERB_LIST")
    seen: set[str] = set()
    for r in verbs:
        if r.cls.text not in classes:
            ctx.err(r.cls.loc, "FILL-POINTS",
                    f"verb {r.verb.text} has class {r.cls.text!r}, expected {one_of(classes, 'a class of MGP_FILL_CLASS_LIST')}")
        if r.verb.text in seen:
            ctx.err(r.verb.loc, "FILL-POINTS", f"verb {r.verb.text} has two rows, expected one")
        seen.add(r.verb.text)
    for r in ctx.cat.fill_points:
        if r.cls.text not in classes:
            ctx.err(r.cls.loc, "FILL-POINTS",
                    f"may-read row of class {r.cls.text!r}, expected {one_of(classes, 'a class of MGP_FILL_CLASS_LIST')}")
        if r.field.text not in accessors:
            ctx.err(r.field.loc, "FILL-POINTS",
                    f"{r.field.text} is not a PipeInputs field, expected an accessor of Coverage.def")
    table = ctx.lay.structs.get(ctx.vocab.verb_table_struct or "")
    if table is None or not verbs:
        return
    fn = [m for m in table.members if m.pod == "a function pointer"]
    members = [m.name for m in fn]
    listed = [r.verb.text for r in verbs]
    for r in verbs:
        if r.verb.text not in members:
            ctx.err(r.verb.loc, "FILL-POINTS",
                    f"verb {r.verb.text} is not a member of {table.name} ({table.path}), expected "
                    f"one of its function pointers")
    for m in fn:
        if m.name not in listed:
            ctx.err(Loc(table.path, m.line, m.col), "FILL-POINTS",
                    f"{table.name}::{m.name} has no MGP_FILL_VERB_LIST row, expected X({m.name}, <class>)")
    common = [n for n in listed if n in members]
    for r, want in zip([r for r in verbs if r.verb.text in members], [n for n in members if n in common]):
        if r.verb.text != want:
            ctx.err(r.verb.loc, "FILL-POINTS",
                    f"MGP_FILL_VERB_LIST lists {r.verb.text} where {table.name} declares {want}, "
                    f"expected declaration order")
            break


GATES = (
    ("documented-count", gate_documented_count),
    ("field-lists", gate_field_lists),
    ("verify-list", gate_verify_list),
    ("coverage", gate_coverage),
    ("fill-points", gate_fill_points),
)

__all__ = ["GATES"]


#: the frontend sources whose ``pGLContext->Mutator(`` calls DirtySurface.def answers for
DIRTY_SCAN_ROOT = "MG_Impl/GLImpl"
_MUTATOR_CALL = re.compile(r"\bpGLContext\s*->\s*([A-Za-z_]\w*)\s*\(")


def _mask_comments(text: str) -> str:
    """Comments blanked (newlines kept, so line numbers hold)."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def scan_mutators(root: Path) -> dict[str, tuple[str, int]]:
    """``mutator -> (file, line)`` of its first call under ``root`` (the frontend's GL entry
    points), comments ignored."""
    found: dict[str, tuple[str, int]] = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.suffix not in (".cpp", ".cc", ".h", ".hpp", ".inl"):
            continue
        text = _mask_comments(p.read_text(encoding="utf-8", errors="replace"))
        for m in _MUTATOR_CALL.finditer(text):
            found.setdefault(m.group(1), (p.relative_to(root.parent.parent).as_posix(),
                                          text.count("\n", 0, m.start()) + 1))
    return found


def gate_dirty_surface(ctx: Ctx) -> None:
    """DIRTY-SURFACE: one row per mutator; and where the tree holds the frontend's sources
    (``MG_Impl/GLImpl`` beside ``MG_Pipe``), every mutator they call has a row and every row
    names a mutator they still call."""
    rows = ctx.cat.rows("MGP_DIRTY_SURFACE_LIST")
    seen: dict[str, object] = {}
    for r in rows:
        if r.mutator.text in seen:
            ctx.err(r.mutator.loc, "DIRTY-SURFACE", f"mutator {r.mutator.text} has two rows, expected one")
        seen[r.mutator.text] = r
    root = ctx.cat.root.resolve().parent / DIRTY_SCAN_ROOT
    if not rows or not root.is_dir():
        return
    scanned = scan_mutators(root)
    for r in rows:
        if r.mutator.text not in scanned:
            ctx.err(r.mutator.loc, "DIRTY-SURFACE",
                    f"row names mutator {r.mutator.text}, which no pGLContext-> call under "
                    f"{DIRTY_SCAN_ROOT} makes any more, expected the row removed (or the mutator back)")
    for name, (path, line) in scanned.items():
        if name not in seen:
            ctx.err(Loc(path, line, 1), "DIRTY-SURFACE",
                    f"mutator {name} is called here and has no MGP_DIRTY_SURFACE_LIST row, expected "
                    f"X({name}, <what publishes it>) in DirtySurface.def")


GATES = (*GATES, ("dirty-surface", gate_dirty_surface))


def _one_bit(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def gate_subsystem_deps(ctx: Ctx) -> None:
    """SUBSYSTEM-DEPS: each row's family is one subsystem bit the headers define, named once;
    each required bit is one the headers define (``0`` for none), never the family itself."""
    values = {n: c.value for n, c in ctx.lay.constants.items()}  # an enumerator constant, or
    values |= {n: v.values[0] for n, v in ctx.lay.values.items() if len(v.values) == 1}  # constexpr
    seen: set[str] = set()
    for r in ctx.cat.rows("MGL_SUBSYSTEM_DEPENDENCY_LIST"):
        fam = r.family.text
        if fam not in values or not _one_bit(values[fam]):
            what = "is no constant the headers define" if fam not in values else f"is {values[fam]:#x}, not one bit"
            ctx.err(r.family.loc, "SUBSYSTEM-DEPS",
                    f"family {fam} {what}, expected exactly one kMGPipeSubsystem* bit")
        if fam in seen:
            ctx.err(r.family.loc, "SUBSYSTEM-DEPS", f"family {fam} has two rows, expected one")
        seen.add(fam)
        if r.requires.kind == "int":
            if int(r.requires.text) != 0:
                ctx.err(r.requires.loc, "SUBSYSTEM-DEPS",
                        f"{fam} requires {r.requires.text}, expected 0 or named subsystem bits")
            continue
        for part in r.requires.parts:
            if part not in values or not _one_bit(values[part]):
                ctx.err(r.requires.loc, "SUBSYSTEM-DEPS",
                        f"{fam} requires {part}, which is no one-bit constant the headers define, "
                        f"expected kMGPipeSubsystem* bits or 0")
            elif part == fam:
                ctx.err(r.requires.loc, "SUBSYSTEM-DEPS", f"{fam} requires itself, expected other bits")


def gate_fatal_families(ctx: Ctx) -> None:
    """FATAL-FAMILY: one row per family, and every row gives its reason."""
    seen: set[str] = set()
    for r in ctx.cat.rows("MGL_FATAL_FAMILY_LIST"):
        if r.family.text in seen:
            ctx.err(r.family.loc, "FATAL-FAMILY", f"family {r.family.text} has two rows, expected one")
        seen.add(r.family.text)
        if r.why.kind != "string" or not r.why.text.strip():
            ctx.err(r.why.loc, "FATAL-FAMILY", f"family {r.family.text} gives no reason, expected a string")


GATES = (*GATES, ("subsystem-deps", gate_subsystem_deps), ("fatal-families", gate_fatal_families))
