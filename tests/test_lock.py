"""Opcodes cannot be renumbered by editing the lock: the witness in generated/ and git history."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen import CATALOGUE_DIR, ORIGINAL_DIR
from mgpipe.gen.lockhistory import LOCK_PATH, ORIGINAL_LOCK_PATH, check, removals

from conftest import copy_bundled, copy_original  # noqa: E402


@pytest.fixture(params=["bundled", "original"])
def tree(request, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of either tree with its outputs: the bundled catalogue/MG_Pipe (MobileGL's
    opcodes) and the original shape (its own)."""
    return (copy_bundled if request.param == "bundled" else copy_original)(tmp_path)


def _op(cat: Path, name: str) -> int:
    """A call's locked opcode, read from the copy's lock (never typed)."""
    m = re.search(rf"L\({name},\s*(\d+)\)", (cat / "PipeCalls.lock").read_text())
    assert m, name
    return int(m.group(1))


def _swap_rows(text: str, a: str, b: str) -> str:
    ra = re.search(rf"^\s*X\({a},.*$", text, re.M).group(0)  # type: ignore[union-attr]
    rb = re.search(rf"^\s*X\({b},.*$", text, re.M).group(0)  # type: ignore[union-attr]
    return text.replace(ra, "\0").replace(rb, ra).replace("\0", rb)


def _drop_lock_rows(lock: Path, *names: str) -> None:
    lock.write_text("".join(line for line in lock.read_text().splitlines(keepends=True)
                            if not any(f"L({n}," in line for n in names)))


def test_swapping_rows_and_unlocking_them_is_refused_naming_both_witnesses(tree, capsys) -> None:
    cat, out = tree
    begin, end = _op(cat, "QueryBegin"), _op(cat, "QueryEnd")
    defs = cat / "PipeCalls.def"
    defs.write_text(_swap_rows(defs.read_text(), "QueryBegin", "QueryEnd"))
    _drop_lock_rows(cat / "PipeCalls.lock", "QueryBegin", "QueryEnd")
    before = (out / "PipeWire.inc").read_bytes()
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if ": LOCK-WITNESS: " in line]
    assert len(lines) == 2 and all(line.startswith("generated/PipeWire.inc:") for line in lines)
    assert f"call QueryBegin would move from opcode {begin}" in err and f"to {end}" in err
    assert f"{cat.name}/PipeCalls.lock has no row for it" in err
    assert (out / "PipeWire.inc").read_bytes() == before  # nothing was renumbered


def test_a_missing_lock_is_refused_and_init_lock_starts_a_new_catalogue(tree, tmp_path, capsys) -> None:
    cat, out = tree
    (cat / "PipeCalls.lock").unlink()
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(out)]) == 2
    assert "LOCK-MISSING: PipeCalls.lock not found next to existing outputs" in capsys.readouterr().err
    fresh = tmp_path / "fresh"
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(fresh)]) == 2
    assert "`mgpipe gen --init-lock`" in capsys.readouterr().err
    assert cli.main(["gen", "--init-lock", "--catalogue", str(cat), "--out", str(fresh)]) == 0
    committed = ((CATALOGUE_DIR if cat.name == CATALOGUE_DIR.name else ORIGINAL_DIR) / "PipeCalls.lock").read_text()
    # the rows come back as committed; an ABI re-base marker is history, restored only with the
    # lock from version control
    assert (cat / "PipeCalls.lock").read_text() == "".join(
        line for line in committed.splitlines(keepends=True) if not line.startswith("// ABI-REBASE:"))


def test_init_lock_cannot_renumber_what_the_outputs_number(tree, capsys) -> None:
    cat, out = tree
    end = _op(cat, "QueryEnd")
    (cat / "PipeCalls.lock").unlink()
    defs = cat / "PipeCalls.def"
    defs.write_text(_swap_rows(defs.read_text(), "QueryBegin", "QueryEnd"))
    assert cli.main(["gen", "--init-lock", "--catalogue", str(cat), "--out", str(out)]) == 2
    assert f"call QueryEnd would move from opcode {end}" in capsys.readouterr().err


