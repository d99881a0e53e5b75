"""The recorder writes MobileGL's recorder golden format: ``index call bytes hash``."""

from __future__ import annotations

import re
import struct
from typing import Any

import pytest

from test_applier import ALL, PIPE, Pipe, _gather, _reference_block

from mgpipe.runtime.backends.recorder_golden import (
    FNV_OFFSET, HEADER, STAGE_BYTES, _normalise, fnv1a64, golden_lines, golden_records, golden_text,
    parse_golden,
)  # fmt: skip
from mgpipe.runtime.schema import layouts
from mgpipe.runtime.schema import tables
from mgpipe.runtime.wire.handle import Handle
from mgpipe.runtime.wire.header import header_size
from mgpipe.runtime.wire.codec import Encoder
from mgpipe.runtime.wire.spec import call_spec, spec_for_opcode
from mgpipe.runtime.wire.stage import StageSegment

LINE = re.compile(r"^(\d+) ([A-Z]\w+) (\d+) ([0-9a-f]{16})$")


def _scenario() -> Pipe:
    p = Pipe()
    block = _reference_block(7)
    p("CreateRenderState", {"Cso": Handle(1, 1), "ChunkMask": ALL}, blob=_gather(block, PIPE))
    p("BindRenderState", {"Cso": Handle(1, 1)})
    p("SetVertexBuffers", {"Start": 3, "Count": 2}, [[{}, {}]])
    p("ResourceCreate", {"Resource": Handle(1, 1), "Target": tables.enum("MGPipeResourceTarget")["Tex2D"]})
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
    raw[header_size()] ^= 0x01  # the first payload byte of BindRenderState
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


# -- the three doors of MobileGL's recorder ---------------------------------------------------


class _Capture:
    """Records encoded straight into a capture (no applier): ``raw`` and ``blobs`` as a
    :class:`~mgpipe.runtime.backends.recorder.Recorder` holds them."""

    def __init__(self) -> None:
        self.enc = Encoder(StageSegment(1 << 20))
        self.raw: list[bytes] = []
        self.blobs: dict[int, list[tuple[int, bytes]]] = {}

    def __call__(self, call: str, payload: Any = None, tails: Any = (), blob: bytes | None = None) -> "_Capture":
        if blob:
            self.blobs[len(self.raw)] = [(0, blob)]
        self.raw.append(bytes(self.enc.encode(call, payload, tails, blob)))
        return self


def _payload(rec: _Capture, index: int) -> bytes:
    """The payload bytes of record ``index``, as encoded."""
    spec = spec_for_opcode(struct.unpack_from("<H", rec.raw[index])[0])
    return rec.raw[index][header_size(): header_size() + spec.payload_size]


def _u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def test_an_escape_carries_its_payload_alone() -> None:
    """CreateShaderState's SPIR-V and SetProgramBindings' tails are not in the bytes of the
    line: MobileGL's route escapes count their payload only."""
    cap = _Capture()
    cap("CreateShaderState", {"Cso": Handle(1, 1), "StageMask": 1}, blob=bytes(range(64)))
    cap("SetProgramBindings", {"Cso": Handle(1, 1), "BlockBindingCount": 2, "SamplerUnitCount": 1},
        [[3, 4], [{"Location": 1, "Unit": 0}], []])  # fmt: skip
    got = golden_records(cap)
    assert [(g.call, g.nbytes) for g in got] == [
        ("CreateShaderState", call_spec("CreateShaderState").payload_size),
        ("SetProgramBindings", call_spec("SetProgramBindings").payload_size),
    ]
    p0 = bytearray(_payload(cap, 0))
    _normalise("MGPProgramDesc", p0)
    assert got[0].hash == fnv1a64(bytes(p0) + _u64(1) + struct.pack("<I", 0))  # one linked stage: 0
    tails = struct.pack("<ii", 3, 4) + layouts.from_dict("MGPProgramSamplerUnit", {"Location": 1}).tobytes()
    assert got[1].hash == fnv1a64(_payload(cap, 1) + tails)  # the tails' bytes, no count prefix


def test_the_escapes_are_the_tables_list_of_mobilegl_s_route_escapes() -> None:
    """The five rows of MobileGL's ``MGPipeRouteEscapes`` (MG_Pipe/PipeRoute.h), read from the
    tables (the overlay's ``MGPipeRouteEscape``), never typed in the runtime."""
    from mgpipe.runtime.backends import recorder_golden as rg

    want = {"ResourceRespecify", "ResourceFlushRange", "MapPersistent", "CreateShaderState",
            "SetProgramBindings"}  # fmt: skip
    assert rg.route_escapes() == want == rg.ESCAPES
    assert set(tables.enum(rg.ESCAPE_ENUM)) == want  # no sentinel members either


