"""The declarations of a C++ ``.inc`` output, read symbol by symbol, and a comparison of two.

Two outputs that declare the same symbols under the same names, types and values are the
same interface to the code that includes them, whatever their layout, comments or brace
style. This module reads such a file into :class:`Symbol` rows and compares two directories
of them (``python -m mgpipe.gen.inc_symbols compare REAL_DIR OUR_DIR``).

What a symbol is, and what of it is compared:

* an enum (``enum NAME``: scoped or not, its underlying type) and every enumerator
  (``NAME::ENUMERATOR``) with its value, an implicit value counted on from the previous one;
* a variable or constant (``var NAME``): its type with ``inline`` dropped, its array
  bounds, its initialiser: an integer value when the expression is one the file set can
  evaluate (literals, enumerators and constants of the files read), else its tokens; an
  aggregate initialiser element by element;
* a struct (``struct NAME``, a specialisation with its arguments): template head, alignment,
  bases, every member by name and type; a function-pointer member with its signature;
* a function (``function NAME(PARAMETER TYPES)``, overloads apart): return type,
  ``constexpr``, ``noexcept``, attributes, and whether the file defines it; parameter names
  and bodies are the implementation, not the interface, and are not compared;
* a ``static_assert`` (``static_assert CONDITION``): keyed by its condition; the message is
  prose and not compared;
* a ``#define`` (object-like: its replacement tokens; function-like: its parameters), an
  ``#undef``, an ``#include``, a ``using`` alias.

A symbol declared under ``#if COND`` carries the condition. Formatting is normalised away
(whitespace, comments, line breaks, digit separators, literal spelling: ``0x3Fu`` is 63,
the operands of a chain of ``|`` over plain names are order-free); meaning is not.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<num>(?:0[xX][0-9a-fA-F']+|0[bB][01']+|\d[\d']*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[uUlLfF]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<punct>::|->\*?|\.\.\.|<<=|>>=|<=>|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%&|^!=]=|\#\#|[{}()\[\];:,.<>?~!+\-*/%&|^=\#])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Tok:
    kind: str  # id num str chr punct
    text: str
    line: int


def _logical_lines(text: str) -> str:
    """Backslash-newline splices, as translation phase 2 does (line numbers kept by a pad)."""
    # Join spliced lines: a spliced line and its successor become one logical line, and an
    # empty line is appended for each splice so later line numbers do not move.
    joined: list[str] = []
    buf = ""
    splices = 0
    for raw in text.split("\n"):
        if raw.endswith("\\"):
            buf += raw[:-1] + " "
            splices += 1
            continue
        joined.append(buf + raw)
        joined.extend([""] * splices)
        buf, splices = "", 0
    if buf:
        joined.append(buf)
    return "\n".join(joined)


def tokenize(text: str) -> list[Tok]:
    """The file's tokens; a preprocessor directive is one token of kind ``pp`` (its comments
    removed, whitespace collapsed)."""
    text = _logical_lines(text)
    toks: list[Tok] = []
    pos, line, at_line_start = 0, 1, True
    n = len(text)
    while pos < n:
        if at_line_start:
            m = re.match(r"[ \t]*#", text[pos:])
            if m:
                end = text.find("\n", pos)
                end = n if end < 0 else end
                directive = text[pos:end]
                # a block comment may run past the line end inside a directive
                while directive.count("/*") > directive.count("*/") and end < n:
                    nxt = text.find("\n", end + 1)
                    nxt = n if nxt < 0 else nxt
                    directive = text[pos:nxt]
                    end = nxt
                body = re.sub(r"/\*.*?\*/", " ", directive, flags=re.DOTALL)
                body = re.sub(r"//.*", "", body)
                toks.append(Tok("pp", " ".join(body.split()), line))
                line += directive.count("\n")
                pos = end
                continue
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"{line}: cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        s = m.group()
        if kind == "nl":
            line += 1
            at_line_start = True
        elif kind in ("ws",):
            pass
        elif kind in ("lc", "bc"):
            line += s.count("\n")
            at_line_start = at_line_start and "\n" not in s
        else:
            at_line_start = False
            toks.append(Tok(kind, s, line))
        pos = m.end()
    return toks


# ------------------------------------------------------------------ normalisation

_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uUlL]*$")


def int_literal(text: str) -> int | None:
    t = text.replace("'", "")
    m = _INT.match(t)
    if not m:
        return None
    body = m.group(1)
    if body[:2] in ("0x", "0X"):
        return int(body, 16)
    if body[:2] in ("0b", "0B"):
        return int(body[2:], 2)
    if body.startswith("0") and len(body) > 1:
        return int(body, 8)
    return int(body)


def _spell(tok: Tok) -> str:
    if tok.kind == "num":
        v = int_literal(tok.text)
        if v is not None:
            return str(v)
        return tok.text.replace("'", "").rstrip("fFlL") or tok.text
    return tok.text


def norm(toks: list[Tok]) -> str:
    """Tokens joined by one space, literals spelt canonically, ``|``-chains of names sorted."""
    words = [_spell(t) for t in toks]
    return " ".join(_sort_or_chains(words))


def _sort_or_chains(words: list[str]) -> list[str]:
    # A maximal run NAME | NAME | ... (qualified names allowed) is order-free.
    out: list[str] = []
    i = 0
    ident = re.compile(r"^[A-Za-z_]\w*$")

    def name_at(j: int) -> int:
        """End index of a (qualified) name starting at j, or -1."""
        if j >= len(words) or not ident.match(words[j]):
            return -1
        k = j + 1
        while k + 1 < len(words) and words[k] == "::" and ident.match(words[k + 1]):
            k += 2
        return k

    while i < len(words):
        end = name_at(i)
        if end < 0 or (i > 0 and words[i - 1] in ("::", ".", "->")):
            out.append(words[i])
            i += 1
            continue
        names = [" ".join(words[i:end])]
        j = end
        while j < len(words) and words[j] == "|":
            e2 = name_at(j + 1)
            if e2 < 0 or (e2 < len(words) and words[e2] in ("(", "::", "<", "[", ".", "->")):
                break
            names.append(" ".join(words[j + 1:e2]))
            j = e2
        prev_ok = i == 0 or words[i - 1] in ("(", ",", "=", "{", "|", "return")
        next_ok = j >= len(words) or words[j] in (")", ",", ";", "}")
        if len(names) > 1 and prev_ok and next_ok:
            out.extend(" | ".join(sorted(names)).split(" "))
        else:
            out.extend(words[i:j])
        i = j
    return out


def split_top(toks: list[Tok], sep: str) -> list[list[Tok]]:
    """Split on ``sep`` at bracket depth 0 (angle brackets counted after a template name)."""
    parts: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
        if t.text == sep and depth == 0 and _angle_depth(parts[-1]) == 0:
            parts.append([])
            continue
        parts[-1].append(t)
    if parts and not parts[-1]:
        parts.pop()
    return parts


def _angle_depth(toks: list[Tok]) -> int:
    """Open ``<`` of template argument lists in ``toks`` (a ``<`` after a name opens one)."""
    depth = 0
    paren = 0
    prev: Tok | None = None
    for t in toks:
        if t.text in ("(", "[", "{"):
            paren += 1
        elif t.text in (")", "]", "}"):
            paren -= 1
        elif t.text == "<" and prev is not None and prev.kind == "id" and prev.text in _TEMPLATE_NAMES:
            depth += 1
        elif t.text == ">" and depth:
            depth -= 1
        elif t.text == ">>" and depth:
            depth = max(0, depth - 2)
        prev = t
    return depth


#: names after which ``<`` opens template arguments (the rest is a comparison)
_TEMPLATE_NAMES = frozenset({
    "template", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "Array",
    "array", "is_trivially_copyable_v", "is_same_v", "is_standard_layout_v", "VecBase",
    "MGPipeHasFieldVerifier", "numeric_limits", "underlying_type_t", "decltype",
    "is_enum_v", "is_scalar_v", "is_floating_point_v", "Vec2", "Vec3", "Vec4", "span",
    "tuple", "pair", "integral_constant", "conditional_t", "enable_if_t",
})


def _match(toks: list[Tok], i: int) -> int:
    """Index of the bracket closing the one at ``i``."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    open_, close = toks[i].text, pairs[toks[i].text]
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == open_:
            depth += 1
        elif toks[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"line {toks[i].line}: unbalanced {open_!r}")


