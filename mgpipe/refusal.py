"""One-line refusals for every command: ``where:line:col: GATE: what, expected what``.

A command refuses bad user input by raising what :func:`refusal` returns; the CLI prints
the one line to stderr and exits 2 (never a traceback). Command-line mistakes are placed
at ``<command line>:1:1``; a refusal about a file names the file.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path

from mgpipe.gen.errors import GenError, one_of

COMMAND_LINE = "<command line>"


def refusal(gate: str, text: str, where: str = COMMAND_LINE, line: int = 1, col: int = 1) -> GenError:
    """The located error a command raises to refuse (``gate`` is UPPER-KEBAB)."""
    return GenError(where, line, col, gate, text)


def unknown(gate: str, kind: str, name: str, choices: Iterable[str], extra: str = "") -> GenError:
    """``no <kind> named 'x', expected one of <closest first> ...``: a misspelt name."""
    names = list(choices)
    close = difflib.get_close_matches(name, names, n=4, cutoff=0.5)
    if close:
        return refusal(gate, f"no {kind} named {name!r}, expected the closest: "
                             f"{', '.join(close)}{extra}")
    return refusal(gate, f"no {kind} named {name!r}, expected "
                         f"{one_of(names, f'a {kind} (there are none)', limit=12)}{extra}")


def check_out_dir(path: Path, flag: str = "--out") -> None:
    """Refuse, before any work, an output directory that cannot be made or written: an
    existing file, a file on the way to it, or a directory this user cannot write."""
    shown = str(path)
    if path.exists() and not path.is_dir():
        raise refusal("OUT-NOT-A-DIRECTORY", f"{flag} {shown} is a file, expected a directory "
                                             "(or a path that does not exist yet)")  # fmt: skip
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise refusal("OUT-NOT-A-DIRECTORY", f"{flag} {shown}: {probe} is a file, expected a "
                                             "directory on the way to it")  # fmt: skip
    if not os.access(probe, os.W_OK | os.X_OK):
        raise refusal("OUT-NOT-WRITABLE", f"{flag} {shown}: {probe} is not writable, expected "
                                          "a directory this user can write")  # fmt: skip


def check_out_file(path: Path, flag: str) -> None:
    """Refuse, before any work, an output file that cannot be written (its directory is
    checked like :func:`check_out_dir`; an existing directory in its place is refused)."""
    if path.is_dir():
        raise refusal("OUT-IS-A-DIRECTORY", f"{flag} {path} is a directory, expected a file path")
    check_out_dir(path.parent if str(path.parent) else Path("."), f"{flag} {path}: its directory")


__all__ = ["COMMAND_LINE", "refusal", "unknown", "check_out_dir", "check_out_file"]
