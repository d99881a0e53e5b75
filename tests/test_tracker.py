"""The client tracker: push at validate time, suppressors, accumulated uploads, deaths."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.client.api import GL_TRIANGLES, Client
from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.wire.handle import Handle
from mgpipe.runtime.wire.stage import StageSegment
from mgpipe.runtime.client.suppressor import SetHashSuppressor, suppressed_calls
from mgpipe.runtime.wire.codec import Decoder
from mgpipe.runtime.wire.records import to_plain


class Log:
    """A sink that decodes every record and then hands it to a real applier + recorder."""

    def __init__(self, stage: StageSegment) -> None:
        self.decoder = Decoder(stage)
        self.applier = Applier(Recorder(), stage)
        self.seen: list[tuple[str, dict[str, Any], list[Any]]] = []

    def __call__(self, rec: memoryview) -> None:
        d = self.decoder.decode(rec)
        self.seen.append((d.name, to_plain(d.payload), [to_plain(t) for t in d.tails]))
        self.applier.apply(rec)

    def names(self) -> list[str]:
        return [s[0] for s in self.seen]


@pytest.fixture(params=["monolith", "inproc"])
def client(request: pytest.FixtureRequest) -> Client:
    stage = StageSegment(1 << 20)
    log = Log(stage)
    c = Client(log, stage, transport=request.param)
    c.log = log  # type: ignore[attr-defined]
    yield c
    with contextlib.suppress(PipeFatal):  # a failed test's transport may already be dead
        c.close()


def _setup(c: Client) -> None:
    vb = c.create_buffer(bytes(36))
    c.use_program(c.create_program({0: b"vs", 4: b"fs"}))
    c.vertex_attrib_pointer(0, vb, 3, stride=12)


def _names(c: Client) -> list[str]:
    c.transport.wait_applied()
    return c.log.names()  # type: ignore[attr-defined]


def test_setters_alone_emit_nothing(client: Client) -> None:
    _setup(client)
    before = client.records
    for i in range(200):
        client.enable("Blend")
        client.disable("Blend")
        client.viewport(0, 0, 100 + i, 100)
        client.state.set_stencil_func("Front", "Less", i, 0xFF)
        client.clear_color(0.1, 0.2, 0.3, i / 200)
    assert client.records == before  # no record from any GL setter
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    names = _names(client)[-(client.records - before) :]
    assert names[-1] == "DrawVbo"
    assert "BindRenderState" in names and "SetDynamicState" in names  # pushed at validate


def test_blaze3d_toggle_between_draws_is_free(client: Client) -> None:
    _setup(client)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    before = client.records
    for _ in range(50):  # redundant enable/disable pairs with no draw in between
        client.enable("Blend")
        client.disable("Blend")
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    assert _names(client)[before:] == ["DrawVbo"]  # same CSO as bound: no bind, no hash miss


def test_set_suppressors_skip_unchanged_sets(client: Client) -> None:
    _setup(client)
    tex = client.create_texture_2d(4, 4)
    smp = client.create_sampler(minFilter="Linear")
    client.bind_texture(0, tex)
    client.bind_sampler(0, smp)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    for _ in range(5):  # MC 26.2: every unit switch rebinds the same sampler
        client.bind_sampler(0, smp)
        client.bind_texture(0, tex)
        client.draw_arrays(GL_TRIANGLES, 0, 3)
    names = _names(client)
    for call in ("SetSamplerViews", "BindSamplerStates", "SetVertexBuffers", "SetFramebufferState"):
        assert names.count(call) == 1, call
    smp2 = client.create_sampler(minFilter="Nearest")
    client.bind_sampler(0, smp2)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    names = _names(client)
    assert names.count("BindSamplerStates") == 2 and names.count("SetSamplerViews") == 1
    sent = [s for s in client.log.seen if s[0] == "BindSamplerStates"]  # type: ignore[attr-defined]
    assert sent[-1][2][0] == [{"Slot": smp2.slot, "Gen": smp2.gen}]
    assert sent[0][1]["ContentHash"] != sent[-1][1]["ContentHash"] != 0


def test_framebuffer_state_carries_its_content_hash(client: Client) -> None:
    _setup(client)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    fb = client.create_framebuffer()
    client.framebuffer_texture(fb, 0, client.create_texture_2d(8, 8))
    client.bind_framebuffer(fb)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    client.bind_framebuffer(None)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    _names(client)
    fbs = [s[1] for s in client.log.seen if s[0] == "SetFramebufferState"]  # type: ignore[attr-defined]
    assert [f["IsDefault"] for f in fbs] == [1, 0, 1]
    assert fbs[0]["ContentHash"] == fbs[2]["ContentHash"] != fbs[1]["ContentHash"]
    assert fbs[0]["Fbo"] == {"Slot": 0, "Gen": 1}


def test_texture_uploads_accumulate_to_one_subdata(client: Client) -> None:
    _setup(client)
    tex = client.create_texture_2d(16, 16)
    before = client.records
    client.tex_sub_image_2d(tex, 0, 0, 0, 2, 2, bytes(16))
    client.tex_sub_image_2d(tex, 0, 8, 4, 4, 2, bytes(32))
    client.tex_sub_image_2d(tex, 0, 1, 12, 3, 3, bytes(36))
    assert client.records == before  # nothing until the next validate point
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    _names(client)
    subs = [s for s in client.log.seen[before:] if s[0] == "ResourceSubData"]  # type: ignore[attr-defined]
    assert len(subs) == 1
    _, payload, (regions,) = subs[0]
    assert payload["RegionCount"] == 3 and len(regions) == 3
    box = payload["UnionBox"]
    assert (box["X"], box["Y"], box["W"], box["H"]) == (0, 0, 12, 15)
    assert [r["SrcRowStride"] for r in regions] == [8, 16, 12]


def test_death_sends_delete_then_death_then_frees_the_slot(client: Client) -> None:
    buf = client.create_buffer(bytes(16))
    before = client.records
    client.delete_buffer(buf)
    assert _names(client)[before:] == ["ResourceDestroy", "ObjectDeath"]
    again = client.create_buffer(bytes(16))
    assert again.handle == Handle(buf.handle.slot, buf.handle.gen + 1)  # slot reused, gen bumped


def test_buffer_data_of_a_size_respecifies_with_no_upload(client: Client) -> None:
    buf = client.create_buffer()
    before = client.records
    client.buffer_data(buf, 48)  # glBufferData(48, NULL)
    assert _names(client)[before:] == ["ResourceRespecify"]
    desc = client.log.seen[-1][1]  # type: ignore[attr-defined]
    assert (desc["Width"], desc["HasDefinedContent"]) == (48, 0)
    client.buffer_sub_data(buf, 0, bytes(48))  # the size is the buffer's: a whole upload fits
    client.buffer_data(buf, bytes(16))
    assert _names(client)[-2:] == ["ResourceRespecify", "ResourceSubData"]
    assert client.log.seen[-2][1]["HasDefinedContent"] == 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="outside 16"):
        client.buffer_sub_data(buf, 0, bytes(48))


def test_present_serials_are_one_based(client: Client) -> None:
    assert [client.present() for _ in range(3)] == [1, 2, 3]
    _names(client)
    serials = [s[1]["FrameSerial"] for s in client.log.seen if s[0] == "Present"]  # type: ignore[attr-defined]
    assert serials == [1, 2, 3]


# -- the suppressor itself ---------------------------------------------------------------
def test_suppressor_covers_every_var_tail_set_call() -> None:
    calls = suppressed_calls()
    assert {"SetVertexBuffers", "SetShaderBuffers", "SetSamplerViews", "BindSamplerStates",
            "SetShaderImages", "SetStreamOutputTargets", "SetVertexAttribDefaults",
            "SetFramebufferState"} <= set(calls)  # fmt: skip


def test_shader_buffers_get_one_slot_per_class() -> None:
    sup = SetHashSuppressor()
    ubo = {"Class": 0, "Start": 0, "Count": 1}
    ssbo = {"Class": 1, "Start": 0, "Count": 1}
    rows = b"\x01" * 24
    assert sup.offer("SetShaderBuffers", ubo, (rows,)) is not None
    assert sup.offer("SetShaderBuffers", ssbo, (rows,)) is not None  # its own slot
    assert sup.offer("SetShaderBuffers", ubo, (rows,)) is None
    assert sup.offer("SetShaderBuffers", ssbo, (rows,)) is None
    assert sup.offer("SetShaderBuffers", ubo, (b"\x02" * 24,)) is not None
    assert (sup.emitted, sup.skipped) == (3, 2)
    with pytest.raises(ValueError, match="Flush is not a suppressed"):
        sup.offer("Flush", {})
