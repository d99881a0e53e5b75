"""The inlined draw against the draw as written, side by side in one process.

    python benchmarks/inline_ab.py [-n ROUNDS] [--transport T]

``Client.draw_arrays`` runs the draw's validate, the CSO cache's validate and the stage
copy in its own frame (``runtime/client/inline.py``); ``Client.draw_arrays.__wrapped__``
is the method as written, each of those a call. Per steady-state scene and side, rounds
alternate the two (each the difference of a run of N and one of N/4 repetitions, process
CPU); printed: the median of the rounds' inlined / as-written ratios, and the range.
"""

from __future__ import annotations

import argparse
import statistics

from mgpipe.runtime.client.api import Client
from mgpipe.runtime.harness import lean


def ratio(scene: str, side: str, rounds: int, transport: str) -> list[float]:
    inlined, written = Client.draw_arrays, Client.draw_arrays.__wrapped__
    per = lean.LOOPS[scene][2]
    n2 = 8000 // per
    n1 = n2 // 4

    def one(fn: object) -> float:
        Client.draw_arrays = fn  # type: ignore[method-assign]
        for _ in range(5):  # a longer run that took less CPU: the machine paused; again
            a, da, _ = lean.run(scene, "project", side, n1, transport)
            b, db, _ = lean.run(scene, "project", side, n2, transport)
            if b > a:
                break
        return (b - a) / (db - da)

    out = []
    try:
        for _ in range(rounds):
            w = one(written)
            out.append(one(inlined) / w)
    finally:
        Client.draw_arrays = inlined  # type: ignore[method-assign]
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", type=int, default=9, help="rounds per scene and side (default 9)")
    ap.add_argument("--transport", default="monolith", choices=lean.TRANSPORTS)
    args = ap.parse_args()
    print(f"{'scene':<15} {'side':<6} {'inlined / as written':>21} {'range':>13}")
    for scene in lean.LOOPS:
        for side in lean.SIDES:
            r = ratio(scene, side, args.n, args.transport)
            print(f"{scene:<15} {side:<6} {statistics.median(r):>20.3f}x "
                  f"{r[0]:>6.2f}-{r[-1]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
