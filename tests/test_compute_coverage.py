"""Issue 19's scenes (runtime/harness/scenes/compute.py): compute into a storage buffer
(direct and indirect), image load / store, atomic counters, transform feedback (packed,
paused / resumed, with a hole) and a tessellated patch.

GLES (llvmpipe: GLES 3.2) must draw every one through monolith, inproc and spawn, equal
to its first-principles probes (words read back one by one through the ``dump`` draw) and
byte-identical across the three transports. Vulkan must draw it or stop at a named
refusal. Every check has a planted defect beside it that makes it fail by name. The
client half (records, WritableMask, the GPU-written pending set, misuse) is checked on a
decoding sink with no driver.
"""

from __future__ import annotations

import contextlib
import re
import struct
from functools import lru_cache
from typing import Any

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.client import compute as client_compute
from mgpipe.runtime.client.api import Client, ClientError
from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import COMPUTE_SCENES, SCENES
from mgpipe.runtime.harness.scenes import compute as scenes
from mgpipe.runtime.harness.scenes.kit import Image
from mgpipe.runtime.harness.scenes.render import ClientGap
from mgpipe.runtime.harness.shaders.programs import load
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.codec import Decoder
from mgpipe.runtime.wire.records import to_plain
from mgpipe.runtime.wire.stage import StageSegment

NAMES = list(COMPUTE_SCENES)
TRANSPORTS = ("monolith", "inproc", "spawn")
_NAMED = re.compile(r'^(Fatal\{\w+, "[A-Z]\w*(\.[\w\[\] \'=(),-]+)*"\}|Client\.\w+)')


@lru_cache(maxsize=None)
def outcome(name: str, backend: str, transport: str = "monolith"):
    try:
        res = run_scene(name, backend, transport)
    except (PipeFatal, ClientGap) as exc:
        return "refused", str(exc)
    if res.lost:
        return "refused", str(res.client.transport.lost_reason)
    return "ok", res


def _failures(name: str, images: list[Image]) -> list[str]:
    scene = COMPUTE_SCENES[name]
    return [m for p in scene.probes(scene.default_n) if (m := p.check(images))]


def test_every_compute_family_has_a_scene_run_by_name() -> None:
    assert set(NAMES) == {"compute-fill", "compute-indirect", "compute-indices",
                          "compute-client-indices", "compute-restart-indices", "image-load-store",
                          "atomic-counter", "xfb-capture", "xfb-skip", "xfb-separate",
                          "tess-patch"}  # fmt: skip
    for name in NAMES:
        assert name in SCENES and SCENES[name] is COMPUTE_SCENES[name]
    assert not set(NAMES) & set(list(SCENES))  # by name, not in `all`


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", NAMES)
def test_gles_draws_every_scene_to_its_probes(name: str, transport: str) -> None:
    kind, res = outcome(name, "gles", transport)
    assert kind == "ok", f"{name} over {transport}: {res}"
    bad = _failures(name, res.images)
    assert not bad, f"{name} over {transport}: {len(bad)} probes fail: {bad[:5]}"


@pytest.mark.parametrize("name", NAMES)
def test_gles_pictures_are_the_same_bytes_over_every_transport(name: str) -> None:
    pics = {t: [im.rgba for im in outcome(name, "gles", t)[1].images] for t in TRANSPORTS}
    assert pics["inproc"] == pics["monolith"] and pics["spawn"] == pics["monolith"]


@pytest.mark.parametrize("name", NAMES)
def test_vulkan_draws_each_scene_or_refuses_it_by_name(name: str) -> None:
    kind, res = outcome(name, "vulkan")
    if kind == "refused":
        assert _NAMED.match(res), f"{name}: an unnamed refusal: {res}"
        return
    bad = _failures(name, res.images)
    assert not bad, f"{name} on vulkan: {len(bad)} probes fail: {bad[:5]}"


def test_gles_capture_counts_are_the_drivers() -> None:
    """The driver's GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN equals the client's count."""
    kind, res = outcome("xfb-capture", "gles")
    assert kind == "ok", res
    spans = res.backend.compute_stats()["xfb_spans"]
    assert spans == [{"client": 2, "driver": 2, "vertices": 6}]


# -- negative controls: each planted defect fails by name ------------------------------------
def test_control_blank_images_fail_every_scene() -> None:
    for name in NAMES:
        scene = COMPUTE_SCENES[name]
        probes = scene.probes(1)
        blank = [Image(scene.width, scene.height, bytes(scene.width * scene.height * 4))] * 3
        assert _failures(name, blank), f"{name}: a blank picture passes every probe"
        assert len({p.rgba for p in probes}) > 1


