"""The backend's own shaders (the masked clear), baked to SPIR-V and committed.

Sources are generated here (the fragment stage once per colour-attachment count, so a
pipeline never writes a location its render pass lacks); :func:`bake` compiles them with
``glslangValidator`` into ``baked/``; :func:`load` reads the committed SPIR-V. A test
re-bakes into a scratch directory and compares bytes (the committed SPIR-V is fresh).

Run ``python -m mgpipe.runtime.backends.vulkan.internal_shaders`` after editing a source.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["BAKED", "MAX_ATTACHMENTS", "sources", "bake", "load"]

BAKED = Path(__file__).resolve().parent / "baked"
MAX_ATTACHMENTS = 8

_CLEAR_VERT = """#version 450
// A triangle covering the surface, from the vertex index alone (no vertex input).
void main() {
    vec2 p = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
"""


def _clear_frag(n: int) -> str:
    outs = "".join(f"layout(location = {i}) out vec4 o{i};\n" for i in range(n))
    body = "".join(f"    o{i} = u.color;\n" for i in range(n))
    return (
        "#version 450\n"
        f"// The clear colour to {n} colour attachment(s); the pipeline's write masks pick channels.\n"
        "layout(push_constant) uniform Clear { vec4 color; } u;\n"
        f"{outs}void main() {{\n{body}}}\n"
    )


def sources() -> dict[str, str]:
    """``{file name: GLSL}`` of every internal shader."""
    out = {"clear.vert": _CLEAR_VERT}
    for n in range(1, MAX_ATTACHMENTS + 1):
        out[f"clear{n}.frag"] = _clear_frag(n)
    return out


def bake(out_dir: Path = BAKED) -> list[Path]:
    tool = shutil.which("glslangValidator")
    if tool is None:
        raise RuntimeError("glslangValidator: not found on PATH (Debian: glslang-tools)")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in sorted(sources().items()):
            src = Path(tmp) / name
            src.write_text(text)
            out = out_dir / f"{name}.spv"
            res = subprocess.run([tool, "-V", "--target-env", "vulkan1.0", "-o", str(out),
                                  str(src)], capture_output=True, text=True)  # fmt: skip
            if res.returncode:
                raise RuntimeError(f"{name}: glslangValidator failed: {res.stdout.strip()}")
            written.append(out)
    return written


def load(name: str) -> bytes:
    """The committed SPIR-V of internal shader ``name`` (e.g. ``"clear3.frag"``)."""
    return (BAKED / f"{name}.spv").read_bytes()


if __name__ == "__main__":
    for p in bake():
        print(p.name)
    sys.exit(0)
