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


# -- wave 2: MobileGL's sequences and issue 17's client side --------------------------------
from mgpipe.runtime.client import api as _api  # noqa: E402
from mgpipe.runtime.client.api import ClientError  # noqa: E402
from mgpipe.runtime.client.sampler_cache import CAPACITY, SamplerCache  # noqa: E402


def _h(h: Handle) -> dict[str, int]:
    return {"Slot": h.slot, "Gen": h.gen}


def _new(c: Client, before: int) -> list[tuple[str, dict[str, Any], list[Any]]]:
    c.transport.wait_applied()
    return c.log.seen[before:]  # type: ignore[attr-defined]


def test_a_program_leaves_at_its_first_validate_in_mobilegls_order(client: Client) -> None:
    before = client.records
    vb = client.create_buffer(bytes(36))
    prog = client.create_program({0: b"vs", 4: b"fs"}, uniforms={"u_v": (0, "vec4"),
                                                                  "u_s": (None, "sampler2D")})
    client.use_program(prog)
    client.vertex_attrib_pointer(0, vb, 3, stride=12)
    assert "CreateShaderState" not in [s[0] for s in _new(client, before)]  # nothing at link
    client.uniform(prog, "u_v", 1.0, 2.0, 3.0, 4.0)
    client.uniform(prog, "u_s", 3)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    names = [s[0] for s in _new(client, before)]
    at = names.index("CreateShaderState")
    assert names[at: at + 5] == ["CreateShaderState", "SetProgramBindings", "BindShaderState",
                                 "SetDrawProgram", "SetDispatchProgram"]
    assert names.index("SetFramebufferState") < at < names.index("SetGlobalConstants") < names.index(
        "BindRenderState") < names.index("SetPixelPackState") < names.index("SetPatchState") < names.index(
        "SetVertexAttribDefaults") < names.index("SetContextValues") < names.index("CreateVertexElements")
    seen = _new(client, before)
    binds = next(s for s in seen if s[0] == "SetProgramBindings")
    assert binds[1]["SamplerUnitCount"] == 1 and binds[2][1] == [{"Location": 1, "Unit": 3}]
    ve = next(s for s in seen if s[0] == "CreateVertexElements")[1]
    assert ve["AttributeCount"] == ve["BindingPointCount"] == _api._t.constant("kMGPipeMaxVertexAttribs")


def test_global_constants_are_keyed_by_program_and_version(client: Client) -> None:
    _setup(client)
    prog = client.create_program({0: b"vs", 4: b"fs"}, uniforms={"u_m": (0, "mat4"), "u_f": (64, "float")})
    client.use_program(prog)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    before = client.records
    client.uniform(prog, "u_f", 0.0)  # the block's bytes did not move: no version, no record
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    assert [s[0] for s in _new(client, before)] == ["DrawVbo"]
    client.uniform_matrix(prog, "u_m", list(range(16)))
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    sent = [s for s in _new(client, before) if s[0] == "SetGlobalConstants"]
    assert [s[0] for s in _new(client, before)] == ["DrawVbo", "SetGlobalConstants", "DrawVbo"]
    assert sent[0][1]["Version"] == prog.version and sent[0][1]["ShaderCso"] == _h(prog.handle)


def test_a_texture_rebind_touches_the_sampler_group_only(client: Client) -> None:
    _setup(client)
    texs = [client.create_texture_2d(4, 4) for _ in range(2)]
    for unit in range(8):
        client.bind_texture(unit, texs[unit % 2])
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    before = client.records
    client.bind_texture(7, texs[0])  # the active unit stays 7: only unit 7's view moves
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    seen = _new(client, before)
    assert [s[0] for s in seen] == ["SetSamplerViews", "DrawVbo"]
    assert (seen[0][1]["Start"], seen[0][1]["Count"]) == (7, 1)  # the one unit that moved


def test_texture_creation_is_mobilegls_respecify_sequence(client: Client) -> None:
    before = client.records
    tex = client.create_texture("cube", 8, 8, levels=2)
    seen = _new(client, before)
    assert [s[0] for s in seen] == ["ResourceCreate", "ResourceRespecify", "SetTextureParams",
                                    "ResourceRespecify", "ResourceRespecify", "ResourceRespecify",
                                    "SetTextureParams"]  # fmt: skip
    assert seen[1][1]["Width"] == 0 and seen[3][1]["ArrayLayers"] == 6
    assert [s[1]["RespecifiedLevel"] for s in seen[4:6]] == [0, 1]
    assert seen[2][1]["BuiltinSampler"] == _h(client.default_sampler)
    arr = client.create_texture("2d_array", 4, 4, 3)
    assert (arr.layers, arr.depth) == (3, 1)
    vol = client.create_texture("3d", 4, 4, 4, levels=3)
    assert (vol.depth, vol.levels) == (4, 3)
    del tex


