"""Parse once, validate once: catalogue + headers -> gates -> the frozen Model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import xxhash

from mgpipe.gen.errors import ErrorCollector, GenError, GenErrors
from mgpipe.gen.catalogue import LOCK_FILE, Catalogue, load_catalogue, root_name
from mgpipe.gen.gates import GATES, missing_vocabulary, INPUTS_STRUCT, RS_STRUCT, Ctx, holds
from mgpipe.gen.layout import read_headers
from mgpipe.gen.layout_model import Layouts
from mgpipe.gen.lock import LockPolicy
from mgpipe.gen.layout_model import Struct as LStruct
from mgpipe.gen.model import (
    Call, Enum, FieldList, HandleField, InputFile, Member, Model, PipeInput, RenderState, Span, Struct, Tail,
)
from mgpipe.gen.gates import SCALAR_TAILS
from mgpipe.gen.rsgates import check_render_state


@dataclass(frozen=True)
class Built:
    model: Model
    catalogue: Catalogue
    layouts: Layouts
    lock_text: str  # the PipeCalls.lock the catalogue should hold after this generation


def fingerprint(data: bytes) -> str:
    return xxhash.xxh64(data).hexdigest()


def ordered_structs(lay: Layouts) -> list[LStruct]:
    """Structs in a stable order where every member type precedes its user.

    Declaration position (header, line) breaks ties, so the order is the same whether the
    layouts came from libclang or from the cache.
    """
    by_pos = sorted(lay.structs.values(), key=lambda s: (s.path, s.line, s.col, s.name))
    out: list[LStruct] = []
    done: set[str] = set()

    def visit(s: LStruct) -> None:
        if s.name in done:
            return
        done.add(s.name)
        for m in s.members:
            if m.struct in lay.structs:
                visit(lay.structs[m.struct])
        out.append(s)

    for s in by_pos:
        visit(s)
    return out


def _float_inside(lay: Layouts, struct: str | None, depth: int = 0) -> bool:
    s = lay.structs.get(struct or "")
    if s is None or depth > 8:
        return False
    return any(m.scalar in ("f32", "f64") or _float_inside(lay, m.struct, depth + 1) for m in s.members)


def _struct(lay: Layouts, s: LStruct, pins: dict[str, int],
            classes: dict[str, dict[str, str | None]]) -> Struct:
    """``classes``: struct -> member -> render-state class (the block and its split types)."""
    members = tuple(
        Member(name=m.name, offset=m.offset, size=m.size, type=m.type, scalar=m.scalar,
               struct=m.struct, count=m.count, elem_size=m.elem_size,
               is_float=m.scalar in ("f32", "f64") or _float_inside(lay, m.struct),
               cls=classes.get(s.name, {}).get(m.name))
        for m in s.members
    )
    return Struct(name=s.name, size=s.size, align=s.align, header=s.path, members=members,
                  pinned_size=pins.get(s.name), has_blob_ref=holds(lay, s.name, "MGPBlobRef"))


#: G1 splits the calls by scope: kScreen rows form MGPipeScreen, every other class
#: MGPipeContext (seed 001 §1.2).
SCREEN_CLASS, SCREEN_TABLE, CONTEXT_TABLE = "kScreen", "MGPipeScreen", "MGPipeContext"


def _tails(cat: Catalogue, lay: Layouts) -> tuple[Tail, ...]:
    enumerators = {e.name: e.value for en in lay.enums.values() for e in en.enumerators}
    sizes = {"i32": 4, "u32": 4}
    out = []
    for r in cat.tails:
        call, elem, count, bound = r.call.text, r.element.text, r.count.text, r.bound.text
        cfield, cbit, when = r.cond_field.text, r.cond_bit.text, r.when.text
        scalar = SCALAR_TAILS.get(elem)
        out.append(Tail(
            call=call, element=elem,
            elem_size=sizes[scalar] if scalar else lay.structs[elem].size, scalar=scalar,
            count_field=None if r.count.kind == "int" else count,
            bound=None if bound == "-" else bound,
            bound_value=None if bound == "-" else lay.constants[bound].value,
            cond_field=None if when == "kAlways" else cfield,
            cond_bit=None if when == "kAlways" else cbit,
            cond_value=0 if when == "kAlways" else enumerators[cbit], when=when,
        ))
    return tuple(out)


#: a lock line that records an ABI re-base (:mod:`mgpipe.gen.lockhistory`); gen keeps it
REBASE_MARK = "// ABI-REBASE:"


def lock_text(cat: Catalogue) -> str:
    """The append-only name -> opcode lock: existing pins kept, new rows appended, and the
    lock's ABI re-base markers (``// ABI-REBASE: ...``) kept where the header ends."""
    rows = [(r.name.text, int(r.opcode.text)) for r in cat.lock]
    marks = [line.strip() for line in cat.files.get(cat.lock_path, "").splitlines()
             if line.strip().startswith(REBASE_MARK)]
    known = {n for n, _ in rows}
    for i, r in enumerate(cat.calls):
        if r.name.text not in known:
            rows.append((r.name.text, i + 1))
    width = max((len(n) for n, _ in rows), default=0) + 1
    body = " \\\n".join(f"    L({n + ',':<{width}} {op})" for n, op in rows)
    return (
        "// PipeCalls.lock -- name -> opcode, written by `mgpipe gen`, only ever appended to.\n"
        "// A call whose row moves or disappears from PipeCalls.def refuses the generation\n"
        "// (APPEND-ONLY): the opcode is the row, and the wire never renumbers.\n"
        + "".join(m + "\n" for m in marks)
        + "#define MGP_CALL_LOCK(L) \\\n" + body + "\n"
    )


