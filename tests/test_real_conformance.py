"""mgpipe's outputs for MobileGL's own MG_Pipe tree against what MobileGL's build includes.

Two checks, both on a snapshot of the real tree (``MGPIPE_MOBILEGL`` names its root: the
folder holding ``MobileGL/``, ``MANIFEST.txt``, ``_stubs/`` and ``_thirdparty/``):

* symbol by symbol: ``mgpipe gen --check`` is clean for the tree, and ``mgpipe gen`` writes
  every output the real generator writes, each declaring every symbol of the snapshot's file
  under the same name, type and value (gen/inc_symbols.py). Compared are the outputs the
  manifest records at the same commit as the inputs they are generated from; the others are
  listed and skipped by name.
* by the compiler: one translation unit includes MobileGL's headers with mgpipe's outputs in
  place of the real ones, and pins as ``static_assert``s the static facts MobileGL's own
  catalogue test pins (counts, opcodes, sizes, the wait-class partition). The same unit
  compiled against the snapshot's own outputs is the control that the facts are right, and
  a planted wrong fact must fail to compile.

The outputs compared are rendered from the tree's model with the two gates whose joins the
snapshot's mixed commits break (ownership, verb stamps: tests/test_real_tree.py pins what
they refuse) left out; ``mgpipe gen --check`` on the tree is tested on its own, gates and all.

MobileGL's headers need C++23 and a standard library with ``<expected>`` and ``<format>``
(Debian: clang-19 with libc++-19; for libclang, ``MGPIPE_CLANG_ARGS`` names one where the
system's default lacks them). ``MGPIPE_CXX`` overrides the compiler command line; else the
first clang++ that compiles a probe is used, and the compile checks skip, saying so, when
there is none.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from mgpipe.gen import inc_symbols as inc

SNAPSHOT = Path(os.environ["MGPIPE_MOBILEGL"]) if os.environ.get("MGPIPE_MOBILEGL") else None
pytestmark = pytest.mark.skipif(
    SNAPSHOT is None, reason="MGPIPE_MOBILEGL is not set: the MobileGL conformance tests need a snapshot")

#: every file the real generator writes
REAL_OUTPUTS = ("PipeTables.inc", "PipeThunks.inc", "PipeWire.inc", "PipeWireLayout.inc",
                "PipeVerify.inc", "PipeFilled.inc", "PipeFillPoints.inc", "PipeCoverage.inc",
                "PipeSpanTable.inc", "PipeFieldOwnership.inc")
#: the list file whose rows each output is a function of. The real files' provenance lines
#: name more for some (PipeFilled.inc: also PipeCalls.def, whose call names it prints; the
#: ownership and fill-point outputs: Coverage.def too): an output is compared when its own
#: list is at its commit, and the report names the skipped ones with the two commits
OUTPUT_INPUTS = {
    "PipeTables.inc": ("PipeCalls.def",),
    "PipeThunks.inc": ("PipeCalls.def",),
    "PipeWire.inc": ("PipeCalls.def",),
    "PipeWireLayout.inc": ("PipeCalls.def", "PipeFields.def"),
    "PipeVerify.inc": ("PipeFields.def",),
    "PipeFilled.inc": ("Coverage.def",),
    "PipeFillPoints.inc": ("FillPoints.def",),
    "PipeCoverage.inc": ("Coverage.def",),
    "PipeSpanTable.inc": ("PipeFields.def",),
    "PipeFieldOwnership.inc": ("FieldOwnership.def",),
}


#: the include directories of the snapshot, in order (its stubs first: MANIFEST.txt)
INCLUDE = ("_stubs/override", "_stubs/missing", "_thirdparty", "MobileGL", "MobileGL/MG_Pipe")
#: the gates whose joins the snapshot's mixed commits break (see the module docstring)
CROSS_COMMIT = frozenset({"ownership", "verb-stamps"})


def _tree() -> Path:
    return SNAPSHOT / "MobileGL" / "MG_Pipe"


def _include_args() -> list[str]:
    return [a for d in INCLUDE for a in ("-I", str(SNAPSHOT / d))]


def manifest_commits() -> dict[str, str]:
    """path under MobileGL/ -> the commit (or index id) the manifest gives it."""
    out = {}
    for line in (SNAPSHOT / "MANIFEST.txt").read_text().splitlines():
        cols = [c.strip() for c in line.split("|")]
        if len(cols) >= 4 and cols[0].startswith("MG_"):
            out[cols[0]] = cols[1]
    return out


def eligible_outputs() -> tuple[list[str], dict[str, str]]:
    """(outputs to compare, output -> why it is not compared)."""
    commits = manifest_commits()
    compared, skipped = [], {}
    for name in REAL_OUTPUTS:
        mine = commits.get(f"MG_Pipe/generated/{name}")
        if mine is None:
            skipped[name] = "not in the snapshot"
            continue
        stale = [i for i in OUTPUT_INPUTS[name] if commits.get(f"MG_Pipe/{i}") != mine]
        if stale:
            skipped[name] = (f"stored at {mine[:8]}, its input {stale[0]} at "
                             f"{commits.get(f'MG_Pipe/{stale[0]}', '?')[:8]}")
        else:
            compared.append(name)
    return compared, skipped


def _mgpipe(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mgpipe", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.fixture(scope="module")
def our_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every output mgpipe renders for the tree's model, written as `mgpipe gen` writes them."""
    from mgpipe.gen.build import build
    from mgpipe.gen.render import render_all

    model = build(_tree(), disabled=CROSS_COMMIT,
                  include_dirs=tuple(SNAPSHOT / d for d in INCLUDE)).model
    out = tmp_path_factory.mktemp("real-gen")
    for o in render_all(model):
        (out / o.name).write_text(o.text, encoding="utf-8")
    return out


