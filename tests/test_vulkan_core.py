"""The Vulkan backend's parts below the wire: device choice, the validation collector,
render-pass keys, the deletion queue, enum translations and the scissor rules."""

from __future__ import annotations

import pytest
import vulkan as vk

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.backends.vulkan import vk_enums
from mgpipe.runtime.backends.vulkan.device import (
    VulkanDevice,
    VulkanUnavailable,
    layer_available,
    list_devices,
    validation_mode,
)
from mgpipe.runtime.backends.vulkan.dynamic_tail import DynamicTailKey, scissor_rect
from mgpipe.runtime.backends.vulkan.lifetime import FrameRing
from mgpipe.runtime.backends.vulkan.pipelines import DYNAMIC_STATES
from mgpipe.runtime.backends.vulkan.targets import CLEAR, LOAD, RenderPassCache, RenderPassKey


@pytest.fixture(scope="module")
def dev():
    d = VulkanDevice()
    yield d
    d.close()


@pytest.fixture(autouse=True)
def _no_messages(request):
    yield
    if "dev" in request.fixturenames:
        assert_clean(request.getfixturevalue("dev"))


def test_validation_is_on_in_tests(dev):
    # Tests require the layer (MGPIPE_VK_VALIDATION defaults to "on" under pytest): where it
    # is missing this fails, it never skips. Only an explicit "auto"/"off" (a GPU box
    # without the layer) waives it.
    if validation_mode() == "on":
        assert layer_available(), "VK_LAYER_KHRONOS_validation is not installed"
        assert dev.validation


def test_collector_catches_a_planted_error(dev):
    if not dev.validation:
        pytest.skip(f"validation explicitly {validation_mode()} (MGPIPE_VK_VALIDATION)")
    ring = FrameRing(dev)
    try:
        cmd = ring.cmd()
        bad = vk.VkViewport(x=0, y=0, width=0, height=0, minDepth=0, maxDepth=1)
        vk.vkCmdSetViewport(cmd, 0, 1, [bad])  # width 0 is invalid usage
        ring.submit(wait=True)
    finally:
        ring.close()
    msgs = dev.take_messages()
    assert any(m.severity == "error" and "width" in m.text for m in msgs), msgs


def test_device_choice_by_index_and_name():
    names = list_devices()
    assert names
    by_name = VulkanDevice(device=names[0].split()[0], validation="off")
    try:
        assert by_name.name == names[0]
    finally:
        by_name.close()
    with pytest.raises(
        VulkanUnavailable, match=r"no device named like 'no-such-gpu' \(available: 0: "
    ):
        VulkanDevice(device="no-such-gpu", validation="off")
    with pytest.raises(VulkanUnavailable, match="device index 99 out of range"):
        VulkanDevice(device="99", validation="off")


def test_validation_mode_words(monkeypatch):
    assert validation_mode("ON") == "on" and validation_mode("0") == "off"
    assert validation_mode(True) == "on" and validation_mode(False) == "off"
    monkeypatch.setenv("MGPIPE_VK_VALIDATION", "auto")
    assert validation_mode() == "auto"
    with pytest.raises(VulkanUnavailable, match="expected on, off or auto"):
        validation_mode("maybe")


def test_render_passes_are_cached_by_formats_and_load_ops(dev):
    cache = RenderPassCache(dev)
    try:
        fmt, depth = vk.VK_FORMAT_R8G8B8A8_UNORM, vk.VK_FORMAT_D24_UNORM_S8_UINT
        a = RenderPassKey.loading((fmt, fmt), depth)
        b = RenderPassKey((fmt, fmt), depth, (CLEAR, LOAD), CLEAR)
        assert cache.get(a) is cache.get(RenderPassKey.loading((fmt, fmt), depth))
        assert cache.get(b) is not cache.get(a)
        assert cache.created == 2
        assert b.compat() == a
    finally:
        cache.destroy()


def test_deferred_destroy_waits_for_the_fence(dev):
    ring = FrameRing(dev)
    ran: list[int] = []
    try:
        ring.cmd()
        ring.defer(lambda: ran.append(1))
        assert ran == []  # the command buffer being recorded may still use it
        serial = ring.submit()
        ring._wait_through(serial)
        assert ran == [1]
        ring.defer(lambda: ran.append(2))  # nothing recorded or in flight: at once
        assert ran == [1, 2]
    finally:
        ring.close()


def test_exactly_magmas_eight_dynamic_states():
    assert sorted(DYNAMIC_STATES) == sorted([
        vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR,
        vk.VK_DYNAMIC_STATE_BLEND_CONSTANTS, vk.VK_DYNAMIC_STATE_DEPTH_BIAS,
        vk.VK_DYNAMIC_STATE_LINE_WIDTH, vk.VK_DYNAMIC_STATE_STENCIL_COMPARE_MASK,
        vk.VK_DYNAMIC_STATE_STENCIL_WRITE_MASK, vk.VK_DYNAMIC_STATE_STENCIL_REFERENCE,
    ])  # fmt: skip


