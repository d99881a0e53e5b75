"""Input the decoder accepts but the driver would reject: a named refusal, GL's words attached.

Each case runs through both transports: under ``inproc`` the refusal raised on the apply
thread reaches the client thread as the same exception.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from mgpipe.runtime.backends.gles import DriverRefused
from mgpipe.runtime.harness.scenes.kit import GL, quad, setup
from mgpipe.runtime.harness.shaders.programs import load

from _gles import TRANSPORTS, gles_client


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_texture_above_max_texture_size(transport: str) -> None:
    with pytest.raises(DriverRefused) as info:
        with gles_client(transport) as (c, be):
            c.create_texture_2d(1 << 20, 4)
    assert info.value.reason == "ResourceRespecify.Width"
    assert "GL_MAX_TEXTURE_SIZE" in info.value.log and str(1 << 20) in info.value.log


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_draw_past_the_end_of_a_vertex_buffer(transport: str) -> None:
    with pytest.raises(DriverRefused) as info:
        with gles_client(transport) as (c, be):
            setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))  # 6 vertices
            c.draw_arrays(GL.TRIANGLES, 3, 6)  # vertices 3..8
            c.present()
    assert info.value.reason == "DrawVbo.VertexRange"
    assert "element 8" in info.value.log and "168-byte buffer" in info.value.log


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_indexed_draw_past_the_end(transport: str) -> None:
    with pytest.raises(DriverRefused) as info:
        with gles_client(transport) as (c, be):
            setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
            c.bind_index_buffer(c.create_buffer(struct.pack("<3H", 0, 1, 6)))  # index 6: no vertex
            c.draw_elements(GL.TRIANGLES, 3, 2)
            c.present()
    assert info.value.reason == "DrawVbo.VertexRange"


def test_a_draw_inside_its_buffer_is_not_refused() -> None:
    """Control: the same draws, in range, render."""
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        c.bind_index_buffer(c.create_buffer(struct.pack("<3H", 0, 1, 5)))
        c.draw_elements(GL.TRIANGLES, 3, 2)
        c.present()
    assert be.draws == 2


def _bake(tmp: Path, body: str) -> bytes:
    src = tmp / "bad.frag"
    src.write_text("#version 450\nlayout(location = 0) in vec4 v_color;\n"
                   "layout(location = 0) out vec4 o_color0;\n" + body)  # fmt: skip
    out = tmp / "bad.frag.spv"
    subprocess.run([shutil.which("glslangValidator") or "glslangValidator", "-V", "-o",
                    str(out), str(src)], check=True, capture_output=True)  # fmt: skip
    return out.read_bytes()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_shader_that_fails_to_compile(transport: str, tmp_path: Path) -> None:
    """Valid SPIR-V whose ESSL 3.10 translation calls an ES 3.20 built-in (SPIRV-Cross
    names no extension for it)."""
    frag = _bake(tmp_path, "void main() { o_color0 = vec4(interpolateAtCentroid(v_color)); }\n")
    vert = load("color").spirv[0]
    with pytest.raises(DriverRefused) as info:
        with gles_client(transport) as (c, be):
            setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
            c.use_program(c.create_program({0: vert, 4: frag}, load("color").reflection))
            c.draw_arrays(GL.TRIANGLES, 0, 6)  # the program reaches the wire by its first use
            c.present()
    assert info.value.reason == "CreateShaderState.Compile"
    assert "interpolateAtCentroid" in info.value.log


def test_spirv_that_spirv_cross_refuses(tmp_path: Path) -> None:
    frag = _bake(tmp_path, "void main() { o_color0 = vec4(dFdxFine(v_color.x)); }\n")
    with pytest.raises(DriverRefused) as info:
        with gles_client() as (c, be):
            setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
            c.use_program(c.create_program({0: load("color").spirv[0], 4: frag},
                                           load("color").reflection))  # fmt: skip
            c.draw_arrays(GL.TRIANGLES, 0, 6)  # the program reaches the wire by its first use
            c.present()
    assert info.value.reason == "CreateShaderState.Spirv"
    assert "OpenGL ES" in info.value.log


def test_refusal_spells_the_place_and_the_log() -> None:
    e = DriverRefused("DrawVbo.VertexRange", "attribute 0 ...")
    assert str(e) == 'Fatal{DriverRefused, "DrawVbo.VertexRange"}: attribute 0 ...'


def test_a_call_without_an_entry_is_refused_by_name() -> None:
    """A call the gles backend has no entry for (SetStorageBlockBinding: GL ES binds
    storage blocks in the shader only) is a null entry, not a no-op."""
    from mgpipe.runtime.errors import NullEntry

    with pytest.raises(NullEntry) as info:
        with gles_client() as (c, be):
            setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
            c.draw_arrays(GL.TRIANGLES, 0, 6)
            c.em.emit("SetStorageBlockBinding", {})
            c.present()
    assert str(info.value) == 'Fatal{UnimplementedCall, "SetStorageBlockBinding"}'


def test_flush_is_gl_flush_and_the_frame_goes_on() -> None:
    """``Flush`` (glFlush) reaches the driver once and changes nothing the frame draws."""
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        before = be.gl.counts["glFlush"]
        c.em.emit("Flush", {})
        c.drain_events()
        assert be.gl.counts["glFlush"] == before + 1
        assert bytes(c.read_pixels(8, 8, 1, 1)) == bytes((255, 0, 0, 255))
        c.present()


def test_a_gl_error_arrives_in_order_after_its_record() -> None:
    """A driver error is the ordered OnGlError of the record whose check saw it (Present
    here), never a Fatal; the control (no planted error) reads GL_NO_ERROR."""
    with gles_client() as (c, be):
        c.clear()
        c.present()
        assert c.get_error() == 0  # the control
        c.clear()
        be.gl.glEnable(0x7FFF)  # an invalid capability: GL_INVALID_ENUM
        before = c.em.transport.emit_seq
        c.present()
        present_seq = c.em.transport.emit_seq
        c.clear()
        c.present()
        c.drain_events()
        assert [(hex(code), seq) for code, seq in c.gl_errors] == [("0x500", present_seq)]
        assert present_seq > before
        assert c.get_error() == 0x0500 and c.get_error() == 0


def test_deaths_release_gl_objects() -> None:
    """A framebuffer dies by ObjectDeath alone; resources and programs by their wire delete."""
    with gles_client() as (c, be):
        _, prog = setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
        c.draw_arrays(GL.TRIANGLES, 0, 6)  # the program reaches the wire by its first use
        fb = c.create_framebuffer()
        tex = c.create_texture_2d(8, 8)
        c.framebuffer_texture(fb, 0, tex)
        c.bind_framebuffer(fb)
        c.clear()
        c.bind_framebuffer(None)
        c.delete_framebuffer(fb)
        c.delete_texture(tex)
        c.use_program(None)
        c.delete_program(prog)
        c.present()
    n = be.gl.counts
    assert (n["glDeleteFramebuffers"], n["glDeleteTextures"], n["glDeleteProgram"]) == (1, 1, 1)


def test_a_shrunk_buffer_is_checked_again() -> None:
    """A range proven once is re-proven after the buffer is respecified smaller."""
    with pytest.raises(DriverRefused) as info:
        with gles_client() as (c, be):
            vb, _ = setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
            c.draw_arrays(GL.TRIANGLES, 0, 6)
            c.buffer_data(
                vb, struct.pack("<21f", *quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0))[:21])
            )
            c.draw_arrays(GL.TRIANGLES, 0, 6)
            c.present()
    assert info.value.reason == "DrawVbo.VertexRange" and "84-byte buffer" in info.value.log


def test_readback_rows_follow_the_pack_alignment() -> None:
    with gles_client() as (c, be):
        c.clear_color(1.0, 0.0, 0.0, 1.0)
        c.clear()
        c.pixel_store(True, "Alignment", 8)
        raw = c.read_pixels(0, 0, 3, 2)  # rows of 12 bytes padded to 16
        c.present()
    assert len(raw) == 16 + 12
    assert raw[:12] == bytes((255, 0, 0, 255)) * 3 and raw[16:28] == bytes((255, 0, 0, 255)) * 3


def test_pack_row_length_and_skips_scatter_on_the_client() -> None:
    """ReadPixels is tight on the wire; the client lays it out per its pack state (row
    length 5 pixels, skip 1 pixel and 1 row): bytes GL would not write stay zero."""
    with gles_client() as (c, be):
        c.clear_color(0.0, 0.0, 1.0, 1.0)
        c.clear()
        c.pixel_store(True, "RowLength", 5)
        c.pixel_store(True, "SkipPixels", 1)
        c.pixel_store(True, "SkipRows", 1)
        raw = c.read_pixels(0, 0, 2, 2)
        c.present()
    blue = bytes((0, 0, 255, 255))
    stride = 5 * 4
    assert len(raw) == stride + 4 + stride + 8  # skip row + skip pixel + (h-1) rows + w pixels
    for row in (1, 2):
        at = row * stride + 4
        assert raw[at : at + 8] == blue * 2
        assert raw[row * stride : at] == bytes(4)  # the skipped pixel: untouched
    assert raw[:stride] == bytes(stride)  # the skipped row: untouched


def test_a_gl_error_a_draw_raises_is_the_draws() -> None:
    """An error the driver flags inside a draw (planted: the draw's glDrawArrays is followed
    by an invalid glEnable) is the OnGlError of that DrawVbo record, not of the Present that
    ends the frame; a clear's likewise. The test above is the control: an error raised by
    Present's own calls is Present's."""
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
        real = be.gl.glDrawArrays

        def draw_then_error(*args):
            real(*args)
            be.gl.glEnable(0x7FFF)  # GL_INVALID_ENUM inside the draw's record

        be.gl.glDrawArrays = draw_then_error
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        draw_seq = c.em.transport.emit_seq
        be.gl.glDrawArrays = real
        c.draw_arrays(GL.TRIANGLES, 0, 6)  # a clean draw: no error of its own
        c.present()
        c.drain_events()
        assert [(hex(code), seq) for code, seq in c.gl_errors] == [("0x500", draw_seq)]
        assert draw_seq < c.em.transport.emit_seq  # Present came later and reported nothing


def test_deleting_the_bound_vertex_elements_leaves_no_attribute_enabled() -> None:
    """DeleteVertexElements (glDeleteVertexArrays) on gles: the bound layout is dropped (no
    attribute enabled, as GL unbinds it) and the context goes on; it was refused before
    (``Fatal{UnimplementedCall}`` lost the context)."""
    with gles_client() as (c, be):
        setup(c, quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0)))
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        handle = c.tr._pushed["ve"]
        assert be.vtx.layout != ()
        c.em.emit("DeleteVertexElements", {"Handle": handle,
                                           "Kind": c.tr._kind["VertexElementsCso"]})  # fmt: skip
        c.drain_events()
        assert be.vtx.layout == ()
        c.clear()
        c.present()
