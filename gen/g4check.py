"""The G4 control: the generated comparator tells -0.0 from 0.0 and NaN payloads apart.

The real ``PipeVerify.inc`` is rendered from the (unplanted) copy; the planted defect is
the same template rendered with every scalar float compared by value (``a != b``). Both
are compiled with ``g++ -std=c++17`` into one program (each in its own namespace, after
MGPipeTypes.h, MGPipe.h and PipeInputs.h) that compares two ``RenderStateParameters``
differing only in ``LineWidth``: 0.0 vs -0.0, two NaNs with different payloads, and the
same NaN twice. The control PASSES when the real comparator reports ``LineWidth`` for the
first two and nothing for the third, and the by-value comparator misses 0.0 vs -0.0.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mgpipe.gen import g4_verify
from mgpipe.gen.build import build
from mgpipe.gen.errors import GenError, GenErrors
from mgpipe.gen.render import ModelView, _env, provenance, render_one

FIELD = "LineWidth"
CASES = ("zero", "nan", "same")
#: what each comparator must answer per case ("-" = called the two equal)
WANT_REAL = {"zero": FIELD, "nan": FIELD, "same": "-"}

PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>
@HEADERS@
namespace real_cmp {
#include "real/PipeVerify.inc"
}
namespace planted_cmp {
#include "planted/PipeVerify.inc"
}

template <typename Cmp>
static void Run(const char* who, Cmp cmp) {
    const Uint32 nan1 = 0x7fc00001u, nan2 = 0x7fc00002u;
    RenderStateParameters a{}, b{};
    a.@F@ = 0.0f;
    b.@F@ = -0.0f;
    const char* r = cmp(a, b);
    std::printf("%s zero %s\n", who, r ? r : "-");
    std::memcpy(&a.@F@, &nan1, 4);
    std::memcpy(&b.@F@, &nan2, 4);
    r = cmp(a, b);
    std::printf("%s nan %s\n", who, r ? r : "-");
    std::memcpy(&b.@F@, &nan1, 4);
    r = cmp(a, b);
    std::printf("%s same %s\n", who, r ? r : "-");
}

int main() {
    Run("real", real_cmp::MGPipeVerify_RenderStateParameters);
    Run("planted", planted_cmp::MGPipeVerify_RenderStateParameters);
    return 0;
}
""".replace("@F@", FIELD)
#: the headers the comparators are compiled after, per tree shape (a MobileGL-shaped tree has
#: no PipeInputs.h: its inputs live in MobileGL's state code, not in the pipe's headers)
HEADERS = {"bundled": ("MGPipeTypes.h", "MGPipe.h", "PipeInputs.h"), "mobilegl": ("MGPipeTypes.h", "MGPipe.h")}
#: what follows the headers, per shape (MobileGL declares its types in namespace MobileGL)
AFTER = {"bundled": "", "mobilegl": "using namespace MobileGL;"}


def by_value(comparators: list) -> list:  # type: ignore[type-arg]
    """The planted defect: scalar floats compared by value instead of by bits."""
    return [(s, [(m, "value" if m.is_float and m.count == 1 and m.struct is None else how)
                 for m, how in fields]) for s, fields in comparators]


def render_pair(model) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    env = _env()
    real = render_one(g4_verify, model, env).text
    view = ModelView(model, g4_verify.READS)
    ctx = {"model": view, "title": g4_verify.TITLE, "file": g4_verify.FILE,
           **provenance(model, g4_verify.READS), **g4_verify.context(view),
           "comparators": by_value(g4_verify.context(view)["comparators"])}
    planted = env.get_template(g4_verify.TEMPLATE).render(**ctx)
    return real, planted


def _needs_vector_base(model, cat: Path, include_dirs: tuple[Path, ...]) -> None:  # type: ignore[no-untyped-def]
    """A MobileGL-shaped tree's comparators are written against MobileGL's vector base
    (``VecBase``, :data:`g4_verify.VECTOR_BASE`): a tree whose headers do not declare it
    cannot compile them, so the control does not apply there (MobileGL's tree declares it in
    MG_Util; the bundled ``catalogue/MG_Pipe`` in MGPipeVectors.h, beside its plain vectors)."""
    import re

    from mgpipe.gen.sites import NotApplicable

    if not g4_verify.context(ModelView(model, g4_verify.READS))["vocabulary"]:
        return
    decl = re.compile(rf"\b(?:struct|class)\s+{g4_verify.VECTOR_BASE}\b")
    for d in (cat, *include_dirs):
        for h in sorted(Path(d).rglob("*.h")):
            if decl.search(h.read_text(encoding="utf-8", errors="replace")):
                return
    raise NotApplicable(f"the comparators are written against MobileGL's {g4_verify.VECTOR_BASE}, "
                        f"which no header of the tree or its include directories declares")


def judge_g4(cat: Path, tree: Path, disabled: frozenset[str],
             include_dirs: tuple[Path, ...] | None = None) -> str | None:
    from mgpipe.gen.catalogue import is_mobilegl_tree

    gxx = shutil.which("g++")
    if gxx is None:
        return "g++ not found on PATH: the G4 control must compile the comparator (install g++)"
    real_tree = is_mobilegl_tree(cat)
    try:
        model = build(cat, disabled=disabled, use_cache=False, include_dirs=include_dirs).model
    except (GenError, GenErrors) as exc:
        return f"the unplanted copy did not build: {str(exc).splitlines()[0]}"
    if real_tree:
        _needs_vector_base(model, cat, include_dirs if include_dirs is not None else (cat.parent,))
    real, planted = render_pair(model)
    work = tree / "g4"
    for who, text in (("real", real), ("planted", planted)):
        (work / who).mkdir(parents=True)
        # a first line per copy: GCC's #pragma once would fold two identical files into one
        (work / who / g4_verify.FILE).write_text(f"// self-test: {who} comparator\n{text}",
                                                 encoding="utf-8")
    src, exe = work / "g4.cpp", work / "g4"
    shape = "mobilegl" if real_tree else "bundled"
    head = "\n".join([*(f'#include "{h}"' for h in HEADERS[shape]), AFTER[shape]])
    src.write_text(PROGRAM.replace("@HEADERS@", head), encoding="utf-8")
    if real_tree:
        # the comparators include "../PipeFields.def": found through a directory inside the tree
        inside = cat / ".g4"
        inside.mkdir(exist_ok=True)
        dirs = [f"-I{cat}", f"-I{inside}",
                *(f"-I{d}" for d in (include_dirs if include_dirs is not None else (cat.parent,)))]
    else:
        dirs = [f"-I{cat / 'include'}"]
    proc = subprocess.run([gxx, "-std=c++17", *dirs, f"-I{work}", str(src),
                           "-o", str(exe)], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"g++ failed to compile the comparators: {proc.stderr.strip()[-600:]}"
    ran = subprocess.run([str(exe)], capture_output=True, text=True)
    got: dict[tuple[str, str], str] = {}
    for line in ran.stdout.splitlines():
        who, case, answer = line.split()
        got[(who, case)] = answer
    for case, want in WANT_REAL.items():
        if got.get(("real", case)) != want:
            return (f"the real comparator answered {got.get(('real', case))!r} for {case}, "
                    f"expected {want!r} (- = equal)")
    if got.get(("planted", "zero")) != "-":
        return "the by-value comparator caught 0.0 vs -0.0 too: the control cannot tell the defect"
    return None


__all__ = ["by_value", "judge_g4", "render_pair"]
