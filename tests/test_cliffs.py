"""Issue 20's cliffs off the steady state: a minted-and-evicted draw (CreateRenderState and
DeleteRenderState on the compiled door) and group pushes whose rows are precompiled
``struct.Struct`` packs. Bytes against the encoder / numpy path; shapes (records, Python
calls per draw) pinned; times only as same-run ratios (``serial``)."""

from __future__ import annotations

import gc
import random
import struct
from typing import Any

import pytest

from mgpipe.runtime.client import tracker as tracker_mod
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.client.compute_tracker import image_rows
from mgpipe.runtime.client.cso_cache import RenderStateCsoCache
from mgpipe.runtime.client.row_packers import RowPacker, row_packer
from mgpipe.runtime.harness import cliffs
from mgpipe.runtime.schema import layouts
from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.wire.header import read_header
from mgpipe.runtime.wire.records import layout
from mgpipe.runtime.wire.stage import StageSegment

#: Python calls of one minted-and-evicted draw (5 records: create, delete, bind, the new
#: CSO's empty dynamic push, the draw); 86 measured, 184 through the dict-based emit
MAX_CALLS_PER_MINTED_DRAW = 100
#: Python calls per extra row of a sampler window (4 measured, about 40 through numpy)
MAX_CALLS_PER_WINDOW_ROW = 6


_encoder_mint, _encoder_evict, _numpy_rows = cliffs.encoder_mint, cliffs.encoder_evict, cliffs.numpy_rows


def _stream(name: str, units: int = 1, draws: int = 200) -> tuple[list[bytes], bytes]:
    """Every record the client sends for ``draws`` draws of ``name`` (setup included) and
    the stage's bytes at the end (the blobs the records name)."""
    records: list[bytes] = []
    stage = StageSegment(cliffs.STAGE_CAPACITY)
    c = Client(lambda rec: records.append(bytes(rec)), stage)
    vb = c.create_buffer(bytes(36))
    c.use_program(c.create_program({0: b"vs", 4: b"fs"}))
    c.vertex_attrib_pointer(0, vb, 3, stride=12)
    c.bind_buffer_base("uniform", 2, c.create_buffer(bytes(64)))  # a SetShaderBuffers row
    cliffs.STREAMS[name](c, units)(draws)
    out = bytes(stage._buf[: stage.used])
    c.close()
    return records, out


def _opcodes(records: list[bytes]) -> dict[str, int]:
    names = {v: k for k, v in _t.tables().OPCODE.items()}
    out: dict[str, int] = {}
    for r in records:
        n = names[read_header(memoryview(r))[0]]
        out[n] = out.get(n, 0) + 1
    return out


def test_compiled_create_and_delete_records_are_the_encoders(monkeypatch) -> None:
    """The whole stream of 200 minted-and-evicted draws, byte for byte, against the same
    stream with a mint and an eviction through the encoder (``Emitter.emit``)."""
    fast = _stream("minted")
    monkeypatch.setattr(RenderStateCsoCache, "_mint", _encoder_mint)
    monkeypatch.setattr(RenderStateCsoCache, "_evict", _encoder_evict)
    slow = _stream("minted")
    ops = _opcodes(fast[0])
    assert ops["CreateRenderState"] >= 200 and ops["DeleteRenderState"] >= 200
    assert len(fast[0]) == len(slow[0])
    assert [i for i, (a, b) in enumerate(zip(fast[0], slow[0])) if a != b] == []
    assert fast[1] == slow[1]


def test_planted_compiled_create_without_its_mask_differs_from_the_encoder(monkeypatch) -> None:
    """The control: a compiled CreateRenderState that leaves ChunkMask out (packed zero)."""
    good = _stream("minted", draws=20)[0]
    real = RenderStateCsoCache.__init__

    def planted(self, emitter, **kw):  # type: ignore[no-untyped-def]
        real(self, emitter, **kw)
        bad = emitter.fast("CreateRenderState", ("Cso.Slot", "Cso.Gen", "BaseCso.Slot",
                                                 "BaseCso.Gen", "Blob.Offset", "Blob.Size",
                                                 "Blob.Seg"))  # fmt: skip
        self._create_fast = lambda s, g, bs, bg, mask, o, n, seg: bad(s, g, bs, bg, o, n, seg)

    monkeypatch.setattr(RenderStateCsoCache, "__init__", planted)
    bad = _stream("minted", draws=20)[0]
    op = _t.tables().OPCODE["CreateRenderState"]
    diff = [i for i, (a, b) in enumerate(zip(good, bad)) if a != b]
    assert diff and all(read_header(memoryview(good[i]))[0] == op for i in diff)


# -- group rows ------------------------------------------------------------------------------
def _packers() -> list[RowPacker]:
    return [f() for f in tracker_mod._ROWS.values()] + [
        tracker_mod._attrib_wires(), tracker_mod._binding_wires(), image_rows()]


