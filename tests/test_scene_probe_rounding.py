"""Probes accept exactly what GLES 3.0 §2.1.6.1 lets a driver store for a float colour:
either of the two integers closest to ``c * 255`` (llvmpipe rounds 0.5 up to 128, NVIDIA
stores 127), and nothing further away."""

from __future__ import annotations

from mgpipe.runtime.harness.scenes.kit import Image, Probe, px


def _one_pixel(rgba: tuple[int, int, int, int]) -> list[Image]:
    return [Image(1, 1, bytes(rgba))]


def test_a_tie_accepts_both_neighbours_and_nothing_else() -> None:
    probe = Probe(0, 0, 0, px((0.5, 0.0, 1.0, 1.0)), what="tie")
    assert probe.check(_one_pixel((128, 0, 255, 255))) is None
    assert probe.check(_one_pixel((127, 0, 255, 255))) is None
    assert probe.check(_one_pixel((126, 0, 255, 255))) is not None
    assert probe.check(_one_pixel((129, 0, 255, 255))) is not None
    assert probe.check(_one_pixel((128, 1, 255, 255))) is not None  # 0.0 is exactly 0


def test_an_integral_value_is_exact() -> None:
    probe = Probe(0, 0, 0, px((1.0, 0.0, 0.2, 1.0)), what="exact")  # 0.2 * 255 = 51
    assert probe.check(_one_pixel((255, 0, 51, 255))) is None
    assert probe.check(_one_pixel((255, 0, 52, 255))) is not None
    assert probe.check(_one_pixel((255, 0, 50, 255))) is not None


def test_plain_integer_probes_keep_their_tolerance() -> None:
    probe = Probe(0, 0, 0, (10, 20, 30, 40), 1, "plain")
    assert probe.check(_one_pixel((11, 19, 30, 40))) is None
    assert probe.check(_one_pixel((12, 20, 30, 40))) is not None