def _read_layouts(catalogue_dir: Path, shown_root: str, roots: ErrorCollector,
                  use_cache: bool) -> Layouts:
    """The headers' layouts; a missing include/ or a header that does not compile is a
    root cause (recorded in ``roots``) and reads as no layouts at all."""
    include = catalogue_dir / "include"
    if not include.is_dir() or not any(include.glob("*.h")):
        what = "not found" if not include.is_dir() else "holds no *.h header"
        roots.error(f"{shown_root}/include", 1, 1, "HEADER-MISSING",
                    f"the catalogue's include/ directory {what}, expected the C++ headers "
                    f"that declare every payload struct and enum")
        return Layouts()
    try:
        lay = read_headers(include, display_root=catalogue_dir.parent, use_cache=use_cache)
    except (GenError, GenErrors) as exc:
        roots.add(exc)
        return Layouts()
    missing = missing_vocabulary(lay)
    if missing:
        roots.error(f"{shown_root}/include", 1, 1, "HEADER-VOCABULARY",
                    f"the headers declare no {', no '.join(missing)}, expected every declaration "
                    f"the catalogue's rows are read against")
    return lay


def _gate(fn, ctx: Ctx, after_root: bool) -> object:  # type: ignore[no-untyped-def]
    """Run one gate. After a root cause the inputs may be partial; a gate that cannot run
    on them has nothing to add to the root cause, so its failure is not reported."""
    if not after_root:
        return fn(ctx)
    try:
        return fn(ctx)
    except Exception:  # noqa: BLE001 - only ever after a root cause, which is reported
        return None


def require_catalogue(catalogue_dir: Path) -> Path:
    """``catalogue_dir`` if it is a directory, else the one refusal that names the cause."""
    catalogue_dir = Path(catalogue_dir)
    if not catalogue_dir.is_dir():
        what = "is a file" if catalogue_dir.exists() else "not found"
        raise GenError(str(catalogue_dir), 1, 1, "CATALOGUE-MISSING",
                       f"catalogue directory {what}, expected a directory holding PipeCalls.def "
                       f"and include/")
    return catalogue_dir


#: the shared gates that hold on MobileGL's tree as on the bundled catalogue (the bundled
#: catalogue's own lists - PayloadSizes.def, PipeInputs.def, ... - have no rows there)
SHARED_GATES = ("wire-pod", "names", "call-tokens", "flag-values", "wait-class", "blob-ref",
                "tails", "spans", "handle-fields")


#: the lock's gates, on a MobileGL-shaped tree that carries a lock (or owes one)
LOCK_GATES = ("append-only", "lock")
#: mgpipe's own overlay header: a MobileGL-shaped tree carrying it is mgpipe's (the bundled
#: ``catalogue/MG_Pipe`` and its copies), whose opcodes are mgpipe's to keep
OVERLAY_HEADER = "MGPipeOverlay.h"


def lock_required(cat: Catalogue) -> bool:
    """Whether the tree is held to a ``PipeCalls.lock``: always in the original shape; in a
    MobileGL-shaped tree when it carries one or carries mgpipe's overlay (MobileGL's own
    tree, which states no lock, is held to none)."""
    if cat.shape != "mobilegl":
        return True
    return (cat.root / LOCK_FILE).is_file() or (cat.root / OVERLAY_HEADER).is_file()


