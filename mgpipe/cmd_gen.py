"""`mgpipe gen`: regenerate every output; `--check` regenerates in memory and diffs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mgpipe.gen.errors import GenError

# The generator itself (mgpipe.gen.build: lark, pydantic, libclang, Jinja2) is imported by
# the functions that build, never at import: `mgpipe --help` / `--version` register this
# command without it, and a warm `gen --check` answers without it (mgpipe.gen.warm).

EXIT_STALE = 1


def default_catalogue() -> Path:
    """./catalogue/MG_Pipe (a checkout's bundled tree), else ./catalogue, else the bundled one."""
    from mgpipe.gen import CATALOGUE_DIR

    for here in (Path("catalogue") / "MG_Pipe", Path("catalogue")):
        if (here / "PipeCalls.def").is_file():
            return here
    return CATALOGUE_DIR


def add_catalogue_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--catalogue", type=Path, default=None, metavar="DIR",
                   help="catalogue directory (default: ./catalogue/MG_Pipe, else ./catalogue, else the bundled one)")
    p.add_argument("--all-errors", action="store_true",
                   help="print the follow-on errors of a root cause too (default: count them)")
    p.add_argument("-I", dest="include_dirs", action="append", type=Path, default=None, metavar="DIR",
                   help="a directory the headers' #includes are searched in, in order (repeatable; "
                        "default: the catalogue's parent). MobileGL's tree: -I MobileGL plus its "
                        "third-party and stub directories; MGPIPE_CLANG_ARGS adds compiler flags")


    p.add_argument("--skip-gate", dest="skip_gates", action="append", default=None, metavar="GROUP",
                   help="run without one gate group (repeatable), e.g. a tree whose lists come from "
                        "different commits; said on stderr every time, never silent")


def skipped_of(args: argparse.Namespace) -> frozenset[str]:
    """The gate groups the command line switches off (named on stderr, refused if unknown)."""
    skip = frozenset(getattr(args, "skip_gates", None) or ())
    if not skip:
        return skip
    from mgpipe.gen.selftest import GATE_GROUPS

    unknown = sorted(skip - set(GATE_GROUPS))
    if unknown:
        raise GenError("<command line>", 1, 1, "UNKNOWN-GATE",
                       f"no gate group {unknown[0]!r}, expected one of {', '.join(GATE_GROUPS)}")
    if skip:
        print(f"mgpipe: NOT run: gate group(s) {', '.join(sorted(skip))} (--skip-gate)", file=sys.stderr)
    return skip


def include_dirs_of(args: argparse.Namespace) -> tuple[Path, ...] | None:
    """The ``-I`` directories as given (None: the catalogue's parent)."""
    dirs = getattr(args, "include_dirs", None)
    return tuple(dirs) if dirs else None


def build_of(args: argparse.Namespace, **kw):  # type: ignore[no-untyped-def]
    """The model of the catalogue and include directories the command line names."""
    from mgpipe.gen.build import build

    return build(catalogue_of(args), include_dirs=include_dirs_of(args), disabled=skipped_of(args), **kw)


def catalogue_of(args: argparse.Namespace) -> Path:
    return args.catalogue if args.catalogue is not None else default_catalogue()


def planned_files(catalogue: Path, out: Path, init_lock: bool = False,
                  include_dirs: tuple[Path, ...] | None = None,
                  disabled: frozenset[str] = frozenset()) -> dict[Path, str]:
    """Every file a generation owns -> its expected content."""
    from mgpipe.gen.build import LOCK_FILE, build
    from mgpipe.gen.lock import LockPolicy
    from mgpipe.gen.render import render_all

    built = build(catalogue, lock=LockPolicy(out, init_lock), include_dirs=include_dirs,
                  disabled=disabled)
    files = {out / o.name: o.text for o in render_all(built.model)}
    if built.lock_text:
        files[catalogue / LOCK_FILE] = built.lock_text
    return files


def shown(path: Path) -> str:
    """An owned file as messages name it: ``<its directory's name>/<file>``, from any cwd."""
    from mgpipe.gen.catalogue import display

    return display(path, path.parent)


def check_out_dir(out: Path, must_exist: bool) -> None:
    """Refuse an output directory that is a file (or, for --check, that does not exist)."""
    if out.exists() and not out.is_dir():
        raise GenError(str(out), 1, 1, "OUT-DIR", "--out names a file, expected a directory")
    if must_exist and not out.is_dir():
        raise GenError(str(out), 1, 1, "OUT-DIR",
                       "--out does not exist, so there is nothing to check, expected "
                       "the directory `mgpipe gen --out` wrote")


def check(files: dict[Path, str], stream=None) -> list[Path]:  # type: ignore[no-untyped-def]
    import difflib

    from mgpipe.gen.catalogue import display

    stream = stream if stream is not None else sys.stdout
    stale = []
    for path, text in files.items():
        current = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        shown = display(path, path.parent)
        why = "missing" if current is None else "stale"
        print(f"{shown}: STALE: generated file is {why}, expected the output of `mgpipe gen`", file=stream)
        diff = difflib.unified_diff(
            (current or "").splitlines(keepends=True), text.splitlines(keepends=True),
            fromfile=f"a/{shown}", tofile=f"b/{shown}", n=2,
        )
        stream.writelines(diff)
    return stale


