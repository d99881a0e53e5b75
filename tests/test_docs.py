"""The docs keep up with the code: every command is in the README's command table, every
``MGPIPE_*`` setting the code or ``ci/run`` reads is in its environment table, and the
docs cite MobileGL's design documents by name (docs/GLOSSARY.md), never as "seed N"."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from mgpipe.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
#: where settings are read: the package's sources, the tests, the scripts and ci/run
SETTING_SOURCES = ("mgpipe", "gen", "runtime", "tests", "benchmarks")
#: a setting name, or a prefix of a family of them (``MGPIPE_IPC_*``)
WHOLE = re.compile(r"MGPIPE_[A-Z0-9_]+")


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def commands() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def undocumented_commands(readme: str) -> set[str]:
    table = _section(readme, "Using it")
    listed = set(re.findall(r"^\| `mgpipe ([a-z-]+)", table, re.M))
    return commands() - listed


#: calls whose first argument names a setting (os.environ.get, os.getenv, monkeypatch.setenv)
READING_CALLS = frozenset({"get", "getenv", "setenv", "delenv", "pop", "setdefault"})


def _names_in(f: Path) -> list[str]:
    """Setting names a file reads. In Python: a whole-name string constant used as a
    setting -- the first argument of ``.get`` / ``getenv`` / ``setenv`` / ..., a subscript
    (``os.environ["X"]``), a dict key (an environment built for a child), a keyword
    (``dict(os.environ, X=...)``), or the value of a name that says so (``X_ENV = "X"``,
    ``_IPC_PREFIX = "MGPIPE_IPC_"``); a C macro named in a compiler's argument list is not
    one. In a shell script: every ``$X``, ``${X`` and ``X=``."""
    text = f.read_text(errors="replace")
    if f.suffix != ".py":
        return re.findall(r"(?:\$\{?|\b)(MGPIPE_[A-Z0-9_]+)(?=\}|=|:|\b)", text)

    def name(n: ast.AST | None) -> list[str]:
        ok = isinstance(n, ast.Constant) and isinstance(n.value, str) and WHOLE.fullmatch(n.value)
        return [n.value] if ok else []  # type: ignore[union-attr]

    out: list[str] = []
    for n in ast.walk(ast.parse(text, str(f))):
        if isinstance(n, ast.Call):
            fn = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            if fn in READING_CALLS and n.args:
                out += name(n.args[0])
            out += [k.arg for k in n.keywords if k.arg and WHOLE.fullmatch(k.arg)]
        elif isinstance(n, ast.Subscript):
            out += name(n.slice)
        elif isinstance(n, ast.Dict):
            for k in n.keys:
                out += name(k)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(re.search(r"ENV|PREFIX", getattr(t, "id", "")) for t in targets):
                out += name(n.value)
    return out


def settings_read(files: list[Path]) -> dict[str, str]:
    """Every MGPIPE_* setting ``files`` read -> the first file naming it."""
    out: dict[str, str] = {}
    for f in files:
        for name in _names_in(f):
            out.setdefault(name, _rel(f))
    return out


def undocumented_settings(files: list[Path], readme: str) -> dict[str, str]:
    table = _section(readme, "Environment variables")
    documented = set(re.findall(r"^\| `(MGPIPE_[A-Z0-9_]+\*?)`", table, re.M))
    prefixes = tuple(d[:-1] for d in documented if d.endswith("*"))
    return {
        n: where
        for n, where in settings_read(files).items()
        if n not in documented and not (n.startswith(prefixes) if prefixes else False)
    }


def _setting_files() -> list[Path]:
    files = [ROOT / "ci" / "run"]
    for d in SETTING_SOURCES:
        files += [p for p in sorted((ROOT / d).rglob("*.py")) if "__pycache__" not in p.parts]
    return files


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else str(p)


def seed_citations(paths: list[Path]) -> list[str]:
    out = []
    for p in paths:
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"\bseeds? 00\d", line):
                out.append(f"{_rel(p)}:{i}: {line.strip()}")
    return out


def test_every_command_is_in_the_readme_table() -> None:
    assert {"bench", "serve", "gen", "run"} <= commands()  # the parser is read, not guessed
    assert not undocumented_commands(README.read_text())


def test_every_setting_is_in_the_environment_table() -> None:
    found = settings_read(_setting_files())
    assert {"MGPIPE_TABLES_MODULE", "MGPIPE_CLANG_ARGS", "MGPIPE_MOBILEGL"} <= set(found)
    missing = undocumented_settings(_setting_files(), README.read_text())
    assert not missing, "README.md, Environment variables: " + ", ".join(
        f"{n} (read in {w})" for n, w in sorted(missing.items())
    )


def test_docs_cite_design_documents_by_name() -> None:
    found = seed_citations(DOCS)
    assert not found, "\n".join(found)


def test_planted_omissions_are_reported(tmp_path: Path) -> None:
    """Negative controls: a command row, a setting row and a design-document name removed
    or a new setting read: each is reported by name."""
    readme = README.read_text()
    assert undocumented_commands(readme.replace("| `mgpipe serve`", "| `serve`")) == {"serve"}
    knob = "MGPIPE_" + "PLANTED_KNOB"  # spelt apart: this file is scanned too
    planted = tmp_path / "knob.py"
    planted.write_text(f'os.environ.get("{knob}")\n')
    assert set(undocumented_settings([planted], readme)) == {knob}
    no_cache_row = re.sub(r"^\| `MGPIPE_CACHE_DIR`.*\n", "", readme, flags=re.M)
    assert "MGPIPE_CACHE_DIR" in undocumented_settings(_setting_files(), no_cache_row)
    cited = tmp_path / "cited.md"
    cited.write_text("as seed 001 §5.1 says\n")
    assert len(seed_citations([cited])) == 1
