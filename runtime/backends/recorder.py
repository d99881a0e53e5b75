"""The MGPipe recorder backend (seed 001 §13.3).

It implements every call. Every call is counted; at every verb (a ``kCtxVerb`` call,
``Present`` included) it records the pushed state the server holds at that point
(:meth:`~mgpipe.runtime.server_state.ServerContext.pushed_state`: the working
render-state block's xxh64, bound framebuffers, program, vertex elements, vertex/index
buffers, sampler views, versions, every binding window) plus the verb's own payload and
tails as plain dicts. Recordings are JSON (floats that are NaN/inf as the hex of their
bytes), so a fixture's recording can be committed and compared by
:meth:`Recorder.recording_digest`. It covers the pushed content only, never how a
backend interprets it.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from typing import Any

import xxhash

from ..schema import layouts
from ..wire.codec import Decoded
from ..wire.spec import call_spec
from .base import call_names

__all__ = ["Recorder", "VERB_CLASS", "canonical_json"]

VERB_CLASS = "kCtxVerb"
_FORMAT = "mgpipe-recording/1"


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, strict JSON (no NaN)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


class Recorder:
    """A backend that records; ``records`` (verbs) and ``counts`` (every call)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()
        for name in call_names():
            setattr(self, name, partial(self._on, name))

    def _on(self, name: str, ctx: Any, d: Decoded) -> None:
        self.counts[name] += 1
        if name == "Present" or call_spec(name).cls == VERB_CLASS:
            self.records.append(
                {
                    "seq": sum(self.counts.values()),
                    "call": name,
                    "payload": layouts.to_dict(d.payload, json_safe=True),
                    "tails": [layouts.to_dict(t, json_safe=True) for t in d.tails],
                    "state": ctx.pushed_state(),
                }
            )
        return None

    # -- recordings ----------------------------------------------------------
    def recording(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "records": self.records,
            "counts": dict(sorted(self.counts.items())),
        }

    def recording_digest(self) -> str:
        """xxh64 (hex) over the canonical JSON of the recording."""
        return xxhash.xxh64_hexdigest(canonical_json(self.recording()).encode())

    def to_json(self, indent: int | None = 1) -> str:
        """The recording as JSON (sorted keys; ``indent`` for a committed golden file)."""
        doc = dict(self.recording(), digest=self.recording_digest())
        return json.dumps(doc, sort_keys=True, indent=indent, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Recorder":
        """A recorder holding a saved recording; refuses a file whose digest does not match."""
        doc = json.loads(text)
        if doc.get("format") != _FORMAT:
            raise ValueError(f"not an mgpipe recording (format {doc.get('format')!r})")
        rec = cls()
        rec.records = list(doc["records"])
        rec.counts = Counter({str(k): int(v) for k, v in doc["counts"].items()})
        if "digest" in doc and doc["digest"] != rec.recording_digest():
            raise ValueError(
                f"recording digest {doc['digest']} does not match its content "
                f"({rec.recording_digest()})"
            )
        return rec
