"""MobileGL's own ``MG_Pipe`` tree -> the one :class:`~mgpipe.gen.model.Model`.

The tree keeps its headers beside the .def files and includes headers from outside the
directory (``<Includes.h>``, ``MG_Util/Types.h``, ``MG_Backend/BackendObject.h``), found on
the include path (``-I``; default: the catalogue's parent). What the tree states is read,
never typed again here:

* sizes from the headers' own pins (``MGP_ASSERT_POD(T, N)``, ``static_assert(sizeof(T) ==
  N)``), layouts from libclang;
* the render-state chunk table from ``kMGPipeRenderStateChunkBoundaries`` and
  ``MGPipeRenderStateChunkIsPipeline`` (MGPipeRenderStateSpans.h), both evaluated by the
  compiler; each member's class follows from the chunks its bytes fall in;
* the PipeInputs fields from Coverage.def (the accessor list, first-seen order), their
  lifetimes from the sticky list, their fill classes from FillPoints.def, their ownership
  from FieldOwnership.def with RECORD_SUPPLIED derived (:mod:`mgpipe.gen.ownership`);
* a call's validate class through its stamp row (MGP_VERB_OP_LIST: call -> verb ->
  class).

What the runtime needs and the tree does not state (tails, handle fields, setters, Espryt
spans) comes from mgpipe's overlay lists when the tree carries them, else is empty.
"""

from __future__ import annotations

import re
from pathlib import Path

from mgpipe.gen.build import declared_tables
from mgpipe.gen.catalogue import Catalogue
from mgpipe.gen.errors import ErrorCollector, GenError, GenErrors
from mgpipe.gen.layout import Options, read_headers
from mgpipe.gen.layout_model import Layouts
from mgpipe.gen.model import (
    Call, Chunk, HandleField, InputFile, Member, Model, Named, PipeInput,
    RenderState, Span, Struct, SubMember, Verb,
)  # fmt: skip
from mgpipe.gen.vocabulary import MOBILEGL, Vocabulary

PIPELINE, DYNAMIC, SPLIT = "kPipeline", "kDynamic", "kSplit"
#: the frontend's file whose EmittedCallSuppliesTheWholeField refuses emitted fields
PIPE_FILL = "MG_Impl/Pipe/PipeFill.cpp"


def headers_of(catalogue_dir: Path) -> list[str]:
    """The headers beside the .def files, sorted by name (the translation unit's order)."""
    return sorted(p.name for p in catalogue_dir.glob("*.h") if p.is_file())


def wanted_structs(cat: Catalogue, vocab: Vocabulary) -> frozenset[str]:
    """Struct names the rows need that may live outside the directory (field lists name
    MG_Backend's DynamicBackendParameters; the verb table is GLFunctionsTable)."""
    names = set(cat.field_lists)
    names |= {r.struct.text for r in cat.rows("MGP_VERIFY_PAYLOAD_LIST")}
    if vocab.verb_table_struct:
        names.add(vocab.verb_table_struct)
    return frozenset(names)


