"""The generator's warm path (issue 20): a warm ``gen --check`` answers from the inputs'
fingerprint without building the model, and any edited input -- the catalogue, a header
of an include directory outside it, an output -- builds again and the gate or the stale
check fires; `mgpipe --version` / `--help` import nothing heavy. Each check has a planted
control: a warm key that forgets an input answers "up to date" on the edited tree, and the
test's own detector names it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mgpipe import cli, cmd_gen
from mgpipe.gen import warm

from conftest import copy_bundled

#: what building the model imports (parser, model, libclang, templates): none of them on
#: the warm path, nor for --version / --help
HEAVY = ("mgpipe.gen.build", "mgpipe.gen.catalogue", "mgpipe.gen.selftest", "lark", "pydantic",
         "clang", "jinja2", "black", "numpy", "importlib.metadata")  # fmt: skip


@pytest.fixture(scope="module")
def layout_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """libclang's layouts, shared by this file's tests (one cold parse per header set)."""
    return tmp_path_factory.mktemp("layouts")


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout_dir: Path):
    """A copy of the bundled tree and its outputs, a private cache, and a counter of the
    full builds (``cmd_gen.planned_files``: the model built, the gates run)."""
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MGPIPE_LAYOUT_CACHE_DIR", str(layout_dir))
    cat, out = copy_bundled(tmp_path)
    builds: list[Path] = []
    planned = cmd_gen.planned_files

    def counting(catalogue, *a, **kw):  # type: ignore[no-untyped-def]
        builds.append(catalogue)
        return planned(catalogue, *a, **kw)

    monkeypatch.setattr(cmd_gen, "planned_files", counting)
    return cat, out, builds


def _check(cat: Path, out: Path, capsys) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    rc = cli.main(["gen", "--check", "--catalogue", str(cat), "--out", str(out)])
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_a_warm_check_answers_without_building_and_prints_the_same(tree, capsys) -> None:
    cat, out, builds = tree
    cold = _check(cat, out, capsys)
    assert cold[0] == 0 and len(builds) == 1, cold
    again = _check(cat, out, capsys)
    assert again == cold and len(builds) == 1  # answered from the fingerprint
    assert re.search(r"^\d+ generated files up to date$", again[1], re.M)


def test_the_warm_check_imports_nothing_heavy(tree, tmp_path: Path) -> None:
    """In a fresh interpreter: the warm answer, then which heavy modules were imported."""
    cat, out, _ = tree
    code = ("import sys; from mgpipe.cli import main; "
            f"rc = main(['gen', '--check', '--catalogue', {str(cat)!r}, '--out', {str(out)!r}]); "
            f"print('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules)); sys.exit(rc)")  # fmt: skip
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ), cwd=tmp_path, timeout=300) for _ in range(2)]  # fmt: skip
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    cold, hot = (r.stdout.splitlines()[-1] for r in runs)
    assert cold != "HEAVY []"  # the control: the cold check did build (and imports them)
    assert hot == "HEAVY []", hot


def _swap_query_rows(cat: Path) -> None:
    defs = cat / "PipeCalls.def"
    text = defs.read_text()
    ra = re.search(r"^\s*X\(QueryBegin,.*$", text, re.M).group(0)  # type: ignore[union-attr]
    rb = re.search(r"^\s*X\(QueryEnd,.*$", text, re.M).group(0)  # type: ignore[union-attr]
    defs.write_text(text.replace(ra, "\0").replace(rb, ra).replace("\0", rb))


def _touch_output(out: Path) -> None:
    f = out / "PipeWire.inc"
    f.write_text(f.read_text() + "// edited by hand\n")


def _comment_in_include_dir(cat: Path) -> None:
    h = cat.parent / "MG_Util" / "Types.h"  # an include directory beside the catalogue
    h.write_text("// a comment: the headers' text changed, the layouts did not\n" + h.read_text())


#: edit -> (exit status, what the full check says); the gate's name for a planted defect
EDITS = {
    "catalogue": (_swap_query_rows, 2, r"PipeCalls\.def:\d+:\d+: APPEND-ONLY: call QueryBegin "),
    "output": (_touch_output, 1, r"PipeWire\.inc: STALE: "),
    "include-dir": (_comment_in_include_dir, 0, r"generated files up to date"),
}


def _edited_input_rebuilds(cat: Path, out: Path, builds: list, capsys, edit: str) -> list[str]:  # type: ignore[no-untyped-def]
    """What is wrong with the check after a warm answer and then ``edit`` (empty: it
    rebuilt and said what a full check says)."""
    plant, rc_want, said = EDITS[edit]
    assert _check(cat, out, capsys)[0] == 0 and _check(cat, out, capsys)[0] == 0
    n = len(builds)
    plant(cat if edit != "output" else out)
    rc, text, err = _check(cat, out, capsys)
    problems = []
    if len(builds) != n + 1:
        problems.append("answered from the cache after an input changed")
    if rc != rc_want or not re.search(said, text + err):
        problems.append(f"exit {rc} (expected {rc_want}) and {said!r} not in {(text + err)[-300:]!r}")
    return problems


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_input_builds_again_and_the_gate_fires(tree, capsys, edit: str) -> None:
    cat, out, builds = tree
    assert _edited_input_rebuilds(cat, out, builds, capsys, edit) == []


@pytest.mark.parametrize("edit,forgotten", [("catalogue", ("catalogue", "include")),
                                            ("include-dir", ("include",))])  # fmt: skip
def test_planted_key_that_forgets_an_input_is_caught(tree, capsys, monkeypatch, edit: str,
                                                     forgotten: tuple[str, ...]) -> None:  # fmt: skip
    """The control: a warm key blind to the catalogue (which a MobileGL-shaped tree's
    include directory, its parent, also holds) or to the include directories answers "up
    to date" on the edited tree, and the detector above says so."""
    cat, out, builds = tree
    tree_hash = warm._tree

    def blind(h, tag: str, root: Path) -> None:
        if not tag.startswith(forgotten):
            tree_hash(h, tag, root)

    monkeypatch.setattr(warm, "_tree", blind)
    problems = _edited_input_rebuilds(cat, out, builds, capsys, edit)
    assert "answered from the cache after an input changed" in problems


