"""Coverage-guided fuzzing of the wire decoder and the applier with atheris (libFuzzer).

Seeds: one valid encoding of every catalogue call. Every input is decoded by the compiled
decoder and by the reference decoder (the differential oracle: both must refuse with the
same reason, or decode the same values, so a missing bounds check is a finding even when
nothing crashes) and, when it decodes, applied to a recorder-backed applier; the only
exception allowed out is ``ProtocolCorruption`` (or ``ResourceLimit``: a well-formed record past
one of the cost budgets of runtime/budgets.py). Anything else is a finding: libFuzzer
stops with a crash.

    python benchmarks/fuzz_decoder.py -atheris_runs=20000 [more libFuzzer flags]

Prints ``fuzz_decoder: inputs=<n> decoded=<n> refused=<n> seconds=<s> inputs_per_s=<r>``
at exit (the test suite parses that line).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time

import atheris

with atheris.instrument_imports(include=["mgpipe"]):
    from mgpipe.runtime.budgets import ResourceLimit
    from mgpipe.runtime.schema import layouts
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.backends.recorder import Recorder
    from mgpipe.runtime.errors import ProtocolCorruption
    from mgpipe.runtime.wire.stage import StageSegment
    from mgpipe.runtime.wire.codec import Decoder, Encoder
    from mgpipe.runtime.wire.reference import ReferenceDecoder, differential
    from mgpipe.runtime.wire.spec import all_specs

STAGE = StageSegment(1 << 16)
DECODER = Decoder(STAGE)
REFERENCE = ReferenceDecoder(STAGE)
STATS = {"inputs": 0, "decoded": 0, "refused": 0}
START = time.monotonic()
APPLY_EVERY = 4  # a fresh applier per few inputs keeps object tables small
MAX_SLOTS = 4096  # a slot above it is a Range refusal (tables grow O(1) per record anyway)


def seeds() -> list[bytes]:
    """One valid record per call (counts 1 where a tail has a count field)."""
    enc = Encoder(STAGE)
    out = []
    for spec in all_specs():
        payload: dict[str, object] = {}
        for t in spec.tails:
            if t.count_field:
                payload[t.count_field] = 1
        if spec.name == "Present":
            payload["FrameSerial"] = 1
        if spec.name == "SetVertexAttribDefaults":
            payload["Mask"] = 1
        present = spec.present_tails(layouts.from_dict(spec.payload, payload))
        tails = [bytes(t.dtype.itemsize) for t in present]
        blob = b"\x01" * 16 if spec.blob_paths else None
        out.append(enc.encode(spec.name, payload, tails, blob))
    return out


_applier: list[Applier] = []


def test_one_input(data: bytes) -> None:
    STATS["inputs"] += 1
    if STATS["inputs"] % APPLY_EVERY == 1 or not _applier:
        _applier[:] = [Applier(Recorder(), STAGE, max_slots=MAX_SLOTS)]
    # the differential oracle: the compiled decoder and the reference decoder agree on the
    # outcome (same refusal reason, or the same values); a disagreement is a finding
    if differential(DECODER, REFERENCE, data).startswith("refused"):
        STATS["refused"] += 1
        return
    STATS["decoded"] += 1
    try:
        _applier[0].apply(data)
    except (ProtocolCorruption, ResourceLimit):  # a named refusal: malformed, or past a budget
        pass


def report() -> None:
    secs = max(time.monotonic() - START, 1e-9)
    print(
        f"fuzz_decoder: inputs={STATS['inputs']} decoded={STATS['decoded']} "
        f"refused={STATS['refused']} seconds={secs:.2f} "
        f"inputs_per_s={STATS['inputs'] / secs:.0f}",
        flush=True,
    )


def main() -> None:
    corpus = tempfile.mkdtemp(prefix="mgpipe-fuzz-corpus-")
    for i, rec in enumerate(seeds()):
        with open(os.path.join(corpus, f"seed{i:03d}"), "wb") as f:
            f.write(rec)
    args = [a for a in sys.argv if a] + [corpus]
    if not any(a.startswith("-max_len") for a in args):
        args.insert(1, "-max_len=4096")
    atexit.register(report)
    atexit.register(shutil.rmtree, corpus, True)
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
