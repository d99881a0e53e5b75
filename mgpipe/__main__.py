"""`python -m mgpipe` entry point.

In a source tree that was never installed, ``mgpipe/`` is importable from the repository
root but its subpackages are not: ``gen/``, ``runtime/``, ``generated/`` ... become
``mgpipe.gen``, ``mgpipe.runtime`` ... only when the package is installed (``setup.py``
maps them). That case, and a dependency that is not installed, is refused in one line
naming the fix instead of a traceback.
"""

from __future__ import annotations

import sys

_FIX = ("python3 -m venv .venv && .venv/bin/pip install -e . (then `.venv/bin/mgpipe` or "
        "`.venv/bin/python -m mgpipe`)")  # fmt: skip


def _refuse(exc: ModuleNotFoundError) -> int:
    name = exc.name or "?"
    if name.startswith("mgpipe."):
        what = (f"mgpipe is not installed: {name} is mapped from this source tree only by an "
                "install")  # fmt: skip
    else:
        what = f"no module named {name!r} (a dependency of mgpipe is not installed)"
    print(f"<command line>:1:1: NOT-INSTALLED: {what}, expected {_FIX}", file=sys.stderr)
    return 2


try:
    from mgpipe.cli import main
except ModuleNotFoundError as _exc:
    sys.exit(_refuse(_exc))
except KeyboardInterrupt:
    print("mgpipe: interrupted (Ctrl-C) while starting", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
