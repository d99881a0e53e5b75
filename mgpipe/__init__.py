"""mgpipe: the MGPipe toolchain (generator + Python reference runtime).

``mgpipe.__version__`` is read from the installed package's metadata on first access, so
``import mgpipe`` itself never pays for ``importlib.metadata``.
"""

from __future__ import annotations

__all__ = ["__version__"]

_UNKNOWN = "0.0.0+unknown"  # a source tree that was never installed


def _dist_info_version() -> str | None:
    """The ``Version:`` of the first ``mgpipe-*.dist-info`` on ``sys.path`` (the one
    ``importlib.metadata`` finds first), read without importing ``importlib.metadata``
    (email, zipfile, csv: most of ``mgpipe --version``'s time); None: not found here."""
    import os
    import sys

    for entry in sys.path:
        try:
            names = sorted(n for n in os.listdir(entry or ".")
                           if n.startswith("mgpipe-") and n.endswith(".dist-info"))  # fmt: skip
        except OSError:
            continue
        for n in names:
            try:
                with open(os.path.join(entry or ".", n, "METADATA"), encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break  # the end of the headers
            except OSError:
                continue
    return None


def __getattr__(name: str) -> str:
    if name == "__version__":
        version = _dist_info_version()
        if version is None:
            from importlib import metadata

            try:
                version = metadata.version("mgpipe")
            except metadata.PackageNotFoundError:
                version = _UNKNOWN
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
