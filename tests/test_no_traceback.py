"""No input ever gives a traceback: every damaged file is a located refusal, root cause first.

Every input of the bundled catalogue (catalogue/MG_Pipe: its .def lists, its headers, its
PipeCalls.lock) is damaged in turn, in a copy that holds the tree's includes beside it."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen import CATALOGUE_DIR

from conftest import copy_bundled  # noqa: E402

INPUTS = sorted([p.name for p in CATALOGUE_DIR.glob("*.def")] + ["PipeCalls.lock"]
                + [p.name for p in CATALOGUE_DIR.glob("*.h")])
ROOT = CATALOGUE_DIR.name  # how messages spell the tree (its directory's name)
MAX_LINES = 3  # the root cause, perhaps a second one, and the follow-on count


def _random_bytes(text: bytes) -> bytes:
    rng = random.Random(len(text))
    data = bytearray(text)
    for _ in range(12):  # scatter bytes that are not UTF-8 (and some that are) through the file
        data[rng.randrange(len(data))] = rng.choice([0x80, 0xC3, 0xFF, 0xFE, 0x00, 0x7B, 0x28])
    return bytes(data)


DAMAGE = {
    "random-bytes": _random_bytes,
    "bom-only": lambda _text: b"\xef\xbb\xbf",
    "utf-16": lambda text: text.decode("utf-8").encode("utf-16"),
    "empty": lambda _text: b"",
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    copy_bundled(root)
    return root


def test_every_input_of_the_tree_is_damaged() -> None:
    assert "PipeCalls.def" in INPUTS and "MGPipeTypes.h" in INPUTS and "MGPipeOverlay.h" in INPUTS
    assert (CATALOGUE_DIR / "PipeCalls.lock").is_file()


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("name", INPUTS)
def test_a_damaged_input_is_one_located_refusal(
        name: str, damage: str, pristine: Path, tmp_path: Path, capsys) -> None:
    shutil.copytree(pristine, tmp_path / "t")
    cat = tmp_path / "t" / "catalogue" / ROOT
    target = cat / name
    target.write_bytes(DAMAGE[damage](target.read_bytes()))
    rc = cli.main(["gen", "--check", "--catalogue", str(cat), "--out", str(tmp_path / "t" / "generated")])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.splitlines()
    assert 1 <= len(lines) <= MAX_LINES, err
    assert lines[0].startswith(f"{ROOT}/"), err
    assert "Traceback" not in err
    short = name.rsplit("/", 1)[-1]
    # an empty header is legal C++: the root cause is then where its names are missed
    if not name.endswith(".h") or damage in ("random-bytes", "utf-16"):
        assert short in lines[0], f"the root cause should name {short}: {err}"


@pytest.mark.parametrize("setup, first", [
    ("no-catalogue", "CATALOGUE-MISSING: catalogue directory not found"),
    ("no-headers", f"HEADER-MISSING: {ROOT} holds no *.h header beside its .def files"),
    ("empty-calls", "DEF-SHAPE: PipeCalls.def defines no MGP_CALL_LIST list (the file is empty)"),
    ("unclosed-struct", "HEADER-COMPILE: '{' is never closed"),
])
def test_the_root_cause_comes_first_and_its_echoes_are_counted(
        setup: str, first: str, pristine: Path, tmp_path: Path, capsys) -> None:
    shutil.copytree(pristine, tmp_path / "t")
    cat = tmp_path / "t" / "catalogue" / ROOT
    if setup == "no-catalogue":
        shutil.rmtree(cat)
    elif setup == "no-headers":
        for h in cat.glob("*.h"):
            h.unlink()
    elif setup == "empty-calls":
        (cat / "PipeCalls.def").write_text("")
    else:
        hdr = cat / "MGPipeTypes.h"  # cut after MGPFlush's members: its '{' is never closed
        text, old = hdr.read_text(), "struct MGPFlush {\n        Uint32 Flags;\n        Uint32 Pad0;\n"
        assert text.count(old) == 1
        hdr.write_text(text[:text.index(old) + len(old)])
    argv = ["gen", "--catalogue", str(cat), "--out", str(tmp_path / "o")]
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert first in lines[0]
    if setup == "unclosed-struct":
        assert lines[0].startswith(f"{ROOT}/MGPipeTypes.h:")
    if setup != "no-catalogue":
        assert len(lines) == 2 and lines[1].startswith("... and ")
        assert lines[1].endswith(" follow-on errors; --all-errors shows them")
        assert cli.main([*argv, "--all-errors"]) == 2
        every = capsys.readouterr().err.splitlines()
        assert len(every) == int(lines[1].split()[2]) + 1
        for line in every:  # every "expected one of" names at least one thing
            assert not line.rstrip().endswith("one of") and "one of ," not in line, line


def test_gen_check_out_is_refused_like_gen_out(tmp_path: Path, capsys) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x")
    for out, why in ((a_file, "names a file"), (tmp_path / "missing", "does not exist")):
        assert cli.main(["gen", "--check", "--out", str(out)]) == 2
        err = capsys.readouterr()
        assert err.out == "" and err.err.count("\n") == 1 and f": OUT-DIR: --out {why}" in err.err
    assert cli.main(["gen", "--out", str(a_file)]) == 2
    assert ": OUT-DIR: --out names a file" in capsys.readouterr().err


def test_self_test_on_a_missing_catalogue_is_one_refusal(tmp_path: Path, capsys) -> None:
    assert cli.main(["self-test", "--catalogue", str(tmp_path / "nope")]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1 and ": CATALOGUE-MISSING: " in out.err


def test_layout_suggests_the_closest_names_and_lists_them_without_a_struct(capsys) -> None:
    assert cli.main(["layout", "RenderStateParameter"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("<command line>:1:1: UNKNOWN-STRUCT: no struct named 'RenderStateParameter', "
                          "expected the closest: RenderStateParameters")
    assert cli.main(["layout"]) == 0
    names = capsys.readouterr().out.split()
    assert "RenderStateParameters" in names and names == sorted(names)


def test_version_flag(capsys) -> None:
    import mgpipe

    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"mgpipe {mgpipe.__version__}"


@pytest.mark.parametrize("argv, gate", [
    (["run", "no-such-scene"], "UNKNOWN-SCENE"),
    (["run", "all", "--backend", "no-such-backend"], "UNKNOWN-BACKEND"),
    (["run", "all", "-n", "-1"], "BAD-ARGUMENT"),
])
def test_run_refusals_are_one_located_line(argv: list[str], gate: str, capsys) -> None:
    assert cli.main(argv) == 2
    out = capsys.readouterr()
    assert out.err.startswith(f"<command line>:1:1: {gate}: ") and out.err.count("\n") == 1
    assert ", expected " in out.err
