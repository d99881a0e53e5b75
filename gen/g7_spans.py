"""G7 PipeSpanTable.inc: the render-state chunk table and the Espryt span constants."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeSpanTable.inc"
TEMPLATE = "PipeSpanTable.inc.j2"
TITLE = "G7: render-state pipeline subset, pipeline/dynamic chunk table, Espryt spans"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("render_state", "setters")


def _first_member(chunk) -> str:  # type: ignore[no-untyped-def]
    """A C++ designator for the member that starts the chunk (for an offsetof check)."""
    return chunk.members[0]


def context(model: Model) -> dict:
    rs = model.render_state
    return {
        "rs": rs,
        "pipeline": rs.pipeline,
        "dynamic": rs.dynamic,
        "chunks": [(c, _first_member(c)) for c in rs.chunks],
        "pipeline_bytes": sum(c.length for c in rs.pipeline),
        "dynamic_bytes": sum(c.length for c in rs.dynamic),
        "setters": model.setters,
    }
