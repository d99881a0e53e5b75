"""How the suite splits across pytest-xdist workers (``ci/run``: ``-n 2 --dist loadgroup``).

* A test that uses a module-scoped fixture of its own file (a ``mgpipe self-test`` run, a
  compiled tree, a spawned server) is grouped with the rest of its file: one worker builds
  the fixture once, as a serial run does, instead of each worker building its own copy.
  Every other test is handed to whichever worker is free.
* ``@pytest.mark.serial``: a test that asserts a timing ratio or a CPU budget needs a quiet
  machine; ``ci/run`` deselects these from the parallel run (``-m "not serial"``) and runs
  them afterwards in a second, serial pytest (``-m serial``).
"""

from __future__ import annotations

import pytest

SERIAL_DOC = ("serial: asserts a timing ratio or a CPU budget; ci/run keeps it out of the "
              "parallel (xdist) run and runs it alone afterwards")  # fmt: skip

_SHARED_SCOPES = ("module", "package", "session")


def module_group(item: pytest.Item) -> str | None:
    """The item's file, when the item uses a fixture of wider scope defined in that file."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    here = item.nodeid.split("::", 1)[0]
    for defs in info.name2fixturedefs.values():
        for d in defs:
            if d.scope in _SHARED_SCOPES and d.baseid == here:
                return here
    return None


def group_items(items: list[pytest.Item]) -> None:
    for item in items:
        group = module_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(name=group))


def configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", SERIAL_DOC)
