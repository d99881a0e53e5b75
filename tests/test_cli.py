"""CLI boundary: command registry, `version`, and bad input -> exit 2 without a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mgpipe
from mgpipe import cli
from mgpipe.gen.errors import GenError, GenErrors


def test_error_format_and_aggregate_order() -> None:
    a = GenError("catalogue/PipeCalls.def", 57, 14, "UNKNOWN-FLAG", "unknown flag 'kHasBlobb'")
    assert str(a) == "catalogue/PipeCalls.def:57:14: UNKNOWN-FLAG: unknown flag 'kHasBlobb'"
    b = GenError("catalogue/PipeCalls.def", 3, 1, "DEF-SYNTAX", "x")
    c = GenError("catalogue/A.def", 9, 2, "DEF-SYNTAX", "y")
    assert str(GenErrors([a, b, c])).splitlines() == [str(c), str(b), str(a)]
    with pytest.raises(ValueError):
        GenError("p", 1, 1, "not-kebab", "t")


def test_version_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out.strip() == mgpipe.__version__


def test_gen_error_in_a_command_is_exit_2_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "boom_cmd.py").write_text(textwrap.dedent("""
            from mgpipe.gen.errors import GenError, GenErrors

            def run(args):
                raise GenErrors([GenError("b.def", 2, 1, "DEF-SYNTAX", "two"),
                                 GenError("a.def", 1, 1, "DEF-SYNTAX", "one")])

            def register(subparsers):
                subparsers.add_parser("boom").set_defaults(func=run)
            """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "boom_cmd"))
    assert cli.main(["boom"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["a.def:1:1: DEF-SYNTAX: one", "b.def:2:1: DEF-SYNTAX: two"]
    assert "Traceback" not in err


def test_console_script_runs_from_any_directory(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mgpipe", "version"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == mgpipe.__version__
