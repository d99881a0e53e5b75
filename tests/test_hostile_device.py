"""Well-formed poison against the real backends (issue 21 items 1, 6, 7): every record a
hostile client can send past the client's own checks is a named refusal (or, where GL
defines the result, that result), never a driver crash, a raw exception or a validation
message. Each case runs in a child process (``hostile_device_peer.py``), so a crash is a
finding reported by name, not a dead test run; the planted cases prove the harness sees
a crash and a validation message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

PEER = Path(__file__).with_name("hostile_device_peer.py")
BACKENDS = ("gles", "vulkan")

#: case -> (kind, reason) of the refusal on each backend (one pair: both), or "ok".
#: GLES reports what its driver's own checks name where they are complete and safe.
EXPECT: dict[str, object] = {
    "tex_0x0": "ok",  # no extent: no storage defined yet (MobileGL's constructor respecify)
    "tex_65536": ("ResourceLimit", "ResourceRespecify.Width"),
    "renderbuffer_65536": ("ResourceLimit", "ResourceRespecify.Width"),
    "tex_100_levels": ("DriverRefused", "ResourceRespecify.Levels"),
    "tex_7_levels": "ok",
    "tex_array_65535_layers": {"gles": ("DriverRefused", "ResourceRespecify"),
                               "vulkan": ("DriverRefused", "ResourceRespecify.ArrayLayers")},
    "tex_bad_format": ("DriverRefused", "ResourceRespecify.InternalFormat"),
    "attachment_level_99": {"gles": ("DriverRefused", "SetFramebufferState.Complete"),
                            "vulkan": ("DriverRefused", "SetFramebufferState.Color[0]")},
    "clear_draw_buffer_1000": ("DriverRefused", "Clear.DrawBufferIndex"),
    "read_x_1e6": "ok",
    "read_y_int32_max": "ok",
    "read_int32_min": "ok",
    "read_straddling": "ok",
    "draw_past_vertex_buffer": ("DriverRefused", "DrawVbo.VertexRange"),
    "draw_to_vertex_buffer_end": "ok",
    "draw_index_past_vertex_buffer": ("DriverRefused", "DrawVbo.VertexRange"),
    "draw_indices_past_index_buffer": ("DriverRefused", "DrawVbo.IndexRange"),
    "draw_indexed_in_range": "ok",
    "spirv_header_only": {"gles": ("DriverRefused", "CreateShaderState.Spirv"),
                          "vulkan": ("DriverRefused", "CreateShaderState.Spirv[0]")},
    "spirv_truncated": {"gles": ("DriverRefused", "CreateShaderState.Spirv"),
                        "vulkan": ("DriverRefused", "CreateShaderState.Spirv[0]")},
    "reflection_nested_2000": ("DriverRefused", "CreateShaderState.Reflection"),
    "reflection_wrong_shape": ("DriverRefused", "CreateShaderState.Reflection"),
    "viewport_nan": ("DriverRefused", "RenderState.Viewports"),
    "viewport_inf": ("DriverRefused", "RenderState.Viewports"),
    "viewport_huge": "ok",
    "depth_func_12345": ("DriverRefused", "DepthTestFunc"),
    "blend_factor_99": ("DriverRefused", "BlendFactor"),
    "draw_1e6_instances": ("ResourceLimit", "DrawVbo.InstanceCount"),
    "draw_count_uint32_max": ("ResourceLimit", "DrawVbo.Count"),
    "respecify_4gib_buffer": ("ResourceLimit", "ResourceRespecify.Width"),
}


def run_peer(backend: str, case: str, env: dict[str, str] | None = None,
             timeout: float = 120) -> tuple[int, dict | None]:  # fmt: skip
    """(returncode, the peer's RESULT record or None)."""
    proc = subprocess.run([sys.executable, str(PEER), backend, case], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    return proc.returncode, (json.loads(lines[-1][7:]) if lines else None)


def _check(backend: str, case: str, want: object, rc: int, out: dict | None) -> None:
    assert rc == 0 and out is not None, (
        f"{backend} {case}: the child died (rc {rc}"
        f"{', ' + signal.Signals(-rc).name if rc < 0 else ''}): a driver crash")
    assert out["messages"] == [], f"{backend} {case}: validation messages {out['messages']}"
    if isinstance(want, dict):
        want = want[backend]
    if want == "ok":
        assert out["outcome"] == "ok", f"{backend} {case}: {out}"
    else:
        assert out["outcome"] == "refused", f"{backend} {case}: {out}"
        assert (out["kind"], out["reason"]) == want, f"{backend} {case}: {out['text']}"


@pytest.mark.parametrize("case", sorted(EXPECT))
@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_record_is_named(backend: str, case: str) -> None:
    rc, out = run_peer(backend, case)
    _check(backend, case, EXPECT[case], rc, out)
    if case == "read_straddling":  # GL's clipped readback: the 2x2 inside, at its place
        inside = "336699ff" * 2  # (0.2, 0.4, 0.6, 1.0) as bytes: 0x33 0x66 0x99 0xff
        assert out["extra"]["rows"] == ["00" * 16] * 2 + ["00" * 8 + inside] * 2
    if case.startswith(("draw_1e6", "draw_count", "respecify_4gib")):  # refused, not run
        assert out["seconds"] < 5 and out["rss_growth_mb"] < 256, out


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_limits_behind_the_budget(backend: str) -> None:
    """With the image budget raised past them, the device's own limits refuse by name
    (GLES: GL_MAX_TEXTURE_SIZE; Vulkan: maxImageDimension2D)."""
    env = {"MGPIPE_BUDGET_IMAGE_BYTES": str(1 << 40), "MGPIPE_BUDGET_RESOURCE_BYTES": str(1 << 40)}
    for case in ("tex_65536", "renderbuffer_65536"):
        rc, out = run_peer(backend, case, env)
        _check(backend, case, ("DriverRefused", "ResourceRespecify.Width"), rc, out)


def test_harness_sees_a_crash() -> None:
    """Negative control: a planted SIGSEGV is reported as the child's death."""
    rc, out = run_peer("gles", "planted_crash")
    assert rc == -signal.SIGSEGV and out is None
    with pytest.raises(AssertionError, match="a driver crash"):
        _check("gles", "planted_crash", "ok", rc, out)


def test_harness_sees_a_validation_message() -> None:
    """Negative control: a planted invalid Vulkan call (a 0-byte VkBuffer) is reported."""
    rc, out = run_peer("vulkan", "planted_validation_message")
    assert rc == 0 and out is not None and any("VUID" in m for m in out["messages"])
    with pytest.raises(AssertionError, match="validation messages"):
        _check("vulkan", "planted_validation_message", "ok", rc, out)
