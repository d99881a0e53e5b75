"""The server's side of docs/BACKENDS.md: what an entry receives, transactional refusal,
O(1) handle growth, the ObjectDeath kind check, Unknown vs Stale, no double fetch."""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import pytest

from mgpipe.runtime.errors import HandleRefused, NullEntry, ProtocolCorruption
from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.server.handle_table import HandleTable
from mgpipe.runtime.wire.codec import Decoded, Encoder
from mgpipe.runtime.wire.handle import Handle
from mgpipe.runtime.wire.records import record_type
from mgpipe.runtime.wire.stage import StageSegment


BUFFER = t.enum("MGPipeResourceTarget")["Buffer"]


class Keeper:
    """A backend that keeps an object per server object and everything it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Decoded, dict[str, Any]]] = []
        self.freed: list[Any] = []

    def _keep(self, ctx: Any, d: Decoded) -> None:
        self.seen.append((ctx.call, d, dict(ctx.resolved)))

    def ResourceCreate(self, ctx: Any, d: Decoded) -> None:
        self._keep(ctx, d)
        ctx.resolved["Resource"].backend = ("buffer", d.payload.Width)

    def ResourceDestroy(self, ctx: Any, d: Decoded) -> None:
        self._keep(ctx, d)
        self.freed.append(ctx.resolved["Handle"].backend)

    def ObjectDeath(self, ctx: Any, d: Decoded) -> None:
        self._keep(ctx, d)

    def DrawVbo(self, ctx: Any, d: Decoded) -> None:
        self._keep(ctx, d)

    def Blit(self, ctx: Any, d: Decoded) -> None:
        self._keep(ctx, d)

    def SetVertexBuffers(self, ctx: Any, d: Decoded) -> None:
        self._keep(ctx, d)


class Pipe:
    def __init__(self, backend: Any, max_slots: int = 1 << 20) -> None:
        self.stage = StageSegment(1 << 16)
        self.enc = Encoder(self.stage)
        self.backend = backend
        self.applier = Applier(backend, self.stage, max_slots=max_slots)

    def __call__(self, call: str, payload: Any = None, tails: Any = (), blob: Any = None) -> Any:
        return self.applier.apply(self.enc.encode(call, payload, tails, blob))

    def refused(self, call: str, payload: Any = None, tails: Any = ()) -> str:
        with pytest.raises(ProtocolCorruption) as exc:
            self(call, payload, tails)
        return exc.value.reason

    def snapshot(self) -> dict[str, Any]:
        return {name: {s: (e.gen, e.live, id(e.obj)) for s, e in tab.rows.items()}
                for name, tab in self.applier.tables.items()}  # fmt: skip


def test_entry_receives_immutable_records_and_keeps_a_backend_object() -> None:
    k = Keeper()
    p = Pipe(k)
    p("ResourceCreate", {"Resource": Handle(1, 1), "Target": BUFFER, "Width": 64})
    p("DrawVbo", {"Mode": 4, "NumDraws": 1, "IndexResource": Handle(1, 1)}, [[{"Count": 3}]])
    call, d, res = k.seen[-1]
    assert call == "DrawVbo" and d.name == "DrawVbo" and type(d.payload) is record_type("MGPDrawInfo")
    assert d.payload.Mode == 4 and d.payload.IndexResource == Handle(1, 1)
    assert d.tails[0][0].Count == 3 and isinstance(d.tails, tuple)
    assert res["IndexResource"].backend == ("buffer", 64)
    with pytest.raises(AttributeError):
        d.payload.Mode = 5  # type: ignore[misc]
    p("ResourceDestroy", {"Handle": Handle(1, 1)})
    assert k.freed == [("buffer", 64)]  # the retired object still carries the backend's


def test_null_entry_refuses_by_name_before_anything_changes() -> None:
    p = Pipe(Keeper())
    before = p.snapshot()
    with pytest.raises(NullEntry) as exc:
        p("CreateRenderState", {"Cso": Handle(1, 1), "ChunkMask": 0xFFFFFFFF}, blob=b"")
    assert exc.value.call == "CreateRenderState" and str(exc.value) == (
        'Fatal{UnimplementedCall, "CreateRenderState"}'
    )
    assert p.snapshot() == before


def test_blit_with_a_good_src_and_a_backward_dst_changes_nothing() -> None:
    p = Pipe(Keeper())
    p("Blit", {"ReadFbo": Handle(3, 1), "DrawFbo": Handle(3, 1)})  # first use: created once
    before = p.snapshot()
    # ReadFbo new (would be created), DrawFbo {3, 2} while {3, 1} lives: a create on a live slot
    assert p.refused("Blit", {"ReadFbo": Handle(4, 1), "DrawFbo": Handle(3, 2)}) == (
        "Blit.DrawFbo.Backward"
    )
    assert p.snapshot() == before and Handle(4, 1) not in p.applier.tables["Framebuffer"]
    # two fields naming one new slot with two gens: refused before either is made
    assert p.refused("Blit", {"ReadFbo": Handle(9, 1), "DrawFbo": Handle(9, 2)}) == (
        "Blit.DrawFbo.Backward"
    )
    assert p.snapshot() == before


def test_a_refused_window_record_leaves_every_table_and_window() -> None:
    p = Pipe(Keeper())
    p("ResourceCreate", {"Resource": Handle(1, 1), "Target": BUFFER})
    before, window = p.snapshot(), list(p.applier.ctx.windows["SetVertexBuffers"])
    rows = [{"Res": Handle(1, 1)}, {"Res": Handle(2, 1)}]
    assert p.refused("SetVertexBuffers", {"Count": 2}, [rows]) == (
        "SetVertexBuffers.MGPVertexBuffer[1].Res.Unknown"
    )
    assert p.snapshot() == before and p.applier.ctx.windows["SetVertexBuffers"] == window


@pytest.mark.serial  # a timing ratio / CPU budget: tests/xdist_plan.py
def test_handle_tables_grow_in_constant_space_whatever_the_slot() -> None:
    p = Pipe(Keeper())
    tracemalloc.start()
    t0 = time.process_time()
    p("ResourceCreate", {"Resource": Handle((1 << 20) - 1, 1), "Target": BUFFER})
    cpu = time.process_time() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(p.applier.tables["Resource"].rows) == 1
    assert peak < 1 << 20 and cpu < 0.5  # one entry: not a million (today ~72 MiB, ~1 s)


def test_object_death_checks_the_kind_after_a_wire_delete() -> None:
    p = Pipe(Keeper())
    kinds = t.enum("MGPipeKind")
    p("ResourceCreate", {"Resource": Handle(2, 1), "Target": BUFFER})  # a buffer
    p("ResourceDestroy", {"Handle": Handle(2, 1), "Kind": kinds["Buffer"]})
    before = p.snapshot()
    assert p.refused("ObjectDeath", {"Handle": Handle(2, 1), "Kind": kinds["Texture"]}) == (
        "ObjectDeath.Handle.Kind"
    )
    assert p.snapshot() == before
    p("ObjectDeath", {"Handle": Handle(2, 1), "Kind": kinds["Buffer"]})
    assert p.refused("ObjectDeath", {"Handle": Handle(2, 1), "Kind": kinds["Buffer"]}) == (
        "ObjectDeath.Handle.Stale"
    )


def test_never_created_is_unknown_and_destroyed_is_stale() -> None:
    table: HandleTable = HandleTable("Buffer")
    for h in (Handle(5, 0), Handle(5, 1), Handle(5, 7)):
        with pytest.raises(HandleRefused, match=r"X\.Unknown"):
            table.resolve(h, "X")
    table.create(Handle(5, 2), "obj", "X")
    with pytest.raises(HandleRefused, match=r"X\.Stale"):
        table.resolve(Handle(5, 1), "X")
    with pytest.raises(HandleRefused, match=r"X\.Unknown"):
        table.resolve(Handle(5, 3), "X")
    table.destroy(Handle(5, 2), "X")
    with pytest.raises(HandleRefused, match=r"X\.Stale"):
        table.resolve(Handle(5, 2), "X")


def test_double_fetch_is_impossible_by_construction() -> None:
    """The applier snapshots the record once: a peer rewriting the buffer while the record
    is applied (here: from inside the entry) changes nothing the server or backend sees."""
    seen: list[Any] = []

    class Racer:
        def DrawVbo(self, ctx: Any, d: Decoded) -> None:
            buf[8:] = b"\xff" * (len(buf) - 8)  # the peer scribbles over the ring slot
            seen.append((d.payload.Mode, d.tails[0][0].Count, ctx.raw == bytes(original)))

    stage = StageSegment(1 << 16)
    applier = Applier(Racer(), stage)
    original = Encoder(stage).encode("DrawVbo", {"Mode": 4, "NumDraws": 1}, [[{"Count": 3}]])
    buf = bytearray(original)
    applier.apply(memoryview(buf))
    assert seen == [(4, 3, True)]


def test_decoded_records_pickle_to_equal_values() -> None:
    """A backend in another process (or a saved trace) gets the same values back."""
    import pickle

    stage = StageSegment(1 << 16)
    enc = Encoder(stage)
    from mgpipe.runtime.wire.codec import Decoder

    d = Decoder(stage).decode(enc.encode("DrawVbo", {"Mode": 4, "NumDraws": 1,
                                                      "IndexResource": Handle(3, 1)}, [[{"Count": 3}]]))  # fmt: skip
    again = pickle.loads(pickle.dumps(d))
    assert again == d and again.payload.IndexResource == Handle(3, 1)
    assert again.payload.Mode == 4 and again.tails[0][0].Count == 3