@pytest.mark.parametrize("enum", sorted(vk_enums.TRANSLATED))
def test_every_catalogue_enumerator_has_a_translation(enum):
    from mgpipe.runtime.schema import tables as _t

    names, table = _t.enum(enum), vk_enums.TRANSLATED[enum]
    m = vk_enums.catalogue_map(enum)
    # every enumerator that names a state translates; the only ones that do not are
    # MobileGL's bound (<Enum>Count) and marker (Unknown), and a record carrying one is refused
    no_state = {n for n, v in names.items() if table[n] is vk_enums.NOT_A_VALUE}
    assert no_state == {n for n in names if n.endswith("Count") or n == "Unknown"}
    assert set(m) == {int(v) for n, v in names.items() if n not in no_state}
    for n in no_state:
        with pytest.raises(vk_enums.UnsupportedEnum, match=f"{enum}::{n} .* names no state"):
            m[int(names[n])]
    with pytest.raises(vk_enums.UnsupportedEnum, match=f"is no {enum} enumerator"):
        m[max(int(v) for v in names.values()) + 1]


def test_a_missing_translation_is_refused(monkeypatch):
    table = dict(vk_enums.TRANSLATED["DepthTestFunc"])
    del table["LessEqual"]
    monkeypatch.setitem(vk_enums.TRANSLATED, "DepthTestFunc", table)
    vk_enums.catalogue_map.cache_clear()
    try:
        with pytest.raises(
            vk_enums.UnsupportedEnum, match='"DepthTestFunc"}: no Vulkan translation for LessEqual'
        ):
            vk_enums.catalogue_map("DepthTestFunc")
    finally:
        vk_enums.catalogue_map.cache_clear()


def _key(**kw):
    base = dict(viewport=(0.0, 0.0, 64.0, 48.0), depth_range=(0.0, 1.0), blend_color=(0.0,) * 4,
                polygon_offset=(0.0, 0.0, 0.0), line_width=1.0, stencil_value_mask=(255, 255),
                stencil_write_mask=(255, 255), stencil_ref=(0, 0), scissor_box=(0, 0, 0, 0),
                scissor_enabled=False, extent=(64, 48), target=0)  # fmt: skip
    base.update(kw)
    return DynamicTailKey(**base)


def test_scissor_rules():
    assert scissor_rect(_key()) == (0, 0, 64, 48)  # test off: the full surface
    assert scissor_rect(_key(scissor_enabled=True)) == (0, 0, 0, 0)  # zero box: nothing
    # GL's lower-left box mirrored to the image's top-left origin, clamped to the surface
    assert scissor_rect(_key(scissor_enabled=True, scissor_box=(8, 4, 16, 10))) == (8, 34, 16, 10)
    assert scissor_rect(_key(scissor_enabled=True, scissor_box=(-8, 40, 100, 100))) == (0, 0, 64, 8)
    assert scissor_rect(_key(viewport=(0.0, 0.0, 0.0, 0.0))) == (0, 0, 64, 48)  # clears ignore it


def _decoded(
    setup, colors=1, depth=True, stencil=True, topo=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
):
    from mgpipe.runtime.backends.vulkan.pipeline_state import decode
    from mgpipe.runtime.client.render_state import RenderState

    rs = RenderState()
    setup(rs)
    feats = {"logicOp": True, "fillModeNonSolid": True, "sampleRateShading": True,
             "depthClamp": True}  # fmt: skip
    return decode(rs.p, colors, depth, stencil, topo, feats)


def test_pipeline_state_decodes_the_block_by_member():
    def setup(rs):
        rs.set_capability("Blend", True)
        rs.set_blend_func("SrcAlpha", "OneMinusSrcAlpha", "One", "Zero")
        rs.set_color_mask_indexed(1, True, False, True, False)
        rs.set_capability("DepthTest", True)
        rs.set_depth_func("GreaterEqual")
        rs.set_depth_mask(False)
        rs.set_capability("CullFace", True)
        rs.set_cull_face_mode("Front")
        rs.set_front_face_mode("Clockwise")
        rs.set_capability("StencilTest", True)
        rs.set_stencil_op("Back", "Zero", "IncrementWrap", "Invert")
        rs.set_polygon_mode(0x1B01, 0x1B01)  # GL_LINE

    d = _decoded(setup, colors=2)
    a0, a1 = d.blend
    assert a0.enabled and a0.src_rgb == vk.VK_BLEND_FACTOR_SRC_ALPHA
    assert (a0.src_alpha, a0.dst_alpha) == (vk.VK_BLEND_FACTOR_ONE, vk.VK_BLEND_FACTOR_ZERO)
    assert a1.write_mask == vk.VK_COLOR_COMPONENT_R_BIT | vk.VK_COLOR_COMPONENT_B_BIT
    assert d.depth_test and not d.depth_write
    assert d.depth_compare == vk.VK_COMPARE_OP_GREATER_OR_EQUAL
    assert (d.cull_mode, d.front_face) == (vk.VK_CULL_MODE_FRONT_BIT, vk.VK_FRONT_FACE_CLOCKWISE)
    assert d.stencil_test and d.stencil_back.fail == vk.VK_STENCIL_OP_ZERO
    assert d.stencil_back.depth_fail == vk.VK_STENCIL_OP_INCREMENT_AND_WRAP
    assert d.stencil_back.pass_ == vk.VK_STENCIL_OP_INVERT
    assert d.stencil_front.fail == vk.VK_STENCIL_OP_KEEP
    assert d.polygon_mode == vk.VK_POLYGON_MODE_LINE