def read_layouts(cat: Catalogue, include_dirs: tuple[Path, ...], display_root: Path,
                 roots: ErrorCollector, use_cache: bool, vocab: Vocabulary = MOBILEGL) -> Layouts:
    """The tree's layouts, pins and constexpr values; a header that does not compile is a
    root cause (recorded in ``roots``) and reads as no layouts."""
    root = cat.root
    headers = headers_of(root)
    if not headers:
        roots.error(f"{cat.display_root}/PipeCalls.def", 1, 1, "HEADER-MISSING",
                    f"{cat.display_root} holds no *.h header beside its .def files, expected the "
                    f"C++ headers that declare every payload struct and enum")
        return Layouts()
    opts = Options(include_dirs=include_dirs, std=vocab.std, wanted=wanted_structs(cat, vocab),
                   pin_macros=vocab.pin_macros)
    try:
        lay = read_headers(root, headers, display_root=display_root, use_cache=use_cache, options=opts)
        if vocab.chunk_is_pipeline and vocab.chunk_boundaries in lay.values:
            n = len(lay.values[vocab.chunk_boundaries].values) - 1
            probes = tuple((f"chunk_is_pipeline_{i}", f"{_qualified(vocab)}({i})") for i in range(n))
            opts = Options(include_dirs=include_dirs, std=vocab.std, wanted=opts.wanted,
                           pin_macros=vocab.pin_macros, probes=probes)
            lay = read_headers(root, headers, display_root=display_root, use_cache=use_cache,
                               options=opts)
    except (GenError, GenErrors) as exc:
        roots.add(exc)
        return Layouts()
    for path, line, col, text in lay.output_errors[:1]:
        roots.error(path, line, col, "HEADER-COMPILE",
                    f"{text} (in a previous output the headers include: it no longer fits the "
                    f"catalogue; the gates below say why)")
    return lay


def _qualified(vocab: Vocabulary) -> str:
    # the headers declare it in MobileGL::MG_Pipe; the probe names it from outside
    return f"::MobileGL::MG_Pipe::{vocab.chunk_is_pipeline}"


def wire_structs(cat: Catalogue, lay: Layouts, vocab: Vocabulary) -> list[str]:
    """Every struct a record can carry: the payloads, the field-listed structs and every
    struct nested in them (closure), in a stable order; the verb table is not one."""
    start = [r.payload.text for r in cat.calls]
    start += [r.struct.text for r in cat.rows("MGP_VERIFY_PAYLOAD_LIST")]
    start += list(cat.field_lists)
    start += [vocab.rs_struct, vocab.handle_struct, "MGPWireRecHeader"]  # the header: an overlay's
    seen: list[str] = []
    todo = [s for s in start if s in lay.structs]
    while todo:
        name = todo.pop(0)
        if name in seen or name == vocab.verb_table_struct:
            continue
        seen.append(name)
        todo += [m.struct for m in lay.structs[name].members if m.struct in lay.structs]
    return seen


#: mgpipe's overlay header (its name as gen/build.py's OVERLAY_HEADER spells it)
_OVERLAY = "MGPipeOverlay.h"


def transport_structs(lay: Layouts, wire: list[str]) -> list[str]:
    """The overlay's structs no record carries: mgpipe's reverse-channel layouts (reply slot,
    event ring), in declaration order; the tables hold them beside the wire structs."""
    return _ordered(lay, [n for n, s in lay.structs.items()
                          if Path(s.path).name == _OVERLAY and n not in wire])


def _ordered(lay: Layouts, names: list[str]) -> list[str]:
    """``names`` with every member type before its user, declaration position breaking ties."""
    wanted = set(names)
    by_pos = sorted((lay.structs[n] for n in names), key=lambda s: (s.path, s.line, s.col, s.name))
    out: list[str] = []

    def visit(n: str) -> None:
        if n in out or n not in wanted:
            return
        out.append("")  # reserve against cycles
        out.pop()
        for m in lay.structs[n].members:
            if m.struct and m.struct != n:
                visit(m.struct)
        if n not in out:
            out.append(n)

    for s in by_pos:
        visit(s.name)
    return out


def chunk_table(lay: Layouts, vocab: Vocabulary) -> tuple[list[tuple[int, int, str]], str | None]:
    """``[(offset, length, class)]`` from the header's boundaries, or ([], why not)."""
    b = lay.values.get(vocab.chunk_boundaries or "")
    if b is None:
        return [], f"the headers define no {vocab.chunk_boundaries}"
    out = []
    for i in range(len(b.values) - 1):
        probe = lay.values.get(f"chunk_is_pipeline_{i}")
        if probe is None:
            return [], f"{vocab.chunk_is_pipeline}({i}) could not be evaluated"
        out.append((b.values[i], b.values[i + 1] - b.values[i], PIPELINE if probe.values[0] else DYNAMIC))
    return out, None


