"""The recorder writes MobileGL's recorder golden format: ``index call bytes hash``."""

from __future__ import annotations

import re

from test_applier import ALL, PIPE, Pipe, _gather, _reference_block

from mgpipe.runtime.backends.recorder_golden import (
    FNV_OFFSET, HEADER, _normalise, fnv1a64, golden_lines, golden_text,
)  # fmt: skip
from mgpipe.runtime.schema import layouts
from mgpipe.runtime.wire.handle import Handle
from mgpipe.runtime.wire.spec import call_spec

LINE = re.compile(r"^(\d+) ([A-Z]\w+) (\d+) ([0-9a-f]{16})$")


def _scenario() -> Pipe:
    p = Pipe()
    block = _reference_block(7)
    p("CreateRenderState", {"Cso": Handle(1, 1), "ChunkMask": ALL}, blob=_gather(block, PIPE))
    p("BindRenderState", {"Cso": Handle(1, 1)})
    p("SetVertexBuffers", {"Start": 3, "Count": 2}, [[{}, {}]])
    p("ResourceCreate", {"Res": Handle(1, 1), "Target": 2})
    return p


def test_fnv1a64_is_the_64_bit_fnv_1a() -> None:
    assert fnv1a64(b"") == FNV_OFFSET == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C  # the published FNV-1a 64 test vector


def test_one_line_per_record_with_the_bytes_the_call_carried() -> None:
    rec = _scenario().backend
    lines = golden_lines(rec)
    assert len(lines) == len(rec.raw) == 4
    got = [LINE.match(line).groups() for line in lines]  # type: ignore[union-attr]
    assert [g[:2] for g in got] == [("0", "CreateRenderState"), ("1", "BindRenderState"),
                                    ("2", "SetVertexBuffers"), ("3", "ResourceCreate")]
    pipeline_bytes = sum(n for _, n in PIPE)
    assert int(got[0][2]) == call_spec("CreateRenderState").payload_size + pipeline_bytes
    elem = call_spec("SetVertexBuffers").tails[0].dtype.itemsize
    assert int(got[2][2]) == call_spec("SetVertexBuffers").payload_size + 2 * elem
    assert int(got[3][2]) == call_spec("ResourceCreate").payload_size
    text = golden_text(rec)
    assert text.startswith(HEADER) and text.count("\n") == 2 + 4


def test_the_lines_are_deterministic_and_a_perturbed_record_changes_only_its_line() -> None:
    a, b = _scenario().backend, _scenario().backend
    assert golden_lines(a) == golden_lines(b)
    raw = bytearray(b.raw[1])
    raw[8] ^= 0x01  # the first payload byte of BindRenderState
    b.raw[1] = bytes(raw)
    changed = [i for i, (x, y) in enumerate(zip(golden_lines(a), golden_lines(b))) if x != y]
    assert changed == [1]
    blob = list(b.blobs[0][0])
    blob[1] = bytes([blob[1][0] ^ 0xFF]) + blob[1][1:]
    b.blobs[0] = [tuple(blob)]  # type: ignore[list-item]
    changed = [i for i, (x, y) in enumerate(zip(golden_lines(a), golden_lines(b))) if x != y]
    assert changed == [0, 1]


def test_an_address_in_caller_memory_is_zeroed_and_its_size_kept() -> None:
    span = bytearray(layouts.from_dict("MGHostSpan", {"Ptr": 0x1234, "Seg": 0, "Offset": 40, "Size": 16}).tobytes())
    staged = bytearray(layouts.from_dict("MGHostSpan", {"Ptr": 0x1234, "Seg": 2, "Offset": 40, "Size": 16}).tobytes())
    _normalise("MGHostSpan", span)
    _normalise("MGHostSpan", staged)
    a, b = layouts.view("MGHostSpan", bytes(span)), layouts.view("MGHostSpan", bytes(staged))
    assert (int(a["Ptr"]), int(a["Offset"]), int(a["Size"])) == (0, 0, 16)
    assert (int(b["Ptr"]), int(b["Offset"]), int(b["Size"])) == (0, 40, 16)  # a segment offset stays
