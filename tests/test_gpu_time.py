"""GPU-side time per frame, measured by the GPU: Vulkan timestamp queries (validation
layer on), GLES GL_EXT_disjoint_timer_query (reported truthfully for the driver at hand),
with planted defects: a query never reset, a read before the fence, a disjoint frame."""

from __future__ import annotations

import json

import pytest
import vulkan as vk

from _gles import gles_client
from _vk_support import setup_color, vk_client

GL_COLOR = 0x4000
FRAMES = 3


def _frames(c, n=FRAMES, draws=4):
    for _ in range(n):
        c.clear(GL_COLOR)
        for _ in range(draws):
            c.draw_arrays(0x0004, 0, 3)
        c.present()


# -- Vulkan ---------------------------------------------------------------------------------
def _queue_can_time(dev) -> bool:
    fams = vk.vkGetPhysicalDeviceQueueFamilyProperties(dev.physical)
    return fams[dev.queue_family].timestampValidBits > 0 and dev.limits.timestampPeriod > 0


def test_vulkan_timestamps_one_positive_time_per_frame_validation_clean():
    with vk_client() as (c, be):
        setup_color(c)
        _frames(c)
        be.r.finish()  # every frame's fence: its pair is read
        gpu, flat = be.gpu_stats(), be.stats()
        if not _queue_can_time(be.dev):
            assert gpu["gpu_time"].startswith("gpu time not available: queue family")
            assert gpu["gpu_ns_per_frame"] == [] and flat["gpu_frames"] == 0
            return
        assert gpu["gpu_time"] == "available"
        ns = gpu["gpu_ns_per_frame"]
        assert len(ns) == FRAMES == flat["frames"] == flat["gpu_frames"]
        assert all(t > 0 for t in ns) and flat["gpu_ns_total"] == sum(ns)
        # one pair per submitted command buffer, every one read after its fence
        assert be.r.gpu.submissions == be.r.gpu.reads == be.r.ring.submits
        # the counters that were there stay as they were
        assert {"pipelines_created", "draws", "frames", "submits", "frame_cpu_ms_mean",
                "validation_messages"} <= set(flat)  # fmt: skip


def test_vulkan_query_never_reset_is_caught_by_validation(monkeypatch):
    """Planted defect: the timestamp is written without ``vkCmdResetQueryPool``."""
    from mgpipe.runtime.backends.vulkan import gpu_timer

    def begin_without_reset(self, cmd, slot):
        vk.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, self.pool, 2 * slot)

    monkeypatch.setattr(gpu_timer.GpuTimer, "begin", begin_without_reset)
    with pytest.raises(AssertionError, match="QueryNotReset|query not reset"):
        with vk_client() as (c, be):
            setup_color(c)
            _frames(c, 2)
            be.r.finish()


def test_vulkan_read_before_the_fence_is_refused(monkeypatch):
    """Planted defect: the pair of a submission still in flight is read."""
    from mgpipe.runtime.backends.vulkan.gpu_timer import TimerRead

    with vk_client() as (c, be):
        setup_color(c)
        ring = be.r.ring
        monkeypatch.setattr(ring, "poll", lambda: ring.completed)  # nothing retires early
        c.clear(GL_COLOR)
        c.draw_arrays(0x0004, 0, 3)
        c.present()  # submitted, not waited on
        serial = ring.serial - 1
        assert ring.completed < serial
        with pytest.raises(TimerRead, match=f"serial {serial} read before its fence"):
            be.r.gpu.retired(serial, serial % ring.frames)
        monkeypatch.undo()
        be.r.finish()


# -- GLES -----------------------------------------------------------------------------------
def _extensions(be) -> set[str]:
    from mgpipe.runtime.backends.gles.gl import GL, gl_string

    return set(gl_string(be.gl, GL.GL_EXTENSIONS).split())


def test_gles_gpu_time_reported_truthfully_for_this_driver():
    with gles_client() as (c, be):
        setup_color(c)
        _frames(c)
        exts = _extensions(be)
    gpu, flat = be.gpu_stats(), be.stats()  # the context closed: every frame was read
    if "GL_EXT_disjoint_timer_query" not in exts:
        assert gpu["gpu_time"] == "gpu time not available: GL_EXT_disjoint_timer_query missing"
        assert gpu["gpu_ns_per_frame"] == [] and flat["gpu_frames"] == 0
        return
    assert gpu["gpu_time"] == "available"
    ns, dropped = gpu["gpu_ns_per_frame"], gpu["gpu_dropped_implausible"]
    # every presented frame is either timed or dropped and counted (never made up)
    assert len(ns) + dropped + gpu["gpu_dropped_disjoint"] == FRAMES == flat["frames"]
    assert len(ns) >= FRAMES - 1 and all(t > 0 for t in ns)
    assert gpu["gpu_frame_index"] == sorted(gpu["gpu_frame_index"])
    assert flat["gpu_frames"] == len(ns) and flat["gpu_ns_total"] == sum(ns)


def test_gles_without_the_extension_says_so_and_issues_the_same_gl_calls(monkeypatch):
    from mgpipe.runtime.backends.gles import gpu_timer

    with gles_client() as (c, be):
        setup_color(c)
        _frames(c)
    timed_calls = be.stats()["gl_calls"]
    monkeypatch.setattr(gpu_timer, "EXTENSION", "GL_EXT_not_a_real_extension")
    with gles_client() as (c, be):
        setup_color(c)
        _frames(c)
    flat = be.stats()
    assert flat["gpu_time"] == "gpu time not available: GL_EXT_not_a_real_extension missing"
    assert flat["gpu_frames"] == 0 and be.gpu.gl.total() == 0
    assert flat["gl_calls"] == timed_calls  # the timer's calls are never in gl_calls


def test_gles_disjoint_frames_are_dropped_and_counted(monkeypatch):
    """Planted event: the driver reports GL_GPU_DISJOINT_EXT on every read."""
    with gles_client() as (c, be):
        setup_color(c)
        c.clear(GL_COLOR)
        if not be.gpu.on:
            assert be.stats()["gpu_time"].startswith("gpu time not available: ")
            return
        monkeypatch.setattr(be.gpu.gl, "glGetIntegerv", lambda name: 1)
        _frames(c)
    gpu = be.gpu_stats()
    assert gpu["gpu_ns_per_frame"] == [] and gpu["gpu_dropped_disjoint"] == FRAMES


# -- the benchmark ------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["vulkan", "gles"])
def test_gpu_frame_benchmark_reports_cpu_split_and_gpu_time(backend, capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / "gpu_frame.py"
    spec = importlib.util.spec_from_file_location("gpu_frame", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--backend", backend, "--draws", "60", "--frames", "3", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["draws_per_frame"] == 60 and r["frames_steady"] == 2
    frame, client, server = r["frame_cpu_ms"], r["client_cpu_ms"], r["server_cpu_ms"]
    assert frame["median"] > 0 and client["median"] > 0 and server["median"] > 0
    assert 0 < r["pipe_share_of_cpu_frame"] < 1
    assert r["backend_share_of_cpu_frame"] + r["pipe_share_of_cpu_frame"] == pytest.approx(
        1, abs=0.01
    )
    if r["gpu_time"] == "available":
        assert r["gpu_frames_timed"] == 2 and r["gpu_ms"]["median"] > 0
    else:
        assert r["gpu_time"].startswith("gpu time not available: ") and r["gpu_ms"] is None
