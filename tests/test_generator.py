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
from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR, ORIGINAL_DIR, REPO_ROOT

from conftest import copy_bundled, copy_original  # noqa: E402
from seed_numbers import (  # noqa: E402 - the seeds' numbers, pinned once
    ABI_APPENDED, ABI_CLASS_COUNTS, ABI_MOVED, DOCUMENTED_CALLS, DOCUMENTED_CLASS_COUNTS,
    DYNAMIC_BYTES, DYNAMIC_CHUNKS, PIPELINE_BYTES, PIPELINE_CHUNKS, SEED_002_APPENDED, SEED_OFFSETS,
    SEED_SIZES,
)

INC_ORDER = ["PipeTables.inc", "PipeThunks.inc", "PipeWire.inc", "PipeVerify.inc",
             "PipeFilled.inc", "PipeCoverage.inc", "PipeSpanTable.inc", "PipeFieldOwnership.inc"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_calls_json_lists_mobilegls_rows_on_the_bundled_tree(capsys) -> None:
    """The bundled tree is MobileGL's ABI: its documented rows, class counts and the rows
    MobileGL appends, where seed 001/002 stated other figures (seed_numbers.ABI_MOVED)."""
    calls = run_json(capsys, "calls")["calls"]
    assert [c["opcode"] for c in calls] == list(range(1, len(calls) + 1))
    assert set(calls[0]) == {"opcode", "name", "payload", "class", "flags", "wait_class"}
    documented = ABI_MOVED["documented calls"][1]
    assert Counter(c["class"] for c in calls[:documented]) == ABI_CLASS_COUNTS
    by_name = {c["name"]: c for c in calls}
    assert {n: by_name[n]["opcode"] for n in ABI_APPENDED} == ABI_APPENDED
    assert by_name["ApplierReset"]["class"] == ABI_MOVED["ApplierReset class"][1]
    assert by_name["SetProgramBindings"]["flags"] == ["kVarTail", "kHostSpan"]
    assert by_name["Present"]["wait_class"] == "kWaitPresent"
    for c in calls:  # seed 002 §1: kReplySlot <=> kWaitReply, in both directions
        assert ("kReplySlot" in c["flags"]) == (c["wait_class"] == "kWaitReply"), c["name"]


def test_calls_json_lists_the_documented_calls_then_the_seed_002_rows(capsys) -> None:
    """The original shape still holds the seeds' own numbering."""
    calls = run_json(capsys, "calls", "--catalogue", str(ORIGINAL_DIR))["calls"]
    assert [c["opcode"] for c in calls] == list(range(1, len(calls) + 1))
    assert set(calls[0]) == {"opcode", "name", "payload", "class", "flags", "wait_class"}
    assert Counter(c["class"] for c in calls[:DOCUMENTED_CALLS]) == DOCUMENTED_CLASS_COUNTS
    appended = calls[DOCUMENTED_CALLS:DOCUMENTED_CALLS + len(SEED_002_APPENDED)]
    assert [c["name"] for c in appended] == SEED_002_APPENDED
    by_name = {c["name"]: c for c in calls}
    assert by_name["SetProgramBindings"]["opcode"] == DOCUMENTED_CALLS + len(SEED_002_APPENDED)
    assert by_name["SetProgramBindings"]["flags"] == ["kVarTail", "kHostSpan"]
    assert by_name["Present"]["wait_class"] == "kWaitPresent"
    for c in calls:  # seed 002 §1: kReplySlot <=> kWaitReply, in both directions
        assert ("kReplySlot" in c["flags"]) == (c["wait_class"] == "kWaitReply"), c["name"]


def test_render_state_layout_matches_seed_000(capsys) -> None:
    doc = run_json(capsys, "layout", "RenderStateParameters")
    assert doc["size"] == SEED_SIZES["RenderStateParameters"]
    assert len(doc["members"]) == 68
    assert {m["name"]: m["offset"] for m in doc["members"]} == SEED_OFFSETS
    assert set(doc["members"][0]) == {"name", "offset", "size", "type", "class"}
    subs = {s["name"]: s for s in doc["sub_members"]}
    assert subs["StencilStates[1].Ref"]["offset"] == 768 + 28 + 4
    assert subs["StencilStates[0].Func"]["class"] == "kPipeline"
    assert subs["StencilStates[0].WriteMask"]["class"] == "kDynamic"


@pytest.mark.parametrize("struct,size", sorted(SEED_SIZES.items()))
def test_every_payload_size_is_as_the_seeds_state(capsys, struct: str, size: int) -> None:
    """On the bundled tree, where MobileGL's ABI moved a size past the seed's (ABI_MOVED),
    MobileGL's; the original shape keeps the seed's own figure."""
    moved = ABI_MOVED.get(f"{struct} bytes")
    if moved is not None:
        assert moved[0] == size
        assert run_json(capsys, "layout", struct, "--catalogue", str(ORIGINAL_DIR))["size"] == size
    assert run_json(capsys, "layout", struct)["size"] == (moved[1] if moved else size)


def test_chunk_table_is_the_decided_design(capsys) -> None:
    doc = run_json(capsys, "chunks")
    pipeline, dynamic = doc["pipeline"], doc["dynamic"]
    assert (len(pipeline), sum(c["length"] for c in pipeline)) == (PIPELINE_CHUNKS, PIPELINE_BYTES)
    assert (len(dynamic), sum(c["length"] for c in dynamic)) == (DYNAMIC_CHUNKS, DYNAMIC_BYTES)
    both = sorted([(c["offset"], c["length"], "p") for c in pipeline]
                  + [(c["offset"], c["length"], "d") for c in dynamic])
    at = 0
    for i, (off, length, half) in enumerate(both):  # alternating, exact partition
        assert off == at
        if i:
            assert half != both[i - 1][2]
        at += length
    assert at == SEED_SIZES["RenderStateParameters"]


def test_gen_check_is_clean_on_the_committed_tree() -> None:
    assert cli.main(["gen", "--check"]) == 0


def copy_tree(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the bundled tree (catalogue/MG_Pipe + its includes) and of generated/."""
    return copy_bundled(tmp_path)


def test_gen_check_goes_red_naming_the_file_when_a_def_row_changes(tmp_path, capsys) -> None:
    cat, out = copy_tree(tmp_path)
    defs = cat / "PipeCalls.def"
    old = "X(SetSwapInterval, MGPSwapInterval, kCtxVerb, kOptional,"
    assert old in defs.read_text()
    defs.write_text(defs.read_text().replace(old, "X(SetSwapInterval, MGPSwapInterval, kCtxVerb, kNone,"))
    assert cli.main(["gen", "--check", "--catalogue", str(cat), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "PipeWire.inc: STALE:" in text and "pipe_tables.py: STALE:" in text
    assert "-    static_cast<Uint32>(kOptional),  // SetSwapInterval" in text  # the diff shows it


def test_gen_check_goes_red_when_a_header_field_changes(tmp_path, capsys) -> None:
    cat, out = copy_tree(tmp_path)
    hdr = cat / "MGPipeTypes.h"
    text = hdr.read_text()
    old = "struct MGPFlush {\n        Uint32 Flags;\n        Uint32 Pad0;\n    };"
    assert old in text
    hdr.write_text(text.replace(old, "struct MGPFlush {\n        Uint32 FlushFlags;\n        Uint32 Pad0;\n    };"))
    fields = cat / "PipeFields.def"
    ftext = fields.read_text()
    old_rows = "#define MGP_FIELDS_MGPFlush(F) \\\n    F(Flags)\n"
    assert old_rows in ftext
    fields.write_text(ftext.replace(old_rows, "#define MGP_FIELDS_MGPFlush(F) \\\n    F(FlushFlags)\n"))
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
    assert first.startswith(f"MG_Pipe/PipeCalls.def:{idx + 1}:")
    # as C reads it, "Flush MGPFlush" is one argument: the row is one column short
    assert ": DEF-SHAPE: " in first and "is a ',' missing?" in first and "expected 5" in first


def test_unknown_flag_names_the_place_and_the_choices(tmp_path) -> None:
    cat, out = copy_tree(tmp_path)
    defs = cat / "PipeCalls.def"
    assert "kCtxCso, kHasBlob," in defs.read_text()
    text = defs.read_text().replace("kCtxCso, kHasBlob,", "kCtxCso, kHasBlobb,", 1)
    defs.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--catalogue", str(cat),
                           "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    line = next(l for l in proc.stderr.splitlines() if "UNKNOWN-FLAG" in l)
    assert line.startswith("MG_Pipe/PipeCalls.def:")
    assert "unknown flag 'kHasBlobb'" in line and "kHasBlob" in line.split("expected")[1]


def test_compiler_checks_every_static_assert_and_the_runtime_checks(tmp_path) -> None:
    """One TU: headers + every .inc, compiled by g++ -std=c++17 and run. The original
    shape's headers and its own outputs (the bundled tree's outputs are compiled against
    MobileGL's own headers: tests/test_real_conformance.py)."""
    cat, out = copy_original(tmp_path / "original")
    includes = "\n".join(f'#include "{n}"' for n in INC_ORDER)
    main = (REPO_ROOT / "tests" / "compile_main.cpp").read_text()
    tu = tmp_path / "tu.cpp"
    tu.write_text(f'#include "MGPipeTypes.h"\n#include "MGPipe.h"\n#include "PipeInputs.h"\n'
                  f"{includes}\n{main}")
    exe = tmp_path / "tu"
    proc = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1",
                           f"-I{cat / 'include'}", f"-I{out}", str(tu), "-o",
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


def test_a_field_set_past_the_fill_mask_is_refused_by_name() -> None:
    """The fill mask holds 64 * MASK_WORDS fields; one more is a named refusal of the
    output, never an IndexError."""
    from mgpipe.gen import CATALOGUE_DIR, g5b_fill_points
    from mgpipe.gen.build import build
    from mgpipe.gen.errors import GenError

    model = build(CATALOGUE_DIR).model
    g5b_fill_points.context(model)  # the bundled catalogue fits
    last = max(model.pipe_inputs, key=lambda f: f.id)
    grown = model.model_copy(update={"pipe_inputs": (
        *model.pipe_inputs, last.model_copy(update={"id": 64 * g5b_fill_points.MASK_WORDS}))})
    with pytest.raises(GenError) as err:
        g5b_fill_points.context(grown)
    assert err.value.gate == "FIELD-MASK"


#: the bundled tree's outputs that are written against MG_Pipe's own declarations, in the
#: order they include each other; the other four (PipeThunks.inc: MobileGL's MGPipeScreen /
#: MGPipeContext classes; PipeCoverage.inc, PipeFieldOwnership.inc, PipeFillPoints.inc:
#: its MGPipeInputField enum) name MobileGL's state code outside MG_Pipe
BUNDLED_ABI_OUTPUTS = ["PipeTables.inc", "PipeWire.inc", "PipeVerify.inc", "PipeFilled.inc",
                       "PipeSpanTable.inc", "PipeWireLayout.inc"]


def test_the_bundled_trees_outputs_compile_against_its_own_headers(tmp_path: Path) -> None:
    """clang++-19 compiles generated/'s ABI outputs after catalogue/MG_Pipe's headers (the
    comparators' VecBase, the handle's ==, the ratchet macro come from the bundled tree's own
    vocabulary), warnings as errors; a planted output naming an undeclared type does not."""
    clang = shutil.which("clang++-19")
    assert clang, "clang++-19 not on PATH"
    inside = tmp_path / "inside"  # PipeVerify.inc includes "../PipeFields.def"
    inside.mkdir()
    shutil.copy(CATALOGUE_DIR / "PipeFields.def", tmp_path / "PipeFields.def")
    head = ["#include <cstddef>", '#include "MGPipe.h"', '#include "MGPipeTypes.h"',
            '#include "MGPipeOverlay.h"', '#include "MGPipeRenderStateSpans.h"', '#include "PipeCalls.def"',
            "using namespace MobileGL;"]

    def compile_with(outs: Path) -> subprocess.CompletedProcess[str]:
        src = tmp_path / "abi.cpp"
        src.write_text("\n".join([*head, *(f'#include "{outs / n}"' for n in BUNDLED_ABI_OUTPUTS),
                                  "int main() { return 0; }", ""]))
        return subprocess.run([clang, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror",
                               f"-I{CATALOGUE_DIR}", f"-I{CATALOGUE_DIR.parent}", f"-I{inside}", str(src)],
                              capture_output=True, text=True)

    proc = compile_with(GENERATED_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    planted = tmp_path / "planted"
    shutil.copytree(GENERATED_DIR, planted)
    verify = planted / "PipeVerify.inc"
    verify.write_text(verify.read_text().replace("(const VecBase<", "(const SelfTestNoVecBase<", 1))
    proc = compile_with(planted)
    assert proc.returncode != 0 and "SelfTestNoVecBase" in proc.stderr
