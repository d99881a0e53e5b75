"""Values the wire carries are the tables' named values, read through the names the tables
give them -- never another family's constants that happen to share the numbers.

``MGPAttribValue.ValueClass`` has its own constants (``kMGPipeAttribValueClass*``); the
``Clear`` record's ``ValueClass`` has ``kMGPipeClearValueClass*``. Both number Float / Int /
Uint 0 / 1 / 2 today, so a reader of one through the other works by coincidence. The test
renumbers the clear constants (a permutation, as a catalogue change would): a generic
attribute must still reach the draw on both backends (it failed on GLES while its backend
read the attribute class through the clear constants). Control: a writer and a reader on
different numbers (the client's classes renumbered alone) do not draw the value.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.schema import tables as _t

SIZE = 16
_PERMUTED = {"Float": 2, "Int": 0, "Uint": 1}


def _renumber(monkeypatch, family: str) -> None:
    real = _t.constant

    def constant(name: str) -> int:
        for cls, v in _PERMUTED.items():
            if name == f"{family}{cls}":
                return v
        return real(name)

    monkeypatch.setattr(_t, "constant", constant)
    _clear_caches()


def _clear_caches() -> None:
    from mgpipe.runtime.backends.vulkan import backend as vkb

    vkb._attrib_views.cache_clear()


@contextmanager
def _client(backend: str) -> Iterator[Any]:
    if backend == "vulkan":
        from _vk_support import vk_client

        with vk_client(width=SIZE, height=SIZE) as (c, _be):
            yield c
        return
    from _gles import gles_client

    with gles_client(size=SIZE) as (c, _be):
        yield c


def _attrib_colour(backend: str) -> tuple[int, ...]:
    """A quad whose colour input has no array: glVertexAttrib4f(0, 1, 0, 1) colours it."""
    from mgpipe.runtime.harness.scenes.kit import GL, capture, quad
    from mgpipe.runtime.harness.shaders.programs import load

    with _client(backend) as c:
        vb = c.create_buffer(struct.pack("<42f", *quad(-1, -1, 1, 1, 0, (1.0, 0.0, 0.0, 1.0))))
        src = load("color")
        c.use_program(c.create_program(src.spirv, src.reflection))
        c.vertex_attrib_pointer(0, vb, 3, stride=28, offset=0)
        c.vertex_attrib(1, 0.0, 1.0, 0.0, 1.0)
        c.viewport(0, 0, SIZE, SIZE)
        c.draw_arrays(GL.TRIANGLES, 0, 6)
        img = capture(c, SIZE, SIZE)
        c.present()
    return img.pixel(SIZE // 2, SIZE // 2)


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_a_generic_attribute_is_read_through_the_attribute_value_classes(backend, monkeypatch):
    try:
        _renumber(monkeypatch, "kMGPipeClearValueClass")
        assert _attrib_colour(backend) == (0, 255, 0, 255)
    finally:
        monkeypatch.undo()
        _clear_caches()


@pytest.mark.parametrize("backend", ["gles", "vulkan"])
def test_negative_control_a_writer_and_reader_on_different_numbers_fail(backend, monkeypatch):
    """Renumber the attribute classes on the client side only: the backend, reading the
    tables' real numbers, reads the float bits as another class -- not the green quad."""
    from mgpipe.runtime.client import tracker

    monkeypatch.setattr(tracker, "attrib_class", lambda name: _PERMUTED[name])
    assert _attrib_colour(backend) != (0, 255, 0, 255)
