"""The bench run: which cells, in which order, at which sizes; progress while it runs.

Rows come from the runtime's registries: every registered backend and every transport
the client accepts becomes a row by itself. The rows the report is laid out for
(:data:`REPORT_BACKENDS`, :data:`REPORT_TRANSPORTS`) that this runtime lacks appear as
one "not available" row each, never as numbers.

A plan is the cross product of its workloads, strategies, transports and backends, or,
with ``lanes``, the union of its lanes (each one backend on some transports, some
workloads and strategies, timed or not), each cut down by the plan's filters.
:data:`QUICK_LANES` is --quick's: every row of the recorder, and the real backends
on the cells whose structural facts need them (Vulkan pipelines, GL calls), untimed.
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

__all__ = ["Plan", "Lane", "QUICK", "QUICK_LANES", "FULL", "run", "REPORT_BACKENDS",
           "REPORT_TRANSPORTS", "Progress"]  # fmt: skip

REPORT_BACKENDS = ("recorder", "gles", "vulkan")
REPORT_TRANSPORTS = ("monolith", "inproc", "spawn")

#: --quick: the CI form (each cell tiny; the facts are size-independent). Three timing
#: passes per strategy, interleaved (9 steady frames each): the ratio guard takes the
#: least disturbed of them.
QUICK = {"BlendToggle": Sizes(48, 4, 3), "NoChange": Sizes(300, 4, 3),
         "ViewportChurn": Sizes(300, 4, 3), "MixedFrame": Sizes(600, 4, 3),
         "MinecraftFrame": Sizes(256, 4, 3)}  # fmt: skip
#: the report's run: every backend on every transport (3 x 3 x 4 workloads x 5 strategies)
#: in about 8 minutes on a shared 2-core machine: MixedFrame at 2,000 draws per frame, not
#: a Minecraft frame's 10,000 (the whole matrix at 10,000 takes over half an hour there).
FULL = {"BlendToggle": Sizes(120, 5, 2), "NoChange": Sizes(120, 5, 2),
        "ViewportChurn": Sizes(120, 5, 2), "MixedFrame": Sizes(2_000, 3, 2),
        "MinecraftFrame": Sizes(2_000, 3, 2)}  # fmt: skip
#: BlendToggle's CSO (and pipeline) count is checked at a second size too ("for any N").
SECOND_SIZE = 2


@dataclass(frozen=True)
class Lane:
    """One backend on ``transports``; ``workloads`` / ``strategies`` None: the plan's."""

    backend: str
    transports: tuple[str, ...]
    workloads: tuple[str, ...] | None = None
    strategies: tuple[str, ...] | None = None
    timing: bool = True


#: --quick's lanes: the recorder everywhere (timed in this process: the ratio guard's
#: rows; spawn untimed, its structure held equal to monolith's); Vulkan where
#: its pipeline counts are the facts (BlendToggle: 2 at any N, none from the churn;
#: ViewportChurn: none from the churn; (c): one per distinct block); GLES where its GL
#: calls per draw are pinned. The real backends run untimed, on monolith and spawn.
QUICK_LANES = (
    Lane("recorder", ("monolith", "inproc")),
    Lane("recorder", ("spawn",), timing=False),
    Lane("vulkan", ("monolith", "spawn"), ("BlendToggle",), ("a", "c"), False),
    Lane("vulkan", ("monolith", "spawn"), ("ViewportChurn",), ("a",), False),
    Lane("gles", ("monolith", "spawn"), ("BlendToggle", "NoChange"), ("a", "c"), False),
)


@dataclass(frozen=True)
class Group:
    """The cells of one workload / transport / backend: census each, time them together."""

    workload: str
    transport: str
    backend: str
    strategies: tuple[str, ...]
    timing: bool


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
    lanes: Sequence[Lane] | None = None  # None: the cross product

    def transports_run(self) -> list[str]:
        return [t for t in (self.transports or TRANSPORTS) if t in TRANSPORTS]

    def backends_run(self) -> list[str]:
        return [b for b in (self.backends or sorted(BACKENDS)) if b in BACKENDS]

    def groups(self) -> list[Group]:
        lanes = self.lanes
        if lanes is None:
            lanes = [Lane(b, tuple(self.transports_run())) for b in self.backends_run()]
        out = []
        for w in self.workloads:
            for lane in lanes:
                if lane.backend not in self.backends_run() or (
                    lane.workloads is not None and w not in lane.workloads
                ):
                    continue
                strategies = tuple(s for s in self.strategies
                                   if lane.strategies is None or s in lane.strategies)  # fmt: skip
                for t in lane.transports:
                    if t in self.transports_run() and strategies:
                        out.append(Group(w, t, lane.backend, strategies,
                                         self.timing and lane.timing))  # fmt: skip
        return out

    def second_sizes(self) -> list[tuple[str, str, str]]:
        """(workload, transport, backend) of BlendToggle / (a) at another size: once per
        backend, on the first transport it runs on."""
        seen: dict[str, tuple[str, str, str]] = {}
        for g in self.groups():
            if g.workload == "BlendToggle" and "a" in g.strategies:
                seen.setdefault(g.backend, (g.workload, g.transport, g.backend))
        return list(seen.values())


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
    groups = plan.groups()
    extra = plan.second_sizes()
    passes = sum(plan.sizes[g.workload].repeats * len(g.strategies) for g in groups if g.timing)
    bar = (progress or (lambda n: Progress(n)))(
        sum(len(g.strategies) for g in groups) + len(extra) + passes
    )
    cells: list[Cell] = []
    table = plan.strategy_table
    for g in groups:
        for s in g.strategies:
            w, t, b = g.workload, g.transport, g.backend
            cells.append(measure_cell(WORKLOADS[w], table[s], t, b, plan.sizes[w], plan.seed))
            bar.step(f"census {w}/{s}/{t}/{b}")
    by = {c.key: c for c in cells}
    for g in groups:
        if not g.timing:
            continue
        w, t, b, strategies = g.workload, g.transport, g.backend, g.strategies
        sizes = plan.sizes[w]
        frames = {s: Frames() for s in strategies}
        for r in range(sizes.repeats):
            k = r % len(strategies)  # each round starts one strategy later
            for s in list(strategies[k:]) + list(strategies[:k]):
                time_cell(by[(w, s, t, b)], WORKLOADS[w], table[s], sizes, plan.seed, tcost,
                          frames[s])  # fmt: skip
                bar.step(f"timing {w}/{s}/{t}/{b} ({r + 1}/{sizes.repeats})")
        for s in strategies:
            if by[(w, s, t, b)].status == "ok":
                by[(w, s, t, b)].timing = summarize(frames[s])
    others: list[Cell] = []
    for w, t, b in extra:
        base = plan.sizes[w]
        sizes = Sizes(base.draws * SECOND_SIZE + 2, base.frames, 1)
        others.append(measure_cell(WORKLOADS[w], table["a"], t, b, sizes, plan.seed))
        bar.step(f"census {w}/a/{t}/{b} at {sizes.draws} draws/frame")
    return cells + _missing(plan), others