def test_control_a_short_grid_leaves_words_unwritten(monkeypatch: pytest.MonkeyPatch) -> None:
    real = client_compute.ComputeCalls.dispatch_compute
    monkeypatch.setattr(client_compute.ComputeCalls, "dispatch_compute",
                        lambda self, x, y=1, z=1: real(self, x - 1, y, z))  # fmt: skip
    res = run_scene("compute-fill", "gles", "monolith")
    bad = _failures("compute-fill", res.images)
    assert bad and all(re.search(r"word (5[6-9]|6[0-3]) ", m) for m in bad), bad
    assert any("readback word" in m for m in bad), "the direct readback missed the short grid"


def test_control_an_indirect_grid_read_at_the_wrong_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The launch reads the grid at offset 16 (1, 1, 100 ... cut to the buffer): one word
    group fewer or more than the probes say."""
    real = client_compute.ComputeCalls.dispatch_compute_indirect
    monkeypatch.setattr(client_compute.ComputeCalls, "dispatch_compute_indirect",
                        lambda self, offset=0: real(self, offset + 4))  # fmt: skip
    monkeypatch.setattr(scenes, "INDIRECT_WORDS", (100, 100, 100, 3, 1, 1, 1))
    res = run_scene("compute-indirect", "gles", "monolith")
    bad = _failures("compute-indirect", res.images)
    assert bad and all(re.search(r"compute-indirect (readback )?word (8|9|1\d|2[0-3]) ", m)
                       for m in bad), bad  # fmt: skip
    assert any("readback word" in m for m in bad), "the direct readback missed the short grid"


def test_control_a_stale_index_mirror_is_what_the_refresh_prevents(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """With the GPU-written buffer's mirror not re-read, the index check reads the 0xEEEE the
    client uploaded and refuses a draw that is correct."""
    from mgpipe.runtime.backends.gles import vertex

    monkeypatch.setattr(vertex, "refresh_mirror", lambda gl, buf: setattr(buf, "gpu_dirty", False))
    with pytest.raises(PipeFatal, match=r'DrawVbo\.VertexRange.*element 61166'):
        run_scene("compute-indices", "gles", "monolith")


def test_control_a_scatter_that_packs_overwrites_the_holes(monkeypatch: pytest.MonkeyPatch) -> None:
    from mgpipe.runtime.backends.gles import compute as gles_compute
    from mgpipe.runtime.backends.gles.gl import GL

    def packed_copy(self: Any, span: dict, vertices: int) -> None:  # the planted defect
        gl = self.gl
        gl.glBindBuffer(GL.GL_COPY_READ_BUFFER, span["scratch"])
        gl.glBindBuffer(GL.GL_COPY_WRITE_BUFFER, span["buf"].name)
        gl.glCopyBufferSubData(GL.GL_COPY_READ_BUFFER, GL.GL_COPY_WRITE_BUFFER, 0, span["off"],
                               vertices * span["packed"])  # fmt: skip

    monkeypatch.setattr(gles_compute.ComputeEntries, "_scatter", packed_copy)
    res = run_scene("xfb-skip", "gles", "monolith")
    bad = _failures("xfb-skip", res.images)
    assert any("captured with a hole word 4 = 0xdeadbeef" in m for m in bad), bad


def test_control_a_miscounted_capture_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    real = client_compute.ComputeCalls._xfb_count
    monkeypatch.setattr(client_compute.ComputeCalls, "_xfb_count",
                        lambda self, mode, count, inst: real(self, mode, count - 3, inst))  # fmt: skip
    with pytest.raises(PipeFatal, match=r'Fatal\{DriverRefused, "EndStreamOutput.PrimitivesWritten"\}'):
        run_scene("xfb-capture", "gles", "monolith")


def test_control_more_fragments_move_the_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """One more pixel column drawn than the probes' rectangle: the counter word (and the
    column's pixel) disagree -- the counter counts what was rasterised."""
    want = scenes.probes_atomic_counter(1)
    x0, y0, x1, y1 = scenes.COUNT_RECT
    monkeypatch.setattr(scenes, "COUNT_RECT", (x0, y0, x1 + 1, y1))
    res = run_scene("atomic-counter", "gles", "monolith")
    bad = [m for p in want if (m := p.check(res.images))]
    assert any("counter (512 fragments) word 0" in m for m in bad), bad


def test_control_a_patch_one_column_wider_fails_its_coverage(monkeypatch: pytest.MonkeyPatch) -> None:
    want = scenes.probes_tess_patch(1)
    x0, y0, x1, y1 = scenes.PATCH_RECT
    monkeypatch.setattr(scenes, "PATCH_RECT", (x0, y0, x1 + 1, y1))
    res = run_scene("tess-patch", "gles", "monolith")
    bad = [m for p in want if (m := p.check(res.images))]
    assert any(f"({x1},{y0})" in m and "outside the patch" in m for m in bad), bad[:3]


