"""The client -> wire -> applier -> recorder path, per draw, for the CSO scenes.

    python benchmarks/draw_path.py [-n N]

Prints, per scene and transport: draws, CSOs minted, ring bytes per draw, SEG_STAGE bytes
per draw and wall microseconds per draw (best of three runs), plus the whole-block
content-addressing negative control (seed 001 Appendix A, bit 63) for viewport-churn.
"""

from __future__ import annotations

import argparse
import time

from mgpipe.runtime.harness.runner import run_scene


def measure(scene: str, transport: str, n: int, whole_block: bool = False) -> str:
    best = float("inf")
    res = None
    for _ in range(3):
        t0 = time.perf_counter()
        res = run_scene(scene, "recorder", transport, n, whole_block=whole_block)
        best = min(best, time.perf_counter() - t0)
    assert res is not None
    d = max(res.draws, 1)
    return (f"{scene:<15} {transport:<9} {'whole-block' if whole_block else 'subset':<11} "
            f"{res.draws:>6} {res.csos_minted:>6} {res.wire_bytes / d:>9.1f} "
            f"{res.stage_bytes / d:>9.1f} {best / d * 1e6:>9.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-n", type=int, default=500, help="scene repetitions (default 500)")
    args = ap.parse_args()
    print(f"{'scene':<15} {'transport':<9} {'identity':<11} {'draws':>6} {'CSOs':>6} "
          f"{'ring B/d':>9} {'stage B/d':>9} {'us/draw':>9}")
    for scene in ("blend-toggle", "viewport-churn"):
        for transport in ("monolith", "inproc"):
            print(measure(scene, transport, args.n))
    print(measure("viewport-churn", "monolith", args.n, whole_block=True))


if __name__ == "__main__":
    main()
