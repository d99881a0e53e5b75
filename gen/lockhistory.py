"""The lock's history is append-only too: no commit ever removed or changed a lock row.

``python -m mgpipe.gen.lockhistory [--repo DIR] [PATH]`` reads ``git log -p`` of the lock
(default ``catalogue/PipeCalls.lock``) and refuses (exit 2, one ``LOCK-HISTORY`` line per
row) every ``L(Name, opcode)`` a commit removed without adding back the same pair -- a
deleted row, or a row whose opcode changed. Realigning the columns removes and re-adds the
same pairs, so it passes. ``ci/run`` runs it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mgpipe.gen.errors import GenError, GenErrors, exit_code_for

LOCK_PATH = "catalogue/PipeCalls.lock"
_ROW = re.compile(r"^([+-])\s*L\(\s*([A-Za-z_]\w*)\s*,\s*(\d+)\s*\)")
_COMMIT = "@@commit "


@dataclass(frozen=True)
class Removal:
    commit: str
    subject: str
    name: str
    opcode: int


def removals(log: str) -> list[Removal]:
    """Every (name, opcode) pair a commit of ``log`` removed and did not add back."""
    out: list[Removal] = []
    commit, subject = "", ""
    minus: set[tuple[str, int]] = set()
    plus: set[tuple[str, int]] = set()

    def close() -> None:
        for name, op in sorted(minus - plus, key=lambda x: x[1]):
            out.append(Removal(commit, subject, name, op))

    for line in log.splitlines():
        if line.startswith(_COMMIT):
            close()
            commit, _, subject = line[len(_COMMIT):].partition(" ")
            minus, plus = set(), set()
            continue
        if line.startswith(("---", "+++")):
            continue
        m = _ROW.match(line)
        if m:
            (minus if m.group(1) == "-" else plus).add((m.group(2), int(m.group(3))))
    close()
    return out


def git_log(repo: Path, path: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), "log", "-p", "--no-color", "--no-ext-diff", "-U0",
         f"--format={_COMMIT}%h %s", "--", path],
        capture_output=True, text=True, errors="replace",
    )
    if proc.returncode != 0:
        raise GenError(path, 1, 1, "LOCK-HISTORY",
                       f"git log failed ({proc.stderr.strip() or proc.returncode}), expected a git "
                       f"checkout whose history holds {path}")
    return proc.stdout


def check(repo: Path, path: str = LOCK_PATH) -> int:
    """Number of commits read; raises the LOCK-HISTORY refusals."""
    log = git_log(repo, path)
    bad = removals(log)
    if bad:
        raise GenErrors([GenError(path, 1, 1, "LOCK-HISTORY",
                                  f"commit {r.commit} ({r.subject!r}) removed L({r.name}, {r.opcode}): "
                                  f"opcodes are forever, expected the row kept (a retired call keeps "
                                  f"its row and its opcode)") for r in bad])
    return log.count(_COMMIT)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mgpipe.gen.lockhistory", description=__doc__)
    p.add_argument("path", nargs="?", default=LOCK_PATH)
    p.add_argument("--repo", type=Path, default=Path("."))
    args = p.parse_args(argv)
    try:
        n = check(args.repo, args.path)
    except (GenError, GenErrors) as exc:
        return exit_code_for(exc)
    print(f"{args.path}: {n} commit{'s' if n != 1 else ''} read, no lock row ever removed or renumbered")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["LOCK_PATH", "Removal", "check", "main", "removals"]
