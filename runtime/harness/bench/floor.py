"""The lean floor in the bench (issue 20): the project's draw path against the lean path
(:mod:`~..lean`) and a 20-plain-call floor, side by side in the bench's process.

:func:`report` checks first that the lean path sends the project's records byte for byte
(monolith round trips of both steady-state scenes; :func:`findings` makes a difference a
red ``lean-identical`` finding), then measures per scene and side the project's and the
lean path's CPU per draw (paired rounds: the ratio is the median of the rounds' own), and
the floor; :func:`text` is its table. The ratios are printed, not guarded: timings are
the ratio guard's (``ratio-vs-a``) alone.
"""

from __future__ import annotations

from typing import Any

from .. import lean
from .guard import Finding

__all__ = ["report", "text", "findings", "LEAN_BOUND", "FLOOR_BOUND"]

LEAN_BOUND, FLOOR_BOUND = lean.LEAN_BOUND, lean.FLOOR_BOUND  # issue 20's bounds


def report(reps: int, repeat: int) -> dict[str, Any]:
    """``reps`` repetitions of each scene's loop per timed run, ``repeat`` paired rounds."""
    identical = {}
    for scene in lean.LOOPS:
        _, _, a = lean.run(scene, "project", "round", max(reps // 4, 8))
        _, _, b = lean.run(scene, "lean", "round", max(reps // 4, 8))
        identical[scene] = lean.equal_streams(a, b) if a else "no records"
    floor = lean.floor_us()
    rows = []
    for scene, (_, _, per) in lean.LOOPS.items():
        n2 = max(reps // per, 8)
        n1 = max(n2 // 4, 2)
        for side in lean.SIDES:
            p, q, r = lean.paired(scene, side, n1, n2, repeat)
            rows.append({"scene": scene, "transport": "monolith", "side": side,
                         "project_us": p, "lean_us": q, "ratio": r,
                         "project_floors": p / floor, "lean_floors": q / floor})  # fmt: skip
    return {"floor_us": floor, "identical": identical, "rows": rows}


def findings(doc: dict[str, Any]) -> list[Finding]:
    return [Finding("lean-identical", f"{scene}/monolith/recorder", diff is None,
                    "the lean path sends the project's records byte for byte" if diff is None
                    else diff)  # fmt: skip
            for scene, diff in doc["identical"].items()]


def text(doc: dict[str, Any]) -> str:
    out = [f"Lean floor (monolith, recorder): project / lean path (bound {LEAN_BOUND}x)",
           f"and x a 20-call floor of {doc['floor_us']:.3f} us (bounds: client "
           f"{FLOOR_BOUND['client']:.0f}x, round {FLOOR_BOUND['round']:.0f}x)",
           f"{'scene':<15} {'side':<6} {'project us':>10} {'lean us':>8} {'x lean':>7} "
           f"{'x floor':>8} {'lean x floor':>12}"]  # fmt: skip
    for r in doc["rows"]:
        out.append(f"{r['scene']:<15} {r['side']:<6} {r['project_us']:>10.2f} "
                   f"{r['lean_us']:>8.2f} {r['ratio']:>6.2f}x {r['project_floors']:>7.1f}x "
                   f"{r['lean_floors']:>11.1f}x")  # fmt: skip
    return "\n".join(out)