def test_gen_then_gen_check_is_clean_for_the_real_tree(tmp_path: Path) -> None:
    """The snapshot's FieldOwnership.def and Coverage.def come from other commits than its
    PipeCalls.def (MANIFEST.txt), so the two joins between them are skipped by name, and
    the command says so; the same tree without the skip is refused for those joins alone
    (tests/test_real_tree.py)."""
    skip = [a for g in sorted(CROSS_COMMIT) for a in ("--skip-gate", g)]
    gen = _mgpipe("gen", "--catalogue", str(_tree()), *_include_args(), *skip,
                  "--out", str(tmp_path))
    assert gen.returncode == 0, (gen.stdout + gen.stderr)[-3000:]
    assert "NOT run: gate group(s)" in gen.stderr
    check = _mgpipe("gen", "--check", "--catalogue", str(_tree()), *_include_args(), *skip,
                    "--out", str(tmp_path))
    assert check.returncode == 0, (check.stdout + check.stderr)[-3000:]
    (tmp_path / "PipeWire.inc").write_text("// stale\n", encoding="utf-8")  # control
    stale = _mgpipe("gen", "--check", "--catalogue", str(_tree()), *_include_args(), *skip,
                    "--out", str(tmp_path))
    assert stale.returncode == 1 and "PipeWire.inc" in stale.stdout + stale.stderr


def test_gen_writes_the_real_generators_file_set(our_outputs: Path) -> None:
    missing = [n for n in REAL_OUTPUTS if not (our_outputs / n).is_file()]
    assert missing == [], f"mgpipe gen did not write {missing}"


def test_the_manifest_decides_which_outputs_are_compared() -> None:
    compared, skipped = eligible_outputs()
    # the snapshot's known gaps: PipeCoverage.inc is not stored, PipeSpanTable.inc is stale
    assert "PipeCoverage.inc" in skipped and "PipeSpanTable.inc" in skipped
    assert {"PipeTables.inc", "PipeThunks.inc", "PipeWire.inc", "PipeWireLayout.inc",
            "PipeVerify.inc"} <= set(compared)


