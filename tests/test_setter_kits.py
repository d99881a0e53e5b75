"""The precompiled setter kits write exactly what the general (numpy write + diff) path
writes: same bytes, same counters, same dirty chunks, same pipeline log, same refusals."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mgpipe.runtime.client import render_block, setter_rows
from mgpipe.runtime.client.render_state import RenderState

FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),  # f64: some overflow f32 (general path)
    st.floats(width=32),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0.0, -0.0, math.nan, 1e300, -1e-300, 3.4028235e38]),
)
INTS = st.one_of(st.integers(-(2**33), 2**33), st.booleans(), st.floats(-10, 10))
FACE = st.sampled_from(["Front", "Back", "FrontAndBack", 0x404, 0x405, 0x408, 7])
FUNC = st.sampled_from(["Never", "Always", "Less", 0x207, 12345, "NoSuchFunc"])
OP = st.sampled_from(["Keep", "Zero", "Invert", 0x1E00, 3])
CAP = st.sampled_from(["Blend", "DepthTest", "ScissorTest", "ClipDistance3", "StencilTest"])

CALLS: dict[str, Any] = {
    "set_viewport": st.tuples(FLOATS, FLOATS, FLOATS, FLOATS),
    "set_line_width": st.tuples(FLOATS),
    "set_point_size": st.tuples(FLOATS),
    "set_polygon_offset": st.tuples(FLOATS, FLOATS),
    "set_polygon_offset_clamped": st.tuples(FLOATS, FLOATS, FLOATS),
    "set_clear_color": st.tuples(FLOATS, FLOATS, FLOATS, FLOATS),
    "set_clear_depth": st.tuples(FLOATS),
    "set_blend_color": st.tuples(FLOATS, FLOATS, FLOATS, FLOATS),
    "set_depth_range": st.tuples(FLOATS, FLOATS),
    "set_scissor_box": st.tuples(INTS, INTS, INTS, INTS),
    "set_stencil_mask": st.tuples(FACE, INTS),
    "set_stencil_func": st.tuples(FACE, FUNC, INTS, INTS),
    "set_stencil_op": st.tuples(FACE, OP, OP, OP),
    "set_capability": st.tuples(CAP, st.booleans()),
    "set_depth_func": st.tuples(FUNC),
    "set_depth_mask": st.tuples(INTS),
    "set_cull_face_mode": st.tuples(FACE),
    "set_polygon_mode": st.tuples(INTS, INTS),
    "set_sample_mask_value": st.tuples(INTS),
}


def _observe(rs: RenderState, method: str, args: tuple) -> tuple:
    try:
        getattr(rs, method)(*args)
        error = None
    except Exception as exc:  # the refusal itself is part of what must match
        error = type(exc)
    return (error, rs.block_bytes(), rs.version_wide, rs.pipeline_version_wide, rs.dyn_dirty,
            rs.pipe_log)  # fmt: skip


def _general(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every setter without a kit: the general path only."""
    monkeypatch.setattr(setter_rows, "KITS", _NoKits())
    import mgpipe.runtime.client.render_state as rs_mod

    monkeypatch.setattr(rs_mod, "KITS", setter_rows.KITS)
    monkeypatch.setattr(render_block, "_check", lambda patch: None)  # range by range


class _NoKits(dict):
    def __getitem__(self, key: object) -> object:
        return ()


@pytest.mark.parametrize("method", sorted(CALLS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_kit_writes_what_the_general_path_writes(method: str, data: st.DataObject) -> None:
    calls = data.draw(st.lists(CALLS[method], min_size=1, max_size=4), label="calls")
    fast = RenderState()
    got = [_observe(fast, method, a) for a in calls]
    with pytest.MonkeyPatch.context() as mp:
        _general(mp)
        slow = RenderState()
        want = [_observe(slow, method, a) for a in calls]
    assert got == want


def test_the_kits_are_taken() -> None:
    """The hot setters do compile a kit (a kit that silently never applies proves nothing)."""
    rs = RenderState()
    rs.set_viewport(1, 2, 3, 4)
    rs.set_scissor_box(1, 2, 3, 4)
    rs.set_line_width(2.0)
    rs.set_polygon_offset(1.0, 2.0)
    rs.set_blend_color(0.1, 0.2, 0.3, 0.4)
    rs.set_stencil_func("FrontAndBack", "Always", 3, 0xFF)
    for setter in ("SetViewport", "SetScissorBox", "SetLineWidth", "SetPolygonOffset",
                   "SetBlendColor", "SetStencilFunc"):  # fmt: skip
        assert setter_rows.KITS.get(setter), setter
