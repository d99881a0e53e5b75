"""Issue 19's draws: indirect draws (SetIndirectBuffers, kDrawIsIndirect, *IndirectCount
resolved on the client), client vertex arrays and user index arrays (MGHostSpan bytes in
SEG_STAGE, never a pointer), primitive restart at a non-fixed index (the server's rewrite).

Every scene of :mod:`mgpipe.runtime.harness.scenes.draws` runs on gles and vulkan through
monolith, inproc and spawn: every first-principles probe holds, each image equals its
direct twin pixel for pixel, the Vulkan validation layer reports nothing. Each check has a
control that plants the defect and asserts the named failure.
"""

from __future__ import annotations

import struct

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.backends.vulkan.device import validation_mode
from mgpipe.runtime.errors import PipeFatal, ProtocolCorruption
from mgpipe.runtime.harness.runner import STAGE_CAPACITY, run_scene
from mgpipe.runtime.harness.scenes import RENDER_SCENES
from mgpipe.runtime.harness.scenes.draws import STRIDE, TWINS, strips, triangles
from mgpipe.runtime.harness.scenes.kit import GL, Image
from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.wire.codec import Decoder, Encoder
from mgpipe.runtime.wire.handle import NULL
from mgpipe.runtime.wire.stage import StageSegment

NAMES = list(TWINS)
BACKENDS = ("gles", "vulkan")
TRANSPORTS = ("monolith", "inproc", "spawn")


def _flag(name: str) -> int:
    return int(_t.enum("MGPDrawFlagBit")[name])


def _failures(name: str, images: list[Image]) -> list[str]:
    """Every probe that does not hold, and every image unequal to its direct twin."""
    scene = RENDER_SCENES[name]
    out = [m for p in scene.probes(scene.default_n) if (m := p.check(images))]
    for a, b in TWINS[name]:
        if images[a].rgba != images[b].rgba:
            diff = sum(x != y for x, y in zip(images[a].rgba, images[b].rgba))
            out.append(f"image {a} differs from its direct twin {b} in {diff} bytes")
    return out


def _validation_messages(res, backend: str, transport: str) -> int:
    if backend != "vulkan":
        return 0
    if transport == "spawn":
        return int(res.backend.stats()["validation_messages"])
    assert res.backend.dev.validation or validation_mode() != "on"
    return len(res.backend.dev.take_messages())


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_scene_draws_its_probes_and_equals_its_direct_twin(name, backend, transport) -> None:
    res = run_scene(name, backend, transport)
    assert not res.lost, res.client.transport.lost_reason
    assert _failures(name, res.images) == []
    assert _validation_messages(res, backend, transport) == 0


def test_negative_control_a_planted_pixel_fails_the_twin_and_the_probes() -> None:
    res = run_scene("indirect-arrays", "gles", "monolith")
    assert _failures("indirect-arrays", res.images) == []
    imgs = list(res.images)
    raw = bytearray(imgs[1].rgba)
    x, y = 5 * 64 // 6, 32  # one of strip 2's probes
    raw[(y * 64 + x) * 4 : (y * 64 + x) * 4 + 4] = bytes((0, 0, 0, 255))
    imgs[1] = Image(64, 64, bytes(raw))
    bad = _failures("indirect-arrays", imgs)
    assert any("strip 2 drawn" in m for m in bad)
    assert any("image 1 differs from its direct twin 0" in m for m in bad)


# -- the client's count resolve ----------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_control_an_unresolved_count_draws_every_command(backend, monkeypatch) -> None:
    """Plant: the client sends maxdrawcount instead of the parameter buffer's count -> the
    picture of image 3 has strip 2 drawn, and the probe names it."""
    from mgpipe.runtime.client.draws import DrawsMixin

    monkeypatch.setattr(DrawsMixin, "_resolve_count", lambda self, what, at, mx: mx)
    res = run_scene("indirect-arrays", backend, "monolith")
    bad = _failures("indirect-arrays", res.images)
    assert any("arrays image 3: strip 2 empty" in m for m in bad), bad


