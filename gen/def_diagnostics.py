"""Plain-words DEF-SYNTAX messages for lark's parse exceptions (used by defparse)."""

from __future__ import annotations

from copy import copy

from lark import Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from .errors import GenError

GATE = "DEF-SYNTAX"

_TERMINAL_WORDS: dict[str, str] = {
    "DEFINE": "'#define'",
    "NAME": "a macro name",
    "IDENT": "an identifier",
    "INT": "an integer",
    "STRING": "a string",
    "DASH": "'-'",
    "LPAR": "'('",
    "COMMA": "','",
    "RPAR": "')'",
    "VBAR": "'|'",
    "CHAR": "a character literal",
    "PUNCT": "an operator",
    "CONT": "'\\' and a new line",
    "NL": "end of line",
    "$END": "end of file",
}
_WORD_ORDER = list(_TERMINAL_WORDS)


def _words(terminals: set[str] | frozenset[str]) -> str:
    known = sorted((t for t in terminals if t in _TERMINAL_WORDS), key=_WORD_ORDER.index)
    names = list(dict.fromkeys(_TERMINAL_WORDS[t] for t in known))
    if not names:
        return "something else"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "NL":
        return "end of line"
    if token.type == "CONT":
        return "'\\' and a new line"
    if token.type == "DEFINE":
        return "'#define'"
    return repr(str(token))


def _char_problem(text: str, pos: int) -> str:
    ch = text[pos]
    if ch == '"':
        return "unterminated string"
    if text.startswith("/*", pos):
        return "unterminated /* comment"
    if ch == "\\":
        return "stray '\\' (a continuation must be the last character on its line)"
    if ch == "#":
        return "'#' inside a #define body"
    return f"unexpected character {ch!r}"


def _precise_allowed(exc: UnexpectedCharacters) -> set[str]:
    """The terminals the parser would really accept where the lexer failed.

    The contextual lexer's ``allowed`` set is the LALR look-ahead union, which can name
    tokens the parser would reject; feed each one to a copy of the parser state instead.
    """
    allowed = set(exc.allowed or ())
    state = getattr(exc, "state", None)
    if state is None:
        return allowed
    accepted: set[str] = set()
    try:
        conf = copy(state.parse_conf)
        conf.callbacks = {}
        for name in allowed:
            trial = copy(state)
            trial.parse_conf = conf
            try:
                trial.feed_token(Token(name, ""))
            except UnexpectedToken:
                continue
            accepted.add(name)
    except (AttributeError, TypeError):
        return allowed
    return accepted or allowed


def translate(exc: LarkError, text: str, original_len: int, display_path: str) -> GenError:
    """Turn a lark parse exception into a located DEF-SYNTAX GenError."""
    if isinstance(exc, UnexpectedCharacters):
        allowed = _precise_allowed(exc)
        what = _char_problem(text, exc.pos_in_stream)
        return GenError(
            display_path, exc.line, exc.column, GATE, f"{what}, expected {_words(allowed)}"
        )
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        expected = set(exc.accepts or exc.expected or ())
        line, col = token.line, token.column
        what = _describe_token(token)
        start = getattr(token, "start_pos", None)
        if token.type == "$END" or start is None or start >= original_len or not line:
            line, col = end_position(text[:original_len])
            what = "end of file"
        if token.type in ("NL", "$END") and "RPAR" in expected:
            return GenError(display_path, line, col, GATE,
                            f"unexpected {what} inside an argument list, expected ',' or ')' "
                            f"(a row must close before its #define ends)")
        return GenError(
            display_path, line, col, GATE, f"unexpected {what}, expected {_words(expected)}"
        )
    if isinstance(exc, UnexpectedEOF):
        line, col = end_position(text[:original_len])
        return GenError(
            display_path,
            line,
            col,
            GATE,
            f"unexpected end of file, expected {_words(set(exc.expected or ()))}",
        )
    line, col = end_position(text[:original_len])
    return GenError(display_path, line, col, GATE, f"cannot parse: {exc}")


def end_position(text: str) -> tuple[int, int]:
    body = text[:-1] if text.endswith("\n") else text
    line = body.count("\n") + 1
    col = len(body) - (body.rfind("\n") + 1) + 1
    return line, col


__all__ = ["GATE", "end_position", "translate"]
