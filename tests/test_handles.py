"""Handles = {Slot, Gen} (seed 001 §2.1): client minting and the server's object tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.errors import HandleRefused, ProtocolCorruption
from mgpipe.runtime.client.slots import SlotAllocator
from mgpipe.runtime.schema.kinds import handle_kinds
from mgpipe.runtime.server.handle_table import HandleTable
from mgpipe.runtime.wire.handle import DEFAULT_FRAMEBUFFER, NULL, Handle

KINDS = (
    "Buffer", "Texture", "Renderbuffer", "Framebuffer", "Xfb", "RenderStateCso",
    "VertexElementsCso", "SamplerCso", "SamplerViewCso", "ShaderCso", "Fence", "Query",
    "Context",
)  # fmt: skip
COMPOSITE_BASE = t.constant("kMGPipeShaderCsoCompositeSlotBase")


def test_kinds_are_the_catalogue_enum() -> None:
    assert set(handle_kinds()) == set(KINDS)
    with pytest.raises(ValueError):
        SlotAllocator("Sampler")
    with pytest.raises(ValueError):
        HandleTable("Program")


def test_handle_is_a_hashable_value_with_the_wire_layout() -> None:
    h = Handle(7, 3)
    assert h == Handle(7, 3) and hash(h) == hash(Handle(7, 3)) and h != Handle(7, 4)
    with pytest.raises(AttributeError):
        h.gen = 4  # type: ignore[misc]
    assert NULL == Handle(0, 0) and NULL.is_null and not DEFAULT_FRAMEBUFFER.is_null
    assert DEFAULT_FRAMEBUFFER == Handle(0, t.constant("kMGPipeDefaultFramebufferGen"))
    raw = Handle(0x01020304, 0xA0B0C0D0).pack()
    assert len(raw) == t.tables().STRUCTS["MGPipeHandle"]["size"] == Handle.wire_size()
    slot, gen = t.field("MGPipeHandle", "Slot"), t.field("MGPipeHandle", "Gen")
    assert int.from_bytes(raw[slot.offset : slot.offset + slot.size], "little") == 0x01020304
    assert int.from_bytes(raw[gen.offset : gen.offset + gen.size], "little") == 0xA0B0C0D0
    assert Handle.unpack_from(b"\xff" + raw, 1) == Handle(0x01020304, 0xA0B0C0D0)


@pytest.mark.parametrize("kind", KINDS)
def test_fresh_slots_are_dense_from_one_with_gen_one(kind: str) -> None:
    a = SlotAllocator(kind)
    assert [a.alloc() for _ in range(5)] == [Handle(s, 1) for s in range(1, 6)]
    assert a.high_water == 5 and a.live_count == 5


def test_null_and_default_framebuffer_are_never_minted_nor_freed() -> None:
    a = SlotAllocator("Framebuffer")
    minted = set()
    for i in range(50):
        h = a.alloc()
        minted.add(h)
        if i % 3 == 0:
            a.free(h)
    assert NULL not in minted and DEFAULT_FRAMEBUFFER not in minted
    assert all(h.slot != 0 for h in minted)
    for reserved in (NULL, DEFAULT_FRAMEBUFFER):
        with pytest.raises(HandleRefused) as ei:
            a.free(reserved)
        assert ei.value.reason == "Framebuffer.Free.Reserved"


def test_free_refuses_double_free_stale_and_unknown_by_name() -> None:
    a = SlotAllocator("Buffer")
    h = a.alloc()
    a.free(h)
    with pytest.raises(HandleRefused) as ei:
        a.free(h)
    assert ei.value.reason == "Buffer.Free.DoubleFree"
    h2 = a.alloc()
    assert h2 == Handle(h.slot, h.gen + 1)  # LIFO reuse bumps the gen
    with pytest.raises(HandleRefused) as ei:
        a.free(h)
    assert ei.value.reason == "Buffer.Free.Stale"
    with pytest.raises(HandleRefused) as ei:
        a.free(Handle(99, 1))
    assert ei.value.reason == "Buffer.Free.Unknown"
    assert a.is_live(h2) and not a.is_live(h)


ops = st.lists(st.one_of(st.just("alloc"), st.integers(0, 40)), max_size=200)


@settings(max_examples=200, deadline=None)
@given(ops=ops)
def test_gen_moves_only_on_reuse_and_reuse_is_lifo(ops: list[object]) -> None:
    a = SlotAllocator("Texture")
    live: list[Handle] = []
    freed: list[Handle] = []  # LIFO stack of freed handles
    last_gen: dict[int, int] = {}
    for op in ops:
        if op == "alloc":
            h = a.alloc()
            if freed:
                prev = freed.pop()
                assert h == Handle(prev.slot, prev.gen + 1)
            else:
                assert h == Handle(len(last_gen) + 1, 1)  # fresh slot: next dense slot, gen 1
            assert last_gen.get(h.slot, 0) in (0, h.gen - 1)
            last_gen[h.slot] = h.gen
            live.append(h)
        elif live:
            h = live.pop(op % len(live))
            a.free(h)
            freed.append(h)
        assert a.high_water == len(last_gen) and a.live_count == len(live)
        assert len({h.slot for h in live}) == len(live)


def test_composite_base_is_the_high_sixteenth_of_a_2_20_table() -> None:
    """seed 002 §4.3: a pipeline program lives at slot >= 983040 (0xF0000)."""
    assert COMPOSITE_BASE == 983040 == (1 << 20) - (1 << 20) // 16
    table = HandleTable[str]("ShaderCso")
    table.create(Handle(COMPOSITE_BASE, 1), "pipeline", "CreateShaderState.Cso")
    table.create(Handle(COMPOSITE_BASE - 1, 1), "program", "CreateShaderState.Cso")
    assert len(table.rows) == 2


def test_composite_band_is_reserved_for_shader_cso() -> None:
    a = SlotAllocator("ShaderCso")
    assert a.composite_base == COMPOSITE_BASE
    plain = [a.alloc() for _ in range(20)]
    comp = [a.alloc_composite() for _ in range(5)]
    assert all(0 < h.slot < COMPOSITE_BASE for h in plain)
    assert [h.slot for h in comp] == list(range(COMPOSITE_BASE, COMPOSITE_BASE + 5))
    assert all(h.gen == 1 for h in comp)
    a.free(comp[2])
    assert a.alloc() == Handle(21, 1)  # a freed composite slot never serves ordinary allocation
    assert a.alloc_composite() == Handle(COMPOSITE_BASE + 2, 2)
    with pytest.raises(ValueError):
        SlotAllocator("Buffer").alloc_composite()
    assert SlotAllocator("Buffer").composite_base is None


def test_handle_refused_is_protocol_corruption() -> None:
    assert issubclass(HandleRefused, ProtocolCorruption)


def test_table_lifecycle_follows_the_allocator() -> None:
    a, table = SlotAllocator("RenderStateCso"), HandleTable[str]("RenderStateCso")
    h = a.alloc()
    table.create(h, "cso-1", "CreateRenderState.Cso")
    assert table.resolve(h, "BindRenderState.Cso") == "cso-1"
    assert table.replace(h, "cso-1b", "RespecifyRenderState.Cso") == "cso-1"  # gen unchanged
    assert table.resolve(h, "BindRenderState.Cso") == "cso-1b"
    assert table.destroy(h, "DeleteRenderState.Cso") == "cso-1b"
    a.free(h)
    with pytest.raises(HandleRefused) as ei:
        table.resolve(h, "BindRenderState.Cso")
    assert ei.value.reason == "BindRenderState.Cso.Stale"
    h2 = a.alloc()
    table.create(h2, "cso-2", "CreateRenderState.Cso")
    with pytest.raises(HandleRefused) as ei:
        table.resolve(h, "BindRenderState.Cso")
    assert ei.value.reason == "BindRenderState.Cso.Stale"
    assert table.resolve(h2, "BindRenderState.Cso") == "cso-2"
    assert h2 in table and h not in table and len(table) == 1
    assert table.live_items() == [(h2, "cso-2")]


@pytest.mark.parametrize(
    "setup, probe, fault",
    [
        ((), Handle(0, 0), "Null"),
        ((), Handle(3, 1), "Unknown"),  # never created
        ((Handle(3, 1),), Handle(3, 2), "Unknown"),  # a gen from the future
        ((Handle(3, 2),), Handle(3, 1), "Stale"),  # a gen behind
        ((), Handle(1 << 30, 1), "Range"),
    ],
)
def test_resolve_refusals_name_the_place(
    setup: tuple[Handle, ...], probe: Handle, fault: str
) -> None:
    table: HandleTable[int] = HandleTable("Buffer")
    for h in setup:
        table.create(h, 0, "CreateBuffer.Handle")
    with pytest.raises(HandleRefused) as ei:
        table.resolve(probe, "SetVertexBuffers.Buffer")
    assert ei.value.reason == f"SetVertexBuffers.Buffer.{fault}"
    assert str(ei.value) == f'Fatal{{ProtocolCorruption, "SetVertexBuffers.Buffer.{fault}"}}'


def test_create_refuses_backward_and_live_slots() -> None:
    table: HandleTable[str] = HandleTable("Texture")
    table.create(Handle(2, 3), "t", "CreateTexture.Handle")
    for bad in (Handle(2, 3), Handle(2, 4)):  # live slot
        with pytest.raises(HandleRefused) as ei:
            table.create(bad, "u", "CreateTexture.Handle")
        assert ei.value.reason == "CreateTexture.Handle.Backward"
    table.destroy(Handle(2, 3), "DeleteTexture.Handle")
    for bad in (Handle(2, 3), Handle(2, 2)):  # gen not above the slot's last
        with pytest.raises(HandleRefused) as ei:
            table.create(bad, "u", "CreateTexture.Handle")
        assert ei.value.reason == "CreateTexture.Handle.Backward"
    table.create(Handle(2, 6), "v", "CreateTexture.Handle")  # forward jumps are fine
    assert table.resolve(Handle(2, 6), "BindTexture.Handle") == "v"
    with pytest.raises(HandleRefused) as ei:
        table.destroy(Handle(2, 5), "DeleteTexture.Handle")
    assert ei.value.reason == "DeleteTexture.Handle.Stale"
    assert table.resolve_optional(NULL, "BindTexture.Handle") is None


def test_shader_table_holds_composites() -> None:
    a, table = SlotAllocator("ShaderCso"), HandleTable[str]("ShaderCso")
    h, c = a.alloc(), a.alloc_composite()
    table.create(h, "prog", "CreateShader.Cso")
    table.create(c, "pipeline", "CreateShader.Cso")
    assert table.resolve(c, "BindShader.Cso") == "pipeline"
    assert table.live_items() == [(h, "prog"), (c, "pipeline")]
    with pytest.raises(HandleRefused) as ei:
        HandleTable[str]("Buffer", max_slots=COMPOSITE_BASE - 1).create(
            c, "x", "CreateBuffer.Handle"
        )
    assert ei.value.reason == "CreateBuffer.Handle.Range"
