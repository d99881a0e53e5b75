"""``mgpipe compare SCENE|all``: A/B parity of two backends (default gles vs vulkan).

Per scene: SSIM of every read-back image pair (>= 0.99 passes), every probe pixel equal on
both backends and as expected; ``--out DIR`` writes ``<scene>.side-by-side.png`` and
``<scene>.diff.png``. Exit 0 when every scene passes, 1 when one does not, 2 on bad input
(one line on stderr).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mgpipe.refusal import refusal, unknown


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="run scenes on two backends and compare their images (SSIM, probe pixels)",
        description="A/B parity: SSIM >= 0.99 per image and equal probe pixels per scene.",
    )
    p.add_argument("scene", help="a scene name or 'all' (scenes that read images back)")
    p.add_argument("--a", default="gles", help="first backend (default: gles)")
    p.add_argument("--b", default="vulkan", help="second backend (default: vulkan)")
    p.add_argument("--transport", default="monolith", choices=("monolith", "inproc"))
    p.add_argument("--out", type=Path, help="write DIR/<scene>.side-by-side.png and .diff.png")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.harness.compare import compare_scene, write_pngs
    from mgpipe.runtime.harness.runner import BACKENDS, SCENES

    for which in (args.a, args.b):
        if which not in BACKENDS:
            raise unknown("UNKNOWN-BACKEND", "backend", which, sorted(BACKENDS))
    pixel = [n for n, s in SCENES.items() if s.probes is not None]
    if args.scene != "all" and args.scene not in SCENES:
        raise unknown("UNKNOWN-SCENE", "scene", args.scene, ["all", *SCENES])
    names = pixel if args.scene == "all" else [args.scene]
    results = []
    for name in names:
        try:
            cmp = compare_scene(name, args.a, args.b, args.transport)
        except (PipeFatal, RuntimeError, OSError, ValueError) as exc:
            raise refusal("SCENE-REFUSED", f"scene {name!r} on {args.a} / {args.b}: {exc}, "
                                           "expected both backends to run it to its end") from None
        if args.out is not None:
            write_pngs(args.out, cmp)
        results.append(cmp)
        if not args.json:
            ssim = " ".join(f"{s:.4f}" for s in cmp.ssim) or "-"
            status = "ok" if cmp.ok else "FAIL"
            print(f"{name:<16} {status:<4} ssim {ssim:<20} probes {len(cmp.probes)}")
            for f in cmp.failures:
                print(f"    {f}")
    if args.json:
        print(json.dumps({"scenes": [c.summary() for c in results]}, indent=1, sort_keys=True))
    return 0 if all(c.ok for c in results) else 1
