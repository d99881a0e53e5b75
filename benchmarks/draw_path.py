"""The client -> wire -> server -> recorder path, per draw, per scene and transport.

    python benchmarks/draw_path.py [-n N] [--quick]

First, against the floors, side by side in one process (``runtime/harness/lean.py``): per
steady-state scene (blend-toggle, viewport-churn), transport and side, the project's
CPU per draw, the lean path's (a second implementation of the same loops over the same
tables that sends byte-identical records -- checked here, record for record, before any
timing), their ratio (the median of paired rounds; target <= 1.5x), and both in units of a 20-plain-call floor
measured in this process (targets: client <= 4x, round trip <= 10x), with the ring
hand-off floor (``lean.ring_floor_us``: two records written and drained with nothing
checked) and what it puts under the ring rows: an inproc client (both threads in this
process) costs at least the lean monolith client plus the whole hand-off, a spawn client
at least the lean monolith client plus its produce half; then Python calls
per draw of each and bytecode instructions per draw of each (monolith: deterministic,
the figure a hot-path change moves on a busy machine as on a quiet one). On spawn the lean client writes the project server's ring
(the lean path has no server process): its round column is lean client + project server.

Then the older table:

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

Then, per transport (monolith, inproc, spawn), the CPU per draw on each side, records per
second and doorbell knocks per 1,000 draws (``spawn_sides.py``).
"""

from __future__ import annotations

import argparse

from mgpipe.runtime.harness import lean
from mgpipe.runtime.harness.measure import calls_per_draw, cpu_per_draw, run_side
from mgpipe.runtime.harness.runner import run_scene
from spawn_sides import sides, sides_header

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


LEAN_BOUND, FLOOR_BOUND = lean.LEAN_BOUND, lean.FLOOR_BOUND  # issue 20's bounds


def check_identity(n: int) -> None:
    """Both paths send the same records (monolith and inproc round trips), or exit 1."""
    for scene in lean.LOOPS:
        for transport in ("monolith", "inproc"):
            _, _, a = lean.run(scene, "project", "round", n, transport)
            _, _, b = lean.run(scene, "lean", "round", n, transport)
            diff = lean.equal_streams(a, b)
            if diff is not None or not a:
                raise SystemExit(f"lean path: {scene} on {transport}: {diff or 'no records'}")
    print(f"lean path: byte-identical records ({n} repetitions per scene, monolith and inproc)")


