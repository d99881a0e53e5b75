"""``mgpipe run SCENE|all``: run scenes through the client, a transport and a backend."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# The runtime imports the generated tables; it is imported only when a scene runs, so that
# `mgpipe gen` keeps working while generated/ is stale or missing (the generator never
# depends on its own output).


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run",
        help="run scenes (client -> transport -> applier -> backend) and report their numbers",
        description="Runs a scene ('all' for every one); an unknown name lists the scenes.",
    )
    p.add_argument("scene", help="a scene name or 'all'")
    p.add_argument("--backend", default="recorder", help="backend (default: recorder)")
    p.add_argument("--transport", default="monolith", choices=("monolith", "inproc"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--out", type=Path, help="write DIR/<scene>.png (read-back images, GL "
                   "orientation), DIR/<scene>.stats.json and, for the recorder, DIR/<scene>.json")
    p.add_argument("-n", type=int, default=None, help="repetitions (scene-specific default)")
    p.add_argument("--whole-block", action="store_true",
                   help="negative control: content-address the whole render-state block")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.harness.outputs import Progress, write_outputs
    from mgpipe.runtime.harness.runner import BACKENDS, SCENES, UnknownBackend, run_scene

    if args.backend not in BACKENDS:
        print(f"mgpipe run: unknown backend {args.backend!r} "
              f"(registered: {', '.join(sorted(BACKENDS))})", file=sys.stderr)  # fmt: skip
        return 2
    if args.scene != "all" and args.scene not in SCENES:
        print(f"mgpipe run: unknown scene {args.scene!r} "
              f"(expected one of: all, {', '.join(SCENES)})", file=sys.stderr)  # fmt: skip
        return 2
    if args.n is not None and args.n < 0:
        print("mgpipe run: -n must be >= 0", file=sys.stderr)
        return 2
    names = list(SCENES) if args.scene == "all" else [args.scene]
    results = []
    progress = Progress(len(names)) if args.scene == "all" else None
    for name in names:
        try:
            res = run_scene(name, args.backend, args.transport, args.n,
                            whole_block=args.whole_block, capture=args.out is not None)  # fmt: skip
        except UnknownBackend as exc:
            print(f"mgpipe run: {exc}", file=sys.stderr)
            return 2
        except (PipeFatal, RuntimeError, OSError) as exc:  # a refusal or no driver: one line
            print(f"mgpipe run: {name}: {exc}", file=sys.stderr)
            return 2
        results.append(res)
        if args.out is not None:
            write_outputs(args.out, res, args.backend, args.transport)
        if progress is not None:
            progress.step(name)
    if args.json:
        print(json.dumps({"scenes": [r.summary() for r in results]}, indent=1))
        return 0
    gl = any("gl_calls" in getattr(r.backend, "stats", dict)() for r in results)
    last = f"{'GL calls':>9} {'GL/draw':>7}" if gl else "recording digest"
    print(f"{'scene':<16} {'draws':>6} {'records':>8} {'wire B':>9} {'B/draw':>7} "
          f"{'stage B':>9} {'CSOs':>5}  {last}")  # fmt: skip
    for r in results:
        per = r.wire_bytes / r.draws if r.draws else 0.0
        if gl:
            calls = getattr(r.backend, "stats", dict)().get("gl_calls", 0)
            tail = f"{calls:>9} {calls / r.draws if r.draws else 0.0:>7.2f}"
        else:
            tail = r.recording_digest or "-"
        print(f"{r.name:<16} {r.draws:>6} {r.records:>8} {r.wire_bytes:>9} {per:>7.1f} "
              f"{r.stage_bytes:>9} {r.csos_minted:>5}  {tail}")  # fmt: skip
    return 0