def default_out(catalogue: Path) -> Path:
    """Where ``gen`` writes without ``--out``: the bundled tree's outputs are the package
    ``mgpipe.generated`` (``generated/`` at a checkout's root, spelt as the catalogue was);
    another MobileGL-shaped tree keeps them in its own ``generated/`` (where MobileGL's build
    finds them); the original shape beside its directory - except the original shape
    ``mgpipe.gen.ORIGINAL_DIR``, whose neighbour ``generated/`` holds the bundled tree's
    outputs, not its own: it is refused without ``--out`` (OUT-DIR) rather than overwrite them."""
    from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR

    checkout = catalogue.parent.parent  # a checkout's catalogue/MG_Pipe: its root's generated/
    if (catalogue.name == "MG_Pipe" and catalogue.parent.name == "catalogue"
            and (checkout / "generated" / "__init__.py").is_file()):
        return checkout / "generated"
    if catalogue.resolve() == CATALOGUE_DIR.resolve():
        return GENERATED_DIR
    if (catalogue / "PayloadSizes.def").is_file():
        beside = catalogue.parent / "generated"
        if beside.resolve() == GENERATED_DIR.resolve() and CATALOGUE_DIR.resolve() != catalogue.resolve():
            raise GenError(str(beside), 1, 1, "OUT-DIR",
                           f"{beside} holds the outputs of the bundled catalogue "
                           f"({CATALOGUE_DIR.parent.name}/{CATALOGUE_DIR.name}), "
                           f"not of the original-shape catalogue {catalogue}, expected --out DIR for its own")
        return beside
    return catalogue / "generated"


def run(args: argparse.Namespace) -> int:
    catalogue = catalogue_of(args)
    out = args.out if args.out is not None else default_out(catalogue)
    fell_back = args.catalogue is None and not any((d / "PipeCalls.def").is_file()
                                                   for d in (Path("catalogue") / "MG_Pipe", Path("catalogue")))
    where = (" (the bundled catalogue: there is no ./catalogue here; --catalogue DIR names another)"
             if fell_back else "")
    check_out_dir(out, must_exist=args.check)
    disabled, dirs = skipped_of(args), include_dirs_of(args)
    warm_key = _warm_key(catalogue, out, dirs, disabled, args.init_lock)
    if args.check and warm_key is not None:
        from mgpipe.gen import warm

        count = warm.lookup(warm_key)
        if count is not None:  # nothing the last clean check read has changed
            print(f"catalogue {catalogue}{where} -> {out}")
            print(f"{count} generated files up to date")
            return 0
    files = planned_files(catalogue, out, init_lock=args.init_lock, include_dirs=dirs,
                          disabled=disabled)  # fmt: skip
    print(f"catalogue {catalogue}{where} -> {out}")  # once read: a refusal stays its one line
    if args.check:
        stale = check(files)
        if stale:
            print(f"{len(stale)} of {len(files)} generated files are stale; run `mgpipe gen`", file=sys.stderr)
            return EXIT_STALE
        _remember(warm_key, catalogue, out, dirs, disabled, args.init_lock, files)
        print(f"{len(files)} generated files up to date")
        return 0
    written = 0
    for path, text in files.items():
        if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += 1
        print(f"wrote {shown(path)}")
    # the tree as written is what the next check reads: its key, taken now
    _remember(_warm_key(catalogue, out, dirs, disabled, args.init_lock), catalogue, out, dirs,
              disabled, args.init_lock, files)  # fmt: skip
    print(f"{len(files)} generated files, {written} written")
    return 0


def _warm_key(catalogue: Path, out: Path, dirs: tuple[Path, ...] | None,
              disabled: frozenset[str], init_lock: bool) -> str | None:  # fmt: skip
    """The warm check's key of these inputs (mgpipe.gen.warm); None: not a directory."""
    from mgpipe.gen import warm
    from mgpipe.gen.shape import is_mobilegl_tree

    if not catalogue.is_dir():
        return None
    return warm.key(catalogue, out, dirs, is_mobilegl_tree(catalogue), disabled, init_lock)


def _remember(before: str | None, catalogue: Path, out: Path, dirs: tuple[Path, ...] | None,
              disabled: frozenset[str], init_lock: bool, files: dict[Path, str]) -> None:  # fmt: skip
    """Record a clean answer, when the inputs read now are those the build read (an input
    edited while it ran leaves no entry)."""
    from mgpipe.gen import warm

    if before is not None and _warm_key(catalogue, out, dirs, disabled, init_lock) == before:
        warm.record(before, files)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("gen", help="regenerate G1-G8 and the Python tables from the catalogue")
    add_catalogue_arg(p)
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="output directory (default: the bundled tree's generated/ package; another MobileGL-shaped "
                        "tree's own generated/; generated/ beside an original-shape catalogue)")
    p.add_argument("--check", action="store_true",
                   help="regenerate in memory; exit 1 naming each stale file with a unified diff")
    p.add_argument("--init-lock", action="store_true",
                   help="start a new catalogue: write PipeCalls.lock where there is none "
                        "(a missing lock is otherwise refused)")
    p.set_defaults(func=run)
