"""The mgpipe generator: catalogue parsers, model, gates and output renderers.

Installed as ``mgpipe.gen`` (``gen/`` in the source tree). The bundled catalogue, the
templates and the committed outputs are packages of their own (``mgpipe.catalogue``,
``mgpipe.templates``, ``mgpipe.generated``) and are found through ``importlib.resources``,
so the same paths hold in a source checkout, an editable install and an installed wheel --
never relative to the current directory.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path


def _package_dir(package: str) -> Path:
    """The package's directory, found without importing it or ``importlib.resources``
    (``mgpipe --version`` imports this module: it stays cheap)."""
    spec = find_spec(package)
    where = list(spec.submodule_search_locations or ()) if spec is not None else []
    if len(where) == 1:
        return Path(where[0])
    from importlib.resources import files  # a package spread over several places

    return Path(str(files(package)))


#: The bundled catalogue: a MobileGL-shaped ``MG_Pipe`` tree holding MGPipe's ABI (its
#: out-of-tree includes, ``MG_Util/`` and ``MG_Backend/``, sit beside it).
CATALOGUE_DIR: Path = _package_dir("mgpipe.catalogue") / "MG_Pipe"
#: mgpipe's original catalogue shape (``PayloadSizes.def``, ``PipeInputs.def``, headers in
#: ``include/``): still read by the reader of that shape and its tests, not the ABI.
ORIGINAL_DIR: Path = _package_dir("mgpipe.catalogue")
#: The original shape's C++ headers.
INCLUDE_DIR: Path = ORIGINAL_DIR / "include"
#: One Jinja2 template per output.
TEMPLATES_DIR: Path = _package_dir("mgpipe.templates")
#: The committed outputs (``generated/`` beside the bundled catalogue).
GENERATED_DIR: Path = _package_dir("mgpipe.generated")
#: The directory that holds the catalogue: the source tree's root in a checkout (where
#: ``tests/`` and ``pyproject.toml`` live), the installed ``mgpipe`` package otherwise.
REPO_ROOT: Path = ORIGINAL_DIR.parent

__all__ = ["REPO_ROOT", "CATALOGUE_DIR", "ORIGINAL_DIR", "INCLUDE_DIR", "TEMPLATES_DIR", "GENERATED_DIR"]