def _wire_only(lay: Layouts, names: list[str]) -> Layouts:
    """The layouts with only the wire structs (the rest of the project's headers - the verb
    table, helper types - are read, not gated as wire types)."""
    return Layouts({n: lay.structs[n] for n in names}, lay.enums, lay.constants, lay.headers,
                   lay.fingerprint, lay.pins, lay.values, lay.output_errors)


def _build_mobilegl(cat: Catalogue, roots: ErrorCollector, include_dirs: tuple[Path, ...],
                    use_cache: bool, disabled: frozenset[str], lock: LockPolicy | None = None) -> Built:
    from mgpipe.gen import build_mobilegl as real
    from mgpipe.gen import ownership, realgates
    from mgpipe.gen.vocabulary import MOBILEGL

    vocab = MOBILEGL
    lay = real.read_layouts(cat, include_dirs, cat.root.parent, roots, use_cache, vocab)
    # the vocabulary the rows are read against; with mgpipe's overlay, its record header too
    overlay = ("MGPWireRecHeader",) if (cat.root / OVERLAY_HEADER).is_file() else ()
    missing = [f"enum {n}" for n in (vocab.class_enum, vocab.flag_enum, vocab.wait_enum)
               if n not in lay.enums] + [f"struct {n}" for n in (vocab.rs_struct, vocab.handle_struct,
                                                                  vocab.blob_struct, *overlay)
                                         if n not in lay.structs]
    if lay.structs and missing:
        roots.error(f"{cat.display_root}/PipeCalls.def", 1, 1, "HEADER-VOCABULARY",
                    f"the headers declare no {', no '.join(missing)}, expected every declaration "
                    f"the catalogue's rows are read against")
    after_root = bool(roots)
    wire = _wire_only(lay, real.wire_structs(cat, lay, vocab))
    locked = lock_required(cat)
    ctx = Ctx(cat, wire, disabled=disabled, vocab=vocab, lock=lock if locked else None)
    shared = dict(GATES)
    overlay = {"tails": "Tails.def", "spans": "EsprytSpans.def", "handle-fields": "HandleFields.def"}
    for name in SHARED_GATES:
        if name in overlay and cat.path_of(overlay[name]) not in cat.files:
            continue  # an overlay list the tree does not carry: nothing to check
        if name not in disabled:
            _gate(shared[name], ctx, after_root)
    for name in LOCK_GATES if locked else ():  # a tree that carries (or owes) a PipeCalls.lock
        if name not in disabled:
            _gate(shared[name], ctx, after_root)
    ctx_all = Ctx(cat, lay, errors=ctx.errors, disabled=disabled, vocab=vocab)
    for name, gate in realgates.GATES:
        if name not in disabled:
            _gate(gate, ctx_all, after_root)
    own = {}
    if "ownership" not in disabled:
        own = _gate(lambda c: ownership.derive(cat, vocab, real.refused_fields(include_dirs), c.errors),
                    ctx, after_root) or {}
    if "verb-stamps" not in disabled:
        _gate(lambda c: ownership.gate_verb_stamps(cat, vocab, c.errors), ctx, after_root)
    table, why = real.chunk_table(lay, vocab)
    if why is not None and lay.structs:
        rs = lay.structs.get(vocab.rs_struct)
        where = (rs.path, rs.line, rs.col) if rs else (f"{cat.display_root}/PipeCalls.def", 1, 1)
        ctx.errors.error(*where, "CHUNK-TABLE",
                         f"{why}, expected the render-state chunk table the headers define "
                         f"({vocab.chunk_boundaries} and {vocab.chunk_is_pipeline})")
    setters: tuple = ()
    if cat.setters and "render-state" not in disabled and vocab.rs_struct in lay.structs and why is None:
        from mgpipe.gen.rsgates import check_setters

        setters = _gate(lambda c: check_setters(c, *real.setter_classes(lay, vocab)), ctx_all,
                        after_root) or ()
    if after_root:
        raise GenErrors(roots.errors, follow_on=[*roots.follow_on, *ctx.errors.errors])
    ctx.errors.raise_if_any()
    inputs = _inputs(cat)
    fp = lambda ins: fingerprint("".join(f"{f.path}\0{f.fingerprint}\n" for f in ins).encode())  # noqa: E731
    classes = {}
    model = real.model_of(cat, lay, vocab, lambda s, pins: _struct(lay, s, pins, classes),
                          {a: own.get(a, ("", "-", "")) for a in real.accessors(cat)}, inputs, fp)
    abi = _abi(model)
    model = model.model_copy(update={"names": _names(vocab), "abi_fingerprint": abi,
                                     "catalogue_fingerprint": abi, "setters": setters,
                                     "tails": _tails(cat, wire) if cat.tails else ()})
    init = lock is not None and lock.init_lock
    return Built(model, cat, lay, lock_text(cat) if locked or init else "")