# ------------------------------------------------------------------------- symbols


@dataclass
class Symbol:
    key: str  # "enum MGPWireOp", "MGPWireOp::GetCaps", "var kMGPipeCallCount", ...
    kind: str
    value: str  # the normalised meaning (what is compared)
    line: int
    number: int | None = None  # an integer value, when the expression evaluates
    expr: str | None = None  # the unevaluated expression of a value (for evaluation)
    elements: tuple[str, ...] | None = None  # an aggregate's elements, normalised
    cond: str = ""  # the #if conditions it sits under

    def meaning(self) -> str:
        head = f"[{self.cond}] " if self.cond else ""
        if self.number is not None:
            return head + self.value.replace("\0", str(self.number))
        return head + self.value.replace("\0", self.expr or "")


@dataclass
class FileSymbols:
    path: str
    symbols: dict[str, Symbol] = field(default_factory=dict)

    def add(self, sym: Symbol) -> None:
        old = self.symbols.get(sym.key)
        if old is None:
            self.symbols[sym.key] = sym
            return
        if sym.kind == "function":  # a declaration and its definition are one symbol
            if "defined" in sym.value and "defined" not in old.value:
                self.symbols[sym.key] = sym
            return
        if sym.kind in ("include", "undef", "static_assert") or sym.value == old.value:
            return
        # a second, different declaration under the same key keeps both apart
        n = 2
        while f"{sym.key} #{n}" in self.symbols:
            n += 1
        sym.key = f"{sym.key} #{n}"
        self.symbols[sym.key] = sym


