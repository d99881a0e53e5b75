"""Suite-wide reporting: measured counts a test records (``record_property``) are printed
in the terminal summary whatever the capture mode, e.g. the atheris fuzz input count."""

from __future__ import annotations

from typing import Any

import os

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red CI is reproducible from its log); local runs
# keep exploring. No test may depend on wall-clock deadlines on a loaded 2-core machine.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

_REPORTED_PREFIXES = ("atheris_", "fuzz_", "spawn_")
_measured: list[tuple[str, str, Any]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        for name, value in report.user_properties:
            if name.startswith(_REPORTED_PREFIXES):
                _measured.append((report.nodeid, name, value))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _measured:
        terminalreporter.section("measured")
        for nodeid, name, value in _measured:
            terminalreporter.write_line(f"{nodeid}: {name} = {value}")


# -- the spawn lane's two gates (tests/spawn_lane.py) ----------------------------------
from spawn_lane import check_session, lane, collect_lane_keys  # noqa: E402,F401
import spawn_lane  # noqa: E402
import xdist_plan  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    spawn_lane.configure(config)  # the lane's gates across xdist workers
    xdist_plan.configure(config)  # the serial marker


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    collect_lane_keys(items)  # before -k / -m deselect: the whole set
    xdist_plan.group_items(items)  # module fixtures built once (tests/xdist_plan.py)


def pytest_sessionfinish(session: pytest.Session) -> None:
    check_session(session)


# -- copies of the two catalogue trees (tests plant defects in copies, never in the tree) ----
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

#: the bundled MobileGL-shaped tree and the out-of-tree includes that sit beside it
BUNDLED_PARTS = ("MG_Pipe", "MG_Util", "MG_Backend")


def copy_bundled(dest: Path, with_outputs: bool = True) -> tuple[Path, Path]:
    """``dest/catalogue/{MG_Pipe,MG_Util,MG_Backend}`` and ``dest/generated``: a copy of the
    bundled tree as a checkout holds it -> (the MG_Pipe copy, the outputs copy)."""
    from mgpipe.gen import CATALOGUE_DIR, GENERATED_DIR

    for part in BUNDLED_PARTS:
        shutil.copytree(CATALOGUE_DIR.parent / part, dest / "catalogue" / part,
                        ignore=shutil.ignore_patterns("__pycache__"))
    if with_outputs:
        shutil.copytree(GENERATED_DIR, dest / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    return dest / "catalogue" / CATALOGUE_DIR.name, dest / "generated"


def copy_original(dest: Path, with_outputs: bool = True) -> tuple[Path, Path]:
    """``dest/catalogue`` (the original shape: its .def files, PipeCalls.lock, include/) and
    ``dest/generated`` holding that shape's own outputs, generated here (the committed
    generated/ is the bundled tree's) -> (the catalogue copy, the outputs)."""
    from mgpipe.gen import ORIGINAL_DIR
    from mgpipe.gen.build import build
    from mgpipe.gen.render import render_all

    cat = dest / "catalogue"
    cat.mkdir(parents=True)
    for p in ORIGINAL_DIR.iterdir():
        if p.is_file() and (p.suffix == ".def" or p.name == "PipeCalls.lock"):
            shutil.copy2(p, cat / p.name)
    shutil.copytree(ORIGINAL_DIR / "include", cat / "include")
    out = dest / "generated"
    if with_outputs:
        out.mkdir()
        for o in render_all(build(ORIGINAL_DIR).model):
            (out / o.name).write_text(o.text, encoding="utf-8")
    return cat, out


@pytest.fixture()
def bundled_tree(tmp_path: Path) -> tuple[Path, Path]:
    return copy_bundled(tmp_path)


@pytest.fixture()
def original_tree(tmp_path: Path) -> tuple[Path, Path]:
    return copy_original(tmp_path)