# -- client arrays: the max-index scan sizes the span ------------------------------------------
def test_client_arrays_ship_exactly_the_vertex_span_the_draws_fetch() -> None:
    """Two draws of 6 vertices (6..11, then the scanned indices 12..17): each attribute's
    span is 5 strides plus its own size -- position 12 bytes, colour 16 -- per draw."""
    res = run_scene("client-arrays", "gles", "monolith")
    assert res.client.vertex_bytes_shipped == 2 * ((5 * STRIDE + 12) + (5 * STRIDE + 16))


def test_control_a_short_max_index_scan_is_a_named_range_refusal(monkeypatch) -> None:
    """Plant: the scan reports one index fewer -> the last vertex never ships and the
    server refuses the fetch by name (never a picture with a vertex missing)."""
    from mgpipe.runtime.client import draws

    real = draws.DrawsMixin._ship_client_arrays

    def short(self, lo, hi, *a):
        return real(self, lo, hi - 1 if lo >= 12 else hi, *a)

    monkeypatch.setattr(draws.DrawsMixin, "_ship_client_arrays", short)
    with pytest.raises(PipeFatal) as info:
        run_scene("client-arrays", "gles", "monolith")
    assert info.value.reason == "DrawVbo.VertexRange"


# -- user indices: bytes in SEG_STAGE, never a pointer (R-2) ---------------------------------
def _user_draw(stage: StageSegment, ptr: int, seg: int | None = None) -> bytes:
    off, size, s = stage.stage(struct.pack("<6H", 0, 1, 2, 0, 2, 3))
    return Encoder(stage).encode(
        "DrawVbo", {"Mode": int(GL.TRIANGLES), "IndexSize": 2, "InstanceCount": 1,
                    "Flags": _flag("kDrawHasUserIndices"), "NumDraws": 1},
        ([{"Start": 0, "Count": 6, "IndexBias": 0}],
         [{"Ptr": ptr, "Seg": s if seg is None else seg, "Size": size, "Offset": off}]))  # fmt: skip


def test_decoder_refuses_a_host_span_pointer_and_a_span_outside_the_stage() -> None:
    stage = StageSegment(1 << 12)
    dec = Decoder(stage)
    ok = dec.decode(_user_draw(stage, 0))  # control: the staged shape decodes
    assert ok.tails[1][0].Size == 12 and bytes(stage.view(
        (ok.tails[1][0].Offset, 12, ok.tails[1][0].Seg))) == struct.pack("<6H", 0, 1, 2, 0, 2, 3)
    with pytest.raises(ProtocolCorruption) as info:
        dec.decode(_user_draw(stage, 0x7F0000001000))
    assert info.value.reason == "DrawVbo.MGHostSpan.Ptr"
    with pytest.raises(ProtocolCorruption) as info:
        dec.decode(_user_draw(stage, 0, seg=int(_t.constant("kMGHostSpanSegNone"))))
    assert info.value.reason == "DrawVbo.MGHostSpan"


@pytest.mark.parametrize("transport", ("inproc", "spawn"))
def test_a_split_transport_refuses_a_pointer_on_the_wire(transport) -> None:
    """Under a split transport a record carrying a pointer is Fatal{ProtocolCorruption} at
    the server's decoder, before any backend (the recorder here); control: the same record
    with Ptr null is applied."""
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.harness.scenes.kit import setup

    for ptr, want in ((0, None), (0x7F0000001000, "DrawVbo.MGHostSpan.Ptr")):
        if transport == "spawn":
            from mgpipe.runtime.transport.spawn import SpawnTransport

            t = SpawnTransport("recorder", stage_capacity=STAGE_CAPACITY)
            c = Client(None, t.stage, transport=t, width=64, height=64)
        else:
            from mgpipe.runtime.backends.registry import make_backend
            from mgpipe.runtime.server.applier import Applier

            stage = StageSegment(STAGE_CAPACITY)
            be = make_backend("recorder")
            c = Client(Applier(be, stage).apply, stage, transport="inproc", width=64, height=64)
        setup(c, strips())
        c.draw_elements(GL.TRIANGLES, 6, 2, indices=struct.pack("<6H", 0, 1, 2, 0, 2, 3))
        c.em.transport.submit(_user_draw(c.em.stage, ptr))
        try:
            c.em.transport.wait_applied()
            got = None
        except PipeFatal as exc:
            got = exc.reason
        if transport == "spawn":
            t.close()
            if t.lost:
                got = str(t.lost_reason)
        else:
            try:
                c.close()
            except PipeFatal as exc:
                got = got or exc.reason
        if want is None:
            assert got is None
        else:
            assert got is not None and want in got


