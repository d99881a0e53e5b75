"""Write the bundled catalogue's MobileGL-shaped tree from the facts of a MobileGL snapshot.

``python -m mgpipe.catalogue.import_abi SNAPSHOT [--out catalogue]`` reads MobileGL's own
``MG_Pipe`` tree with mgpipe's reader (layouts from libclang, rows from the .def lists) and
writes, under ``--out``:

* ``MG_Pipe/*.def`` -- every list by its real name, its rows in the real order, with the
  identifiers and numbers as MobileGL has them; the free-text justifications (why a field
  is pulled, why a call is exempt) are replaced by a sentence of this project's own, and a
  retiring phase is reduced to its phase names;
* ``MG_Pipe/*.h``, ``MG_Util/Types.h``, ``MG_Backend/BackendObject.h`` -- every struct and
  enum the rows read, in the header MobileGL declares it in, with its real name, members,
  member types, enumerator values and the size MobileGL pins (``MGP_ASSERT_POD``); the
  scalar and container vocabulary those declarations spell (``Uint32``, ``Array<T, N>``,
  ``Vec4<T>``) is defined once in ``MG_Util/Types.h`` in this project's own terms.

Nothing of MobileGL's text is carried but declarations' facts (names, types, values); the
comments are this tool's. It is run once per re-base onto a new MobileGL ABI; after that
the tree is the catalogue and is edited by hand (adding a call is a row and a struct).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

INCLUDE = ("_stubs/override", "_stubs/missing", "_thirdparty", "MobileGL", "MobileGL/MG_Pipe")
CROSS_COMMIT = frozenset({"ownership", "verb-stamps"})
NS = {"MG_Pipe": "MobileGL::MG_Pipe", "MG_Util": "MobileGL", "MG_Backend": "MobileGL"}
SCALARS = {  # alias -> builtin (the widths MGPipe targets: LP64)
    "Uint8": "unsigned char", "Uint16": "unsigned short", "Uint32": "unsigned int",
    "Uint64": "unsigned long long", "Int8": "signed char", "Int16": "short", "Int32": "int",
    "Int64": "long long", "Int": "Int32", "Uint": "Uint32", "Float": "float", "Double": "double",
    "Bool": "bool", "SizeT": "decltype(sizeof(0))", "GLenum": "unsigned int",
    "GLbitfield": "unsigned int", "GLint": "int", "GLuint": "unsigned int",
}  # fmt: skip
UNDERLYING = {"u8": "Uint8", "u16": "Uint16", "u32": "Uint32", "u64": "Uint64", "i8": "Int8",
              "i16": "Int16", "i32": "Int32", "i64": "Int64", "b8": "Bool"}
FILE_NOTES = {
    "PipeCalls.def": "the call catalogue: one X(Name, Payload, Class, Flags, WaitClass) row per call;\n"
    "// a call's wire opcode is its 1-based row. Rows are appended, never moved or removed.",
    "PipeFields.def": "the member lists the verifier compares, per payload struct (padding left out),\n"
    "// and the payloads the verifier covers.",
    "Coverage.def": "which call carries each PipeInputs field to the server; the fields that stay\n"
    "// sticky across verbs; the inventory deltas; the fields an emitted call supplies.",
    "FieldOwnership.def": "who answers each PipeInputs field on the server side, and which calls\n"
    "// stamp a frontend verb.",
    "FillPoints.def": "the frontend's verbs, the validate classes, and the fields each class fills.",
    "DirtySurface.def": "for every frontend mutator, how the server learns of the change.",
    "FatalFamilies.def": "the fatal families and the wire fatal code each is reported as.",
    "SubsystemDeps.def": "which pushed subsystem needs which other one published first.",
}


#: Rows mgpipe adds to close the two joins MobileGL's snapshot leaves open between files of
#: different commits (its MANIFEST names them): the seven fields FieldOwnership.def hands to
#: set_context_values are the members of MGPContextValues at the catalogue's commit, so the
#: emitted list names that call for them; and the two verb-shaped rows appended after the
#: ownership file's commit stamp the frontend verbs they are the buffer / delete forms of.
COMPLETIONS = {
    "MGP_COVERAGE_EMITTED_LIST": [
        (f, "SetContextValues") for f in (
            "GetActiveTextureUnit", "GetTouchedBufferBindingPointCount",
            "GetTransformFeedbackCapturedVertices", "GetTransformFeedbackGeneration",
            "IsTransformFeedbackActive", "IsTransformFeedbackPaused",
            "GetBoundTransformFeedbackLifetimeId")
    ],
    "MGP_VERB_OP_LIST": [("DeleteStreamOutput", "DeleteTransformFeedback"),
                         ("ReadPixelsToBuffer", "ReadPixels")],
}


def _words(name: str, row) -> str:  # type: ignore[no-untyped-def]
    """This project's own sentence for a row's free-text justification column."""
    t = {k: getattr(row, k).text for k in ("field", "ownership", "phase", "call", "family", "code",
                                            "requires", "accessor", "arg") if hasattr(row, k)}
    if name == "MGP_COVERAGE_STICKY_LIST":
        return f"{t['accessor']} keeps its value from one verb to the next"
    if name in ("MGP_FIELD_OWNERSHIP_LIST", "MGP_FIELD_OWNERSHIP_FORWARD_LIST"):
        if t["phase"].strip('"') in ("-", ""):
            return f"{t['field']} is {t['ownership']}"
        return f"{t['field']} is {t['ownership']} until its retiring phase"
    if name == "MGP_FIELD_OWNERSHIP_ARG_LIST":
        return f"{t['field']} with argument {t['arg']} is {t['ownership']}"
    if name == "MGP_VERB_OP_EXEMPT_LIST":
        return f"{t['call']} stamps no frontend verb of its own"
    if name == "MGL_FATAL_FAMILY_LIST":
        return f"{t['family']} is reported as {t['code']}"
    if name == "MGL_SUBSYSTEM_DEPENDENCY_LIST":
        return f"{t['family']} names handles only {t['requires']} publishes"
    raise KeyError(name)


def _phase(text: str) -> str:
    got = re.findall(r"\bP\d+[a-z]?\b", text)
    return ", ".join(dict.fromkeys(got)) if got else text


def _arg(name: str, col: str, tok, row) -> str:  # type: ignore[no-untyped-def]
    if col in ("why", "reason"):
        return '"' + _words(name, row) + '"'
    if col == "phase":
        return tok.text if tok.text == "-" else '"' + _phase(tok.text) + '"'
    if tok.kind in ("text", "string"):
        return '"' + tok.text.replace('"', "") + '"' if col != "kind" else tok.text
    return tok.text


def write_defs(cat, out: Path) -> None:  # type: ignore[no-untyped-def]
    from mgpipe.gen.catalogue import MOBILEGL_SHAPES
    from mgpipe.gen.rows import columns

    for fname, shapes in MOBILEGL_SHAPES.items():
        lines = [f"// {fname} -- {FILE_NOTES[fname]}",
                 "// Facts of MobileGL's MGPipe ABI (names, order, values); the words are mgpipe's.", ""]
        if fname == "PipeCalls.def":
            lines += [f"#define MGP_CALL_LIST_DOCUMENTED_COUNT {cat.values['MGP_CALL_LIST_DOCUMENTED_COUNT'].value}", ""]
        if fname == "PipeFields.def":
            for struct, rows in cat.field_lists.items():
                body = " ".join(f"F({r.member.text}{', ' + r.cls.text if r.cls else ''})" for r in rows)
                lines += [f"#define MGP_FIELDS_{struct}(F) \\", f"    {body}", ""]
        for name, (param, rtype) in shapes.items():
            if "*" in name:
                continue
            rows = cat.rows(name)
            cols = columns(rtype)
            lines.append(f"#define {name}({param}) \\")
            body = []
            for r in rows:
                args = [_arg(name, c, getattr(r, c), r) for c in cols if getattr(r, c) is not None]
                body.append(f"    {param}({', '.join(args)})")
            for extra in COMPLETIONS.get(name, ()):
                body.append(f"    {param}({', '.join(extra)})")
            lines += [b + " \\" for b in body[:-1]] + body[-1:] + [""]
        (out / "MG_Pipe" / fname).write_text("\n".join(lines), encoding="utf-8")


def _decl(m) -> str:  # type: ignore[no-untyped-def]
    t = m.type
    a = re.fullmatch(r"(.+?)\s*((?:\[\d+\])+)", t)
    if a:
        return f"{a.group(1)} {m.name}{a.group(2)};"
    if t.endswith("*"):
        return f"{t.rstrip('* ').strip()}* {m.name};"
    return f"{t} {m.name};"


HEADER_NOTES = {
    "MG_Util/Types.h": "the scalar and container vocabulary the MGPipe headers are spelt in",
    "MG_Backend/BackendObject.h": "the backend's capability block (carried whole in MGPCaps) and the\n"
    "// frontend's verb table (its members are the verbs FillPoints.def lists, in order)",
    "MG_Pipe/MGPipe.h": "the catalogue's column vocabulary: call classes, call flags, wait classes",
    "MG_Pipe/MGPipeHandles.h": "the wire handle and the handle kinds",
    "MG_Pipe/MGPipeHostSpan.h": "a span of client memory named by a record (pointer or segment offset)",
    "MG_Pipe/MGPipeTypes.h": "every call's payload struct and the enums their members use",
    "MG_Pipe/MGPipeValueTypes.h": "the value blocks the payloads carry whole (render state, sampler\n"
    "// state, pixel store, vertex layout)",
    "MG_Pipe/MGPipeRenderStateSpans.h": "RenderStateParameters cut into chunks: the boundaries and which\n"
    "// half (pipeline or dynamic) each chunk belongs to",
}
VOCAB = """#ifndef MGP_ASSERT_POD
// A payload's size, pinned where it is declared: the wire is byte-for-byte this struct.
#define MGP_ASSERT_POD(T, N) \\
    static_assert(sizeof(T) == (N) && __is_trivially_copyable(T), #T " is a wire POD of " #N " bytes")
#endif

namespace MobileGL {
%s
    // A fixed-length run of T, laid out as T[N].
    template <typename T, SizeT N> using Array = T[N];

} // namespace MobileGL
"""


WIDTH = {"Uint8": 8, "Uint16": 16, "Uint32": 32, "Uint": 32, "Uint64": 64, "SizeT": 64, "Int32": 32}
_CONST = re.compile(r"^\s*inline constexpr (\w+) (k\w+) =\s*([^;{}]+);", re.M)
_LIT = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")


def _value(expr: str, bits: int, known: dict[str, int]) -> int | None:
    """An integer constant's value, where it is an integer expression of literals and of
    constants read before it (``1u << 20``, ``~0ull``, ``kLimit - (kLimit >> 4)``)."""
    import ast

    e = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", " ".join(expr.split()))
    try:
        tree = ast.parse(e, mode="eval")
    except SyntaxError:
        return None
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.LShift: lambda a, b: a << b,
           ast.RShift: lambda a, b: a >> b, ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
           ast.Mult: lambda a, b: a * b}

    def ev(n):  # type: ignore[no-untyped-def]
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in known:
            return known[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Invert):
            return ~ev(n.operand) & ((1 << bits) - 1)
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            return ops[type(n.op)](ev(n.left), ev(n.right))
        raise ValueError(ast.dump(n))

    try:
        return ev(tree.body) & ((1 << bits) - 1)
    except (ValueError, TypeError):
        return None


def constants_of(header: Path) -> list[tuple[int, str, str, int]]:
    """(line, type, name, value) of every integer ``inline constexpr`` a header spells as a
    literal: the limits and codes the rows and the runtime read (kMGPipeMaxImageUnits, ...)."""
    text = header.read_text(encoding="utf-8", errors="replace")
    out = []
    known: dict[str, int] = {}
    for m in _CONST.finditer(text):
        typ, name, expr = m.groups()
        if typ not in WIDTH:
            continue
        v = _value(re.sub(r"//[^\n]*", "", expr), WIDTH[typ], known)
        if v is not None:
            known[name] = v
            out.append((text.count("\n", 0, m.start()) + 1, typ, name, v))
    return out


VECTORS = """// MGPipeVectors.h -- the small vectors the value blocks are spelt in: N components and
// nothing else. MobileGL derives them from one vector template; mgpipe declares each as a
// plain struct beside the payloads, so that every layout the runtime reads is a struct of
// its own (same names, sizes and component order).
#pragma once

#include "MG_Util/Types.h"

namespace MobileGL {
    struct FloatVec2 { Float X, Y; };
    struct FloatVec3 { Float X, Y, Z; };
    struct FloatVec4 { Float X, Y, Z, W; };
    struct IntVec2 { Int32 X, Y; };
    struct IntVec4 { Int32 X, Y, Z, W; };
    struct UintVec4 { Uint32 X, Y, Z, W; };
    struct BoolVec4 { Bool X, Y, Z, W; };

    // MobileGL's vectors derive from VecBase<Derived, T, N> (MG_Util/Math/VectorTypes.h),
    // which the generated comparators (PipeVerify.inc) name: declared here so that they
    // compile against these headers too. These plain structs never derive from it; they
    // compare through the bitwise == below, as the comparators compare a VecBase's data
    // (memcmp: -0.0 differs from 0.0, NaN payloads are told apart; no padding to compare).
    template <class Derived, class T, SizeT N>
    struct VecBase;
#define MGP_VECTOR_BITWISE_EQ(V) \\
    inline Bool operator==(const V& a, const V& b) { return __builtin_memcmp(&a, &b, sizeof(V)) == 0; }
    MGP_VECTOR_BITWISE_EQ(FloatVec2)
    MGP_VECTOR_BITWISE_EQ(FloatVec3)
    MGP_VECTOR_BITWISE_EQ(FloatVec4)
    MGP_VECTOR_BITWISE_EQ(IntVec2)
    MGP_VECTOR_BITWISE_EQ(IntVec4)
    MGP_VECTOR_BITWISE_EQ(UintVec4)
    MGP_VECTOR_BITWISE_EQ(BoolVec4)
#undef MGP_VECTOR_BITWISE_EQ
} // namespace MobileGL
"""


def _sibling(path: str, include: str) -> str:
    return Path(include).name if Path(include).parent == Path(path).parent else include


def _names_in(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


def write_headers(built, out: Path) -> list[str]:  # type: ignore[no-untyped-def]
    from mgpipe.gen.build_mobilegl import wire_structs
    from mgpipe.gen.vocabulary import MOBILEGL

    lay, cat = built.layouts, built.catalogue
    names = wire_structs(cat, lay, MOBILEGL)
    structs = [lay.structs[n] for n in names] + [lay.structs[MOBILEGL.verb_table_struct]]
    by_file: dict[str, list[tuple[int, str, str, set[str]]]] = {}
    declared = set(lay.enums) | {s.name for s in structs}
    enum_under: dict[str, str] = {}
    consts: dict[str, int] = {}
    for s in structs:
        for m in s.members:
            if m.enum and m.enum not in lay.enums and m.scalar:
                enum_under[m.enum] = UNDERLYING[m.scalar]
            a = re.fullmatch(r"Array<(.+), (\w+)>", m.type)
            if a and not a.group(2).isdigit():
                consts[a.group(2)] = m.count
    for e in lay.enums.values():
        under = f" : {UNDERLYING[e.underlying]}" if e.underlying else ""
        kind = "enum class" if e.scoped else "enum"
        body = "\n".join(f"        {x.name} = {x.value}," for x in e.enumerators)
        by_file.setdefault(e.path, []).append(
            (e.line, e.name, f"    {kind} {e.name}{under} {{\n{body}\n    }};", set()))
    for name, under in sorted(enum_under.items()):  # declared outside what the reader keeps
        by_file.setdefault("MG_Backend/BackendObject.h", []).append(
            (0, name, f"    enum class {name} : {under} {{}};", set()))
    for s in structs:
        if s.name == MOBILEGL.verb_table_struct:
            body = "\n".join(f"        void (*{m.name})();" for m in s.members
                              if m.pod == "a function pointer")
        else:
            body = "\n".join(f"        {_decl(m)}" for m in s.members)
        if s.name == MOBILEGL.handle_struct:  # MobileGL's handle compares member by member
            same = " && ".join(f"a.{m.name} == b.{m.name}" for m in s.members)
            body += (f"\n        friend constexpr Bool operator==(const {s.name}& a, const {s.name}& b) {{"
                     f"\n            return {same};\n        }}")
        text = f"    struct {s.name} {{\n{body}\n    }};"
        if s.name in lay.pins:
            text += f"\n    MGP_ASSERT_POD({s.name}, {lay.pins[s.name].size});"
        uses = _names_in(body) & (declared | set(enum_under))
        by_file.setdefault(s.path, []).append((s.line, s.name, text, uses - {s.name}))
    imported: set[str] = set()
    for path in list(by_file):
        real = built.catalogue.root.parent / path
        if path.startswith("MG_Pipe/") and real.is_file():
            for line, typ, name, v in constants_of(real):
                # an enumerator of its own anonymous enum: the reader keeps it as a constant
                by_file[path].append((line, name, f"    enum : {typ} {{ {name} = {v if v < 1 << 16 else hex(v)} }};", set()))
                imported.add(name)
    consts = {c: v for c, v in consts.items() if c not in imported}
    where = {n: f for f, ds in by_file.items() for _, n, _, _ in ds}
    for c in consts:
        where[c] = "MG_Pipe/MGPipeValueTypes.h"
    written = []
    for path, decls in sorted(by_file.items()):
        decls.sort(key=lambda d: (d[0], d[1]))
        need = sorted({where[u] for _, _, _, us in decls for u in us if where.get(u, path) != path}
                      | ({"MG_Pipe/MGPipeValueTypes.h"} if path != "MG_Pipe/MGPipeValueTypes.h" and any(
                          c in t for _, _, t, _ in decls for c in consts) else set()))
        lines = [f"// {Path(path).name} -- {HEADER_NOTES[path]}.",
                 "// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned",
                 "// sizes) written by catalogue/import_abi.py; the words are mgpipe's.",
                 "#pragma once", "", '#include "MG_Util/Types.h"']
        if path.startswith("MG_Pipe/"):
            lines.append('#include "MGPipeVectors.h"')
        # a sibling by its own name (found beside the including file first), so that a copy of
        # the directory includes its own siblings, never the originals on the include path
        lines += [f'#include "{_sibling(path, n)}"' for n in need]
        lines += ["", "namespace MobileGL {"]
        if path == "MG_Pipe/MGPipeValueTypes.h":
            lines += [f"    inline constexpr SizeT {c} = {v};" for c, v in sorted(consts.items())] + [""]
        lines += ["\n\n".join(t for _, _, t, _ in decls), "} // namespace MobileGL", ""]
        dst = out / path
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text("\n".join(lines), encoding="utf-8")
        written.append(path)
    scal = "\n".join(f"    using {a} = {b};" for a, b in SCALARS.items())
    types = out / "MG_Util" / "Types.h"
    types.parent.mkdir(parents=True, exist_ok=True)
    types.write_text(f"// Types.h -- {HEADER_NOTES['MG_Util/Types.h']}.\n"
                     "// mgpipe's own definitions of the names MobileGL's headers use; LP64 widths.\n"
                     "#pragma once\n\n" + VOCAB % scal, encoding="utf-8")
    (out / "MG_Pipe" / "MGPipeVectors.h").write_text(VECTORS, encoding="utf-8")
    b = lay.values[MOBILEGL.chunk_boundaries].values
    pipe = [i for i in range(len(b) - 1) if lay.values[f"chunk_is_pipeline_{i}"].values[0]]
    odd = pipe == list(range(1, len(b) - 1, 2))
    assert odd, "the chunk halves alternate (dynamic, pipeline, ...) in MobileGL's table"
    spans = out / "MG_Pipe" / "MGPipeRenderStateSpans.h"
    spans.write_text(
        f"// MGPipeRenderStateSpans.h -- {HEADER_NOTES['MG_Pipe/MGPipeRenderStateSpans.h']}.\n"
        "// The boundaries are byte offsets into RenderStateParameters; chunk i spans\n"
        "// [boundary i, boundary i+1). The generator evaluates both with the compiler.\n"
        "#pragma once\n\n#include \"MG_Util/Types.h\"\n#include \"MGPipeValueTypes.h\"\n\n"
        "namespace MobileGL::MG_Pipe {\n"
        f"    inline constexpr SizeT {MOBILEGL.chunk_count} = {len(b) - 1};\n"
        f"    inline constexpr Array<SizeT, {MOBILEGL.chunk_count} + 1> {MOBILEGL.chunk_boundaries} = {{\n"
        + "".join(f"        {v},\n" for v in b) + "    };\n"
        "    // The halves alternate: even chunks are dynamic state, odd chunks pipeline state.\n"
        f"    constexpr Bool {MOBILEGL.chunk_is_pipeline}(SizeT index) {{ return (index & 1u) != 0; }}\n"
        "    static_assert(kMGPipeRenderStateChunkBoundaries[kMGPipeRenderStateChunkCount] ==\n"
        "                  sizeof(RenderStateParameters), \"the chunks cover the whole block\");\n"
        "} // namespace MobileGL::MG_Pipe\n", encoding="utf-8")
    return written + ["MG_Util/Types.h", "MG_Pipe/MGPipeVectors.h", "MG_Pipe/MGPipeRenderStateSpans.h"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path)
    p.add_argument("--out", type=Path, default=Path("catalogue"))
    args = p.parse_args(argv)
    from mgpipe.gen.build import build

    snap = args.snapshot
    built = build(snap / "MobileGL" / "MG_Pipe", disabled=CROSS_COMMIT,
                  include_dirs=tuple(snap / d for d in INCLUDE))
    (args.out / "MG_Pipe").mkdir(parents=True, exist_ok=True)
    write_defs(built.catalogue, args.out)
    for path in write_headers(built, args.out):
        print(f"{args.out}/{path}")
    return 0


def run(argv: list[str] | None = None) -> int:
    """:func:`main` with mgpipe's refusals: a bad snapshot is one ``file:line:col: GATE:``
    line and exit 2, never a traceback."""
    from mgpipe.gen.errors import GenError, GenErrors, exit_code_for

    try:
        return main(argv)
    except (GenError, GenErrors) as exc:
        return exit_code_for(exc)
    except OSError as exc:
        return exit_code_for(GenError(str(exc.filename or "<command line>"), 1, 1, "IO-ERROR",
                                      f"{exc.strerror or exc}, expected a writable --out"))


if __name__ == "__main__":
    sys.exit(run())
