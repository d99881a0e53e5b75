"""Plants: precise text edits that put ONE defect into a temporary copy of the catalogue.

A plant names its file relative to the catalogue directory (``PipeCalls.def``,
``include/MGPipeTypes.h``) or to the tree root for outputs (``generated/PipeWire.inc``).
Each edit is a pure function of the pristine file, applied once to a fresh copy, and
checks that it matched exactly what it means to edit: a line key that finds no line (or
two), an old text that is not there (or is there twice), is a :class:`PlantError`, and the
control that planted it FAILS. A plant can never silently turn into a no-op.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

GENERATED = "generated/"


class PlantError(Exception):
    """The edit did not apply exactly as written."""


def plant_path(tree: Path, catalogue_name: str, file: str) -> Path:
    if file.startswith(GENERATED):
        return tree / file
    return tree / catalogue_name / file


def _pattern(old: str) -> str:
    """``old`` as a regex that does not match inside a longer identifier."""
    pat = re.escape(old)
    if re.match(r"\w", old[:1]):
        pat = r"(?<!\w)" + pat
    if re.match(r"\w", old[-1:]):
        pat = pat + r"(?!\w)"
    return pat


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _line(lines: list[str], file: str, key: str) -> int:
    """The one line that starts with ``key`` (whitespace ignored, so alignment never matters)."""
    k = _squash(key)
    hits = [i for i, line in enumerate(lines) if _squash(line).startswith(k)]
    if len(hits) != 1:
        raise PlantError(f"{file}: {len(hits)} lines start with {key!r}, expected exactly one")
    return hits[0]


def _continued(line: str) -> bool:
    return line.rstrip().endswith("\\")


@dataclass(frozen=True)
class Edit:
    file: str

    def apply(self, text: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def run(self, tree: Path, catalogue_name: str) -> None:
        path = plant_path(tree, catalogue_name, self.file)
        if not path.is_file():
            raise PlantError(f"{self.file}: no such file in the copied tree")
        text = path.read_text(encoding="utf-8")
        new = self.apply(text)
        if new == text:
            raise PlantError(f"{self.file}: the edit changed nothing")
        path.write_text(new, encoding="utf-8")


@dataclass(frozen=True)
class Sub(Edit):
    """In the one line starting with ``key``, replace the one whole-token ``old`` by ``new``."""

    key: str
    old: str
    new: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        i = _line(lines, self.file, self.key)
        pat = _pattern(self.old)
        n = len(re.findall(pat, lines[i]))
        if n != 1:
            raise PlantError(f"{self.file}:{i + 1}: {self.old!r} occurs {n} times in the "
                             f"{self.key!r} line, expected once")
        lines[i] = re.sub(pat, lambda _m: self.new, lines[i], count=1)
        return "".join(lines)


@dataclass(frozen=True)
class Rewrite(Edit):
    """Replace the whole line starting with ``key`` by ``line`` (its indentation kept)."""

    key: str
    line: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        i = _line(lines, self.file, self.key)
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        lines[i] = indent + self.line.strip() + "\n"
        return "".join(lines)


@dataclass(frozen=True)
class Replace(Edit):
    """Replace the one occurrence of ``old`` in the whole file by ``new``."""

    old: str
    new: str

    def apply(self, text: str) -> str:
        n = text.count(self.old)
        if n != 1:
            raise PlantError(f"{self.file}: {self.old!r} occurs {n} times, expected once")
        return text.replace(self.old, self.new, 1)


@dataclass(frozen=True)
class Delete(Edit):
    """Delete the one (continued, so not last) row starting with ``key``."""

    key: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        i = _line(lines, self.file, self.key)
        if not _continued(lines[i]):
            raise PlantError(f"{self.file}:{i + 1}: {self.key!r} is a list's last row, expected a middle row")
        del lines[i]
        return "".join(lines)


@dataclass(frozen=True)
class Move(Edit):
    """Move the row starting with ``key`` to just after the row starting with ``after``."""

    key: str
    after: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        i, j = _line(lines, self.file, self.key), _line(lines, self.file, self.after)
        if i == j or not (_continued(lines[i]) and _continued(lines[j])):
            raise PlantError(f"{self.file}: cannot move {self.key!r} after {self.after!r}, "
                             f"expected two distinct middle rows")
        row = lines.pop(i)
        j = _line(lines, self.file, self.after)
        lines.insert(j + 1, row)
        return "".join(lines)


@dataclass(frozen=True)
class InsertAfter(Edit):
    """Insert ``row`` (a whole continued line) after the middle row starting with ``key``."""

    key: str
    row: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        i = _line(lines, self.file, self.key)
        if not _continued(lines[i]):
            raise PlantError(f"{self.file}:{i + 1}: {self.key!r} ends its list, use Append")
        lines.insert(i + 1, self.row if self.row.endswith("\n") else self.row + "\n")
        return "".join(lines)


@dataclass(frozen=True)
class Append(Edit):
    """Append ``row`` after ``key``, the last row of its list (it gains the ``\\``)."""

    key: str
    row: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        i = _line(lines, self.file, self.key)
        if _continued(lines[i]):
            raise PlantError(f"{self.file}:{i + 1}: {self.key!r} is not the last row of its list")
        lines[i] = lines[i].rstrip("\n") + " \\\n"
        lines.insert(i + 1, "    " + self.row.strip() + "\n")
        return "".join(lines)


@dataclass(frozen=True)
class AppendRow(Edit):
    """Append ``row`` as the new last row of the ``#define`` list ``list_name``, wherever
    that list ends today (the catalogue is read, never assumed)."""

    list_name: str
    row: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines)
                  if re.match(rf"\s*#\s*define\s+{re.escape(self.list_name)}\(", line)]
        if len(starts) != 1:
            raise PlantError(f"{self.file}: {len(starts)} '#define {self.list_name}(' lines, expected one")
        i = starts[0]
        while i < len(lines) and _continued(lines[i]):
            i += 1
        if i >= len(lines) or i == starts[0]:
            raise PlantError(f"{self.file}: list {self.list_name} has no last row to append after")
        lines[i] = lines[i].rstrip("\n") + " \\\n"
        lines.insert(i + 1, "    " + self.row.strip() + "\n")
        return "".join(lines)


@dataclass(frozen=True)
class AppendText(Edit):
    """Append ``text`` (whole lines) at the end of the file."""

    text: str

    def apply(self, text: str) -> str:
        return text + ("" if text.endswith("\n") else "\n") + self.text.rstrip("\n") + "\n"


@dataclass(frozen=True)
class Encode(Edit):
    """Re-encode the whole file (e.g. as UTF-16): the same text in bytes that are not UTF-8."""

    encoding: str

    def run(self, tree: Path, catalogue_name: str) -> None:
        path = plant_path(tree, catalogue_name, self.file)
        if not path.is_file():
            raise PlantError(f"{self.file}: no such file in the copied tree")
        path.write_bytes(path.read_text(encoding="utf-8").encode(self.encoding))


@dataclass(frozen=True)
class RemoveTree(Edit):
    """Remove a directory of the copy (``"."``: the whole catalogue)."""

    def run(self, tree: Path, catalogue_name: str) -> None:
        path = plant_path(tree, catalogue_name, self.file)
        if not path.is_dir():
            raise PlantError(f"{self.file}: no such directory to remove")
        shutil.rmtree(path)


@dataclass(frozen=True)
class Remove(Edit):
    """Remove the file."""

    def apply(self, text: str) -> str:
        return text

    def run(self, tree: Path, catalogue_name: str) -> None:
        path = plant_path(tree, catalogue_name, self.file)
        if not path.is_file():
            raise PlantError(f"{self.file}: no such file to remove")
        path.unlink()


__all__ = ["Append", "AppendRow", "AppendText", "Delete", "Edit", "Encode", "InsertAfter", "Move", "PlantError", "Remove", "RemoveTree",
           "Replace", "Rewrite", "Sub", "plant_path"]
