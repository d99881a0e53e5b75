"""SyncRenderState (Espryt's shape) on a live GLES context: the version early-out, the
three span gates, the resolved scissor shadow (zero box kept), the enum translation."""

from __future__ import annotations

import pytest

from mgpipe.runtime.backends.gles.glenums import TRANSLATED, gl_table, gl_token
from mgpipe.runtime.backends.gles.sync import span_bounds
from mgpipe.runtime.harness.scenes.kit import GL, quad, setup
from mgpipe.runtime.schema import tables as _t

from _gles import gles_client

RED = (1.0, 0.0, 0.0, 1.0)


def test_span_bounds_are_the_generated_espryt_spans() -> None:
    rs = _t.tables().RENDER_STATE
    struct, begin, end, size = span_bounds()
    assert (begin, end) == (rs["espryt_spans"]["kMGPipeBlendSpanBegin"],
                            rs["espryt_spans"]["kMGPipeBlendSpanEnd"])  # fmt: skip
    assert size == _t.struct_info(struct)["size"]
    offs = {m["name"]: m["offset"] for m in _t.struct_info(struct)["members"]}
    assert (begin, end) == (offs["BlendStates"], offs["LogicOp"])


def _draws(c, n: int = 1) -> None:  # type: ignore[no-untyped-def]
    for _ in range(n):
        c.draw_arrays(GL.TRIANGLES, 0, 6)


def test_unchanged_version_returns_before_comparing() -> None:
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, RED))
        _draws(c)
        before = dict(be.gl.counts), dict(be.sync.stats)
        _draws(c, 5)
        c.present()
    counts, stats = dict(be.gl.counts), dict(be.sync.stats)
    assert stats["early_out"] - before[1].get("early_out", 0) == 5
    moved = {k: v - before[0].get(k, 0) for k, v in counts.items() if v != before[0].get(k, 0)}
    # one error check per draw (its OnGlError is the draw's) and the frame's at Present
    assert moved == {"glDrawArrays": 5, "glFlush": 1, "glGetError": 6}


@pytest.mark.parametrize("change,span,calls", [
    (lambda c: c.state.set_polygon_offset(1.0, 2.0), "head", {"glPolygonOffset": 1}),
    (lambda c: c.enable("Blend"), "blend", {"glEnable": 1}),
    (lambda c: c.depth_func("Greater"), "tail", {"glDepthFunc": 1}),
    (lambda c: c.state.set_stencil_func("Back", "Equal", 3, 7), "tail", {"glStencilFuncSeparate": 1}),
    (lambda c: c.state.set_blend_func_indexed(1, "One", "One", "One", "One"), "blend",
     {"glBlendFuncSeparatei": 1}),  # only the buffer that moved
])  # fmt: skip
def test_a_span_change_issues_only_its_calls(change, span: str, calls: dict) -> None:  # type: ignore[no-untyped-def]
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, RED))
        _draws(c)
        counts, stats = dict(be.gl.counts), dict(be.sync.stats)
        change(c)
        _draws(c)
    moved = {k: v - counts.get(k, 0) for k, v in be.gl.counts.items() if v != counts.get(k, 0)}
    assert moved.pop("glDrawArrays") == moved.pop("glGetError") == 1  # the draw and its check
    assert moved == calls
    spans = {k: be.sync.stats[k] - stats.get(k, 0) for k in ("head", "blend", "tail")}
    assert spans == {s: int(s == span) for s in spans}


def test_zero_scissor_box_reaches_gl_as_zero() -> None:
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, RED))
        c.enable("ScissorTest")
        c.scissor(0, 0, 0, 0)
        _draws(c)
        assert be.sync.scissor == (0, 0, 0, 0)
        c.scissor(1, 2, 3, 4)
        _draws(c)
        assert be.sync.scissor == (1, 2, 3, 4)


def test_unwritten_scissor_and_viewport_resolve_to_the_surface() -> None:
    with gles_client(size=48) as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, RED))
        _draws(c)
        assert be.sync.viewport == (0, 0, 48, 48) and be.sync.scissor == (0, 0, 48, 48)


def test_every_translated_enumerator_has_a_gl_value() -> None:
    for enum in TRANSLATED:
        table = gl_table(enum)
        assert len(table) == len(_t.enum_members(enum))  # the Count / Unknown sentinels: no GL
        assert len(set(table)) == len(table), f"{enum}: two enumerators share a GL value"
    assert gl_token("DepthTestFunc", "LessEqual") == 0x0203
    with pytest.raises(LookupError, match="NoSuchThing"):
        gl_token("BlendFactor", "NoSuchThing")


def test_a_new_surface_size_re_resolves_the_fallback_boxes_only() -> None:
    with gles_client(size=48) as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, RED))
        c.viewport(0, 0, 0, 0)  # a zero box: the backend's fallback (GL's initial boxes are
        # the surface, tests/test_gl_initial_state.py)
        _draws(c)
        fb = c.create_framebuffer()
        c.framebuffer_texture(fb, 0, c.create_texture_2d(16, 8))
        c.bind_framebuffer(fb)
        before = dict(be.gl.counts)
        _draws(c)
        assert be.sync.viewport == (0, 0, 16, 8)
    moved = {k for k, v in be.gl.counts.items() if v != before.get(k, 0)}
    assert "glViewport" in moved and "glDepthFunc" not in moved


def test_gl_calls_are_counted_per_frame() -> None:
    """clear-present: after the first frame, a frame is glClearColor + glClear + the
    clear's glGetError + glFlush + the frame's glGetError."""
    from mgpipe.runtime.harness.runner import run_scene

    res = run_scene("clear-present", backend="gles", n=5)
    per_frame = res.backend.info()["gl_calls_per_frame"]
    assert len(per_frame) == 5 and per_frame[1:] == [5, 5, 5, 5]
    assert sum(per_frame) == res.backend.stats()["gl_calls"]
    assert res.backend.stats()["gl_calls_last_frame"] == 5
