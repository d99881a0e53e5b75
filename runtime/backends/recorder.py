"""The MGPipe recorder backend (seed 001 §13.3): raw capture, JSON on demand.

It implements every call. While a scene runs it only keeps what it cannot get back later:
every record's bytes (the server's snapshot, ``ctx.raw``) and the bytes of every blob a
record names (the stage segment is rewound and overwritten). The count per call
(:attr:`Recorder.counts`, read from the captured records' opcodes) and the xxh64 over that
stream (:meth:`Recorder.stream_digest`) run over the capture: each is brought up to date
when read, never per record.

Its entries offer the server their lean forms (docs/BACKENDS.md §3): the capture of a call
without a blob is the raw list's own ``append``; a call with one blob reference takes the
record's bytes, the reference's ``Offset`` and its bytes.

The JSON recording (``mgpipe-recording/1``) is built only when asked
(:meth:`Recorder.recording`, :meth:`Recorder.recording_digest`, :meth:`Recorder.to_json`):
:mod:`.recording` replays the captured records through a fresh server whose backend
writes, at every verb (a ``kCtxVerb`` call, ``Present`` included), the pushed state the
server holds at that point plus the verb's payload and tails as plain values. A golden
file compares by :meth:`recording_digest` (xxh64 of the canonical JSON).
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from operator import attrgetter
from typing import Any

import xxhash

from ..errors import ProtocolCorruption
from ..server.reverse import BackendCaps, Reply, encode_caps
from ..wire.records import layout
from ..wire.spec import call_spec, spec_for_opcode
from .base import build_table, call_names

__all__ = ["Recorder", "VERB_CLASS", "FORMAT", "canonical_json"]

def _zeros(ctx: Any, d: Any, n: int) -> bytes:
    """``n`` zero bytes, the answer of a read-back: refused before it is made when no
    reply slot holds it (a forged size would otherwise allocate whatever it names)."""
    cap = getattr(ctx, "reply_capacity", None)
    if cap is not None and n > cap:
        raise ProtocolCorruption(f"{d.name}.ReplyTooLarge")
    return bytes(n)


#: What the recorder answers (it draws nothing and waits for nothing): caps naming its every
#: entry, zero pixels / bytes of the asked size (as its read-backs always left the
#: destination), fences signalled, queries available with 0, a timestamp = the record seq
#: (monotone), MapPersistent DECLINED (tier T2).
_ANSWERS: dict[str, Any] = {
    "GetCaps": lambda self, ctx, d: Reply.ok(encode_caps(
        BackendCaps(renderer="mgpipe recorder"), build_table(self))),
    "ReadPixels": lambda self, ctx, d: Reply.ok(_zeros(ctx, d, int(d.payload.DstSize))),
    "GetTextureImage": lambda self, ctx, d: Reply.ok(_zeros(ctx, d, int(d.payload.DstSize))),
    "ResourceReadback": lambda self, ctx, d: Reply.ok(_zeros(ctx, d, int(d.payload.Size))),
    "FenceStatus": lambda self, ctx, d: Reply.ok(struct.pack("<I", 1)),
    "FenceWait": lambda self, ctx, d: Reply.ok(struct.pack("<I", 2)),
    "QueryAvailable": lambda self, ctx, d: Reply.ok(struct.pack("<I", 1)),
    "QueryResult": lambda self, ctx, d: Reply.ok(struct.pack("<IIQ", 1, 0, 0)),
    "QueryTimestamp": lambda self, ctx, d: Reply.ok(struct.pack("<Q", ctx.seq)),
    "MapPersistent": lambda self, ctx, d: Reply.declined("tier T2"),
}


def _answering(name: str, entry: Any) -> Any:
    answer = _ANSWERS[name]

    def recorded_answer(ctx: Any, d: Any) -> Any:
        entry(ctx, d)
        return answer(recorded_answer.owner, ctx, d)

    return recorded_answer

def _op_reader() -> tuple[Any, int, Any]:
    """(header unpack, the place of ``Op`` in it, opcode -> call name): from the tables."""
    lay = layout("MGPWireRecHeader")
    at = [f.path for f in lay.flat].index("Op")
    return struct.Struct("<" + lay.fmt).unpack_from, at, lambda op: spec_for_opcode(op).name


class _Tally(Counter):
    """A ``Counter`` whose ``c[k] += 1`` costs a dict's (see the applier's ``Tally``)."""

    __slots__ = ()
    __delitem__ = dict.__delitem__


def _ref_getter(path: tuple) -> Any:
    """``get(payload) -> the MGPBlobRef at path`` (attribute and index steps, one call)."""
    if all(isinstance(k, str) for k in path):
        return attrgetter(".".join(path))

    def get(ref: Any) -> Any:
        for key in path:
            ref = ref[key] if isinstance(key, int) else getattr(ref, key)
        return ref

    return get


VERB_CLASS = "kCtxVerb"
FORMAT = "mgpipe-recording/1"


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, strict JSON (no NaN)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


class Recorder:
    """A backend that captures raw records; ``counts`` (every call), JSON on demand."""

    #: it draws nothing: a read-back leaves the destination as it was
    renders_pixels = False

    def __init__(self) -> None:
        self._counts: Counter[str] = _Tally()  # over raw[:_counted]
        self._counted = 0
        self.raw: list[bytes] = []
        self.blobs: dict[int, list[tuple[int, bytes]]] = {}  # record index -> (offset, bytes)
        self.stage_capacity: int | None = None
        self._hash = xxhash.xxh64()
        self._hashed = 0  # records already in _hash
        self._loaded: tuple[list[dict[str, Any]], Counter[str]] | None = None
        self._json: tuple[int, list[dict[str, Any]], Counter[str]] | None = None
        for name in call_names():
            spec = call_spec(name)
            entry = self._entry(name, spec.blob_paths)
            if name in _ANSWERS:
                entry = _answering(name, entry)
                entry.owner = self  # type: ignore[attr-defined]
            setattr(self, name, entry)

    def _entry(self, name: str, blob_paths: tuple) -> Any:
        raws, blobs = self.raw, self.blobs
        append = raws.append
        if not blob_paths:

            def entry(ctx: Any, d: Any) -> None:
                append(ctx.raw)

            entry.reads_decoded = False  # type: ignore[attr-defined]  # the raw bytes only
            entry.lean_form = lambda ctx: append  # type: ignore[attr-defined]
            return entry

        getters = tuple(_ref_getter(path) for path in blob_paths)
        first = getters[0]
        if len(getters) == 1:

            def capture(raw: bytes, offset: int, blob: bytes) -> None:
                """What the capture keeps of a record with one blob reference: its bytes,
                and the reference's ``Offset`` with its bytes (none for an empty one)."""
                blobs[len(raws)] = [(offset, blob)] if blob else []
                append(raw)

            def entry_with_blob(ctx: Any, d: Any) -> None:
                if self.stage_capacity is None:
                    self.stage_capacity = ctx.stage.capacity
                ref = first(d.payload)
                blob = b""
                if ref.Size:
                    # the reference's bytes are the decoded record's blob (a copy of the
                    # same stage bytes): no second view, no second copy
                    blob = d.blob
                    if type(blob) is not bytes:
                        blob = bytes(ctx.stage.view((ref.Offset, ref.Size, ref.Seg)))
                capture(ctx.raw, ref.Offset, blob)

            def lean_form(ctx: Any) -> Any:
                """:func:`capture` itself, which the server calls with the record's bytes,
                the blob reference's ``Offset`` and its bytes (a copy)."""
                if self.stage_capacity is None:
                    self.stage_capacity = ctx.stage.capacity
                return capture

            entry_with_blob.lean_form = lean_form  # type: ignore[attr-defined]
            return entry_with_blob

        def entry_with_blobs(ctx: Any, d: Any) -> None:
            if self.stage_capacity is None:
                self.stage_capacity = ctx.stage.capacity
            kept = []
            for get in getters:
                ref = get(d.payload)
                if ref.Size:
                    # the first reference's bytes are the decoded record's blob (a copy
                    # of the same stage bytes): no second view, no second copy
                    blob = d.blob if get is first and type(d.blob) is bytes else None
                    if blob is None:
                        blob = bytes(ctx.stage.view((ref.Offset, ref.Size, ref.Seg)))
                    kept.append((ref.Offset, blob))
            blobs[len(raws)] = kept
            append(ctx.raw)

        return entry_with_blobs

    @property
    def counts(self) -> Counter[str]:
        """Records captured, by call (a copy, brought up to date from the captured records'
        opcodes when read: nothing is counted while a scene runs)."""
        if self._loaded is not None:
            return _Tally(self._loaded[1])
        raws, counts = self.raw, self._counts
        if self._counted < len(raws):
            hdr, at, name = _op_reader()
            for raw in raws[self._counted :]:
                counts[name(hdr(raw)[at])] += 1
            self._counted = len(raws)
        return _Tally(counts)

    # -- the raw capture ---------------------------------------------------------
    def stream_digest(self) -> str:
        """xxh64 (hex) over every record's bytes and the blobs it named, in apply order
        (brought up to date on demand: nothing is hashed while a scene runs)."""
        for i in range(self._hashed, len(self.raw)):
            for _, data in self.blobs.get(i, ()):
                self._hash.update(data)
            self._hash.update(self.raw[i])
        self._hashed = len(self.raw)
        return self._hash.hexdigest()

    def stats(self) -> dict[str, int]:
        return {"records": len(self.raw), "verbs": sum(
            n for c, n in self.counts.items() if c == "Present" or call_spec(c).cls == VERB_CLASS),
            "raw_bytes": sum(len(r) for r in self.raw)}  # fmt: skip

    # -- JSON on demand ----------------------------------------------------------
    def _replayed(self) -> tuple[list[dict[str, Any]], Counter[str]]:
        if self._loaded is not None:
            return self._loaded
        if self._json is None or self._json[0] != len(self.raw):
            from .recording import replay

            records, counts = replay(self.raw, self.blobs, self.stage_capacity)
            self._json = (len(self.raw), records, counts)
        return self._json[1], self._json[2]

    @property
    def records(self) -> list[dict[str, Any]]:
        """The verbs' JSON records (built by replaying the capture)."""
        return self._replayed()[0]

    def recording(self) -> dict[str, Any]:
        records, counts = self._replayed()
        return {"format": FORMAT, "records": records, "counts": dict(sorted(counts.items()))}

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
        if doc.get("format") != FORMAT:
            raise ValueError(f"not an mgpipe recording (format {doc.get('format')!r})")
        rec = cls()
        counts = Counter({str(k): int(v) for k, v in doc["counts"].items()})
        rec._loaded = (list(doc["records"]), counts)
        if "digest" in doc and doc["digest"] != rec.recording_digest():
            raise ValueError(
                f"recording digest {doc['digest']} does not match its content "
                f"({rec.recording_digest()})"
            )
        return rec
