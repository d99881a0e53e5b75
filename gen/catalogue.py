"""Read the catalogue's .def files into typed rows (shape only; meaning is the gates').

Each .def list has a fixed shape: which list names a file holds, how many arguments an
entry takes and of which kind. A row that does not fit is a ``DEF-SHAPE`` error at its
own ``file:line:col``. Nothing here knows about layouts or cross-file consistency.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mgpipe.gen.defparse import DefArg, DefList, DefValue, parse_def_file
from mgpipe.gen.errors import ErrorCollector, GenError, decode_utf8, one_of
from mgpipe.gen.rows import (
    CallRow, ClassNameRow, CoverageRow, DeltaRow, DirtyRow, ExemptRow, FatalRow, FieldArgRow,
    FieldClassRow, FieldRow, FillRow, HandleRow, InputRow, Loc, LockRow, OwnershipRow, SetterRow,
    SizeRow, SpanRow, StickyRow, SubsystemRow, TailRow, Tok, VerbClassRow, VerbOpRow, VerbRow,
    VerifyRow, arity, columns, make_row, text_columns,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Catalogue:
    root: Path
    display_root: str
    files: dict[str, str]  # display path -> text (every input, headers included)
    calls: tuple[CallRow, ...]  # PipeCalls.def MGP_CALL_LIST
    lock: tuple[LockRow, ...]  # PipeCalls.lock MGP_CALL_LOCK (empty when absent; either shape)
    lock_path: str
    field_lists: dict[str, tuple[FieldRow, ...]]  # struct -> rows (PipeFields.def)
    field_list_locs: dict[str, Loc]
    sizes: tuple[SizeRow, ...]  # PayloadSizes.def
    pipe_inputs: tuple[InputRow, ...]  # PipeInputs.def
    coverage: tuple[CoverageRow, ...]  # Coverage.def
    ownership: tuple[OwnershipRow, ...]  # FieldOwnership.def
    verb_classes: tuple[VerbClassRow, ...]  # FillPoints.def MGP_VERB_CLASSES
    fill_points: tuple[FillRow, ...]  # FillPoints.def MGP_FILL_POINTS
    setters: tuple[SetterRow, ...]  # RenderStateSetters.def
    tails: tuple[TailRow, ...]  # Tails.def
    spans: tuple[SpanRow, ...]  # EsprytSpans.def
    handle_fields: tuple[HandleRow, ...]  # HandleFields.def
    #: "bundled" (the tree of ``catalogue/`` with ``include/``) or "mobilegl" (MobileGL's own
    #: ``MG_Pipe`` directory: headers beside the .def files, the real list names)
    shape: str = "bundled"
    #: every list of a mobilegl-shaped tree by its real name -> its typed rows
    lists: dict[str, tuple] = field(default_factory=dict)  # type: ignore[type-arg]
    #: object-like ``#define NAME VALUE`` of every file, by name (MGP_CALL_LIST_DOCUMENTED_COUNT)
    values: dict[str, DefValue] = field(default_factory=dict)

    def path_of(self, name: str) -> str:
        return display(self.root / name, self.root, self.display_root)

    def rows(self, list_name: str) -> tuple:  # type: ignore[type-arg]
        """The rows of a mobilegl-shaped list by its real name (empty when absent)."""
        return self.lists.get(list_name, ())


#: file -> {list name or prefix*: (param, row type)}; a list's arity is its row type's
Shape = tuple[str, type]
SHAPES: dict[str, dict[str, Shape]] = {
    "PipeCalls.def": {"MGP_CALL_LIST": ("X", CallRow)},
    "PipeFields.def": {"MGP_FIELDS_*": ("F", FieldRow)},
    "PayloadSizes.def": {"MGP_PAYLOAD_SIZES": ("S", SizeRow)},
    "PipeInputs.def": {"MGP_PIPE_INPUTS": ("X", InputRow)},
    "Coverage.def": {"MGP_COVERAGE": ("C", CoverageRow)},
    "FieldOwnership.def": {"MGP_FIELD_OWNERSHIP": ("O", OwnershipRow)},
    "FillPoints.def": {"MGP_VERB_CLASSES": ("V", VerbClassRow), "MGP_FILL_POINTS": ("F", FillRow)},
    "RenderStateSetters.def": {"MGP_RENDER_STATE_SETTERS": ("S", SetterRow)},
    "Tails.def": {"MGP_TAILS": ("T", TailRow)},
    "EsprytSpans.def": {"MGP_ESPRYT_SPANS": ("E", SpanRow)},
    "HandleFields.def": {"MGP_HANDLE_FIELDS": ("H", HandleRow)},
}
#: MobileGL's own MG_Pipe tree: every list by its real name, parameter and columns.
MOBILEGL_SHAPES: dict[str, dict[str, Shape]] = {
    "PipeCalls.def": {"MGP_CALL_LIST": ("X", CallRow)},
    "PipeFields.def": {"MGP_FIELDS_*": ("F", FieldRow), "MGP_VERIFY_PAYLOAD_LIST": ("P", VerifyRow)},
    "Coverage.def": {
        "MGP_COVERAGE_ACCESSOR_LIST": ("X", CoverageRow),
        "MGP_COVERAGE_STICKY_LIST": ("X", StickyRow),
        "MGP_COVERAGE_DELTA_LIST": ("X", DeltaRow),
        "MGP_COVERAGE_EMITTED_LIST": ("X", CoverageRow),
    },
    "FieldOwnership.def": {
        "MGP_FIELD_OWNERSHIP_LIST": ("X", FieldClassRow),
        "MGP_FIELD_OWNERSHIP_FORWARD_LIST": ("X", FieldClassRow),
        "MGP_FIELD_OWNERSHIP_ARG_LIST": ("X", FieldArgRow),
        "MGP_VERB_OP_LIST": ("X", VerbOpRow),
        "MGP_VERB_OP_EXEMPT_LIST": ("X", ExemptRow),
    },
    "FillPoints.def": {
        "MGP_FILL_VERB_LIST": ("X", VerbRow),
        "MGP_FILL_CLASS_LIST": ("X", ClassNameRow),
        "MGP_FILL_FIELD_LIST": ("X", FillRow),
    },
    "DirtySurface.def": {"MGP_DIRTY_SURFACE_LIST": ("X", DirtyRow)},
    "FatalFamilies.def": {"MGL_FATAL_FAMILY_LIST": ("X", FatalRow)},
    "SubsystemDeps.def": {"MGL_SUBSYSTEM_DEPENDENCY_LIST": ("X", SubsystemRow)},
}
#: What the runtime needs and MobileGL's tree does not state: mgpipe's own overlay lists,
#: read from a mobilegl-shaped tree when present (same shapes as the bundled catalogue's).
OVERLAY_SHAPES: dict[str, dict[str, Shape]] = {
    f: SHAPES[f] for f in ("Tails.def", "HandleFields.def", "RenderStateSetters.def", "EsprytSpans.def")
}
#: the list that holds the call count the catalogue documents (DOCUMENTED-COUNT)
DOCUMENTED_COUNT = "MGP_CALL_LIST_DOCUMENTED_COUNT"
LOCK_FILE = "PipeCalls.lock"
LOCK_SHAPES: dict[str, Shape] = {"MGP_CALL_LOCK": ("L", LockRow)}
#: lists that must hold at least one row (every other list may be empty)
NON_EMPTY = ("MGP_CALL_LIST",)


def root_name(root: Path) -> str:
    """The name a catalogue (or output) directory is shown by: its own directory name."""
    return Path(os.path.abspath(root)).name or "catalogue"


def display(path: Path, root: Path, shown_root: str | None = None) -> str:
    """``path`` spelt relative to the catalogue root ``root``: ``<root name>/<path inside>``.

    Never absolute and never relative to the current directory, so messages and output
    headers are the same bytes wherever the tool is run from.
    """
    name = shown_root if shown_root is not None else root_name(root)
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        rel = Path(path).name
    return name.rstrip("/") + "/" + rel


def _tok(arg: DefArg, path: str) -> Tok:
    parts = tuple(arg.parts) if arg.kind == "flags" else (str(arg.value),)
    return Tok(str(arg.value), parts, arg.kind, Loc(path, arg.line, arg.col), arg.text)


def _rows(lst: DefList, row_type: type, errors: ErrorCollector) -> tuple:  # type: ignore[type-arg]
    lo, hi = arity(row_type)
    rows = []
    for entry in lst.entries:
        if not lo <= len(entry.args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            text = next((a for a in entry.args if a.kind == "text"), None)
            hint = (f" ({text.text!r} is one argument: is a ',' missing?)"
                    if text is not None and len(entry.args) < lo else "")
            at = text if hint and text is not None else entry
            errors.error(
                lst.path,
                at.line,
                at.col,
                "DEF-SHAPE",
                f"{entry.macro}(...) in {lst.name} has {len(entry.args)} arguments{hint}, expected {want}",
            )
            continue
        free = text_columns(row_type)
        bad = [(c, a) for c, a in zip(columns(row_type), entry.args) if a.kind == "text" and c not in free]
        if bad:
            col, arg = bad[0]
            errors.error(lst.path, arg.line, arg.col, "DEF-SHAPE",
                         f"column {col} of {entry.macro}(...) in {lst.name} is {arg.text!r}, "
                         f"expected one identifier, A|B flags, a number or a string")
            continue
        toks = [_tok(a, lst.path) for a in entry.args]
        rows.append(make_row(row_type, toks, Loc(lst.path, entry.line, entry.col), entry.row))
    return tuple(rows)


def _match(name: str, patterns: dict[str, Shape]) -> Shape | None:
    for pat, shape in patterns.items():
        if pat.endswith("*") and name.startswith(pat[:-1]) or pat == name:
            return shape
    return None


def _load_file(
    root: Path,
    fname: str,
    display_root: str,
    errors: ErrorCollector,
    files: dict[str, str],
    required: bool = True,
    shapes: dict[str, Shape] | None = None,
    values: dict[str, DefValue] | None = None,
) -> dict[str, DefList]:
    path = root / fname
    shown = display(path, root, display_root)
    if not path.is_file():
        if required:
            errors.error(
                shown,
                1,
                1,
                "DEF-MISSING",
                f"catalogue file {fname} not found, expected it in {display_root}",
            )
        return {}
    try:
        text = decode_utf8(path.read_bytes(), shown, "DEF-ENCODING")
    except GenError as exc:
        errors.add(exc)
        return {}
    files[shown] = text
    parsed = errors.run(lambda: parse_def_file(text, shown))
    if parsed is None:
        return {}
    lists = parsed.lists
    if values is not None:
        for v in parsed.values:
            values.setdefault(v.name, v)
    shapes = shapes if shapes is not None else SHAPES.get(fname, LOCK_SHAPES)
    out: dict[str, DefList] = {}
    for lst in lists:
        shape = _match(lst.name, shapes)
        if shape is None:
            errors.error(
                shown,
                lst.line,
                lst.col,
                "DEF-SHAPE",
                f"unknown list {lst.name} in {fname}, expected {one_of(sorted(shapes), 'no list')}",
            )
            continue
        if lst.param != shape[0]:
            errors.error(
                shown,
                lst.line,
                lst.col,
                "DEF-SHAPE",
                f"list {lst.name} takes parameter {lst.param!r}, expected {shape[0]!r}",
            )
            continue
        if lst.name in out:
            errors.error(shown, lst.line, lst.col, "DEF-SHAPE", f"list {lst.name} is defined twice")
            continue
        out[lst.name] = lst
    absent = [pat for pat in shapes if not any(_match(n, {pat: shapes[pat]}) for n in out)]
    if len(absent) > 1 and len(absent) == len(shapes):  # none of its lists: one root cause
        empty = " (the file is empty)" if not text.strip() else ""
        errors.error(shown, 1, 1, "DEF-SHAPE", f"{fname} defines none of its lists{empty}, "
                                               f"expected {', '.join(absent)}")
        absent = []
    for pat in shapes:
        present = pat not in absent
        if not present:
            empty = " (the file is empty)" if not text.strip() else ""
            errors.error(shown, 1, 1, "DEF-SHAPE", f"{fname} defines no {pat} list{empty}, expected one")
        elif pat in NON_EMPTY and pat in out and not out[pat].entries:
            lst = out[pat]
            errors.error(shown, lst.line, lst.col, "DEF-SHAPE",
                         f"list {pat} in {fname} has no rows, expected at least one")
    return out


from .shape import is_mobilegl_tree  # noqa: E402  (the warm gen --check asks it too)


def _load_mobilegl(root: Path, shown_root: str, errors: ErrorCollector) -> Catalogue:
    files: dict[str, str] = {}
    values: dict[str, DefValue] = {}
    loaded: dict[str, dict[str, DefList]] = {}
    for fname, shapes in MOBILEGL_SHAPES.items():
        loaded[fname] = _load_file(root, fname, shown_root, errors, files, shapes=shapes, values=values)
    for fname, shapes in OVERLAY_SHAPES.items():
        loaded[fname] = _load_file(root, fname, shown_root, errors, files, required=False,
                                   shapes=shapes, values=values)
    lists: dict[str, tuple] = {}  # type: ignore[type-arg]
    field_lists: dict[str, tuple[FieldRow, ...]] = {}
    field_locs: dict[str, Loc] = {}
    for fname, by_name in loaded.items():
        shapes = {**MOBILEGL_SHAPES, **OVERLAY_SHAPES}[fname]
        for name, lst in by_name.items():
            shape = _match(name, shapes)
            assert shape is not None
            rows = _rows(lst, shape[1], errors)
            if name.startswith("MGP_FIELDS_"):
                field_lists[name[len("MGP_FIELDS_"):]] = rows
                field_locs[name[len("MGP_FIELDS_"):]] = Loc(lst.path, lst.line, lst.col)
            else:
                lists[name] = rows
    lock_lists = _load_file(root, LOCK_FILE, shown_root, errors, files, required=False)
    lock_rows: tuple[LockRow, ...] = ()
    if "MGP_CALL_LOCK" in lock_lists:
        lock_rows = _rows(lock_lists["MGP_CALL_LOCK"], LockRow, errors)
    if DOCUMENTED_COUNT not in values and "PipeCalls.def" in loaded and loaded["PipeCalls.def"]:
        errors.error(display(root / "PipeCalls.def", root, shown_root), 1, 1, "DOCUMENTED-COUNT",
                     f"PipeCalls.def defines no {DOCUMENTED_COUNT}, expected "
                     f"'#define {DOCUMENTED_COUNT} <rows>' beside MGP_CALL_LIST")
    get = lists.get
    return Catalogue(
        root=root, display_root=shown_root, files=files,
        calls=get("MGP_CALL_LIST", ()), lock=lock_rows, lock_path=display(root / LOCK_FILE, root, shown_root),
        field_lists=field_lists, field_list_locs=field_locs, sizes=(), pipe_inputs=(),
        coverage=get("MGP_COVERAGE_ACCESSOR_LIST", ()), ownership=(), verb_classes=(),
        fill_points=get("MGP_FILL_FIELD_LIST", ()), setters=get("MGP_RENDER_STATE_SETTERS", ()),
        tails=get("MGP_TAILS", ()), spans=get("MGP_ESPRYT_SPANS", ()),
        handle_fields=get("MGP_HANDLE_FIELDS", ()), shape="mobilegl", lists=lists, values=values,
    )


def load_catalogue(root: Path, display_root: str | None = None,
                   errors: ErrorCollector | None = None) -> Catalogue:
    """Parse every .def file under ``root``; raise GenError(s) for any syntax/shape fault.

    With ``errors`` given, faults are recorded there instead and the catalogue comes back
    holding every well-shaped row that could be read (a missing or unparsable file reads
    as empty), so that the gates can count what follows from the root cause.
    """
    shown_root = display_root if display_root is not None else root_name(root)
    collect = errors is not None
    errors = errors if errors is not None else ErrorCollector()
    if is_mobilegl_tree(root):
        cat = _load_mobilegl(Path(root), shown_root, errors)
        if not collect:
            errors.raise_if_any()
        return cat
    files: dict[str, str] = {}
    loaded = {f: _load_file(root, f, shown_root, errors, files) for f in SHAPES}
    lock_lists = _load_file(root, LOCK_FILE, shown_root, errors, files, required=False)

    def rows(fname: str, lname: str) -> tuple:  # type: ignore[type-arg]
        lst = loaded[fname].get(lname)
        if lst is None:
            return ()
        return _rows(lst, SHAPES[fname][lname][1], errors)

    field_lists: dict[str, tuple[FieldRow, ...]] = {}
    field_locs: dict[str, Loc] = {}
    for name, lst in loaded["PipeFields.def"].items():
        struct = name[len("MGP_FIELDS_") :]
        field_lists[struct] = _rows(lst, FieldRow, errors)
        field_locs[struct] = Loc(lst.path, lst.line, lst.col)
    lock_rows: tuple[LockRow, ...] = ()
    if "MGP_CALL_LOCK" in lock_lists:
        lock_rows = _rows(lock_lists["MGP_CALL_LOCK"], LockRow, errors)
    cat = Catalogue(
        root=root,
        display_root=shown_root,
        files=files,
        calls=rows("PipeCalls.def", "MGP_CALL_LIST"),
        lock=lock_rows,
        lock_path=display(root / LOCK_FILE, root, shown_root),
        field_lists=field_lists,
        field_list_locs=field_locs,
        sizes=rows("PayloadSizes.def", "MGP_PAYLOAD_SIZES"),
        pipe_inputs=rows("PipeInputs.def", "MGP_PIPE_INPUTS"),
        coverage=rows("Coverage.def", "MGP_COVERAGE"),
        ownership=rows("FieldOwnership.def", "MGP_FIELD_OWNERSHIP"),
        verb_classes=rows("FillPoints.def", "MGP_VERB_CLASSES"),
        fill_points=rows("FillPoints.def", "MGP_FILL_POINTS"),
        setters=rows("RenderStateSetters.def", "MGP_RENDER_STATE_SETTERS"),
        tails=rows("Tails.def", "MGP_TAILS"),
        spans=rows("EsprytSpans.def", "MGP_ESPRYT_SPANS"),
        handle_fields=rows("HandleFields.def", "MGP_HANDLE_FIELDS"),
    )
    if not collect:
        errors.raise_if_any()
    return cat


__all__ = ["Catalogue", "DOCUMENTED_COUNT", "LOCK_FILE", "Loc", "MOBILEGL_SHAPES", "OVERLAY_SHAPES",
           "Tok", "display", "is_mobilegl_tree", "load_catalogue", "root_name"]