def test_negative_control_an_escape_that_names_no_call_is_a_named_table_error(monkeypatch) -> None:
    from mgpipe.runtime.backends import recorder_golden as rg

    real = tables.enum_members
    monkeypatch.setattr(tables, "enum_members", lambda name: (
        {**real(name), "ResourceRespecifyy": 5} if name == rg.ESCAPE_ENUM else real(name)))
    with pytest.raises(tables.TablesError, match="MGPipeRouteEscape: ResourceRespecifyy name no "
                                                 "call of CALLS"):  # fmt: skip
        rg.route_escapes()


def test_a_table_call_hashes_an_empty_blob_and_an_empty_tail_as_a_zero_count() -> None:
    cap = _Capture()
    cap("SetDynamicState", {"ChunkMask": 0})
    cap("SetVertexBuffers", {"Start": 0, "Count": 0}, [[]])
    dyn, vb = golden_records(cap)
    assert (dyn.nbytes, dyn.hash) == (call_spec("SetDynamicState").payload_size, fnv1a64(_payload(cap, 0) + _u64(0)))
    assert (vb.nbytes, vb.hash) == (call_spec("SetVertexBuffers").payload_size, fnv1a64(_payload(cap, 1) + _u64(0)))


def test_a_verb_tail_is_prefixed_by_its_size_in_bytes_and_a_verb_blob_is_staged_first() -> None:
    cap = _Capture()
    cap("DrawVbo", {"Mode": 4, "NumDraws": 1, "InstanceCount": 1}, [[{"Start": 0, "Count": 3}]])
    cap("SetStorageBlockBinding", {"ShaderCso": Handle(1, 1), "Binding": 2}, blob=b"block")
    got = golden_records(cap)
    rng = layouts.from_dict("MGPDrawRange", {"Start": 0, "Count": 3}).tobytes()
    draw = got[0]
    assert (draw.call, draw.nbytes) == ("DrawVbo", call_spec("DrawVbo").payload_size + len(rng))
    assert draw.hash == fnv1a64(_payload(cap, 0) + _u64(len(rng)) + rng)  # bytes, not 1 element
    assert [(g.call, g.nbytes, g.record) for g in got[1:]] == [
        (STAGE_BYTES, 5, -1), ("SetStorageBlockBinding", call_spec("SetStorageBlockBinding").payload_size, 1)]
    assert got[1].hash == fnv1a64(b"block")


def test_a_buffers_initial_bytes_fold_into_its_respecify() -> None:
    """glBufferData(bytes): mgpipe's respecify + whole-buffer sub-data is MobileGL's one
    respecify with initial bytes; a partial sub-data (control) stays a line of its own."""
    buf = tables.enum("MGPipeResourceTarget")["Buffer"]

    def capture(width: int) -> _Capture:
        cap = _Capture()
        cap("ResourceRespecify", {"Resource": Handle(1, 1), "Target": buf, "StorageKind": 1, "Width": 6,
                                  "HasDefinedContent": 1})  # fmt: skip
        return cap("ResourceSubData", {"Res": Handle(1, 1), "Target": buf, "RegionCount": 0,
                                       "UnionBox": {"X": 0, "W": width, "H": 1, "D": 1}}, [[]], blob=bytes(width))  # fmt: skip

    whole = capture(6)
    got = golden_records(whole)
    assert [(g.call, g.nbytes) for g in got] == [("ResourceRespecify", call_spec("ResourceRespecify").payload_size)]
    assert got[0].hash == fnv1a64(_payload(whole, 0) + _u64(0) + _u64(1))  # no level; initial bytes
    unfolded = golden_records(whole, fold_initial_bytes=False)
    assert [g.call for g in unfolded] == ["ResourceRespecify", "ResourceSubData"]
    assert unfolded[0].hash == fnv1a64(_payload(whole, 0) + _u64(0) + _u64(0))
    assert [g.call for g in golden_records(capture(4))] == ["ResourceRespecify", "ResourceSubData"]


def test_a_golden_file_parses_back() -> None:
    text = golden_text(_scenario().backend)
    rows = parse_golden(text)
    assert [f"{i} {c} {n} {h:016x}" for i, c, n, h in rows] == text.splitlines()[2:]
