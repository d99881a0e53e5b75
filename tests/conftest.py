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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    collect_lane_keys(items)  # before -k / -m deselect: the whole set


def pytest_sessionfinish(session: pytest.Session) -> None:
    check_session(session)
