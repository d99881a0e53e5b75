"""The applier (seed 001 §10.1): handle refusals by name, render-state scatter, dispatch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mgpipe.runtime.schema import layouts
from mgpipe.runtime.schema.tables import tables
from mgpipe.runtime.server import handle_fields
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.backends.base import build_table
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.errors import HandleRefused, NullEntry, ProtocolCorruption
from mgpipe.runtime.wire.handle import Handle, default_framebuffer
from mgpipe.runtime.schema.kinds import handle_kinds
from mgpipe.runtime.server.working_state import chunk_tables, mask_all
from mgpipe.runtime.wire.stage import StageSegment
from mgpipe.runtime.wire.codec import Encoder

ALL = 0xFFFFFFFF  # the all-ones ChunkMask, checked against the tables below
RS_STRUCT, RS_SIZE, PIPE, DYN = chunk_tables()
KIND = handle_kinds()  # MGPipeKind, by name


def _target(name: str) -> int:
    from mgpipe.runtime.schema import tables as t

    return t.enum("MGPipeResourceTarget")[name]


class Pipe:
    """Encoder + applier over one stage, one call per line in the tests."""

    def __init__(self, backend: Any = None) -> None:
        self.stage = StageSegment(1 << 20)
        self.enc = Encoder(self.stage)
        self.backend = backend if backend is not None else Recorder()
        self.applier = Applier(self.backend, self.stage)

    def __call__(self, call: str, payload: Any = None, tails: Any = (), blob: Any = None) -> Any:
        return self.applier.apply(self.enc.encode(call, payload, tails, blob))

    def refused(self, call: str, payload: Any = None, tails: Any = (), blob: Any = None) -> str:
        with pytest.raises(ProtocolCorruption) as exc:
            self(call, payload, tails, blob)
        return exc.value.reason


def _reference_block(seed: int) -> bytes:
    """A RenderStateParameters with every byte set (built through the layouts)."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, RS_SIZE, dtype=np.uint8).tobytes()
    rec = layouts.view(RS_STRUCT, raw)
    return layouts.from_dict(RS_STRUCT, {n: rec[n] for n in rec.dtype.names}).tobytes()


def _gather(block: bytes, chunks: tuple[tuple[int, int], ...]) -> bytes:
    return b"".join(block[o : o + n] for o, n in chunks)


def test_mask_all_is_the_tables_constant() -> None:
    from mgpipe.runtime.schema import tables as t

    # all ones: every bit of the Uint32 ChunkMask; the mask of exactly the half's chunk bits
    # ((1 << kMGPipe*ChunkCount) - 1, MobileGL's spelling) names every chunk as well
    assert t.constant("kMGPipeRenderStateChunkMaskAll") == ALL
    assert mask_all() == t.field("MGPRenderStateDesc", "ChunkMask").max_value == ALL
    p = Pipe()
    block = _reference_block(2)
    p("CreateRenderState", {"Cso": Handle(1, 1), "ChunkMask": (1 << len(PIPE)) - 1},
      blob=_gather(block, PIPE))  # fmt: skip
    p("BindRenderState", {"Cso": Handle(1, 1)})
    p("SetDynamicState", {"ChunkMask": (1 << len(DYN)) - 1}, blob=_gather(block, DYN))
    assert bytes(p.applier.ctx.render_state.data) == block


def test_handle_mapping_covers_every_call_and_its_gate_goes_red(monkeypatch: Any) -> None:
    assert handle_fields.coverage_problems() == []
    assert set(handle_fields.HANDLE_FIELDS) == {row["name"] for row in _calls()}
    broken = {k: dict(v) for k, v in handle_fields.HANDLE_FIELDS.items()}
    del broken["SetSamplerViews"]["MGPBoundView[].Texture"]
    broken["Present"]["Nope"] = "Buffer"
    monkeypatch.setattr(handle_fields, "HANDLE_FIELDS", broken)
    assert handle_fields.coverage_problems() == [
        "Present.Nope: mapped but carries no handle",
        "SetSamplerViews.MGPBoundView[].Texture: handle field not mapped",
    ]


