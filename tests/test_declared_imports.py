"""Every import the package, its scripts and the tests make is declared in pyproject.toml.

Each ``.py`` file of the package's source directories (``setup.py``'s ``ROOTS``), of
``tests/`` and ``benchmarks/`` and ``setup.py`` itself is read with ``ast``; every top-level
module it imports (``import x``, ``from x import y``, and a constant name given to
``importlib.import_module`` / ``pytest.importorskip``) that is neither the standard
library, the project itself nor a module beside the importing file is mapped to the
distributions that provide it (``importlib.metadata.packages_distributions``). A module
whose distribution no dependency list names (``project.dependencies``, any
``project.optional-dependencies`` extra, ``build-system.requires``) is a finding; so is a
module no installed distribution provides (``ci/run`` installs only the declared ones, so
there an undeclared module is exactly that). Transitive dependencies count as undeclared:
a module imported directly must be declared directly.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
#: what besides the package's own source directories is scanned
EXTRA_SOURCES = ("tests", "benchmarks", "setup.py")
#: calls whose constant first argument is an import
IMPORTING_CALLS = frozenset({"import_module", "importorskip", "__import__"})


def _dist(name: str) -> str:
    """A distribution's canonical name (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_distributions(pyproject: Path = PYPROJECT) -> set[str]:
    doc = tomllib.loads(pyproject.read_text())
    reqs = list(doc["project"].get("dependencies", []))
    for extra in doc["project"].get("optional-dependencies", {}).values():
        reqs += extra
    reqs += doc.get("build-system", {}).get("requires", [])
    names = {_dist(m.group(0)) for r in reqs if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r))}
    return names | {_dist(doc["project"]["name"])}


def source_files(root: Path = ROOT) -> list[Path]:
    """Every .py file of the package's source directories, the tests and the scripts."""
    tree = ast.parse((root / "setup.py").read_text())
    roots = next(
        ast.literal_eval(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", None) == "ROOTS"
    )
    files: list[Path] = []
    for src in sorted(set(roots.values()) | set(EXTRA_SOURCES)):
        p = root / src
        files += [p] if p.is_file() else sorted(p.rglob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts]


def imported_modules(path: Path) -> list[tuple[str, int]]:
    """(top-level module, line) for every absolute import the file makes."""
    out: list[tuple[str, int]] = []
    for n in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(n, ast.Import):
            out += [(a.name.split(".")[0], n.lineno) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            out.append((n.module.split(".")[0], n.lineno))
        elif isinstance(n, ast.Call) and n.args:
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            arg = n.args[0]
            if (
                name in IMPORTING_CALLS
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
            ):
                if not arg.value.startswith("."):
                    out.append((arg.value.split(".")[0], n.lineno))
    return out


def _local(module: str, path: Path) -> bool:
    """A module beside the importing file (a test's helper, a script's sibling)."""
    d = path.parent
    return (d / f"{module}.py").is_file() or (d / module).is_dir()


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    module: str
    why: str

    def text(self) -> str:
        return f"{self.path}:{self.line}: module {self.module!r} {self.why}"


def undeclared(files: list[Path], declared: set[str], root: Path = ROOT) -> list[Finding]:
    provides = packages_distributions()
    out: list[Finding] = []
    for f in files:
        rel = f.relative_to(root).as_posix() if f.is_relative_to(root) else str(f)
        for module, line in imported_modules(f):
            if module in sys.stdlib_module_names or module == "__future__" or _local(module, f):
                continue
            dists = {_dist(d) for d in provides.get(module, [])}
            if not dists:
                out.append(Finding(rel, line, module, "is provided by no installed distribution "
                                   "and no dependency list in pyproject.toml declares it"))  # fmt: skip
            elif not dists & declared:
                out.append(Finding(rel, line, module, f"comes from {', '.join(sorted(dists))}, "
                                   "which no dependency list in pyproject.toml declares"))  # fmt: skip
    return out


def test_every_import_is_declared() -> None:
    found = undeclared(source_files(), declared_distributions())
    assert not found, "\n".join(f.text() for f in found)


def test_the_scan_reaches_the_imports_users_need() -> None:
    """Not vacuous: the scan sees the package's, the tests' and an optional import."""
    seen = {
        (f.relative_to(ROOT).as_posix(), m) for f in source_files() for m, _ in imported_modules(f)
    }
    for where in [("gen/layout.py", "clang"), ("gen/defparse.py", "lark"),
                  ("runtime/harness/bench/plot.py", "matplotlib"),
                  ("tests/test_wire_fuzz.py", "atheris"), ("setup.py", "setuptools")]:  # fmt: skip
        assert where in seen, where


def test_planted_undeclared_imports_are_reported(tmp_path: Path) -> None:
    """Negative controls: a module nothing provides, a transitive dependency imported
    directly, an importorskip of an undeclared module, and a declared module whose
    declaration is removed, are each reported with their module and file."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import json\n"
        "import numpy\n"
        "import mgpipe_planted_undeclared.sub\n"
        "from cffi import FFI\n"
        "import pytest\n"
        "pytest.importorskip('mgpipe_planted_skip')\n"
    )
    found = undeclared([planted], declared_distributions(), root=tmp_path)
    assert [(f.path, f.line, f.module) for f in found] == [
        ("planted.py", 3, "mgpipe_planted_undeclared"),
        ("planted.py", 4, "cffi"),
        ("planted.py", 6, "mgpipe_planted_skip"),
    ]
    assert "no dependency list in pyproject.toml declares it" in found[0].text()
    assert found[1].text() == (
        "planted.py:4: module 'cffi' comes from cffi, which no dependency list in "
        "pyproject.toml declares"
    )
    # the real tree against a pyproject without the plot extra's matplotlib: red, named
    without = tmp_path / "pyproject.toml"
    without.write_text(re.sub(r'"matplotlib[^"]*",?', "", PYPROJECT.read_text()))
    found = undeclared(source_files(), declared_distributions(without))
    assert {(f.path, f.module) for f in found} == {("runtime/harness/bench/plot.py", "matplotlib")}