_SPECIFIERS_DROPPED = frozenset({"inline"})
_DECL_SPECIFIERS = frozenset({"static", "extern", "constexpr", "consteval", "constinit",
                              "thread_local", "inline"})


def parse_text(text: str, path: str = "<text>") -> FileSymbols:
    out = FileSymbols(path)
    _declarations(tokenize(text), [], out, prefix="")
    return out


def parse_file(path: Path) -> FileSymbols:
    return parse_text(path.read_text(encoding="utf-8"), path.name)


def _directive(text: str, line: int, conds: list[str], out: FileSymbols) -> None:
    m = re.match(r"#\s*(\w+)\s*(.*)$", text)
    if not m:
        return
    word, rest = m.group(1), m.group(2).strip()
    cond = " && ".join(conds)
    if word in ("if", "ifdef", "ifndef"):
        conds.append({"if": rest, "ifdef": f"defined({rest})", "ifndef": f"!defined({rest})"}[word])
    elif word in ("elif", "else"):
        if conds:
            prev = conds.pop()
            conds.append(f"!({prev})" + (f" && ({rest})" if word == "elif" else ""))
    elif word == "endif":
        if conds:
            conds.pop()
    elif word == "define":
        dm = re.match(r"([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$", rest)
        if dm:
            name, params, body = dm.group(1), dm.group(2), dm.group(3)
            if params is not None:
                value = "(" + ",".join(p.strip() for p in params[1:-1].split(",")) + ")"
                out.add(Symbol(f"#define {name}", "define", value, line, cond=cond))
            else:
                toks = [t for t in tokenize(body) if t.kind != "pp"]
                out.add(Symbol(f"#define {name}", "define", "\0", line, expr=norm(toks), cond=cond))
    elif word == "undef":
        out.add(Symbol(f"#undef {rest}", "undef", "", line, cond=cond))
    elif word == "include":
        out.add(Symbol(f"#include {rest}", "include", "", line, cond=cond))
    elif word == "pragma":
        out.add(Symbol(f"#pragma {rest}", "pragma", "", line, cond=cond))