def _calls() -> tuple[dict, ...]:
    from mgpipe.runtime.schema import tables as t

    return t.tables().CALLS


def _create_cso(p: Pipe, h: Handle, block: bytes) -> None:
    p("CreateRenderState", {"Cso": h, "ChunkMask": ALL}, blob=_gather(block, PIPE))


def test_handle_refusals_are_named() -> None:
    p = Pipe()
    block = _reference_block(1)
    assert p.refused("BindRenderState", {"Cso": Handle(1, 1)}) == "BindRenderState.Cso.Unknown"
    _create_cso(p, Handle(1, 1), block)
    assert p.refused("BindRenderState", {}) == "BindRenderState.Cso.Null"
    assert p.refused("BindRenderState", {"Cso": Handle(1, 2)}) == "BindRenderState.Cso.Unknown"
    assert p.refused("CreateRenderState", {"Cso": Handle(1, 1), "ChunkMask": ALL},
                     blob=_gather(block, PIPE)) == "CreateRenderState.Cso.Backward"  # fmt: skip
    p("DeleteRenderState", {"Handle": Handle(1, 1)})
    assert p.refused("BindRenderState", {"Cso": Handle(1, 1)}) == "BindRenderState.Cso.Stale"
    assert p.refused("DeleteRenderState", {"Handle": Handle(1, 1)}) == (
        "DeleteRenderState.Handle.Stale"
    )
    assert p.refused("DeleteRenderState", {}) == "DeleteRenderState.Handle.Null"
    assert p.refused("CreateRenderState", {"Cso": Handle(1, 1), "ChunkMask": ALL},
                     blob=_gather(block, PIPE)) == "CreateRenderState.Cso.Backward"  # fmt: skip
    _create_cso(p, Handle(1, 2), block)  # the slot reused with the next gen
    p("BindRenderState", {"Cso": Handle(1, 2)})
    assert p.refused("BindRenderState", {"Cso": Handle(1, 1)}) == "BindRenderState.Cso.Stale"


def test_null_is_legal_only_where_nothing_may_be_bound() -> None:
    p = Pipe()
    p("SetVertexBuffers", {"Start": 3, "Count": 2}, [[{}, {}]])  # null = nothing bound
    p("SetDrawProgram", {})
    p("ResourceCreate", {"Resource": Handle(1, 1), "Target": _target("Tex2D")})
    assert p.refused("SetTextureParams", {"Res": Handle(1, 1)}) == (
        "SetTextureParams.BuiltinSampler.Null"  # D-E1: never null
    )
    assert p.refused("SetSamplerViews", {"Count": 1}, [[{"View": Handle(4, 1)}]]) == (
        "SetSamplerViews.MGPBoundView[0].View.Unknown"
    )
    # a texture where a buffer is required is refused by kind
    assert p.refused("SetVertexBuffers", {"Count": 1}, [[{"Res": Handle(1, 1)}]]) == (
        "SetVertexBuffers.MGPVertexBuffer[0].Res.Kind"
    )


def test_a_refused_record_changes_nothing() -> None:
    p = Pipe()
    fbo = Handle(5, 1)
    stale = {"Fbo": fbo, "Color": [{"Res": Handle(9, 1)}]}
    assert p.refused("SetFramebufferState", stale) == "SetFramebufferState.Color[0].Res.Unknown"
    assert fbo not in p.applier.tables["Framebuffer"]  # the implicit create did not happen
    p("SetFramebufferState", {"Fbo": fbo})
    assert fbo in p.applier.tables["Framebuffer"] and p.applier.ctx.draw_framebuffer == fbo


def test_default_framebuffer_resolves_and_cannot_die() -> None:
    p = Pipe()
    dfb = default_framebuffer()
    p("SetFramebufferState", {"Fbo": dfb, "Target": 2})
    p("Blit", {"ReadFbo": dfb, "DrawFbo": dfb})
    assert p.applier.ctx.read_framebuffer == dfb
    assert p.refused("ObjectDeath", {"Handle": dfb, "Kind": KIND["Framebuffer"]}) == (
        "ObjectDeath.Handle.Null"
    )
    assert p.refused("Blit", {"ReadFbo": dfb}) == "Blit.DrawFbo.Null"


