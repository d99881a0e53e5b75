"""The scene shaders: committed SPIR-V and reflection are what glslang bakes from the
sources today (byte for byte), the reflection names what the scenes bind, and the server's
SPIR-V -> ESSL step is memoised."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mgpipe.runtime.harness.shaders import programs
from mgpipe.runtime.harness.shaders.programs import HERE, PROGRAMS, STAGE_SLOTS, bake, load


def test_committed_spirv_and_reflection_match_a_fresh_bake(tmp_path: Path) -> None:
    written = bake(tmp_path)
    assert {p.name for p in written} == (
        {f"{s}.spv" for srcs in PROGRAMS.values() for s in srcs}
        | {f"{n}.reflection.json" for n in PROGRAMS})  # fmt: skip
    stale = [p.name for p in written if (HERE / p.name).read_bytes() != p.read_bytes()]
    assert stale == [], f"re-bake: python -m mgpipe.runtime.harness.shaders.programs ({stale})"


def test_an_edited_source_is_a_different_bake(tmp_path: Path) -> None:
    """Negative control: the byte comparison sees a one-token source change."""
    src = tmp_path / "src"
    shutil.copytree(HERE, src, ignore=shutil.ignore_patterns("*.spv", "*.json", "*.py", "__*"))
    text = (
        (src / "color.frag").read_text().replace("o_color0 = v_color;", "o_color0 = v_color.bgra;")
    )
    (src / "color.frag").write_text(text)
    out = tmp_path / "out"
    bake(out, src)
    assert (out / "color.frag.spv").read_bytes() != (HERE / "color.frag.spv").read_bytes()


def test_reflection_records_inputs_outputs_and_resources() -> None:
    mrt = load("mrt").reflected()
    assert [(i["location"], i["name"], i["type"]) for i in mrt["inputs"]] == [
        (0, "a_pos", "vec3"), (1, "a_color", "vec4")]  # fmt: skip
    assert [(o["location"], o["name"]) for o in mrt["outputs"]] == [
        (0, "o_color0"),
        (1, "o_color1"),
    ]
    assert mrt["uniforms"] == [] and mrt["samplers"] == []
    inst = load("instanced").reflected()
    assert [i["location"] for i in inst["inputs"]] == [0, 1, 2]


def test_programs_are_spirv_per_stage_slot() -> None:
    for name in PROGRAMS:
        prog = load(name)
        # a graphics program has vertex + fragment (issue 19: + tessellation), a compute
        # program its compute stage alone; one slot per source, named by its suffix
        assert set(prog.spirv) == {STAGE_SLOTS[Path(src).suffix[1:]] for src in PROGRAMS[name]}
        assert set(prog.spirv) in ({STAGE_SLOTS["comp"]}, {STAGE_SLOTS["vert"], STAGE_SLOTS["frag"]},
                                   {STAGE_SLOTS[s] for s in ("vert", "tesc", "tese", "frag")})
        assert all(code[:4] == b"\x03\x02\x23\x07" for code in prog.spirv.values())
        json.loads(prog.reflection)


def test_missing_tool_is_a_named_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(programs.shutil, "which", lambda name: None)
    with pytest.raises(programs.ShaderBakeError, match="glslangValidator: not found"):
        bake(tmp_path)


def test_essl_translation_is_memoised_by_spirv() -> None:
    from mgpipe.runtime.backends.gles import program as gp

    code = load("color").spirv[0]
    text = gp.spirv_to_essl(code, "test")
    assert text.startswith("#version 310 es")
    calls = []
    real = gp.subprocess.run
    gp.subprocess.run = lambda *a, **k: calls.append(a) or real(*a, **k)  # type: ignore[assignment]
    try:
        assert gp.spirv_to_essl(code, "test") == text
    finally:
        gp.subprocess.run = real  # type: ignore[assignment]
    assert calls == []
