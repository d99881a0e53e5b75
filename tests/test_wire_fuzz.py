"""The decoder refuses arbitrary bytes with ProtocolCorruption only — never another error.

Two layers: hypothesis mutations of valid records of every call (truncation, bit flips,
count and size rewrites, random bytes), and a bounded coverage-guided atheris run of
``benchmarks/fuzz_decoder.py`` in a subprocess (atheris.Setup/Fuzz is process-global).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from _wire_gen import ALL_CALLS, cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mgpipe.runtime.schema import layouts
from mgpipe.runtime.wire.records import to_plain
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.budgets import ResourceLimit
from mgpipe.runtime.errors import ProtocolCorruption
from mgpipe.runtime.wire.header import pack_header, read_header
from mgpipe.runtime.wire.stage import StageSegment
from mgpipe.runtime.wire import compiled
from mgpipe.runtime.wire.codec import Decoder, Encoder
from mgpipe.runtime.wire.reference import OracleMismatch, ReferenceDecoder, differential
from mgpipe.runtime.wire.spec import call_spec

ROOT = Path(__file__).resolve().parents[1]
STAGE = StageSegment(1 << 16)
ATHERIS_RUNS = int(os.environ.get("MGPIPE_FUZZ_RUNS", "20000"))
#: the memory the fuzzer may grow by itself (libFuzzer's default -rss_limit_mb)
FUZZER_RSS_MB = 2048
#: hypothesis examples of mutated records: the quick form in CI, the long one with MGPIPE_LONG=1
MUTATED_EXAMPLES = 20_000 if os.environ.get("MGPIPE_LONG") == "1" else 1_000


def _must_refuse_or_decode(record: bytes) -> None:
    # the differential oracle: the compiled decoder and the reference agree on every record
    if differential(Decoder(STAGE), ReferenceDecoder(STAGE), record).startswith("refused"):
        return
    try:  # and the applier over it refuses by name only, too
        Applier(Recorder(), STAGE, max_slots=4096).apply(record)
    except (ProtocolCorruption, ResourceLimit):  # named: malformed, or past a cost budget
        pass


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    STAGE.reset()
    spec = call_spec(draw(st.sampled_from(ALL_CALLS)))
    case = draw(cases(spec, STAGE))
    rec = bytearray(Encoder(STAGE).encode(spec.name, case.payload, case.tails, case.blob))
    how = draw(st.sampled_from(["truncate", "truncate+size", "flip", "count", "size", "junk"]))
    if how.startswith("truncate"):
        rec = rec[: draw(st.integers(0, len(rec)))]
        if how.endswith("size") and len(rec) >= 8:
            op, flags, _ = read_header(rec)
            rec[:8] = pack_header(op, flags, len(rec))
    elif how == "flip":
        for _ in range(draw(st.integers(1, 8))):
            bit = draw(st.integers(0, len(rec) * 8 - 1))
            rec[bit // 8] ^= 1 << (bit % 8)
    elif how == "count" and spec.tails:
        tail = draw(st.sampled_from(spec.tails))
        if tail.count_field:
            field = layouts.dtype(spec.payload).fields[tail.count_field]
            off, size = 8 + field[1], field[0].itemsize
            value = draw(st.integers(0, (1 << (8 * size)) - 1))
            rec[off : off + size] = value.to_bytes(size, "little")
    elif how == "size":
        op, flags, _ = read_header(rec)
        rec[:8] = pack_header(op, flags, draw(st.integers(0, 2**32 - 1)))
    elif how == "junk":
        rec = bytearray(draw(st.binary(max_size=512)))
    return bytes(rec)


@settings(
    max_examples=MUTATED_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(record=mutated())
def test_mutated_records_are_refused_or_decoded(record: bytes) -> None:
    _must_refuse_or_decode(record)


@pytest.mark.parametrize(
    "record,reason",
    [
        (b"", "Wire.Header"),
        (b"\x01\x00", "Wire.Header"),
        (pack_header(1, 0, 4), "Wire.Size"),
        (pack_header(1, 0, 12) + bytes(8), "Wire.Size"),
        (pack_header(1, 0, 64), "Wire.Size"),
        (pack_header(0, 0, 8), "Wire.Op"),
        (pack_header(0xFFFF, 0, 8), "Wire.Op"),
        (pack_header(call_spec("Present").opcode, 0, 8), "Present.Size"),
        (pack_header(call_spec("Present").opcode, 0, 24) + bytes(16), "Present.Size"),
    ],
)
def test_header_faults_are_named(record: bytes, reason: str) -> None:
    with pytest.raises(ProtocolCorruption) as exc:
        Decoder(STAGE).decode(record)
    assert exc.value.reason == reason


def test_bounds_tails_blobs_and_semantics_are_named() -> None:
    enc, dec = Encoder(STAGE), Decoder(STAGE)

    def reason(rec: bytes | bytearray) -> str:
        with pytest.raises(ProtocolCorruption) as exc:
            dec.decode(bytes(rec))
        return exc.value.reason

    def patch(call: str, payload: dict, member: str, value: int, tails: list = ()) -> bytearray:
        rec = bytearray(enc.encode(call, payload, tails))
        field = layouts.dtype(call_spec(call).payload).fields[member]
        off, size = 8 + field[1], field[0].itemsize
        rec[off : off + size] = value.to_bytes(size, "little")
        return rec

    bound = call_spec("SetProgramBindings").tails[1].bound
    assert reason(patch("SetProgramBindings", {}, "SamplerUnitCount", bound + 1, [[], [], []])) == (
        "SetProgramBindings.SamplerUnitCount"
    )
    assert reason(patch("SetProgramBindings", {}, "SamplerUnitCount", 1, [[], [], []])) == (
        "SetProgramBindings.Tail"
    )
    assert reason(patch("SetShaderBuffers", {}, "Start", 85, [[], []])) == "SetShaderBuffers.Count"
    assert (
        reason(enc.encode("SetShaderBuffers", {"Class": 3}, [[], []])) == "SetShaderBuffers.Class"
    )
    assert reason(enc.encode("Present", {"FrameSerial": 0})) == "Present.FrameSerial"
    # MobileGL's BindShaderImage (MGPImageBind) carries glBindImageTexture's Access GL token
    # verbatim, not MGPImageView's three-value encoding: no ImageView rule applies to it
    assert dec.decode(enc.encode("BindShaderImage", {"Access": 3})).payload.Access == 3
    assert (
        reason(enc.encode("SetShaderImages", {"Count": 1}, [[{"Access": 7}]])) == "ImageView.Access"
    )
    assert (
        reason(enc.encode("SetVertexAttribDefaults", {"Mask": 0b11, "Count": 1}, [[{}]]))
        == "SetVertexAttribDefaults.Count"
    )
    big = {"Parameters": {"Offset": STAGE.capacity - 8, "Size": 16, "Seg": STAGE.seg}}
    assert reason(enc.encode("CreateSamplerState", big)) == "CreateSamplerState.Blob"
    wrong_seg = {"Parameters": {"Offset": 0, "Size": 8, "Seg": STAGE.seg + 1}}
    assert reason(enc.encode("CreateSamplerState", wrong_seg)) == "CreateSamplerState.Blob"
    spirv = {"Spirv": [{}, {"Offset": 0, "Size": 1 << 40, "Seg": STAGE.seg}]}
    assert reason(enc.encode("CreateShaderState", spirv)) == "CreateShaderState.Blob"
    # a byte that is not 0/1 in a bool member decodes (and round-trips) without a crash
    rec = bytearray(enc.encode("SetPixelPackState"))
    rec[8:] = b"\x05" * (len(rec) - 8)
    assert to_plain(dec.decode(bytes(rec)).payload)


def test_oracle_goes_red_on_a_missing_bounds_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control: a decoder without the window bound check decodes a record the
    reference refuses; the differential oracle names it (no crash would)."""
    call = "SetVertexBuffers"
    t = call_spec(call).tails[0]
    src = compiled.decoder_source(call)
    bound_check = f"    if n > {t.bound} or p.Start + n > {t.bound}:\n        raise _PC({t.reason!r})\n"
    assert bound_check in src
    broken = src.replace(bound_check, "")
    monkeypatch.setattr(compiled, "decoder_source", lambda name: broken if name == call else src)
    enc = Encoder(STAGE)
    rec = bytearray(enc.encode(call, {"Count": 2}, [[{}, {}]]))
    field = layouts.dtype(call_spec(call).payload).fields["Start"]
    rec[8 + field[1] : 8 + field[1] + field[0].itemsize] = (t.bound - 1).to_bytes(
        field[0].itemsize, "little")  # fmt: skip
    with pytest.raises(OracleMismatch, match="decoder ok.*reference refused"):
        differential(Decoder(STAGE), ReferenceDecoder(STAGE), bytes(rec))
    monkeypatch.undo()  # the same record with the check in place: both refuse alike
    assert differential(Decoder(STAGE), ReferenceDecoder(STAGE), bytes(rec)) == (
        f"refused:{t.reason}"
    )


def test_atheris_bounded_run(record_property: pytest.RecordProperty, tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    # libFuzzer's RSS limit reads the peak RSS, which a child inherits from its parent on
    # Linux (a 2 GiB pytest worker's child starts at 2 GiB and trips the 2048 MB default at
    # once): the limit is the fuzzer's own 2048 MB above what this process has peaked at
    inherited_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fuzz_decoder.py"),
         f"-atheris_runs={ATHERIS_RUNS}", "-seed=1",
         f"-rss_limit_mb={FUZZER_RSS_MB + inherited_mb}",
         f"-artifact_prefix={tmp_path}/"],  # a crash unit lands here, not in the checkout
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    m = re.search(
        r"fuzz_decoder: inputs=(\d+) decoded=(\d+) refused=(\d+).*inputs_per_s=(\d+)", out
    )
    assert m, out[-2000:]
    inputs, decoded, refused, rate = map(int, m.groups())
    record_property("atheris_inputs", inputs)
    record_property("atheris_decoded", decoded)
    record_property("atheris_inputs_per_s", rate)
    print(f"\natheris: {inputs} inputs ({decoded} decoded, {refused} refused), {rate}/s")
    assert inputs >= ATHERIS_RUNS and decoded > 0 and refused > 0
