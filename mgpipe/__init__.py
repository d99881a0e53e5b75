"""mgpipe: the MGPipe toolchain (generator + Python reference runtime).

``mgpipe.__version__`` is read from the installed package's metadata on first access, so
``import mgpipe`` itself never pays for ``importlib.metadata``.
"""

from __future__ import annotations

__all__ = ["__version__"]

_UNKNOWN = "0.0.0+unknown"  # a source tree that was never installed


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib import metadata

        try:
            version = metadata.version("mgpipe")
        except metadata.PackageNotFoundError:
            version = _UNKNOWN
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
