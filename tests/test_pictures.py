"""Pictures are facts: the same bytes on every run, a capture that measures nothing, and a
``compare`` that compares every scene's image.

- every render target starts from defined pixels (GL's initial clear values), so
  ``mgpipe run all --out DIR`` twice writes byte-identical PNGs on each backend;
- ``--out``'s capture of a scene that reads nothing back is taken outside the measured
  part: records, wire and stage bytes, CSOs, the recording digest and the driver call
  counts are the same with and without it, on every transport;
- ``compare all`` covers every scene, the render group included (each yields an image),
  supports ``spawn``, and refuses in one line a backend that renders no pixels and a scene
  with nothing to compare.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe import cli
from mgpipe.runtime.harness import compare as compare_mod
from mgpipe.runtime.harness import runner
from mgpipe.runtime.harness.png import decode
from mgpipe.runtime.harness.runner import SCENES, Scene, run_scene

PIXEL_BACKENDS = ("gles", "vulkan")


def _pngs(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.glob("*.png"))}


@pytest.mark.parametrize("backend", PIXEL_BACKENDS)
def test_run_all_out_twice_writes_identical_pngs(backend: str, tmp_path: Path, capsys) -> None:
    for run in ("one", "two"):
        assert cli.main(["run", "all", "--backend", backend, "--out", str(tmp_path / run)]) == 0
    capsys.readouterr()
    one, two = _pngs(tmp_path / "one"), _pngs(tmp_path / "two")
    assert sorted(one) == sorted(f"{name}.png" for name in SCENES)  # every scene has a picture
    assert [n for n in one if one[n] != two[n]] == []


def _stray_pixels(img) -> int:
    """Pixels of the readback scene's default framebuffer that are neither the initial
    (0, 0, 0, 0) nor its triangle's colour (0, 0, 0, 1): leftovers of earlier images."""
    a = np.frombuffer(img.rgba, np.uint8).reshape(img.height, img.width, 4)
    initial = (a == 0).all(axis=2)
    triangle = (a[..., :3] == 0).all(axis=2) & (a[..., 3] == 255)
    return int((~(initial | triangle)).sum())


@pytest.mark.parametrize("backend", PIXEL_BACKENDS)
def test_the_default_framebuffer_starts_defined_after_other_scenes(backend: str) -> None:
    run_scene("clear-present", backend, capture=True)  # frees images full of its colour
    (img,) = run_scene("readback", backend, capture=True).images
    a = np.frombuffer(img.rgba, np.uint8).reshape(img.height, img.width, 4)
    assert _stray_pixels(img) == 0
    assert (a == 0).all(axis=2).any() and (a[..., 3] == 255).any()  # both parts are there


@pytest.mark.parametrize("backend", PIXEL_BACKENDS)
def test_negative_control_the_initial_colour_is_what_the_capture_shows(backend,
                                                                        monkeypatch) -> None:  # fmt: skip
    if backend == "gles":
        from mgpipe.runtime.backends.gles import framebuffer as where
    else:
        from mgpipe.runtime.backends.vulkan import targets as where

    monkeypatch.setattr(where, "INITIAL_COLOR", (1.0, 0.0, 0.0, 1.0))  # planted
    (img,) = run_scene("readback", backend, capture=True).images
    assert _stray_pixels(img) > 0
    assert img.pixel(img.width - 1, img.height - 1) == (255, 0, 0, 255)


# -- the capture measures nothing ------------------------------------------------------
def _measured(res) -> dict:
    """Everything a scene reports that does not depend on the clock."""
    doc = dict(res.summary())
    stats = getattr(res.backend, "stats", None)
    if stats is not None:
        doc.update((k, v) for k, v in stats().items() if "gpu" not in k and "cpu" not in k)
    info = getattr(res.backend, "info", None)
    if info is not None:
        doc.update(info())
    return doc


@pytest.mark.parametrize("backend, transport", [
    ("recorder", "monolith"), ("recorder", "spawn"), ("gles", "monolith"), ("gles", "inproc"),
    ("gles", "spawn"), ("vulkan", "monolith"), ("vulkan", "spawn"),
])  # fmt: skip
def test_the_out_capture_changes_nothing_the_scene_measures(backend: str, transport: str) -> None:
    plain = run_scene("blend-toggle", backend, transport, recording=True)
    shot = run_scene("blend-toggle", backend, transport, capture=True, recording=True)
    assert _measured(shot) == _measured(plain)
    assert not plain.images
    assert len(shot.images) == (backend != "recorder")  # the recorder draws no pixels
    if shot.images:
        (img,) = shot.images
        assert (img.width, img.height) == (SCENES["blend-toggle"].width,
                                           SCENES["blend-toggle"].height)  # fmt: skip
        assert any(img.rgba)