def _declarations(toks: list[Tok], conds: list[str], out: FileSymbols, prefix: str) -> None:
    """Split a token run into top-level declarations and read each; a directive between
    declarations is read as one, a directive inside a body is part of the implementation."""
    cur: list[Tok] = []
    i = 0

    def flush() -> None:
        if cur:
            _read(list(cur), " && ".join(conds), out, prefix)
            cur.clear()

    while i < len(toks):
        t = toks[i]
        if t.kind == "pp":
            _directive(t.text, t.line, conds, out)
            i += 1
            continue
        if t.text in ("(", "["):
            close = _match(toks, i)
            cur.extend(x for x in toks[i:close + 1] if x.kind != "pp")
            i = close + 1
            continue
        if t.text == "{":
            close = _match(toks, i)
            head = list(cur)
            if head and head[0].text == "namespace":
                name = "".join(x.text for x in head[1:])
                cur.clear()
                _declarations(toks[i + 1:close], conds, out, prefix + (name + "::" if name else ""))
                i = close + 1
                continue
            if head and head[0].text == "extern" and len(head) == 2 and head[1].kind == "str":
                cur.clear()
                _declarations(toks[i + 1:close], conds, out, prefix)
                i = close + 1
                continue
            cur.extend(x for x in toks[i:close + 1] if x.kind != "pp")
            i = close + 1
            if _is_function_head(_head_before_body(cur)):
                flush()
            continue
        if t.text == ";":
            flush()
            i += 1
            continue
        cur.append(t)
        i += 1
    flush()


def _head_before_body(decl: list[Tok]) -> list[Tok]:
    """The tokens of ``decl`` before its last top-level brace block."""
    depth = 0
    for k in range(len(decl) - 1, -1, -1):
        if decl[k].text == "}":
            depth += 1
        elif decl[k].text == "{":
            depth -= 1
            if depth == 0:
                return decl[:k]
    return decl


def _strip_attributes(toks: list[Tok]) -> tuple[list[Tok], list[str]]:
    attrs: list[str] = []
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        if toks[i].text == "[" and i + 1 < len(toks) and toks[i + 1].text == "[":
            close = _match(toks, i)
            attrs.append(norm(toks[i + 2:close - 1]))
            i = close + 1
            continue
        if toks[i].text == "alignas" and i + 1 < len(toks) and toks[i + 1].text == "(":
            close = _match(toks, i + 1)
            attrs.append("alignas(" + norm(toks[i + 2:close]) + ")")
            i = close + 1
            continue
        out.append(toks[i])
        i += 1
    return out, attrs


def _is_function_head(head: list[Tok]) -> bool:
    """``RET NAME(PARAMS) [const|noexcept|-> T]`` with no ``=`` before the parameter list."""
    head, _ = _strip_attributes(head)
    if head and head[0].text == "template":
        head = head[_match_angle(head, 1) + 1:]
    depth = 0
    for j, t in enumerate(head):
        if t.text == "=" and depth == 0:
            return False
        if t.text in ("struct", "class", "union", "enum") and depth == 0 and j == _first_non_spec(head):
            return False
        if t.text == "(" and depth == 0:
            return j > 0 and (head[j - 1].kind == "id" or head[j - 1].text == ">")
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
    return False


def _first_non_spec(head: list[Tok]) -> int:
    j = 0
    while j < len(head) and head[j].text in _DECL_SPECIFIERS | {"typedef"}:
        j += 1
    return j