def test_a_reordered_row_of_the_bundled_tree_is_refused_by_name(tmp_path: Path, capsys) -> None:
    """The negative control of the bundled tree's lock: two rows of catalogue/MG_Pipe's
    PipeCalls.def trade places; APPEND-ONLY names both calls and both opcodes, and nothing
    is written."""
    cat, out = copy_bundled(tmp_path)
    begin, end = _op(cat, "QueryBegin"), _op(cat, "QueryEnd")
    defs = cat / "PipeCalls.def"
    defs.write_text(_swap_rows(defs.read_text(), "QueryBegin", "QueryEnd"))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if ": APPEND-ONLY: " in line]
    assert len(lines) == 2 and all(line.startswith("MG_Pipe/PipeCalls.def:") for line in lines), err
    assert f"call QueryEnd is row {begin} but PipeCalls.lock pins opcode {end}" in err
    assert f"call QueryBegin is row {end} but PipeCalls.lock pins opcode {begin}" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_the_bundled_lock_is_read_and_written_by_gen(tmp_path: Path, capsys) -> None:
    """gen keeps the bundled tree's lock (and its one ABI re-base marker) byte for byte,
    appends a new call's row, and a tree without a lock (MobileGL's own) is held to none."""
    cat, out = copy_bundled(tmp_path)
    committed = (CATALOGUE_DIR / "PipeCalls.lock").read_text()
    assert committed.count("// ABI-REBASE: MobileGL MG_Pipe (84 rows) @ ") == 1
    assert cli.main(["gen", "--check", "--catalogue", str(cat), "--out", str(out)]) == 0
    lock = cat / "PipeCalls.lock"
    assert lock.read_text() == committed
    from mgpipe.gen.build import lock_required
    from mgpipe.gen.catalogue import load_catalogue

    assert lock_required(load_catalogue(cat))
    lock.unlink()
    assert lock_required(load_catalogue(cat))  # mgpipe's own tree (its overlay) owes its lock
    (cat / "MGPipeOverlay.h").rename(cat / "Overlay.h.off")  # MobileGL's own tree: no lock owed
    assert not lock_required(load_catalogue(cat))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def _commit_lock(repo: Path, rows: str, msg: str) -> None:
    lock = repo / LOCK_PATH
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("#define MGP_CALL_LOCK(L) \\\n" + rows)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", msg)


