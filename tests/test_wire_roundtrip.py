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
from mgpipe.runtime.wire.records import pack_record, to_plain, unpack_record
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
        ref = _get(d.payload, spec.blob_paths[0])
        assert ref.Seg == t.constant("kMGPipeSegStage")
        assert ref.Size == len(case.blob)
        assert d.blob == case.blob and isinstance(d.blob, bytes)
        fixed = np.zeros(1, spec.dtype)
        fixed[0] = expected
        layouts.fill(layouts.get_path(fixed[0], spec.blob_paths[0]), to_plain(ref))
        want = fixed[0].tobytes()
    else:
        assert d.blob is None
    assert type(d.payload).__name__ == spec.payload
    # bytes: floats (-0.0, NaN) compared by bits (a signalling NaN is carried quiet)
    assert pack_record(spec.payload, d.payload) == _f32_carried(spec.payload, want)
    assert len(d.tails) == len(case.tails)
    for tl, got, sent in zip(spec.present_tails(d.payload), d.tails, case.tails):
        assert isinstance(got, tuple) and len(got) == len(sent)
        if sent.dtype.names:
            for g, s_ in zip(got, sent):
                assert pack_record(tl.element, g) == _f32_carried(tl.element, s_.tobytes())
        else:
            assert list(got) == [x.item() for x in sent] or sent.dtype.kind == "f"
    assert set(tails_by_element(d)) == {tl.element for tl in spec.present_tails(d.payload)}


def _get(rec, path):
    for key in path:
        rec = rec[key] if isinstance(key, int) else getattr(rec, key)
    return rec


def _f32_carried(struct_name: str, raw: bytes) -> bytes:
    """``raw`` as a record carries it: through the same float unpack / pack."""
    return pack_record(struct_name, unpack_record(struct_name, raw))


def test_decoded_records_are_copies_never_views() -> None:
    """A peer writing the buffer after the decode changes nothing already decoded."""
    STAGE.reset()
    rec = bytearray(
        Encoder(STAGE).encode("DrawVbo", {"NumDraws": 2}, [[{"Count": 3}, {"Count": 4}]])
    )
    d = Decoder(STAGE).decode(memoryview(rec))
    rec[8] = 7  # Mode, first payload byte after the header
    rec[-16] = 9  # inside the second MGPDrawRange
    assert d.payload.Mode == 0 and [r.Count for r in d.tails[0]] == [3, 4]
    with pytest.raises(AttributeError):
        d.payload.Mode = 1  # type: ignore[misc]


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
