"""Per-frame CPU and GPU time of a bench workload on a real backend, and the pipe's share.

    python benchmarks/gpu_frame.py [--backend gles|vulkan] [--workload MixedFrame]
                                   [--draws D] [--frames F] [--seed S]
                                   [--validation on|off|auto] [--json]

The workload (the bench's, default ``MixedFrame``: a Minecraft-like frame of 10,000
draws) runs through the ``monolith`` transport, so client, server and backend share one
thread. Per frame (frames after the first, which creates the pipelines):

* ``client``: the thread's CPU (``thread_time_ns``) minus the time inside the applier;
* ``server``: CPU inside the applier (decode + apply + backend entries);
* ``backend``: CPU inside the backend's entries (GL / Vulkan calls and their Python);
* ``pipe share``: (client + server - backend) / (client + server), the part of the CPU
  frame the pipe (encode, transport, decode, apply) takes;
* ``gpu``: the GPU's own time for the frame (Vulkan timestamp queries around every
  command buffer; GLES ``GL_EXT_disjoint_timer_query``), or the backend's
  ``gpu time not available: <reason>``.

The device is chosen as the backends choose it: ``MGPIPE_VK_DEVICE`` (Vulkan), the EGL
platform order or ``MGPIPE_EGL_PLATFORM`` (GLES). Validation is off unless asked for.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from typing import Any

from mgpipe.runtime.harness.bench.rigs import TimedBackend
from mgpipe.runtime.harness.bench.workloads import WORKLOADS
from mgpipe.runtime.backends.registry import make_backend
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.stage import StageSegment

_tt = time.thread_time_ns
STAGE = 64 << 20
RING = 32 << 20




def _backend(name: str, validation: str) -> Any:
    if name == "vulkan":
        from mgpipe.runtime.backends.vulkan.backend import VulkanBackend

        return VulkanBackend(validation=validation)
    return make_backend(name)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else 0.0


def _ms(xs: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(xs) / 1e6, 3) if xs else 0.0,
            "p90": round(_pct(xs, 0.9) / 1e6, 3)}  # fmt: skip


def run(backend: str, workload: str, draws: int | None, frames: int, seed: int,
        validation: str) -> dict[str, Any]:  # fmt: skip
    raw = _backend(backend, validation)
    be = TimedBackend(raw)
    stage = StageSegment(STAGE)
    applier = Applier(be, stage)
    implemented = frozenset(k for k, v in applier.table.items() if v is not None)
    server = [0]
    apply = applier.apply

    def timed_apply(rec: Any) -> object:
        t0 = _tt()
        try:
            return apply(rec)
        finally:
            server[0] += _tt() - t0

    c = Client(timed_apply, stage, transport="monolith", ring_capacity=RING)
    wl = WORKLOADS[workload](draws, seed, backend_calls=implemented)
    wl.setup(c)
    rows = []
    for i in range(frames):
        gc.collect()
        gc.disable()
        s0, b0 = server[0], be.ns
        try:
            t0 = _tt()
            wl.frame(c, i)
            c.present()
            total = _tt() - t0
        finally:
            gc.enable()
        srv, bck = server[0] - s0, be.ns - b0
        rows.append({"client": total - srv, "server": srv, "backend": bck, "total": total})
    c.close()
    if backend == "vulkan":
        raw.r.finish()  # every frame's fence has signalled: its timestamps are read
        gpu = raw.gpu_stats()
        index = list(range(len(gpu["gpu_ns_per_frame"])))
        info = raw.info()
        raw.close()
    else:
        raw.close()  # reads the queries of the last frames
        gpu = raw.gpu_stats()
        index = gpu.get("gpu_frame_index", [])
        info = {k: v for k, v in raw.info().items() if isinstance(v, str)}
    steady = rows[1:] or rows
    gpu_steady = [ns for f, ns in zip(index, gpu["gpu_ns_per_frame"]) if f >= 1]
    share = [(r["total"] - r["backend"]) / r["total"] for r in steady if r["total"]]
    out = {
        "backend": backend, "workload": workload, "draws_per_frame": wl.draws_per_frame,
        "frames": frames, "frames_steady": len(steady), "transport": "monolith",
        "device": info,
        "client_cpu_ms": _ms([r["client"] for r in steady]),
        "server_cpu_ms": _ms([r["server"] for r in steady]),
        "backend_cpu_ms": _ms([r["backend"] for r in steady]),
        "frame_cpu_ms": _ms([r["total"] for r in steady]),
        "backend_share_of_cpu_frame": round(statistics.median(
            [r["backend"] / r["total"] for r in steady if r["total"]] or [0.0]), 3),
        "pipe_share_of_cpu_frame": round(statistics.median(share or [0.0]), 3),
        "gpu_time": gpu["gpu_time"],
        "gpu_frames_timed": len(gpu_steady),
        "gpu_ms": _ms(gpu_steady) if gpu_steady else None,
        "gpu_dropped": {k: v for k, v in gpu.items() if k.startswith("gpu_dropped")},
    }  # fmt: skip
    return out


def _line(r: dict[str, Any]) -> str:
    def m(key: str) -> str:
        v = r[key]
        return f"{v['median']:.2f} (p90 {v['p90']:.2f})"

    gpu = (f"{r['gpu_ms']['median']:.3f} ms (p90 {r['gpu_ms']['p90']:.3f}) over "
           f"{r['gpu_frames_timed']} frames" if r["gpu_ms"] else r["gpu_time"])  # fmt: skip
    dev = r["device"].get("vulkan_device") or r["device"].get("renderer", "")
    return (f"{r['backend']} on {dev} | {r['workload']} {r['draws_per_frame']} draws/frame, "
            f"{r['frames_steady']} steady frames, monolith\n"
            f"  CPU ms/frame: client {m('client_cpu_ms')}, server {m('server_cpu_ms')}, "
            f"of which backend {m('backend_cpu_ms')}; whole frame {m('frame_cpu_ms')}\n"
            f"  backend share of the CPU frame {r['backend_share_of_cpu_frame']:.1%}, "
            f"pipe share {r['pipe_share_of_cpu_frame']:.1%}\n"
            f"  GPU: {gpu}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--backend", choices=("gles", "vulkan"), default="vulkan")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="MixedFrame")
    ap.add_argument("--draws", type=int, default=None, help="per frame (workload's default)")
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--validation", default="off", help="Vulkan: on, off or auto (default off)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.frames < 2:
        print("gpu_frame: --frames: at least 2 (frame 0 is warm-up)", file=sys.stderr)
        return 2
    r = run(args.backend, args.workload, args.draws, args.frames, args.seed, args.validation)
    print(json.dumps(r, indent=1) if args.json else _line(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