@pytest.mark.parametrize("name", REAL_OUTPUTS)
def test_every_real_symbol_is_declared_with_its_meaning(our_outputs: Path, name: str) -> None:
    compared, skipped = eligible_outputs()
    if name in skipped:
        pytest.skip(f"{name}: {skipped[name]}")
    reports = inc.compare_dirs(_tree() / "generated", our_outputs, compared)
    (report,) = [r for r in reports if r.name == name]
    assert (len(report.missing), len(report.different)) == (0, 0), inc.format_report([report])


# ------------------------------------------------------------------- the compiler

#: the static facts MobileGL's PipeCatalogueTest pins, as static_asserts (this project's own
#: wording; the numbers are the test's)
FACTS = r"""
namespace mgpipe_conformance {
using namespace MobileGL;
using namespace MobileGL::MG_Pipe;

constexpr SizeT CountClass(MGPipeCallClass cls) {
    SizeT n = 0;
    for (SizeT i = 1; i < static_cast<SizeT>(MGPWireOp::kOpCount); ++i)
        n += MGPipeCallClassFor(static_cast<MGPWireOp>(i)) == cls ? 1 : 0;
    return n;
}
constexpr SizeT CountWait(MGPipeWaitClass wait) {
    SizeT n = 0;
    for (SizeT i = 1; i < static_cast<SizeT>(MGPWireOp::kOpCount); ++i)
        n += MGPipeWaitClassFor(static_cast<MGPWireOp>(i)) == wait ? 1 : 0;
    return n;
}
constexpr bool ReplySlotIffWaitReply() {
    for (SizeT i = 1; i < static_cast<SizeT>(MGPWireOp::kOpCount); ++i) {
        const auto op = static_cast<MGPWireOp>(i);
        const bool slot = (MGPipeCallFlagsFor(op) & static_cast<Uint32>(kReplySlot)) != 0;
        if (slot != (MGPipeWaitClassFor(op) == kWaitReply)) return false;
    }
    return true;
}
template <SizeT N>
constexpr bool AllWait(const MGPWireOp (&ops)[N], MGPipeWaitClass wait) {
    for (MGPWireOp op : ops)
        if (MGPipeWaitClassFor(op) != wait) return false;
    return true;
}
constexpr Uint16 Op(MGPWireOp op) { return static_cast<Uint16>(op); }

// counts
static_assert(kMGPipeCallCount == 84 && kMGPipeCallCount == MGP_CALL_LIST_DOCUMENTED_COUNT);
static_assert(kMGPipeScreenCallCount == 13 && kMGPipeContextCallCount == 71);
static_assert(sizeof(MGPipeScreen) == kMGPipeScreenCallCount * sizeof(void (*)()));
static_assert(sizeof(MGPipeContext) == kMGPipeContextCallCount * sizeof(void (*)()));
static_assert(CountClass(kScreen) == 13 && CountClass(kCtxQuery) == 8 && CountClass(kCtxCso) == 13);
static_assert(CountClass(kCtxState) == 19 && CountClass(kCtxObject) == 11 && CountClass(kCtxVerb) == 20);
static_assert(kMGPipeInputFieldCount == 63 && kMGPipeInputStickyFieldCount == 7);
static_assert(kMGPipeVerbCount == 69 && kMGPipeVerbClassCount == 9);
static_assert(kMGPipeVerifiedPayloadCount == 84);
static_assert(kMGPipeCallbackCount == 7);
#ifndef MGPIPE_CONFORMANCE_STALE_SPAN_TABLE
static_assert(kMGPipePipelineStateMemberCount == 44);
#endif

// opcodes
static_assert(Op(MGPWireOp::kInvalid) == 0 && Op(MGPWireOp::GetCaps) == 1);
static_assert(Op(MGPWireOp::SetShaderBuffers) == 38 && Op(MGPWireOp::SetStreamOutputTargets) == 39);
static_assert(Op(MGPWireOp::SetSwapInterval) == 68 && Op(MGPWireOp::QueryTimestamp) == 69);
static_assert(Op(MGPWireOp::QueryCounter) == 70 && Op(MGPWireOp::FenceWaitServer) == 71);
static_assert(Op(MGPWireOp::BindShaderImage) == 72 && Op(MGPWireOp::PatchParameter) == 73);
static_assert(Op(MGPWireOp::BindStreamOutput) == 74 && Op(MGPWireOp::SetStorageBlockBinding) == 75);
static_assert(Op(MGPWireOp::CopyFramebufferToTexture) == 76 && Op(MGPWireOp::ApplierReset) == 77);
static_assert(Op(MGPWireOp::ObjectDeath) == 78 && Op(MGPWireOp::SetContextValues) == 79);
static_assert(Op(MGPWireOp::SetProgramBindings) == 80 && Op(MGPWireOp::DeleteStreamOutput) == 81);
static_assert(Op(MGPWireOp::ReadPixelsToBuffer) == 82 && Op(MGPWireOp::GetTextureImageToBuffer) == 83);
static_assert(Op(MGPWireOp::BindContext) == 84 && Op(MGPWireOp::kOpCount) == 85);
static_assert(Op(MGPWireOp::kOpCount) == kMGPipeCallCount + 1);

// flags and classes of single rows
static_assert(MGPipeCallFlagsFor(MGPWireOp::ReadPixelsToBuffer) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::GetTextureImageToBuffer) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::ApplierReset) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::ObjectDeath) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::SetContextValues) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::BindContext) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::BindShaderImage) == static_cast<Uint32>(kNone));
static_assert(MGPipeCallFlagsFor(MGPWireOp::SetStorageBlockBinding) == static_cast<Uint32>(kHasBlob));
static_assert(MGPipeCallClassFor(MGPWireOp::BindContext) == kScreen);

// sizes and offsets
static_assert(sizeof(MGPWireRecHeader) == 8);
static_assert(sizeof(MGPipeHandle) == 8 && alignof(MGPipeHandle) == 4);
static_assert(sizeof(ResidualValueBlock) == 8 && sizeof(ResidualValueBlock) == MGL_RESIDUAL_BLOCK_SIZE);
static_assert(offsetof(ResidualValueBlock, CapabilityBits) == 0);
static_assert(sizeof(PixelStoreParameters) == 28 && sizeof(PerBufferBlendState) == 28);
static_assert(sizeof(StencilFaceState) == 28 && sizeof(RenderStateParameters) == 1168);
static_assert(sizeof(SamplerParameters) == 100);
static_assert(sizeof(MGPPixelPackState) == sizeof(PixelStoreParameters));
static_assert(sizeof(MGPPatchState) == 40 && sizeof(MGPBindRenderState) == 12);
static_assert(sizeof(MGPTextureParams) == 40 && offsetof(MGPTextureParams, Res) == 0);
static_assert(offsetof(MGPTextureParams, BuiltinSampler) == 8 && offsetof(MGPTextureParams, SamplerResync) == 26);
static_assert(sizeof(MGPFramebufferState) == 304);
static_assert(sizeof(MGPSurface) == 24 && offsetof(MGPSurface, UploadTarget) == 20);
static_assert(offsetof(MGPSurface, TextureTarget) == 22);
static_assert(sizeof(MGPReadbackToBuffer) == 104);
static_assert(sizeof(MGPWireRec_DrawVbo) % 8 == 0 && sizeof(MGPWireRec_BindRenderState) % 8 == 0);
static_assert(sizeof(MGPWireRec_SetResidualValueState) % 8 == 0);

// the wait-class partition: 14 reply + 10 applied + 1 present wait, every other row does not
static_assert(CountWait(kWaitReply) == 14 && CountWait(kWaitApplied) == 10);
static_assert(CountWait(kWaitPresent) == 1 && CountWait(kWaitNone) == kMGPipeCallCount - 25);
static_assert(MGPipeWaitClassFor(MGPWireOp::Present) == kWaitPresent);
static_assert(ReplySlotIffWaitReply());
static_assert(MGPipeWaitClassFor(MGPWireOp::kInvalid) == kWaitClassCount);
static_assert(MGPipeWaitClassFor(MGPWireOp::kOpCount) == kWaitClassCount);
constexpr MGPWireOp kReply[] = {
    MGPWireOp::GetCaps, MGPWireOp::ResourceCreate, MGPWireOp::ResourceRespecify,
    MGPWireOp::MapPersistent, MGPWireOp::FenceStatus, MGPWireOp::FenceWait,
    MGPWireOp::QueryAvailable, MGPWireOp::QueryResult, MGPWireOp::QueryTimestamp,
    MGPWireOp::SetTextureParams, MGPWireOp::ResourceSubData, MGPWireOp::ResourceReadback,
    MGPWireOp::GetTextureImage, MGPWireOp::ReadPixels};
constexpr MGPWireOp kApplied[] = {
    MGPWireOp::ApplierReset, MGPWireOp::GenerateMipmap, MGPWireOp::SetStorageBlockBinding,
    MGPWireOp::BeginStreamOutput, MGPWireOp::EndStreamOutput, MGPWireOp::PauseStreamOutput,
    MGPWireOp::ResumeStreamOutput, MGPWireOp::BindStreamOutput,
    MGPWireOp::CopyFramebufferToTexture, MGPWireOp::ResourceCopyRegion};
constexpr MGPWireOp kNoWait[] = {
    MGPWireOp::DrawVbo, MGPWireOp::LaunchGrid, MGPWireOp::Clear, MGPWireOp::Blit,
    MGPWireOp::MemoryBarrier, MGPWireOp::Flush, MGPWireOp::SetSwapInterval,
    MGPWireOp::BindShaderImage, MGPWireOp::PatchParameter, MGPWireOp::ObjectDeath,
    MGPWireOp::ResourceDestroy, MGPWireOp::UnmapPersistent, MGPWireOp::FenceCreate,
    MGPWireOp::FenceDestroy, MGPWireOp::FenceWaitServer, MGPWireOp::QueryCreate,
    MGPWireOp::QueryBegin, MGPWireOp::QueryEnd, MGPWireOp::QueryDestroy,
    MGPWireOp::QueryCounter, MGPWireOp::SetContextValues, MGPWireOp::SetProgramBindings,
    MGPWireOp::SetShaderBuffers, MGPWireOp::SetVertexBuffers, MGPWireOp::SetFramebufferState,
    MGPWireOp::CreateShaderState, MGPWireOp::SetDrawProgram, MGPWireOp::ReadPixelsToBuffer,
    MGPWireOp::GetTextureImageToBuffer};
static_assert(sizeof(kReply) / sizeof(kReply[0]) == 14 && AllWait(kReply, kWaitReply));
static_assert(sizeof(kApplied) / sizeof(kApplied[0]) == 10 && AllWait(kApplied, kWaitApplied));
static_assert(AllWait(kNoWait, kWaitNone));
}  // namespace mgpipe_conformance

int main() { return 0; }
"""