def test_pipeline_state_gating_by_pass_and_topology():
    def setup(rs):
        rs.set_capability("DepthTest", True)
        rs.set_capability("StencilTest", True)
        rs.set_capability("PolygonOffsetFill", True)
        rs.set_capability("SampleMask", True)
        rs.set_sample_mask_value(0x1)

    no_ds = _decoded(setup, depth=False, stencil=False)
    assert not no_ds.depth_test and not no_ds.depth_write and not no_ds.stencil_test
    assert _decoded(setup).depth_bias
    assert not _decoded(setup, topo=vk.VK_PRIMITIVE_TOPOLOGY_LINE_LIST).depth_bias
    assert _decoded(setup).sample_mask == 0x1  # multisample is on by default in GL
    assert (
        _decoded(lambda rs: (setup(rs), rs.set_capability("Multisample", False))).sample_mask
        == 0xFFFFFFFF
    )
    assert _decoded(lambda rs: None).front_face == vk.VK_FRONT_FACE_COUNTER_CLOCKWISE


def test_messages_go_to_the_device_that_caused_them(dev):
    if not dev.validation:
        pytest.skip(f"validation explicitly {validation_mode()} (MGPIPE_VK_VALIDATION)")
    other = VulkanDevice()
    try:
        ring = FrameRing(other)
        cmd = ring.cmd()
        vk.vkCmdSetViewport(cmd, 0, 1, [vk.VkViewport(x=0, y=0, width=0, height=0,
                                                       minDepth=0, maxDepth=1)])  # fmt: skip
        ring.submit(wait=True)
        ring.close()
        assert other.take_messages()
        assert dev.take_messages() == []
    finally:
        other.close()


def test_shader_state_refusals_name_their_place(dev):
    from _vk_support import color_program
    from mgpipe.runtime.backends.vulkan.errors import VulkanRefused
    from mgpipe.runtime.backends.vulkan.shaders import ShaderProgram, ShaderRefused

    import json

    spirv, refl = color_program()
    with pytest.raises(ShaderRefused, match=r'"CreateShaderState.Spirv"\}: a graphics program'):
        ShaderProgram(dev, {4: spirv[4]}, refl)
    with pytest.raises(ShaderRefused, match=r'"CreateShaderState.Spirv\[4\]"\}: not SPIR-V'):
        ShaderProgram(dev, {0: spirv[0], 4: b"GLSL"}, refl)
    from mgpipe.runtime.backends.refusal import DriverRefused

    with pytest.raises(DriverRefused, match='"CreateShaderState.Reflection"}: a JSON list, '
                       "expected an object"):  # fmt: skip
        ShaderProgram(dev, spirv, b"[1, 2]")
    with pytest.raises(ShaderRefused, match="declares push_constants: this backend binds no push"):
        ShaderProgram(dev, spirv, json.dumps({"inputs": json.loads(refl)["inputs"],
                                              "push_constants": [{"name": "p"}]}).encode())
    with pytest.raises(ShaderRefused, match="a compute program has the compute stage alone"):
        ShaderProgram(dev, {0: spirv[0], 5: spirv[0]}, refl)
    with pytest.raises(VulkanRefused, match=r'"CreateShaderState.Reflection"\}: samplers entry .*'
                       "no set / binding / stage"):  # fmt: skip
        ShaderProgram(dev, spirv, json.dumps({"inputs": json.loads(refl)["inputs"],
                                              "samplers": [{"name": "t"}]}).encode())


