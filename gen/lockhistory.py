"""The lock's history is append-only too: no commit ever removed or changed a lock row.

``python -m mgpipe.gen.lockhistory [--repo DIR] [PATH ...]`` reads ``git log -p`` of each
lock (default the bundled tree's, ``catalogue/MG_Pipe/PipeCalls.lock``; ``ci/run`` also reads
the original shape's ``catalogue/PipeCalls.lock``, which stays append-only on its own
numbering) and refuses (exit 2, one ``LOCK-HISTORY`` line per
row) every ``L(Name, opcode)`` a commit removed without adding back the same pair -- a
deleted row, or a row whose opcode changed. Realigning the columns removes and re-adds the
same pairs, so it passes. ``ci/run`` runs it.

One kind of commit may renumber: an ABI re-base, which re-pins the whole lock onto another
catalogue's opcodes once (the bundled catalogue moving onto MobileGL's own MGPipe ABI). Such
a commit adds exactly one marker line to the lock,

    // ABI-REBASE: <what the lock was re-based on> @ <40-hex commit of that ABI>

and its removals are accepted; the marker stays in the lock as the record of it. Every other
commit is held to append-only as before, including every later one (a marker a commit did
not add licenses nothing). A malformed marker, two markers in one commit, or a second
re-base onto a commit the history has already re-based on are refused (LOCK-HISTORY).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mgpipe.gen.errors import GenError, GenErrors, exit_code_for

#: the bundled tree's lock (since the switch to MobileGL's ABI: its history starts with the
#: re-base commit, whose marker records it) and the original shape's (kept, its own history)
LOCK_PATH = "catalogue/MG_Pipe/PipeCalls.lock"
ORIGINAL_LOCK_PATH = "catalogue/PipeCalls.lock"
_ROW = re.compile(r"^([+-])\s*L\(\s*([A-Za-z_]\w*)\s*,\s*(\d+)\s*\)")
_COMMIT = "@@commit "
#: an added line that opens a re-base marker, and the whole well-formed marker
_MARK = re.compile(r"^[+-]\s*//\s*ABI-REBASE\b")
_MARK_OK = re.compile(r"^\+\s*//\s*ABI-REBASE:\s*(?P<what>\S.*?)\s+@\s+(?P<commit>[0-9a-f]{40})\s*$")


@dataclass(frozen=True)
class Removal:
    commit: str
    subject: str
    name: str
    opcode: int


@dataclass(frozen=True)
class Rebase:
    commit: str
    subject: str
    onto: str  # the ABI's commit the lock was re-based on ("" when the marker is malformed)
    what: str
    problem: str | None = None  # why the marker does not license the commit


def _scan(log: str) -> tuple[list[Removal], list[Rebase]]:
    """``log`` (newest commit first, as git prints it) -> the removals that no re-base
    licenses, and every re-base marker seen (with its problem, if any)."""
    commits: list[tuple[str, str, set[tuple[str, int]], set[tuple[str, int]], list[str]]] = []
    gone: list[str] = []  # markers the commit being read removed (a rewrite re-adds them)
    for line in log.splitlines():
        if line.startswith(_COMMIT):
            commit, _, subject = line[len(_COMMIT):].partition(" ")
            commits.append((commit, subject, set(), set(), []))
            gone = []
            continue
        if not commits or line.startswith(("---", "+++")):
            continue
        if _MARK.match(line):
            if line.startswith("-"):
                gone.append(line[1:].strip())
                commits[-1][4][:] = [m for m in commits[-1][4] if m[1:].strip() != line[1:].strip()]
            elif line[1:].strip() not in gone:
                commits[-1][4].append(line)
            continue
        m = _ROW.match(line)
        if m:
            commits[-1][2 if m.group(1) == "-" else 3].add((m.group(2), int(m.group(3))))
    out: list[Removal] = []
    rebases: list[Rebase] = []
    onto_seen: set[str] = set()
    for commit, subject, minus, plus, marks in reversed(commits):  # oldest first
        licensed = False
        if marks:
            got = _MARK_OK.match(marks[0])
            if len(marks) > 1:
                rb = Rebase(commit, subject, "", "", f"adds {len(marks)} ABI-REBASE markers, "
                            f"expected one re-base per commit")
            elif got is None:
                rb = Rebase(commit, subject, "", "", f"adds a malformed marker {marks[0][1:].strip()!r}, "
                            f"expected '// ABI-REBASE: <what> @ <40-hex commit>'")
            elif got["commit"] in onto_seen:
                rb = Rebase(commit, subject, got["commit"], got["what"],
                            f"re-bases again onto {got['commit'][:12]}, expected a re-base onto an "
                            f"ABI to happen once")
            else:
                rb = Rebase(commit, subject, got["commit"], got["what"])
                onto_seen.add(got["commit"])
                licensed = True
            rebases.append(rb)
        if licensed:
            continue
        for name, op in sorted(minus - plus, key=lambda x: x[1]):
            out.append(Removal(commit, subject, name, op))
    out.reverse()  # newest first, as the log reads
    return out, rebases


def removals(log: str) -> list[Removal]:
    """Every (name, opcode) pair a commit of ``log`` removed and did not add back, except in
    a commit that is a well-formed ABI re-base."""
    return _scan(log)[0]


def rebases(log: str) -> list[Rebase]:
    """Every ABI-REBASE marker the history added, oldest first, with its problem if any."""
    return _scan(log)[1]


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
    bad, marks = _scan(log)
    errors = [GenError(path, 1, 1, "LOCK-HISTORY",
                       f"commit {r.commit} ({r.subject!r}) {r.problem}") for r in marks if r.problem]
    errors += [GenError(path, 1, 1, "LOCK-HISTORY",
                        f"commit {r.commit} ({r.subject!r}) removed L({r.name}, {r.opcode}): "
                        f"opcodes are forever, expected the row kept (a retired call keeps "
                        f"its row and its opcode)") for r in bad]
    if errors:
        raise GenErrors(errors)
    return log.count(_COMMIT)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mgpipe.gen.lockhistory", description=__doc__)
    p.add_argument("paths", nargs="*", default=[LOCK_PATH], metavar="PATH")
    p.add_argument("--repo", type=Path, default=Path("."))
    args = p.parse_args(argv)
    errors: list[GenError] = []
    lines = []
    for path in args.paths:  # each lock's own history: one refused lock does not hide another's
        try:
            n = check(args.repo, path)
        except GenErrors as exc:
            errors += exc.errors
            continue
        except GenError as exc:
            errors.append(exc)
            continue
        marks = rebases(git_log(args.repo, path))
        lines.append(f"{path}: {n} commit{'s' if n != 1 else ''} read, no lock row ever removed or renumbered"
                     + "".join(f" (except by the ABI re-base {r.commit} onto {r.what} @ {r.onto[:12]})"
                               for r in marks))
    for line in lines:
        print(line)
    if errors:
        return exit_code_for(GenErrors(errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["LOCK_PATH", "ORIGINAL_LOCK_PATH", "Rebase", "Removal", "check", "main", "rebases", "removals"]
