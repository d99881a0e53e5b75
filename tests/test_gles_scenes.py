"""Every pixel scene on the ``gles`` backend, through both transports: first-principles
probes exact (or +-1 where blending rounds), the image against its golden PNG, and the
three-span gate of ``SyncRenderState`` measured on the Blaze3D-like frame.

``MGPIPE_UPDATE_GOLDEN=1`` rewrites ``tests/golden/png/<scene>.png`` (review before commit).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mgpipe.runtime.harness.png import decode, encode, side_by_side
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import PIXEL_SCENES, SCENES
from mgpipe.runtime.harness.scenes.kit import Image, Probe

GOLDEN = Path(__file__).parent / "golden" / "png"
UPDATE = os.environ.get("MGPIPE_UPDATE_GOLDEN") == "1"
NAMES = [s.name for s in PIXEL_SCENES]
#: the gate test's frame: only GL_BLEND moves between draws after the first one.
GATED = ("glDepthFunc", "glDepthMask", "glDepthRangef", "glStencilFuncSeparate",
         "glStencilOpSeparate", "glStencilMaskSeparate", "glViewport", "glScissor", "glCullFace",
         "glFrontFace", "glPolygonOffset", "glColorMask", "glClearColor", "glBlendColor")  # fmt: skip


def _probe_failures(name: str, images: list[Image], n: int) -> list[str]:
    probes = SCENES[name].probes
    assert probes is not None
    return [m for p in probes(n) if (m := p.check(images)) is not None]


def test_at_least_ten_pixel_scenes_each_with_probes() -> None:
    assert len(PIXEL_SCENES) >= 10
    assert all(s.probes is not None and s.probes(s.default_n) for s in PIXEL_SCENES)


@pytest.mark.parametrize("transport", ["monolith", "inproc"])
@pytest.mark.parametrize("name", NAMES)
def test_scene_probes(name: str, transport: str) -> None:
    res = run_scene(name, backend="gles", transport=transport)
    assert res.images, f"{name} read nothing back"
    assert _probe_failures(name, res.images, SCENES[name].default_n) == []
    if transport == "monolith":
        _golden(name, res.images)


def _golden(name: str, images: list[Image]) -> None:
    path = GOLDEN / f"{name}.png"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(images))
    assert path.exists(), f"{path} missing: run with MGPIPE_UPDATE_GOLDEN=1"
    want, got = decode(path.read_bytes()), side_by_side(images)
    assert (want.width, want.height) == (got.width, got.height)
    diff = sum(1 for a, b in zip(want.rgba, got.rgba) if abs(a - b) > 1)
    # rasterisation may differ by a driver on edge pixels; the probes are the exact check
    assert diff <= len(got.rgba) // 100, f"{name}: {diff} channel values differ from {path}"


def test_probes_go_red_on_a_wrong_pixel() -> None:
    """Negative control: a probe of the wrong colour fails, naming the pixel."""
    img = Image(1, 1, bytes((10, 20, 30, 255)))
    assert Probe(0, 0, 0, (10, 20, 30, 255)).check([img]) is None
    assert "(0,0): got (10, 20, 30, 255)" in (Probe(0, 0, 0, (10, 20, 31, 255)).check([img]) or "")
    assert Probe(0, 0, 0, (10, 20, 31, 255), tol=1).check([img]) is None


def test_png_round_trip_keeps_gl_orientation() -> None:
    img = Image(2, 2, bytes(range(16)))  # bottom row first
    png = encode([img])
    assert decode(png) == img
    other = Image(1, 2, bytes(range(100, 108)))
    both = decode(encode([img, other]))
    assert both.pixel(2, 0) == other.pixel(0, 0) and both.pixel(1, 1) == img.pixel(1, 1)


def _calls_after_first_draw(n: int) -> dict[str, int]:
    res = run_scene("blaze3d-frame", backend="gles", n=n)
    return dict(res.backend.gl.counts)


def test_blend_toggle_frame_issues_no_depth_stencil_viewport_calls_after_the_first_draw() -> None:
    one, many = _calls_after_first_draw(1), _calls_after_first_draw(40)
    for name in GATED:
        assert many.get(name, 0) == one.get(name, 0), f"{name} issued after the first draw"
    # what does move: one glEnable/glDisable pair and two draws per extra batch
    assert many["glDrawArrays"] - one["glDrawArrays"] == 2 * 39
    toggles = (many["glEnable"] + many["glDisable"]) - (one["glEnable"] + one["glDisable"])
    assert toggles == 2 * 39


def test_the_gate_goes_red_without_the_spans() -> None:
    """Negative control: with the span compare forced dirty every sync (the shadow forgotten),
    the same frame re-issues depth and viewport state."""
    from mgpipe.runtime.backends.gles import sync as sync_mod

    orig = sync_mod.RenderStateSync.sync

    def forgetful(self, data, version, view):  # type: ignore[no-untyped-def]
        self.force_full = True
        self.viewport = self.scissor = (-1, -1, -1, -1)
        return orig(self, data, version, view)

    sync_mod.RenderStateSync.sync = forgetful  # type: ignore[method-assign]
    try:
        one, many = _calls_after_first_draw(1), _calls_after_first_draw(40)
    finally:
        sync_mod.RenderStateSync.sync = orig  # type: ignore[method-assign]
    assert many["glDepthFunc"] > one["glDepthFunc"] and many["glViewport"] > one["glViewport"]


def test_cli_run_writes_png_and_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from mgpipe.cli import main

    assert main(["run", "all", "--backend", "gles", "--transport", "inproc", "-n", "2",
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert f"] {len(SCENES)}/{len(SCENES)} " in err  # the progress bar reached the end
    assert "GL/draw" in out
    for name in SCENES:  # every scene: its own read-backs, else the default framebuffer
        assert (tmp_path / f"{name}.png").exists()
    for name in NAMES:
        stats = json.loads((tmp_path / f"{name}.stats.json").read_text())
        assert {"draws", "gl_calls", "csos_minted", "wire_bytes"} <= set(stats)
        assert stats["backend"] == "gles" and stats["transport"] == "inproc"
        img = decode((tmp_path / f"{name}.png").read_bytes())
        if stats["images"] == [[img.width, img.height]]:  # one image: the PNG is the capture
            assert _probe_failures(name, [img], 2) == []  # GL orientation survives the file


def test_cli_run_refusal_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from mgpipe.cli import main
    from mgpipe.runtime.backends.gles import resources

    monkeypatch.setattr(resources.Resources, "_limit", staticmethod(_refuse_all))
    assert main(["run", "texture-upload", "--backend", "gles"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['mgpipe run: texture-upload: Fatal{DriverRefused, "ResourceRespecify.Width"}: '
                   "planted"]  # fmt: skip


def _refuse_all(w: int, h: int, limit: int, name: str, what: str) -> None:
    from mgpipe.runtime.backends.gles import DriverRefused

    raise DriverRefused(f"{what}.Width", "planted")
