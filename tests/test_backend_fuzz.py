"""The backend fuzzer (issue 21): mutated but well-formed streams against the real GLES and
Vulkan backends, each in a child process (``backend_fuzz_peer.py``) so a driver crash is a
finding, named with its stream, and the run goes on from the next stream.

A stream passes when it ends ``ok`` or as a named refusal (``PipeFatal``), with no
validation message and no record slower than :data:`RECORD_BUDGET_S`. The quick form runs
:data:`STREAMS` streams per backend; ``MGPIPE_BACKEND_FUZZ_STREAMS=100000`` runs the long
form, ``MGPIPE_BACKEND_FUZZ_JOBS=N`` runs N children at once (``MGPIPE_FUZZ_TRACE=1 python tests/backend_fuzz_peer.py BACKEND I 1`` replays
stream ``I`` with its mutations printed).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

PEER = Path(__file__).with_name("backend_fuzz_peer.py")
STREAMS = int(os.environ.get("MGPIPE_BACKEND_FUZZ_STREAMS", "60"))
JOBS = max(1, int(os.environ.get("MGPIPE_BACKEND_FUZZ_JOBS", "1")))
CHUNK = 500  # streams per child (a crash costs the rest of its chunk one restart)
RECORD_BUDGET_S = 5.0
#: a child's data segment (RLIMIT_DATA): a stream that allocates without bound fails there
#: (MemoryError, a raw exception, or the child's death: a finding) instead of taking the
#: machine (stream 2733 once grew a Vulkan child to 24 GB before the OOM killer took it)
MEMORY_BUDGET = 6 << 30


def _bounded() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_BUDGET, MEMORY_BUDGET))


def fuzz(backend: str, first: int, count: int) -> tuple[list[dict], list[str]]:
    """(every stream's outcome, the findings) of streams ``first`` .. ``first+count-1``."""
    outcomes: list[dict] = []
    findings: list[str] = []
    i, end = first, first + count
    while i < end:
        n = min(CHUNK, end - i)
        proc = subprocess.run([sys.executable, str(PEER), backend, str(i), str(n)],
                              capture_output=True, text=True, timeout=600 + 2 * n,
                              preexec_fn=_bounded)  # fmt: skip
        started = None
        for line in proc.stdout.splitlines():
            if line.startswith("START "):
                started = int(line.split()[1])
            elif line.startswith("DONE "):
                _, k, text = line.split(" ", 2)
                out = json.loads(text)
                out["stream"] = int(k)
                outcomes.append(out)
                started = None
                if out["outcome"] == "raised":
                    findings.append(f"{backend} stream {k} ({out['scene']}): raw "
                                    f"{out['kind']}: {out['reason']}")  # fmt: skip
                if out["messages"]:
                    findings.append(f"{backend} stream {k}: validation {out['messages'][:2]}")
                if out["slowest_s"] > RECORD_BUDGET_S:
                    findings.append(f"{backend} stream {k}: a record took {out['slowest_s']} s")
        done = outcomes[-1]["stream"] + 1 if outcomes and outcomes[-1]["stream"] >= i else i
        if proc.returncode != 0:
            crashed = started if started is not None else done
            sig = f" ({signal.Signals(-proc.returncode).name})" if proc.returncode < 0 else ""
            findings.append(f"{backend} stream {crashed}: the child died, rc "
                            f"{proc.returncode}{sig}")  # fmt: skip
            i = crashed + 1
        else:
            i += n
    return outcomes, findings


def fuzz_parallel(backend: str, count: int, jobs: int) -> tuple[list[dict], list[str]]:
    """:func:`fuzz` over streams ``0 .. count-1`` in chunks, ``jobs`` children at a time;
    outcomes in stream order."""
    from concurrent.futures import ThreadPoolExecutor

    if jobs == 1:
        return fuzz(backend, 0, count)
    starts = range(0, count, CHUNK)
    with ThreadPoolExecutor(jobs) as pool:
        parts = list(pool.map(lambda a: fuzz(backend, a, min(CHUNK, count - a)), starts))
    outcomes = sorted((o for p in parts for o in p[0]), key=lambda o: o["stream"])
    return outcomes, [f for p in parts for f in p[1]]


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_mutated_streams_end_ok_or_named(backend: str, record_property) -> None:
    outcomes, findings = fuzz_parallel(backend, STREAMS, JOBS)
    record_property("backend_fuzz_streams", len(outcomes))
    record_property("backend_fuzz_refused", sum(o["outcome"] == "refused" for o in outcomes))
    assert not findings, "\n".join(findings)
    assert len(outcomes) == STREAMS
    # the streams really were hostile: most carried mutations, many were refused by name
    assert sum(o["mutations"] > 0 for o in outcomes) > STREAMS // 2
    assert any(o["outcome"] == "refused" for o in outcomes)
    # the compiled door's records and staged blobs were mutated too, not only general fields
    assert any(o["fast_mutations"] for o in outcomes) and any(o["blob_mutations"] for o in outcomes)


def _fake_peer(tmp_path: Path, monkeypatch, stream_body: str) -> None:
    """Replace the peer with a script: per stream it prints START, runs ``stream_body``
    (indented 4, with ``i`` the stream and ``out`` an ok outcome it may change), then DONE."""
    fake = tmp_path / "peer.py"
    fake.write_text(
        "import json, os, signal, sys\n"
        "first, n = int(sys.argv[2]), int(sys.argv[3])\n"
        "for i in range(first, first + n):\n"
        "    print(f'START {i}', flush=True)\n"
        "    out = {'scene': 's', 'outcome': 'ok', 'kind': '', 'reason': '', 'messages': [],\n"
        "           'mutations': 1, 'slowest_s': 0.0}\n"
        + "".join(f"    {line}\n" for line in stream_body.strip("\n").splitlines())
        + "    print(f'DONE {i} ' + json.dumps(out), flush=True)\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PEER", fake)


_CRASH_AT_1 = """
if i == 1:
    os.kill(os.getpid(), signal.SIGSEGV)
"""


def test_the_fuzzer_names_a_crash_and_a_raw_exception(tmp_path: Path, monkeypatch) -> None:
    """Negative control: a peer that dies by SIGSEGV in stream 1 and raises in stream 2
    is reported as both findings, and the run resumes after the crash."""
    _fake_peer(tmp_path, monkeypatch, _CRASH_AT_1 + """
if i == 2:
    out.update(outcome='raised', kind='IndexError', reason='x')
""")
    outcomes, findings = fuzz("gles", 0, 4)
    assert [o["stream"] for o in outcomes] == [0, 2, 3]
    assert any("stream 1: the child died" in f and "SIGSEGV" in f for f in findings)
    assert any("stream 2" in f and "raw IndexError" in f for f in findings)


def test_parallel_chunks_cover_every_stream_in_order(tmp_path: Path, monkeypatch) -> None:
    """The long form's parallel children: 1,200 streams in three chunks, three at once, come
    back in stream order with the crash in the first chunk named and the run resumed."""
    _fake_peer(tmp_path, monkeypatch, _CRASH_AT_1)
    outcomes, findings = fuzz_parallel("gles", 1200, 3)
    assert [o["stream"] for o in outcomes] == [0, *range(2, 1200)]
    assert len(findings) == 1 and "stream 1: the child died" in findings[0]


#: streams the fuzzer found a validation message or unbounded work in, each now refused by
#: name before the driver: (backend, stream, the refusal's reason)
FOUND = [
    ("vulkan", 219, "DrawVbo.Mode"),  # GL_POINTS, no gl_PointSize written (VUID ...-07722)
    ("vulkan", 689, "CreateVertexElements.MGPVertexAttribWire"),  # offset 135 (VUID ...-02721)
    ("vulkan", 2733, "ResourceSubData.Region"),  # a region 2^32 - 1 rows high: checked first
    # the 100,000-stream run's findings (28 streams, 6 kinds; every one replays clean now):
    ("vulkan", 15901, "ReadPixels.Box"),  # clear stencil -2^31 (OverflowError): masked as GL
    ("vulkan", 15684, "CreateVertexElements.MGPVertexAttribWire"),  # offset past the limit
    ("vulkan", 46304, "CreateVertexElements.MGPVertexBindingPointWire"),  # stride (VUID-00619)
    ("vulkan", 13633, "SetFramebufferState.Res"),  # a 3-D texture attached (VUID-...-04113)
    ("vulkan", 38664, "DrawVbo.VertexBuffers"),  # binding offset past a shrunk buffer (-00626)
    # the 100,000-stream GLES run's one finding: sub data into a texture given no storage
    ("gles", 21717, "ResourceSubData.Res"),  # a raw KeyError before
]


@pytest.mark.parametrize("backend, stream, reason", FOUND)
def test_found_streams_are_refused_by_name_without_a_validation_message(backend, stream, reason):
    outcomes, findings = fuzz(backend, stream, 1)
    assert findings == [] and len(outcomes) == 1
    assert (outcomes[0]["outcome"], outcomes[0]["reason"]) == ("refused", reason), outcomes[0]


def test_a_child_that_allocates_without_bound_is_a_finding(tmp_path: Path, monkeypatch) -> None:
    """Negative control of the memory budget: a stream that allocates forever fails inside
    the budget (here a MemoryError the peer reports as raised) and the run goes on."""
    _fake_peer(tmp_path, monkeypatch, """
if i == 0:
    try:
        hog = [bytearray(1 << 28) for _ in range(10 ** 6)]
    except MemoryError:
        out.update(outcome='raised', kind='MemoryError', reason='budget')
""")
    monkeypatch.setattr(sys.modules[__name__], "MEMORY_BUDGET", 512 << 20)  # fails sooner
    outcomes, findings = fuzz("gles", 0, 2)
    assert [o["stream"] for o in outcomes] == [0, 1]
    assert findings == ["gles stream 0 (s): raw MemoryError: budget"]
