"""Opcodes cannot be renumbered by editing the lock: the witness in generated/ and git history."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR
from mgpipe.gen.lockhistory import check, removals


@pytest.fixture()
def tree(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(CATALOGUE_DIR, tmp_path / "catalogue")
    shutil.copytree(GENERATED_DIR, tmp_path / "generated")
    return tmp_path / "catalogue", tmp_path / "generated"


def _swap_rows(text: str, a: str, b: str) -> str:
    ra = re.search(rf"^\s*X\({a},.*$", text, re.M).group(0)  # type: ignore[union-attr]
    rb = re.search(rf"^\s*X\({b},.*$", text, re.M).group(0)  # type: ignore[union-attr]
    return text.replace(ra, "\0").replace(rb, ra).replace("\0", rb)


def _drop_lock_rows(lock: Path, *names: str) -> None:
    lock.write_text("".join(line for line in lock.read_text().splitlines(keepends=True)
                            if not any(f"L({n}," in line for n in names)))


def test_swapping_rows_and_unlocking_them_is_refused_naming_both_witnesses(tree, capsys) -> None:
    cat, out = tree
    defs = cat / "PipeCalls.def"
    defs.write_text(_swap_rows(defs.read_text(), "QueryBegin", "QueryEnd"))
    _drop_lock_rows(cat / "PipeCalls.lock", "QueryBegin", "QueryEnd")
    before = (out / "PipeWire.inc").read_bytes()
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if ": LOCK-WITNESS: " in line]
    assert len(lines) == 2 and all(line.startswith("generated/PipeWire.inc:") for line in lines)
    assert "call QueryBegin would move from opcode 13" in err and "to 14" in err
    assert "catalogue/PipeCalls.lock has no row for it" in err
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
    assert (cat / "PipeCalls.lock").read_bytes() == (CATALOGUE_DIR / "PipeCalls.lock").read_bytes()


def test_init_lock_cannot_renumber_what_the_outputs_number(tree, capsys) -> None:
    cat, out = tree
    (cat / "PipeCalls.lock").unlink()
    defs = cat / "PipeCalls.def"
    defs.write_text(_swap_rows(defs.read_text(), "QueryBegin", "QueryEnd"))
    assert cli.main(["gen", "--init-lock", "--catalogue", str(cat), "--out", str(out)]) == 2
    assert "call QueryEnd would move from opcode 14" in capsys.readouterr().err


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def _commit_lock(repo: Path, rows: str, msg: str) -> None:
    lock = repo / "catalogue" / "PipeCalls.lock"
    lock.parent.mkdir(exist_ok=True)
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
    assert all(line.startswith("catalogue/PipeCalls.lock:1:1: LOCK-HISTORY: ") for line in text.splitlines())


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
    lock = tmp_path / "catalogue" / "PipeCalls.lock"
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n" + body)
    _git(tmp_path, "commit", "-qam", "re-base onto MobileGL")
    assert check(tmp_path) == 2
    from mgpipe.gen.lockhistory import rebases, git_log

    (rb,) = rebases(git_log(tmp_path, "catalogue/PipeCalls.lock"))
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
    lock = tmp_path / "catalogue" / "PipeCalls.lock"
    lock.write_text(mark + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "commit", "-qam", "re-base")
    text = _lock_errors(tmp_path)
    assert why in text and "removed L(A, 1)" in text
    assert all(line.startswith("catalogue/PipeCalls.lock:1:1: LOCK-HISTORY: ") for line in text.splitlines())


def test_a_second_rebase_onto_the_same_abi_is_refused(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _commit_lock(tmp_path, "    L(A, 1) \\\n    L(B, 2)\n", "first")
    lock = tmp_path / "catalogue" / "PipeCalls.lock"
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "commit", "-qam", "re-base")
    assert check(tmp_path) == 2
    lock.write_text("#define MGP_CALL_LOCK(L) \\\n    L(A, 1) \\\n    L(B, 2)\n")
    _git(tmp_path, "commit", "-qam", "drop the marker")
    lock.write_text(MARK + "#define MGP_CALL_LOCK(L) \\\n    L(B, 1) \\\n    L(A, 2)\n")
    _git(tmp_path, "commit", "-qam", "re-base again")
    text = _lock_errors(tmp_path)
    assert "re-bases again onto 4ed1c9cef263" in text and "'drop the marker'" in text
