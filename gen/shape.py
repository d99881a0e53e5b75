"""Which shape a catalogue directory has, told from its file names alone (no parser: the
warm ``gen --check`` asks before anything heavy is imported)."""

from __future__ import annotations

from pathlib import Path


def is_mobilegl_tree(root: Path) -> bool:
    """A MobileGL-shaped tree keeps its headers beside the .def files: it has no ``include/``
    and none of the bundled shape's own lists (``PayloadSizes.def``, ``PipeInputs.def``)."""
    r = Path(root)
    return ((r / "PipeCalls.def").is_file() and not (r / "include").is_dir()
            and not (r / "PayloadSizes.def").is_file() and not (r / "PipeInputs.def").is_file())


__all__ = ["is_mobilegl_tree"]
