"""The scene shaders: GLSL sources, the SPIR-V baked from them, and reflection records.

Every program is a vertex and a fragment source in this directory. ``bake`` compiles each
source with ``glslangValidator -V`` (SPIR-V for Vulkan 1.0, which SPIRV-Cross also turns
into ESSL) to ``<source>.spv`` and writes ``<program>.reflection.json``: the program's
vertex inputs, fragment outputs, uniforms, uniform blocks and samplers as SPIRV-Cross
reflects them, canonical JSON. Both are committed; ``tests`` re-bake into a scratch
directory and compare bytes.

Stage slots: ``MGPProgramDesc.Spirv`` has one blob per GL shader stage in GL's stage order
(vertex, tessellation control, tessellation evaluation, geometry, fragment, compute);
:data:`STAGE_SLOTS` names them by glslang's stage suffix.

Run ``python -m mgpipe.runtime.harness.shaders.programs`` to re-bake after editing a source.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ...backends.spirv_xfb import xfb_layout

__all__ = ["STAGE_SLOTS", "PROGRAMS", "Program", "ShaderBakeError", "load", "bake", "HERE",
           "RELAXED", "DEFAULT_BLOCK", "ATOMIC_BLOCK"]

HERE = Path(__file__).resolve().parent
STAGE_SLOTS = {"vert": 0, "tesc": 1, "tese": 2, "geom": 3, "frag": 4, "comp": 5}

#: program name -> its stage sources (file names in this directory).
PROGRAMS: dict[str, tuple[str, ...]] = {
    "color": ("color.vert", "color.frag"),
    "instanced": ("instanced.vert", "color.frag"),
    "mrt": ("color.vert", "mrt.frag"),
    # issue 17's scenes (runtime/harness/scenes/render.py)
    "tex": ("tex.vert", "tex.frag"),
    "texlod": ("tex.vert", "texlod.frag"),
    "texcube": ("tex.vert", "texcube.frag"),
    "tex3d": ("tex.vert", "tex3d.frag"),
    "texarray": ("tex.vert", "texarray.frag"),
    "shadow": ("tex.vert", "shadow.frag"),
    "itex": ("tex.vert", "itex.frag"),
    "ubo": ("ubo.vert", "color.frag"),
    "umat": ("umat.vert", "color.frag"),
    "mc": ("mc.vert", "mc.frag"),
    # issue 19's scenes (runtime/harness/scenes/compute.py)
    "fill": ("fill.comp",),
    "dump": ("dump.vert", "dump.frag"),
    "indices": ("indices.comp",),
    "imgfill": ("imgfill.comp",),
    "imgcopy": ("imgcopy.comp",),
    "count": ("color.vert", "count.frag"),
    "xfb": ("xfb.vert", "xfb.frag"),
    "xfbskip": ("xfbskip.vert", "xfb.frag"),
    "xfbsep": ("xfbsep.vert", "xfb.frag"),
    "tess": ("tess.vert", "tess.tesc", "tess.tese", "color.frag"),
}

#: sources with loose (default-block) uniforms: baked with glslang's relaxed Vulkan rules
#: (``-R --amb``), which gather them into one std140 block ``gl_DefaultUniformBlock``;
#: its members (name, type, byte offset) are the reflection's ``default_block``. The same
#: rules turn an ``atomic_uint`` into a storage block ``gl_AtomicCounterBlock_<binding>``
#: (:data:`ATOMIC_BLOCK`): a ``storage`` row of that name is an atomic-counter binding.
RELAXED = frozenset({"umat.vert", "mc.vert", "count.frag"})
DEFAULT_BLOCK = "gl_DefaultUniformBlock"
ATOMIC_BLOCK = "gl_AtomicCounterBlock_"

_REFLECT_KEYS = {"inputs": "inputs", "outputs": "outputs", "uniforms": "ubos",
                 "samplers": "textures", "images": "images", "storage": "ssbos",
                 "push_constants": "push_constants"}  # fmt: skip


class ShaderBakeError(RuntimeError):
    """A tool is missing or refused a source (its message names the file)."""


@dataclass(frozen=True)
class Program:
    name: str
    spirv: dict[int, bytes]  # stage slot -> SPIR-V words
    reflection: bytes  # canonical JSON
    sources: tuple[str, ...]

    def reflected(self) -> dict:
        return json.loads(self.reflection)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ShaderBakeError(f"{name}: not found on PATH (Debian: glslang-tools / spirv-cross)")
    return path


def compile_source(src: Path, out: Path) -> None:
    relaxed = ["-R", "--amb"] if src.name in RELAXED else []
    cmd = [_tool("glslangValidator"), "-V", *relaxed, "--target-env", "vulkan1.0", "-o", str(out),
           str(src)]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise ShaderBakeError(f"{src.name}: glslangValidator failed: {res.stdout.strip()}")


def _reflect_stage(spv: Path) -> dict:
    res = subprocess.run([_tool("spirv-cross"), str(spv), "--reflect"], capture_output=True,
                         text=True)  # fmt: skip
    if res.returncode != 0:
        raise ShaderBakeError(f"{spv.name}: spirv-cross --reflect failed: {res.stderr.strip()}")
    return json.loads(res.stdout)


def _entry(item: dict) -> dict:
    keep = ("name", "type", "location", "set", "binding", "block_size", "array", "format",
            "readonly", "writeonly")
    return {k: item[k] for k in keep if k in item}


def reflection_record(stages: dict[str, Path]) -> bytes:
    """Vertex inputs, fragment outputs and every stage's resources, canonical JSON; a
    program with loose uniforms also gets ``default_block`` (see :data:`RELAXED`), a
    compute program ``workgroup`` (its local size x, y, z), a capturing vertex stage
    ``xfb`` (per captured output: name, buffer, offset, components, stride; read from the
    SPIR-V's Xfb decorations, which SPIRV-Cross does not reflect)."""
    rec: dict[str, list] = {k: [] for k in _REFLECT_KEYS}
    for suffix, spv in sorted(stages.items(), key=lambda kv: STAGE_SLOTS[kv[0]]):
        raw = _reflect_stage(spv)
        for key, src in _REFLECT_KEYS.items():
            if key == "inputs" and suffix != "vert":
                continue
            if key == "outputs" and suffix != "frag":
                continue
            for item in raw.get(src, []):
                e = _entry(item)
                if key not in ("inputs", "outputs"):
                    e["stage"] = suffix
                rec[key].append(e)
        for ubo in raw.get("ubos", []):
            if ubo["name"] == DEFAULT_BLOCK:
                members = raw["types"][ubo["type"]]["members"]
                rec.setdefault("default_block", []).extend(
                    {"name": m["name"], "type": m["type"], "offset": m["offset"], "stage": suffix}
                    for m in members)  # fmt: skip
        if suffix == "comp":
            for ep in raw.get("entryPoints", []):
                if ep.get("mode") == "comp" and "workgroup_size" in ep:
                    rec["workgroup"] = [int(v) for v in ep["workgroup_size"]]
        layout = xfb_layout(spv.read_bytes())
        if layout is not None:
            rec.setdefault("xfb", []).extend(
                {"name": v.name, "buffer": v.buffer, "offset": v.offset,
                 "components": v.components, "stride": layout.strides[v.buffer],
                 "stage": suffix} for v in layout.varyings)  # fmt: skip
    for key in rec:
        if key == "workgroup":
            continue
        if key == "xfb":
            rec[key].sort(key=lambda e: (e["buffer"], e["offset"]))
            continue
        rec[key].sort(key=lambda e: (e.get("location", -1), e.get("binding", -1),
                                     e.get("offset", -1), e["name"]))  # fmt: skip
    return (json.dumps(rec, sort_keys=True, separators=(",", ":")) + "\n").encode()


def bake(out_dir: Path = HERE, src_dir: Path = HERE) -> list[Path]:
    """Compile every source and write every reflection record into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    sources = sorted({s for srcs in PROGRAMS.values() for s in srcs})
    for s in sources:
        out = out_dir / f"{s}.spv"
        compile_source(src_dir / s, out)
        written.append(out)
    for name, srcs in sorted(PROGRAMS.items()):
        stages = {Path(s).suffix[1:]: out_dir / f"{s}.spv" for s in srcs}
        path = out_dir / f"{name}.reflection.json"
        path.write_bytes(reflection_record(stages))
        written.append(path)
    return written


@lru_cache(maxsize=None)
def load(name: str) -> Program:
    """The committed SPIR-V and reflection of program ``name``."""
    srcs = PROGRAMS[name]
    spirv = {STAGE_SLOTS[Path(s).suffix[1:]]: (HERE / f"{s}.spv").read_bytes() for s in srcs}
    return Program(name, spirv, (HERE / f"{name}.reflection.json").read_bytes(), srcs)


if __name__ == "__main__":  # pragma: no cover - a developer command
    try:
        for p in bake():
            print(p.relative_to(HERE))
    except ShaderBakeError as exc:
        print(f"bake: {exc}", file=sys.stderr)
        sys.exit(2)