def test_a_generator_source_change_is_a_new_key(tmp_path: Path, monkeypatch) -> None:
    """The generator's own files are inputs: one byte more in one of them, another key
    (here a copy of the package directories stands in for the installed generator)."""
    import shutil

    dirs = []
    for i, d in enumerate(warm._generator_dirs()):
        dirs.append(shutil.copytree(d, tmp_path / f"g{i}", ignore=shutil.ignore_patterns("__pycache__")))
    monkeypatch.setattr(warm, "_generator_dirs", lambda: dirs)
    cat, out = copy_bundled(tmp_path / "t")
    k0 = warm.key(cat, out, None, True, frozenset(), False)
    assert warm.key(cat, out, None, True, frozenset(), False) == k0  # deterministic
    (dirs[0] / "render.py").write_text((dirs[0] / "render.py").read_text() + "\n")
    assert warm.key(cat, out, None, True, frozenset(), False) != k0


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["gen", "--help"]])
def test_version_and_help_import_nothing_heavy(argv: list[str]) -> None:
    code = ("import sys\nfrom mgpipe.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "print('HEAVY', sorted(m for m in %r if m in sys.modules))" % (argv, HEAVY))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines()[-1] == "HEAVY []", r.stdout + r.stderr
    if argv == ["--version"]:
        from importlib import metadata

        assert r.stdout.splitlines()[0] == f"mgpipe {metadata.version('mgpipe')}"


def test_planted_heavy_import_in_a_command_module_is_named(tmp_path: Path) -> None:
    """The control: a command module that imports the generator at registration shows up in
    the same probe (here a planted module put first in COMMAND_MODULES)."""
    (tmp_path / "cmd_planted.py").write_text("import mgpipe.gen.build\n\ndef register(sub):\n    pass\n")
    code = ("import sys\nsys.path.insert(0, %r)\nfrom mgpipe import cli\n"
            "cli.COMMAND_MODULES = ('cmd_planted',) + cli.COMMAND_MODULES\n"
            "try:\n    cli.main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print('HEAVY', sorted(m for m in %r if m in sys.modules))" % (str(tmp_path), HEAVY))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "'mgpipe.gen.build'" in r.stdout.splitlines()[-1], r.stdout + r.stderr


# -- self-test's shared parsed base: .def files parsed once per process, keyed by content --
def _memo_problems(parse) -> list[str]:  # type: ignore[no-untyped-def]
    """What is wrong with ``parse`` as a memo of the .def parser (empty: sound)."""
    from mgpipe.gen import CATALOGUE_DIR
    from mgpipe.gen.defparse import _parse_def_file
    from mgpipe.gen.errors import GenError, GenErrors

    problems = []
    defs = sorted(CATALOGUE_DIR.glob("*.def"))
    for f in defs:
        text = f.read_text(encoding="utf-8")
        if parse(text, f"MG_Pipe/{f.name}") != _parse_def_file(text, f"MG_Pipe/{f.name}"):
            problems.append(f"{f.name}: a memo hit differs from a fresh parse")
    calls = (CATALOGUE_DIR / "PipeCalls.def").read_text(encoding="utf-8")
    first = parse(calls, "MG_Pipe/PipeCalls.def")
    edited = calls.replace("X(QueryBegin,", "X(QueryBegun,", 1)
    if parse(edited, "MG_Pipe/PipeCalls.def") == first:
        problems.append("an edited text under the same name answered the unedited parse")
    broken = calls + "\nX(Unclosed,\n"
    for _ in range(2):  # refused each time: a refusal is never kept
        try:
            parse(broken, "MG_Pipe/PipeCalls.def")
            problems.append("a file that does not parse was answered")
        except (GenError, GenErrors):
            pass
    return problems


def test_the_def_parse_memo_answers_only_the_same_text() -> None:
    from mgpipe.gen.defparse import parse_def_file

    assert _memo_problems(parse_def_file) == []
    from mgpipe.gen import CATALOGUE_DIR

    calls = (CATALOGUE_DIR / "PipeCalls.def").read_text(encoding="utf-8")
    assert parse_def_file(calls, "x/PipeCalls.def") is parse_def_file(calls, "x/PipeCalls.def")


def test_planted_memo_keyed_by_name_only_is_caught() -> None:
    """The control: a memo that keys on the file's name alone (a plant's edit unseen)."""
    from mgpipe.gen.defparse import _parse_def_file

    by_name: dict[str, object] = {}

    def planted(text: str, shown: str):  # type: ignore[no-untyped-def]
        if shown not in by_name:
            by_name[shown] = _parse_def_file(text, shown)
        return by_name[shown]

    assert "an edited text under the same name answered the unedited parse" in _memo_problems(planted)
