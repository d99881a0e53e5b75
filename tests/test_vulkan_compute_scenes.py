"""Issue 19's scenes (runtime/harness/scenes/compute.py) on the Vulkan backend through every
transport: each meets its first-principles probes (words read back through the dump
program, pixels of known geometry) with the validation layer on and no message. The
controls plant a backend defect and assert the named failure: a dispatch one group short
fails the compute probes, a capture that never runs is refused at ``EndStreamOutput`` by
the primitives-written query, and a tessellated draw without tessellation is refused."""

from __future__ import annotations

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import COMPUTE_SCENES

TRANSPORTS = ("monolith", "inproc", "spawn")
#: the scenes whose programs leave a vertex output no fragment input reads (GL allows it;
#: the layer warns): their message count is pinned, not waived (see the request log)
_PROGRAM_WARNINGS: dict[str, int] = {}


def _fails(name: str, res) -> list[str]:
    scene = COMPUTE_SCENES[name]
    return [m for p in scene.probes(scene.default_n) if (m := p.check(res.images))]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", list(COMPUTE_SCENES))
def test_the_scene_meets_its_probes_on_vulkan_with_no_validation_message(name, transport):
    res = run_scene(name, "vulkan", transport)
    assert not res.lost, res.client.transport.lost_reason
    assert _fails(name, res) == [], f"{name} on vulkan/{transport}: a wrong result"
    assert res.backend.stats().get("validation_messages", 0) == _PROGRAM_WARNINGS.get(name, 0)


def test_negative_control_a_dispatch_one_group_short_fails_the_probes(monkeypatch):
    import vulkan as vk

    real = vk.vkCmdDispatch
    monkeypatch.setattr(vk, "vkCmdDispatch", lambda cmd, x, y, z: real(cmd, x - 1, y, z))
    res = run_scene("compute-fill", "vulkan", "monolith")
    fails = _fails("compute-fill", res)
    assert fails, "a dispatch one group short still met every probe"


def test_negative_control_a_capture_that_never_runs_is_refused_at_end(monkeypatch):
    from mgpipe.runtime.backends.vulkan.stream_output import StreamOutputEntries

    monkeypatch.setattr(StreamOutputEntries, "xfb_before_pass", lambda self, ctx: None)
    with pytest.raises(PipeFatal, match=r'EndStreamOutput\.PrimitivesWritten"\}: 2 reported, '
                       r"the device's query counted 0"):  # fmt: skip
        run_scene("xfb-capture", "vulkan", "monolith")


def test_negative_control_no_tessellation_feature_is_refused_by_name(monkeypatch):
    from mgpipe.runtime.backends.vulkan import device

    real = device.VulkanDevice._make_device

    def without(self):
        out = real(self)
        self.features["tessellationShader"] = False
        return out

    monkeypatch.setattr(device.VulkanDevice, "_make_device", without)
    # the first record that needs it names itself: PatchParameter (or the program's create)
    with pytest.raises(PipeFatal, match=r'"(PatchParameter\.Value|CreateShaderState\.Spirv)"\}: '
                       ".*the device has no tessellationShader"):  # fmt: skip
        run_scene("tess-patch", "vulkan", "monolith")


def test_stream_output_and_compute_counters_are_what_the_scenes_ran():
    res = run_scene("xfb-capture", "vulkan", "monolith")
    be = res.backend
    # triangles 0 and 1 captured (triangle 2 drawn paused): two wrapped draws, 2 primitives
    assert be.stream_output_stats() == {"spans": 1, "captured_draws": 2, "primitives_written": 2,
                                       "xfb_pass_splits": 1}  # the resume ends the pass
    res = run_scene("compute-indirect", "vulkan", "monolith")
    assert res.backend.compute_stats()["indirect_dispatches"] == 1


def test_a_device_without_transform_feedback_refuses_the_capture_by_name(monkeypatch):
    from mgpipe.runtime.backends.vulkan import device

    real = device.VulkanDevice._device_extensions
    monkeypatch.setattr(device.VulkanDevice, "_device_extensions",
                        lambda self: real(self) - {"VK_EXT_transform_feedback"})  # fmt: skip
    with pytest.raises(PipeFatal, match=r'"BindStreamOutput"\}: the device has no '
                       "VK_EXT_transform_feedback"):  # fmt: skip
        run_scene("xfb-capture", "vulkan", "monolith")


def _xfb_trace(monkeypatch) -> list[str]:
    """The xfb-capture scene's render-pass and transform-feedback commands, in order
    (``resume`` = a begin that reads counters)."""
    import vulkan as vk

    from mgpipe.runtime.backends.vulkan.stream_output import StreamOutputEntries

    trace: list[str] = []
    for name, tag in (("vkCmdBeginRenderPass", "pass"), ("vkCmdEndRenderPass", "end-pass")):
        real = getattr(vk, name)
        monkeypatch.setattr(vk, name, lambda *a, _r=real, _t=tag: (trace.append(_t), _r(*a))[1])
    real_fns = StreamOutputEntries._xfb_fns

    def fns(self, where):
        out = dict(real_fns(self, where))
        b, e = out["vkCmdBeginTransformFeedbackEXT"], out["vkCmdEndTransformFeedbackEXT"]
        out["vkCmdBeginTransformFeedbackEXT"] = lambda cmd, first, n, bufs, offs: (
            trace.append("resume" if bufs and any(bufs) else "begin"), b(cmd, first, n, bufs, offs))
        out["vkCmdEndTransformFeedbackEXT"] = lambda *a: (trace.append("end"), e(*a))
        return out

    monkeypatch.setattr(StreamOutputEntries, "_xfb_fns", fns)
    run_scene("xfb-capture", "vulkan", "monolith")
    return trace


def _resumes_in_the_writing_pass(trace: list[str]) -> int:
    """Begins that read counters an End of the same render pass instance wrote (no barrier
    can order them inside one subpass)."""
    n, ended_here = 0, False
    for t in trace:
        if t == "pass":
            ended_here = False
        elif t == "end":
            ended_here = True
        elif t == "resume" and ended_here:
            n += 1
    return n


def test_a_capture_resumed_from_its_counters_opens_a_new_pass(monkeypatch):
    trace = _xfb_trace(monkeypatch)
    assert trace.count("resume") == 1 and _resumes_in_the_writing_pass(trace) == 0, trace


def test_negative_control_a_resume_in_the_writing_pass_is_seen(monkeypatch):
    from mgpipe.runtime.backends.vulkan.stream_output import StreamOutputEntries

    monkeypatch.setattr(StreamOutputEntries, "_xfb_resumes_in_pass", lambda self, span, b: False)
    trace = _xfb_trace(monkeypatch)
    assert _resumes_in_the_writing_pass(trace) == 1, trace