def test_object_death_follows_the_wire_delete_once() -> None:
    p = Pipe()
    buf = KIND["Buffer"]
    p("ResourceCreate", {"Resource": Handle(2, 1), "Target": _target("Buffer")})
    p("ResourceDestroy", {"Handle": Handle(2, 1), "Kind": buf})
    p("ObjectDeath", {"Handle": Handle(2, 1), "Kind": buf})
    assert p.refused("ObjectDeath", {"Handle": Handle(2, 1), "Kind": buf}) == (
        "ObjectDeath.Handle.Stale"
    )
    assert p.refused("ObjectDeath", {"Handle": Handle(2, 1), "Kind": 200}) == "ObjectDeath.Kind"
    # MGPipeKind::None names no object
    assert p.refused("ObjectDeath", {"Handle": Handle(2, 1), "Kind": 0}) == "ObjectDeath.Kind"
    # no MobileGL record carries an Xfb handle (BindStreamOutput names a GL name): the
    # implicit kind the wire does name is the framebuffer
    fbo = KIND["Framebuffer"]
    p("SetFramebufferState", {"Fbo": Handle(3, 1)})  # a framebuffer: created at first use ...
    p("ObjectDeath", {"Handle": Handle(3, 1), "Kind": fbo})  # ... gone at its death
    assert p.refused("SetFramebufferState", {"Fbo": Handle(3, 1)}) == (
        "SetFramebufferState.Fbo.Stale"
    )


def test_render_state_scatter_gives_the_reference_block() -> None:
    p = Pipe()
    a, b = _reference_block(7), _reference_block(8)
    ctx = p.applier.ctx
    _create_cso(p, Handle(1, 1), a)
    v0 = ctx.render_state.version
    p("BindRenderState", {"Cso": Handle(1, 1), "Version": 11, "PipelineVersion": 4})
    p("SetDynamicState", {"ChunkMask": ALL, "Version": 12}, blob=_gather(a, DYN))
    assert bytes(ctx.render_state.data) == a
    assert (ctx.render_state_version, ctx.pipeline_version, ctx.dynamic_version) == (11, 4, 12)
    assert ctx.render_state.version == (v0 + 2) & 0xFFFF
    assert ctx.render_state.view().tobytes() == a  # the numpy view reads the same block

    # only dynamic chunks 0 and 5 move, taken from b, in bit order
    mask = 1 | 1 << 5
    p("SetDynamicState", {"ChunkMask": mask, "Version": 13}, blob=_gather(b, (DYN[0], DYN[5])))
    want = bytearray(a)
    for o, n in (DYN[0], DYN[5]):
        want[o : o + n] = b[o : o + n]
    assert bytes(ctx.render_state.data) == bytes(want)

    # an incremental create: pipeline chunk 1 from b, the rest from the base CSO (a)
    p("CreateRenderState", {"Cso": Handle(2, 1), "BaseCso": Handle(1, 1), "ChunkMask": 0b10},
      blob=_gather(b, (PIPE[1],)))  # fmt: skip
    p("BindRenderState", {"Cso": Handle(2, 1)})
    o, n = PIPE[1]
    want[o : o + n] = b[o : o + n]
    assert bytes(ctx.render_state.data) == bytes(want)

    before = bytes(ctx.render_state.data)
    assert p.refused("SetDynamicState", {"ChunkMask": 1}, blob=b"\0") == "SetDynamicState.Blob"
    assert p.refused("SetDynamicState", {"ChunkMask": 1 << len(DYN)}) == (
        "SetDynamicState.ChunkMask"
    )
    assert p.refused("CreateRenderState", {"Cso": Handle(3, 1), "ChunkMask": 1},
                     blob=_gather(b, PIPE[:1])) == "CreateRenderState.BaseCso"  # fmt: skip
    assert bytes(ctx.render_state.data) == before


