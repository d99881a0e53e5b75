"""G1 PipeTables.inc: the MGPipeScreen / MGPipeContext function-pointer tables."""

from __future__ import annotations

from mgpipe.gen.model import Model

FILE = "PipeTables.inc"
TEMPLATE = "PipeTables.inc.j2"
TITLE = "G1: MGPipeScreen / MGPipeContext function-pointer tables, one member per call"
SCREEN_CLASS = "kScreen"


def context(model: Model) -> dict:
    classes = [c for c in dict.fromkeys(c.cls for c in model.calls)]
    groups = [(cls, [c for c in model.calls if c.cls == cls]) for cls in classes]
    return {
        "screen": [g for g in groups if g[0] == SCREEN_CLASS],
        "context": [g for g in groups if g[0] != SCREEN_CLASS],
        "name_width": max(len(c.name) for c in model.calls),
    }