def test_set_layouts_come_from_the_reflection_record(dev):
    """One binding per (set, binding), stages merged, the default block dynamic, a sampler
    location the client's (default-block members first, then samplers)."""
    import json

    import vulkan as vk
    from _vk_support import color_program
    from mgpipe.runtime.backends.vulkan.shaders import ShaderProgram

    spirv, base = color_program()
    refl = {"inputs": json.loads(base)["inputs"], "default_block": [{"name": "u_k", "offset": 0, "type": "vec4"}],
            "uniforms": [{"name": "Frame", "set": 0, "binding": 0, "block_size": 64, "stage": "vert"},
                         {"name": "Frame", "set": 0, "binding": 0, "block_size": 64, "stage": "frag"},
                         {"name": "gl_DefaultUniformBlock", "set": 0, "binding": 1,
                          "block_size": 16, "stage": "vert"}],
            "samplers": [{"name": "t", "set": 1, "binding": 3, "stage": "frag", "array": [2]}]}  # fmt: skip
    prog = ShaderProgram(dev, spirv, json.dumps(refl).encode())
    try:
        rows = [
            (b.kind, b.set, b.binding, b.count, b.stages, b.index) for b in prog.resources.bindings
        ]
        both = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT
        assert rows == [("uniform", 0, 0, 1, both, 0), ("default", 0, 1, 1, vk.VK_SHADER_STAGE_VERTEX_BIT, 2),
                        ("sampler", 1, 3, 2, vk.VK_SHADER_STAGE_FRAGMENT_BIT, 1)]  # fmt: skip
        assert len(prog.set_layouts) == 2 and prog.resources.default.size == 16
    finally:
        prog.destroy()


def test_a_dual_source_blend_factor_needs_the_feature():
    from mgpipe.runtime.backends.vulkan.pipeline_state import decode
    from mgpipe.runtime.client.render_state import RenderState

    rs = RenderState()
    rs.set_capability("Blend", True)
    rs.set_blend_func("Src1Color", "OneMinusSrc1Alpha", "One", "Zero")
    d = decode(
        rs.p, 1, False, False, vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, {"dualSrcBlend": True}
    )
    assert (d.blend[0].src_rgb, d.blend[0].dst_rgb) == (
        vk.VK_BLEND_FACTOR_SRC1_COLOR, vk.VK_BLEND_FACTOR_ONE_MINUS_SRC1_ALPHA)  # fmt: skip
    with pytest.raises(vk_enums.UnsupportedEnum,
                       match=r'"RenderStateParameters.BlendStates\[0\]"\}: a Src1 blend factor'):  # fmt: skip
        decode(rs.p, 1, False, False, vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, {})


def test_the_drivers_out_of_pool_code_is_the_named_exception():
    """The binding spells VK_ERROR_OUT_OF_POOL_MEMORY positive; the driver returns it negative
    (NVIDIA does, past a pool's maxSets): it must raise VkErrorOutOfPoolMemory, which the
    allocator catches to open a new pool, not a bare KeyError."""
    from mgpipe.runtime.backends.vulkan import descriptors

    table = vk._vulkan.exception_codes
    assert descriptors.EXTENSION_CODES_FIXED >= 1
    assert table[-abs(vk.VK_ERROR_OUT_OF_POOL_MEMORY)] is vk.VkErrorOutOfPoolMemory
    assert table[vk.VK_ERROR_FRAGMENTED_POOL] is vk.VkErrorFragmentedPool  # already negative


def test_sets_past_a_full_pool_come_from_a_new_pool(dev, monkeypatch):
    from mgpipe.runtime.backends.vulkan.descriptors import DescriptorAllocator

    row = vk.VkDescriptorSetLayoutBinding(binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                                          descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_VERTEX_BIT)  # fmt: skip
    layout = vk.vkCreateDescriptorSetLayout(
        dev.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[row]), None)
    monkeypatch.setattr(DescriptorAllocator, "POOL_SETS", 2)
    # lavapipe hands out sets past maxSets; NVIDIA returns the (negative) out-of-pool code:
    # answer as NVIDIA does, through the binding's own code table
    real, per_pool = vk.vkAllocateDescriptorSets, {}

    def like_nvidia(device, info):
        n = per_pool[info.descriptorPool] = per_pool.get(info.descriptorPool, 0) + 1
        if n > DescriptorAllocator.POOL_SETS:
            raise vk._vulkan.exception_codes[-abs(vk.VK_ERROR_OUT_OF_POOL_MEMORY)](-1)
        return real(device, info)

    monkeypatch.setattr(vk, "vkAllocateDescriptorSets", like_nvidia)
    alloc = DescriptorAllocator(dev, lambda fn: fn())
    try:
        got = [alloc.allocate(layout) for _ in range(5)]
        assert len({id(s) for _, s in got}) == 5 and len(alloc.pools) >= 3
    finally:
        for pool in alloc.pools:
            vk.vkDestroyDescriptorPool(dev.device, pool, None)
        vk.vkDestroyDescriptorSetLayout(dev.device, layout, None)
