"""The generator as a user meets it: the bundled catalogue, the CLI's JSON, the diff gate.

Each test states a fact a user relies on (a number the seeds fix, a behaviour of the CLI)
and reads it through the public interface: `mgpipe ... --json`, the files under
generated/, exit codes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR, REPO_ROOT

# Seed 001 §3.2 (76 documented rows) + the four rows appended by seed 002.
DOCUMENTED_CLASS_COUNTS = {"kScreen": 11, "kCtxQuery": 8, "kCtxCso": 13, "kCtxState": 17,
                           "kCtxObject": 9, "kCtxVerb": 18}
APPENDED = ["ObjectDeath", "ApplierReset", "SetContextValues", "SetProgramBindings"]
# The payload sizes the issue and seeds state.
SEED_SIZES = {
    "MGPipeHandle": 8, "MGPBlobRef": 24, "MGHostSpan": 32, "MGPWireRecHeader": 8,
    "MGPStateChunk": 4, "MGPResourceDesc": 88, "MGPRenderStateDesc": 48,
    "MGPBindRenderState": 12, "MGPDynamicState": 32, "MGPVertexElements": 40,
    "MGPSamplerDesc": 32, "MGPSamplerView": 36, "MGPTextureParams": 40, "MGPProgramDesc": 200,
    "MGPFramebufferState": 304, "MGPSubData": 72, "MGPSubRegion": 40, "MGPDrawInfo": 56,
    "MGPDrawRange": 12, "MGPDrawIndirect": 40, "MGPShaderBuffers": 32, "MGPBufferRange": 24,
    "MGPPixelPackState": 28, "MGPPatchState": 40, "MGPClear": 48, "MGPGlobalConstants": 40,
    "MGPSubDataComplete": 24, "MGPProgramBindings": 32, "MGPProgramSamplerUnit": 8,
    "MGPProgramStorageOverride": 40, "ResidualValueBlock": 8, "PerBufferBlendState": 28,
    "StencilFaceState": 28, "PixelStoreParameters": 28, "RenderStateParameters": 1168,
}
# Seed 000 §1.2: every member's offset (65 members), plus the three P2 enables.
SEED_OFFSETS = {
    "Viewports": 0, "LineWidth": 256, "PointSize": 260, "PatchVertices": 264,
    "PatchDefaultOuterLevel": 268, "PatchDefaultInnerLevel": 284, "PolygonOffsetFactor": 292,
    "PolygonOffsetUnits": 296, "PolygonOffsetClamp": 300, "ClipOrigin": 304, "ClipDepthMode": 308,
    "BlendStates": 312, "LogicOp": 536, "DepthTestEnabled": 540, "DepthFunc": 544,
    "DepthMask": 548, "ColorMasks": 549, "ClearColor": 584, "ClearDepth": 600,
    "ClearStencil": 604, "BlendColor": 608, "DepthRanges": 624, "SampleCoverageValue": 752,
    "SampleCoverageInvert": 756, "SampleMaskValue": 760, "MinSampleShadingValue": 764,
    "StencilStates": 768, "CullFaceEnabled": 824, "CullFaceModeSetting": 828,
    "FrontFaceModeSetting": 832, "ProvokingVertexModeSetting": 836, "LineSmoothHint": 840,
    "PolygonSmoothHint": 844, "TextureCompressionHint": 848, "FragmentShaderDerivativeHint": 852,
    "PointFadeThresholdSize": 856, "PointSpriteCoordOrigin": 860, "ClampReadColor": 864,
    "PolygonModeFront": 868, "PolygonModeBack": 872, "PrimitiveRestartIndex": 876,
    "ColorLogicOpEnabled": 880, "DebugOutputEnabled": 881, "DebugOutputSynchronousEnabled": 882,
    "DitherEnabled": 883, "LineSmoothEnabled": 884, "MultisampleEnabled": 885,
    "PolygonOffsetFillEnabled": 886, "PolygonOffsetLineEnabled": 887,
    "PolygonOffsetPointEnabled": 888, "PolygonSmoothEnabled": 889, "PrimitiveRestartEnabled": 890,
    "PrimitiveRestartFixedIndexEnabled": 891, "RasterizerDiscardEnabled": 892,
    "SampleAlphaToCoverageEnabled": 893, "SampleAlphaToOneEnabled": 894,
    "SampleCoverageEnabled": 895, "SampleMaskEnabled": 896, "SampleShadingEnabled": 897,
    "StencilTestEnabled": 898, "ProgramPointSizeEnabled": 899, "ScissorTestEnabledMask": 900,
    "ScissorBoxes": 904, "ScissorBoxWrittenMask": 1160, "ClipDistanceEnabledMask": 1164,
    "FramebufferSrgbEnabled": 581, "DepthClampEnabled": 582, "TextureCubeMapSeamlessEnabled": 583,
}
INC_ORDER = ["PipeTables.inc", "PipeThunks.inc", "PipeWire.inc", "PipeVerify.inc",
             "PipeFilled.inc", "PipeCoverage.inc", "PipeSpanTable.inc", "PipeFieldOwnership.inc"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_calls_json_lists_80_calls_with_the_documented_classes(capsys) -> None:
    calls = run_json(capsys, "calls")["calls"]
    assert [c["opcode"] for c in calls] == list(range(1, 81))
    assert set(calls[0]) == {"opcode", "name", "payload", "class", "flags", "wait_class"}
    assert Counter(c["class"] for c in calls[:76]) == DOCUMENTED_CLASS_COUNTS
    assert [c["name"] for c in calls[76:]] == APPENDED
    by_name = {c["name"]: c for c in calls}
    assert by_name["SetProgramBindings"]["opcode"] == 80
    assert by_name["SetProgramBindings"]["flags"] == ["kVarTail", "kHostSpan"]
    assert by_name["Present"]["wait_class"] == "kWaitPresent"
    for c in calls:  # seed 002 §1: kReplySlot <=> kWaitReply, in both directions
        assert ("kReplySlot" in c["flags"]) == (c["wait_class"] == "kWaitReply"), c["name"]


def test_render_state_layout_matches_seed_000(capsys) -> None:
    doc = run_json(capsys, "layout", "RenderStateParameters")
    assert doc["size"] == 1168
    assert len(doc["members"]) == 68
    assert {m["name"]: m["offset"] for m in doc["members"]} == SEED_OFFSETS
    assert set(doc["members"][0]) == {"name", "offset", "size", "type", "class"}
    subs = {s["name"]: s for s in doc["sub_members"]}
    assert subs["StencilStates[1].Ref"]["offset"] == 768 + 28 + 4
    assert subs["StencilStates[0].Func"]["class"] == "kPipeline"
    assert subs["StencilStates[0].WriteMask"]["class"] == "kDynamic"


@pytest.mark.parametrize("struct,size", sorted(SEED_SIZES.items()))
def test_every_payload_size_is_as_the_seeds_state(capsys, struct: str, size: int) -> None:
    assert run_json(capsys, "layout", struct)["size"] == size


def test_chunk_table_is_the_decided_design(capsys) -> None:
    doc = run_json(capsys, "chunks")
    pipeline, dynamic = doc["pipeline"], doc["dynamic"]
    assert (len(pipeline), sum(c["length"] for c in pipeline)) == (7, 396)
    assert (len(dynamic), sum(c["length"] for c in dynamic)) == (8, 772)
    both = sorted([(c["offset"], c["length"], "p") for c in pipeline]
                  + [(c["offset"], c["length"], "d") for c in dynamic])
    at = 0
    for i, (off, length, half) in enumerate(both):  # alternating, exact partition
        assert off == at
        if i:
            assert half != both[i - 1][2]
        at += length
    assert at == 1168


def test_gen_check_is_clean_on_the_committed_tree() -> None:
    assert cli.main(["gen", "--check"]) == 0


def copy_tree(tmp_path: Path) -> tuple[Path, Path]:
    cat = tmp_path / "catalogue"
    shutil.copytree(CATALOGUE_DIR, cat)
    shutil.copytree(GENERATED_DIR, tmp_path / "generated")
    return cat, tmp_path / "generated"


def test_gen_check_goes_red_naming_the_file_when_a_def_row_changes(tmp_path, capsys) -> None:
    cat, out = copy_tree(tmp_path)
    defs = cat / "PipeCalls.def"
    defs.write_text(defs.read_text().replace(
        "X(SetSwapInterval,          MGPSwapInterval,             kCtxVerb,   kOptional,",
        "X(SetSwapInterval,          MGPSwapInterval,             kCtxVerb,   kNone,"))
    assert cli.main(["gen", "--check", "--catalogue", str(cat), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "PipeWire.inc: STALE:" in text and "pipe_tables.py: STALE:" in text
    assert "-    kOptional,  // SetSwapInterval" in text  # the unified diff shows the change


def test_gen_check_goes_red_when_a_header_field_changes(tmp_path, capsys) -> None:
    cat, out = copy_tree(tmp_path)
    hdr = cat / "include" / "MGPipeTypes.h"
    text = hdr.read_text()
    old = "struct MGPFlush {\n    Uint32 Flags;\n    Uint32 Pad0;\n};"
    assert old in text
    hdr.write_text(text.replace(old, "struct MGPFlush {\n    Uint32 FlushFlags;\n    Uint32 Pad0;\n};"))
    fields = cat / "PipeFields.def"
    ftext = fields.read_text()
    old_rows = "#define MGP_FIELDS_MGPFlush(F) \\\n    F(Flags) \\"
    assert old_rows in ftext
    fields.write_text(ftext.replace(old_rows, "#define MGP_FIELDS_MGPFlush(F) \\\n    F(FlushFlags) \\"))
    assert cli.main(["gen", "--check", "--catalogue", str(cat), "--out", str(out)]) == 1
    assert "PipeVerify.inc: STALE:" in capsys.readouterr().out


def test_two_generations_are_byte_identical_and_name_no_absolute_path(tmp_path) -> None:
    cat, _ = copy_tree(tmp_path)
    outs = []
    for name in ("one", "two"):
        target = tmp_path / name
        env = {**os.environ, "MGPIPE_CACHE_DIR": str(tmp_path / f"cache-{name}")}
        subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--catalogue", str(cat), "--out",
                        str(target)], check=True, env=env, cwd=tmp_path, capture_output=True)
        outs.append({p.name: p.read_bytes() for p in sorted(target.iterdir())})
    assert outs[0] == outs[1]
    assert outs[0] == {p.name: p.read_bytes() for p in sorted(GENERATED_DIR.iterdir())
                       if p.name in outs[0]}
    for blob in outs[0].values():
        assert str(tmp_path).encode() not in blob and str(REPO_ROOT).encode() not in blob
        assert b"/root/" not in blob and b"/tmp/" not in blob


def test_generated_python_tables_are_black_formatted() -> None:
    import black

    text = (GENERATED_DIR / "pipe_tables.py").read_text()
    assert black.format_str(text, mode=black.Mode(line_length=100)) == text


def test_malformed_def_input_is_located_never_a_traceback(tmp_path) -> None:
    cat, out = copy_tree(tmp_path)
    defs = cat / "PipeCalls.def"
    lines = defs.read_text().splitlines(keepends=True)
    idx = next(i for i, l in enumerate(lines) if "X(Flush," in l)
    lines[idx] = lines[idx].replace("X(Flush,", "X(Flush")
    defs.write_text("".join(lines))
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--catalogue", str(cat),
                           "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"catalogue/PipeCalls.def:{idx + 1}:")
    assert ": DEF-SYNTAX: " in first and "expected" in first


def test_unknown_flag_names_the_place_and_the_choices(tmp_path) -> None:
    cat, out = copy_tree(tmp_path)
    defs = cat / "PipeCalls.def"
    text = defs.read_text().replace("kCtxCso,    kHasBlob,", "kCtxCso,    kHasBlobb,", 1)
    defs.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--catalogue", str(cat),
                           "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    line = next(l for l in proc.stderr.splitlines() if "UNKNOWN-FLAG" in l)
    assert line.startswith("catalogue/PipeCalls.def:")
    assert "unknown flag 'kHasBlobb'" in line and "kHasBlob" in line.split("expected")[1]


def test_compiler_checks_every_static_assert_and_the_runtime_checks(tmp_path) -> None:
    """One TU: headers + every .inc, compiled by g++ -std=c++17 and run."""
    includes = "\n".join(f'#include "{n}"' for n in INC_ORDER)
    main = (REPO_ROOT / "tests" / "compile_main.cpp").read_text()
    tu = tmp_path / "tu.cpp"
    tu.write_text(f'#include "MGPipeTypes.h"\n#include "MGPipe.h"\n#include "PipeInputs.h"\n'
                  f"{includes}\n{main}")
    exe = tmp_path / "tu"
    proc = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1",
                           f"-I{CATALOGUE_DIR / 'include'}", f"-I{GENERATED_DIR}", str(tu), "-o",
                           str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all runtime checks passed" in run.stdout


def test_the_generator_never_needs_its_own_output() -> None:
    """`mgpipe gen` must run while generated/ is stale or broken: no command imports the
    runtime (which reads the generated tables) before it actually runs a scene."""
    env = {**os.environ, "MGPIPE_TABLES_MODULE": "mgpipe_no_such_tables_module"}
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--check"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "up to date" in proc.stdout


def test_an_unwritable_output_is_a_located_refusal(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--out", str(blocker / "out")],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert ": IO-ERROR: " in proc.stderr and str(blocker) in proc.stderr