def _random_rows(p: RowPacker, rng: random.Random, n: int) -> list[tuple | None]:
    codes = {f.path: f.code for f in layout(p.element).flat}
    rows: list[tuple | None] = []
    for _ in range(n):
        if rng.random() < 0.25:
            rows.append(None)
            continue
        row = []
        for m in p.names:
            bits = 8 * struct.calcsize(codes[m])
            lo = -(1 << (bits - 1)) if codes[m].islower() else 0  # a signed member
            row.append(rng.randrange(lo, lo + (1 << bits)))
        rows.append(tuple(row))
    return rows


def test_every_group_row_packs_the_numpy_paths_bytes() -> None:
    rng = random.Random(20)
    for p in _packers():
        rows = _random_rows(p, rng, 64)
        want = layouts.array(p.dtype, [p.as_dict(r) for r in rows]).tobytes()
        assert p.rows(rows) == want, p.element
        assert len(want) == 64 * int(_t.struct_info(p.element)["size"])


def test_planted_packer_missing_a_member_differs_from_the_numpy_path() -> None:
    """The control: SetVertexBuffers' rows without Stride (packed zero) are caught."""
    full = tracker_mod._ROWS["SetVertexBuffers"]()
    short = row_packer(full.element, full.names[:-1])
    rows = [(1, 2, 3, 4), (5, 6, 7, 8)]
    want = layouts.array(full.dtype, [full.as_dict(r) for r in rows]).tobytes()
    assert full.rows(rows) == want
    assert short.rows([r[:-1] for r in rows]) != want


def test_a_value_that_does_not_fit_is_named_as_the_numpy_path_names_it() -> None:
    p = tracker_mod._ROWS["SetVertexBuffers"]()
    with pytest.raises(ValueError, match=r"SetVertexBuffers\[1\]\.Stride: .* does not fit"):
        p.rows([(1, 1, 0, 12), (1, 1, 0, 1 << 40)], "SetVertexBuffers")


def test_a_member_out_of_memory_order_is_refused_by_name() -> None:
    with pytest.raises(_t.TablesError, match="not in memory order"):
        row_packer("MGPVertexBuffer", ("Offset", "Res.Slot"))


@pytest.mark.parametrize("name", ["window", "rebind"])
def test_group_push_streams_are_the_numpy_paths(monkeypatch, name: str) -> None:
    """A 64-unit sampler window (and the one-row rebind), vertex buffers, vertex elements and
    shader buffers: every record and the stage, against the same stream through numpy."""
    fast = _stream(name, 64, draws=40)
    monkeypatch.setattr(RowPacker, "rows", _numpy_rows)
    slow = _stream(name, 64, draws=40)
    ops = _opcodes(fast[0])
    assert ops["SetSamplerViews"] >= 40 and ops["SetVertexBuffers"] >= 1
    assert ops["SetShaderBuffers"] >= 1 and ops["CreateVertexElements"] >= 1
    assert fast == slow


# -- shapes ----------------------------------------------------------------------------------
def test_a_minted_and_evicted_draw_is_five_records_and_bounded_python_calls() -> None:
    steady, minted = cliffs.shape("steady"), cliffs.shape("minted")
    assert steady["by_call"] == {"BindRenderState": 1.0, "DrawVbo": 1.0}
    assert minted["by_call"] == {"BindRenderState": 1.0, "CreateRenderState": 1.0,
                                 "DeleteRenderState": 1.0, "DrawVbo": 1.0,
                                 "SetDynamicState": 1.0}  # fmt: skip
    assert minted["records_per_draw"] == 5
    assert minted["python_calls_per_draw"] <= MAX_CALLS_PER_MINTED_DRAW, minted


def test_planted_dict_emit_mint_exceeds_the_minted_draw_bound(monkeypatch) -> None:
    monkeypatch.setattr(RenderStateCsoCache, "_mint", _encoder_mint)
    monkeypatch.setattr(RenderStateCsoCache, "_evict", _encoder_evict)
    minted = cliffs.shape("minted")
    assert minted["records_per_draw"] == 5
    assert minted["python_calls_per_draw"] > MAX_CALLS_PER_MINTED_DRAW


def _per_row() -> tuple[float, float, float]:
    one, many = cliffs.shape("window", 1), cliffs.shape("window", 64)
    r1, r64 = cliffs.shape("rebind", 1), cliffs.shape("rebind", 64)
    assert one["by_call"] == many["by_call"] == {"DrawVbo": 1.0, "SetSamplerViews": 1.0}
    assert r1["by_call"] == r64["by_call"] and r1["python_calls_per_draw"] == r64["python_calls_per_draw"]
    return ((many["python_calls_per_draw"] - one["python_calls_per_draw"]) / 63,
            one["wire_bytes_per_draw"], many["wire_bytes_per_draw"])


