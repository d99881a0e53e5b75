"""Process CPU per draw of one scene on a real backend, client and server together.

    python benchmarks/scene_cpu.py blaze3d-frame --backend gles --transport monolith inproc

Runs the scene at ``--n2`` repetitions and at ``--n1``, each through ``run_scene`` (a fresh
backend, client and applier per run), and divides the difference in process CPU
(``time.process_time_ns``: every thread, so the inproc apply thread counts) by the
difference in draws: the set-up (context creation, shader compilation) cancels out.
Best of ``--repeat``; one warm-up run first.
"""

from __future__ import annotations

import argparse
import time

from mgpipe.runtime.harness.runner import run_scene


def per_draw_us(scene: str, backend: str, transport: str, n1: int, n2: int, repeat: int) -> float:
    def measure(n: int) -> tuple[int, int]:
        t0 = time.process_time_ns()
        res = run_scene(scene, backend, transport, n)
        return time.process_time_ns() - t0, res.client.draws

    measure(n1)  # warm: compile the codec and the handlers first
    best = None
    for _ in range(repeat):
        (a, da), (b, db) = measure(n1), measure(n2)
        if db == da:
            raise SystemExit(f"scene_cpu: {scene} draws as much at n={n1} as at n={n2}")
        us = (b - a) / (db - da) / 1e3
        best = us if best is None else min(best, us)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scene")
    ap.add_argument("--backend", default="gles")
    ap.add_argument("--transport", nargs="+", default=["monolith", "inproc"])
    ap.add_argument("--n1", type=int, default=1)
    ap.add_argument("--n2", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for t in args.transport:
        us = per_draw_us(args.scene, args.backend, t, args.n1, args.n2, args.repeat)
        print(f"{args.scene} {args.backend} {t}: {us:.1f} us of process CPU per draw "
              f"(n {args.n2} - n {args.n1}, best of {args.repeat})")  # fmt: skip


if __name__ == "__main__":
    main()
