"""``mgpipe bench``: what the pipe costs per draw, beside the designs it replaces.

One concern per module: :mod:`.workloads` (the four streams), :mod:`.strategies`
(the render-state strategies (a)-(e)), :mod:`.measure` (one cell: census + timing),
:mod:`.run` (which cells, progress), :mod:`.guard` (structural facts and same-run
ratios), :mod:`.report` (JSON and tables), :mod:`.plot` (PNG charts), :mod:`.cli`
(the command), :mod:`.pipe` (the one door into the runtime).
"""

from .cli import cli_run

__all__ = ["cli_run"]
