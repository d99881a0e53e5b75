"""``SetProgramBindings`` (glUniformBlockBinding after link) as both backends read it: one
decode of the record's tails (runtime/server/program_bindings.py), the tails found by
their count fields in the generated TAILS table.

End to end: the ``ubo-array`` scene's std140 block moved from binding 0 to binding 5 reads
the buffer bound at 5 -- the scene's probes, on both backends. Controls: with the buffer
still at 0 (the block's old point) the draw is refused by name at the empty point 5, on
both backends (never the right picture from the wrong binding); a tail counted by no field of
the call is a named table error.
"""

from __future__ import annotations

import struct

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.harness.runner import run_scene
from mgpipe.runtime.harness.scenes import RENDER_SCENES, Scene, render
from mgpipe.runtime.harness.scenes.kit import GL, quad, setup
from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.server.program_bindings import tail_index

MOVED = 5


def _moved_ubo(bind_at: int):
    def run(c, n):
        floats: list[float] = []
        for i in range(4):
            x0, y0 = -1.0 + (i % 2), -1.0 + (i // 2)
            floats += quad(x0, y0, x0 + 1, y0 + 1, 0, (float(i), 0.0, 0.0, 0.0))
        _, prog = setup(c, floats, "ubo")
        c.uniform_block_binding(prog, 0, MOVED)  # glUniformBlockBinding after link
        block = struct.pack("<16f", *render.UBO_MVP) + b"".join(
            struct.pack("<4f", *col) for col in render.UBO_COLORS)
        c.bind_buffer_base("uniform", bind_at, c.create_buffer(block))
        render.frame(c)
        c.draw_arrays(GL.TRIANGLES, 0, 24)
        return render.finish(c)

    return run


def _run(backend: str, bind_at: int, monkeypatch):
    name = f"ubo-moved-{bind_at}"
    monkeypatch.setitem(RENDER_SCENES, name, Scene(name, _moved_ubo(bind_at), 1, "", render.SIZE,
                                                  render.SIZE, render.probes_ubo_array))  # fmt: skip
    return run_scene(name, backend, "monolith")


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_a_block_moved_by_uniform_block_binding_reads_its_new_point(backend, monkeypatch):
    res = _run(backend, MOVED, monkeypatch)
    assert [m for p in render.probes_ubo_array(1) if (m := p.check(res.images))] == []


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_negative_control_the_buffer_at_the_block_s_old_point_is_not_read(backend, monkeypatch):
    with pytest.raises(PipeFatal, match=r'Fatal\{DriverRefused, "DrawVbo.uniform block '
                       rf"'Scene' \(binding point {MOVED}\)\"\}}: no buffer is bound there"):  # fmt: skip
        _run(backend, 0, monkeypatch)


def test_the_tails_are_found_by_their_count_fields() -> None:
    rows = [r["count_field"] for r in _t.tables().TAILS if r["call"] == "SetProgramBindings"]
    assert [tail_index("SetProgramBindings", f) for f in rows] == list(range(len(rows)))
    with pytest.raises(_t.TablesError, match="SetProgramBindings has no tail counted by "
                                             "NoSuchCount"):  # fmt: skip
        tail_index("SetProgramBindings", "NoSuchCount")
