"""mgpipe: the MGPipe toolchain (generator + Python reference runtime)."""

from __future__ import annotations

from importlib import metadata

try:
    __version__: str = metadata.version("mgpipe")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