def test_negative_control_a_capture_through_the_wire_would_be_seen() -> None:
    from mgpipe.runtime.harness.scenes import core
    from mgpipe.runtime.harness.scenes.kit import capture

    def with_readback(c, n):  # the old --out: a ReadPixels record after the scene
        core.blend_toggle(c, n)
        c.bind_framebuffer(None)
        capture(c, 640, 480)

    plain = run_scene("blend-toggle", "recorder")
    scene = SCENES["blend-toggle"]
    planted = Scene("blend-toggle", with_readback, scene.default_n, scene.doc)
    SCENES["blend-toggle"] = planted
    try:
        shot = run_scene("blend-toggle", "recorder")
    finally:
        SCENES["blend-toggle"] = scene
    assert _measured(shot) != _measured(plain)


@pytest.mark.parametrize("backend", ["recorder", "vulkan"])
def test_run_json_is_the_same_with_and_without_out(backend: str, tmp_path: Path, capsys) -> None:
    assert cli.main(["run", "readback", "--backend", backend, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert (
        cli.main(["run", "readback", "--backend", backend, "--json", "--out", str(tmp_path)]) == 0
    )
    assert json.loads(capsys.readouterr().out) == plain
    stats = json.loads((tmp_path / "readback.stats.json").read_text())
    assert {k: stats[k] for k in plain["scenes"][0]} == plain["scenes"][0]
    assert (tmp_path / "readback.png").exists() == (backend != "recorder")


# -- compare ------------------------------------------------------------------------------
def test_compare_all_compares_an_image_of_every_scene(capsys) -> None:
    """``all`` is the established scenes, then the render group (issue 17's scenes): every
    one compared, each with an image (an SSIM) and its probes equal on both backends."""
    from mgpipe.runtime.harness.scenes import GROUPS, RENDER_SCENES

    every = list(SCENES) + [n for g in GROUPS.values() for n in g]  # then every group
    rc = cli.main(["compare", "all", "--json"])
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert [s["scene"] for s in doc["scenes"]] == every
    assert [s["scene"] for s in doc["scenes"] if not s["ssim"]] == []  # nothing passes unchecked
    render = [s for s in doc["scenes"] if s["scene"] in RENDER_SCENES]
    assert [s["scene"] for s in render if not s["probes"]] == []  # each render probe compared
    assert rc == 0, [s["failures"] for s in doc["scenes"] if not s["ok"]]
    assert len(out.err.splitlines()) == len(every)  # one progress line per scene
    assert f"{len(every)}/{len(every)} {every[-1]}" in out.err.splitlines()[-1]


@pytest.mark.parametrize("scene", ["readback", "blend-toggle"])
def test_compare_of_a_scene_that_reads_nothing_back_compares_its_picture(scene, capsys) -> None:
    assert cli.main(["compare", scene, "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["scenes"]
    assert only["ok"] and len(only["ssim"]) == 1 and only["ssim"][0] >= compare_mod.SSIM_MIN


def test_compare_runs_over_spawn(capsys) -> None:
    assert cli.main(["compare", "readback", "--transport", "spawn", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["scenes"]
    assert only["ok"] and only["transport"] == "spawn" and only["ssim"]
    assert cli.main(["compare", "scissor", "--transport", "spawn", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)["scenes"]
    assert only["ok"] and only["probes"]


@pytest.mark.parametrize("flag", ["--a", "--b"])
def test_compare_refuses_a_backend_that_renders_no_pixels(flag, monkeypatch, capsys) -> None:
    def never(*a, **k):
        raise AssertionError("a scene ran on a backend with no pixels")

    monkeypatch.setattr(runner, "run_scene", never)
    monkeypatch.setattr(compare_mod, "run_scene", never)
    assert cli.main(["compare", "readback", flag, "recorder"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("<command line>:1:1: BACKEND-NO-PIXELS: backend 'recorder' renders no "
                          "pixels, expected a backend that draws: gles, vulkan")  # fmt: skip
    with pytest.raises(compare_mod.NoPixels):
        compare_mod.compare_scene("readback", "recorder", "gles")


def test_compare_refuses_a_scene_with_nothing_to_compare(monkeypatch, capsys) -> None:
    def nothing(c, n):  # draws nothing, reads nothing back: no default framebuffer at all
        return None

    monkeypatch.setitem(SCENES, "empty", Scene("empty", nothing, 1, "draws nothing", 64, 64))
    assert cli.main(["compare", "empty", "--a", "gles", "--b", "gles"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("<command line>:1:1: NOTHING-TO-COMPARE: scene 'empty' gave no image")
