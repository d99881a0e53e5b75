"""Test support for the Vulkan tests: the validation policy, the suite's colour program, and
a runner that drives a client into the Vulkan backend."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mgpipe.runtime.harness.shaders.programs import load


def color_program() -> tuple[dict[int, bytes], bytes]:
    """The suite's ``color`` program (committed SPIR-V + reflection record)."""
    prog = load("color")
    return prog.spirv, prog.reflection


# -- the Vulkan test harness -------------------------------------------------------------
# Tests require the validation layer unless the caller says otherwise (a GPU box without
# the layer runs with MGPIPE_VK_VALIDATION=auto or off).
os.environ.setdefault("MGPIPE_VK_VALIDATION", "on")

TRIANGLE_LOWER_LEFT = (-1, -1, 0, 1, -1, 0, -1, 1, 0)  # counter-clockwise in GL


def vertices(positions: tuple[float, ...], rgba: tuple[float, float, float, float]) -> bytes:
    out = b""
    for i in range(0, len(positions), 3):
        out += struct.pack("<7f", *positions[i : i + 3], *rgba)
    return out


def assert_clean(dev: Any) -> None:
    msgs = dev.take_messages()
    assert not msgs, "validation messages:\n" + "\n".join(str(m) for m in msgs)


@contextmanager
def vk_client(transport: str = "monolith", width: int = 64, height: int = 48,
              whole_block: bool = False) -> Iterator[tuple[Any, Any]]:  # fmt: skip
    """(client, backend) wired through the applier; on exit: close both, then fail on any
    validation message the run produced."""
    from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = VulkanBackend(width=width, height=height)
    stage = StageSegment(4 << 20)
    applier = Applier(be, stage)
    client = Client(applier.apply, stage, transport=transport, width=width, height=height,
                    whole_block=whole_block)  # fmt: skip
    try:
        yield client, be
        client.close()
        be.r.finish()
        assert_clean(be.dev)
    finally:
        dev = be.dev
        be.close()
        msgs = dev.take_messages()
        assert not msgs, "validation messages at teardown:\n" + "\n".join(map(str, msgs))


def setup_color(c: Any, rgba: tuple[float, float, float, float] = (1, 0, 0, 1),
                positions: tuple[float, ...] = TRIANGLE_LOWER_LEFT) -> Any:  # fmt: skip
    """One colour program, one VBO (position + colour), viewport = surface."""
    spirv, refl = color_program()
    prog = c.create_program(spirv, refl)
    c.use_program(prog)
    vb = c.create_buffer(vertices(positions, rgba))
    c.vertex_attrib_pointer(0, vb, 3, stride=28)
    c.vertex_attrib_pointer(1, vb, 4, stride=28, offset=12)
    c.viewport(0, 0, c.tr.width, c.tr.height)
    return prog, vb
