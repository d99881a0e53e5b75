"""The bench run: which cells, in which order, at which sizes; progress while it runs.

Rows come from the runtime's registries: every registered backend and every transport
the client accepts becomes a row by itself. The rows the report is laid out for
(:data:`REPORT_BACKENDS`, :data:`REPORT_TRANSPORTS`) that this runtime lacks appear as
one "not available" row each, never as numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from .measure import Cell, Frames, Sizes, measure_cell, summarize, time_cell, timer_cost_ns
from .pipe import BACKENDS, TRANSPORTS
from .strategies import STRATEGIES
from .workloads import WORKLOADS

__all__ = ["Plan", "QUICK", "FULL", "run", "REPORT_BACKENDS", "REPORT_TRANSPORTS", "Progress"]

REPORT_BACKENDS = ("recorder", "gles", "vulkan")
REPORT_TRANSPORTS = ("monolith", "inproc", "spawn")

#: --quick: the CI form (each cell tiny; the facts are size-independent).
QUICK = {"BlendToggle": Sizes(48, 4, 2), "NoChange": Sizes(300, 4, 2),
         "ViewportChurn": Sizes(300, 4, 2), "MixedFrame": Sizes(600, 4, 2)}  # fmt: skip
#: the report's run.
FULL = {"BlendToggle": Sizes(250, 7, 2), "NoChange": Sizes(250, 7, 2),
        "ViewportChurn": Sizes(250, 7, 2), "MixedFrame": Sizes(10_000, 3, 2)}  # fmt: skip
#: BlendToggle's CSO count is checked at a second size too ("for any N").
SECOND_SIZE = 2


@dataclass
class Plan:
    sizes: dict[str, Sizes]
    workloads: Sequence[str] = tuple(WORKLOADS)
    strategies: Sequence[str] = tuple(STRATEGIES)
    transports: Sequence[str] | None = None  # None: every transport of the runtime
    backends: Sequence[str] | None = None  # None: every registered backend
    seed: int = 1
    timing: bool = True
    strategy_table: dict = field(default_factory=lambda: dict(STRATEGIES))

    def transports_run(self) -> list[str]:
        return [t for t in (self.transports or TRANSPORTS) if t in TRANSPORTS]

    def backends_run(self) -> list[str]:
        return [b for b in (self.backends or sorted(BACKENDS)) if b in BACKENDS]


class Progress:
    """A one-line progress bar on ``stream`` (a TTY redraws in place, a file gets lines)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.total, self.done, self.width = max(total, 1), 0, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def step(self, label: str) -> None:
        self.done += 1
        fill = self.width * self.done // self.total
        bar = "#" * fill + "." * (self.width - fill)
        end = "" if self.tty and self.done < self.total else "\n"
        cr = "\r" if self.tty else ""
        self.stream.write(f"{cr}[{bar}] {self.done}/{self.total} {label:<48}{end}")
        self.stream.flush()


def _missing(plan: Plan) -> list[Cell]:
    out = []
    for b in REPORT_BACKENDS:
        if b not in BACKENDS and (plan.backends is None or b in plan.backends):
            out.append(Cell("*", "*", "*", b, "not available",
                            "not registered in the backends registry of this runtime"))  # fmt: skip
    for t in REPORT_TRANSPORTS:
        if t not in TRANSPORTS and (plan.transports is None or t in plan.transports):
            out.append(Cell("*", "*", t, "*", "not available",
                            "not in the client's transport list of this runtime"))  # fmt: skip
    return out


def run(
    plan: Plan, progress: Callable[[int], Progress] | None = None
) -> tuple[list[Cell], list[Cell]]:
    """Every cell of ``plan`` (plus the missing rows); second: BlendToggle/(a) at other sizes.

    First the census of every cell, then the timing passes: for each workload / transport
    / backend, ``repeats`` rounds over the strategies in turn, each round starting one
    strategy later (interleaved and rotated, so that a drift of the machine or a
    first-in-round effect lands on every strategy alike).
    """
    tcost = timer_cost_ns()
    groups = [(w, t, b) for w in plan.workloads for t in plan.transports_run()
              for b in plan.backends_run()]  # fmt: skip
    extra = [w for w in plan.workloads if w == "BlendToggle"] if "a" in plan.strategies else []
    passes = (
        sum(plan.sizes[w].repeats for w, _, _ in groups) * len(plan.strategies)
        if plan.timing
        else 0
    )
    bar = (progress or (lambda n: Progress(n)))(
        len(groups) * len(plan.strategies) + len(extra) + passes
    )
    cells: list[Cell] = []
    table = plan.strategy_table
    for w, t, b in groups:
        for s in plan.strategies:
            cells.append(measure_cell(WORKLOADS[w], table[s], t, b, plan.sizes[w], plan.seed))
            bar.step(f"census {w}/{s}/{t}/{b}")
    if plan.timing:
        by = {c.key: c for c in cells}
        for w, t, b in groups:
            sizes = plan.sizes[w]
            frames = {s: Frames() for s in plan.strategies}
            for r in range(sizes.repeats):
                k = r % len(plan.strategies)  # each round starts one strategy later
                for s in list(plan.strategies[k:]) + list(plan.strategies[:k]):
                    time_cell(by[(w, s, t, b)], WORKLOADS[w], table[s], sizes, plan.seed, tcost,
                              frames[s])  # fmt: skip
                    bar.step(f"timing {w}/{s}/{t}/{b} ({r + 1}/{sizes.repeats})")
            for s in plan.strategies:
                if by[(w, s, t, b)].status == "ok":
                    by[(w, s, t, b)].timing = summarize(frames[s])
    others: list[Cell] = []
    for w in extra:
        base = plan.sizes[w]
        sizes = Sizes(base.draws * SECOND_SIZE + 2, base.frames, 1)
        t, b = plan.transports_run()[0], plan.backends_run()[0]
        others.append(measure_cell(WORKLOADS[w], table["a"], t, b, sizes, plan.seed))
        bar.step(f"census {w}/a at {sizes.draws} draws/frame")
    return cells + _missing(plan), others
