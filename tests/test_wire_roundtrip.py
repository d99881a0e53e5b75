"""encode -> decode gives back the same payload bytes, tails and blob, for every call."""

from __future__ import annotations

import numpy as np
import pytest
from _wire_gen import ALL_CALLS, cases, tail_input
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mgpipe.runtime.schema import layouts
from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.wire.header import read_header
from mgpipe.runtime.wire.stage import StageSegment
from mgpipe.runtime.wire.codec import Decoder, Encoder, tails_by_element
from mgpipe.runtime.wire.spec import call_spec

STAGE = StageSegment(1 << 20)


def test_every_catalogue_call_is_covered() -> None:
    assert len(ALL_CALLS) == len(t.tables().CALLS) == 80


@pytest.mark.parametrize("call", ALL_CALLS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_roundtrip(call: str, data: st.DataObject) -> None:
    STAGE.reset()
    spec = call_spec(call)
    case = data.draw(cases(spec, STAGE))
    as_dict = data.draw(st.booleans())
    payload = layouts.to_dict(case.payload) if as_dict else case.payload
    expected = layouts.from_dict(spec.payload, payload) if as_dict else case.payload
    modes = [data.draw(st.integers(0, 2)) for _ in case.tails]
    tails = [tail_input(a, m) for a, m in zip(case.tails, modes)]
    record = Encoder(STAGE).encode(call, payload, tails, case.blob)

    op, flags, size = read_header(record)
    assert (op, flags, size) == (spec.opcode, 0, len(record)) and size % 8 == 0
    assert spec.var_tail or size == spec.fixed_size

    d = Decoder(STAGE).decode(memoryview(record))
    assert (d.op, d.name, d.size) == (spec.opcode, call, size)
    want = expected.tobytes()
    if spec.blob_paths:  # the encoder wrote the first blob ref; everything else is ours
        ref = layouts.get_path(d.payload, spec.blob_paths[0])
        assert int(ref["Seg"]) == t.constant("kMGPipeSegStage")
        assert int(ref["Size"]) == len(case.blob)
        assert bytes(d.blob) == case.blob
        fixed = np.zeros(1, spec.dtype)
        fixed[0] = expected
        layouts.fill(layouts.get_path(fixed[0], spec.blob_paths[0]), layouts.to_dict(ref))
        want = fixed[0].tobytes()
    else:
        assert d.blob is None
    assert d.payload.tobytes() == want  # bytes: floats (-0.0, NaN) compared by bits
    assert len(d.tails) == len(case.tails)
    for got, sent in zip(d.tails, case.tails):
        assert got.dtype == sent.dtype and got.tobytes() == sent.tobytes()
    assert set(tails_by_element(d)) == {tl.element for tl in spec.present_tails(d.payload)}


def test_decoded_views_are_zero_copy() -> None:
    STAGE.reset()
    rec = bytearray(
        Encoder(STAGE).encode("DrawVbo", {"NumDraws": 2}, [[{"Count": 3}, {"Count": 4}]])
    )
    d = Decoder(STAGE).decode(memoryview(rec))
    rec[8] = 7  # Mode, first payload byte after the header
    rec[-16] = 9  # inside the second MGPDrawRange
    assert int(d.payload["Mode"]) == 7 and 9 in d.tails[0].view(np.uint8)


@pytest.mark.parametrize(
    "call,payload,tails,needle",
    [
        ("DrawVbo", {"NumDraws": 2}, [[{}]], "DrawVbo"),
        ("DrawVbo", {"NumDraws": 1}, [], "DrawVbo"),
        ("SetVertexBuffers", {"Count": 33}, [[{}] * 33], "SetVertexBuffers"),
        ("Present", {"FrameSerial": 1}, [[{}]], "Present"),
        ("NoSuchCall", {}, [], "NoSuchCall"),
        ("Present", {"FrameSerial": -1}, [], "FrameSerial"),
    ],
)
def test_encoder_refuses_client_bugs_with_value_error(
    call: str, payload: dict, tails: list, needle: str
) -> None:
    with pytest.raises(ValueError, match=needle):
        Encoder(STAGE).encode(call, payload, tails)


def test_blob_on_a_call_without_kHasBlob_is_refused() -> None:
    with pytest.raises(ValueError, match="Present"):
        Encoder(STAGE).encode("Present", {"FrameSerial": 1}, blob=b"x")
