"""A/B parity between two backends (seed 001 §13.2 item 3): SSIM and probe pixels.

:func:`ssim` is the structural similarity of two RGBA8 images (Wang et al. 2004: an
11-tap Gaussian window, sigma 1.5, ``K1 = 0.01``, ``K2 = 0.03``, dynamic range 255), the
mean over every window position and channel. Images smaller than the window use a
window of their own size.

:func:`compare_scene` runs one scene on both backends (``a`` and ``b``, default ``gles``
and ``vulkan``) through one transport (``monolith``, ``inproc`` or ``spawn``) and returns a
:class:`Comparison`: the SSIM of each image pair, each probe's pixel on both sides, and
what failed. The images are what the scene read back, or -- for a scene that reads
nothing back -- its default framebuffer, captured after the scene outside what it
measures (``run_scene(capture=True)``). A scene passes when every pair has SSIM >=
:data:`SSIM_MIN`, every probe reads the same pixel on both backends and that pixel is
what the probe expects. Both backends must render pixels (:class:`NoPixels` otherwise),
and a scene that gives no image on either side is :class:`NothingToCompare`, never a pass.

:func:`write_pngs` writes ``<scene>.side-by-side.png`` (each image of ``a`` beside the
same image of ``b``) and ``<scene>.diff.png`` (per-channel absolute difference, alpha
opaque).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .png import encode
from ..backends.registry import renders_pixels
from .runner import SCENES, SceneResult, run_scene
from .scenes.kit import Image

__all__ = ["SSIM_MIN", "ssim", "Comparison", "compare_scene", "compare_results", "write_pngs",
           "as_array", "NoPixels", "NothingToCompare"]

SSIM_MIN = 0.99
_K1, _K2, _L = 0.01, 0.03, 255.0


def as_array(img: Image) -> np.ndarray:
    return np.frombuffer(img.rgba, np.uint8).reshape(img.height, img.width, 4)


def _gaussian(n: int, sigma: float = 1.5) -> np.ndarray:
    x = np.arange(n, dtype=np.float64) - (n - 1) / 2.0
    g = np.exp(-(x * x) / (2.0 * sigma * sigma))
    return g / g.sum()


def _filter(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """'valid' separable filtering of (H, W, C) along H then W."""
    n = len(g)
    h = sum(g[i] * a[i : a.shape[0] - n + 1 + i] for i in range(n))
    return sum(g[i] * h[:, i : h.shape[1] - n + 1 + i] for i in range(n))


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM of two same-shape uint8 images (H, W, C)."""
    if a.shape != b.shape:
        raise ValueError(f"ssim: shapes differ {a.shape} vs {b.shape}")
    x, y = a.astype(np.float64), b.astype(np.float64)
    g = _gaussian(max(1, min(11, x.shape[0], x.shape[1])))
    c1, c2 = (_K1 * _L) ** 2, (_K2 * _L) ** 2
    mx, my = _filter(x, g), _filter(y, g)
    sxx = _filter(x * x, g) - mx * mx
    syy = _filter(y * y, g) - my * my
    sxy = _filter(x * y, g) - mx * my
    num = (2 * mx * my + c1) * (2 * sxy + c2)
    den = (mx * mx + my * my + c1) * (sxx + syy + c2)
    return float(np.mean(num / den))


@dataclass
class Comparison:
    scene: str
    backends: tuple[str, str]
    transport: str
    ssim: list[float] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    images: tuple[list[Image], list[Image]] = field(default_factory=lambda: ([], []))

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> dict[str, Any]:
        return {"scene": self.scene, "backends": list(self.backends), "transport": self.transport,
                "ssim": [round(s, 6) for s in self.ssim], "probes": self.probes,
                "ok": self.ok, "failures": self.failures}  # fmt: skip


class NoPixels(ValueError):
    """A backend that draws nothing (the recorder) has no image to compare."""


class NothingToCompare(ValueError):
    """The scene gave no image on either backend: a comparison would check nothing."""


def compare_scene(name: str, a: str = "gles", b: str = "vulkan", transport: str = "monolith",
                  n: int | None = None) -> Comparison:  # fmt: skip
    for side in (a, b):
        if not renders_pixels(side):
            raise NoPixels(f"backend {side!r} renders no pixels")
    ra = run_scene(name, a, transport, n, capture=True)
    rb = run_scene(name, b, transport, n, capture=True)
    return compare_results(name, ra, rb, (a, b), transport, n)


def compare_results(name: str, ra: SceneResult, rb: SceneResult, backends: tuple[str, str],
                    transport: str, n: int | None = None) -> Comparison:  # fmt: skip
    """The comparison of two finished runs of scene ``name``."""
    scene = SCENES[name]
    a, b = backends
    out = Comparison(name, (a, b), transport, images=(list(ra.images), list(rb.images)))
    if not ra.images and not rb.images:
        raise NothingToCompare(f"scene {name!r} gave no image on {a} or {b}")
    if len(ra.images) != len(rb.images):
        out.failures.append(f"{a} read back {len(ra.images)} images, {b} {len(rb.images)}")
        return out
    for i, (ia, ib) in enumerate(zip(ra.images, rb.images)):
        if (ia.width, ia.height) != (ib.width, ib.height):
            out.failures.append(f"image {i}: {ia.width}x{ia.height} vs {ib.width}x{ib.height}")
            continue
        s = ssim(as_array(ia), as_array(ib))
        out.ssim.append(s)
        if s < SSIM_MIN:
            out.failures.append(f"image {i}: SSIM {s:.4f} < {SSIM_MIN}")
    probes = scene.probes(scene.default_n if n is None else n) if scene.probes else []
    for p in probes:
        pa = ra.images[p.image].pixel(p.x, p.y)
        pb = rb.images[p.image].pixel(p.x, p.y)
        out.probes.append({"what": p.what, "image": p.image, "x": p.x, "y": p.y,
                           a: list(pa), b: list(pb), "expected": list(p.rgba)})  # fmt: skip
        if pa != pb:
            out.failures.append(f"probe {p.what!r} ({p.x},{p.y}): {a} {pa} != {b} {pb}")
        for side, res in ((a, ra), (b, rb)):
            msg = p.check(res.images)
            if msg:
                out.failures.append(f"{side}: {msg}")
    return out


def _diff(ia: Image, ib: Image) -> Image:
    d = np.abs(as_array(ia).astype(np.int16) - as_array(ib).astype(np.int16)).astype(np.uint8)
    d[..., 3] = 255
    return Image(ia.width, ia.height, d.tobytes())


def write_pngs(out: Path, cmp: Comparison) -> list[Path]:
    """``<scene>.side-by-side.png`` and ``<scene>.diff.png`` (nothing if no image came back)."""
    ia, ib = cmp.images
    if not ia or len(ia) != len(ib):
        return []
    out.mkdir(parents=True, exist_ok=True)
    pairs = [img for pair in zip(ia, ib) for img in pair]
    side = out / f"{cmp.scene}.side-by-side.png"
    side.write_bytes(encode(pairs))
    diff = out / f"{cmp.scene}.diff.png"
    same = [(x, y) for x, y in zip(ia, ib) if (x.width, x.height) == (y.width, y.height)]
    diff.write_bytes(encode([_diff(x, y) for x, y in same]))
    return [side, diff]
