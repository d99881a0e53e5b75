"""Every scene of the suite on the Vulkan backend (lavapipe in CI) through monolith and
inproc, with zero validation errors or warnings, matching the GLES backend: SSIM >= 0.99
per image and every probe pixel equal on both and as expected. Plus the SSIM itself, with
its negative controls, and ``mgpipe compare`` / ``mgpipe run --backend vulkan``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.cli import main
from mgpipe.runtime.backends.vulkan.device import validation_mode
from mgpipe.runtime.harness.compare import SSIM_MIN, compare_results, ssim
from mgpipe.runtime.harness.png import decode
from mgpipe.runtime.harness.runner import SCENES, run_scene


def _vulkan(name: str, transport: str):
    res = run_scene(name, "vulkan", transport)
    msgs = res.backend.dev.take_messages()  # the run closed the backend: teardown included
    assert not msgs, f"{name}/{transport}: " + "\n".join(map(str, msgs))
    assert res.backend.dev.validation or validation_mode() != "on"
    return res


@pytest.mark.parametrize("name", list(SCENES))
def test_scene_on_vulkan_is_validation_clean_and_matches_gles(name):
    scene = SCENES[name]
    mono, inproc = _vulkan(name, "monolith"), _vulkan(name, "inproc")
    assert [i.rgba for i in mono.images] == [i.rgba for i in inproc.images]
    if scene.probes is None:  # a counting scene: it reads nothing back to compare
        assert not mono.images
        return
    gles = run_scene(name, "gles", "monolith")
    cmp = compare_results(name, gles, mono, ("gles", "vulkan"), "monolith")
    assert cmp.ok, cmp.failures
    assert cmp.probes and all(s >= SSIM_MIN for s in cmp.ssim)


def _render_scene_names():
    from mgpipe.runtime.harness.scenes import RENDER_SCENES

    return list(RENDER_SCENES)


@pytest.mark.parametrize("name", _render_scene_names())
def test_issue_17_scene_on_vulkan_is_validation_clean_and_meets_its_probes(name):
    """Issue 17's scenes (textures of every target and format, samplers, uniforms, MSAA,
    the Minecraft-like frame) on the Vulkan backend: monolith and inproc give the same
    pixels, the validation layer reports nothing, every first-principles probe holds."""
    scene = SCENES[name]
    mono, inproc = _vulkan(name, "monolith"), _vulkan(name, "inproc")
    assert [i.rgba for i in mono.images] == [i.rgba for i in inproc.images]
    failures = [m for p in scene.probes(scene.default_n) for m in [p.check(mono.images)] if m]
    assert mono.images and not failures, failures


def _noise(shape, seed=1):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_ssim_is_one_for_equal_images_and_drops_for_different_ones():
    a = _noise((32, 48, 4))
    assert ssim(a, a) == pytest.approx(1.0)
    shifted = np.roll(a, 1, axis=1)  # the same content one pixel off: structure differs
    assert ssim(a, shifted) < SSIM_MIN
    b = a.copy()
    b[10, 10] = 255 - b[10, 10]  # one pixel differs: still similar
    assert SSIM_MIN <= ssim(a, b) < 1.0
    with pytest.raises(ValueError, match="shapes differ"):
        ssim(a, a[:, :40])


def test_a_planted_pixel_difference_fails_the_probe_comparison():
    gles = run_scene("cull", "gles", "monolith")
    vk = run_scene("cull", "vulkan", "monolith")
    img = vk.images[0]
    x, y = SCENES["cull"].probes(1)[0].x, SCENES["cull"].probes(1)[0].y
    raw = bytearray(img.rgba)
    i = (y * img.width + x) * 4
    raw[i] ^= 0x80
    vk.images[0] = type(img)(img.width, img.height, bytes(raw))
    cmp = compare_results("cull", gles, vk, ("gles", "vulkan"), "monolith")
    assert not cmp.ok
    assert any("probe" in f and "!=" in f for f in cmp.failures)


def test_compare_cli_writes_side_by_side_and_difference_pngs(tmp_path, capsys):
    assert main(["compare", "scissor", "--out", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (only,) = doc["scenes"]
    assert only["ok"] and only["ssim"] == [1.0]
    side = decode((tmp_path / "scissor.side-by-side.png").read_bytes())
    diff = decode((tmp_path / "scissor.diff.png").read_bytes())
    assert (side.width, side.height) == (128, 64) and (diff.width, diff.height) == (64, 64)
    d = np.frombuffer(diff.rgba, np.uint8).reshape(64, 64, 4)
    assert not d[..., :3].any() and (d[..., 3] == 255).all()


def test_compare_cli_refuses_unknown_names(capsys):
    assert main(["compare", "no-such-scene"]) == 2
    assert "UNKNOWN-SCENE: no scene named 'no-such-scene'" in capsys.readouterr().err
    assert main(["compare", "scissor", "--b", "metal"]) == 2
    assert "UNKNOWN-BACKEND: no backend named 'metal'" in capsys.readouterr().err


def test_run_backend_vulkan(tmp_path, capsys):
    assert main(["run", "blaze3d-frame", "--backend", "vulkan", "--out", str(tmp_path)]) == 0
    stats = json.loads((tmp_path / "blaze3d-frame.stats.json").read_text())
    assert stats["backend_stats"]["pipelines_created"] == 2
    assert stats["backend_stats"]["validation_messages"] == 0
    assert stats["vulkan_validation"] is True
    assert (tmp_path / "blaze3d-frame.png").exists()