def _classes_of(begin: int, end: int, chunks: list[tuple[int, int, str]]) -> set[str]:
    return {c for off, n, c in chunks if off < end and begin < off + n}


def setter_classes(lay: Layouts, vocab: Vocabulary):  # type: ignore[no-untyped-def]
    """The render-state classes the setter gate reads (``ClassRow`` per member, and per
    sub-member name of a split member), derived from the chunk table instead of a
    PipeFields.def class column: a member (or sub-member, over every element) is the set of
    chunk classes its bytes fall in."""
    from mgpipe.gen.catalogue import Loc
    from mgpipe.gen.chunks import ClassRow

    rs = lay.structs[vocab.rs_struct]
    table, _ = chunk_table(lay, vocab)
    classes: dict[str, ClassRow] = {}
    subs: dict[str, dict[str, ClassRow]] = {}
    for m in rs.members:
        loc = Loc(rs.path, m.line, m.col)
        got = _classes_of(m.offset, m.offset + m.size, table)
        classes[m.name] = ClassRow(frozenset({SPLIT} if len(got) > 1 else got), loc)
        inner = lay.structs.get(m.struct or "")
        if len(got) > 1 and inner is not None:
            per = subs.setdefault(inner.name, {})
            elem = m.size // max(m.count, 1)
            for sm in inner.members:
                sc: set[str] = set()
                for i in range(max(m.count, 1)):
                    base = m.offset + i * elem + sm.offset
                    sc |= _classes_of(base, base + sm.size, table)
                per[sm.name] = ClassRow(frozenset(sc), Loc(inner.path, sm.line, sm.col))
    return classes, subs


def render_state(lay: Layouts, vocab: Vocabulary, structs: dict[str, Struct],
                 spans: tuple[Span, ...]) -> RenderState:
    rs = structs[vocab.rs_struct]
    table, _ = chunk_table(lay, vocab)
    members: list[Member] = []
    subs: list[SubMember] = []
    labels: list[tuple[int, str]] = []
    for m in rs.members:
        got = _classes_of(m.offset, m.offset + m.size, table)
        cls = next(iter(got)) if len(got) == 1 else (SPLIT if got else None)
        members.append(m.model_copy(update={"cls": cls}))
        inner = structs.get(m.struct or "")
        if cls != SPLIT or inner is None:
            labels.append((m.offset, m.name))
            continue
        for i in range(m.count):
            base = m.offset + i * m.elem_size
            for sm in inner.members:
                path = f"{m.name}[{i}].{sm.name}" if m.count > 1 else f"{m.name}.{sm.name}"
                sc = _classes_of(base + sm.offset, base + sm.offset + sm.size, table)
                subs.append(SubMember(path=path, offset=base + sm.offset, size=sm.size,
                                      scalar=sm.scalar, cls=next(iter(sc)) if len(sc) == 1 else None))
                labels.append((base + sm.offset, path))
    counters = {PIPELINE: 0, DYNAMIC: 0}
    chunks = []
    for off, n, c in table:
        chunks.append(Chunk(offset=off, length=n, cls=c, index=counters[c],
                            members=tuple(lab for at, lab in labels if off <= at < off + n)))
        counters[c] += 1
    return RenderState(
        struct=rs.name, size=rs.size, members=tuple(members), sub_members=tuple(subs),
        chunks=tuple(chunks), spans=spans,
        pipeline_members=tuple(m.name for m in members if m.cls in (PIPELINE, SPLIT)))