def test_control_an_image_format_unlike_the_shader_s_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = client_compute.ComputeCalls.bind_image_texture

    def rgba32f(self, unit, tex, level=0, layered=False, layer=0, access=0x88BA, format=0x8058):
        return real(self, unit, tex, level, layered, layer, access, 0x8814 if tex else format)

    monkeypatch.setattr(client_compute.ComputeCalls, "bind_image_texture", rgba32f)
    with pytest.raises(PipeFatal, match=r'LaunchGrid\.image .u_dst. \(unit 4\)\.InternalFormat'):
        run_scene("image-load-store", "gles", "monolith")


# -- the client half, on a decoding sink ----------------------------------------------------------
class Log:
    def __init__(self, stage: StageSegment) -> None:
        self.decoder = Decoder(stage)
        self.applier = Applier(Recorder(), stage)
        self.seen: list[tuple[str, dict[str, Any], list[Any]]] = []

    def __call__(self, rec: memoryview) -> None:
        d = self.decoder.decode(rec)
        self.seen.append((d.name, to_plain(d.payload), [to_plain(t) for t in d.tails]))
        self.applier.apply(rec)


@pytest.fixture
def client() -> Client:
    stage = StageSegment(1 << 20)
    log = Log(stage)
    c = Client(log, stage, transport="monolith")
    c.log = log  # type: ignore[attr-defined]
    yield c
    with contextlib.suppress(PipeFatal):
        c.close()


def _recs(c: Client, name: str) -> list[tuple[dict, list]]:
    return [(p, t) for n, p, t in c.log.seen if n == name]  # type: ignore[attr-defined]


def _use(c: Client, program: str) -> Any:
    src = load(program)
    prog = c.create_program(src.spirv, src.reflection)
    c.use_program(prog)
    return prog


def test_launch_grid_carries_the_shader_s_block_and_the_indirect_buffer(client: Client) -> None:
    buf = client.create_buffer(bytes(64))
    grid = client.create_buffer(struct.pack("<4I", 0, 2, 1, 1))
    _use(client, "fill")
    client.bind_buffer_base("storage", 1, buf)
    client.dispatch_compute(3, 2, 1)
    client.bind_dispatch_indirect_buffer(grid)
    client.dispatch_compute_indirect(4)
    (direct, _), (indirect, _) = _recs(client, "LaunchGrid")
    assert (direct["GridX"], direct["GridY"], direct["GridZ"]) == (3, 2, 1)
    assert (direct["BlockX"], direct["BlockY"], direct["BlockZ"]) == (8, 1, 1)  # fill.comp's
    assert direct["IsIndirect"] == 0 and indirect["IsIndirect"] == 1
    assert indirect["IndirectOffset"] == 4
    assert (indirect["IndirectBuffer"]["Slot"], indirect["IndirectBuffer"]["Gen"]) == tuple(grid.handle)


def test_writable_mask_is_narrowed_by_the_program_s_readonly_blocks(client: Client) -> None:
    buf = client.create_buffer(bytes(64))
    counters = client.create_buffer(bytes(16))
    client.bind_buffer_base("storage", 2, buf)  # dump.frag declares binding 2 readonly
    client.bind_buffer_base("atomic_counter", 3, counters)
    _use(client, "dump")
    client.vertex_attrib_pointer(0, buf, 3, stride=12)
    client.draw_arrays(4, 0, 3)
    _use(client, "fill")  # fill.comp writes binding 1; nothing at 2 is readonly there
    client.dispatch_compute(1)
    sets = _recs(client, "SetShaderBuffers")
    storage = [p for p, _ in sets if p["Class"] == 1]
    atomic = [p for p, _ in sets if p["Class"] == 2]
    assert storage[0]["WritableMask"][0] == 0  # readonly under dump
    assert storage[-1]["WritableMask"][0] == 1 << 2  # writable under fill
    assert atomic[0]["WritableMask"][0] == 1 << 3 and atomic[0]["Count"] == 4


def test_pending_set_is_conservative_then_narrowed(client: Client) -> None:
    buf = client.create_buffer(bytes(64))
    _use(client, "fill")
    client.bind_buffer_base("storage", 1, buf)
    assert client.gpu_pending == {}
    client.dispatch_compute(1)
    assert client.gpu_pending == {buf.handle: [(0, 64)]}  # the whole bound range
    client.on_gpu_written(buf.handle, [(0, 32)])  # OnGpuWritten: exactly 8 words
    assert client.gpu_pending == {buf.handle: [(0, 32)]}
    client.buffer_sub_data(buf, 8, bytes(8))  # the client's own bytes are current there
    assert client.gpu_pending == {buf.handle: [(0, 8), (16, 32)]}
    client.on_gpu_written(buf.handle, [])
    assert client.gpu_pending == {}


