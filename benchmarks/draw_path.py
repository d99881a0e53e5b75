"""The client -> wire -> server -> recorder path, per draw, per scene and transport.

    python benchmarks/draw_path.py [-n N] [--quick]

Per scene and transport, steady state (the difference of a run of N and a run of N/4
repetitions, best of three), in process CPU (``time.process_time_ns``: every thread):

- ``client us/d``: the client side alone (the sink does nothing: API, tracker, CSO
  cache, packing, transport);
- ``round us/d``: the whole round trip (applier, recorder backend);
- ``calls/d``: Python function calls per draw of each, counted with ``sys.setprofile``
  (``call`` + ``c_call`` events), monolith only (the inproc apply thread is not profiled);
- the CSO cache's counters per draw: hashes, transition hits, byte compares and
  version-check answers; ring bytes per draw.

The last line is the whole-block content-addressing negative control (seed 001
Appendix A, bit 63) for viewport-churn: one CSO per distinct viewport.
"""

from __future__ import annotations

import argparse

from mgpipe.runtime.harness.measure import calls_per_draw, cpu_per_draw, run_side
from mgpipe.runtime.harness.runner import run_scene

SCENES = ("blend-toggle", "viewport-churn", "readback")
#: readback draws 2 per repetition with a readback and a present: fewer repetitions
SCALE = {"blend-toggle": 1.0, "viewport-churn": 2.0, "readback": 0.05}


def row(scene: str, transport: str, n: int) -> str:
    n2 = max(int(n * SCALE[scene]), 8)
    n1 = max(n2 // 4, 2)
    client = cpu_per_draw(scene, transport, "client", n1, n2)
    round_ = cpu_per_draw(scene, transport, "round", n1, n2)
    if transport == "monolith":
        calls = (f"{calls_per_draw(scene, transport, 'client', n1, n2):>8.1f} "
                 f"{calls_per_draw(scene, transport, 'round', n1, n2):>8.1f}")  # fmt: skip
    else:
        calls = f"{'-':>8} {'-':>8}"
    c = run_side(scene, transport, n2, "round")
    s, d = c.stats(), max(c.draws, 1)
    return (f"{scene:<15} {transport:<9} {client:>9.1f} {round_:>9.1f} {calls} "
            f"{s['cso_hashes'] / d:>6.2f} {s['cso_transition_hits'] / d:>6.2f} "
            f"{s['cso_byte_compares'] / d:>6.2f} {s['cso_version_checks'] / d:>6.2f} "
            f"{s['wire_bytes'] / d:>8.1f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", type=int, default=2000, help="repetitions of blend-toggle (default 2000)")
    ap.add_argument("--quick", action="store_true", help="n = 200 (a smoke run)")
    args = ap.parse_args()
    n = 200 if args.quick else args.n
    print(f"{'scene':<15} {'transport':<9} {'client':>9} {'round':>9} {'calls':>8} {'calls':>8} "
          f"{'hash':>6} {'trans':>6} {'bytecmp':>6} {'vcheck':>6} {'ring B':>8}")
    print(f"{'':<15} {'':<9} {'us/draw':>9} {'us/draw':>9} {'client':>8} {'round':>8} "
          f"{'/draw':>6} {'/draw':>6} {'/draw':>6} {'/draw':>6} {'/draw':>8}")
    for scene in SCENES:
        for transport in ("monolith", "inproc"):
            print(row(scene, transport, n), flush=True)
    control = run_scene("viewport-churn", "recorder", "monolith", n, whole_block=True)
    base = run_scene("viewport-churn", "recorder", "monolith", n)
    print(f"whole-block control, viewport-churn x{n}: {control.csos_minted} CSOs "
          f"(content-addressed subset: {base.csos_minted})")


if __name__ == "__main__":
    main()