def _match_angle(toks: list[Tok], i: int) -> int:
    """Index of the ``>`` closing the ``<`` at ``i``."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == "<":
            depth += 1
        elif toks[j].text == ">":
            depth -= 1
            if depth == 0:
                return j
        elif toks[j].text == ">>":
            depth -= 2
            if depth <= 0:
                return j
        elif toks[j].text in ("(", "["):
            pass
    raise ValueError(f"line {toks[i].line}: unbalanced '<'")


def _read(decl: list[Tok], cond: str, out: FileSymbols, prefix: str) -> None:
    if not decl:
        return
    line = decl[0].line
    decl, attrs = _strip_attributes(decl)
    if not decl:
        return
    first = decl[0].text
    if first == "static_assert":
        close = _match(decl, 1)
        args = split_top(decl[2:close], ",")
        expr = norm(args[0]) if args else ""
        out.add(Symbol(f"static_assert {expr}", "static_assert", "", line, cond=cond))
        return
    if first == "using":
        if len(decl) > 2 and decl[2].text == "=":
            out.add(Symbol(f"using {prefix}{decl[1].text}", "using", norm(decl[3:]), line, cond=cond))
        else:
            out.add(Symbol(f"using {norm(decl[1:])}", "using", "", line, cond=cond))
        return
    template = ""
    if first == "template":
        end = _match_angle(decl, 1)
        template = "template<" + norm(decl[2:end]) + ">"
        decl = decl[end + 1:]
        decl, more = _strip_attributes(decl)
        attrs += more
    specs = []
    j = 0
    while j < len(decl) and decl[j].text in _DECL_SPECIFIERS:
        if decl[j].text not in _SPECIFIERS_DROPPED:
            specs.append(decl[j].text)
        j += 1
    body = decl[j:]
    if not body:
        return
    if body[0].text == "enum":
        _enum(body, attrs, cond, out, prefix, line)
        return
    if body[0].text in ("struct", "class", "union") and not _is_function_head(body):
        _struct(body, template, attrs, cond, out, prefix, line)
        return
    if _is_function_head(decl):
        _function(body, template, specs, attrs, cond, out, prefix, line)
        return
    _variable(body, template, specs, attrs, cond, out, prefix, line)


def _enum(body: list[Tok], attrs: list[str], cond: str, out: FileSymbols, prefix: str,
          line: int) -> None:
    j = 1
    scoped = False
    if j < len(body) and body[j].text in ("class", "struct"):
        scoped = True
        j += 1
    name = body[j].text if j < len(body) and body[j].kind == "id" else "<anonymous>"
    if name != "<anonymous>":
        j += 1
    underlying = ""
    brace = next((k for k in range(j, len(body)) if body[k].text == "{"), None)
    if j < len(body) and body[j].text == ":":
        underlying = norm(body[j + 1:brace if brace is not None else len(body)])
    kind = "enum class" if scoped else "enum"
    out.add(Symbol(f"enum {prefix}{name}", "enum",
                   f"{kind} : {underlying or '<default>'}" + (f" {' '.join(attrs)}" if attrs else ""),
                   line, cond=cond))
    if brace is None:
        return
    close = _match(body, brace)
    value: int | None = -1
    expr_prev = ""
    count = 0
    for part in split_top(body[brace + 1:close], ","):
        if not part:
            continue
        ename = part[0].text
        if len(part) > 1 and part[1].text == "=":
            expr = norm(part[2:])
            value = None
            expr_prev, count = expr, 0
            sym = Symbol(f"{prefix}{name}::{ename}", "enumerator", "\0", part[0].line,
                         expr=expr, cond=cond)
        else:
            count += 1
            expr = f"( {expr_prev} ) + {count}" if expr_prev else str(count - 1)
            sym = Symbol(f"{prefix}{name}::{ename}", "enumerator", "\0", part[0].line,
                         expr=expr, cond=cond)
        out.add(sym)


def _member_decl(part: list[Tok]) -> tuple[str, str]:
    """(name, normalised type) of one member or parameter declaration."""
    part, attrs = _strip_attributes(part)
    init = ""
    eq = next((k for k, t in enumerate(part) if t.text == "=" and _angle_depth(part[:k]) == 0
               and not _inside(part, k)), None)
    if eq is not None:
        init = " = " + norm(part[eq + 1:])
        part = part[:eq]
    # function pointer: RET ( * NAME ) ( PARAMS )
    for k in range(len(part) - 3):
        if part[k].text == "(" and part[k + 1].text in ("*", "&") and part[k + 2].kind == "id" \
                and part[k + 3].text == ")":
            params = part[k + 4:]
            ptypes = ""
            if params and params[0].text == "(":
                close = _match(params, 0)
                ptypes = _param_types(params[1:close]) + norm(params[close + 1:])
            return part[k + 2].text, f"{norm(part[:k])} (*)({ptypes})" + init
    # arrays: TYPE NAME [N]...
    k = len(part)
    dims = ""
    while k > 0 and part[k - 1].text == "]":
        depth = 0
        for m in range(k - 1, -1, -1):
            if part[m].text == "]":
                depth += 1
            elif part[m].text == "[":
                depth -= 1
                if depth == 0:
                    dims = "[" + norm(part[m + 1:k - 1]) + "]" + dims
                    k = m
                    break
    if k > 0 and part[k - 1].kind == "id" and k > 1 and part[k - 1].text not in _TYPE_WORDS:
        name = part[k - 1].text
        typ = norm(part[:k - 1])
    else:
        name, typ = "", norm(part[:k])
    extra = (" " + " ".join(attrs)) if attrs else ""
    return name, typ + dims + init + extra


def _inside(part: list[Tok], k: int) -> bool:
    depth = 0
    for t in part[:k]:
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
    return depth > 0


_TYPE_WORDS = frozenset({"const", "volatile", "unsigned", "signed", "long", "short", "int",
                         "char", "bool", "float", "double", "void", "auto", "struct", "class",
                         "enum", "typename"})


def _param_types(toks: list[Tok]) -> str:
    """A parameter list as its types only (names dropped; an array reference keeps its form)."""
    if not toks or (len(toks) == 1 and toks[0].text == "void"):
        return ""
    types = []
    for p in split_top(toks, ","):
        # T (&a)[N] / T (*a)[N]
        for k in range(len(p) - 3):
            if p[k].text == "(" and p[k + 1].text in ("&", "*") and p[k + 2].kind == "id" \
                    and p[k + 3].text == ")":
                p = p[:k + 2] + p[k + 3:]
                break
        name, typ = _member_decl(p)
        types.append(typ)
    return ", ".join(types)


def _struct(body: list[Tok], template: str, attrs: list[str], cond: str, out: FileSymbols,
            prefix: str, line: int) -> None:
    kw = body[0].text
    body, more = _strip_attributes(body)
    attrs = attrs + more
    j = 1
    brace = next((k for k in range(len(body)) if body[k].text == "{"), None)
    end = brace if brace is not None else len(body)
    colon = next((k for k in range(j, end) if body[k].text == ":" and _angle_depth(body[j:k]) == 0),
                 None)
    name_toks = body[j:colon if colon is not None else end]
    if name_toks and name_toks[-1].text == "final":
        name_toks = name_toks[:-1]
        attrs.append("final")
    name = norm(name_toks).replace(" ", "")
    bases = norm(body[colon + 1:end]) if colon is not None else ""
    if brace is None:
        # a forward declaration, or a declaration of a variable of struct type
        if len(body) > 2 and body[2].kind == "id":
            _variable(body, template, [], attrs, cond, out, prefix, line)
            return
        out.add(Symbol(f"{kw} {prefix}{name}", "struct", f"{template} {kw} declared".strip(),
                       line, cond=cond))
        return
    close = _match(body, brace)
    members = []
    for part in _member_parts(body[brace + 1:close]):
        mname, mtype = _member_decl(part)
        members.append(f"{mname}: {mtype}")
    value = " ".join(x for x in (template, kw, " ".join(attrs), f": {bases}" if bases else "") if x)
    value += " { " + "; ".join(members) + " }"
    out.add(Symbol(f"struct {prefix}{name}", "struct", value, line, cond=cond,
                   elements=tuple(members)))
    trailer = body[close + 1:]
    if trailer and trailer[0].kind == "id":  # struct S {...} s;
        out.add(Symbol(f"var {prefix}{trailer[0].text}", "var", f"{kw} {name}", line, cond=cond))


def _member_parts(toks: list[Tok]) -> list[list[Tok]]:
    parts: list[list[Tok]] = []
    cur: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text in ("public", "private", "protected") and i + 1 < len(toks) and toks[i + 1].text == ":":
            i += 2
            continue
        if t.text in ("(", "["):
            close = _match(toks, i)
            cur.extend(toks[i:close + 1])
            i = close + 1
            continue
        if t.text == "{":
            close = _match(toks, i)
            cur.extend(toks[i:close + 1])
            i = close + 1
            if cur and _is_function_head(cur[: next(k for k, x in enumerate(cur) if x.text == "{")]):
                parts.append(cur)
                cur = []
            continue
        if t.text == ";":
            if cur:
                parts.append(cur)
            cur = []
            i += 1
            continue
        cur.append(t)
        i += 1
    if cur:
        parts.append(cur)
    return parts


def _function(body: list[Tok], template: str, specs: list[str], attrs: list[str], cond: str,
              out: FileSymbols, prefix: str, line: int) -> None:
    p = next(k for k in range(len(body)) if body[k].text == "(")
    close = _match(body, p)
    name = body[p - 1].text
    ret = norm(body[:p - 1])
    params = _param_types(body[p + 1:close])
    tail = body[close + 1:]
    defined = any(t.text == "{" for t in tail)
    if defined:
        tail = tail[: next(k for k, t in enumerate(tail) if t.text == "{")]
    quals = norm(tail)
    value = " ".join(x for x in (template, " ".join(attrs), " ".join(specs), ret, quals,
                                 "defined" if defined else "declared") if x)
    out.add(Symbol(f"function {prefix}{name}({params})", "function", value, line, cond=cond))


def _variable(body: list[Tok], template: str, specs: list[str], attrs: list[str], cond: str,
              out: FileSymbols, prefix: str, line: int) -> None:
    eq = None
    for k, t in enumerate(body):
        if t.text == "=" and not _inside(body, k):
            eq = k
            break
    head = body[:eq] if eq is not None else body
    init = body[eq + 1:] if eq is not None else []
    # brace initialisation without '=': T name{...}
    if eq is None and head and head[-1].text == "}":
        k = len(head) - 1
        depth = 0
        for m in range(k, -1, -1):
            if head[m].text == "}":
                depth += 1
            elif head[m].text == "{":
                depth -= 1
                if depth == 0:
                    init, head = head[m:], head[:m]
                    break
    name, typ = _member_decl(head)
    if not name:
        out.add(Symbol(f"decl {norm(body)}", "decl", "", line, cond=cond))
        return
    typ = " ".join(x for x in (template, " ".join(attrs), " ".join(specs), typ) if x)
    if init and init[0].text == "{":
        close = _match(init, 0)
        elements = tuple(norm(e) for e in split_top(init[1:close], ","))
        out.add(Symbol(f"var {prefix}{name}", "var", typ + " = {" + ", ".join(elements) + "}",
                       line, cond=cond, elements=elements))
        return
    if init:
        out.add(Symbol(f"var {prefix}{name}", "var", typ + " = \0", line, expr=norm(init),
                       cond=cond))
    else:
        out.add(Symbol(f"var {prefix}{name}", "var", typ, line, cond=cond))


# ----------------------------------------------------------------------- evaluation

_CAST = re.compile(r"\b(?:static_cast|reinterpret_cast)\s*<[^<>]*(?:<[^<>]*>[^<>]*)*>\s*")
_FUNC_CAST = re.compile(r"\b(?:SizeT|Uint8|Uint16|Uint32|Uint64|Int32|Int64|Bool)\s*(?=\()")


def evaluate(symbols: list[FileSymbols]) -> None:
    """Give every value whose expression reduces to an integer its number: literals, the
    enumerators and integer constants of the files read, casts, arithmetic and bit operators."""
    table: dict[str, Symbol] = {}
    for fs in symbols:
        for s in fs.symbols.values():
            if s.kind == "enumerator":
                table[s.key] = s
                if _is_unscoped(fs, s):  # also a name of the enclosing scope
                    table.setdefault(s.key.rsplit("::", 1)[1], s)
            elif s.kind in ("var", "define") and s.expr is not None:
                table[s.key.split(" ", 1)[1]] = s
    memo: dict[str, int | None] = {}

    def value_of(sym: Symbol, stack: tuple[str, ...]) -> int | None:
        if sym.key in memo:
            return memo[sym.key]
        if sym.key in stack or sym.expr is None:
            return None
        v = _eval(sym.expr, lambda n: value_of(table[n], stack + (sym.key,)) if n in table else None)
        memo[sym.key] = v
        return v

    for fs in symbols:
        for s in fs.symbols.values():
            if s.expr is not None:
                s.number = value_of(s, ())


def _is_unscoped(fs: FileSymbols, s: Symbol) -> bool:
    enum = fs.symbols.get("enum " + s.key.rsplit("::", 1)[0])
    return enum is not None and enum.value.startswith("enum :")


def _eval(expr: str, lookup) -> int | None:
    text = _CAST.sub("", expr)
    text = _FUNC_CAST.sub("", text)
    words = text.split(" ")
    py: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if re.match(r"^[A-Za-z_]\w*$", w):
            name = w
            while i + 2 < len(words) and words[i + 1] == "::" and re.match(r"^[A-Za-z_]\w*$", words[i + 2]):
                name += "::" + words[i + 2]
                i += 2
            v = lookup(name)
            if v is None:
                return None
            py.append(str(v))
        elif re.match(r"^\d+$", w):
            py.append(w)
        elif w in ("+", "-", "*", "%", "<<", ">>", "|", "&", "^", "~", "(", ")"):
            py.append(w)
        elif w == "/":
            py.append("//")
        elif w == "":
            pass
        else:
            return None
        i += 1
    if not py:
        return None
    try:
        v = eval(" ".join(py), {"__builtins__": {}}, {})  # noqa: S307 - digits and operators only
    except Exception:  # noqa: BLE001 - an expression that is not arithmetic is left as text
        return None
    return v if isinstance(v, int) else None


# ------------------------------------------------------------------------ comparison


@dataclass
class FileReport:
    name: str
    missing: list[Symbol]
    different: list[tuple[Symbol, Symbol, str]]
    extra: list[Symbol]
    real_count: int


def _difference(real: Symbol, ours: Symbol) -> str | None:
    if real.meaning() == ours.meaning():
        return None
    if real.number is not None and ours.number is not None and real.value == ours.value \
            and real.number == ours.number and real.cond == ours.cond:
        return None
    if real.elements is not None and ours.elements is not None and real.kind == ours.kind:
        if len(real.elements) != len(ours.elements):
            return f"{len(real.elements)} elements, ours {len(ours.elements)}"
        for k, (a, b) in enumerate(zip(real.elements, ours.elements)):
            if a != b:
                return f"element {k}: {a!r}, ours {b!r}"
        head_a, head_b = real.value.split(" = {")[0], ours.value.split(" = {")[0]
        if (real.cond, head_a) != (ours.cond, head_b):
            return f"{real.cond} {head_a!r}, ours {ours.cond} {head_b!r}".replace("  ", " ")
    return f"{real.meaning()!r}, ours {ours.meaning()!r}"


def compare(real: FileSymbols, ours: FileSymbols | None) -> FileReport:
    if ours is None:
        return FileReport(real.path, list(real.symbols.values()), [], [], len(real.symbols))
    missing, different = [], []
    for key, sym in real.symbols.items():
        mine = ours.symbols.get(key)
        if mine is None:
            missing.append(sym)
            continue
        why = _difference(sym, mine)
        if why is not None:
            different.append((sym, mine, why))
    extra = [s for k, s in ours.symbols.items() if k not in real.symbols]
    return FileReport(real.path, missing, different, extra, len(real.symbols))


def compare_dirs(real_dir: Path, our_dir: Path, names: list[str] | None = None) -> list[FileReport]:
    names = names or sorted(p.name for p in real_dir.glob("*.inc"))
    real = [parse_file(real_dir / n) for n in names]
    ours = [parse_file(our_dir / n) if (our_dir / n).is_file() else None for n in names]
    evaluate(real)
    evaluate([o for o in ours if o is not None])
    return [compare(r, o) for r, o in zip(real, ours)]


def format_report(reports: list[FileReport], verbose: bool = True) -> str:
    lines = []
    for r in reports:
        lines.append(f"{r.name}: {r.real_count} symbols; missing {len(r.missing)}, "
                     f"different {len(r.different)}, extra {len(r.extra)}")
        if verbose:
            for s in r.missing:
                lines.append(f"  missing   {r.name}:{s.line}: {s.key}")
            for s, _mine, why in r.different:
                lines.append(f"  different {r.name}:{s.line}: {s.key}: {why}")
            for s in r.extra:
                lines.append(f"  extra     {s.key}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mgpipe.gen.inc_symbols",
                                 description="Compare the declarations of two sets of .inc files.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="REAL_DIR OUR_DIR: symbols missing / different / extra")
    c.add_argument("real_dir", type=Path)
    c.add_argument("our_dir", type=Path)
    c.add_argument("--file", action="append", help="compare only this file name (repeatable)")
    c.add_argument("--summary", action="store_true", help="one line per file")
    d = sub.add_parser("dump", help="FILE: every symbol and its normalised meaning")
    d.add_argument("file", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        fs = parse_file(args.file)
        evaluate([fs])
        for s in fs.symbols.values():
            print(f"{s.line}: {s.key} = {s.meaning()}")
        return 0
    for d_ in (args.real_dir, args.our_dir):
        if not d_.is_dir():
            print(f"<command line>:1:1: INC-COMPARE: {d_} is not a directory, expected a "
                  f"directory of .inc files", file=sys.stderr)
            return 2
    reports = compare_dirs(args.real_dir, args.our_dir, args.file)
    print(format_report(reports, verbose=not args.summary))
    return 1 if any(r.missing or r.different for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
