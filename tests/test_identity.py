"""Identity: what names a catalogue's ABI, and what does not.

The build fingerprint is the ABI's (every row's name, opcode, flags and wait class; every
member's name, type, offset and size; the chunk table), never the text of PipeCalls.def; the
outputs never spell the directory the catalogue sits in; `mgpipe gen` says which catalogue
and output it used.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR, REPO_ROOT
from mgpipe.gen.build import build


def _copy(tmp: Path, name: str = "MG_Pipe") -> Path:
    """A copy of the bundled tree as ``tmp/catalogue/<name>``, its includes beside it."""
    for part in ("MG_Util", "MG_Backend"):
        shutil.copytree(CATALOGUE_DIR.parent / part, tmp / "catalogue" / part)
    cat = tmp / "catalogue" / name
    shutil.copytree(CATALOGUE_DIR, cat, ignore=shutil.ignore_patterns("__pycache__"))
    return cat


def test_a_comment_edit_keeps_the_build_fingerprint(tmp_path: Path) -> None:
    before = build(CATALOGUE_DIR).model
    cat = _copy(tmp_path)
    calls = cat / "PipeCalls.def"
    calls.write_text("// a comment nobody compiles\n" + calls.read_text())
    after = build(cat).model
    assert after.abi_fingerprint == before.abi_fingerprint
    assert after.catalogue_fingerprint == before.catalogue_fingerprint == before.abi_fingerprint


def test_a_member_reorder_moves_it(tmp_path: Path) -> None:
    before = build(CATALOGUE_DIR).model.abi_fingerprint
    cat = _copy(tmp_path)
    types = cat / "MGPipeTypes.h"
    text = types.read_text()
    old = "struct MGPBox {\n        Int32 X;\n        Int32 Y;"
    assert old in text
    types.write_text(text.replace(old, "struct MGPBox {\n        Int32 Y;\n        Int32 X;"))
    fields = cat / "PipeFields.def"
    f = fields.read_text()
    old_rows = "MGP_FIELDS_MGPBox(F) \\\n    F(X) F(Y) F(Z)"
    assert old_rows in f
    fields.write_text(f.replace(old_rows, "MGP_FIELDS_MGPBox(F) \\\n    F(Y) F(X) F(Z)"))
    assert build(cat).model.abi_fingerprint != before


def test_outputs_do_not_spell_the_catalogue_directory_name(tmp_path: Path) -> None:
    cat = _copy(tmp_path, "a-renamed-catalogue")
    shutil.copytree(GENERATED_DIR, tmp_path / "out", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--check", "--catalogue", str(cat),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert b"a-renamed-catalogue" not in b"".join(p.read_bytes() for p in (tmp_path / "out").iterdir()
                                                    if p.is_file())


def test_gen_names_its_catalogue_and_output(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--check"], capture_output=True,
                          text=True, cwd=REPO_ROOT)
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == "catalogue catalogue/MG_Pipe -> generated"
    away = subprocess.run([sys.executable, "-m", "mgpipe", "gen", "--check", "--out",
                           str(GENERATED_DIR)], capture_output=True, text=True, cwd=tmp_path)
    first = away.stdout.splitlines()[0]
    assert away.returncode == 0, away.stderr
    assert first.startswith(f"catalogue {CATALOGUE_DIR}") and "the bundled catalogue" in first
    assert "there is no ./catalogue here" in first


def test_the_layout_cache_never_reports_another_trees_paths(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two copies of one catalogue share cache entries (same content, same key), and what comes
    back names each copy's own files, relative to it: no absolute path, no other tree."""
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path / "cache"))
    a = _copy(tmp_path / "a")
    b = _copy(tmp_path / "b")
    ma = build(a).model
    entries = sorted((tmp_path / "cache").glob("layout-*"))
    mb = build(b).model
    assert sorted((tmp_path / "cache").glob("layout-*")) == entries  # b was a hit
    dump_b = mb.model_dump_json()
    assert str(tmp_path) not in dump_b and str(tmp_path) not in ma.model_dump_json()
    assert all(not s.header.startswith("/") for s in mb.structs)
    assert mb.abi_fingerprint == ma.abi_fingerprint
