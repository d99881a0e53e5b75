"""Suite-wide reporting: measured counts a test records (``record_property``) are printed
in the terminal summary whatever the capture mode, e.g. the atheris fuzz input count."""

from __future__ import annotations

from typing import Any

import pytest

_REPORTED_PREFIXES = ("atheris_", "fuzz_")
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