def _abi(model: Model) -> str:
    from mgpipe.gen.identity import abi_fingerprint

    return abi_fingerprint(model.calls, model.structs, model.render_state.chunks)


def _names(vocab) -> tuple[tuple[str, str], ...]:  # type: ignore[no-untyped-def]
    from dataclasses import asdict

    return tuple((k, v) for k, v in asdict(vocab).items() if isinstance(v, str))


#: how outputs spell the catalogue's root: a fixed word per shape, never the directory's own
#: name, so a catalogue renamed or copied elsewhere generates the same bytes
OUTPUT_LABEL = {"bundled": "catalogue", "mobilegl": "MG_Pipe"}


def _inputs(cat: Catalogue) -> tuple[InputFile, ...]:
    """Every input file of the catalogue with its fingerprint, spelt from the catalogue root
    as :data:`OUTPUT_LABEL` names it."""
    inputs = []
    prefix = cat.display_root + "/"
    label = OUTPUT_LABEL[cat.shape] + "/"
    for shown, text in sorted(cat.files.items()):
        if shown == cat.lock_path:
            continue
        name = shown.removeprefix(prefix)
        inputs.append(InputFile(path=label + name, name=name, fingerprint=fingerprint(text.encode())))
    headers = (sorted(cat.root.glob("*.h")) if cat.shape == "mobilegl"
               else sorted((cat.root / "include").glob("*.h")))
    for p in headers:
        rel = p.relative_to(cat.root).as_posix()
        inputs.append(InputFile(path=label + rel, name=rel, fingerprint=fingerprint(p.read_bytes())))
    inputs.sort(key=lambda f: f.path)
    return tuple(inputs)


def build(catalogue_dir: Path, disabled: frozenset[str] = frozenset(), use_cache: bool = True,
          lock: LockPolicy | None = None, include_dirs: tuple[Path, ...] | None = None) -> Built:
    """Load, gate and model the catalogue at ``catalogue_dir``; raise GenError(s) on refusal.

    A fault in reading the inputs (a missing/unparsable/misshapen file, a header that does
    not compile) is a root cause: the gates still run on what could be read, and their
    errors travel as follow-on errors of the refusal (counted, not printed). ``lock``
    (generating only) checks PipeCalls.lock against the opcodes already in the output dir.
    """
    catalogue_dir = require_catalogue(catalogue_dir)
    shown_root = root_name(catalogue_dir)
    roots = ErrorCollector()
    cat = load_catalogue(catalogue_dir, shown_root, errors=roots)
    if cat.shape == "mobilegl":
        dirs = include_dirs if include_dirs is not None else (catalogue_dir.resolve().parent,)
        return _build_mobilegl(cat, roots, tuple(dirs), use_cache, disabled, lock)
    lay = _read_layouts(catalogue_dir, shown_root, roots, use_cache)
    after_root = bool(roots)
    ctx = Ctx(cat, lay, disabled=disabled, lock=lock)
    for name, gate in GATES:
        if name not in disabled:
            _gate(gate, ctx, after_root)
    if "render-state" in disabled:  # the model still needs the chunk table; its verdicts go unheard
        rs = _gate(check_render_state, Ctx(cat, lay, disabled=disabled), True)
    else:
        rs = _gate(check_render_state, ctx, after_root)
    if after_root:
        raise GenErrors(roots.errors, follow_on=[*roots.follow_on, *ctx.errors.errors])
    ctx.errors.raise_if_any()
    if rs is None:
        raise GenError(cat.path_of("PipeFields.def"), 1, 1, "RS-CLASS",
                       f"the render-state gate is disabled and {RS_STRUCT} cannot be modelled "
                       f"without it, expected the gate enabled")
    from mgpipe.gen.vocabulary import BUNDLED

    model = _model(cat, lay, rs)
    abi = _abi(model)
    model = model.model_copy(update={"names": _names(BUNDLED), "abi_fingerprint": abi,
                                     "catalogue_fingerprint": abi})
    return Built(model, cat, lay, lock_text(cat))


