"""``--plot``: PNG charts of a results document (matplotlib, Agg backend, no display).

Three charts, one per question: client and server CPU ns per draw per strategy
(per workload), wire bytes per draw per strategy, and how the render-state re-selections
of (a) were answered (version check / transition cache / hash). Rows are the
monolith / recorder cells, the ones every machine has.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["plot", "CHARTS", "missing"]

_ROWS = ("monolith", "recorder")
#: the charts' file names, in the order :func:`plot` writes them
CHARTS = ("cpu_per_draw.png", "bytes_per_draw.png", "hash_skip.png")


def missing() -> str | None:
    """Why the charts cannot be drawn here (matplotlib not importable), else None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        return f"{exc}"
    return None


def _cells(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c for c in doc["cells"] if c["status"] == "ok" and (c["transport"], c["backend"]) == _ROWS
    ]


def _grouped(ax: Any, workloads: Sequence[str], strategies: Sequence[str],
             value: dict[tuple[str, str], float], ylabel: str) -> None:  # fmt: skip
    width = 0.8 / max(len(strategies), 1)
    for i, s in enumerate(strategies):
        xs = [j + i * width for j in range(len(workloads))]
        ax.bar(xs, [value.get((w, s), 0.0) for w in workloads], width, label=f"({s})")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(workloads))], list(workloads))
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


def plot(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "mgpipe"
    cells = _cells(doc)
    workloads = list(dict.fromkeys(c["workload"] for c in cells))
    strategies = sorted({c["strategy"] for c in cells})
    names = {k: v["name"] for k, v in doc["strategies"].items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, key, title in ((axes[0], "client_ns_per_draw", "client CPU ns/draw (validate+encode)"),
                           (axes[1], "server_ns_per_draw", "server CPU ns/draw (decode+apply+backend)")):  # fmt: skip
        _grouped(ax, workloads, strategies,
                 {(c["workload"], c["strategy"]): c["timing"].get(key, 0.0) for c in cells}, "ns")  # fmt: skip
        ax.set_title(title, fontsize=9)
    fig.suptitle("per-draw CPU by strategy: " + ", ".join(f"({k}) {names[k]}" for k in strategies),
                 fontsize=8)  # fmt: skip
    fig.tight_layout()
    written.append(out_dir / CHARTS[0])
    fig.savefig(written[-1], dpi=110, metadata={"Software": None})
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.2))
    _grouped(ax, workloads, strategies,
             {(c["workload"], c["strategy"]): c["structure"]["wire_bytes_per_draw"] for c in cells},
             "bytes / draw (ring + stage)")  # fmt: skip
    ax.set_yscale("log")
    ax.set_title("wire bytes per draw, steady state", fontsize=9)
    fig.tight_layout()
    written.append(out_dir / CHARTS[1])
    fig.savefig(written[-1], dpi=110, metadata={"Software": None})
    plt.close(fig)

    from .report import skip_counts

    fig, ax = plt.subplots(figsize=(8, 4.2))
    parts = ("version check", "transition cache", "hash")
    bottoms = [0.0] * len(workloads)
    for i, label in enumerate(parts):
        vals = []
        for w in workloads:
            a = next((c for c in cells if c["workload"] == w and c["strategy"] == "a"), None)
            if a is None:
                vals.append(0.0)
                continue
            counts = skip_counts(a["structure"]["cso_stats_steady"])
            total = sum(x or 0 for x in counts) or 1
            vals.append((counts[i] or 0) / total)
        ax.bar(workloads, vals, bottom=bottoms, label=label)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    ax.set_ylabel("share of render-state selections, (a)")
    ax.set_title("how (a) answered each re-selection (steady frames)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    written.append(out_dir / CHARTS[2])
    fig.savefig(written[-1], dpi=110, metadata={"Software": None})
    plt.close(fig)
    return written