def test_user_indices_ship_exactly_the_indices_drawn() -> None:
    res = run_scene("user-indices", "gles", "monolith")
    assert res.client.index_bytes_shipped == 6 * 1 + 6 * 2 + 6 * 4


# -- restart at a non-fixed index ----------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_control_a_rewrite_that_maps_the_restart_index_to_a_vertex_bridges_the_gap(
        backend, monkeypatch) -> None:  # fmt: skip
    """Plant: the server's rewrite maps index 9 to vertex 0 instead of the fixed restart
    index -> one strip runs into the next across strip 1, and the probes say so."""
    mod = __import__(f"mgpipe.runtime.backends.{backend}.indirect", fromlist=["x"])
    monkeypatch.setattr(mod, "FIXED_RESTART", 0)
    res = run_scene("restart-index", backend, "monolith")
    bad = _failures("restart-index", res.images)
    assert any("restart 9, index buffer: strip 1 empty" in m for m in bad), bad
    assert not any("fixed" in m for m in bad)  # the twin (no rewrite) is unchanged


# -- named refusals at the record --------------------------------------------------------------
def _client(backend: str):
    from mgpipe.runtime.backends.registry import make_backend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.harness.scenes.kit import setup
    from mgpipe.runtime.server.applier import Applier

    stage = StageSegment(STAGE_CAPACITY)
    be = make_backend(backend)
    c = Client(Applier(be, stage).apply, stage, width=64, height=64)
    setup(c, triangles())
    return c, be


@pytest.mark.parametrize("row, reason", (
    ({"DrawCount": 1}, None),  # control: one command inside the buffer draws
    ({"DrawCount": 2}, "DrawVbo.MGPDrawIndirect.DrawCount"),
    ({"DrawCount": 1, "Stride": 8}, "DrawVbo.MGPDrawIndirect.Offset"),
    ({"DrawCount": 1, "ParameterBuffer": True}, "DrawVbo.MGPDrawIndirect.ParameterBuffer"),
))  # fmt: skip
@pytest.mark.parametrize("backend", BACKENDS)
def test_server_refuses_a_bad_indirect_tail_by_name(backend, row, reason) -> None:
    c, be = _client(backend)
    try:
        buf = c.create_buffer(struct.pack("<4I", 6, 1, 0, 0))
        c.bind_indirect_buffer(buf)
        c.draw_arrays_indirect(GL.TRIANGLES, 0)  # SetIndirectBuffers and the draw's state
        tail = dict({"Buffer": buf.handle, "ParameterBuffer": NULL}, **row)
        if row.get("ParameterBuffer"):
            tail["ParameterBuffer"] = buf.handle
        got = None
        try:
            c.em.emit("DrawVbo", {"Mode": int(GL.TRIANGLES), "InstanceCount": 1,
                                  "Flags": _flag("kDrawIsIndirect")}, ([tail],))  # fmt: skip
            c.present()
        except PipeFatal as exc:
            got = exc.reason
        assert got == reason
    finally:
        be.close()


def test_client_refuses_indirect_misuse_by_name() -> None:
    from mgpipe.runtime.client.api import ClientError

    c, be = _client("gles")
    try:
        with pytest.raises(ClientError, match="no buffer bound to GL_DRAW_INDIRECT_BUFFER"):
            c.draw_arrays_indirect(GL.TRIANGLES, 0)
        c.bind_indirect_buffer(c.create_buffer(bytes(16)))
        with pytest.raises(ClientError, match="pass the indirect buffer's 16 bytes"):
            c.multi_draw_arrays_indirect(GL.TRIANGLES, 0, 2)
        with pytest.raises(ClientError, match="no buffer bound to GL_PARAMETER_BUFFER"):
            c.multi_draw_arrays_indirect_count(GL.TRIANGLES, 0, 0, 1)
        c.vertex_attrib_pointer(2, bytes(64), 4)
        with pytest.raises(ClientError, match="reads no client vertex arrays"):
            c.draw_arrays_indirect(GL.TRIANGLES, 0)
    finally:
        be.close()