def test_transform_feedback_records_and_accounting(client: Client) -> None:
    from mgpipe.runtime.harness.scenes.kit import setup

    setup(client, scenes._xfb_vertices(), "xfb")
    buf = client.create_buffer(bytes(512))
    xfb = client.create_transform_feedback()
    client.bind_transform_feedback(xfb)
    client.bind_buffer_range("transform_feedback", 0, buf, 0, 32 * 9)  # room for 9 vertices
    client.begin_transform_feedback(4)
    client.draw_arrays(4, 0, 6)
    client.pause_transform_feedback()
    client.draw_arrays(4, 6, 3)  # not captured
    client.resume_transform_feedback()
    client.draw_arrays(4, 0, 3)  # appended: 9 vertices, the range is full
    assert client.end_transform_feedback() == (9, 3)
    client.begin_transform_feedback(4)
    client.draw_arrays(4, 0, 9)
    client.draw_arrays(4, 0, 9)  # no room left: GL writes none of it
    assert client.end_transform_feedback() == (9, 3)
    names = [n for n, _p, _t in client.log.seen]  # type: ignore[attr-defined]
    seq = [n for n in names if "StreamOutput" in n]
    assert seq == ["BindStreamOutput", "BeginStreamOutput", "SetStreamOutputTargets",
                   "PauseStreamOutput", "ResumeStreamOutput", "EndStreamOutput",
                   "BeginStreamOutput", "SetStreamOutputTargets", "EndStreamOutput"]  # fmt: skip
    (begin, _), _ = _recs(client, "BeginStreamOutput")
    assert begin["PrimitiveMode"] == 4 and begin["LifetimeId"] == xfb.lifetime
    (tgt, tails), _ = _recs(client, "SetStreamOutputTargets")
    assert tgt["Count"] == 1 and list(tails[1]) == [0]
    ends = [p for p, _ in _recs(client, "EndStreamOutput")]
    assert [(e["CapturedVertices"], e["PrimitivesWritten"]) for e in ends] == [(9, 3), (9, 3)]
    assert begin["Targets"][0]["Size"] == 288
    assert client.gpu_pending[buf.handle] == [(0, 288)]


def test_images_barriers_and_patches_records(client: Client) -> None:
    tex = client.create_texture_2d(8, 8)
    client.bind_image_texture(5, tex, 0, False, 0, "write_only", 0x8058)
    client.memory_barrier(("shader_image_access", "texture_fetch"))
    client.memory_barrier_by_region("framebuffer")
    client.patch_parameter(0x8E72, 4)
    (bind, _), = _recs(client, "BindShaderImage")
    assert (bind["Unit"], bind["Access"], bind["Format"]) == (5, 0x88B9, 0x8058)
    bars = [p for p, _ in _recs(client, "MemoryBarrier")]
    assert [(b["Bits"], b["ByRegion"]) for b in bars] == [(0x28, 0), (0x400, 1)]
    (pp, _), = _recs(client, "PatchParameter")
    assert (pp["Pname"], pp["Value"]) == (0x8E72, 4)
    _use(client, "imgfill")
    client.dispatch_compute(2, 2)
    (imgs, tails), = _recs(client, "SetShaderImages")
    assert imgs["Count"] == 6
    row = tails[0][5]
    assert (row["Unit"], row["InternalFormat"], row["Access"]) == (5, 0x8058, 1)  # WriteOnly
    assert (row["Res"]["Slot"], row["Res"]["Gen"]) == tuple(tex.handle)
    client.clear()  # a clear's validate pushes the patch state
    patch = [p for p, _ in _recs(client, "SetPatchState")]
    assert patch[-1]["Vertices"] == 4


@pytest.mark.parametrize("call, args, message", [
    ("dispatch_compute", (1,), "no program in use"),
    ("dispatch_compute_indirect", (0,), "no dispatch-indirect buffer"),
    ("memory_barrier", ("everything",), "unknown barrier 'everything'"),
    ("memory_barrier", (0x4000_0000,), "barrier bits"),
    ("bind_image_texture", (0, None, 0, False, 0, 0x88BA, 0x1908), "no image unit format"),
    ("begin_transform_feedback", (0x0005,), "GL_POINTS, GL_LINES or GL_TRIANGLES"),
    ("end_transform_feedback", (), "no capture running"),
    ("patch_parameter", (0x8E73, 1), "GL_PATCH_VERTICES"),
])  # fmt: skip
def test_misuse_is_a_client_error_before_any_record(client: Client, call: str, args: tuple,
                                                    message: str) -> None:  # fmt: skip
    before = len(client.log.seen)  # type: ignore[attr-defined]
    with pytest.raises(ClientError, match=re.escape(message)):
        getattr(client, call)(*args)
    assert len(client.log.seen) == before  # type: ignore[attr-defined]