#: PipeFieldOwnership.inc is included by the backend's PipeInputs.h (not in the snapshot),
#: inside the namespace, after MGPipe.h
OWNERSHIP_TU = 'namespace MobileGL::MG_Pipe {\n#include "generated/PipeFieldOwnership.inc"\n}\n'

#: MobileGL's headers a build includes, in the order a MobileGL source includes them
TU_HEADERS = ("MG_Pipe/MGPipeTypes.h", "MG_Pipe/MGPipeValueTypes.h", "MG_Pipe/MGPipe.h",
              "MG_Pipe/PipeWireLayout.h")


@lru_cache(maxsize=1)
def cxx() -> tuple[list[str] | None, str]:
    """(compiler command, why there is none)."""
    probe = "#include <expected>\n#include <format>\nint main() { return 0; }\n"
    if os.environ.get("MGPIPE_CXX"):
        candidates = [shlex.split(os.environ["MGPIPE_CXX"])]
    else:
        names = [f"clang++-{v}" for v in range(22, 15, -1)] + ["clang++"]
        candidates = [[n, "-stdlib=libc++"] for n in names if shutil.which(n)]
    for cmd in candidates:
        proc = subprocess.run([*cmd, "-std=c++2b", "-x", "c++", "-fsyntax-only", "-"],
                              input=probe, capture_output=True, text=True)
        if proc.returncode == 0:
            return cmd, ""
    return None, ("no C++ compiler whose standard library has <expected> and <format> "
                  "(Debian: apt-get install clang-19 libc++-19-dev, or set MGPIPE_CXX)")