# -- multi-draw: one record per call, split at kMGPipeMaxDrawRanges ----------------------------
def test_a_multi_draw_is_one_record_and_splits_at_the_range_bound() -> None:
    res = run_scene("multi-draw", "gles", "monolith")
    # images 0 and 2 take two direct draws each, images 1, 3, 4 and 5 one multi-draw each
    assert res.client.em.by_call["DrawVbo"] == 2 + 1 + 2 + 1 + 1 + 1
    c, be = _client("gles")
    try:
        top = int(_t.constant("kMGPipeMaxDrawRanges"))
        before = c.em.by_call["DrawVbo"]
        c.multi_draw_arrays(GL.TRIANGLES, [0] * (top + 1), [0] * top + [6])
        c.present()
        assert c.em.by_call["DrawVbo"] - before == 2  # control: top ranges fit one record
        c.multi_draw_arrays(GL.TRIANGLES, [0] * top, [6] * top)
        assert c.em.by_call["DrawVbo"] - before == 3
        c.present()
    finally:
        be.close()


# -- the server's index mirror (kMGHostSpanSegFromServerIndexMirror) ---------------------------
def _mirror_draw(c, ebo, offset: int, size: int) -> None:
    mirror = int(_t.constant("kMGHostSpanSegFromServerIndexMirror"))
    c.tr.validate("DrawVbo")
    c.em.emit("DrawVbo", {"Mode": int(GL.TRIANGLES), "IndexSize": 2, "InstanceCount": 1,
                          "Flags": _flag("kDrawHasUserIndices"), "IndexResource": ebo.handle,
                          "NumDraws": 1},
              ([{"Start": 0, "Count": size // 2, "IndexBias": 0}],
               [{"Ptr": 0, "Seg": mirror, "Offset": offset, "Size": size}]))  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_span_of_the_server_index_mirror_draws_as_its_index_buffer(backend) -> None:
    """No index byte travels: the span names bytes 12..24 of the index buffer the server
    already holds (indices 18..23 -> strip 2's six vertices, read from the mirror);
    equal to the direct draw from that buffer at that offset."""
    from mgpipe.runtime.harness.scenes.draws import _frame, _probes
    from mgpipe.runtime.harness.scenes.kit import capture

    c, be = _client(backend)
    try:
        ebo = c.create_buffer(struct.pack("<12H", *range(6), *range(12, 18)))
        c.bind_index_buffer(ebo)
        _frame(c)
        c.draw_elements(GL.TRIANGLES, 6, 2, 12)
        direct = capture(c, 64, 64)
        _frame(c)
        staged = c.staged_bytes
        _mirror_draw(c, ebo, 12, 12)
        assert c.staged_bytes == staged  # nothing staged for the draw
        mirrored = capture(c, 64, 64)
        c.present()
    finally:
        be.close()
    assert [m for p in _probes(0, (False, False, True), "mirror") if (m := p.check([mirrored]))] == []
    assert mirrored.rgba == direct.rgba


@pytest.mark.parametrize("backend", BACKENDS)
def test_control_a_mirror_span_past_its_buffer_is_refused_by_name(backend) -> None:
    c, be = _client(backend)
    try:
        ebo = c.create_buffer(struct.pack("<12H", *range(12)))
        c.bind_index_buffer(ebo)
        c.draw_elements(GL.TRIANGLES, 6, 2)
        with pytest.raises(PipeFatal) as info:
            _mirror_draw(c, ebo, 16, 12)  # bytes 16..28 of a 24-byte buffer
            c.present()
        assert info.value.reason == "DrawVbo.MGHostSpan.Size"
    finally:
        be.close()


def test_a_deleted_indirect_buffer_is_unbound() -> None:
    """glDeleteBuffers unbinds it: the next indirect draw is the client's named refusal, not
    a dead handle on the wire; control: a new binding draws."""
    from mgpipe.runtime.client.api import ClientError

    c, be = _client("gles")
    try:
        buf = c.create_buffer(struct.pack("<4I", 6, 1, 0, 0))
        c.bind_indirect_buffer(buf)
        c.draw_arrays_indirect(GL.TRIANGLES, 0)
        c.delete_buffer(buf)
        with pytest.raises(ClientError, match="no buffer bound to GL_DRAW_INDIRECT_BUFFER"):
            c.draw_arrays_indirect(GL.TRIANGLES, 0)
        c.bind_indirect_buffer(c.create_buffer(struct.pack("<4I", 6, 1, 0, 0)))
        c.draw_arrays_indirect(GL.TRIANGLES, 0)
        c.present()
    finally:
        be.close()


def test_the_compiled_indirect_record_is_the_encoders_record() -> None:
    """The client's packed DrawVbo + MGPDrawIndirect (its one-C-call path) and the encoder's
    record of the same values are the same bytes; control: a packer of the range tail is not."""
    from mgpipe.runtime.wire.compiled import packer
    from mgpipe.runtime.wire.handle import Handle

    names = ("Mode", "IndexSize", "Flags", "InstanceCount", "RestartIndex",
             "IndexResource.Slot", "IndexResource.Gen", "MinIndex", "MaxIndex", "NumDraws")
    tail = ("Buffer.Slot", "Buffer.Gen", "ParameterBuffer.Slot", "ParameterBuffer.Gen",
            "Offset", "ParameterOffset", "Stride", "DrawCount")  # fmt: skip
    values = (4, 2, _flag("kDrawIsIndirect"), 1, 0xFFFF, 3, 1, 0xFFFFFFFF, 0xFFFFFFFF, 0,
              7, 2, 0, 0, 40, 0, 20, 3)  # fmt: skip
    pk = packer("DrawVbo", names, tail, 1, "MGPDrawIndirect")
    buf = bytearray(pk.size)
    pk.pack_into(buf, 0, *values)
    payload = dict(zip(("Mode", "IndexSize", "Flags", "InstanceCount", "RestartIndex"), values))
    payload |= {"IndexResource": Handle(3, 1), "MinIndex": 0xFFFFFFFF, "MaxIndex": 0xFFFFFFFF}
    row = {"Buffer": Handle(7, 2), "ParameterBuffer": NULL, "Offset": 40, "ParameterOffset": 0,
           "Stride": 20, "DrawCount": 3}  # fmt: skip
    want = Encoder(StageSegment(1 << 12)).encode("DrawVbo", payload, ([row],))
    assert bytes(buf) == want
    ranges = packer("DrawVbo", names, ("Start", "Count", "IndexBias"))
    assert ranges.size != pk.size  # the range tail (12 bytes) is not the indirect one (40)


@pytest.mark.parametrize("backend", BACKENDS)
def test_instanced_client_arrays_ship_one_element_per_instance_step(backend) -> None:
    """The pixel suite's instanced scene (4 instances, per-instance colour and offset at
    divisor 1) with its per-instance attributes in client memory: the same picture as from
    the buffer, its probes hold, and the per-instance spans are 4 elements (3 strides + the
    attribute's size) while the per-vertex quad comes from its buffer."""
    from mgpipe.runtime.harness.scenes import pixel_draw as pd
    from mgpipe.runtime.harness.scenes.kit import capture
    from mgpipe.runtime.harness.shaders.programs import load
    from mgpipe.runtime.backends.registry import make_backend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.server.applier import Applier

    want = run_scene("instanced", backend, "monolith").images[0]
    stage = StageSegment(STAGE_CAPACITY)
    be = make_backend(backend)
    c = Client(Applier(be, stage).apply, stage, width=64, height=64)
    try:
        corners = [(-1.0, -1.0), (-0.5, -1.0), (-0.5, -0.5), (-1.0, -0.5)]
        quad_vb = c.create_buffer(struct.pack("<12f", *(v for x, y in corners for v in (x, y, 0.0))))
        per = []
        for (x, y), col in pd.QUADRANTS:
            per += [x / 32.0 + 0.25, y / 32.0 + 0.25, *col]
        inst = struct.pack(f"<{len(per)}f", *per)  # client memory
        src = load("instanced")
        c.use_program(c.create_program(src.spirv, src.reflection))
        c.vertex_attrib_pointer(0, quad_vb, 3, stride=12)
        c.vertex_attrib_pointer(1, inst, 4, stride=24, offset=8, divisor=1)
        c.vertex_attrib_pointer(2, inst, 2, stride=24, offset=0, divisor=1)
        c.bind_index_buffer(c.create_buffer(struct.pack("<6H", 0, 1, 2, 0, 2, 3)))
        c.viewport(0, 0, 64, 64)
        c.clear_color(*pd.BLACK)
        c.clear()
        c.draw_elements(GL.TRIANGLES, 6, 2, instances=len(pd.QUADRANTS))
        got = capture(c, 64, 64)
        c.present()
    finally:
        be.close()
    assert [m for p in pd.probes_instanced(1) if (m := p.check([got]))] == []
    assert got.rgba == want.rgba
    assert c.vertex_bytes_shipped == (3 * 24 + 16) + (3 * 24 + 8)
    if backend == "vulkan":  # closed above: teardown included
        assert be.dev.take_messages() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_indirect_command_with_a_base_instance_equals_its_direct_twin(backend) -> None:
    """The instanced quad, 2 instances from base instance 1 (quadrants 1 and 2 lit, 0 and 3
    not): glDrawElementsIndirect of {6, 2, 0, 0, 1} equals the direct draw. GLES reserves
    the command's baseInstance, so its backend draws that command with the values it holds
    (indirect_flattened 1); lavapipe draws it indirectly (drawIndirectFirstInstance)."""
    from mgpipe.runtime.harness.scenes import pixel_draw as pd
    from mgpipe.runtime.harness.scenes.kit import Probe, capture, px
    from mgpipe.runtime.harness.shaders.programs import load
    from mgpipe.runtime.backends.registry import make_backend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.server.applier import Applier

    stage = StageSegment(STAGE_CAPACITY)
    be = make_backend(backend)
    c = Client(Applier(be, stage).apply, stage, width=64, height=64)
    try:
        corners = [(-1.0, -1.0), (-0.5, -1.0), (-0.5, -0.5), (-1.0, -0.5)]
        quad_vb = c.create_buffer(struct.pack("<12f", *(v for x, y in corners for v in (x, y, 0.0))))
        per = []
        for (x, y), col in pd.QUADRANTS:
            per += [x / 32.0 + 0.25, y / 32.0 + 0.25, *col]
        inst = c.create_buffer(struct.pack(f"<{len(per)}f", *per))
        src = load("instanced")
        c.use_program(c.create_program(src.spirv, src.reflection))
        c.vertex_attrib_pointer(0, quad_vb, 3, stride=12)
        c.vertex_attrib_pointer(1, inst, 4, stride=24, offset=8, divisor=1)
        c.vertex_attrib_pointer(2, inst, 2, stride=24, offset=0, divisor=1)
        c.bind_index_buffer(c.create_buffer(struct.pack("<6H", 0, 1, 2, 0, 2, 3)))
        c.bind_indirect_buffer(c.create_buffer(struct.pack("<5I", 6, 2, 0, 0, 1)))
        c.viewport(0, 0, 64, 64)
        imgs = []
        for indirect in (False, True):
            c.clear_color(*pd.BLACK)
            c.clear()
            if indirect:
                c.draw_elements_indirect(GL.TRIANGLES, 2, 0)
            else:
                c.draw_elements(GL.TRIANGLES, 6, 2, instances=2, base_instance=1)
            imgs.append(capture(c, 64, 64))
        c.present()
    finally:
        be.close()
    probes = [Probe(i, x + 16, y + 16, px(col if q in (1, 2) else pd.BLACK), 0, f"quadrant {q}")
              for i in (0, 1) for q, ((x, y), col) in enumerate(pd.QUADRANTS)]  # fmt: skip
    assert [m for p in probes if (m := p.check(imgs))] == []
    assert imgs[1].rgba == imgs[0].rgba
    assert be.indirect_flattened == (1 if backend == "gles" else 0)
    if backend == "vulkan":
        assert be.dev.take_messages() == []
