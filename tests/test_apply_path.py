"""The server's apply path in steady state (issue 20): its structural figures, pinned.

Per applied record of the steady-state scenes' calls (``BindRenderState``, ``DrawVbo``,
``SetDynamicState``) on the recorder backend:

- Python calls (``sys.setprofile`` ``call`` + ``c_call`` events), measured as the
  difference between two run lengths of the same record, so setup and the first
  compile cancel;
- records built: none for a call whose entry reads no record (the recorder's raw capture)
  and whose handler needs none (``BindRenderState``, ``DrawVbo``);
- the header read: one ``unpack_from``, no byte-by-byte indexing.

Every pin has a negative control that plants the old behaviour (an eager pipeline scatter
behind a push frame, the budget check behind a prepare frame, a dynamic push frame, the
header read byte by byte, a record-reading entry) and shows the pin go red. The lazy
handlers refuse exactly as the record-building ones do.
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mgpipe.runtime import budgets
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.budgets import Budgets
from mgpipe.runtime.errors import ProtocolCorruption
from mgpipe.runtime.schema import tables as t
from mgpipe.runtime.server import apply_state, dispatch
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.server.working_state import VERSION_MASK, WorkingRenderState, chunk_tables
from mgpipe.runtime.wire.codec import Encoder
from mgpipe.runtime.wire.handle import Handle
from mgpipe.runtime.wire.header import header_size, record_align
from mgpipe.runtime.wire.records import layout
from mgpipe.runtime.wire.spec import call_spec
from mgpipe.runtime.wire.stage import StageSegment

_, RS_SIZE, PIPE, DYN = chunk_tables()
PIPE_SIZE = sum(n for _, n in PIPE)

#: Python calls per applied record (apply wrapper, header unpack, len, handler, payload unpack,
#: the call's own builtins, the recorder entry and its append; a remembered draw: the memo's
#: ``get`` in place of the unpack and the checks): the figures a regression of the apply
#: path moves
CALLS = {"BindRenderState": 8, "DrawVbo": 7, "SetDynamicState": 9}


@pytest.fixture(autouse=True)
def _fresh_handlers() -> Iterator[None]:
    """Handlers are compiled once per process: a planted control compiles its own."""
    dispatch.handler_code.cache_clear()
    yield
    dispatch.handler_code.cache_clear()


class Pipe:
    """An applier over a recorder (or ``backend``) with one CSO, one draw, one dynamic push."""

    def __init__(self, backend: Any = None) -> None:
        self.stage = StageSegment(1 << 20)
        self.enc = Encoder(self.stage)
        self.backend = backend if backend is not None else Recorder()
        self.applier = Applier(self.backend, self.stage)
        self.subsets = [bytes([k + 1]) * PIPE_SIZE for k in range(2)]
        for k, subset in enumerate(self.subsets):
            self.apply("CreateRenderState", {"Cso": Handle(k + 1, 1), "ChunkMask": 0xFFFFFFFF},
                       blob=subset)  # fmt: skip
        self.dyn_blob = bytes(range(DYN[0][1] % 256)) + bytes(DYN[0][1] - DYN[0][1] % 256)

    def record(self, call: str, payload: Any = None, tails: Any = (), blob: Any = None) -> memoryview:
        """The record as a transport hands it over (a read-only view of a reused buffer)."""
        return memoryview(bytearray(self.enc.encode(call, payload, tails, blob))).toreadonly()

    def apply(self, call: str, payload: Any = None, tails: Any = (), blob: Any = None) -> Any:
        return self.applier.apply(self.record(call, payload, tails, blob))

    def steady(self, call: str) -> memoryview:
        if call == "BindRenderState":
            return self.record(call, {"Cso": Handle(1, 1), "Version": 3, "PipelineVersion": 2})
        if call == "DrawVbo":
            return self.record(call, {"Mode": 4, "NumDraws": 1, "InstanceCount": 1},
                               [[{"Start": 0, "Count": 3}]])  # fmt: skip
        assert call == "SetDynamicState"
        return self.record(call, {"ChunkMask": 1, "Version": 5}, blob=self.dyn_blob)

    def refused(self, call: str, payload: Any = None, tails: Any = ()) -> str:
        with pytest.raises(ProtocolCorruption) as exc:
            self.apply(call, payload, tails)
        return exc.value.reason


def _calls(apply: Callable[[Any], Any], record: Any, n: int) -> int:
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    sys.setprofile(profile)
    try:
        for _ in range(n):
            apply(record)
    finally:
        sys.setprofile(None)
    return count


def calls_per_record(pipe: Pipe, call: str) -> float:
    record = pipe.steady(call)
    apply = pipe.applier.apply
    apply(record)  # compile the handler first
    return (_calls(apply, record, 40) - _calls(apply, record, 10)) / 30


# -- calls per applied record ----------------------------------------------------------
@pytest.mark.parametrize("call", sorted(CALLS))
def test_calls_per_applied_record_are_pinned(call: str) -> None:
    assert calls_per_record(Pipe(), call) == CALLS[call]


def _eager_scatter(self: WorkingRenderState, subset: bytes) -> None:
    """The old BindRenderState scatter: seven fresh slices stored from bytes, every bind."""
    data = self.data
    for o, e, a, b in self._pipe_plan:
        data[o:e] = subset[a:b]
    self.version = (self.version + 1) & VERSION_MASK
    self.scatters += 1


def test_control_an_eager_scatter_behind_a_push_frame_turns_the_bind_pin_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delitem(apply_state.PUSH_SOURCE, "BindRenderState")
    monkeypatch.setattr(WorkingRenderState, "scatter_pipeline", _eager_scatter)
    got = calls_per_record(Pipe(), "BindRenderState")
    assert got > CALLS["BindRenderState"], got


def _old_check_draw(d: Any) -> None:
    """The old per-draw budget check: budgets(), max(), int() and a generator per draw."""
    b = budgets.budgets()
    p = d.payload
    inst = max(int(p.InstanceCount), 1)
    if inst > b.draw_instances:
        raise AssertionError("over budget")
    if d.tails and not int(p.Flags) & budgets._indirect_flag():
        if sum(int(r.Count) for r in d.tails[0]) * inst > b.draw_vertices:
            raise AssertionError("over budget")


def test_control_the_budget_check_behind_a_prepare_frame_turns_the_draw_pin_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delitem(apply_state.PREPARE_SOURCE, "DrawVbo")
    monkeypatch.setattr(budgets, "check_draw", _old_check_draw)
    got = calls_per_record(Pipe(), "DrawVbo")
    assert got > CALLS["DrawVbo"], got


def test_control_no_record_memo_turns_the_draw_pin_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dispatch, "MEMO_LIMIT", 0)
    got = calls_per_record(Pipe(), "DrawVbo")
    assert got > CALLS["DrawVbo"], got


# -- the record memo: a remembered draw is checked again where its checks could change -----
def _draw(pipe: Pipe, start: int = 0, index: Handle | None = None) -> memoryview:
    payload: dict[str, Any] = {"Mode": 4, "NumDraws": 1, "InstanceCount": 1}
    if index is not None:
        payload["IndexResource"] = index
    return pipe.record("DrawVbo", payload, [[{"Start": start, "Count": 3}]])


def _memo(pipe: Pipe) -> dict:
    return pipe.applier._handlers[call_spec("DrawVbo").opcode].__globals__["_memo"]


def test_a_remembered_draw_meets_budgets_set_after_it() -> None:
    pipe = Pipe()
    record = _draw(pipe)
    pipe.applier.apply(record)
    pipe.applier.apply(record)
    assert len(_memo(pipe)) == 1  # remembered
    budgets.set_budgets(Budgets(draw_vertices=2))
    try:
        with pytest.raises(budgets.ResourceLimit) as exc:
            pipe.applier.apply(record)
    finally:
        budgets.set_budgets(None)
    assert "DrawVbo.Count" in str(exc.value)
    pipe.applier.apply(record)  # the budgets back: accepted again


def _stale_index_refusal(pipe: Pipe) -> str | None:
    """A draw naming an index buffer, applied twice, then the buffer destroyed: the same
    bytes again must meet the handle's check (None: accepted)."""
    buf = Handle(7, 1)
    target = t.enum("MGPipeResourceTarget")["Buffer"]
    pipe.apply("ResourceCreate", {"Resource": buf, "Target": target})
    record = _draw(pipe, index=buf)
    pipe.applier.apply(record)
    pipe.applier.apply(record)
    pipe.apply("ResourceDestroy", {"Handle": buf, "Kind": t.enum("MGPipeKind")["Buffer"]})
    try:
        pipe.applier.apply(record)
    except ProtocolCorruption as exc:
        return exc.reason
    return None


