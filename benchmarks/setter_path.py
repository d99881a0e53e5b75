"""The client's setter path: CPU per setter call and per BlendToggle draw, side by side.

    python benchmarks/setter_path.py [--base DIR] [--frames N]

Per row, process CPU (``time.process_time_ns``, best of five) of

- each setter the bench's BlendToggle calls per draw (viewport, scissor box, blend
  colour, depth bias, line width, stencil func, blend enable/disable), ns per call;
- the BlendToggle workload itself (``mgpipe bench``'s, 48 draws a frame, client against a
  sink that does nothing, monolith), µs per draw and Python calls per draw
  (``sys.setprofile`` ``call`` + ``c_call``, workload frames included).

``--base DIR`` also imports the ``runtime/`` tree in DIR (e.g. a ``git archive`` of an
earlier commit) as ``mgpipe.runtime_base`` and measures it in the same process, row by
row, so the two runtimes share the machine's state.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from types import ModuleType
from typing import Any

SETTERS = {
    "viewport": lambda rs, k: rs.set_viewport(k % 61, k // 61 % 53, 320 + k % 320, 240),
    "scissor_box": lambda rs, k: rs.set_scissor_box(k % 59, k // 59 % 47, 200 + k % 400, 100),
    "blend_color": lambda rs, k: rs.set_blend_color((k % 256) / 255.0, 0.2, 0.5, 1.0),
    "polygon_offset": lambda rs, k: rs.set_polygon_offset(1.0 + (k % 8) * 0.25, float(k % 5 + 1)),
    "line_width": lambda rs, k: rs.set_line_width(1.0 + (k % 7) * 0.5),
    "stencil_func": lambda rs, k: rs.set_stencil_func("FrontAndBack", "Always", k & 0xFF, 0xFF),
    "blend on/off": lambda rs, k: rs.set_capability("Blend", bool(k & 1)),
}


def _load_base(root: str) -> ModuleType:
    runtime = f"{root.rstrip('/')}/runtime"
    spec = importlib.util.spec_from_file_location(
        "mgpipe.runtime_base", f"{runtime}/__init__.py", submodule_search_locations=[runtime])
    if spec is None or spec.loader is None:
        raise SystemExit(f"setter_path: {runtime}: no runtime package there")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mgpipe.runtime_base"] = mod
    spec.loader.exec_module(mod)
    return mod


def _parts(pkg: str) -> tuple[Any, Any, Any, Any]:
    def m(name: str) -> Any:
        return importlib.import_module(f"{pkg}.{name}")

    return (m("client.api").Client, m("wire.stage").StageSegment,
            m("harness.bench.workloads").BlendToggle,
            m("client.render_state").RenderState)  # fmt: skip


def _best(f: Any, rounds: int = 5) -> float:
    out = []
    for _ in range(rounds):
        t0 = time.process_time_ns()
        n = f()
        out.append((time.process_time_ns() - t0) / n)
    return min(out)


def setter_ns(state_cls: Any, setter: Any, n: int = 5000) -> float:
    rs = state_cls()

    def run() -> int:
        for k in range(n):
            setter(rs, k)
            rs.pipe_log, rs._log_n = (), 0  # what the CSO cache's validate takes per draw
        return n

    run()
    return _best(run)


def _nothing(record: Any) -> None:
    return None


def blend_toggle(parts: tuple, frames: int, per_frame: int = 48) -> tuple[float, float]:
    """(µs of process CPU per draw, Python calls per draw)."""
    client_cls, stage_cls, workload, _ = parts
    c = client_cls(_nothing, stage_cls(1 << 24), transport="monolith")
    w = workload(per_frame, seed=1)
    w.setup(c)
    w.frame(c, 0)

    def run() -> int:
        for i in range(frames):
            w.frame(c, i)
        return frames * per_frame

    us = _best(run) / 1e3
    count = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" or event == "c_call":
            count[0] += 1

    sys.setprofile(profile)
    try:
        w.frame(c, 1)
    finally:
        sys.setprofile(None)
    return us, count[0] / per_frame


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--base", help="a tree whose runtime/ to measure alongside")
    ap.add_argument("--frames", type=int, default=30, help="BlendToggle frames of 48 draws (30)")
    args = ap.parse_args()
    trees = {"this": _parts("mgpipe.runtime")}
    if args.base:
        _load_base(args.base)
        trees = {"base": _parts("mgpipe.runtime_base"), **trees}
    print(f"{'':<26}" + "".join(f"{name:>12}" for name in trees))
    for name, setter in SETTERS.items():
        cells = "".join(f"{setter_ns(p[3], setter):>12.0f}" for p in trees.values())
        print(f"{name + ' ns/call':<26}{cells}", flush=True)
    rows = {name: blend_toggle(p, args.frames) for name, p in trees.items()}
    print(f"{'BlendToggle us/draw':<26}" + "".join(f"{r[0]:>12.1f}" for r in rows.values()))
    print(f"{'BlendToggle calls/draw':<26}" + "".join(f"{r[1]:>12.1f}" for r in rows.values()))


if __name__ == "__main__":
    main()