def _model(cat: Catalogue, lay: Layouts, rs) -> Model:  # type: ignore[no-untyped-def]
    pins = {r.struct.text: int(r.size.text) for r in cat.sizes}
    flag_bits = lay.enums["MGPipeCallFlag"].values()
    vclass = {r.call.text: r.cls.text for r in cat.verb_classes}
    calls = tuple(
        Call(opcode=i + 1, name=r.name.text, payload=r.payload.text, cls=r.cls.text,
             flags=tuple(p for p in r.flags.parts if p != "kNone"),
             flag_bits=sum(flag_bits[p] for p in r.flags.parts), wait_class=r.wait.text,
             validate_class=vclass.get(r.name.text), payload_size=lay.structs[r.payload.text].size,
             table=SCREEN_TABLE if r.cls.text == SCREEN_CLASS else CONTEXT_TABLE)
        for i, r in enumerate(cat.calls)
    )
    split_types = {m.struct for m in lay.structs[RS_STRUCT].members
                   if rs.member_classes.get(m.name) == "kSplit" and m.struct}
    classes = {RS_STRUCT: rs.member_classes, **{t: rs.sub_classes for t in split_types}}
    structs = tuple(_struct(lay, s, pins, classes) for s in ordered_structs(lay))
    rs_struct = next(s for s in structs if s.name == RS_STRUCT)
    offs = {m.name: m.offset for m in rs_struct.members}
    owner = {r.field.text: r.ownership.text for r in cat.ownership}
    cover = {r.accessor.text: r.call.text for r in cat.coverage}
    fill: dict[str, list[str]] = {c: [] for c in lay.enums["MGPipeValidateClass"].values()}
    for r in cat.fill_points:
        fill[r.cls.text].append(r.field.text)
    inputs_struct = lay.structs[INPUTS_STRUCT]
    ftype = {m.name: m.type for m in inputs_struct.members}
    pipe_inputs = tuple(
        PipeInput(id=i, accessor=r.accessor.text, field=r.field.text, lifetime=r.lifetime.text,
                  ownership=owner[r.field.text], call=cover[r.accessor.text],
                  type=ftype[r.field.text],
                  fill_classes=tuple(c for c, fs in fill.items() if r.field.text in fs))
        for i, r in enumerate(cat.pipe_inputs)
    )
    inputs = list(_inputs(cat))
    calls_path = cat.path_of("PipeCalls.def")
    all_fp = fingerprint("".join(f"{f.path}\0{f.fingerprint}\n" for f in inputs).encode())
    return Model(
        catalogue_fingerprint=fingerprint(cat.files[calls_path].encode()),
        input_fingerprint=all_fp,
        inputs=tuple(inputs),
        calls=calls,
        structs=structs,
        **declared_tables(lay, cat),
        render_state=RenderState(
            struct=RS_STRUCT, size=rs_struct.size, members=rs_struct.members,
            sub_members=rs.sub_members, chunks=rs.chunks,
            spans=tuple(Span(constant=r.constant.text, member=r.member.text, offset=offs[r.member.text])
                        for r in cat.spans),
            pipeline_members=tuple(m for m, c in rs.member_classes.items() if c in ("kPipeline", "kSplit")),
        ),
        setters=rs.setters,
        tails=_tails(cat, lay),
        handle_fields=tuple(HandleField(call=r.call.text, field=r.field.text, kind=r.kind.text,
                                        nullable=r.null.text == "kNullable")
                            for r in cat.handle_fields),
        pipe_inputs=pipe_inputs,
        validate_classes=tuple(lay.enums["MGPipeValidateClass"].values()),
        ownership_classes=tuple(lay.enums["MGPipeFieldOwnership"].values()),
        fill_points=tuple((c, tuple(fs)) for c, fs in fill.items()),
    )



def declared_tables(lay, cat) -> dict:  # type: ignore[no-untyped-def]
    """The model's enums, constants and field lists, as the headers and PipeFields.def declare
    them (in declaration order), for a tree of either shape."""
    return dict(
        enums=tuple(Enum(name=e.name, values=tuple((x.name, x.value) for x in e.enumerators))
                    for e in sorted(lay.enums.values(), key=lambda e: (e.path, e.line, e.name))),
        constants=tuple((c.name, c.value) for c in
                        sorted(lay.constants.values(), key=lambda c: (c.path, c.line, c.name))),
        field_lists=tuple(FieldList(struct=s, fields=tuple(r.member.text for r in rows))
                          for s, rows in cat.field_lists.items()),
    )  # fmt: skip

__all__ = ["Built", "build", "require_catalogue", "fingerprint", "lock_required", "lock_text", "LOCK_FILE", "LOCK_GATES"]
