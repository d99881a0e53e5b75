"""Per-frame CPU of the Blaze3D frame on the Vulkan backend.

    python benchmarks/vulkan_frame.py [--frames F] [--batches N] [--transport T] [--device D]
                                      [--validation on|off|auto] [--json]

Each frame: ``N`` batches of (blend off, opaque strip; blend on, translucent quad), depth
test on, then ``Present`` (the ``blaze3d-frame`` scene's batch loop, repeated per frame,
no readback). Reported per transport: the median and p90 thread CPU per frame of the thread
that runs the backend (the client's thread under monolith, the apply thread under inproc)
over the frames after the first (the first creates the pipelines), the client thread's CPU
per frame, pipelines created, ``vkCmdSet*`` per frame, and the device.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.harness.scenes.kit import GL, quad, setup
from mgpipe.runtime.harness.scenes.pixel_draw import STRIPS, TRANSLUCENT, _strip_color
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.stage import StageSegment

SIZE = 64


def run(frames: int, batches: int, transport: str, device: str | None,
        validation: str) -> dict:  # fmt: skip
    be = VulkanBackend(width=SIZE, height=SIZE, device=device, validation=validation)
    stage = StageSegment(4 << 20)
    c = Client(Applier(be, stage).apply, stage, transport=transport, width=SIZE, height=SIZE)
    floats: list[float] = []
    for i in range(STRIPS):
        x0 = -1.0 + 2.0 * i / STRIPS
        floats += quad(x0, -1, x0 + 2.0 / STRIPS, 1, 0.0, _strip_color(i))
        floats += quad(x0, 0, x0 + 2.0 / STRIPS, 1, 0.0, TRANSLUCENT)
    setup(c, floats)
    c.viewport(0, 0, SIZE, SIZE)
    c.enable("DepthTest")
    c.depth_func("LessEqual")
    c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
    client_ns = []
    sets = []
    for _ in range(frames):
        t0 = time.thread_time_ns()
        before = be.r.tail.total_issued
        c.clear(GL.COLOR_BUFFER_BIT | GL.DEPTH_BUFFER_BIT)
        for b in range(batches):
            i = b % STRIPS
            c.disable("Blend")
            c.draw_arrays(GL.TRIANGLES, 12 * i, 6)
            c.enable("Blend")
            c.draw_arrays(GL.TRIANGLES, 12 * i + 6, 6)
        c.present()
        client_ns.append(time.thread_time_ns() - t0)
        sets.append(be.r.tail.total_issued - before)
    c.close()
    snap = be.vulkan_stats()
    be.close()
    backend_ns = np.array(snap["frame_cpu_ns"][1:] or snap["frame_cpu_ns"], dtype=np.float64)
    client = np.array(client_ns[1:] or client_ns, dtype=np.float64)
    return {
        "device": snap["device"], "transport": transport, "validation": snap["validation"],
        "frames": frames, "draws_per_frame": 2 * batches,
        "backend_thread_cpu_ms_median": round(float(np.median(backend_ns)) / 1e6, 3),
        "backend_thread_cpu_ms_p90": round(float(np.percentile(backend_ns, 90)) / 1e6, 3),
        "client_thread_cpu_ms_median": round(float(np.median(client)) / 1e6, 3),
        "pipelines_created": snap["pipelines_created"],
        "cmd_set_per_frame_after_first": sets[1:] and max(sets[1:]),
        "cmd_set_first_frame": sets[0],
        "validation_messages": snap["validation_messages"],
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--batches", type=int, default=64)
    ap.add_argument("--transport", choices=("monolith", "inproc", "both"), default="both")
    ap.add_argument("--device", default=None, help="index or name (MGPIPE_VK_DEVICE)")
    ap.add_argument("--validation", default="off", help="on, off or auto (default off)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    transports = ("monolith", "inproc") if args.transport == "both" else (args.transport,)
    rows = [run(args.frames, args.batches, t, args.device, args.validation) for t in transports]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        print(f"{r['device']} | {r['transport']:<8} | {r['draws_per_frame']} draws/frame | "
              f"backend thread {r['backend_thread_cpu_ms_median']:.2f} ms/frame "
              f"(p90 {r['backend_thread_cpu_ms_p90']:.2f}) | client thread "
              f"{r['client_thread_cpu_ms_median']:.2f} ms/frame | pipelines "
              f"{r['pipelines_created']} | vkCmdSet* first frame {r['cmd_set_first_frame']}, "
              f"then <= {r['cmd_set_per_frame_after_first']}/frame")


if __name__ == "__main__":
    main()
