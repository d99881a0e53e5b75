"""Scenes through both transports, against committed golden recordings.

``MGPIPE_UPDATE_GOLDEN=1 python -m pytest tests/test_scenes.py`` rewrites
``tests/golden/<scene>.json`` (review the diff before committing it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mgpipe.cli import main
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.harness.runner import SCENES, run_scene

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("MGPIPE_UPDATE_GOLDEN") == "1"
#: Small repetition counts keep the committed recordings short.
GOLDEN_N = {"blend-toggle": 3, "viewport-churn": 12, "clear-present": 3, "readback": 2}


#: Pixel scenes are checked by their probes and golden PNGs (tests/test_gles_scenes.py).
RECORDED = sorted(n for n, s in SCENES.items() if s.probes is None)


def test_every_scene_has_a_golden_size() -> None:
    assert set(GOLDEN_N) == set(RECORDED)


@pytest.mark.parametrize("name", RECORDED)
def test_monolith_and_inproc_record_the_same(name: str) -> None:
    mono = run_scene(name, transport="monolith")
    inproc = run_scene(name, transport="inproc")
    assert mono.recording_digest == inproc.recording_digest
    assert (mono.draws, mono.records, mono.wire_bytes, mono.csos_minted) == (
        inproc.draws, inproc.records, inproc.wire_bytes, inproc.csos_minted)  # fmt: skip


@pytest.mark.parametrize("name", RECORDED)
def test_scene_matches_its_golden_recording(name: str, tmp_path: Path) -> None:
    res = run_scene(name, n=GOLDEN_N[name])
    path = GOLDEN / f"{name}.json"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(res.backend.to_json())
    assert path.exists(), f"{path} missing: run with MGPIPE_UPDATE_GOLDEN=1"
    golden = Recorder.from_json(path.read_text())  # refuses a hand-edited file
    if res.recording_digest != golden.recording_digest():  # the JSON only on failure
        actual = tmp_path / f"{name}.json"
        actual.write_text(res.backend.to_json())
        pytest.fail(f"{name}: recording changed; diff {actual} against {path}, "
                    "then MGPIPE_UPDATE_GOLDEN=1 if intended")  # fmt: skip


def test_golden_digest_goes_red_on_a_changed_scene() -> None:
    """Negative control: one more draw is a different recording."""
    a = run_scene("blend-toggle", n=GOLDEN_N["blend-toggle"])
    b = run_scene("blend-toggle", n=GOLDEN_N["blend-toggle"] + 1)
    assert a.recording_digest != b.recording_digest


def test_cli_run_json_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["run", "all", "--transport", "inproc", "--json", "-n", "2", "--out", str(tmp_path)])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in doc["scenes"]] == list(SCENES)
    keys = {"name", "draws", "records", "wire_bytes", "csos_minted", "recording_digest"}
    assert all(keys <= set(s) for s in doc["scenes"])  # the stable keys (stage_bytes is extra)
    bt = next(s for s in doc["scenes"] if s["name"] == "blend-toggle")
    assert bt["draws"] == 4 and bt["csos_minted"] == 2
    for s in doc["scenes"]:
        saved = Recorder.from_json((tmp_path / f"{s['name']}.json").read_text())
        assert saved.recording_digest() == s["recording_digest"]


def test_cli_run_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "viewport-churn", "-n", "5"]) == 0
    out = capsys.readouterr().out
    assert "viewport-churn" in out and "recording digest" in out


@pytest.mark.parametrize("argv,needle", [
    (["run", "blend-toggle", "--backend", "no-such-backend"],
     "<command line>:1:1: UNKNOWN-BACKEND: no backend named 'no-such-backend', expected "),
    (["run", "no-such-scene"], "<command line>:1:1: UNKNOWN-SCENE: no scene named 'no-such-scene', expected "),
])  # fmt: skip
def test_cli_run_refuses_unknown_names(argv: list[str], needle: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


STREAMS = json.loads((GOLDEN / "streams.json").read_text())


@pytest.mark.parametrize("key", sorted(STREAMS))
def test_ring_stream_is_byte_identical_to_the_pinned_one(key: str) -> None:
    """xxh64 of every record's bytes, in order, as the transport hands them to the server
    (pinned from the runtime before its restructure: the hot path changed, the bytes not)."""
    import xxhash

    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    name, transport, n = key.split("/")
    stage = StageSegment(4 << 20)
    applier, h, count = Applier(Recorder(), stage), xxhash.xxh64(), [0]

    def sink(rec: memoryview) -> object:
        h.update(bytes(rec))
        count[0] += 1
        return applier.apply(rec)

    with Client(sink, stage, transport=transport, reverse=applier.apply.reverse) as c:
        SCENES[name].run(c, int(n))
    if UPDATE:  # re-pin (the scenes' programs changed: real SPIR-V replaced placeholder bytes)
        pinned = json.loads((GOLDEN / "streams.json").read_text())
        pinned[key] = [h.hexdigest(), count[0]]
        (GOLDEN / "streams.json").write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n")
        return
    assert [h.hexdigest(), count[0]] == STREAMS[key]
