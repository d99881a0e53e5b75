"""Package layout of mgpipe (metadata lives in pyproject.toml).

Each source directory installs as one ``mgpipe.*`` package; its subpackages are found, never
listed, and every data file under it (by suffix, subdirectories included, packages or not)
ships as package data, so ``pip install .`` gives the same tree as ``pip install -e .``.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent

#: installed package -> source directory
ROOTS: dict[str, str] = {
    "mgpipe": "mgpipe",
    "mgpipe.gen": "gen",
    "mgpipe.runtime": "runtime",
    "mgpipe.generated": "generated",
    "mgpipe.catalogue": "catalogue",
    "mgpipe.templates": "templates",
}
#: non-Python files that ship with the packages: grammar, catalogue, templates, shaders, data
DATA_SUFFIXES: frozenset[str] = frozenset({
    ".lark", ".def", ".lock", ".h", ".inc", ".j2", ".spv", ".glsl", ".vert", ".frag", ".comp", ".geom",
    ".tesc", ".tese", ".json", ".png",
})  # fmt: skip


def packages() -> list[str]:
    out = []
    for pkg, src in ROOTS.items():
        out.append(pkg)
        out += [f"{pkg}.{sub}" for sub in find_packages(str(HERE / src))]
    return sorted(out)


def package_dir(pkg: str) -> Path:
    """The source directory of an installed package name (longest root prefix wins)."""
    top = max((t for t in ROOTS if pkg == t or pkg.startswith(t + ".")), key=len)
    rest = pkg[len(top):].lstrip(".")
    return HERE / ROOTS[top] / Path(*rest.split(".")) if rest else HERE / ROOTS[top]


def package_data() -> dict[str, list[str]]:
    """Each data file, claimed by the nearest package directory above it."""
    dirs = {package_dir(pkg): pkg for pkg in packages()}
    data: dict[str, list[str]] = {}
    for src in ROOTS.values():
        for f in sorted((HERE / src).rglob("*")):
            if not f.is_file() or f.suffix not in DATA_SUFFIXES or "__pycache__" in f.parts:
                continue
            owner = next(d for d in [f.parent, *f.parent.parents] if d in dirs)
            data.setdefault(dirs[owner], []).append(f.relative_to(owner).as_posix())
    return data


setup(
    packages=packages(),
    package_dir={pkg: src for pkg, src in ROOTS.items()},
    package_data=package_data(),
    include_package_data=False,
)