def test_tex_parameter_shares_one_builtin_sampler_per_parameter_set(client: Client) -> None:
    a, b = client.create_texture_2d(4, 4), client.create_texture_2d(4, 4)
    before = client.records
    client.tex_parameter(a, _api.GL_TEXTURE_MIN_FILTER, _api.GL_NEAREST)
    client.tex_parameter(b, "min_filter", _api.GL_NEAREST)  # same set: the cached CSO
    assert [s[0] for s in _new(client, before)] == ["CreateSamplerState", "SetTextureParams",
                                                    "SetTextureParams"]  # fmt: skip
    assert a.sampler == b.sampler != client.default_sampler
    assert client.sampler_cache.refs(a.sampler) == (0, 2)


def test_the_sampler_cache_is_bounded_refcounted_and_keeps_builtin_entries() -> None:
    minted, killed = [], []

    def mint(p: bytes) -> Handle:
        minted.append(p)
        return Handle(len(minted), 1)

    cache = SamplerCache(mint, killed.append, capacity=4)
    builtin = cache.acquire(b"b", builtin=True)
    held = [cache.acquire(bytes([i])) for i in range(3)]
    assert cache.acquire(b"\x00") == held[0] and cache.stats.hits == 1
    over = cache.acquire(b"x")  # every entry referenced: minted over capacity
    assert cache.stats.over_capacity_mints == 1 and len(cache) == 5
    cache.release(held[1])
    cache.acquire(b"y")  # evicts the one unreferenced entry, never the built-in one
    assert killed == [held[1]] and builtin in cache and over in cache
    assert CAPACITY == 256


def test_client_misuse_is_a_named_error_and_no_record(client: Client) -> None:
    _setup(client)
    tex = client.create_texture_2d(4, 4, levels=2)
    prog = client.create_program({0: b"vs"}, uniforms={"u_v": (0, "vec2")})
    before = client.records
    cases = [
        (lambda: client.create_texture("1d", 4, 4), "unknown target"),
        (lambda: client.create_texture_2d(4, 4, levels=4), "levels"),
        (lambda: client.tex_parameter(tex, 0x1234, 1), "unknown pname"),
        (lambda: client.tex_parameter(tex, "min_filter", 7), "no GL value"),
        (lambda: client.tex_sub_image(tex, 2, 0, 0, 1, 1, b"\0" * 4), "level 2"),
        (lambda: client.tex_sub_image(tex, 1, 1, 1, 2, 2, b"\0" * 16), "outside level 1"),
        (lambda: client.uniform(prog, "u_nope", 1.0), "no uniform"),
        (lambda: client.uniform(prog, "u_v", 1.0), "2 values"),
        (lambda: client.clear_buffer("accum", 0, (0,)), "buffer"),
        (lambda: client.clear_buffer(_api.GL_COLOR, 9, (0, 0, 0, 0)), "draw buffer"),
        (lambda: client.blit_framebuffer(0, 0, 1, 1, 0, 0, 1, 1, 0), "mask"),
        (lambda: client.bind_framebuffer(None, "sideways"), "target"),
        (lambda: client.bind_buffer_base("atomic", 0, None), "target"),
        (lambda: client.bind_texture(100000, tex), "unit"),
        (lambda: client.create_renderbuffer(0, 4, 0x8058), "empty"),
    ]
    for call, match in cases:
        with pytest.raises(ClientError, match=match):
            call()
    assert client.records == before


def test_gl_es_initial_state_values(client: Client) -> None:
    p = client.state.p
    assert float(p["ClearDepth"]) == 1.0
    assert int(p["DepthFunc"]) == _api._t.enum("DepthTestFunc")["Less"]
    assert float(p["SampleCoverageValue"]) == 1.0 and bool(p["DitherEnabled"])


