"""The .def parser: what a catalogue author relies on (positions, arg kinds, messages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mgpipe.gen.defparse import DefList, parse_def, parse_def_text
from mgpipe.gen.errors import GenError, GenErrors

CALLS = r"""#pragma once
// PipeCalls.def -- a line comment at top level
#ifndef MGP_CALLS_DEF
#define MGP_CALLS_DEF
#include "MGPipe.h"
#define MGP_CALL_LIST(X) \
    /* ---- screen ---- */ \
    X(GetCaps, MGPCaps, kScreen, kReplySlot, kWaitReply) \
    X(ResourceCreate, MGPResourceDesc, kScreen, kNeedsAck | kReplySlot, kWaitReply) /* a
      comment over two lines */ \
	X(Foo, MGPFoo, kScreen, kNone, kWaitNone)
#define MGP_FIELDS_MGPDrawInfo(F) \
    F(Mode) \
    F(StencilStates, kSplit) \
    F(StencilStates[1].Ref, kDynamic, 0x10, -3, "a \"q\"", -)
#define MGP_EMPTY(E)
#endif // MGP_CALLS_DEF
"""


def _by_name(lists: list[DefList]) -> dict[str, DefList]:
    return {lst.name: lst for lst in lists}


def test_lists_and_entry_positions_survive_comments_and_continuations() -> None:
    lists = _by_name(parse_def_text(CALLS, "catalogue/PipeCalls.def"))
    assert list(lists) == ["MGP_CALL_LIST", "MGP_FIELDS_MGPDrawInfo", "MGP_EMPTY"]
    calls = lists["MGP_CALL_LIST"]
    assert (calls.param, calls.path, calls.line, calls.col) == (
        "X",
        "catalogue/PipeCalls.def",
        6,
        1,
    )
    assert [(e.macro, e.line, e.col, e.row) for e in calls.entries] == [
        ("X", 8, 5, 1),
        ("X", 9, 5, 2),
        ("X", 11, 2, 3),  # after a two-line block comment and a tab
    ]
    assert [(a.value, a.line, a.col) for a in calls.entries[0].args] == [
        ("GetCaps", 8, 7),
        ("MGPCaps", 8, 16),
        ("kScreen", 8, 25),
        ("kReplySlot", 8, 34),
        ("kWaitReply", 8, 46),
    ]
    assert [a.col for a in calls.entries[2].args] == [4, 9, 17, 26, 33]
    assert lists["MGP_EMPTY"].entries == ()


def test_each_line_col_points_at_the_text_in_the_file() -> None:
    lines = CALLS.splitlines()
    for lst in parse_def_text(CALLS, "x.def"):
        for entry in lst.entries:
            assert lines[entry.line - 1][entry.col - 1 :].startswith(entry.macro + "(")
            for arg in entry.args:
                assert lines[arg.line - 1][arg.col - 1 :].startswith(arg.text.split("|")[0])


def test_flag_expression_keeps_each_flag_and_its_column() -> None:
    calls = _by_name(parse_def_text(CALLS, "x.def"))["MGP_CALL_LIST"]
    flags = calls.entries[1].args[3]
    assert flags.kind == "flags"
    assert flags.value == "kNeedsAck|kReplySlot"
    assert flags.parts == ("kNeedsAck", "kReplySlot")
    assert flags.part_positions == ((9, 49), (9, 61))
    single = calls.entries[0].args[3]
    assert (single.kind, single.parts) == ("ident", ("kReplySlot",))


def test_flag_members_may_be_member_paths() -> None:
    src = "#define L(S) \\\n  S(SetBlendFunc, BlendStates.SrcRGB|BlendStates[1].DstRGB)\n"
    arg = parse_def_text(src, "x.def")[0].entries[0].args[1]
    assert arg.parts == ("BlendStates.SrcRGB", "BlendStates[1].DstRGB")


def test_argument_kinds_paths_ints_strings_dash() -> None:
    fields = _by_name(parse_def_text(CALLS, "x.def"))["MGP_FIELDS_MGPDrawInfo"]
    path, cls, hexv, neg, text, dash = fields.entries[2].args
    assert (path.kind, path.value, path.is_path) == ("ident", "StencilStates[1].Ref", True)
    assert path.path_components == ("StencilStates[1]", "Ref")
    assert (cls.kind, cls.is_path) == ("ident", False)
    assert (hexv.kind, hexv.value) == ("int", 16)
    assert (neg.kind, neg.value) == ("int", -3)
    assert (text.kind, text.value, text.text) == ("string", 'a "q"', r'"a \"q\""')
    assert (dash.kind, dash.value) == ("dash", "-")


def test_block_may_end_with_a_continuation_at_end_of_file() -> None:
    lists = parse_def_text("#define L(X) \\\n  X(a) \\\n", "x.def")
    assert [e.args[0].value for e in lists[0].entries] == ["a"]


def test_crlf_line_endings() -> None:
    lists = parse_def_text("#define L(X) \\\r\n  X(a, b) \\\r\n  X(c)\r\n", "x.def")
    assert [(e.line, e.col) for e in lists[0].entries] == [(2, 3), (3, 3)]


PREPROCESSOR_FORMS = (
    "#define MGP_CALL_LIST_DOCUMENTED_COUNT 3 // the count\n"
    "#define L(X) \\\n"
    "    X(A, kNone) X(B, kHasBlob | kVarTail) \\\n"
    "    /* a comment between rows */ \\\n"
    "    X(C, \\\n"
    "      0) \\\n"
    "    \\\n"
    "    X(D, handle-ify (wire handle), \"one \" \"two\", \\\n"
    "      - , -4)\n"
)


def test_what_a_c_preprocessor_takes_reads_as_rows() -> None:
    from mgpipe.gen.defparse import parse_def_file

    parsed = parse_def_file(PREPROCESSOR_FORMS, "x.def")
    count = parsed.value("MGP_CALL_LIST_DOCUMENTED_COUNT")
    assert count is not None and (count.value, count.line, count.value_col) == ("3", 1, 40)
    rows = parsed.lists[0].entries
    assert [(e.args[0].value, e.line, e.col, e.row) for e in rows] == [
        ("A", 3, 5, 1), ("B", 3, 17, 2), ("C", 5, 5, 3), ("D", 8, 5, 4)]
    flags = rows[1].args[1]
    assert (flags.kind, flags.parts, flags.part_positions) == (
        "flags", ("kHasBlob", "kVarTail"), ((3, 22), (3, 33)))
    assert (rows[2].args[1].kind, rows[2].args[1].value, rows[2].args[1].line) == ("int", 0, 6)
    text, strings, dash, neg = rows[3].args[1:]
    assert (text.kind, text.value) == ("text", "handle-ify (wire handle)")
    assert (strings.kind, strings.value) == ("string", "one two")
    assert (dash.kind, neg.kind, neg.value) == ("dash", "int", -4)


def test_a_space_separated_argument_is_free_text_not_two_arguments() -> None:
    entry = parse_def_text("#define L(X) \\\n  X(a b, c|)\n", "x.def")[0].entries[0]
    assert [(a.kind, a.value) for a in entry.args] == [("text", "a b"), ("text", "c|")]


MALFORMED = [
    # (source, line, col, fragment of the message)
    ("#define L(X) \\\n  X(a, b \\\n  X(c)\n", 3, 7,
     "unexpected end of line inside an argument list, expected ',' or ')'"),
    ("#define L(X) \\\n  X(a, b", 2, 9, "unexpected end of file inside an argument list"),
    ("#define L(X) \\\n  X(a,)\n", 2, 7, "unexpected ')', expected an identifier"),
    ("#define L(X) \\\n  X\n", 2, 4, "unexpected end of line, expected '('"),
    ("#define L(X) \\\n  X(a, @)\n", 2, 8, "unexpected character '@'"),
    ('#define L(X) \\\n  X("abc)\n', 2, 5, "unterminated string"),
    ("#define L(X) \\\n  /* open \\\n  X(a)\n", 2, 3, "unterminated /* comment"),
    ("#define L(X) \\\n  X(a) \\ // c\n  X(b)\n", 2, 8, "stray '\\'"),
    ("#define L(X,Y) \\\n  X(a)\n", 1, 12, "unexpected ',', expected ')'"),
    (
        "#define L(X) \\\n  X(a) \\\n  X(b)\n  X(c) \\\n  X(d)\n",
        4,
        3,
        "entry on line 4 is not joined by '\\' to the #define on line 1, "
        "expected '\\' at the end of line 3",
    ),
    (
        "#define L(X)\n  X(a)\n",
        2,
        3,
        "entry on line 2 is not joined by '\\' to the #define on line 1",
    ),
    ("\n  X(a)\n", 2, 3, "entry on line 2 is outside any '#define LIST(X)' block"),
    ("#define L(X) \\\n  X(a) \\\n  Y(b)\n", 3, 3, "entry macro 'Y' is not the list parameter"),
    ("#define L(X) \\\n  X(a) \\\n  // note \\\n  X(b)\n", 3, 3, "line comment ends in '\\'"),
    ("#define L(X) \\\n  X(a)\n#define L(X) \\\n  X(b)\n", 3, 9, "list 'L' is defined again"),
    ('#define L(X) \\\n  X("a\\qb")\n', 2, 7, "unknown escape in string"),
]


@pytest.mark.parametrize(("src", "line", "col", "fragment"), MALFORMED)
def test_malformed_input_names_file_line_col_and_what_was_expected(
    src: str, line: int, col: int, fragment: str
) -> None:
    with pytest.raises((GenError, GenErrors)) as info:
        parse_def_text(src, "catalogue/T.def")
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"catalogue/T.def:{line}:{col}: DEF-SYNTAX: "), first
    assert fragment in first


def test_one_missing_continuation_is_reported_once_not_per_following_entry() -> None:
    src = "#define L(X)\n  X(a) \\\n  X(b) \\\n  X(c)\n"
    with pytest.raises(GenError) as info:
        parse_def_text(src, "t.def")
    assert (info.value.line, info.value.col) == (2, 3)


def test_parse_def_reads_a_file_and_keeps_the_display_path(tmp_path: Path) -> None:
    f = tmp_path / "PipeCalls.def"
    f.write_text("#define L(X) \\\n  X(a)\n", encoding="utf-8")
    (lst,) = parse_def(f, "catalogue/PipeCalls.def")
    assert lst.path == "catalogue/PipeCalls.def"
    f.write_bytes(b"#define L(X) \\\n  X(\xff)\n")
    with pytest.raises(GenError) as info:
        parse_def(f, "catalogue/PipeCalls.def")
    assert str(info.value).startswith("catalogue/PipeCalls.def:2:5: DEF-ENCODING: byte 0xff is not UTF-8")


_ALPHABET = st.sampled_from(
    ["#define L(X)", "#if 1", "X", "Y", "(", ")", ",", "|", "\\\n", "\n", " ", "a.b", "[1]",
     "0x1F", "-", '"s"', '"', "/*", "*/", "//", "@", "\t", "\r\n"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_arbitrary_input_never_escapes_as_anything_but_gen_error(src: str) -> None:
    try:
        parse_def_text(src, "fuzz.def")
    except (GenError, GenErrors) as exc:
        for line in str(exc).splitlines():
            m = re.match(r"^fuzz\.def:(\d+):(\d+): DEF-SYNTAX: .+", line)
            assert m, line
            assert 1 <= int(m.group(1)) <= src.count("\n") + 1, line


def test_each_catalogue_list_reads_into_its_own_typed_row() -> None:
    """The original shape's reader (mgpipe.gen.ORIGINAL_DIR: every list of SHAPES)."""
    from mgpipe.gen import ORIGINAL_DIR
    from mgpipe.gen.catalogue import SHAPES, load_catalogue
    from mgpipe.gen.rows import CallRow, FieldRow, TailRow, arity

    cat = load_catalogue(ORIGINAL_DIR)
    first = cat.calls[0]
    assert isinstance(first, CallRow)
    assert (first.name.text, first.payload.text, first.wait.text) == ("GetCaps", "MGPCaps", "kWaitReply")
    assert first.flags.parts == ("kReplySlot",) and first.name.loc.line == first.loc.line
    assert all(isinstance(r, TailRow) for r in cat.tails)
    rows = cat.field_lists["RenderStateParameters"]
    assert all(isinstance(r, FieldRow) and r.cls is not None for r in rows)
    assert all(r.cls is None for r in cat.field_lists["MGPFlush"])  # the optional column
    assert arity(FieldRow) == (1, 2) and arity(CallRow) == (5, 5)
    assert {t for shapes in SHAPES.values() for _, t in shapes.values()} >= {CallRow, FieldRow, TailRow}