def test_history_check_passes_appends_and_realignment_and_refuses_removals(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _commit_lock(tmp_path, "    L(A, 1) \\\n    L(B, 2)\n", "first")
    _commit_lock(tmp_path, "    L(A, 1) \\\n    L(B, 2) \\\n    L(C, 3)\n", "append")
    _commit_lock(tmp_path, "    L(A,  1) \\\n    L(B,  2) \\\n    L(C,  3)\n", "realign")
    assert check(tmp_path) == 3
    _commit_lock(tmp_path, "    L(A,  1) \\\n    L(C,  2)\n", "retire B")
    from mgpipe.gen.errors import GenErrors

    with pytest.raises(GenErrors) as exc:
        check(tmp_path)
    text = str(exc.value)
    assert "removed L(B, 2)" in text and "removed L(C, 3)" in text and "'retire B'" in text
    assert all(line.startswith(f"{LOCK_PATH}:1:1: LOCK-HISTORY: ") for line in text.splitlines())


def test_the_history_check_reads_each_lock_on_its_own(tmp_path: Path, capsys) -> None:
    """ci/run reads the bundled lock and the original shape's: the bundled one's history
    starts at its own first commit (a re-base marker there is accepted once), and a
    removal in the original shape's history is refused under that path, not the other's."""
    from mgpipe.gen.lockhistory import main

    _git(tmp_path, "init", "-q")
    old = tmp_path / ORIGINAL_LOCK_PATH
    old.parent.mkdir(parents=True)
    old.write_text("#define MGP_CALL_LOCK(L) \\\n    L(A, 1) \\\n    L(B, 2)\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "original")
    new = tmp_path / LOCK_PATH
    new.parent.mkdir(parents=True)
    new.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "switch")
    assert main(["--repo", str(tmp_path), LOCK_PATH, ORIGINAL_LOCK_PATH]) == 0
    out = capsys.readouterr().out
    assert f"{LOCK_PATH}: 1 commit read" in out and "ABI re-base" in out
    old.write_text("#define MGP_CALL_LOCK(L) \\\n    L(A, 1)\n")
    _git(tmp_path, "commit", "-qam", "retire B")
    assert main(["--repo", str(tmp_path), LOCK_PATH, ORIGINAL_LOCK_PATH]) == 2
    captured = capsys.readouterr()
    assert f"{LOCK_PATH}: 1 commit read" in captured.out
    assert f"{ORIGINAL_LOCK_PATH}:1:1: LOCK-HISTORY: " in captured.err and "removed L(B, 2)" in captured.err


def test_removals_reads_a_renumbering_as_a_removal() -> None:
    log = "@@commit abc1234 renumber\n-    L(Foo, 13) \\\n+    L(Foo, 14) \\\n"
    (r,) = removals(log)
    assert (r.commit, r.name, r.opcode) == ("abc1234", "Foo", 13)


MARK = "// ABI-REBASE: MobileGL MG_Pipe (84 rows) @ 4ed1c9cef26320aac42ce1e9ec00aed74864a5c2\n"


def _lock_errors(repo: Path) -> str:
    from mgpipe.gen.errors import GenErrors

    with pytest.raises(GenErrors) as exc:
        check(repo)
    return str(exc.value)


def test_a_documented_abi_rebase_may_renumber_once_and_only_in_its_own_commit(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _commit_lock(tmp_path, "    L(A, 1) \\\n    L(B, 2) \\\n    L(C, 3)\n", "first")
    _commit_lock(tmp_path, "    L(B, 1) \\\n    L(A, 2) \\\n    L(C, 3) \\\n    L(D, 4)\n", "re-base")
    # the same renumbering without the marker is refused (the negative control of the marker)
    text = _lock_errors(tmp_path)
    assert "removed L(A, 1)" in text and "removed L(B, 2)" in text and "'re-base'" in text
    _git(tmp_path, "reset", "-q", "--hard", "HEAD~1")
    body = "    L(B, 1) \\\n    L(A, 2) \\\n    L(C, 3) \\\n    L(D, 4)\n"
    lock = tmp_path / LOCK_PATH
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n" + body)
    _git(tmp_path, "commit", "-qam", "re-base onto MobileGL")
    assert check(tmp_path) == 2
    from mgpipe.gen.lockhistory import rebases, git_log

    (rb,) = rebases(git_log(tmp_path, LOCK_PATH))
    assert rb.onto.startswith("4ed1c9ce") and rb.problem is None
    # realigning the lock (marker removed and re-added unchanged) is no second re-base
    lock.write_text("// a note\n" + MARK + "#define MGP_CALL_LOCK(L) \\\n" + body.replace(" 1)", "  1)"))
    _git(tmp_path, "commit", "-qam", "realign")
    assert check(tmp_path) == 3
    # after the re-base the lock is append-only again: the marker licenses nothing later
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n    L(A, 1) \\\n    L(B, 2) \\\n    L(C, 3) \\\n    L(D, 4)\n")
    _git(tmp_path, "commit", "-qam", "renumber later")
    text = _lock_errors(tmp_path)
    assert "'renumber later'" in text and "removed L(B, 1)" in text and "'re-base onto MobileGL'" not in text


@pytest.mark.parametrize("mark, why", [
    ("// ABI-REBASE: MobileGL\n", "malformed marker"),
    ("// ABI-REBASE: MobileGL @ 4ed1c9ce\n", "malformed marker"),
    (MARK + MARK.replace("84 rows", "again"), "2 ABI-REBASE markers"),
])
def test_a_malformed_or_doubled_rebase_marker_licenses_nothing(tmp_path: Path, mark: str, why: str) -> None:
    _git(tmp_path, "init", "-q")
    _commit_lock(tmp_path, "    L(A, 1) \\\n    L(B, 2)\n", "first")
    lock = tmp_path / LOCK_PATH
    lock.write_text(mark + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "commit", "-qam", "re-base")
    text = _lock_errors(tmp_path)
    assert why in text and "removed L(A, 1)" in text
    assert all(line.startswith(f"{LOCK_PATH}:1:1: LOCK-HISTORY: ") for line in text.splitlines())


def test_a_second_rebase_onto_the_same_abi_is_refused(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _commit_lock(tmp_path, "    L(A, 1) \\\n    L(B, 2)\n", "first")
    lock = tmp_path / LOCK_PATH
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "commit", "-qam", "re-base")
    assert check(tmp_path) == 2
    lock.write_text("#define MGP_CALL_LOCK(L) \\\n    L(A, 1) \\\n    L(B, 2)\n")
    _git(tmp_path, "commit", "-qam", "drop the marker")
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "commit", "-qam", "re-base again")
    text = _lock_errors(tmp_path)
    assert "re-bases again onto 4ed1c9cef263" in text and "'drop the marker'" in text