def test_draws_carry_base_vertex_and_base_instance(client: Client) -> None:
    _setup(client)
    client.bind_index_buffer(client.create_buffer(bytes(12)))
    before = client.records
    client.draw_arrays(GL_TRIANGLES, 0, 3, instances=2, base_instance=5)
    client.draw_elements(GL_TRIANGLES, 3, 2, instances=3, base_vertex=7, base_instance=1)
    draws = [s for s in _new(client, before) if s[0] == "DrawVbo"]
    assert [d[1]["StartInstance"] for d in draws] == [5, 1]
    assert draws[1][2][0][0]["IndexBias"] == 7


def test_clear_buffer_blit_and_mipmaps_leave_as_their_records(client: Client) -> None:
    texs = [client.create_texture_2d(8, 8, levels=3) for _ in range(2)]
    fbs = [client.create_framebuffer() for _ in range(2)]
    for fb, t in zip(fbs, texs):
        client.framebuffer_texture(fb, 0, t)
    client.bind_framebuffer(fbs[0])
    client.clear_buffer(_api.GL_COLOR, 0, (1, 2, 3, 4), value_class="uint")
    client.bind_framebuffer(fbs[1], "draw")
    before = client.records
    client.blit_framebuffer(0, 0, 8, 8, 0, 0, 4, 4)
    client.generate_mipmap(texs[1])
    seen = _new(client, before)
    assert [s[0] for s in seen] == ["ResourceRespecify", "SetFramebufferState",
                                    "SetFramebufferState", "Blit", "GenerateMipmap"]  # fmt: skip
    targets = _api._t.enum("MGPipeFramebufferTarget")
    assert [s[1]["Target"] for s in seen[1:3]] == [targets["Read"], targets["Draw"]]
    assert seen[4][1]["LevelCount"] == 3
    clear = next(s for s in client.log.seen if s[0] == "Clear")[1]  # type: ignore[attr-defined]
    assert clear["Kind"] == _api._t.constant("kMGPipeClearKindColor") and clear["ColorValue"] == [1, 2, 3, 4]


def test_a_layered_attachment_names_its_layer_or_face(client: Client) -> None:
    _setup(client)
    cube = client.create_texture("cube", 4, 4)
    arr = client.create_texture("2d_array", 4, 4, 3)
    fb = client.create_framebuffer()
    with pytest.raises(ClientError, match="attaches one layer"):
        client.framebuffer_texture(fb, 0, cube)
    with pytest.raises(ClientError, match="layer 3"):
        client.framebuffer_texture(fb, 1, arr, layer=3)
    client.framebuffer_texture(fb, 0, cube, face=3)
    client.framebuffer_texture(fb, 1, arr, layer=2)
    client.bind_framebuffer(fb)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    state = [s for s in _new(client, 0) if s[0] == "SetFramebufferState"][-1][1]
    assert [state["Color"][i]["Layer"] for i in range(2)] == [3, 2]


def test_a_current_attribute_value_is_a_vertex_attrib_default(client: Client) -> None:
    _setup(client)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    before = client.records
    client.vertex_attrib(3, 0.5, 0.25)
    client.draw_arrays(GL_TRIANGLES, 0, 3)
    seen = _new(client, before)
    assert [s[0] for s in seen] == ["SetVertexAttribDefaults", "DrawVbo"]
    row = seen[0][2][0][3]
    import struct as _s
    assert _s.unpack("<4f", _s.pack("<4I", *row["FloatView"])) == (0.5, 0.25, 0.0, 1.0)
    assert client.stats()["sampler_minted"] >= 1  # the context's default sampler


def test_a_multisampled_renderbuffer_resolves_by_blit(client: Client) -> None:
    ms = client.create_renderbuffer(8, 8, 0x8058, samples=4)
    tex = client.create_texture_2d(8, 8)
    src, dst = client.create_framebuffer(), client.create_framebuffer()
    client.framebuffer_texture(src, 0, ms)
    client.framebuffer_texture(dst, 0, tex)
    client.bind_framebuffer(src, "read")
    client.bind_framebuffer(dst, "draw")
    before = client.records
    client.blit_framebuffer(0, 0, 8, 8, 0, 0, 8, 8)
    seen = _new(client, before)
    assert [s[0] for s in seen][-3:] == ["SetFramebufferState", "SetFramebufferState", "Blit"]
    read = [s[1] for s in seen if s[0] == "SetFramebufferState"][0]
    assert read["Samples"] == 4 and read["Fbo"] == _h(src.handle)
    desc = [s[1] for s in client.log.seen if s[0] == "ResourceRespecify"]  # type: ignore[attr-defined]
    assert any(d["Samples"] == 4 for d in desc)
