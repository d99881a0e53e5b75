"""Issue 17's render scenes (runtime/harness/scenes/render.py, minecraft.py) on both
pixel backends: each scene either draws exactly what its first-principles probes say
(and, where both backends draw it, the two pictures agree: SSIM and probe pixels), or
stops at a NAMED refusal -- a ``Fatal{DriverRefused|UnimplementedCall, "<Record>.<Field>"}``
at the record a backend cannot execute, or ``Client.<call>`` for a client call that does
not exist yet. Never a wrong picture, never an unnamed error. Nothing is skipped: what a
backend refuses today is listed by ``python tests/test_render_coverage.py``.
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.harness.compare import compare_results
from mgpipe.runtime.harness.png import decode, encode, side_by_side
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import GROUPS, RENDER_SCENES, SCENES, render, scene_names
from mgpipe.runtime.harness.scenes.kit import Image, Probe

BACKENDS = ("gles", "vulkan")
#: the golden PNG of every scene a backend draws (either backend's picture: both must match
#: it within a driver's edge-pixel differences); ``MGPIPE_UPDATE_GOLDEN=1`` writes missing /
#: changed ones (review before commit)
GOLDEN = Path(__file__).parent / "golden" / "png"
UPDATE = os.environ.get("MGPIPE_UPDATE_GOLDEN") == "1"
NAMES = list(RENDER_SCENES)
#: a named refusal: the record and field (``CreateShaderState.Reflection``), a call
#: (``Blit``) or a client call (``Client.create_texture``)
_NAMED = re.compile(r'^(Fatal\{\w+, "[A-Z]\w*(\.\w+)*"\}|Client\.\w+(\([\w=, ]*\))?: )')


TRANSPORTS = ("monolith", "inproc", "spawn")


@lru_cache(maxsize=None)
def outcome(name: str, backend: str, transport: str = "monolith"):
    """("ok", result) or ("refused", message) -- any other exception propagates. Over
    spawn a refusal in the server latches device-lost; its reason is the refusal."""
    try:
        res = run_scene(name, backend, transport)
    except (PipeFatal, render.ClientGap) as exc:
        return "refused", str(exc)
    if res.lost:
        return "refused", str(res.client.transport.lost_reason)
    return "ok", res


def test_every_issue_17_family_has_a_scene() -> None:
    want = {f"tex-{f}" for f in ("rgba8", "r8", "rg8", "srgb8-alpha8", "rgb10-a2",
                                 "r11f-g11f-b10f", "rgba16f", "rgba32f")} | {  # fmt: skip
        "tex-lod", "tex-cube", "tex-3d", "tex-array", "sampler-wrap", "sampler-filter",
        "shadow", "srgb-encode", "msaa-resolve", "ubo-array", "uniform-matrix", "int-texture",
        "minecraft-frame"} | {f"shadow-{f}" for f in ("depth16", "depth24", "depth24-stencil8")}
    # fmt: skip
    assert want <= set(RENDER_SCENES)
    for name in NAMES:  # every one runs by name through mgpipe run / compare
        assert name in SCENES and SCENES[name] is RENDER_SCENES[name]
    # the group `render` is every one of them, and `mgpipe compare all` ends with it (the
    # compare of `all` is tests/test_pictures.py's); `mgpipe run all` walks SCENES alone
    assert GROUPS["render"] == tuple(NAMES)
    assert scene_names("render") == NAMES
    assert list(GROUPS)[0] == "render"  # then the other groups (compute), each whole
    assert scene_names("all", include=tuple(GROUPS)) == list(SCENES) + [
        n for g in GROUPS.values() for n in g]  # fmt: skip
    assert not set(RENDER_SCENES) & set(list(SCENES))


@pytest.mark.parametrize("name", NAMES)
def test_probes_are_first_principles_and_discriminating(name: str) -> None:
    """Every scene has probes; they are not all the clear colour (a scene that drew
    nothing would fail them), and they lie on the surface."""
    scene = RENDER_SCENES[name]
    probes = scene.probes(scene.default_n)
    assert probes
    assert any(tuple(p.rgba) != (0, 0, 0, 255) for p in probes)
    assert all(0 <= p.x < scene.width and 0 <= p.y < scene.height for p in probes)


def test_negative_control_a_blank_picture_fails_every_scene_s_probes() -> None:
    for name in NAMES:
        scene = RENDER_SCENES[name]
        probes = scene.probes(scene.default_n)
        blank = [Image(scene.width, scene.height, bytes((0, 0, 0, 255)) * scene.width * scene.height)
                 for _ in range(max(p.image for p in probes) + 1)]  # fmt: skip
        assert [p for p in probes if p.check(blank)], name


def test_hand_decoders_agree_with_independent_ones() -> None:
    """The 11/11/10 and half-float decoders against numpy's float16 and GL's formulas."""
    import numpy as np

    for v in (0.0625, 0.125, 0.25, 0.5, 0.75, 1.0):
        assert render._uf(render._f11(v, 6), 6) == v == render._uf(render._f11(v, 5), 5)
        assert float(np.float16(v)) == v
    assert abs(render.srgb_to_linear(render.linear_to_srgb(0.3)) - 0.3) < 1e-12
    assert render.linear_to_srgb(0.5) == pytest.approx(0.735357, abs=1e-6)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_a_scene_draws_its_probes_or_is_refused_by_name(name: str, backend: str,
                                                        transport: str) -> None:  # fmt: skip
    status, res = outcome(name, backend, transport)
    if transport != "monolith":  # the same outcome as monolith: a transport changes nothing
        assert status == outcome(name, backend)[0], res if status == "refused" else status
    if status == "refused":
        assert _NAMED.match(res), f"unnamed refusal: {res}"
        return
    scene = RENDER_SCENES[name]
    fails = [m for p in scene.probes(scene.default_n) if (m := p.check(res.images))]
    assert fails == [], f"{name} on {backend}/{transport}: a wrong picture"
    stats = getattr(res.backend, "stats", None)
    if backend == "vulkan" and stats is not None:  # the validation layer is on (_vk_support)
        assert stats().get("validation_messages", 0) == 0
    if transport == "monolith":
        _golden(name, res.images)


def _golden(name: str, images: list[Image]) -> None:
    path = GOLDEN / f"{name}.png"
    if UPDATE and not path.exists():
        path.write_bytes(encode(images))
    assert path.exists(), f"{path} missing: MGPIPE_UPDATE_GOLDEN=1 python -m pytest {__file__}"
    want, got = decode(path.read_bytes()), side_by_side(images)
    assert (want.width, want.height) == (got.width, got.height)
    diff = sum(1 for a, b in zip(want.rgba, got.rgba) if abs(a - b) > 1)
    assert diff <= len(got.rgba) // 100, f"{name}: {diff} channel values differ from {path}"


@pytest.mark.parametrize("name", NAMES)
def test_where_both_backends_draw_a_scene_compare_passes(name: str) -> None:
    (sa, ra), (sb, rb) = outcome(name, "gles"), outcome(name, "vulkan")
    if sa != "ok" or sb != "ok":
        assert "refused" in (sa, sb)  # reported by the test above and by __main__
        return
    cmp = compare_results(name, ra, rb, BACKENDS, "monolith")
    assert cmp.ok, cmp.failures


def test_mgpipe_compare_of_a_refused_render_scene_is_one_named_line(monkeypatch, capsys) -> None:
    """A scene a backend refuses stops ``mgpipe compare`` in one line naming the refusal
    (every render scene draws on both backends today, so the refusal is planted: the
    ok path of every scene is ``mgpipe compare all``, tests/test_pictures.py)."""
    from mgpipe import cli
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.backends.vulkan.errors import VulkanRefused

    def refuse(self, ctx, d):
        raise VulkanRefused("GenerateMipmap.Res", "planted refusal")

    monkeypatch.setattr(VulkanBackend, "GenerateMipmap", refuse)
    rc = cli.main(["compare", "tex-mipgen", "--json"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "SCENE-REFUSED" in err, err
    assert 'Fatal{DriverRefused, "GenerateMipmap.Res"}: planted refusal' in err, err


def _status(name: str, be: str) -> str:
    try:
        s, r = outcome(name, be)
    except Exception as exc:  # what the tests above fail on: an unnamed error
        return f"ERROR {type(exc).__name__}: {str(exc)[:70]}"
    if s == "refused":
        return f"refused {r[:90]}"
    scene = RENDER_SCENES[name]
    bad = [m for p in scene.probes(scene.default_n) if (m := p.check(r.images))]
    return f"WRONG PICTURE ({len(bad)} probes): {bad[0][:80]}" if bad else "draws (probes exact)"


def status_table() -> list[str]:
    rows = []
    for name in NAMES:
        cells = []
        for be in BACKENDS:
            cells.append(f"{be}: {_status(name, be)}")
        rows.append(f"{name:<20} | " + " | ".join(cells))
    return rows


if __name__ == "__main__":  # the per-scene status on both backends
    print("\n".join(status_table()))
    sys.exit(0)
