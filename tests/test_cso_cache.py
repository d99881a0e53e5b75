"""The client render-state CSO cache (seed 001 §2.3, §5.3; seed 004 §4.5.2)."""

from __future__ import annotations

from typing import Any

import pytest

from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.client.cso_cache import RenderStateCsoCache
from mgpipe.runtime.wire.handle import Handle
from mgpipe.runtime.client.render_state import RenderState
from mgpipe.runtime.wire.header import header_size
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.wire.spec import align8, call_spec
from mgpipe.runtime.wire.stage import StageSegment


class Capture:
    """An emitter that keeps (call, payload, blob) of every record, fast ones included."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], bytes | None]] = []
        self.stage = StageSegment(1 << 20)  # the dynamic push stages here itself

    def emit(self, call: str, payload: dict[str, Any], tails: tuple = (),
             blob: bytes | None = None) -> None:  # fmt: skip
        self.calls.append((call, dict(payload), blob))

    def stage_blob(self, data: bytes) -> tuple[int, int, int]:
        return self.stage.stage(data)

    def room(self, nbytes: int) -> None:
        raise AssertionError(f"a test stage of {self.stage.capacity} B filled up")

    def fast(self, call: str, names: Any, tail_names: Any = None, tail_count: int = 1) -> Any:
        def emit(*values: Any) -> None:
            payload: dict[str, Any] = {}
            for name, v in zip(names, values):
                head, _, sub = name.partition(".")
                if sub:
                    payload.setdefault(head, {})[sub] = v
                else:
                    payload[head] = v
            blob = None
            for k, v in list(payload.items()):
                if isinstance(v, dict) and set(v) == {"Slot", "Gen"}:
                    payload[k] = Handle(v["Slot"], v["Gen"])
                elif isinstance(v, dict) and "Offset" in v:
                    blob = bytes(self.stage.view((v["Offset"], v["Size"], v["Seg"])))
            self.calls.append((call, payload, blob))

        return emit

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def count(self, name: str) -> int:
        return self.names().count(name)


def _record_size(call: str) -> int:
    """A tail-less record: header + payload, 8-aligned (sizes from the tables)."""
    return align8(header_size() + call_spec(call).payload_size)


def _draw_record_size() -> int:
    """DrawVbo with one MGPDrawRange (the only tail present when Flags == 0)."""
    spec = call_spec("DrawVbo")
    rng = next(t for t in spec.tails if t.element == "MGPDrawRange")
    return align8(align8(header_size() + spec.payload_size) + rng.dtype.itemsize)


# -- Blaze3D: enable blend / draw / disable blend / draw ----------------------------
@pytest.mark.parametrize("n", [1, 10, 100])
def test_blend_toggle_mints_exactly_two_csos(n: int) -> None:
    res = run_scene("blend-toggle", n=n)
    counts = res.backend.counts
    assert res.csos_minted == 2
    assert counts["CreateRenderState"] == 2
    assert counts["BindRenderState"] == 2 * n  # every draw after a toggle: a 12-byte bind
    assert counts["DrawVbo"] == 2 * n
    stats = res.client.tr.cso.stats
    assert stats.hits + stats.transition_hits == 2 * n - 2
    # toggling between two known states: after the first round trip no gather, no hash
    assert stats.hashes == min(2 * n, 3) and stats.transition_hits == max(2 * n - 3, 0)
    assert stats.byte_compares == stats.hits  # every content-addressed hit was confirmed


def test_blend_toggle_steady_state_bytes_per_draw(capsys: pytest.CaptureFixture[str]) -> None:
    small, big = run_scene("blend-toggle", n=10), run_scene("blend-toggle", n=100)
    per_draw = (big.wire_bytes - small.wire_bytes) / (big.draws - small.draws)
    bind = _record_size("BindRenderState")
    assert _t.struct_info("MGPBindRenderState")["size"] == 12
    assert per_draw == bind + _draw_record_size()  # a bind + the draw, nothing else
    with capsys.disabled():
        print(f"\n[blend-toggle] steady state: {per_draw:.1f} wire B/draw "
              f"(BindRenderState {bind} B + DrawVbo {_draw_record_size()} B), 2 CSOs for N=1/10/100")  # fmt: skip


# -- glViewport churn: the dynamic half never mints ---------------------------------
def _viewports(n: int) -> set[tuple[int, int, int, int]]:
    return {(i % 37, i // 37, 640 - i % 97, 480 - i % 89) for i in range(n)} | {(0, 0, 640, 480)}


def test_viewport_churn_mints_no_additional_cso(capsys: pytest.CaptureFixture[str]) -> None:
    base = run_scene("viewport-churn", n=1)
    churn = run_scene("viewport-churn", n=1000)
    assert churn.draws == 1000
    assert churn.csos_minted - base.csos_minted == 0
    stats = churn.client.tr.cso.stats
    assert stats.hashes == base.client.tr.cso.stats.hashes  # zero hashing on the churn
    # the first draw pushes every dynamic chunk; each later viewport, only its chunk
    assert churn.backend.counts["SetDynamicState"] == 1000 == len(_viewports(1000))
    control = run_scene("viewport-churn", n=1000, whole_block=True)
    assert control.csos_minted == len(_viewports(1000))  # one CSO per distinct viewport
    with capsys.disabled():
        print(f"\n[viewport-churn] 1000 viewports: {churn.csos_minted} CSO(s) "
              f"(+{churn.csos_minted - base.csos_minted}); whole-block control: "
              f"{control.csos_minted} CSOs, {control.backend.counts['DeleteRenderState']} deletes")  # fmt: skip


# -- the fetch order, unit level --------------------------------------------------------
def test_zero_hashing_while_the_pipeline_version_stands() -> None:
    cap, rs = Capture(), RenderState()
    cache = RenderStateCsoCache(cap)
    cache.validate(rs)
    assert cache.stats.hashes == 1 and cap.names() == ["CreateRenderState", "BindRenderState",
                                                       "SetDynamicState"]  # fmt: skip
    for i in range(100):
        rs.set_viewport(0, 0, 100 + i, 100)
        rs.set_clear_color(i / 100, 0, 0, 1)
        cache.validate(rs)
    assert cache.stats.hashes == 1
    assert cache.stats.reuses == 100
    assert cap.count("BindRenderState") == 1
    rs.set_depth_func("Greater")
    cache.validate(rs)
    assert cache.stats.hashes == 2 and cache.stats.minted == 2


def test_hit_binds_with_twelve_bytes_and_no_blob() -> None:
    cap, rs = Capture(), RenderState()
    cache = RenderStateCsoCache(cap)
    cache.validate(rs)
    first = cache.bound
    rs.set_capability("Blend", True)
    cache.validate(rs)
    rs.set_capability("Blend", False)
    del cap.calls[:]
    cache.validate(rs)
    assert cap.names() == ["BindRenderState"]
    call, payload, blob = cap.calls[0]
    assert payload["Cso"] == first and blob is None
    assert (payload["Version"], payload["PipelineVersion"]) == (rs.version, rs.pipeline_version)


def test_create_carries_the_pipeline_chunks_in_order() -> None:
    cap, rs = Capture(), RenderState()
    RenderStateCsoCache(cap).validate(rs)
    call, payload, blob = cap.calls[0]
    block = rs.block_bytes()
    chunks = _t.tables().RENDER_STATE["pipeline_chunks"]
    assert call == "CreateRenderState"
    # MobileGL's ABI has no kMGPipeRenderStateChunkMaskAll: all ones is ChunkMask's largest value
    assert payload["ChunkMask"] == _t.field("MGPRenderStateDesc", "ChunkMask").max_value
    assert blob == b"".join(block[o : o + n] for o, n in chunks)
    assert len(blob) == sum(n for _, n in chunks)


def test_dynamic_push_carries_only_the_changed_chunks() -> None:
    cap, rs = Capture(), RenderState()
    cache = RenderStateCsoCache(cap)
    cache.validate(rs)
    dyn = _t.tables().RENDER_STATE["dynamic_chunks"]
    off = next(m["offset"] for m in _t.struct_info("RenderStateParameters")["members"]
               if m["name"] == "ClearColor")  # fmt: skip
    bit = next(i for i, (o, n) in enumerate(dyn) if o <= off < o + n)
    del cap.calls[:]
    rs.set_clear_color(0.5, 0.5, 0.5, 1.0)
    cache.validate(rs)
    ((call, payload, blob),) = cap.calls
    assert call == "SetDynamicState" and payload["ChunkMask"] == 1 << bit
    o, n = dyn[bit]
    assert blob == rs.block_bytes()[o : o + n] and payload["Version"] == rs.version
    del cap.calls[:]
    cache.validate(rs)  # nothing moved: nothing sent
    assert cap.calls == []


def test_lru_eviction_at_capacity_plus_one_deletes_the_oldest() -> None:
    cap, rs = Capture(), RenderState()
    capacity = _t.constant("kMGPipeCsoCacheCapacity")
    cache = RenderStateCsoCache(cap)
    minted: list[Handle] = []
    for i in range(capacity + 1):
        rs.set_sample_mask_value(i)
        cache.validate(rs)
        minted.append(cache.bound)
    assert cache.stats.minted == capacity + 1 == 65
    deletes = [c for c in cap.calls if c[0] == "DeleteRenderState"]
    assert len(deletes) == 1 and deletes[0][1]["Handle"] == minted[0]
    i_del = cap.calls.index(deletes[0])
    assert (
        cap.calls[i_del + 1][0] == "CreateRenderState"
    )  # delete, then the create it made room for
    assert minted[-1].slot == minted[0].slot and minted[-1].gen == minted[0].gen + 1
    assert cache.live == capacity
    rs.set_sample_mask_value(0)  # the evicted state: a miss again
    cache.validate(rs)
    assert cache.stats.minted == capacity + 2


def test_whole_block_control_mints_per_viewport() -> None:
    cap, rs = Capture(), RenderState()
    cache = RenderStateCsoCache(cap, whole_block=True)
    for i in range(10):
        rs.set_viewport(0, 0, 100 + i, 100)
        cache.validate(rs)
    assert cache.stats.minted == 10
    good = RenderStateCsoCache(Capture())
    rs2 = RenderState()
    for i in range(10):
        rs2.set_viewport(0, 0, 100 + i, 100)
        good.validate(rs2)
    assert good.stats.minted == 1