def test_null_entry_is_refused_and_optional_entry_is_skipped() -> None:
    class Partial:
        def ResourceCreate(self, ctx: Any, d: Any) -> str:
            return "made"

    p = Pipe(Partial())
    assert p("ResourceCreate", {"Resource": Handle(1, 1)}) == "made"
    with pytest.raises(NullEntry) as exc:
        p("ResourceDestroy", {"Handle": Handle(1, 1)})
    assert exc.value.call == "ResourceDestroy" and exc.value.kind == "UnimplementedCall"
    assert Handle(1, 1) in p.applier.tables["Resource"]  # refused before any change
    assert p("SetSwapInterval", {"Interval": 1}) is None  # kOptional: skipped, counted
    assert p("UnmapPersistent", {"Handle": Handle(1, 1)}) is None
    assert p.applier.skipped == {"SetSwapInterval": 1, "UnmapPersistent": 1}
    with pytest.raises(HandleRefused):  # a skipped entry still validates its handles
        p("UnmapPersistent", {"Handle": Handle(7, 1)})


def test_backend_table_refuses_a_mistyped_entry() -> None:
    class Typo:
        def DrawVBO(self, ctx: Any, d: Any) -> None: ...

    with pytest.raises(ValueError, match="DrawVBO.*'DrawVbo'"):
        build_table(Typo())
    table = build_table(Recorder())
    assert len(table) == len(tables().CALLS) and all(callable(v) for v in table.values())


def t_constant(name: str) -> int:
    from mgpipe.runtime.schema import tables as t

    return t.constant(name)


def _scene(p: Pipe, serial: int = 1) -> None:
    block = _reference_block(3)
    p("ResourceCreate", {"Resource": Handle(1, 1), "Target": _target("Buffer")})
    p("ResourceCreate", {"Resource": Handle(2, 1), "Target": _target("Tex2D")})
    p("CreateSamplerView", {"Cso": Handle(1, 1), "Texture": Handle(2, 1)})
    _create_cso(p, Handle(1, 1), block)
    p("BindRenderState", {"Cso": Handle(1, 1), "Version": 1, "PipelineVersion": 1})
    p("SetDynamicState", {"ChunkMask": ALL, "Version": 1}, blob=_gather(block, DYN))
    p("SetVertexBuffers", {"Start": 0, "Count": 1}, [[{"Res": Handle(1, 1), "Stride": 12}]])
    p("SetSamplerViews", {"Start": 2, "Count": 1}, [[{"View": Handle(1, 1),
                                                      "Texture": Handle(2, 1)}]])  # fmt: skip
    p("SetIndexBuffer", {"Res": Handle(1, 1), "IndexSize": 2})
    p("SetFramebufferState", {"Fbo": default_framebuffer()})
    p("DrawVbo", {"Mode": 4, "IndexSize": 2, "NumDraws": 1, "IndexResource": Handle(1, 1)},
      [[{"Count": 6}]])  # fmt: skip
    p("Clear", {"Kind": t_constant("kMGPipeClearKindWhole"), "BufferMask": 0x4000,
                "DrawBufferIndex": -1, "ColorValue": [0, 0x3F800000, 0, 0]})  # fmt: skip
    p("Present", {"FrameSerial": serial})


def test_recorder_digest_is_stable_and_round_trips_json() -> None:
    runs = []
    for _ in range(2):
        p = Pipe()
        _scene(p)
        runs.append(p.backend)
    first, second = runs
    assert first.recording_digest() == second.recording_digest()
    assert [r["call"] for r in first.records] == ["DrawVbo", "Clear", "Present"]
    state = first.records[0]["state"]
    assert state["windows"]["SetSamplerViews"]["2"]["View"] == {"Slot": 1, "Gen": 1}
    assert state["last"]["SetIndexBuffer"]["IndexSize"] == 2
    assert first.counts["ResourceCreate"] == 2
    again = Recorder.from_json(first.to_json())
    assert again.recording_digest() == first.recording_digest()
    other = Pipe()
    _scene(other, serial=2)  # one pushed value differs -> the digest differs
    assert other.backend.recording_digest() != first.recording_digest()
    with pytest.raises(ValueError, match="digest"):
        Recorder.from_json(first.to_json().replace('"FrameSerial": 1', '"FrameSerial": 3'))
