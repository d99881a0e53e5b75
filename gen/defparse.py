"""Parser for the X-macro ``.def`` catalogues (lark; grammar in ``def_grammar.lark``).

A catalogue file holds ``#define LISTNAME(P) \\`` blocks whose bodies are invocations
``P(arg, ...)`` joined by ``\\``-newline continuations. Every list, entry and argument
keeps the exact 1-based ``line:col`` where it is written in the file. Every syntax
problem is a :class:`~mgpipe.gen.errors.GenError` with gate ``DEF-SYNTAX``; no lark
exception ever escapes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Literal

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from .def_diagnostics import GATE, translate
from .errors import ErrorCollector, GenError, decode_utf8

GRAMMAR = "def_grammar.lark"  # package data of mgpipe.gen

ArgKind = Literal["ident", "flags", "int", "string", "dash"]


@dataclass(frozen=True, slots=True)
class DefArg:
    """One argument of an entry.

    ``kind`` and ``value``:

    * ``ident``  -- an identifier or member path as written (``StencilStates[1].Ref``);
      ``parts`` is ``(value,)``.
    * ``flags``  -- ``A|B|C``; ``value`` is ``"A|B|C"`` without spaces, ``parts`` the
      names. Members may be paths too (``BlendStates.SrcRGB|BlendStates.DstRGB``).

    So for ``ident`` and ``flags`` ``parts`` is always the ``|``-separated members.
    * ``int``    -- ``value`` is the ``int`` (decimal or hex, C suffixes dropped).
    * ``string`` -- ``value`` is the unescaped content of the double-quoted string.
    * ``dash``   -- a bare ``-``; ``value`` is ``"-"``.

    ``text`` is the argument exactly as written (single line). ``part_positions`` holds
    the ``(line, col)`` of each element of ``parts``.
    """

    kind: ArgKind
    value: str | int
    line: int
    col: int
    text: str
    parts: tuple[str, ...] = ()
    part_positions: tuple[tuple[int, int], ...] = ()

    @property
    def is_path(self) -> bool:
        """True for an ``ident`` that is a member path (has ``.`` or ``[n]``)."""
        return self.kind == "ident" and ("." in self.text or "[" in self.text)

    @property
    def path_components(self) -> tuple[str, ...]:
        """``StencilStates[1].Ref`` -> ``("StencilStates[1]", "Ref")`` (ident only)."""
        return tuple(str(self.value).split(".")) if self.kind == "ident" else ()


@dataclass(frozen=True, slots=True)
class DefEntry:
    """One ``P(...)`` invocation; ``line``/``col`` locate the macro name, ``row`` is 1-based."""

    macro: str
    args: tuple[DefArg, ...]
    line: int
    col: int
    row: int


@dataclass(frozen=True, slots=True)
class DefList:
    """One ``#define NAME(PARAM)`` block; ``line``/``col`` locate its ``#``."""

    name: str
    param: str
    path: str
    line: int
    col: int
    entries: tuple[DefEntry, ...]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


class _CommentSink:
    """Collects the line comments lark skips, per parse (guarded by the parse lock)."""

    def __init__(self) -> None:
        self.items: list[Token] = []

    def __call__(self, token: Token) -> Token:
        self.items.append(token)
        return token


_SINK = _CommentSink()
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(
        files("mgpipe.gen").joinpath(GRAMMAR).read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        lexer_callbacks={"LINE_COMMENT": _SINK},
    )


def _int_value(token: Token) -> int:
    digits = str(token).rstrip("uUlL")
    return int(digits, 0) if digits.lstrip("-")[:2].lower() == "0x" else int(digits, 10)


