"""The declaration reader and comparer of C++ .inc outputs (gen/inc_symbols.py).

Formatting must not count, meaning must: each planted change of meaning is reported under
the symbol it changes, and a reformatted copy compares clean. The snapshot's own outputs
(MGPIPE_MOBILEGL) are the large test input; the small cases run everywhere.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mgpipe.gen import inc_symbols as inc

SNAPSHOT = os.environ.get("MGPIPE_MOBILEGL")
REAL_GENERATED = Path(SNAPSHOT) / "MobileGL" / "MG_Pipe" / "generated" if SNAPSHOT else None
needs_snapshot = pytest.mark.skipif(
    not SNAPSHOT, reason="MGPIPE_MOBILEGL is not set: no MobileGL snapshot to read")

SAMPLE = """
// a comment
#pragma once
#define MGP_X_COUNT 3
#define MGP_CHECK(A, B) do { } while (0)
enum class Colour : Uint8 {
    kRed = 1,
    kGreen,   // implicit: 2
    kBlue = 0x10u,
    kCount,
};
inline constexpr SizeT kColourCount = static_cast<SizeT>(Colour::kCount);
inline constexpr Uint32 kFlags[3] = { 0, kA | kB, static_cast<Uint32>(kC) };
struct alignas(8) Rec {
    Uint16 Op;
    Uint16 Flags;
    Uint32 Size;
    void (*Apply)(const Rec* payload, const void* blobBytes, Uint64 blobByteCount);
};
static_assert(sizeof(Rec) == 16, "the record is sixteen bytes");
inline Bool Check(const Rec& a, Uint64 size) { return a.Size <= size; }
#if MGP_SPLIT
inline Bool gSplit = false;
#endif
#undef MGP_CHECK
"""


def _symbols(text: str) -> inc.FileSymbols:
    fs = inc.parse_text(text, "sample.inc")
    inc.evaluate([fs])
    return fs


def _report(real: str, ours: str) -> inc.FileReport:
    a, b = _symbols(real), _symbols(ours)
    return inc.compare(a, b)


def test_every_kind_of_declaration_is_read_with_its_meaning() -> None:
    fs = _symbols(SAMPLE)
    m = {k: s.meaning() for k, s in fs.symbols.items()}
    assert m["Colour::kRed"] == "1" and m["Colour::kGreen"] == "2"
    assert m["Colour::kBlue"] == "16" and m["Colour::kCount"] == "17"
    assert m["enum Colour"] == "enum class : Uint8"
    assert m["var kColourCount"] == "constexpr SizeT = 17"  # evaluated through the enum
    assert fs.symbols["var kFlags"].elements == ("0", "kA | kB", "static_cast < Uint32 > ( kC )")
    assert "Apply: void (*)(const Rec *, const void *, Uint64)" in m["struct Rec"]
    assert "alignas(8)" in m["struct Rec"]
    assert "static_assert sizeof ( Rec ) == 16" in fs.symbols
    assert m["function Check(const Rec &, Uint64)"] == "Bool defined"
    assert m["#define MGP_X_COUNT"] == "3" and m["#define MGP_CHECK"] == "(A,B)"
    assert m["var gSplit"] == "[MGP_SPLIT] Bool = false"
    assert "#undef MGP_CHECK" in fs.symbols


def test_formatting_comments_brace_style_and_literal_spelling_do_not_count() -> None:
    ours = SAMPLE.replace("    kGreen,   // implicit: 2\n", "    kGreen = 2,\n")
    ours = ours.replace("0x10u", "16").replace("kA | kB", "kB|kA")
    ours = ours.replace("struct alignas(8) Rec {\n", "struct alignas(8) Rec\n{\n")
    ours = ours.replace("inline Bool Check(const Rec& a, Uint64 size)",
                        "/* checked */ inline Bool\nCheck(const Rec &record, Uint64 bytes)")
    ours = ours.replace('"the record is sixteen bytes"', '"sixteen"')
    ours = ours.replace("(const Rec* payload, const void* blobBytes",
                        "(const Rec *p, const void *bytes")
    r = _report(SAMPLE, ours)
    assert (r.missing, r.different) == ([], []), inc.format_report([r])


def test_a_changed_enumerator_value_is_different() -> None:
    r = _report(SAMPLE, SAMPLE.replace("kRed = 1,", "kRed = 2,"))
    keys = [s.key for s, _, _ in r.different]
    # kRed moved, and with it every implicit value counted from it
    assert keys[:2] == ["Colour::kRed", "Colour::kGreen"] and not r.missing


def test_a_missing_symbol_is_missing() -> None:
    r = _report(SAMPLE, SAMPLE.replace("inline constexpr SizeT kColourCount", "inline constexpr SizeT kHueCount"))
    assert [s.key for s in r.missing] == ["var kColourCount"]
    assert [s.key for s in r.extra] == ["var kHueCount"]


def test_a_changed_signature_is_reported() -> None:
    r = _report(SAMPLE, SAMPLE.replace("Uint64 blobByteCount);", "Uint32 blobByteCount);"))
    assert [s.key for s, _, _ in r.different] == ["struct Rec"]
    r = _report(SAMPLE, SAMPLE.replace("Check(const Rec& a, Uint64 size)", "Check(const Rec& a, Uint32 size)"))
    assert [s.key for s in r.missing] == ["function Check(const Rec &, Uint64)"]


def test_a_changed_array_element_names_its_index() -> None:
    r = _report(SAMPLE, SAMPLE.replace("kA | kB,", "kA,"))
    (sym, _, why), = r.different
    assert sym.key == "var kFlags" and why.startswith("element 1:")


def test_a_symbol_moved_under_a_condition_is_different() -> None:
    r = _report(SAMPLE, SAMPLE.replace("#if MGP_SPLIT\n", "").replace("#endif\n", ""))
    assert [s.key for s, _, _ in r.different] == ["var gSplit"]


def test_the_cli_exits_1_on_a_difference_and_0_on_a_clean_copy(tmp_path: Path) -> None:
    real, ours = tmp_path / "real", tmp_path / "ours"
    real.mkdir(), ours.mkdir()
    (real / "A.inc").write_text(SAMPLE)
    (ours / "A.inc").write_text(SAMPLE.replace("kBlue = 0x10u", "kBlue = 16"))
    cmd = [sys.executable, "-m", "mgpipe.gen.inc_symbols", "compare", str(real), str(ours)]
    ok = subprocess.run(cmd, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "A.inc: " in ok.stdout and "missing 0, different 0" in ok.stdout
    (ours / "A.inc").write_text(SAMPLE.replace("kBlue = 0x10u", "kBlue = 17"))
    bad = subprocess.run(cmd, capture_output=True, text=True)
    assert bad.returncode == 1 and "different sample.inc" not in bad.stdout
    assert re.search(r"different A\.inc:\d+: Colour::kBlue: '16', ours '17'", bad.stdout), bad.stdout
    gone = subprocess.run(cmd[:-1] + [str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert gone.returncode == 2 and gone.stderr.startswith("<command line>:1:1: INC-COMPARE:")


# ----------------------------------------------------------- the snapshot's outputs


@needs_snapshot
@pytest.mark.parametrize("name", ["PipeTables.inc", "PipeThunks.inc", "PipeWire.inc",
                                  "PipeWireLayout.inc", "PipeVerify.inc", "PipeFilled.inc",
                                  "PipeFillPoints.inc", "PipeFieldOwnership.inc",
                                  "PipeSpanTable.inc"])
def test_each_snapshot_output_reads_and_equals_itself_reformatted(name: str) -> None:
    text = (REAL_GENERATED / name).read_text()
    # every line re-indented, every run of spaces outside a string literal doubled, every
    # whole-line comment dropped, every blank line removed
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        lines.append("\t" + (line if '"' in line else re.sub(r" +", "  ", line)))
    ours = "\n".join(lines) + "\n"
    real_fs, our_fs = inc.parse_text(text, name), inc.parse_text(ours, name)
    inc.evaluate([real_fs]), inc.evaluate([our_fs])
    assert len(real_fs.symbols) > 3
    r = inc.compare(real_fs, our_fs)
    assert (r.missing, r.different, r.extra) == ([], [], []), inc.format_report([r])


@needs_snapshot
def test_the_snapshot_facts_are_read_as_the_real_generator_wrote_them() -> None:
    fs = {n: inc.parse_file(REAL_GENERATED / n) for n in ("PipeWire.inc", "PipeTables.inc")}
    inc.evaluate(list(fs.values()))
    wire, tables = fs["PipeWire.inc"].symbols, fs["PipeTables.inc"].symbols
    assert wire["MGPWireOp::SetShaderBuffers"].number == 38  # seed 003's figure
    assert wire["MGPWireOp::BindContext"].number == 84 and wire["MGPWireOp::kOpCount"].number == 85
    assert len(wire["var kMGPipeCallFlags"].elements) == 85
    assert tables["var kMGPipeCallCount"].number == 84
    assert "GetCaps: void (*)(const MGPCaps *, const void *, Uint64, MGPReplySlot *)" in \
        tables["struct MGPipeScreen"].value


@needs_snapshot
@pytest.mark.parametrize("plant, kind, key", [
    (("GetCaps = 1,", "GetCaps = 2,"), "different", "MGPWireOp::GetCaps"),
    (("inline constexpr SizeT kMGPipeCallCount = 84;", ""), "missing", "var kMGPipeCallCount"),
    (("void (*GetCaps)(const MGPCaps* payload, const void* blobBytes, Uint64 blobByteCount, MGPReplySlot* reply);",
      "void (*GetCaps)(const MGPCaps* payload, MGPReplySlot* reply);"), "different", "struct MGPipeScreen"),
    (("inline void MGP_GetCaps(const MGPCaps* payload, const void* blobBytes, Uint64 blobByteCount, MGPReplySlot* reply)",
      "inline void MGP_GetCaps(const MGPCaps* payload, MGPReplySlot* reply)"), "missing",
     "function MGP_GetCaps(const MGPCaps *, const void *, Uint64, MGPReplySlot *)"),
    (("/* 59 DrawVbo                 */ static_cast<Uint8>(kWaitNone)",
      "/* 59 DrawVbo                 */ static_cast<Uint8>(kWaitApplied)"), "different", "var kMGPipeWaitClasses"),
    (("static_assert(kMGPipeCallFlagsAllBits == 0x3Fu,", "static_assert(kMGPipeCallFlagsAllBits == 0x7Fu,"),
     "missing", "static_assert kMGPipeCallFlagsAllBits == 63"),
])
def test_planted_differences_in_a_snapshot_copy_are_reported(tmp_path: Path, plant, kind, key) -> None:
    old, new = plant
    real, ours = tmp_path / "real", tmp_path / "ours"
    real.mkdir(), ours.mkdir()
    for n in ("PipeTables.inc", "PipeThunks.inc", "PipeWire.inc"):
        text = (REAL_GENERATED / n).read_text()
        (real / n).write_text(text)
        if old in text:
            assert text.count(old) == 1
            text = text.replace(old, new)
        (ours / n).write_text(text)
    reports = inc.compare_dirs(real, ours)
    found = {"missing": [s.key for r in reports for s in r.missing],
             "different": [s.key for r in reports for s, _, _ in r.different]}
    assert key in found[kind], inc.format_report(reports)
    other = "different" if kind == "missing" else "missing"
    assert found[other] == [] and len(found[kind]) == 1, found


def test_every_committed_output_reads() -> None:
    """The reader takes this project's own outputs too (the bundled catalogue's generated/)."""
    from mgpipe.gen import GENERATED_DIR

    files = sorted(GENERATED_DIR.glob("*.inc"))
    assert len(files) >= 10
    fs = [inc.parse_file(p) for p in files]
    inc.evaluate(fs)
    wire = next(f for f in fs if f.path == "PipeWire.inc").symbols
    assert wire["enum MGPWireOp"].value.startswith("enum class")
    assert wire["MGPWireOp::kOpCount"].number == len(wire["var kMGPipeCallFlags"].elements)