def test_a_program_without_capture_cannot_begin(client: Client) -> None:
    _use(client, "color")
    with pytest.raises(ClientError, match="captures nothing"):
        client.begin_transform_feedback(4)
    _use(client, "color")
    with pytest.raises(ClientError, match="no compute stage"):
        client.dispatch_compute(1)


def test_a_draw_inside_a_capture_keeps_its_mode_and_program(client: Client) -> None:
    from mgpipe.runtime.harness.scenes.kit import setup

    setup(client, scenes._xfb_vertices(), "xfb")
    client.bind_buffer_base("transform_feedback", 0, client.create_buffer(bytes(512)))
    client.begin_transform_feedback(4)
    before = len(client.log.seen)  # type: ignore[attr-defined]
    with pytest.raises(ClientError, match="draw mode 0x1 inside a capture begun with 0x4"):
        client.draw_arrays(1, 0, 2)
    draws = [n for n, _p, _t in client.log.seen[before:] if n == "DrawVbo"]  # type: ignore[attr-defined]
    assert draws == []
    _use(client, "color")
    with pytest.raises(ClientError, match="another program than the capture's"):
        client.draw_arrays(4, 0, 3)
    client.pause_transform_feedback()
    client.draw_arrays(4, 0, 3)  # paused: any program, any mode
    assert client.transform_feedback_primitives_written() == 0


# -- the SPIR-V capture layout -------------------------------------------------------------
def test_xfb_layout_is_read_from_the_spirv_and_stripped_for_essl() -> None:
    from mgpipe.runtime.backends.spirv_xfb import SpirvError, strip_xfb, xfb_layout

    packed = xfb_layout(load("xfb").spirv[0])
    holes = xfb_layout(load("xfbskip").spirv[0])
    assert [(v.name, v.buffer, v.offset, v.components) for v in packed.varyings] == [
        ("v_color", 0, 0, 4), ("v_twice", 0, 16, 4)]
    assert packed.strides == {0: 32} and packed.packed()
    assert [v.offset for v in holes.varyings] == [0, 32] and holes.strides == {0: 48}
    assert not holes.packed()  # the control: a hole is seen
    assert xfb_layout(load("color").spirv[0]) is None  # no Xfb execution mode
    stripped = strip_xfb(load("xfb").spirv[0])
    assert xfb_layout(stripped) is None and len(stripped) < len(load("xfb").spirv[0])
    assert strip_xfb(load("color").spirv[0]) == load("color").spirv[0]  # nothing to strip
    with pytest.raises(SpirvError, match="magic"):
        xfb_layout(b"\0" * 20)


# -- GLES refusals: named, and only where the driver cannot --------------------------------
def test_gles_refuses_stages_the_driver_lacks_by_name() -> None:
    from mgpipe.runtime.backends.gles.errors import DriverRefused
    from mgpipe.runtime.backends.gles.program import build_program

    tess = load("tess")
    with pytest.raises(DriverRefused, match=r'CreateShaderState\.StageMask.*GL_EXT_tessellation_shader'):
        build_program(None, tess.spirv, tess.reflection, "CreateShaderState", version=31)  # type: ignore[arg-type]
    fill = load("fill")
    with pytest.raises(DriverRefused, match=r"compute stage needs GLES 3\.1"):
        build_program(None, fill.spirv, fill.reflection, "CreateShaderState", version=30)  # type: ignore[arg-type]
    with pytest.raises(DriverRefused, match=r"StageMask.*stages \[0, 5\]"):
        build_program(None, {0: tess.spirv[0], 5: fill.spirv[5]}, fill.reflection,  # type: ignore[arg-type]
                      "CreateShaderState", version=32)


def test_gles_holds_the_launch_block_to_the_shader_s(monkeypatch: pytest.MonkeyPatch) -> None:
    real = client_compute.ComputeCalls._workgroup
    monkeypatch.setattr(client_compute.ComputeCalls, "_workgroup",
                        lambda self, what: (4,) + real(self, what)[1:])  # fmt: skip
    with pytest.raises(PipeFatal, match=r'Fatal\{DriverRefused, "LaunchGrid\.Block"\}.*\(8, 1, 1\)'):
        run_scene("compute-fill", "gles", "monolith")


#: the read-back images that are word dumps: exact bytes, so equal on every backend
DUMPS = {"compute-fill": 0, "compute-indirect": 0, "atomic-counter": 1, "xfb-capture": 1,
         "xfb-skip": 0, "xfb-separate": 1}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DUMPS))
