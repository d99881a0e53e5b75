"""``mgpipe compare SCENE|GROUP|all``: A/B parity of two backends (default gles vs vulkan).

``all`` is every scene of ``mgpipe run all``, then the ``render`` group (the render
scenes: textures, samplers, shadow maps, sRGB, MSAA, uniforms, the Minecraft-like frame).

Per scene: SSIM of every image pair (>= 0.99 passes) -- what the scene read back, or its
default framebuffer captured after it ran -- and every probe pixel equal on both backends
and as expected; ``--out DIR`` writes ``<scene>.side-by-side.png`` and ``<scene>.diff.png``.
Both backends must render pixels and every transport works (``spawn`` included). Each
scene's line is printed as it finishes (with ``--json``, a progress line on stderr). Exit 0
when every scene passes, 1 when one does not, 2 on bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mgpipe.refusal import check_out_dir, refusal, unknown
from mgpipe.runtime.transport.registry import TRANSPORTS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="run scenes on two backends and compare their images (SSIM, probe pixels)",
        description="A/B parity: SSIM >= 0.99 per image and equal probe pixels per scene.",
    )
    p.add_argument("scene", help="a scene name, a group ('render': issue 17's render scenes) "
                                 "or 'all' (every scene, the render group included)")
    p.add_argument("--a", default="gles", help="first backend (default: gles)")
    p.add_argument("--b", default="vulkan", help="second backend (default: vulkan)")
    p.add_argument("--transport", choices=TRANSPORTS,
                   help="monolith | inproc | spawn; default: $MGPIPE_TRANSPORT, else monolith")
    p.add_argument("--out", type=Path, help="write DIR/<scene>.side-by-side.png and .diff.png")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mgpipe.runtime.backends.registry import renders_pixels
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.harness.compare import NothingToCompare, compare_scene, write_pngs
    from mgpipe.runtime.harness.outputs import Progress
    from mgpipe.runtime.harness.runner import BACKENDS, SCENES
    from mgpipe.runtime.harness.scenes import GROUPS, RENDER_SCENES, scene_names

    for which in (args.a, args.b):
        if which not in BACKENDS:
            raise unknown("UNKNOWN-BACKEND", "backend", which, sorted(BACKENDS))
        if not renders_pixels(which):
            drawing = [b for b in sorted(BACKENDS) if renders_pixels(b)]
            raise refusal("BACKEND-NO-PIXELS", f"backend {which!r} renders no pixels, expected "
                                               f"a backend that draws: {', '.join(drawing)}")  # fmt: skip
    names = scene_names(args.scene, include=tuple(GROUPS))
    if names is None:
        raise unknown("UNKNOWN-SCENE", "scene", args.scene, ["all", *GROUPS, *SCENES, *RENDER_SCENES])
    transport = args.transport or os.environ.get("MGPIPE_TRANSPORT") or "monolith"
    if transport not in TRANSPORTS:
        raise refusal("UNKNOWN-TRANSPORT", f"MGPIPE_TRANSPORT={transport!r} is not a transport, "
                                           f"expected one of {', '.join(TRANSPORTS)}")
    if args.out is not None:
        check_out_dir(args.out)
    # one line per scene as it finishes: the result line itself, or (--json, which prints
    # only at the end) a progress line on stderr
    progress = Progress(len(names)) if len(names) > 1 and args.json else None
    results = []
    width = max(16, *map(len, names))
    for name in names:
        try:
            cmp = compare_scene(name, args.a, args.b, transport)
        except NothingToCompare as exc:
            raise refusal("NOTHING-TO-COMPARE", f"{exc}, expected a scene that yields an "
                                                "image to compare") from None  # fmt: skip
        except (PipeFatal, RuntimeError, OSError, ValueError) as exc:
            raise refusal("SCENE-REFUSED", f"scene {name!r} on {args.a} / {args.b} / "
                                           f"{transport}: {exc}, expected both backends to "
                                           "run it to its end") from None  # fmt: skip
        if args.out is not None:
            write_pngs(args.out, cmp)
        results.append(cmp)
        if progress is not None:
            progress.step(name)
        if not args.json:
            ssim = " ".join(f"{s:.4f}" for s in cmp.ssim) or "-"
            status = "ok" if cmp.ok else "FAIL"
            print(f"{name:<{width}} {status:<4} images {len(cmp.images[0]):<2} ssim {ssim:<20} "
                  f"probes {len(cmp.probes)}")  # fmt: skip
            for f in cmp.failures:
                print(f"    {f}")
            sys.stdout.flush()
    if args.json:
        print(json.dumps({"scenes": [c.summary() for c in results]}, indent=1, sort_keys=True))
    return 0 if all(c.ok for c in results) else 1
