"""Read the catalogue's C++ headers with libclang: struct layouts, enums, constants.

libclang computes every ``sizeof``/``alignof``/``offsetof``; nothing here guesses a
layout. One translation unit is parsed from an in-memory umbrella ``.cpp`` that includes
the headers (``-x c++ -std=c++17``). Results are cached as JSON under
``$MGPIPE_CACHE_DIR`` (default ``~/.cache/mgpipe``), keyed by an xxh64 fingerprint of
the headers, the libclang version and this code; a cache hit never loads libclang.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from dataclasses import dataclass

import xxhash

from . import REPO_ROOT, cache
from .cache import cache_dir
from .errors import ErrorCollector, GenError, GenErrors
from .layout_model import (
    Constant, Enum, Enumerator, FlatMember, Layouts, Member, Struct, flatten,
)  # fmt: skip

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".inc")
UMBRELLA_NAME = "__mgpipe_umbrella__.cpp"
BASE_ARGS = ("-x", "c++", "-std=c++17")
_PROBE = "#include <cstdint>\n#include <cstddef>\n"


#: the ``-I`` directories of the parse in progress: a header outside the display root is
#: spelt from the include directory that holds it, as an ``#include`` names it - never absolute
_SEARCH: list[Path] = []


def _display(file: str | Path, root: Path) -> str:
    p = Path(file).resolve()
    try:
        return p.relative_to(root.resolve()).as_posix()
    except ValueError:
        pass
    for d in _SEARCH:
        if p.is_relative_to(d):
            return p.relative_to(d).as_posix()
    return str(file)


def _default_display_root(include_dir: Path) -> Path:
    inc = include_dir.resolve()
    return REPO_ROOT if inc.is_relative_to(REPO_ROOT) else inc.parent


#: what the translation unit can read: the headers and the X-macro lists they #include
#: (MobileGL's headers expand PipeCalls.def and PipeFields.def themselves)
TU_SUFFIXES = (*HEADER_SUFFIXES, ".def")


def _header_files(include_dir: Path, suffixes: tuple[str, ...] = HEADER_SUFFIXES) -> list[Path]:
    files = [p for p in include_dir.rglob("*") if p.is_file() and p.suffix in suffixes]
    return sorted(files, key=lambda p: p.relative_to(include_dir).as_posix())


def _extra_args() -> list[str]:
    return shlex.split(os.environ.get("MGPIPE_CLANG_ARGS", ""))


def fingerprint(include_dir: Path, headers: list[str] | None = None,
                options: Options | None = None) -> str:
    """xxh64 over the headers (sorted by relative name) of the include directory and of every
    ``-I`` directory, libclang's version, the options and this code."""
    h = xxhash.xxh64()
    dirs = [include_dir, *(options.include_dirs if options else ())]
    for i, d in enumerate(dirs):
        if not Path(d).is_dir():
            continue
        for p in _header_files(Path(d), TU_SUFFIXES):
            h.update(f"{i}:".encode() + p.relative_to(d).as_posix().encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
    try:
        h.update(("libclang " + metadata.version("libclang")).encode() + b"\0")
    except metadata.PackageNotFoundError:
        h.update(b"libclang ?\0")
    here = Path(__file__).parent
    for src in ("layout.py", "layout_model.py", "layout_reader.py", "pod.py", "cache.py", "evaluate.py"):
        h.update((here / src).read_bytes() + b"\0")
    opts = None if options is None else (options.std, sorted(options.wanted), options.pin_macros,
                                          options.probes, len(options.include_dirs))
    h.update(repr((headers, _extra_args(), sys.platform, opts)).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Options:
    """How a catalogue's headers are compiled and what is read from them.

    ``include_dirs``: the ``-I`` directories, searched in order after the header's own
    directory (a MobileGL tree's headers include ``<Includes.h>``, ``MG_Util/Types.h``, ...).
    ``std``: the language standard (MobileGL's headers need ``c++23``). ``wanted``: struct
    and enum names taken from the project's other headers too (``DynamicBackendParameters``
    lives in ``MG_Backend/BackendObject.h``). ``pin_macros``: macros whose ``M(T, N)``
    instantiations pin ``sizeof(T)`` (``MGP_ASSERT_POD``). ``probes``: ``(name, expression)``
    pairs compiled as ``constexpr`` integers beside the headers and read back as values.
    """

    include_dirs: tuple[Path, ...] = ()
    std: str = "c++17"
    wanted: frozenset[str] = frozenset()
    pin_macros: tuple[str, ...] = ()
    probes: tuple[tuple[str, str], ...] = ()


def read_headers(
    include_dir: Path,
    headers: list[str] | None = None,
    *,
    display_root: Path | None = None,
    use_cache: bool = True,
    options: Options | None = None,
) -> Layouts:
    """Parse the headers in ``include_dir`` and return their :class:`Layouts`.

    ``headers`` names the headers to include (relative to ``include_dir``); ``None``
    means every ``*.h`` directly in ``include_dir``, sorted by name. Paths in the result
    and in errors are relative to ``display_root`` (default: the repository root when
    ``include_dir`` is inside it, else ``include_dir``'s parent). A clang error in a
    header raises ``GenError(..., "HEADER-COMPILE", ...)`` (``GenErrors`` for several).
    """
    include_dir = Path(include_dir)
    root = display_root if display_root is not None else _default_display_root(include_dir)
    if headers is None:
        headers = sorted(p.name for p in include_dir.glob("*.h") if p.is_file())
    fp = fingerprint(include_dir, headers, options)
    cache_file = cache.entry("layout", fp, "json")
    if use_cache:
        cached = _load_cache(cache_file, root)
        if cached is not None:
            return cached
    layouts = _parse_with_libclang(include_dir, list(headers), root, fp, options or Options())
    if use_cache and not layouts.output_errors:
        _store_cache(cache_file, layouts, root)
    return layouts


def _load_cache(cache_file: Path, root: Path) -> Layouts | None:
    text = cache.read(cache_file)
    if text is None:
        return None
    try:
        data = json.loads(text)
        # An entry whose every path is relative to its display root names the same files for
        # any tree of the same content (the key covers the content); one that holds an
        # absolute path is only ever reported for the tree it was made for.
        if data.get("display_root") != str(root.resolve()) and not data.get("relative"):
            return None
        return Layouts.from_json(data["layouts"])
    except (ValueError, KeyError, TypeError):
        return None


def _paths_relative(layouts: Layouts) -> bool:
    paths = [s.path for s in layouts.structs.values()] + [e.path for e in layouts.enums.values()]
    paths += [c.path for c in layouts.constants.values()] + [p.path for p in layouts.pins.values()]
    paths += [v.path for v in layouts.values.values()] + list(layouts.headers)
    return all(not p.startswith("/") and ".." not in Path(p).parts for p in paths)


def _store_cache(cache_file: Path, layouts: Layouts, root: Path) -> None:
    payload = {"display_root": str(root.resolve()), "relative": _paths_relative(layouts),
               "layouts": layouts.to_json()}
    cache.write(cache_file, json.dumps(payload, sort_keys=True))


# --------------------------------------------------------------------- libclang side


def _gcc_include_dirs() -> list[str]:
    """The system include directories g++ searches (``g++ -E -x c++ - -v``)."""
    for compiler in ("g++", "c++", "clang++"):
        try:
            proc = subprocess.run(
                [compiler, "-E", "-x", "c++", "-", "-v"],
                input="",
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        dirs: list[str] = []
        inside = False
        for line in proc.stderr.splitlines():
            if line.startswith("#include <...> search starts here"):
                inside = True
            elif line.startswith("End of search list"):
                break
            elif inside:
                d = line.strip().removesuffix(" (framework directory)")
                if os.path.isdir(d):
                    dirs.append(d)
        if dirs:
            return dirs
    return []


def _clang_resource_dirs() -> list[str]:
    """Builtin-header directories of a system clang install, if there is one."""
    found = [str(p) for pat in ("/usr/lib/llvm-*/lib/clang/*/include", "/usr/lib/clang/*/include")
             for p in sorted(Path("/").glob(pat.lstrip("/"))) if (p / "stddef.h").is_file()]  # fmt: skip
    return found[-1:]


#: what a C++23 standard library must compile for MobileGL's headers (``<format>``,
#: ``<expected>``: Debian's g++ 12 lacks the first, so libc++ is tried too)
PROBE_CXX23 = "#include <cstdint>\n#include <cstddef>\n#include <format>\n#include <expected>\n"


def _libcxx_dirs() -> list[str]:
    found = [str(p) for pat in ("usr/lib/llvm-*/include/c++/v1", "usr/include/c++/v1")
             for p in sorted(Path("/").glob(pat)) if (p / "expected").is_file()]
    return found[-1:]


def _base(std: str) -> tuple[str, ...]:
    return ("-x", "c++", f"-std={std}")


@lru_cache(maxsize=4)
def system_args(std: str = "c++17") -> tuple[str, ...]:
    """Extra ``-isystem`` flags that let libclang compile the standard headers ``std`` needs.

    Tries libclang on its own, then a system clang's builtin headers, then the include
    dirs g++ reports, then (C++23) a libc++ beside them; returns the first set that
    compiles the probe (or the last tried). ``MGPIPE_CLANG_ARGS`` is added to every try.
    """
    from clang import cindex

    probe = _PROBE if std == "c++17" else PROBE_CXX23
    candidates: list[list[str]] = [[]]
    resource = _clang_resource_dirs()
    if resource:
        candidates.append(["-isystem", resource[0]])
    gcc = _gcc_include_dirs()
    if gcc:
        candidates.append([a for d in gcc for a in ("-isystem", d)])
    for d in _libcxx_dirs():
        candidates.append(["-nostdinc++", "-isystem", d, *(["-isystem", resource[0]] if resource else [])])
    index = cindex.Index.create()
    for args in candidates:
        tu = index.parse(
            "__mgpipe_probe__.cpp",
            args=[*_base(std), *args, *_extra_args()],
            unsaved_files=[("__mgpipe_probe__.cpp", probe)],
        )
        if not any(d.severity >= cindex.Diagnostic.Error for d in tu.diagnostics):
            return tuple(args)
    return tuple(candidates[-1])


def _locate(diag, inc: Path, umbrella: Path, headers: list[str], root: Path) -> GenError:  # type: ignore[no-untyped-def]
    """A clang error as a located HEADER-COMPILE error.

    An error clang can only notice where a construct ran out (an unclosed ``{`` reported at
    the end of the translation unit, in whatever file came next) is located where the
    construct opened: the note clang attaches to it ("to match this '{'").
    """
    loc = diag.location
    for note in diag.children:
        nloc = note.location
        if note.spelling.startswith("to match this") and nloc.file is not None:
            if Path(nloc.file.name).resolve() != umbrella:
                return GenError(_display(nloc.file.name, root), nloc.line, nloc.column,
                                "HEADER-COMPILE",
                                f"{note.spelling.removeprefix('to match this ')} is never closed, "
                                f"{diag.spelling}")
    if loc.file is None:
        return GenError(_display(inc, root), 1, 1, "HEADER-COMPILE", diag.spelling)
    if Path(loc.file.name).resolve() == umbrella:
        header = headers[loc.line - 1] if 0 < loc.line <= len(headers) else UMBRELLA_NAME
        return GenError(_display(inc / header, root), 1, 1, "HEADER-COMPILE", diag.spelling)
    return GenError(_display(loc.file.name, root), loc.line, loc.column, "HEADER-COMPILE", diag.spelling)


PROBE_NAMESPACE = "mgpipe_probe"
#: a generator's previous outputs beside the headers (MobileGL's MG_Pipe/generated/), which
#: the headers include: an error only there means the outputs no longer fit the catalogue
#: (a stale output, HEADER-COMPILE); the layouts are still read, so the gates say why
OUTPUTS_SUBDIR = "generated"
def _parse_with_libclang(include_dir: Path, headers: list[str], root: Path, fp: str,
                         options: Options) -> Layouts:
    from clang import cindex

    from .layout_reader import collect

    inc = include_dir.resolve()
    umbrella = inc / UMBRELLA_NAME
    text = "".join(f'#include "{h}"\n' for h in headers)
    if options.probes:
        text += f"namespace {PROBE_NAMESPACE} {{\n" + "".join(
            f"inline constexpr long long {n} = static_cast<long long>({e});\n" for n, e in options.probes
        ) + "}\n"
    dirs = [f"-I{Path(d).resolve()}" for d in options.include_dirs]
    _SEARCH[:] = sorted((Path(d).resolve() for d in options.include_dirs), key=lambda d: -len(d.parts))
    args = [*_base(options.std), f"-I{inc}", *dirs, *system_args(options.std), *_extra_args()]
    parse_opts = cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD if options.pin_macros else 0
    try:
        tu = cindex.TranslationUnit.from_source(
            str(umbrella), args=args, unsaved_files=[(str(umbrella), text)],
            options=parse_opts
        )
    except cindex.TranslationUnitLoadError as exc:
        raise GenError(_display(inc, root), 1, 1, "HEADER-COMPILE", f"libclang failed: {exc}")
    diags = [d for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
    found = [_locate(d, inc, umbrella, headers, root) for d in diags]
    outputs = inc / OUTPUTS_SUBDIR
    in_outputs = bool(diags) and all(
        d.location.file is not None and Path(d.location.file.name).resolve().is_relative_to(outputs)
        for d in diags)
    if found and not in_outputs:
        if len(found) == 1:
            raise found[0]
        # clang's first error is the root cause; what follows it may be its echo
        raise GenErrors([found[0]], follow_on=found[1:])
    errors = ErrorCollector()
    project = tuple(Path(d).resolve() for d in options.include_dirs)
    structs, enums, constants, pins, values = collect(
        tu, inc, lambda f: _display(f, root), errors, wanted=options.wanted, project_dirs=project,
        pin_macros=options.pin_macros)
    errors.raise_if_any()
    shown = tuple(_display(p, root) for p in _header_files(include_dir))
    return Layouts(structs, enums, constants, shown, fp, pins, values,
                   tuple((e.path, e.line, e.col, e.text) for e in found))


__all__ = [
    "Constant", "Enum", "Enumerator", "FlatMember", "Layouts", "Member", "Struct",
    "Options", "PROBE_NAMESPACE", "cache_dir", "fingerprint", "flatten", "read_headers", "system_args",
]  # fmt: skip