def floors(n: int, repeat: int,
           transports: tuple[str, ...] = lean.TRANSPORTS) -> list[tuple[str, str, str, float, float, float]]:  # fmt: skip
    """(scene, transport, side, project us/draw, lean us/draw, median ratio) rows."""
    out = []
    for scene, (_, _, per) in lean.LOOPS.items():
        n2 = max(n // per, 8)
        n1 = max(n2 // 4, 2)
        for transport in transports:
            for side in lean.SIDES:
                out.append((scene, transport, side,
                            *lean.paired(scene, side, n1, n2, repeat, transport)))  # fmt: skip
    return out


def print_floors(n: int, repeat: int, transports: tuple[str, ...] = lean.TRANSPORTS) -> None:
    check_identity(max(n // 10, 20))
    floor = lean.floor_us()
    ring = {part: lean.ring_floor_us(part=part) for part in ("both", "produce")}
    print(f"20-call floor: {floor:.3f} us (20 calls of an empty function, this process)")
    print(f"ring hand-off floor: {ring['both']:.3f} us per draw = {ring['both'] / floor:.1f}x "
          f"the 20-call floor, its produce half {ring['produce']:.3f} us = "
          f"{ring['produce'] / floor:.1f}x (two records written and drained, nothing "
          "checked: lean.ring_floor_us)")  # fmt: skip
    print(f"{'scene':<15} {'transport':<9} {'side':<6} {'project':>8} {'lean':>7} "
          f"{'x lean':>7} {'x floor':>8} {'lean x':>7} {'bound':>6}")  # fmt: skip
    print(f"{'':<15} {'':<9} {'':<6} {'us/draw':>8} {'us/draw':>7} {f'<={LEAN_BOUND}':>7} "
          f"{'project':>8} {'floor':>7} {'floor':>6}")  # fmt: skip
    rows = floors(n, repeat, transports)
    for scene, transport, side, p, q, r in rows:
        bound = FLOOR_BOUND[side]
        ok = "ok" if r <= LEAN_BOUND and p / floor <= bound else "OVER"
        print(f"{scene:<15} {transport:<9} {side:<6} {p:>8.2f} {q:>7.2f} {r:>6.2f}x "
              f"{p / floor:>7.1f}x {q / floor:>6.1f}x {bound:>5.0f}x {ok}")  # fmt: skip
    for scene, transport, side, _, q, _ in rows:  # what a ring row cannot go below
        if transport == "monolith" and side == "client":
            for ring_row, part in (("inproc", "both"), ("spawn", "produce")):
                least = q + ring[part]
                print(f"{scene}: {ring_row} client >= lean monolith client + ring "
                      f"{'hand-off' if part == 'both' else 'produce half'} = {least:.2f} us = "
                      f"{least / floor:.1f}x the floor (bound {FLOOR_BOUND['client']:.0f}x)")  # fmt: skip
    print(f"{'per draw (monolith)':<24} {'calls':>7} {'lean':>6} {'opcodes':>8} {'lean':>6} "
          f"{'ratio':>6}")  # fmt: skip
    for scene, (_, _, per) in lean.LOOPS.items():
        for side in lean.SIDES:
            c = [lean.calls_per_draw(scene, path, side, 50, 250) for path in lean.PATHS]
            o = [lean.opcodes_per_draw(scene, path, side, 50, 250) for path in lean.PATHS]
            print(f"{scene:<15} {side:<8} {c[0]:>7.1f} {c[1]:>6.1f} {o[0]:>8.0f} {o[1]:>6.0f} "
                  f"{o[0] / o[1]:>5.2f}x")  # fmt: skip
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", type=int, default=2000, help="repetitions of blend-toggle (default 2000)")
    ap.add_argument("--quick", action="store_true", help="n = 200 (a smoke run)")
    ap.add_argument("--floor-transports", default=",".join(lean.TRANSPORTS),
                    help="the transports of the lean-floor table (default: all three)")
    args = ap.parse_args()
    n = 200 if args.quick else args.n
    transports = tuple(t for t in args.floor_transports.split(",") if t)
    for t in transports:
        if t not in lean.TRANSPORTS:
            ap.error(f"--floor-transports: {t!r} is not one of {', '.join(lean.TRANSPORTS)}")
    print_floors(n * 4 if not args.quick else 800, 1 if args.quick or n < 200 else 3, transports)
    print(
        f"{'scene':<15} {'transport':<9} {'client':>9} {'round':>9} {'calls':>8} {'calls':>8} "
        f"{'hash':>6} {'trans':>6} {'bytecmp':>6} {'vcheck':>6} {'ring B':>8}"
    )
    print(
        f"{'':<15} {'':<9} {'us/draw':>9} {'us/draw':>9} {'client':>8} {'round':>8} "
        f"{'/draw':>6} {'/draw':>6} {'/draw':>6} {'/draw':>6} {'/draw':>8}"
    )
    for scene in SCENES:
        for transport in ("monolith", "inproc"):
            print(row(scene, transport, n), flush=True)
    control = run_scene("viewport-churn", "recorder", "monolith", n, whole_block=True)
    base = run_scene("viewport-churn", "recorder", "monolith", n)
    print(
        f"whole-block control, viewport-churn x{n}: {control.csos_minted} CSOs "
        f"(content-addressed subset: {base.csos_minted})"
    )
    print()
    print(sides_header())
    for scene in ("blend-toggle", "viewport-churn"):
        for transport in ("monolith", "inproc", "spawn"):
            print(sides(scene, transport, n // 4), flush=True)


if __name__ == "__main__":
    main()
