"""Located generator errors.

Every problem with the generator's *input* is a :class:`GenError` that names its place
as ``path:line:col: GATE: text``. Several are gathered in a :class:`GenErrors`. The CLI
boundary turns either into exit code 2 (:func:`exit_code_for`); a user never sees a
traceback for bad input.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from typing import TextIO, TypeVar

EXIT_BAD_INPUT = 2

_GATE_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*$")

T = TypeVar("T")


class GenError(Exception):
    """One located error: ``{path}:{line}:{col}: {gate}: {text}``.

    ``path`` is kept exactly as given (repo-relative for catalogue inputs); it is never
    made absolute. ``line`` and ``col`` are 1-based. ``gate`` is an UPPER-KEBAB name
    such as ``DEF-SYNTAX`` or ``UNKNOWN-PAYLOAD``.
    """

    def __init__(self, path: str, line: int, col: int, gate: str, text: str) -> None:
        if not _GATE_RE.match(gate):
            raise ValueError(f"gate name {gate!r} is not UPPER-KEBAB")
        self.path = str(path)
        self.line = int(line)
        self.col = int(col)
        self.gate = gate
        self.text = text
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.gate}: {self.text}"

    def __repr__(self) -> str:
        return f"GenError({self.path!r}, {self.line}, {self.col}, {self.gate!r}, {self.text!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GenError):
            return NotImplemented
        return self.sort_key() == other.sort_key()

    def __hash__(self) -> int:
        return hash(self.sort_key())

    def __reduce__(self) -> tuple[type, tuple[str, int, int, str, str]]:
        return (GenError, (self.path, self.line, self.col, self.gate, self.text))

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.col, self.gate, self.text)


def _flat(errors: Iterable[GenError | GenErrors]) -> list[GenError]:
    flat: list[GenError] = []
    for err in errors:
        if isinstance(err, GenErrors):
            flat.extend(err.errors)
        else:
            flat.append(err)
    return flat


class GenErrors(Exception):
    """Several :class:`GenError` s, sorted by path/line/col and printed one per line.

    ``follow_on`` holds errors that a root cause in ``errors`` makes inevitable (the gates
    run on a catalogue whose file is missing or unparsable): they are counted, not
    printed, unless asked for (``--all-errors``).
    """

    def __init__(self, errors: Iterable[GenError | GenErrors],
                 follow_on: Iterable[GenError] = ()) -> None:
        self.errors: list[GenError] = sorted(set(_flat(errors)), key=GenError.sort_key)
        roots = set(self.errors)
        self.follow_on: list[GenError] = sorted(set(follow_on) - roots, key=GenError.sort_key)
        super().__init__(str(self))

    def report(self, all_errors: bool = False) -> str:
        """The root causes, one per line, then the follow-on errors (or their count)."""
        lines = [str(e) for e in self.errors]
        if all_errors:
            lines += [str(e) for e in self.follow_on]
        elif self.follow_on:
            n = len(self.follow_on)
            lines.append(f"... and {n} follow-on error{'s' if n != 1 else ''}; --all-errors shows them")
        return "\n".join(lines)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __len__(self) -> int:
        return len(self.errors)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.errors)

    def __reduce__(self) -> tuple[type, tuple[list[GenError], list[GenError]]]:
        return (GenErrors, (self.errors, self.follow_on))

    @property
    def gates(self) -> list[str]:
        return [e.gate for e in self.errors]


class ErrorCollector:
    """Gather errors while checking many things, then raise them all at once.

    >>> errs = ErrorCollector()
    >>> errs.add(GenError("a.def", 1, 1, "DEF-SYNTAX", "bad"))
    >>> errs.raise_if_any()  # raises GenErrors (or the single GenError)
    """

    def __init__(self) -> None:
        self.errors: list[GenError] = []
        self.follow_on: list[GenError] = []

    def add(self, err: GenError | GenErrors) -> None:
        if isinstance(err, GenErrors):
            self.errors.extend(err.errors)
            self.follow_on.extend(err.follow_on)
        else:
            self.errors.append(err)

    def error(self, path: str, line: int, col: int, gate: str, text: str) -> None:
        self.errors.append(GenError(path, line, col, gate, text))

    def run(self, fn: Callable[[], T]) -> T | None:
        """Call ``fn``; record a GenError/GenErrors it raises and return None instead."""
        try:
            return fn()
        except (GenError, GenErrors) as exc:
            self.add(exc)
            return None

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        if not self.errors:
            return
        if len(self.errors) == 1:
            raise self.errors[0]
        raise GenErrors(self.errors)


def one_of(names: Iterable[str], none: str, limit: int = 8) -> str:
    """``one of a, b, c, ...`` -- or ``none`` when there is nothing to name, so that no
    message ever ends in a bare "expected one of"."""
    items = list(names)
    if not items:
        return none
    return "one of " + ", ".join(items[:limit]) + (", ..." if len(items) > limit else "")


def exit_code_for(exc: GenError | GenErrors, stream: TextIO | None = None,
                  all_errors: bool = False) -> int:
    """Print ``exc`` (root causes one per line, follow-ons counted) to ``stream`` (stderr)
    and return exit code 2."""
    out = sys.stderr if stream is None else stream
    print(exc.report(all_errors) if isinstance(exc, GenErrors) else str(exc), file=out)
    out.flush()
    return EXIT_BAD_INPUT


def decode_utf8(data: bytes, shown: str, gate: str) -> str:
    """``data`` as text, or a GenError at the first byte that is not UTF-8.

    A UTF-8 byte-order mark is accepted (and kept); UTF-16 and other encodings are named.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = len(before) - (before.rfind(b"\n") + 1) + 1
        hint = " (the file starts with a UTF-16 byte-order mark)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise GenError(shown, line, col, gate,
                       f"byte 0x{data[exc.start]:02x} is not UTF-8{hint}, expected a UTF-8 text file") from None


__all__ = ["EXIT_BAD_INPUT", "ErrorCollector", "GenError", "GenErrors", "decode_utf8",
           "exit_code_for", "one_of"]