def compile_tu(tmp: Path, generated: Path | None, facts: str = FACTS,
               defines: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Compile the facts against MobileGL's headers with ``generated`` as MG_Pipe/generated
    (None: the snapshot's own outputs, with the stub for the output it does not hold)."""
    cmd, why = cxx()
    if cmd is None:
        pytest.skip(why)
    tmp.mkdir(parents=True, exist_ok=True)
    root = tmp / "MobileGL"
    if generated is not None:
        shutil.copytree(SNAPSHOT / "MobileGL", root,
                        ignore=shutil.ignore_patterns("generated", "MG_Test"))
        shutil.copytree(generated, root / "MG_Pipe" / "generated",
                        ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        incs = ["-I", str(SNAPSHOT / "_stubs" / "override")]
    else:
        root = SNAPSHOT / "MobileGL"
        incs = ["-I", str(SNAPSHOT / "_stubs" / "override"),
                "-I", str(SNAPSHOT / "_stubs" / "missing")]
    incs += ["-I", str(SNAPSHOT / "_thirdparty"), "-I", str(root), "-I", str(root / "MG_Pipe")]
    tu = tmp / "conformance.cpp"
    # the ownership output joins FieldOwnership.def and Coverage.def: compiled where the
    # snapshot holds the two at one commit (for its own outputs: always)
    ownership = generated is None or "PipeFieldOwnership.inc" in eligible_outputs()[0]
    tu.write_text("".join(f'#include "{h}"\n' for h in TU_HEADERS) + "#include <cstddef>\n"
                  + (OWNERSHIP_TU if ownership else "") + facts)
    return subprocess.run([*cmd, "-std=c++2b", "-fsyntax-only", *incs,
                           *[f"-D{d}" for d in defines], str(tu)], capture_output=True, text=True)


def _errors(proc: subprocess.CompletedProcess) -> str:
    return "\n".join(line for line in proc.stderr.splitlines() if "error" in line)[:4000]


def test_the_facts_hold_for_the_snapshots_own_outputs(tmp_path: Path) -> None:
    """The control: the static facts are MobileGL's, so its own outputs satisfy them (but for
    the one output the snapshot holds stale, whose member count the fact excepts)."""
    proc = compile_tu(tmp_path, None, defines=("MGPIPE_CONFORMANCE_STALE_SPAN_TABLE",))
    assert proc.returncode == 0, _errors(proc)


def test_a_wrong_fact_does_not_compile(tmp_path: Path) -> None:
    planted = FACTS.replace("Op(MGPWireOp::BindContext) == 84", "Op(MGPWireOp::BindContext) == 83")
    assert planted != FACTS
    proc = compile_tu(tmp_path, None, facts=planted, defines=("MGPIPE_CONFORMANCE_STALE_SPAN_TABLE",))
    assert proc.returncode != 0 and re.search(r"static assert(ion)? failed", proc.stderr), proc.stderr[-2000:]


def test_mobilegl_compiles_against_our_outputs_with_its_pinned_facts(our_outputs: Path, tmp_path: Path) -> None:
    proc = compile_tu(tmp_path, our_outputs)
    assert proc.returncode == 0, _errors(proc)


def test_a_planted_opcode_in_our_outputs_does_not_compile(our_outputs: Path, tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    shutil.copytree(our_outputs, planted)
    wire = planted / "PipeWire.inc"
    text = wire.read_text()
    assert text.count("    BindContext = 84,\n") == 1
    wire.write_text(text.replace("    BindContext = 84,\n", "    BindContext = 86,\n"))
    proc = compile_tu(tmp_path / "tu", planted)
    assert proc.returncode != 0 and "BindContext" in proc.stderr, proc.stderr[-2000:]