def test_word_dumps_are_the_same_bytes_on_both_backends(name: str) -> None:
    gles, vk = outcome(name, "gles"), outcome(name, "vulkan")
    assert gles[0] == "ok" and vk[0] == "ok", (gles[1], vk[1])  # both devices have these
    i = DUMPS[name]
    assert gles[1].images[i].rgba == vk[1].images[i].rgba


def test_a_dead_buffer_or_texture_is_unbound_from_every_compute_point(client: Client) -> None:
    buf = client.create_buffer(bytes(64))
    tex = client.create_texture_2d(8, 8)
    _use(client, "fill")
    client.bind_buffer_base("storage", 1, buf)
    client.bind_dispatch_indirect_buffer(buf)
    client.bind_buffer_base("transform_feedback", 0, buf)
    client.bind_image_texture(4, tex, 0, False, 0, "write_only", 0x8058)
    client.dispatch_compute(1)
    assert buf.handle in client.gpu_pending and client.tr.images
    client.delete_buffer(buf)
    client.delete_texture(tex)
    assert client.gpu_pending == {} and client.tr.images == {}
    assert client.tr.xfb.targets == {}
    with pytest.raises(ClientError, match="no dispatch-indirect buffer"):
        client.dispatch_compute_indirect(0)


def test_gles_refuses_a_capture_it_cannot_say_by_name(tmp_path: Any) -> None:
    """Two varyings into buffer 0 and one into buffer 1: GLES interleaves into one buffer or
    separates one varying per buffer (no gl_NextBuffer); the control is xfbsep, which it can."""
    import subprocess

    from mgpipe.runtime.backends.gles.errors import DriverRefused
    from mgpipe.runtime.backends.gles.program import build_program

    src = tmp_path / "mixed.vert"
    src.write_text("""#version 450
layout(location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 32) out vec4 a;
layout(location = 1, xfb_buffer = 0, xfb_offset = 16) out vec4 b;
layout(location = 2, xfb_buffer = 1, xfb_offset = 0, xfb_stride = 16) out vec4 c;
void main() { a = vec4(1.0); b = vec4(2.0); c = vec4(3.0); gl_Position = vec4(0.0); }
""")
    out = tmp_path / "mixed.vert.spv"
    subprocess.run(["glslangValidator", "-V", "--target-env", "vulkan1.0", "-o", str(out), str(src)],
                   check=True, capture_output=True)  # fmt: skip
    frag = load("xfb").spirv[4]
    with pytest.raises(DriverRefused, match=r"CreateShaderState\.Xfb.*\[2, 1\] varyings into buffers \[0, 1\]"):
        build_program(None, {0: out.read_bytes(), 4: frag}, b"{}", "CreateShaderState", version=32)  # type: ignore[arg-type]
    kind, _res = outcome("xfb-separate", "gles")
    assert kind == "ok"


def test_gles_marks_gpu_written_only_what_the_mask_says_may_be_written(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A buffer bound at the dump program's readonly point is not marked GPU-written (its
    mirror stays trusted); written by fill.comp it is. Control: a mask with every bit set
    marks the read-only one too."""
    from mgpipe.runtime.backends.registry import make_backend
    from mgpipe.runtime.client import compute_tracker

    def run(plant: bool) -> tuple[bool, bool]:
        if plant:
            monkeypatch.setattr(compute_tracker.TrackerCompute, "readonly_points",
                                lambda self, cls: set())  # fmt: skip
        be = make_backend("gles")
        stage = StageSegment(1 << 22)
        c = Client(Applier(be, stage).apply, stage, transport="monolith", width=64, height=64)
        try:
            read, written = c.create_buffer(bytes(64)), c.create_buffer(bytes(64))
            c.bind_buffer_base("storage", 2, read)
            _use(c, "dump")
            c.vertex_attrib_pointer(0, read, 3, stride=12)
            c.draw_arrays(4, 0, 3)
            c.bind_buffer_base("storage", 1, written)
            c.bind_buffer_base("storage", 2, None)
            _use(c, "fill")
            c.dispatch_compute(1)
            c.transport.wait_applied()
            dirty = {o.name: o.gpu_dirty for o in be.binder._objs.values()}
            first, second = sorted(dirty)  # GL names in creation order: read, then written
            return dirty[first], dirty[second]
        finally:
            c.close()
            be.close()

    assert run(False) == (False, True)
    assert run(True) == (True, True)  # the planted all-writable mask


# -- direct readbacks and OnGpuWritten (the reverse channel meets issue 19) ------------------
#: scene -> the index of its ResourceReadback image (runtime/harness/scenes/compute.py)
READBACKS = {"compute-fill": 1, "compute-indirect": 1, "compute-indices": 1,
             "compute-client-indices": 1, "compute-restart-indices": 1, "atomic-counter": 2,
             "xfb-capture": 2}  # fmt: skip


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("backend", ("gles", "vulkan"))
@pytest.mark.parametrize("name", sorted(READBACKS))
def test_storage_words_read_back_directly_on_both_backends(name: str, backend: str,
                                                           transport: str) -> None:  # fmt: skip
    """Every word of the buffer the scene wrote, through ResourceReadback, equals the word the
    probes compute (and the picture probes hold as before)."""
    kind, res = outcome(name, backend, transport)
    assert kind == "ok", f"{name} on {backend} over {transport}: {res}"
    scene = COMPUTE_SCENES[name]
    probes = scene.probes(scene.default_n)
    direct = [p for p in probes if p.image == READBACKS[name]]
    assert direct and all("readback" in p.what for p in direct)
    bad = [m for p in probes if (m := p.check(res.images))]
    assert not bad, f"{name} on {backend} over {transport}: {bad[:5]}"
    assert res.client.link.round_trips["ResourceReadback"] >= 1


@pytest.mark.parametrize("backend", ("gles", "vulkan"))
def test_on_gpu_written_names_the_written_range_and_narrows_the_unwritten(backend: str) -> None:
    """The launch of indices.comp (writes point 1, declares no point 5) with buffers at both:
    OnGpuWritten(idx, [(0, 12)]) then OnGpuWritten(spare, []), in window order, the first
    events of the run; the client's pending set loses the spare."""
    kind, res = outcome("compute-client-indices", backend)
    assert kind == "ok", res
    c = res.client
    first = c.gpu_written[:2]
    assert [r for _h, r in first] == [((0, 12),), ()], c.gpu_written
    assert first[0][0] != first[1][0]
    assert all(h not in c.gpu_pending for h, _r in first)  # read back / narrowed


