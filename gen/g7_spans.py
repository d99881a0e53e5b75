"""G7 PipeSpanTable.inc: the render-state chunk table and the Espryt span constants."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeSpanTable.inc"
TEMPLATE = "PipeSpanTable.inc.j2"
TITLE = "G7: render-state pipeline subset, pipeline/dynamic chunk table, Espryt spans"
#: the model fields this output reads: its header lists exactly their inputs
READS = ("render_state", "setters", "names")


def _first_member(chunk) -> str:  # type: ignore[no-untyped-def]
    """A C++ designator for the member that starts the chunk (for an offsetof check)."""
    return chunk.members[0]


#: the vocabulary role naming a chunk table the tree's own headers define (MobileGL's
#: MGPipeRenderStateSpans.h): there the chunk arrays are the tree's, declared here, defined
#: in its sources
TREE_CHUNKS = "chunk_boundaries"


def context(model: Model) -> dict:
    rs = model.render_state
    return {
        "tree_chunks": TREE_CHUNKS in dict(model.names),
        "rs": rs,
        "pipeline": rs.pipeline,
        "dynamic": rs.dynamic,
        "chunks": [(c, _first_member(c)) for c in rs.chunks],
        "pipeline_bytes": sum(c.length for c in rs.pipeline),
        "dynamic_bytes": sum(c.length for c in rs.dynamic),
        "setters": model.setters,
    }
