"""One-line refusals for every command: ``where:line:col: GATE: what, expected what``.

A command refuses bad user input by raising what :func:`refusal` returns; the CLI prints
the one line to stderr and exits 2 (never a traceback). Command-line mistakes are placed
at ``<command line>:1:1``; a refusal about a file names the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

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


__all__ = ["COMMAND_LINE", "refusal", "unknown"]
