"""The mgpipe generator: catalogue parsers, model, gates and output renderers.

Installed as ``mgpipe.gen`` (``gen/`` in the source tree). Inputs are located
relative to the source tree, never relative to the current directory.
"""

from __future__ import annotations

from pathlib import Path

#: Root of the source tree (the directory that holds ``catalogue/``, ``templates/``).
REPO_ROOT: Path = Path(__file__).resolve().parent.parent
#: The X-macro catalogues and ``include/`` headers.
CATALOGUE_DIR: Path = REPO_ROOT / "catalogue"
#: The C++ headers libclang reads.
INCLUDE_DIR: Path = CATALOGUE_DIR / "include"
#: One Jinja2 template per output.
TEMPLATES_DIR: Path = REPO_ROOT / "templates"
#: Committed outputs.
GENERATED_DIR: Path = REPO_ROOT / "generated"

__all__ = ["REPO_ROOT", "CATALOGUE_DIR", "INCLUDE_DIR", "TEMPLATES_DIR", "GENERATED_DIR"]
