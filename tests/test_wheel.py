"""`pip install .` works as well as `pip install -e .`: build the wheel, install it into a
fresh venv, and use it from a directory outside the repository.

The venv finds the dependencies in this interpreter's site-packages (a path file naming
them, so that they are found whether this interpreter is a venv or not, and the editable
install's own path hooks stay out) and the wheel is installed with --no-deps --no-index,
so the test needs no network.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mgpipe.gen import REPO_ROOT

DATA_SUFFIXES = (".lark", ".def", ".lock", ".h", ".inc", ".j2", ".spv", ".glsl", ".vert", ".frag",
                 ".comp", ".json", ".png")
SOURCE_DIRS = {"mgpipe": "mgpipe", "gen": "mgpipe/gen", "runtime": "mgpipe/runtime",
               "generated": "mgpipe/generated", "catalogue": "mgpipe/catalogue",
               "templates": "mgpipe/templates"}


def _source_files() -> list[str]:
    """What the build reads: the package source directories and the build configuration."""
    files = ["pyproject.toml", "setup.py", "README.md"]
    for top in SOURCE_DIRS:
        files += [p.relative_to(REPO_ROOT).as_posix() for p in sorted((REPO_ROOT / top).rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    return files


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    files = _source_files()
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / f, src / f)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--no-index", "-w", str(root / "dist"), str(src)], check=True, env=env,
                   capture_output=True)
    (wheel,) = (root / "dist").glob("mgpipe-*.whl")  # built from a copy: the checkout stays clean
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    py = root / "venv" / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], check=True, env=env, capture_output=True)
    work = root / "elsewhere"
    work.mkdir()
    return {"root": root, "wheel": wheel, "py": py, "mgpipe": root / "venv" / "bin" / "mgpipe",
            "work": work, "env": {**env, "MGPIPE_CACHE_DIR": str(root / "cache")}, "files": files}


def _run(inst: dict, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(inst["mgpipe"]), *argv], cwd=inst["work"], env=inst["env"],
                          capture_output=True, text=True)


def test_the_wheel_ships_every_package_and_data_file(installed: dict) -> None:
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    shipped = [f for f in installed["files"] if "/" in f and f.split("/", 1)[0] in SOURCE_DIRS
               and f.endswith((".py", *DATA_SUFFIXES))]
    assert any(f.startswith("runtime/") and "/" in f[len("runtime/"):] for f in shipped)
    for f in shipped:
        top, rest = f.split("/", 1)
        assert f"{SOURCE_DIRS[top]}/{rest}" in names, f"{f} is not in the wheel"
    # the bundled catalogue as the installed tool reads it: the MG_Pipe tree with its lock,
    # and the out-of-tree includes beside it (MG_Util, MG_Backend)
    from mgpipe.gen import CATALOGUE_DIR

    tree = [f"mgpipe/catalogue/{p.relative_to(CATALOGUE_DIR.parent).as_posix()}"
            for part in ("MG_Pipe", "MG_Util", "MG_Backend")
            for p in sorted((CATALOGUE_DIR.parent / part).rglob("*")) if p.is_file()]
    assert "mgpipe/catalogue/MG_Pipe/PipeCalls.lock" in tree and "mgpipe/catalogue/MG_Util/Types.h" in tree
    assert "mgpipe/catalogue/MG_Backend/BackendObject.h" in tree
    assert [f for f in tree if f not in names] == []


def test_the_installed_tool_runs_outside_the_repository(installed: dict) -> None:
    where = subprocess.run([str(installed["py"]), "-c", "import mgpipe, mgpipe.gen as g; "
                            "print(mgpipe.__file__); print(g.CATALOGUE_DIR)"],
                           cwd=installed["work"], env=installed["env"], capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.splitlines():
        assert line.startswith(str(installed["root"] / "venv")), line
    assert _run(installed, "--version").stdout.startswith("mgpipe ")
    calls = json.loads(_run(installed, "calls", "--json").stdout)["calls"]
    assert calls[0]["name"] == "GetCaps"
    layout = _run(installed, "layout", "RenderStateParameters", "--json")
    assert json.loads(layout.stdout)["size"] > 0, layout.stderr
    chunks = _run(installed, "chunks", "--json")
    assert json.loads(chunks.stdout)["pipeline"], chunks.stderr
    check = _run(installed, "gen", "--check")  # the bundled catalogue against its own outputs
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr


def test_the_installed_tool_generates_a_catalogue_directory(installed: dict) -> None:
    project = installed["work"] / "project" / "catalogue"
    shutil.copytree(REPO_ROOT / "catalogue", project, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    cat = project / "MG_Pipe"  # the bundled tree, copied with its includes beside it
    out = installed["work"] / "out"
    gen = _run(installed, "gen", "--catalogue", str(cat), "--out", str(out))
    assert gen.returncode == 0, gen.stderr
    made = sorted(p.name for p in out.iterdir())
    assert made == sorted(p.name for p in (REPO_ROOT / "generated").iterdir() if p.suffix in (".inc", ".py")
                          and p.name != "__init__.py")
    for name in made:  # the same bytes as the committed outputs, from another place
        assert (out / name).read_bytes() == (REPO_ROOT / "generated" / name).read_bytes(), name
    st = _run(installed, "self-test", "--catalogue", str(cat), "--out", str(out), "-k", "clean",
              "-k", "any-wait-class-reply", "-k", "any-lock-missing", "-k", "stale-hand-edit", "--json")
    assert st.returncode == 0, st.stderr
    assert [(r["name"], r["status"]) for r in json.loads(st.stdout)["controls"]] == [
        ("stale-hand-edit", "PASS"), ("any-wait-class-reply", "PASS"), ("any-lock-missing", "PASS"),
        ("clean", "PASS")]
    # the original shape still generates from the installed tool, into its own directory
    own = installed["work"] / "original-out"
    orig = _run(installed, "gen", "--catalogue", str(project), "--out", str(own))
    assert orig.returncode == 0, orig.stderr
    assert sorted(p.name for p in own.iterdir()) == made
    st = _run(installed, "self-test", "--catalogue", str(project), "--out", str(own), "-k", "clean",
              "-k", "pod-pointer", "-k", "lock-missing", "--json")
    assert st.returncode == 0, st.stderr
    assert {r["status"] for r in json.loads(st.stdout)["controls"]} == {"PASS"}


def test_the_installed_runtime_imports_every_subpackage(installed: dict) -> None:
    pkgs = sorted({"mgpipe.runtime." + str(p.parent.relative_to(REPO_ROOT / "runtime")).replace("/", ".")
                   for p in (REPO_ROOT / "runtime").rglob("__init__.py")} - {"mgpipe.runtime.."})
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m.rstrip('.'))"
    r = subprocess.run([str(installed["py"]), "-c", code, *pkgs], cwd=installed["work"],
                       env=installed["env"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
