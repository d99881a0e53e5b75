"""The four bench workloads: deterministic, seedable GL-like streams against the client.

A workload is built with ``(draws_per_frame, seed)``; :meth:`Workload.setup` creates its
objects once, :meth:`Workload.frame` issues exactly ``draws_per_frame`` draws (the runner
presents after each frame). Every value a workload sets comes from its draw counter and a
``random.Random(seed)``, so two runs with one seed issue the same calls.

With ``track=True`` (the untimed census pass) a workload also keeps its own ground truth,
written from the values it sets and never read back from the runtime:
``pipeline_seen`` (the distinct pipeline configurations its draws ran under) and
``blocks_seen`` (the distinct whole render-state values: pipeline configuration plus every
dynamic value it set). The guard holds the CSO counts against these.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from .pipe import Client, load_program

__all__ = ["Workload", "WORKLOADS", "BlendToggle", "NoChange", "ViewportChurn", "MixedFrame",
           "MinecraftFrame"]

GL_TRIANGLES = 0x0004
#: The scene suite's ``color`` program: position (location 0), colour (location 1).
PROGRAM = "color"
_TRIANGLE = struct.pack("<21f", -1, -1, 0, 1, 1, 1, 1, 1, -1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1)
_STRIDE = 28


class Workload:
    """Base: setup / frame plus the tracked ground truth (see the module docstring)."""

    name = ""
    #: draws per frame when the caller does not say (the full run's size).
    default_draws = 1000
    #: every draw runs one program, one vertex layout, one render pass (so a backend's
    #: pipelines are exactly its CSOs: one per pipeline configuration drawn under)
    single_program = True

    def __init__(self, draws_per_frame: int | None = None, seed: int = 1, track: bool = False,
                 backend_calls: frozenset[str] | None = None):  # fmt: skip
        self.draws_per_frame = draws_per_frame or self.default_draws
        self.backend_calls = backend_calls  # None: every call
        self.rng = random.Random(seed)
        self.track = track
        self.k = 0  # draws issued so far (the value counter)
        self._pipe: dict[str, Hashable] = {}
        self._dyn: dict[str, Hashable] = {}
        self.pipeline_seen: set[tuple] = set()
        self.blocks_seen: set[tuple] = set()

    # -- shared pieces -------------------------------------------------------
    def _program(self, c: Client) -> Any:
        """A program object of its own (a layer switch is a real program change)."""
        prog = load_program(PROGRAM)
        return c.create_program(prog.spirv, prog.reflection)

    def _geometry(self, c: Client) -> None:
        vb = c.create_buffer(_TRIANGLE)
        c.vertex_attrib_pointer(0, vb, 3, stride=_STRIDE, offset=0)
        c.vertex_attrib_pointer(1, vb, 4, stride=_STRIDE, offset=12)

    def pipe(self, key: str, value: Hashable, apply: Callable[[], None]) -> None:
        """Set a pipeline-class value (``apply`` makes the GL call)."""
        apply()
        if self.track:
            self._pipe[key] = value

    def dyn(self, key: str, value: Hashable, apply: Callable[[], None]) -> None:
        """Set a dynamic-class value."""
        apply()
        if self.track:
            self._dyn[key] = value

    def draw(self, c: Client) -> None:
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        self.k += 1
        if self.track:
            p = tuple(sorted(self._pipe.items()))
            self.pipeline_seen.add(p)
            self.blocks_seen.add((p, tuple(sorted(self._dyn.items()))))

    def setup(self, c: Client) -> None:
        self._geometry(c)
        c.use_program(self._program(c))
        self.dyn("viewport", (0, 0, 640, 480), lambda: c.viewport(0, 0, 640, 480))

    def frame(self, c: Client, index: int) -> None:
        raise NotImplementedError


class BlendToggle(Workload):
    """Blaze3D batch: enable blend, draw, disable blend, draw; before every draw the
    viewport, scissor box, blend colour, depth bias, line width and stencil reference
    change (the dynamic half churning; every draw's whole block is distinct)."""

    name = "BlendToggle"
    default_draws = 2000

    def setup(self, c: Client) -> None:
        super().setup(c)
        self.pipe("blend_func", "SrcAlpha", lambda: c.blend_func("SrcAlpha", "OneMinusSrcAlpha"))
        self.pipe("scissor_test", True, lambda: c.enable("ScissorTest"))
        self.pipe("stencil_test", True, lambda: c.enable("StencilTest"))
        self.x0 = self.rng.randrange(16)

    def churn(self, c: Client) -> None:
        k, rs, x0 = self.k, c.state, self.x0
        vp = (x0 + k % 61, k // 61 % 53, 320 + k % 320, 240 + k // 320 % 240)
        self.dyn("viewport", vp, lambda: c.viewport(*vp))
        sc = (k % 59, k // 59 % 47, 200 + k % 400, 100 + k // 400 % 300)
        self.dyn("scissor", sc, lambda: c.scissor(*sc))
        bc = ((k % 256) / 255.0, (k // 256 % 256) / 255.0, 0.5, 1.0)
        self.dyn("blend_color", bc, lambda: rs.set_blend_color(*bc))
        po = (1.0 + (k % 8) * 0.25, float(k % 5 + 1))
        self.dyn("depth_bias", po, lambda: rs.set_polygon_offset(*po))
        lw = 1.0 + (k % 7) * 0.5
        self.dyn("line_width", lw, lambda: rs.set_line_width(lw))
        ref = k & 0xFF
        self.dyn(
            "stencil_ref", ref, lambda: rs.set_stencil_func("FrontAndBack", "Always", ref, 0xFF)
        )

    def frame(self, c: Client, index: int) -> None:
        for _ in range(self.draws_per_frame // 2):
            self.pipe("blend", True, lambda: c.enable("Blend"))
            self.churn(c)
            self.draw(c)
            self.pipe("blend", False, lambda: c.disable("Blend"))
            self.churn(c)
            self.draw(c)


class NoChange(Workload):
    """N draws with no state change between them (the floor)."""

    name = "NoChange"
    default_draws = 2000

    def frame(self, c: Client, index: int) -> None:
        for _ in range(self.draws_per_frame):
            self.draw(c)


class ViewportChurn(Workload):
    """A new viewport before every draw (the pipeline subset never moves)."""

    name = "ViewportChurn"
    default_draws = 2000

    def setup(self, c: Client) -> None:
        super().setup(c)
        self.x0 = self.rng.randrange(32)

    def frame(self, c: Client, index: int) -> None:
        for _ in range(self.draws_per_frame):
            k = self.k
            vp = (self.x0 + k % 97, k // 97 % 89, 640 - k % 97, 480 - k // 97 % 89)
            self.dyn("viewport", vp, lambda: c.viewport(*vp))
            self.draw(c)


@dataclass(frozen=True)
class Layer:
    """One render pass of a Minecraft-like frame: its share of the draws, batch sizes and
    pipeline configuration (blend, depth test, depth mask, cull, scissor test)."""

    name: str
    share: float
    batch: tuple[int, int]
    program: str
    blend: bool
    depth_test: bool
    depth_mask: bool
    cull: bool
    scissor: bool
    textures: tuple[str, ...]


_LAYERS = (
    Layer("terrain-solid", 0.40, (24, 96), "terrain", False, True, True, True, False, ("atlas", "lightmap")),
    Layer("terrain-cutout", 0.15, (16, 64), "cutout", False, True, True, True, False, ("atlas", "lightmap")),
    Layer("entities", 0.20, (1, 8), "entity", False, True, True, True, False, ("entity0", "lightmap")),
    Layer("translucent", 0.10, (8, 32), "terrain", True, True, False, True, False, ("atlas", "lightmap")),
    Layer("particles", 0.05, (4, 16), "particle", True, True, False, False, False, ("particles",)),
    Layer("gui", 0.10, (1, 6), "gui", True, False, False, False, True, ("gui",)),
)  # fmt: skip
_ENTITY_TEXTURES = ("entity0", "entity1", "entity2")
#: What binding a texture for sampling asks of the backend; without it MixedFrame binds none.
_SAMPLING = frozenset({"CreateSamplerView", "SetSamplerViews"})


class MixedFrame(Workload):
    """A Minecraft-like frame in batches: terrain (solid, cutout), entities (texture per
    batch, every fourth batch double-sided: cull off), translucent (blend on, depth mask
    off), particles, GUI (no depth test, scissor box per batch); programs and textures
    change between layers (textures only where the backend samples them)."""

    name = "MixedFrame"
    single_program = False
    default_draws = 10_000

    def setup(self, c: Client) -> None:
        self._geometry(c)
        self.programs = {p: self._program(c) for p in sorted({lay.program for lay in _LAYERS})}
        names = sorted({t for lay in _LAYERS for t in lay.textures} | set(_ENTITY_TEXTURES))
        sampled = self.backend_calls is None or _SAMPLING <= self.backend_calls
        self.textures = {n: c.create_texture_2d(16, 16) for n in names} if sampled else {}
        self.dyn("viewport", (0, 0, 854, 480), lambda: c.viewport(0, 0, 854, 480))
        c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
        self.plan = self._plan()

    def _plan(self) -> list[tuple[Layer, list[int]]]:
        """Per layer, the batch sizes: the layer's share of the frame, at least one batch."""
        plan, left = [], self.draws_per_frame
        for i, lay in enumerate(_LAYERS):
            want = (
                left if i == len(_LAYERS) - 1 else max(1, round(self.draws_per_frame * lay.share))
            )
            want = min(want, left - (len(_LAYERS) - 1 - i))
            sizes = []
            while sum(sizes) < want:
                sizes.append(min(self.rng.randint(*lay.batch), want - sum(sizes)))
            plan.append((lay, sizes))
            left -= want
        return plan

    def _layer_state(self, c: Client, lay: Layer, cull: bool) -> None:
        def cap(cap_name: str, on: bool) -> Callable[[], None]:
            return lambda: c.enable(cap_name) if on else c.disable(cap_name)

        self.pipe("blend", lay.blend, cap("Blend", lay.blend))
        self.pipe("depth_test", lay.depth_test, cap("DepthTest", lay.depth_test))
        self.pipe("depth_mask", lay.depth_mask, lambda: c.state.set_depth_mask(lay.depth_mask))
        self.pipe("cull", cull, cap("CullFace", cull))
        self.pipe("scissor_test", lay.scissor, cap("ScissorTest", lay.scissor))
        c.use_program(self.programs[lay.program])
        for unit, tex in enumerate(lay.textures if self.textures else ()):
            c.bind_texture(unit, self.textures[tex])

    def frame(self, c: Client, index: int) -> None:
        for lay, sizes in self.plan:
            self._layer_state(c, lay, lay.cull)
            for b, size in enumerate(sizes):
                if lay.name == "entities":
                    double_sided = b % 4 == 3
                    self.pipe("cull", not double_sided, lambda: c.enable("CullFace")
                              if not double_sided else c.disable("CullFace"))  # fmt: skip
                    if self.textures:
                        c.bind_texture(0, self.textures[_ENTITY_TEXTURES[b % 3]])
                if lay.scissor:
                    sc = (8 * (b % 16), 8 * (b // 16 % 8), 120 + 4 * (b % 5), 40)
                    self.dyn("scissor", sc, lambda: c.scissor(*sc))
                for _ in range(size):
                    self.draw(c)


class MinecraftFrame(Workload):
    """The scene suite's Minecraft-like frame as a stream (runtime/harness/scenes/minecraft.py):
    the ``mc`` program (a frame uniform block with projection / model-view / fog, an atlas
    sampler, an alpha test), and per draw: a new per-chunk default-block offset, GL_BLEND
    by chunk row, and ONE texture rebind (unit 0 alternates between two atlases) while
    :attr:`bound_units` units hold a texture. What a draw costs must follow what changed,
    not what is bound: records and Python calls per draw are equal at 1 and at 64 units
    (:meth:`with_units`; tests/test_bench.py pins both)."""

    name = "MinecraftFrame"
    single_program = True
    default_draws = 2000
    bound_units = 1
    #: the calls a backend must execute for this stream (else the cell is not available)
    NEEDS = frozenset({"SetGlobalConstants", "SetShaderBuffers", "SetSamplerViews",
                       "BindSamplerStates", "CreateSamplerState", "CreateSamplerView"})  # fmt: skip

    @classmethod
    def with_units(cls, units: int) -> type[MinecraftFrame]:
        return type(f"MinecraftFrame{units}", (cls,), {"bound_units": units})

    #: the client calls the stream makes beyond the established ones
    CLIENT_CALLS = ("create_texture", "tex_sub_image", "bind_buffer_base", "uniform")

    @classmethod
    def unavailable_on(cls, implemented: frozenset[str] | None) -> str | None:
        gaps = [f"Client.{n}" for n in cls.CLIENT_CALLS if not hasattr(Client, n)]
        if gaps:
            return f"the client has no {', '.join(gaps)} yet"
        missing = sorted(cls.NEEDS - implemented) if implemented is not None else []
        return f"the backend does not execute {', '.join(missing)}" if missing else None

    def setup(self, c: Client) -> None:
        from ..scenes.minecraft import ATLAS, CHUNKS, FOG_COLOR, MODELVIEW, PROJ, _atlas_bytes
        from ..scenes.render import nearest, tquad

        self.chunks, self.unit_size = CHUNKS, 2.0 / CHUNKS
        prog = load_program("mc")
        self.prog = c.create_program(prog.spirv, prog.reflection)
        c.use_program(self.prog)
        floats = tquad(-1, -1, -1 + self.unit_size, -1 + self.unit_size, 0, (0, 0), (0.5, 0.5))
        vb = c.create_buffer(struct.pack(f"<{len(floats)}f", *floats))
        c.vertex_attrib_pointer(0, vb, 3, stride=24, offset=0)
        c.vertex_attrib_pointer(1, vb, 3, stride=24, offset=12)
        c.pixel_store(False, "Alignment", 1)
        self.atlases = []
        for _ in range(2):
            tex = c.create_texture("2d", ATLAS, ATLAS)
            c.tex_sub_image(tex, 0, 0, 0, ATLAS, ATLAS, _atlas_bytes())
            self.atlases.append(tex)
        block = (struct.pack("<16f", *PROJ) + struct.pack("<16f", *MODELVIEW)
                 + struct.pack("<4f", *FOG_COLOR) + struct.pack("<4f", 0.0, 1.0, 0.0, 0.0))  # fmt: skip
        c.bind_buffer_base("uniform", 0, c.create_buffer(block))
        c.uniform(self.prog, "u_atlas", 0)
        smp = nearest(c)
        for unit in range(self.bound_units):  # units 1.. hold textures the program never reads
            c.bind_texture(unit, self.atlases[unit % 2])
            c.bind_sampler(unit, smp)
        self.dyn("viewport", (0, 0, 64, 64), lambda: c.viewport(0, 0, 64, 64))
        c.blend_func("SrcAlpha", "OneMinusSrcAlpha")

    def frame(self, c: Client, index: int) -> None:
        n = self.chunks
        for _ in range(self.draws_per_frame):
            chunk = self.k % (n * n)
            cx, cy = chunk % n, chunk // n
            blend = bool(cy % 2)
            self.pipe("blend", blend, lambda: c.enable("Blend") if blend else c.disable("Blend"))
            c.uniform(self.prog, "u_chunk_offset", cx * self.unit_size, cy * self.unit_size,
                      -cy / n, 0.0)  # fmt: skip
            c.bind_texture(0, self.atlases[self.k % 2])  # the one rebind per draw
            c.draw_arrays(GL_TRIANGLES, 0, 6)
            self.k += 1
            if self.track:
                p = tuple(sorted(self._pipe.items()))
                self.pipeline_seen.add(p)
                self.blocks_seen.add((p, tuple(sorted(self._dyn.items()))))


WORKLOADS: dict[str, type[Workload]] = {
    w.name: w for w in (BlendToggle, NoChange, ViewportChurn, MixedFrame, MinecraftFrame)
}