def _named(cat: Catalogue) -> tuple[Named, ...]:
    out: list[Named] = []

    def add(lst: str, key, values, why=None) -> None:  # type: ignore[no-untyped-def]
        out.append(Named(list=lst, key=key.text, values=tuple(values),
                         why=None if why is None else why.text))

    for r in cat.rows("MGP_VERIFY_PAYLOAD_LIST"):
        add("MGP_VERIFY_PAYLOAD_LIST", r.struct, ())
    for r in cat.rows("MGP_COVERAGE_STICKY_LIST"):
        add("MGP_COVERAGE_STICKY_LIST", r.accessor, (), r.reason)
    for r in cat.rows("MGP_COVERAGE_DELTA_LIST"):
        add("MGP_COVERAGE_DELTA_LIST", r.kind, (r.call.text,))
    for r in cat.rows("MGP_COVERAGE_EMITTED_LIST"):
        add("MGP_COVERAGE_EMITTED_LIST", r.accessor, (r.call.text,))
    for lst in ("MGP_FIELD_OWNERSHIP_LIST", "MGP_FIELD_OWNERSHIP_FORWARD_LIST"):
        for r in cat.rows(lst):
            add(lst, r.field, (r.ownership.text, r.phase.text), r.why)
    for r in cat.rows("MGP_FIELD_OWNERSHIP_ARG_LIST"):
        add("MGP_FIELD_OWNERSHIP_ARG_LIST", r.field, (r.arg.text, r.ownership.text), r.why)
    for r in cat.rows("MGP_VERB_OP_LIST"):
        add("MGP_VERB_OP_LIST", r.call, (r.verb.text,))
    for r in cat.rows("MGP_VERB_OP_EXEMPT_LIST"):
        add("MGP_VERB_OP_EXEMPT_LIST", r.call, (), r.why)
    for r in cat.rows("MGP_DIRTY_SURFACE_LIST"):
        add("MGP_DIRTY_SURFACE_LIST", r.mutator, r.answer.parts)
    for r in cat.rows("MGL_FATAL_FAMILY_LIST"):
        add("MGL_FATAL_FAMILY_LIST", r.family, (r.code.text,), r.why)
    for r in cat.rows("MGL_SUBSYSTEM_DEPENDENCY_LIST"):
        add("MGL_SUBSYSTEM_DEPENDENCY_LIST", r.family, r.requires.parts, r.why)
    return tuple(out)


def accessors(cat: Catalogue) -> list[str]:
    """The PipeInputs fields: Coverage.def's accessor list, distinct, first-seen order."""
    return list(dict.fromkeys(r.accessor.text for r in cat.coverage))


