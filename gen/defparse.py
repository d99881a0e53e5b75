"""Parser for the X-macro ``.def`` catalogues (lark; grammar in ``def_grammar.lark``).

A catalogue file holds ``#define LISTNAME(P) \\`` blocks whose bodies are invocations
``P(arg, ...)`` joined by ``\\``-newline continuations. Every list, entry and argument
keeps the exact 1-based ``line:col`` where it is written in the file. Every syntax
problem is a :class:`~mgpipe.gen.errors.GenError` with gate ``DEF-SYNTAX``; no lark
exception ever escapes.
"""

from __future__ import annotations

import re
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

ArgKind = Literal["ident", "flags", "int", "string", "dash", "text"]


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
    * ``string`` also takes adjacent literals (``"a" "b"`` is ``ab``), as C joins them.
    * ``text``   -- anything else C takes as a macro argument (``handle-ify (wire handle)``,
      ``A | 0``); ``value`` is the argument's source with comments, continuations and runs
      of white space each reduced to one space.

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


@dataclass(frozen=True, slots=True)
class DefValue:
    """One object-like ``#define NAME VALUE`` (``MGP_CALL_LIST_DOCUMENTED_COUNT 84``).

    ``value`` is the replacement text (comments stripped, white space trimmed); ``line`` /
    ``col`` locate the ``#``, ``value_col`` the first character of the value.
    """

    name: str
    value: str
    path: str
    line: int
    col: int
    value_col: int


@dataclass(frozen=True, slots=True)
class DefFile:
    """Everything a ``.def`` file defines: its lists and its object-like values."""

    lists: tuple[DefList, ...]
    values: tuple[DefValue, ...]

    def value(self, name: str) -> DefValue | None:
        return next((v for v in self.values if v.name == name), None)


_OBJECT_DEFINE = re.compile(r"#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_(])[ \t]*(.*)", re.S)


def _directive_value(tok: Token, path: str) -> DefValue | None:
    m = _OBJECT_DEFINE.match(str(tok))
    if m is None:
        return None
    body = re.sub(r"/\*.*?\*/|//.*", " ", m.group(2).replace("\\\n", " "))
    value = " ".join(body.split())
    return DefValue(m.group(1), value, path, tok.line, tok.column,
                    tok.column + m.start(2) + (len(m.group(2)) - len(m.group(2).lstrip())))


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


def _leaves(tree: Tree) -> list[Token]:
    out: list[Token] = []
    for c in tree.children:
        if isinstance(c, Token):
            out.append(c)
        else:
            out.extend(_leaves(c))
    return out


def _text_of(tokens: list[Token], source: str) -> str:
    """The source between the first and last token, comments and continuations dropped and
    every run of white space reduced to one space (what C's stringizing would keep)."""
    parts: list[str] = []
    for i, t in enumerate(tokens):
        if i and t.start_pos > tokens[i - 1].end_pos:
            parts.append(" ")
        parts.append(str(t))
    return "".join(parts)


def _build_arg(tree: Tree, source: str, path: str, errors: ErrorCollector) -> DefArg:
    tokens = _leaves(tree)
    first = tokens[0]
    types = [t.type for t in tokens]
    text = source[first.start_pos : tokens[-1].end_pos]
    if types == ["IDENT"]:
        pos = ((first.line, first.column),)
        return DefArg("ident", str(first), first.line, first.column, str(first), (str(first),), pos)
    if (len(types) >= 3 and len(types) % 2 == 1 and all(t == "IDENT" for t in types[::2])
            and all(t == "VBAR" for t in types[1::2])):
        names = tuple(str(t) for t in tokens[::2])
        return DefArg("flags", "|".join(names), first.line, first.column, text, names,
                      tuple((t.line, t.column) for t in tokens[::2]))
    if types == ["INT"]:
        return DefArg("int", _int_value(first), first.line, first.column, str(first))
    if types == ["DASH", "INT"] and tokens[1].start_pos == first.end_pos:
        return DefArg("int", -_int_value(tokens[1]), first.line, first.column, text)
    if types == ["DASH"]:
        return DefArg("dash", "-", first.line, first.column, "-")
    if all(t == "STRING" for t in types):
        values = []
        for tok in tokens:
            raw = str(tok)
            value, bad = _unescape(raw[1:-1])
            if bad is not None:
                errors.error(path, tok.line, tok.column + 1 + bad, GATE,
                             "unknown escape in string, expected one of \\\\ \\\" \\' \\n "
                             "\\t \\r \\0 \\xHH")
            values.append(value)
        return DefArg("string", "".join(values), first.line, first.column, text)
    return DefArg("text", _text_of(tokens, source), first.line, first.column, text)


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


def _build(tree: Tree, source: str, path: str, errors: ErrorCollector,
           values: list[DefValue] | None = None) -> list[DefList]:
    lists: list[DefList] = []
    seen: dict[str, int] = {}
    last_define: tuple[int, int] | None = None  # (define line, line of its closing NL)
    reported_since_define = False
    for item in tree.children:
        if isinstance(item, Token):
            if item.type == "DIRECTIVE" and values is not None:
                v = _directive_value(item, path)
                if v is not None:
                    values.append(v)
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
    return list(parse_def_file(text, display_path).lists)


#: parsed files of this process, keyed by (text, display path): the result is a pure,
#: immutable function of both, so `mgpipe self-test` parses the unplanted base once per
#: worker and each control re-parses only the file its plant edited (every gate still runs
#: on every control). A refused file is never kept: it raises again, afresh.
_PARSED: dict[tuple[str, str], DefFile] = {}
_PARSED_MAX = 256


def parse_def_file(text: str, display_path: str) -> DefFile:
    """Parse ``.def`` source ``text`` into its lists and its object-like values."""
    key = (text, display_path)
    hit = _PARSED.get(key)
    if hit is not None:
        return hit
    parsed = _parse_def_file(text, display_path)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = parsed
    return parsed


def _parse_def_file(text: str, display_path: str) -> DefFile:
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
    values: list[DefValue] = []
    lists = _build(tree, source, display_path, errors, values)
    _check_line_comments(comments, tree, display_path, errors)
    errors.raise_if_any()
    return DefFile(tuple(lists), tuple(values))


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


__all__ = ["DefArg", "DefEntry", "DefFile", "DefList", "DefValue", "GATE", "parse_def",
           "parse_def_file", "parse_def_text"]