_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def _unescape(body: str) -> tuple[str, int | None]:
    """C-unescape a string body; returns (value, offset of the first bad escape or None)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _ESCAPES and nxt:
            out.append(_ESCAPES[nxt])
            i += 2
        elif (
            nxt == "x"
            and len(body) >= i + 4
            and all(c in "0123456789abcdefABCDEF" for c in body[i + 2 : i + 4])
        ):
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        else:
            return "".join(out), i
    return "".join(out), None


def _build_arg(tree: Tree, source: str, path: str, errors: ErrorCollector) -> DefArg:
    kind = str(tree.data)
    tokens = [t for t in tree.children if isinstance(t, Token)]
    first = tokens[0]
    if kind == "ident":
        pos = ((first.line, first.column),)
        return DefArg("ident", str(first), first.line, first.column, str(first), (str(first),), pos)
    if kind == "flags":
        names = tuple(str(t) for t in tokens)
        text = source[tree.meta.start_pos : tree.meta.end_pos]
        return DefArg(
            "flags",
            "|".join(names),
            first.line,
            first.column,
            text,
            names,
            tuple((t.line, t.column) for t in tokens),
        )
    if kind == "int":
        return DefArg("int", _int_value(first), first.line, first.column, str(first))
    if kind == "string":
        raw = str(first)
        value, bad = _unescape(raw[1:-1])
        if bad is not None:
            errors.error(
                path,
                first.line,
                first.column + 1 + bad,
                GATE,
                "unknown escape in string, expected one of \\\\ \\\" \\' \\n \\t \\r \\0 \\xHH",
            )
        return DefArg("string", value, first.line, first.column, raw)
    return DefArg("dash", "-", first.line, first.column, "-")


def _build_entry(
    tree: Tree,
    source: str,
    row: int,
    param: str | None,
    define_line: int,
    path: str,
    errors: ErrorCollector,
) -> DefEntry:
    macro = tree.children[0]
    assert isinstance(macro, Token)
    args = tuple(
        _build_arg(c, source, path, errors) for c in tree.children[1:] if isinstance(c, Tree)
    )
    if param is not None and str(macro) != param:
        errors.error(
            path,
            macro.line,
            macro.column,
            GATE,
            f"entry macro {str(macro)!r} is not the list parameter of the #define on "
            f"line {define_line}, expected {param!r}",
        )
    return DefEntry(str(macro), args, macro.line, macro.column, row)


def _build(tree: Tree, source: str, path: str, errors: ErrorCollector) -> list[DefList]:
    lists: list[DefList] = []
    seen: dict[str, int] = {}
    last_define: tuple[int, int] | None = None  # (define line, line of its closing NL)
    reported_since_define = False
    for item in tree.children:
        if not isinstance(item, Tree):
            continue
        if item.data == "define":
            hash_tok, name_tok, param_tok = item.children[0], item.children[1], item.children[2]
            assert isinstance(hash_tok, Token) and isinstance(name_tok, Token)
            assert isinstance(param_tok, Token)
            nl = item.children[-1]
            assert isinstance(nl, Token)
            name, param = str(name_tok), str(param_tok)
            if name in seen:
                errors.error(
                    path,
                    name_tok.line,
                    name_tok.column,
                    GATE,
                    f"list {name!r} is defined again (first on line {seen[name]}), "
                    f"expected one #define per list",
                )
            seen.setdefault(name, hash_tok.line)
            entries = [
                _build_entry(c, source, i + 1, param, hash_tok.line, path, errors)
                for i, c in enumerate(x for x in item.children[3:] if isinstance(x, Tree))
            ]
            lists.append(DefList(name, param, path, hash_tok.line, hash_tok.column, tuple(entries)))
            last_define = (hash_tok.line, nl.line)
            reported_since_define = False
        elif item.data == "stray":
            entry = item.children[0]
            assert isinstance(entry, Tree)
            macro = entry.children[0]
            assert isinstance(macro, Token)
            if last_define is None:
                errors.error(
                    path,
                    macro.line,
                    macro.column,
                    GATE,
                    f"entry on line {macro.line} is outside any '#define LIST(X)' block, "
                    f"expected it after a '#define' line ending in '\\'",
                )
            elif not reported_since_define:
                hint = (
                    f", expected '\\' at the end of line {last_define[1]}"
                    if macro.line == last_define[1] + 1
                    else ""
                )
                errors.error(
                    path,
                    macro.line,
                    macro.column,
                    GATE,
                    f"entry on line {macro.line} is not joined by '\\' to the #define "
                    f"on line {last_define[0]}{hint}",
                )
            reported_since_define = True
    return lists


def _check_line_comments(
    comments: list[Token], lists_tree: Tree, path: str, errors: ErrorCollector
) -> None:
    """A `//` comment that ends in `\\` swallows the next line (C rules): an error in a block."""
    spans = []
    for item in lists_tree.children:
        if isinstance(item, Tree) and item.data == "define":
            first, last = item.children[0], item.children[-1]
            assert isinstance(first, Token) and isinstance(last, Token)
            spans.append((first.line, last.line))
    for tok in comments:
        if "\n" not in tok:
            continue
        if any(lo <= tok.line <= hi for lo, hi in spans):
            hidden = tok.line + 1
            errors.error(
                path,
                tok.line,
                tok.column,
                GATE,
                f"line comment ends in '\\', so C continues it over line {hidden} and "
                f"hides what is there, expected /* */ or no '\\' after the comment",
            )


def parse_def_text(text: str, display_path: str) -> list[DefList]:
    """Parse ``.def`` source ``text``; errors name ``display_path`` as given."""
    if text.startswith("\ufeff"):
        text = " " + text[1:]  # keep columns: the BOM becomes ignorable whitespace
    source = text + "\n\n"  # always close the last block, even after a final '\\'-newline
    with _LOCK:
        _SINK.items = []
        try:
            tree = _parser().parse(source)
        except LarkError as exc:
            raise translate(exc, source, len(text), display_path) from None
        finally:
            comments, _SINK.items = _SINK.items, []
    errors = ErrorCollector()
    lists = _build(tree, source, display_path, errors)
    _check_line_comments(comments, tree, display_path, errors)
    errors.raise_if_any()
    return lists


def parse_def(path: Path, display_path: str | None = None) -> list[DefList]:
    """Read and parse the ``.def`` file at ``path``.

    ``display_path`` is the name used in every error and stored in each
    :class:`DefList` (keep it repo-relative, e.g. ``catalogue/PipeCalls.def``); it
    defaults to ``str(path)``.
    """
    shown = str(path) if display_path is None else display_path
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise GenError(shown, 1, 1, GATE, f"cannot read file: {exc.strerror or exc}") from None
    text = decode_utf8(data, shown, "DEF-ENCODING")
    return parse_def_text(text, shown)


__all__ = ["DefArg", "DefEntry", "DefList", "GATE", "parse_def", "parse_def_text"]
