"""The Vulkan backend's counters, read as one plain dict (``Counters.snapshot()``).

- ``pipelines_created``: ``vkCreateGraphicsPipelines`` calls (memo misses);
- ``pipelines_live`` / ``pipelines_retired``: in the memo / retired by a delete;
- ``cmd_set``: ``vkCmdSet*`` calls by name, and ``cmd_set_total``;
- ``tail_version_hits`` / ``tail_value_hits``: draws whose dynamic tail issued nothing;
- ``render_passes``: render-pass objects made (one per (formats, load ops) key);
- ``frame_cpu_ns``: thread CPU time between consecutive presents (the thread that runs
  the backend: the client's too under ``monolith``, the apply thread under ``inproc``);
- ``draws``, ``frames``, ``submits``, ``deferred_destroyed``;
- ``gpu_time``: ``"available"`` or ``"gpu time not available: <reason>"``;
  ``gpu_ns_per_frame``: GPU ns per presented frame whose submissions have all been read
  (timestamp queries, :mod:`.gpu_timer`); flat: ``gpu_frames``, ``gpu_ns_total``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Counters"]


class Counters:
    def __init__(self, renderer: Any) -> None:
        self.r = renderer

    def snapshot(self) -> dict[str, Any]:
        r = self.r
        return {
            "device": r.dev.name,
            "validation": r.dev.validation,
            "pipelines_created": r.memo.created,
            "pipelines_live": len(r.memo),
            "pipelines_retired": r.memo.retired,
            "cmd_set": dict(sorted(r.tail.issued.items())),
            "cmd_set_total": r.tail.total_issued,
            "tail_version_hits": r.tail.version_hits,
            "tail_value_hits": r.tail.value_hits,
            "render_passes": r.passes.created,
            "draws": r.draws,
            "frames": r.frames,
            "submits": r.ring.submits,
            "deferred_destroyed": r.ring.destroyed,
            "frame_cpu_ns": list(r.frame_cpu_ns),
            "gpu_time": r.gpu.available,
            "gpu_ns_per_frame": r.gpu.per_frame(r.frames),
        }

    def flat(self, validation_messages: int) -> dict[str, int | float | str]:
        """The numbers, one level (``cmd_set_<name>``; ``frame_cpu_ms_mean``; ``gpu_frames``,
        ``gpu_ns_total``), plus the ``gpu_time`` availability line."""
        snap = self.snapshot()
        out: dict[str, int | float | str] = {k: v for k, v in snap.items()
                                       if isinstance(v, int) and not isinstance(v, bool)}  # fmt: skip
        out.update((f"cmd_set_{k}", v) for k, v in snap["cmd_set"].items())
        frames = snap["frame_cpu_ns"]
        out["frame_cpu_ms_mean"] = round(sum(frames) / len(frames) / 1e6, 3) if frames else 0.0
        out["validation_messages"] = validation_messages
        gpu = snap["gpu_ns_per_frame"]
        out.update(gpu_time=snap["gpu_time"], gpu_frames=len(gpu), gpu_ns_total=sum(gpu))
        return out
