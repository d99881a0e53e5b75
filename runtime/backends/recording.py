"""The JSON recording of a raw capture: replay through a fresh server, snapshot every verb.

:func:`replay` feeds captured records (and the blob bytes each one named, written back at
their stage offsets) to a new :class:`~mgpipe.runtime.server.applier.Applier` whose
backend is a :class:`JsonRecorder`: at every verb it writes the server's pushed state
(:meth:`~mgpipe.runtime.server.context.ServerContext.pushed_state`) and the verb's payload
and tails as plain values. Nothing here runs while a scene runs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..server.applier import Applier
from ..server.context import element_plain
from ..wire.records import to_plain
from ..wire.spec import call_spec
from ..wire.stage import DEFAULT_CAPACITY, StageSegment
from .base import call_names
from .recorder import VERB_CLASS

__all__ = ["JsonRecorder", "replay"]



class JsonRecorder:
    """A backend that writes the JSON record of every verb."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()
        for name in call_names():
            setattr(self, name, self._entry(name))

    def _entry(self, name: str) -> Any:
        spec = call_spec(name)
        verb = name == "Present" or spec.cls == VERB_CLASS

        def entry(ctx: Any, d: Any) -> None:
            self.counts[name] += 1
            if verb:
                present = [t for t in spec.tails if t.present(d.payload)]
                self.records.append({
                    "seq": sum(self.counts.values()),
                    "call": name,
                    "payload": to_plain(d.payload, json_safe=True),
                    "tails": [[element_plain(t, e) for e in rows]
                              for t, rows in zip(present, d.tails)],
                    "state": ctx.pushed_state(),
                })  # fmt: skip

        return entry


def replay(raw: list[bytes], blobs: dict[int, list[tuple[int, bytes]]],
           stage_capacity: int | None) -> tuple[list[dict[str, Any]], Counter[str]]:  # fmt: skip
    """(verb records, call counts) of a capture, replayed through a fresh server."""
    stage = StageSegment(stage_capacity or DEFAULT_CAPACITY)
    backend = JsonRecorder()
    applier = Applier(backend, stage, post_replies=False)  # a replay: no reader of replies
    for i, record in enumerate(raw):
        for offset, data in blobs.get(i, ()):
            stage.write_at(offset, data)
        applier.apply(record)
    return backend.records, backend.counts