def test_a_sampler_window_costs_a_few_python_calls_per_row() -> None:
    per_row, b1, b64 = _per_row()
    row = int(_t.struct_info(tracker_mod._tail_element("SetSamplerViews"))["size"])
    assert b64 - b1 == 63 * row  # 64 rows where 1 was: the window is every bound unit
    assert 0 < per_row <= MAX_CALLS_PER_WINDOW_ROW, per_row


def test_planted_numpy_rows_exceed_the_per_row_bound(monkeypatch) -> None:
    monkeypatch.setattr(RowPacker, "rows", _numpy_rows)
    per_row, _, _ = _per_row()
    assert per_row > MAX_CALLS_PER_WINDOW_ROW, per_row


class _OldGarbage:
    """What an earlier test leaves behind: a cycle whose finaliser is Python code."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        pass


def _count(monkeypatch, units: int, old_garbage: bool) -> tuple[float, bool]:
    """``shape``'s rebind count, and whether the collector was on in its counted window,
    when a collection runs inside that window and, if ``old_garbage``, 100 finalisable
    cycles lie in the oldest generation (the state of a worker after hundreds of tests).
    The collection is called, not provoked by thresholds: in a large process the collector
    defers full collections, so a threshold plant would not fire reliably."""
    make, enabled = cliffs.make, []

    def make_collecting_in_the_window(name: str, n_units: int) -> Any:
        c, loop = make(name, n_units)

        def run(n: int) -> None:
            if n != 8:  # not the warm-up: the counted window
                enabled.append(gc.isenabled())
                _REAL_COLLECT()
            loop(n)

        return c, run

    monkeypatch.setattr(cliffs, "make", make_collecting_in_the_window)
    try:
        if old_garbage:
            keep = [_OldGarbage() for _ in range(100)]
            _REAL_COLLECT()  # promoted to the oldest generation
            del keep  # garbage there now
        return cliffs.shape("rebind", units)["python_calls_per_draw"], enabled == [True]
    finally:
        monkeypatch.setattr(cliffs, "make", make)


_REAL_COLLECT = gc.collect


def test_old_garbage_is_collected_before_the_counted_window_and_not_inside_it(
    monkeypatch,
) -> None:
    clean, on = _count(monkeypatch, 1, old_garbage=False)
    assert not on  # no automatic collection can fall inside the window
    assert _count(monkeypatch, 1, old_garbage=True) == (clean, False)
    assert _count(monkeypatch, 64, old_garbage=True) == (clean, False)


def test_planted_collector_left_on_counts_the_finalisers(monkeypatch) -> None:
    monkeypatch.setattr(gc, "disable", lambda: None)
    monkeypatch.setattr(gc, "collect", lambda *a: 0)
    (clean, on), (dirty, _) = _count(monkeypatch, 1, False), _count(monkeypatch, 1, True)
    assert on and dirty - clean >= 100 / 256, (clean, dirty)  # 100 __del__ calls / 256 draws


# -- times: same-run ratios only -------------------------------------------------------------
@pytest.mark.serial
def test_the_cliffs_are_within_their_ratios_of_the_steady_state() -> None:
    """A minted-and-evicted draw <= 10x a steady one; a rebind (one row, and a window of
    every bound unit) at 64 bound units <= 2x the same at 1."""
    steady, minted = cliffs.cpu_per_draw("steady"), cliffs.cpu_per_draw("minted")
    assert minted <= 10 * steady, (minted, steady)
    for stream in ("rebind", "window"):
        one, many = cliffs.cpu_per_draw(stream, 1), cliffs.cpu_per_draw(stream, 64)
        assert many <= 2 * one, (stream, many, one)


def test_the_reference_switch_restores_the_compiled_paths() -> None:
    """benchmarks/cliffs.py's "before" column: the same records, more Python calls; and
    the compiled paths back afterwards."""
    with cliffs.reference():
        before = cliffs.shape("minted")
        assert RowPacker.rows is _numpy_rows
    after = cliffs.shape("minted")
    assert RenderStateCsoCache._mint is not _encoder_mint and RowPacker.rows is not _numpy_rows
    assert before["by_call"] == after["by_call"]
    assert before["python_calls_per_draw"] > after["python_calls_per_draw"]


def test_the_mint_and_eviction_writers_pack_in_one_c_call() -> None:
    c, _ = cliffs.make("steady")
    cso = c.tr.cso
    assert cso._create_fast.direct and cso._delete_fast.direct
    c.close()


def test_cliffs_benchmark_runs_and_reports_every_stream() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "cliffs.py"), "-n", "60"],
                         capture_output=True, text=True, timeout=300, cwd=root)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line.split() for line in out.stdout.splitlines()]
    for stream, units in (("steady", 1), ("minted", 1), ("rebind", 64), ("window", 64)):
        row = next(x for x in lines if x[:2] == [stream, str(units)])
        assert float(row[4]) == float(row[8])  # records per draw: the same both ways
    for ratio in ("minted / steady", "rebind 64 / rebind 1", "window 64 / window 1"):
        assert ratio in out.stdout