def test_a_draw_naming_a_buffer_is_never_remembered() -> None:
    pipe = Pipe()
    assert _stale_index_refusal(pipe) == "DrawVbo.IndexResource.Stale"
    assert len(_memo(pipe)) == 0


def test_control_remembering_a_draw_with_a_live_handle_accepts_a_stale_one(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    plain = dispatch._memo_rule
    monkeypatch.setattr(dispatch, "_memo_rule",
                        lambda call, sites: "True" if call == "DrawVbo" else plain(call, sites))  # fmt: skip
    assert _stale_index_refusal(Pipe()) is None


def test_the_memo_is_bounded_and_refusals_are_never_remembered() -> None:
    pipe = Pipe()
    for start in range(dispatch.MEMO_LIMIT + 5):
        pipe.applier.apply(_draw(pipe, start))
        assert len(_memo(pipe)) <= dispatch.MEMO_LIMIT
    assert len(_memo(pipe)) == 5  # emptied when full, then filled again
    bad = _draw(pipe, 0, index=Handle(9, 1))  # no such buffer
    for _ in range(2):
        with pytest.raises(ProtocolCorruption) as exc:
            pipe.applier.apply(bad)
        assert exc.value.reason == "DrawVbo.IndexResource.Unknown"
    assert bytes(bad) not in _memo(pipe)


def test_a_remembered_draw_reaches_a_record_reading_entry_whole() -> None:
    rec = Recorder()
    plain = rec.DrawVbo
    seen: list[Any] = []
    rec.DrawVbo = lambda ctx, d: (seen.append((d.payload, d.tails, ctx.resolved)), plain(ctx, d))[1]
    pipe = Pipe(rec)
    record = _draw(pipe, 5)
    for _ in range(3):
        pipe.applier.apply(record)
    assert len(_memo(pipe)) == 1
    assert seen[0] == seen[1] == seen[2]
    payload, tails, resolved = seen[2]
    assert payload.NumDraws == 1 and tails[0][0].Start == 5 and resolved == {"IndexResource": None}
    assert pipe.applier.applied["DrawVbo"] == 3


def test_control_a_dynamic_push_frame_turns_the_dynamic_pin_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delitem(apply_state.PUSH_SOURCE, "SetDynamicState")
    got = calls_per_record(Pipe(), "SetDynamicState")
    assert got > CALLS["SetDynamicState"], got


# -- records built per applied record ----------------------------------------------------
def _built(pipe: Pipe, call: str, n: int = 25) -> int:
    """Payload records and ``Decoded``\\ s the handler of ``call`` builds over ``n`` applies
    (the draw's bytes differ each time: every apply misses the record memo)."""
    if call == "DrawVbo":
        records = [_draw(pipe, start) for start in range(n + 1)]
    else:
        records = [pipe.steady(call)] * (n + 1)
    record = records[0]
    pipe.applier.apply(record)
    handler = pipe.applier._handlers[call_spec(call).opcode]
    ns = handler.__globals__
    built = [0]
    for name in ("Decoded", f"R_{call_spec(call).payload}"):
        real = ns[name]

        def counting(arg: Any, real: Any = real) -> Any:
            built[0] += 1
            return real(arg)

        ns[name] = counting
    for record in records[1:]:
        pipe.applier.apply(record)
    return built[0]


@pytest.mark.parametrize("call", ["BindRenderState", "DrawVbo"])
def test_a_raw_capture_entry_gets_no_record_built(call: str) -> None:
    assert _built(Pipe(), call) == 0
    # the dynamic push keeps its payload (``last``) and the recorder reads its blob
    assert _built(Pipe(), "SetDynamicState") == 2 * 25


@pytest.mark.parametrize("call", ["BindRenderState", "DrawVbo"])
def test_control_an_entry_that_reads_the_record_gets_it_built(call: str) -> None:
    rec = Recorder()
    plain = getattr(rec, call)
    seen: list[Any] = []
    setattr(rec, call, lambda ctx, d: (seen.append(d.payload), plain(ctx, d))[1])
    assert _built(Pipe(rec), call) == 2 * 25
    assert len(seen) == 26 and all(type(p).__name__ == call_spec(call).payload for p in seen)


# -- the header read ---------------------------------------------------------------------
def _subscripts(fn: Callable[..., Any]) -> int:
    return sum(ins.opname == "BINARY_SUBSCR" for ins in dis.get_instructions(fn))


def test_the_header_is_read_with_one_unpack() -> None:
    app = Pipe().applier
    assert _subscripts(app.apply) == 1  # the handler lookup; Op and Size in one unpack_from
    assert "_header" in app.apply.__code__.co_names


def _old_compile_apply(self: Applier) -> Callable[[Any], object]:
    """The old wrapper: Op and Size read byte by byte (offsets from the header layout)."""
    hdr = header_size()
    fields = {f.path: f for f in layout("MGPWireRecHeader").flat}

    def read(name: str) -> str:
        f = fields[name]
        return " | ".join(f"raw[{f.offset + i}] << {8 * i}" if i else f"raw[{f.offset}]"
                          for i in range(f.size))  # fmt: skip

    src = ("def apply(record):\n"
           "    raw = record if type(record) is bytes else bytes(record)\n"
           f"    op = {read('Op')}\n    size = {read('Size')}\n"
           f"    if size < {hdr} or size % {record_align()} or not raw[size - 1 : size]:\n"
           "        raise _PC('Wire.Size')\n"
           "    handler = _handlers.get(op) or _compile(op)\n"
           "    return handler(raw, size)\n")  # fmt: skip
    ns: dict[str, Any] = {"_PC": ProtocolCorruption, "_handlers": self._handlers,
                          "_compile": self._compile}  # fmt: skip
    exec(compile(src, "<old apply>", "exec"), ns)
    return ns["apply"]


def test_control_a_byte_by_byte_header_turns_the_header_pin_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(Applier, "_compile_apply", _old_compile_apply)
    assert _subscripts(Pipe().applier.apply) > 1


def test_header_faults_keep_their_names() -> None:
    app = Pipe().applier
    good = bytes(Pipe().steady("DrawVbo"))
    for raw, reason in [(good[: header_size() - 1], "Wire.Header"), (b"", "Wire.Header"),
                        (good[:-8], "Wire.Size"), (good + b"\0" * 3, None)]:  # fmt: skip
        if reason is None:
            app.apply(raw)  # trailing bytes past Size are not the record's
            continue
        with pytest.raises(ProtocolCorruption) as exc:
            app.apply(raw)
        assert exc.value.reason == reason


# -- the lazy handlers refuse as the record-building ones do -------------------------------
def _both() -> tuple[Pipe, Pipe]:
    rec = Recorder()
    for call in ("BindRenderState", "DrawVbo"):
        plain = getattr(rec, call)
        setattr(rec, call, lambda ctx, d, plain=plain: plain(ctx, d))  # reads d: eager
    return Pipe(), Pipe(rec)


def test_lazy_and_eager_handlers_refuse_alike() -> None:
    lazy, eager = _both()
    cases = [
        ("BindRenderState", {"Cso": Handle(0, 0)}, ()),
        ("BindRenderState", {"Cso": Handle(1, 2)}, ()),
        ("BindRenderState", {"Cso": Handle(9, 1)}, ()),
        ("BindRenderState", {"Cso": Handle(t.constant("kMGPipeShaderCsoCompositeSlotBase"), 1)}, ()),
        ("DrawVbo", {"NumDraws": 1, "IndexResource": Handle(3, 1)}, [[{"Count": 3}]]),
    ]
    for call, payload, tails in cases:
        a, b = lazy.refused(call, payload, tails), eager.refused(call, payload, tails)
        assert a == b and a.startswith(call), (a, b)
    lazy.apply("DeleteRenderState", {"Handle": Handle(2, 1)})
    eager.apply("DeleteRenderState", {"Handle": Handle(2, 1)})
    assert lazy.refused("BindRenderState", {"Cso": Handle(2, 1)}) == "BindRenderState.Cso.Stale"
    assert eager.refused("BindRenderState", {"Cso": Handle(2, 1)}) == "BindRenderState.Cso.Stale"


def test_lazy_and_eager_draws_meet_the_same_budgets() -> None:
    lazy, eager = _both()
    budgets.set_budgets(Budgets(draw_instances=4, draw_vertices=100))
    try:
        for payload, tails, reason in [
            ({"NumDraws": 1, "InstanceCount": 5}, [[{"Count": 3}]], "DrawVbo.InstanceCount"),
            ({"NumDraws": 1, "InstanceCount": 4}, [[{"Count": 26}]], "DrawVbo.Count"),
            ({"NumDraws": 2, "InstanceCount": 2}, [[{"Count": 25}, {"Count": 26}]], "DrawVbo.Count"),
        ]:  # fmt: skip
            for pipe in (lazy, eager):
                with pytest.raises(budgets.ResourceLimit) as exc:
                    pipe.apply("DrawVbo", payload, tails)
                assert exc.value.reason == reason
        for pipe in (lazy, eager):  # at the budgets exactly: applied
            pipe.apply("DrawVbo", {"NumDraws": 2, "InstanceCount": 4}, [[{"Count": 12}, {"Count": 13}]])
            pipe.apply("DrawVbo", {"NumDraws": 1, "InstanceCount": 0}, [[{"Count": 100}]])
    finally:
        budgets.set_budgets(None)
    assert lazy.backend.counts["DrawVbo"] == eager.backend.counts["DrawVbo"] == 2
    assert lazy.backend.raw[-2:] == eager.backend.raw[-2:]


def test_lazy_handlers_leave_the_context_as_the_readers_expect() -> None:
    lazy, eager = _both()
    for call in ("BindRenderState", "DrawVbo"):
        for pipe in (lazy, eager):
            pipe.applier.apply(pipe.steady(call))
        a, b = lazy.applier.ctx, eager.applier.ctx
        assert (a.call, a.raw, set(a.resolved)) == (b.call, b.raw, set(b.resolved)) == (
            call, bytes(lazy.steady(call)), {"Cso"} if call == "BindRenderState" else {"IndexResource"})
        assert lazy.applier.applied == eager.applier.applied
    assert (lazy.applier.ctx.render_state_version, lazy.applier.ctx.pipeline_version) == (3, 2)
    assert lazy.applier.ctx.render_state_cso == Handle(1, 1)


# -- the lazy pipeline scatter -----------------------------------------------------------
def test_the_block_is_up_to_date_whenever_it_is_read() -> None:
    pipe = Pipe()
    rs = pipe.applier.ctx.render_state
    v0 = rs.version
    for k in (0, 1, 0, 1, 1):
        pipe.apply("BindRenderState", {"Cso": Handle(k + 1, 1)})
    assert rs.version == (v0 + 5) & VERSION_MASK and rs._pending == pipe.subsets[1]
    pipe.applier.apply(pipe.steady("SetDynamicState"))  # a dynamic push never waits for it
    assert rs._pending == pipe.subsets[1]
    want = bytearray(RS_SIZE)
    src = 0
    for o, n in PIPE:
        want[o : o + n] = pipe.subsets[1][src : src + n]
        src += n
    want[DYN[0][0] : DYN[0][0] + DYN[0][1]] = pipe.dyn_blob
    assert bytes(rs.data) == bytes(want) and rs._pending is None
    assert rs.pipeline_subset() == pipe.subsets[1]
    pipe.apply("BindRenderState", {"Cso": Handle(1, 1)})
    assert rs.pipeline_subset() == pipe.subsets[0]  # read before the block is
    assert bytes(rs.view().tobytes()) == bytes(rs.data)
    rs.reset()
    assert bytes(rs.data) == bytes(RS_SIZE)


def test_a_subset_of_the_wrong_size_is_refused_at_the_bind() -> None:
    rs = WorkingRenderState()
    with pytest.raises(ValueError):
        rs.scatter_pipeline(bytes(PIPE_SIZE - 1))
    rs.scatter_pipeline(bytearray(PIPE_SIZE))  # a mutable subset is copied at the bind
    assert type(rs._pending) is bytes
