"""``mgpipe run SCENE|all``: run scenes through the client, a transport and a backend."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mgpipe.refusal import check_out_dir, refusal, unknown
from mgpipe.runtime.transport.registry import TRANSPORTS

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
    p.add_argument("--transport", choices=TRANSPORTS,
                   help="monolith | inproc | spawn (server in a child process); "
                        "default: $MGPIPE_TRANSPORT, else monolith")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--out", type=Path, help="write DIR/<scene>.png (read-back images, GL "
                   "orientation; a backend that renders pixels), DIR/<scene>.stats.json and, "
                   "for the recorder, DIR/<scene>.json; what the scene measures is the same "
                   "with or without it")  # fmt: skip
    p.add_argument("-n", type=int, default=None, help="repetitions (scene-specific default)")
    p.add_argument("--whole-block", action="store_true",
                   help="negative control: content-address the whole render-state block")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.harness.outputs import Progress, write_outputs
    from mgpipe.runtime.harness.runner import BACKENDS, SCENES, UnknownBackend, run_scene

    if args.backend not in BACKENDS:
        raise unknown("UNKNOWN-BACKEND", "backend", args.backend, sorted(BACKENDS))
    if args.scene != "all" and args.scene not in SCENES:
        raise unknown("UNKNOWN-SCENE", "scene", args.scene, ["all", *SCENES])
    if args.n is not None and args.n < 0:
        raise refusal("BAD-ARGUMENT", f"-n is {args.n}, expected a count >= 0")
    transport = args.transport or os.environ.get("MGPIPE_TRANSPORT") or "monolith"
    if transport not in TRANSPORTS:  # cli checked the environment; a caller of run() may not
        raise refusal("UNKNOWN-TRANSPORT", f"MGPIPE_TRANSPORT={transport!r} is not a transport, "
                                           f"expected one of {', '.join(TRANSPORTS)}")
    if args.out is not None:
        check_out_dir(args.out)
    names = list(SCENES) if args.scene == "all" else [args.scene]
    results = []
    progress = Progress(len(names)) if args.scene == "all" else None
    for name in names:
        try:
            res = run_scene(name, args.backend, transport, args.n, whole_block=args.whole_block,
                            capture=args.out is not None,
                            recording=args.out is not None)  # fmt: skip
        except UnknownBackend as exc:
            raise refusal("UNKNOWN-BACKEND", f"{exc}, expected a backend that can run here") from None
        except (PipeFatal, RuntimeError, OSError) as exc:  # a refusal or no driver: one line
            raise refusal("SCENE-REFUSED", f"scene {name!r} on {args.backend}/{transport}: "
                                           f"{exc}, expected the scene to run to its end") from None
        if res.lost:
            reason = res.client.transport.lost_reason
            print(f"mgpipe run: {name}: device lost ({reason})", file=sys.stderr)
            return 1
        results.append(res)
        if args.out is not None:
            write_outputs(args.out, res, args.backend, transport)
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