@pytest.mark.parametrize("backend", ("gles", "vulkan"))
def test_control_a_missing_on_gpu_written_leaves_the_guess_pending(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from mgpipe.runtime.server.reverse import EventRing

    monkeypatch.setattr(EventRing, "gpu_written", lambda self, handle, ranges: None)
    want = r"OnGpuWritten\.Missing: the buffer at storage point 5 is still pending \[\(0, 16\)\]"
    with pytest.raises(AssertionError, match=want):
        run_scene("compute-client-indices", backend, "monolith")


@pytest.mark.parametrize("backend", ("gles", "vulkan"))
def test_control_a_scan_that_skips_the_sync_reads_stale_indices(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Without the readback before the max-index scan, the scan reads the 0xEEEE the client
    uploaded and the client arrays cannot hold vertex 61166: a named ClientError."""
    monkeypatch.setattr(client_compute.ComputeCalls, "sync_gpu_writes",
                        lambda self, buf, start, end, what: 0)  # fmt: skip
    with pytest.raises(ClientError, match=r"draw_elements: attribute 0 fetches vertex 61166"):
        run_scene("compute-client-indices", backend, "monolith")


def test_a_scan_with_no_reverse_channel_refuses_by_name(client: Client) -> None:
    idx = client.create_buffer(struct.pack("<6H", *([0xEEEE] * 6)))
    _use(client, "indices")
    client.bind_buffer_base("storage", 1, idx)
    client.dispatch_compute(3)
    client.bind_buffer_base("storage", 1, None)
    _use(client, "color")
    data = bytes(4 * 7 * 4)
    client.vertex_attrib_pointer(0, data, 3, stride=28, offset=0)
    client.bind_index_buffer(idx)
    want = r"bytes \[0, 12\) of the index buffer were written by the GPU and this client has no"
    with pytest.raises(ClientError, match=want + r" reverse channel"):
        client.draw_elements(4, 6, 2)
    client.buffer_sub_data(idx, 0, struct.pack("<6H", 0, 1, 2, 0, 2, 3))  # the bytes known again
    client.draw_elements(4, 6, 2)  # no GPU-written byte left under the scan


def test_an_earlier_record_s_event_never_drops_a_later_guess(client: Client) -> None:
    buf = client.create_buffer(bytes(64))
    _use(client, "fill")
    client.bind_buffer_base("storage", 1, buf)
    client.dispatch_compute(1)
    s1 = client.transport.emit_seq
    client.dispatch_compute(1)
    s2 = client.transport.emit_seq
    client.on_gpu_written(buf.handle, [(0, 8)], seq=s1)  # the first launch's account
    assert client.gpu_pending[buf.handle] == [(0, 64)]  # the second's guess stays
    client.on_gpu_written(buf.handle, [(0, 8)], seq=s2)  # the last record's: it narrows
    assert client.gpu_pending[buf.handle] == [(0, 8)]
    client.on_gpu_written(buf.handle, [], seq=s2)
    assert buf.handle not in client.gpu_pending


def test_control_a_stale_mirror_under_the_restart_rewrite(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GLES server rewrites restart index 0xEEEE from its host mirror: with the mirror not
    re-read after the launch, every index is the restart index and the quad is not drawn."""
    from mgpipe.runtime.backends.gles import vertex

    name = "compute-restart-indices"
    assert not _failures(name, run_scene(name, "gles").images)
    monkeypatch.setattr(vertex, "refresh_mirror", lambda gl, buf: setattr(buf, "gpu_dirty", False))
    bad = _failures(name, run_scene(name, "gles").images)
    assert bad and all("the quad the GPU's indices draw" in m for m in bad), bad


@pytest.mark.parametrize("backend", ("gles", "vulkan"))
def test_a_pack_readback_is_pending_until_read_back(backend: str) -> None:
    """glReadPixels into a PACK buffer: the client marks the bytes GPU-written at the call,
    the server's OnGpuWritten names the same range, a ResourceReadback brings them back
    (equal to the client-memory ReadPixels) and empties the set."""
    from mgpipe.runtime.backends.registry import make_backend

    be = make_backend(backend)
    stage = StageSegment(1 << 22)
    c = Client(Applier(be, stage).apply, stage, transport="monolith", width=8, height=8)
    try:
        c.clear_color(1.0, 0.0, 0.0, 1.0)
        c.clear()
        buf = c.create_buffer(bytes(4 * 4 * 4))
        c.read_pixels_to_buffer(buf, 0, 0, 0, 4, 4)
        assert c.gpu_pending[buf.handle] == [(0, 64)]
        got = c.get_buffer_sub_data(buf, 0, 64)
        assert (buf.handle, ((0, 64),)) in c.gpu_written
        assert buf.handle not in c.gpu_pending
        assert got == c.read_pixels(0, 0, 4, 4) == bytes((255, 0, 0, 255)) * 16
    finally:
        c.close()
        be.close()


def test_control_a_pack_readback_the_client_does_not_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the client's own mark the pack's bytes are not pending: the check above fails
    at its first assertion (the event alone arrives only at the next drain)."""
    from mgpipe.runtime.client.answers import AnswersMixin

    monkeypatch.setattr(AnswersMixin, "_pack_pending", lambda self, buf, base, n: None)
    with pytest.raises(KeyError):
        test_a_pack_readback_is_pending_until_read_back("gles")


_CMD_SRC = """#version 450
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 1) buffer Cmd { uint w[]; } cmd;
void main() { cmd.w[0] = 6u; cmd.w[1] = 1u; cmd.w[2] = 0u; cmd.w[3] = 0u; }
"""


@pytest.mark.parametrize("plant", (False, True))
def test_gles_indirect_commands_a_shader_wrote_are_read_from_a_fresh_mirror(
        plant: bool, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A launch writes DrawArraysIndirectCommand {6, 1, 0, 0} into a zeroed buffer, then a
    draw_arrays_indirect of a full-screen quad from it: the GLES server reads the commands
    from its mirror, re-read after the launch -- the quad is drawn. Control (plant): the
    mirror not re-read holds count 0 -- nothing drawn."""
    from mgpipe.runtime.backends.gles import vertex
    from mgpipe.runtime.backends.registry import make_backend
    from mgpipe.runtime.harness.scenes.kit import quad, setup
    from mgpipe.runtime.harness.shaders import programs

    src, out = tmp_path / "cmd.comp", tmp_path / "cmd.comp.spv"
    src.write_text(_CMD_SRC)
    programs.compile_source(src, out)
    spirv = {programs.STAGE_SLOTS["comp"]: out.read_bytes()}
    if plant:
        monkeypatch.setattr(vertex, "refresh_mirror",
                            lambda gl, buf: setattr(buf, "gpu_dirty", False))  # fmt: skip
    be = make_backend("gles")
    stage = StageSegment(1 << 22)
    c = Client(Applier(be, stage).apply, stage, transport="monolith", width=64, height=64)
    try:
        cmd = c.create_buffer(bytes(16))
        c.use_program(c.create_program(spirv, programs.reflection_record({"comp": out})))
        c.bind_buffer_base("storage", 1, cmd)
        c.dispatch_compute(1)
        c.bind_buffer_base("storage", 1, None)
        c.memory_barrier("command")
        setup(c, quad(-1.0, -1.0, 1.0, 1.0, 0.0, (1.0, 0.0, 0.0, 1.0)))
        c.viewport(0, 0, 64, 64)
        c.clear_color(0.0, 0.0, 0.0, 1.0)
        c.clear()
        c.bind_indirect_buffer(cmd)
        c.draw_arrays_indirect(0x0004, 0)
        got = tuple(c.read_pixels(32, 32, 1, 1))
    finally:
        c.close()
        be.close()
    assert got == ((0, 0, 0, 255) if plant else (255, 0, 0, 255))
