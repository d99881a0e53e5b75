"""Issue 20's cliffs off the steady state, side by side in one process (client CPU).

    python benchmarks/cliffs.py [-n N] [--quick]

Streams (runtime/harness/cliffs.py): ``steady`` (the blend toggle), ``minted`` (every draw
mints a CSO and evicts one), ``rebind`` (one texture unit rebound per draw while U units
hold a texture: one row), ``window`` (unit 0 and the last bound unit rebound per draw: a
window of U rows). Per stream: process CPU per draw (the difference of a run of N and
one of N/5 draws, best of three), records and Python calls per draw, twice: ``before``
with the pre-issue paths swapped in (mint / evict through the dict-based encoder, group
rows element by element through numpy: :func:`~mgpipe.runtime.harness.cliffs.reference`,
the same bytes) and ``now``. Then the ratios the issue asks for, from the same run.

The ``before`` column is an emulation inside today's code: its rows go from tuples to the
dicts the numpy path takes, a few calls per member more than the old tracker paid to build
them (a 64-row window: 4,337 calls per draw here, 2,858 at d75071d; the mint and the
eviction are the old code's exactly).
"""

from __future__ import annotations

import argparse

from mgpipe.runtime.harness import cliffs

ROWS = (("steady", 1), ("minted", 1), ("rebind", 1), ("rebind", 64), ("window", 1),
        ("window", 64))  # fmt: skip


def measure(n: int) -> dict[tuple[str, int], tuple[float, float, float]]:
    out = {}
    for stream, units in ROWS:
        us = cliffs.cpu_per_draw(stream, units, max(n // 5, 10), n)
        s = cliffs.shape(stream, units, max(n // 4, 16))
        out[stream, units] = (us, s["records_per_draw"], s["python_calls_per_draw"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", type=int, default=1000, help="draws per timed run (default 1000)")
    ap.add_argument("--quick", action="store_true", help="n = 200 (a smoke run)")
    args = ap.parse_args()
    n = 200 if args.quick else args.n
    with cliffs.reference():
        before = measure(n)
    now = measure(n)
    print(f"{'stream':<8} {'units':>5} | {'before':>9} {'rec':>4} {'calls':>7} | "
          f"{'now':>9} {'rec':>4} {'calls':>7}")
    print(f"{'':<8} {'':>5} | {'us/draw':>9} {'/d':>4} {'/draw':>7} | "
          f"{'us/draw':>9} {'/d':>4} {'/draw':>7}")
    for key in ROWS:
        b, a = before[key], now[key]
        print(f"{key[0]:<8} {key[1]:>5} | {b[0]:>9.1f} {b[1]:>4.0f} {b[2]:>7.1f} | "
              f"{a[0]:>9.1f} {a[1]:>4.0f} {a[2]:>7.1f}")
    print()
    targets = (("minted / steady", ("minted", 1), ("steady", 1), 10.0),
               ("rebind 64 / rebind 1", ("rebind", 64), ("rebind", 1), 2.0),
               ("window 64 / window 1", ("window", 64), ("window", 1), 2.0))  # fmt: skip
    print(f"{'ratio (CPU, same run)':<24} {'before':>8} {'now':>8} {'target':>8}")
    for label, num, den, limit in targets:
        rb, ra = before[num][0] / before[den][0], now[num][0] / now[den][0]
        ok = "ok" if ra <= limit else "OVER"
        print(f"{label:<24} {rb:>7.2f}x {ra:>7.2f}x {limit:>7.1f}x {ok}")


if __name__ == "__main__":
    main()
