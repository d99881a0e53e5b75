"""Same bytes from any directory; each output names only its own inputs; black is pinned."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR, REPO_ROOT
from mgpipe.gen.render import ModelView, outputs

from conftest import copy_bundled  # noqa: E402

CALL_OUTPUTS = {"PipeTables.inc", "PipeThunks.inc", "PipeWire.inc", "PipeWireLayout.inc",
                "PipeFilled.inc", "PipeFillPoints.inc", "PipeCoverage.inc", "pipe_tables.py"}


@pytest.mark.parametrize("where", ["/", "catalogue", "tmp"])
def test_gen_check_is_clean_from_any_directory(where: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    cwd = {"/": Path("/"), "catalogue": CATALOGUE_DIR, "tmp": tmp_path}[where]
    monkeypatch.chdir(cwd)
    assert cli.main(["gen", "--check"]) == 0, capsys.readouterr()
    assert cli.main(["gen", "--check", "--catalogue", str(CATALOGUE_DIR),
                     "--out", str(GENERATED_DIR)]) == 0, capsys.readouterr()


def test_an_error_names_its_file_relative_to_the_catalogue_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    cat, _ = copy_bundled(tmp_path / "deep", with_outputs=False)
    (cat / "PipeFields.def").unlink()
    monkeypatch.chdir("/")
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("MG_Pipe/PipeFields.def:1:1: DEF-MISSING: "), err


def _header_inputs(text: str) -> list[str]:
    return re.findall(r"^(?://|#)   (\S+) [0-9a-f]{16}$", text, flags=re.M)


def test_each_output_lists_only_the_inputs_it_reads() -> None:
    g7 = _header_inputs((GENERATED_DIR / "PipeSpanTable.inc").read_text())
    assert "MG_Pipe/PipeCalls.def" not in g7 and "MG_Pipe/EsprytSpans.def" in g7
    g1 = _header_inputs((GENERATED_DIR / "PipeTables.inc").read_text())
    assert "MG_Pipe/PipeCalls.def" in g1 and "MG_Pipe/Coverage.def" not in g1
    everything = _header_inputs((GENERATED_DIR / "pipe_tables.py").read_text())
    # every .def list and header of the tree; the lock is no input (it is an output)
    assert sorted(everything) == sorted(f"MG_Pipe/{p.name}" for p in CATALOGUE_DIR.iterdir()
                                        if p.suffix in (".def", ".h"))


def test_a_one_row_call_edit_rewrites_only_the_outputs_that_read_calls(tmp_path: Path, capsys) -> None:
    cat, out = copy_bundled(tmp_path)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    defs = cat / "PipeCalls.def"
    text = defs.read_text()
    row = re.search(r"^\s*X\(SetSwapInterval,.*$", text, flags=re.M)
    assert row is not None and "kOptional" in row.group(0)
    defs.write_text(text.replace(row.group(0), row.group(0).replace("kOptional", "kNone   ")))
    assert cli.main(["gen", "--catalogue", str(cat), "--out", str(out)]) == 0
    capsys.readouterr()
    changed = {n for n, b in before.items() if (out / n).read_bytes() != b}
    assert changed == CALL_OUTPUTS


def test_an_output_cannot_read_a_field_it_does_not_declare() -> None:
    from mgpipe.gen.build import build

    model = build(CATALOGUE_DIR).model
    view = ModelView(model, ("render_state",))
    assert view.render_state is model.render_state
    with pytest.raises(AttributeError, match="READS"):
        view.calls  # noqa: B018
    with pytest.raises(AttributeError, match="READS"):
        view.struct("MGPFlush")
    for module in outputs():  # every output renders from exactly what it declares
        module.context(ModelView(model, module.READS))


def test_black_is_pinned_exactly_to_the_version_that_formatted_the_tables() -> None:
    deps = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [d for d in deps if re.match(r"black\b", d)]
    assert len(pins) == 1 and re.fullmatch(r"black==[0-9][0-9.]*", pins[0].split(";")[0].strip())
    assert pins[0].split("==")[1].strip() == version("black")