def model_of(cat: Catalogue, lay: Layouts, vocab: Vocabulary, build_struct, ownership,  # type: ignore[no-untyped-def]
             inputs: tuple[InputFile, ...], fingerprint) -> Model:
    """The model of a gated mobilegl-shaped catalogue (``build_struct`` and ``ownership`` are
    the shared struct builder and the ownership derivation's result)."""
    names = _ordered(lay, wire_structs(cat, lay, vocab))
    pins = {n: p.size for n, p in lay.pins.items()}
    structs = {n: build_struct(lay.structs[n], pins) for n in names}
    transport = tuple(build_struct(lay.structs[n], pins) for n in transport_structs(lay, names))
    spans = ()
    if vocab.rs_struct in structs and cat.spans:
        offs = {m.name: m.offset for m in structs[vocab.rs_struct].members}
        spans = tuple(Span(constant=r.constant.text, member=r.member.text, offset=offs[r.member.text])
                      for r in cat.spans)
    rs = render_state(lay, vocab, structs, spans)
    structs[rs.struct] = structs[rs.struct].model_copy(update={"members": rs.members})
    verb_class = {r.verb.text: r.cls.text for r in cat.rows("MGP_FILL_VERB_LIST")}
    call_verb = {r.call.text: r.verb.text for r in cat.rows("MGP_VERB_OP_LIST")}
    flag_bits = lay.enums[vocab.flag_enum].values()
    calls = tuple(
        Call(opcode=i + 1, name=r.name.text, payload=r.payload.text, cls=r.cls.text,
             flags=tuple(p for p in r.flags.parts if p != vocab.no_flag),
             flag_bits=sum(flag_bits[p] for p in r.flags.parts), wait_class=r.wait.text,
             validate_class=verb_class.get(call_verb.get(r.name.text, "")),
             payload_size=lay.structs[r.payload.text].size,
             table="MGPipeScreen" if r.cls.text == "kScreen" else "MGPipeContext")
        for i, r in enumerate(cat.calls))
    classes = [r.cls.text for r in cat.rows("MGP_FILL_CLASS_LIST")]
    fill: dict[str, list[str]] = {c: [] for c in classes}
    for r in cat.fill_points:
        fill.setdefault(r.cls.text, []).append(r.field.text)
    sticky = {r.accessor.text for r in cat.rows("MGP_COVERAGE_STICKY_LIST")}
    cover = {}
    for r in cat.coverage:
        cover.setdefault(r.accessor.text, r.call.text)
    emitted = {r.accessor.text: r.call.text for r in cat.rows("MGP_COVERAGE_EMITTED_LIST")}
    pipe_inputs = tuple(
        PipeInput(id=i, accessor=a, field=a, lifetime="kSticky" if a in sticky else "kPerVerb",
                  ownership=ownership[a][0], call=cover[a], type="",
                  fill_classes=tuple(c for c, fs in fill.items() if a in fs),
                  phase=ownership[a][1], why=ownership[a][2], emitted_by=emitted.get(a))
        for i, a in enumerate(accessors(cat)))
    doc = cat.values.get("MGP_CALL_LIST_DOCUMENTED_COUNT")
    ordered = [structs[n] for n in names]
    return Model(
        catalogue_fingerprint="",
        input_fingerprint=fingerprint(inputs),
        inputs=inputs,
        calls=calls,
        structs=tuple(ordered),
        transport_structs=transport,
        **declared_tables(lay, cat),
        render_state=rs,
        setters=(),
        tails=(),
        handle_fields=tuple(HandleField(call=r.call.text, field=r.field.text, kind=r.kind.text,
                                        nullable=r.null.text == "kNullable")
                            for r in cat.handle_fields),
        pipe_inputs=pipe_inputs,
        validate_classes=tuple(classes),
        ownership_classes=vocab.ownership_classes,
        fill_points=tuple((c, tuple(fs)) for c, fs in fill.items()),
        shape="mobilegl",
        documented_count=int(doc.value) if doc is not None and doc.value.isdigit() else None,
        verbs=tuple(Verb(name=r.verb.text, cls=r.cls.text) for r in cat.rows("MGP_FILL_VERB_LIST")),
        lists=_named(cat),
    )


def find_in(include_dirs: tuple[Path, ...], rel: str) -> Path | None:
    """``rel`` under the first include directory (or one of its parents) that holds it."""
    for d in include_dirs:
        for base in (d, *d.parents[:2]):
            p = base / rel
            if p.is_file():
                return p
    return None


_CASE = re.compile(r"case\s+MGPipeInputField::(\w+)\s*:")


def refused_fields(include_dirs: tuple[Path, ...]) -> tuple[tuple[str, ...], str] | None:
    """The emitted fields the frontend refuses to call whole (``EmittedCallSuppliesTheWhole
    Field``'s ``case`` arms before its ``return false``) and where that was read; None when
    the tree does not hold the frontend's source."""
    path = find_in(include_dirs, PIPE_FILL)
    if path is None:
        return None
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", path.read_text(encoding="utf-8", errors="replace"), flags=re.S)
    start = text.find("EmittedCallSuppliesTheWholeField(")
    end = text.find("return false;", start) if start >= 0 else -1
    if end < 0:
        return (), PIPE_FILL
    return tuple(_CASE.findall(text[start:end])), PIPE_FILL


__all__ = ["accessors", "chunk_table", "headers_of", "model_of", "read_layouts", "refused_fields",
           "render_state", "wanted_structs", "wire_structs"]
