"""The server's apply path in steady state (issue 20): its structural figures, pinned.

Per applied record of the steady-state scenes' calls (``BindRenderState``, ``DrawVbo``,
``SetDynamicState``) on the recorder backend:

- Python calls (``sys.setprofile`` ``call`` + ``c_call`` events), measured as the
  difference between two run lengths of the same record, so setup and the first
  compile cancel;
- bytecode instructions (``sys.settrace`` ``opcode`` events), measured the same way: the
  apply wrapper, the handler and the recorder's lean form together;
- records built: none for a call whose entry reads no record (the recorder's raw capture)
  (``BindRenderState``, ``DrawVbo``, ``SetDynamicState``: its payload is kept in
  ``ctx.last`` as its unpacked members and built when read);
- the header read: one ``unpack_from``, no byte-by-byte indexing.

Every pin has a negative control that plants the old behaviour (an eager pipeline scatter
behind a push frame, the budget check behind a prepare frame, a dynamic push frame, the
header read byte by byte, a record-reading entry, no lean form, no row memo, the old
wrapper, the applied counts in a dict) and shows the pin go red. The lazy and lean
handlers refuse exactly as the record-building ones do; a remembered CSO row is checked
again (a deleted or re-created CSO is refused by name: a control without the check
accepts it).
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
from mgpipe.runtime.server.applier import Applier, Tally
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
#: the call's own builtins, the recorder's lean form: ``list.append`` itself for a call
#: without a blob; a remembered draw: the memo's ``get`` in place of the unpack and the
#: checks; a bind: the row memo's ``get`` in place of the resolve): the figures a
#: regression of the apply path moves
CALLS = {"BindRenderState": 7, "DrawVbo": 6, "SetDynamicState": 8}

#: bytecode instructions per applied record (wrapper + handler + lean form; issue 20: were
#: 210, 121 and 299 with the record-building dynamic push, the resolve per bind, the dict
#: counts and the recorder's per-record count); Python 3.11's instruction set
OPCODES = {"BindRenderState": 114, "DrawVbo": 65, "SetDynamicState": 147}


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


def _events(hook: str, apply: Callable[[Any], Any], record: Any, n: int) -> int:
    """Interpreter events while ``apply(record)`` runs ``n`` times: ``"profile"`` counts
    Python calls (``call`` + ``c_call``), ``"trace"`` bytecode instructions."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return trace

    if hook == "profile":
        sys.setprofile(profile)
    else:
        sys.settrace(trace)
    try:
        for _ in range(n):
            apply(record)
    finally:
        sys.setprofile(None)
        sys.settrace(None)
    return count


def calls_per_record(pipe: Pipe, call: str) -> float:
    record = pipe.steady(call)
    apply = pipe.applier.apply
    apply(record)  # compile the handler first
    return (_events("profile", apply, record, 40) - _events("profile", apply, record, 10)) / 30


def opcodes_per_record(pipe: Pipe, call: str) -> float:
    record = pipe.steady(call)
    apply = pipe.applier.apply
    apply(record)  # compile the handler first
    apply(record)  # and remember what is remembered
    return (_events("trace", apply, record, 40) - _events("trace", apply, record, 10)) / 30


# -- calls and instructions per applied record -------------------------------------------
@pytest.mark.parametrize("call", sorted(CALLS))
def test_calls_per_applied_record_are_pinned(call: str) -> None:
    assert calls_per_record(Pipe(), call) == CALLS[call]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="instruction counts of CPython 3.11")
@pytest.mark.parametrize("call", sorted(OPCODES))
def test_instructions_per_applied_record_are_pinned(call: str) -> None:
    assert opcodes_per_record(Pipe(), call) <= OPCODES[call]


def _without_lean_forms(rec: Recorder) -> Recorder:
    """The recorder's entries as they were: each called with the context (the raw capture
    read from ``ctx.raw``, the blob from the decoded record), no lean form."""
    for call in ("BindRenderState", "DrawVbo", "SetDynamicState"):
        plain = getattr(rec, call)

        def entry(ctx: Any, d: Any, plain: Any = plain) -> Any:
            return plain(ctx, d)

        if getattr(plain, "reads_decoded", True) is False:
            entry.reads_decoded = False  # type: ignore[attr-defined]
        setattr(rec, call, entry)
    return rec


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="instruction counts of CPython 3.11")
@pytest.mark.parametrize("call", sorted(OPCODES))
def test_control_entries_without_lean_forms_turn_the_instructions_red(call: str) -> None:
    got = opcodes_per_record(Pipe(_without_lean_forms(Recorder())), call)
    assert got > OPCODES[call], got


_REAL_COMPILE_APPLY = Applier._compile_apply


def _old_wrapper(self: Applier) -> Callable[[Any], object]:
    """The wrapper as it was: a type test before the copy, a ``try`` around the handler's
    lookup, the record seq through a local."""
    src = ("def apply(record):\n"
           "    raw = record if type(record) is bytes else bytes(record)\n"
           "    try:\n        op, size = _header(raw)\n"
           "    except _StructError:\n        raise _PC('Wire.Header') from None\n"
           f"    if size != len(raw) or size % {record_align()}:\n"
           f"        if size < {header_size()} or size % {record_align()} or size > len(raw):\n"
           "            raise _PC('Wire.Size')\n"
           "    try:\n        handler = _handlers[op]\n"
           "    except KeyError:\n        handler = _compile(op)\n"
           "    seq = _ctx.seq + 1\n    _ctx.seq = _ev.seq = seq\n"
           "    return handler(raw, size)\n")  # fmt: skip
    ns = dict(_REAL_COMPILE_APPLY(self).__globals__)  # the real wrapper's names, and
    ns |= {"_compile": self._compile, "_ev": self.events}  # the two it no longer reads
    exec(compile(src, "<old apply>", "exec"), ns)
    return ns["apply"]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="instruction counts of CPython 3.11")
def test_control_the_old_wrapper_turns_the_instructions_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Applier, "_compile_apply", _old_wrapper)
    got = opcodes_per_record(Pipe(), "DrawVbo")
    assert got > OPCODES["DrawVbo"], got


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="instruction counts of CPython 3.11")
def test_control_the_applied_counts_in_a_dict_turn_the_instructions_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(dispatch, "COUNT", "_applied['DrawVbo'] += 1")  # the old count
    real = Applier._compile

    def compile_with_a_dict(self: Applier, op: int) -> Any:
        handler = real(self, op)
        handler.__globals__["_applied"] = Tally()
        return handler

    monkeypatch.setattr(Applier, "_compile", compile_with_a_dict)
    got = opcodes_per_record(Pipe(), "DrawVbo")
    assert got > OPCODES["DrawVbo"], got


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


# -- the row memo: a remembered CSO row is checked again ---------------------------------
def _row_memo(pipe: Pipe) -> dict:
    return pipe.applier._handlers[call_spec("BindRenderState").opcode].__globals__["_memo"]


def _rebound(pipe: Pipe) -> list[str | None]:
    """CSO 2 bound twice (its row remembered), deleted, then re-created at gen 2 with
    another subset: binding ``{2, 1}`` after each must meet the handle's checks (None:
    accepted); ``{2, 2}`` binds the new subset."""
    def bind(h: Handle) -> memoryview:
        return pipe.record("BindRenderState", {"Cso": h, "Version": 9, "PipelineVersion": 8})

    for _ in range(2):
        pipe.applier.apply(bind(Handle(2, 1)))
    assert 2 in _row_memo(pipe)
    out: list[str | None] = []
    fresh = bytes([7]) * PIPE_SIZE
    for step in range(2):
        if step == 0:
            pipe.apply("DeleteRenderState", {"Handle": Handle(2, 1)})
        else:
            pipe.apply("CreateRenderState", {"Cso": Handle(2, 2), "ChunkMask": 0xFFFFFFFF},
                       blob=fresh)  # fmt: skip
        try:
            pipe.applier.apply(bind(Handle(2, 1)))
            out.append(None)
        except ProtocolCorruption as exc:
            out.append(exc.reason)
    pipe.applier.apply(bind(Handle(2, 2)))
    rs = pipe.applier.ctx.render_state
    assert rs.pipeline_subset() == fresh and pipe.applier.ctx.render_state_cso == Handle(2, 2)
    return out


def test_a_remembered_cso_row_is_checked_again() -> None:
    assert _rebound(Pipe()) == ["BindRenderState.Cso.Stale"] * 2
    lean, eager = _both()  # a record-reading entry: the same refusals, the same state
    assert _rebound(eager) == ["BindRenderState.Cso.Stale"] * 2
    pipe = Pipe()
    pipe.applier.apply(pipe.steady("BindRenderState"))
    for k in (1, 2, 1):  # a remembered bind takes the record's own counters
        pipe.apply("BindRenderState", {"Cso": Handle(k, 1), "Version": 10 + k, "PipelineVersion": k})
        ctx = pipe.applier.ctx
        assert (ctx.render_state_version, ctx.pipeline_version) == (10 + k, k)
        assert ctx.render_state.pipeline_subset() == pipe.subsets[k - 1]


def test_control_a_row_memo_without_its_check_binds_a_deleted_cso(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(dispatch, "_row_check", lambda site: "True")
    with pytest.raises(AssertionError):  # the re-created CSO's row is never looked up
        _rebound(Pipe())
    pipe = Pipe()
    for _ in range(2):
        pipe.apply("BindRenderState", {"Cso": Handle(2, 1)})
    pipe.apply("DeleteRenderState", {"Handle": Handle(2, 1)})
    pipe.apply("BindRenderState", {"Cso": Handle(2, 1)})  # accepted: no refusal by name


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="instruction counts of CPython 3.11")
def test_control_no_row_memo_turns_the_bind_instructions_red(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dispatch, "MEMO_LIMIT", 0)
    got = opcodes_per_record(Pipe(), "BindRenderState")
    assert got > OPCODES["BindRenderState"], got


def test_control_a_dynamic_push_frame_turns_the_dynamic_pin_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delitem(apply_state.PUSH_SOURCE, "SetDynamicState")
    got = calls_per_record(Pipe(), "SetDynamicState")
    assert got > CALLS["SetDynamicState"], got


def _looked_up_scatter(mask: str, blob: str, what: str, ind: str) -> list[str]:
    """The one-chunk store found through the mask's plan and its size compared first."""
    return [
        f"{ind}_plan = _rs._dyn_plans.get({mask})",
        f"{ind}if _plan is not None and len(_plan[1]) == 1 and _plan[0] == len({blob}):",
        f"{ind}    _o, _e, _, _ = _plan[1][0]",
        f"{ind}    _rs_mv[_o:_e] = {blob}",
        f"{ind}    _rs.version = (_rs.version + 1) & {VERSION_MASK}",
        f"{ind}    _rs.scatters += 1",
        f"{ind}else:",
        f"{ind}    _rs.scatter_dynamic({mask}, {blob}, {what})",
    ]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="instruction counts of CPython 3.11")
def test_control_a_looked_up_dynamic_store_turns_the_instructions_red(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(apply_state, "scatter_dynamic_source", _looked_up_scatter)
    pipe = Pipe()
    got = opcodes_per_record(pipe, "SetDynamicState")
    assert got > OPCODES["SetDynamicState"], got
    rs = pipe.applier.ctx.render_state  # the same store
    assert bytes(rs.data[DYN[0][0] : DYN[0][0] + DYN[0][1]]) == pipe.dyn_blob


def test_a_dynamic_blob_of_another_size_is_refused_by_name() -> None:
    pipe = Pipe()
    for _ in range(2):  # the mask's one-chunk store planned
        pipe.applier.apply(pipe.steady("SetDynamicState"))
    before = (bytes(pipe.applier.ctx.render_state.data), pipe.applier.ctx.render_state.version)
    for blob in (pipe.dyn_blob[:-4], pipe.dyn_blob + bytes(4)):
        with pytest.raises(ProtocolCorruption) as exc:
            pipe.apply("SetDynamicState", {"ChunkMask": 1, "Version": 6}, blob=blob)
        assert exc.value.reason == "SetDynamicState.Blob"
    with pytest.raises(ProtocolCorruption) as exc:  # a bit past the dynamic chunks
        pipe.apply("SetDynamicState", {"ChunkMask": 1 << len(DYN), "Version": 6}, blob=b"")
    assert exc.value.reason == "SetDynamicState.ChunkMask"
    rs = pipe.applier.ctx.render_state
    assert (bytes(rs.data), rs.version) == before and pipe.applier.applied["SetDynamicState"] == 2


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


@pytest.mark.parametrize("call", ["BindRenderState", "DrawVbo", "SetDynamicState"])
def test_a_raw_capture_entry_gets_no_record_built(call: str) -> None:
    assert _built(Pipe(), call) == 0


@pytest.mark.parametrize("call", ["BindRenderState", "DrawVbo", "SetDynamicState"])
def test_control_an_entry_that_reads_the_record_gets_it_built(call: str) -> None:
    rec = Recorder()
    plain = getattr(rec, call)
    seen: list[Any] = []
    setattr(rec, call, lambda ctx, d: (seen.append(d.payload), plain(ctx, d))[1])
    assert _built(Pipe(rec), call) == 2 * 25
    assert len(seen) == 26 and all(type(p).__name__ == call_spec(call).payload for p in seen)


def test_the_kept_dynamic_payload_reads_as_the_record() -> None:
    """SetDynamicState's ``ctx.last`` entry: the unpacked members, built into the payload
    record when read (every way of reading it), equal to what a reading entry's server
    keeps."""
    lean, eager = _both()
    for pipe in (lean, eager):
        pipe.applier.apply(pipe.steady("SetDynamicState"))
    a, b = lean.applier.ctx.last, eager.applier.ctx.last
    want = b["SetDynamicState"]
    assert type(want).__name__ == "MGPDynamicState" and want.Version == 5
    assert dict.__getitem__(a, "SetDynamicState") == tuple(_flat(want))  # kept unbuilt
    assert a.get("SetDynamicState") == want and type(a["SetDynamicState"]) is type(want)
    assert dict(a) == {**a} == a.copy() == b and list(a.values()) == [want]
    assert a.items() == [("SetDynamicState", want)] and a == b
    assert a.pop("SetDynamicState") == want and a.get("SetDynamicState", 0) == 0


def _flat(record: Any) -> list[Any]:
    return [x for v in record for x in (_flat(v) if isinstance(v, tuple) else [v])]


def test_control_a_plain_last_dict_hands_out_the_members(monkeypatch: pytest.MonkeyPatch) -> None:
    class Plain(dict):  # no building on read
        builders: dict[str, Any] = {}

    monkeypatch.setattr("mgpipe.runtime.server.applier.LastPayloads", Plain)
    pipe = Pipe()
    pipe.applier.apply(pipe.steady("SetDynamicState"))
    assert type(pipe.applier.ctx.last["SetDynamicState"]) is tuple


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


def test_an_entrys_events_carry_the_record_being_applied() -> None:
    """The wrapper moves one counter (``ctx.seq``); the event ring follows it."""
    from mgpipe.runtime.server.reverse import EventKind, read_events

    rec = Recorder()
    plain = rec.DrawVbo
    rec.DrawVbo = lambda ctx, d: (ctx.events.gl_error(0x502), plain(ctx, d))[1]
    pipe = Pipe(rec)
    since = pipe.applier.ctx.seq
    for _ in range(3):
        pipe.applier.apply(pipe.steady("DrawVbo"))
    evs, _ = read_events(pipe.applier.events, since, pipe.applier.ctx.seq)
    assert [e.seq for e in evs if e.kind == EventKind.GlError] == [since + 1, since + 2, since + 3]


# -- the lazy handlers refuse as the record-building ones do -------------------------------
def _both() -> tuple[Pipe, Pipe]:
    """(the recorder's lean forms, entries that read the decoded record)."""
    rec = Recorder()
    for call in ("BindRenderState", "DrawVbo", "SetDynamicState"):
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
    """An entry marked ``reads_decoded = False`` (no lean form) reads the context: it is
    set as for an entry that reads the record."""
    lazy, eager = Pipe(_without_lean_forms(Recorder())), _both()[1]
    for call in ("BindRenderState", "DrawVbo", "SetDynamicState"):
        last = []
        for pipe in (lazy, eager):
            for _ in range(2):  # the second: remembered (the draw's record, the bind's row)
                record = pipe.steady(call)
                pipe.applier.apply(record)
            last.append(bytes(record))
        a, b = lazy.applier.ctx, eager.applier.ctx
        want = {"BindRenderState": {"Cso"}, "DrawVbo": {"IndexResource"}}.get(call, set())
        assert (a.call, a.raw, set(a.resolved)) == (call, last[0], want)
        assert (b.call, b.raw, set(b.resolved)) == (call, last[1], want)
        assert lazy.applier.applied == eager.applier.applied
    assert (lazy.applier.ctx.render_state_version, lazy.applier.ctx.pipeline_version) == (3, 2)
    assert lazy.applier.ctx.render_state_cso == Handle(1, 1)


def test_lean_forms_leave_the_state_and_the_capture_as_the_readers_do() -> None:
    """The lean forms (docs/BACKENDS.md §3) are given no context (``ctx.call`` / ``raw`` /
    ``resolved`` stay the last entry's): every table, binding, count, working-state byte
    and the capture itself are what entries reading the record leave."""
    lean, eager = _both()
    for pipe in (lean, eager):
        for call in ("BindRenderState", "DrawVbo", "SetDynamicState") * 2:
            pipe.applier.apply(pipe.steady(call))
        pipe.apply("SetDynamicState", {"ChunkMask": 1, "Version": 6},
                   blob=bytes(DYN[0][1]))  # fmt: skip
        pipe.apply("SetDynamicState", {"ChunkMask": 0, "Version": 7})  # no chunk: no blob
    a, b = lean.applier, eager.applier
    assert a.applied == b.applied and a.applied["SetDynamicState"] == 4
    assert bytes(a.ctx.render_state.data) == bytes(b.ctx.render_state.data)
    assert a.ctx.render_state.version == b.ctx.render_state.version
    for name in ("render_state_cso", "render_state_version", "pipeline_version", "dynamic_version"):
        assert getattr(a.ctx, name) == getattr(b.ctx, name), name
    assert a.ctx.last == b.ctx.last
    ra, rb = lean.backend, eager.backend
    assert ra.raw == rb.raw and ra.blobs == rb.blobs and ra.counts == rb.counts
    assert ra.stage_capacity == rb.stage_capacity == lean.stage.capacity
    assert ra.stream_digest() == rb.stream_digest()
    assert ra.recording_digest() == rb.recording_digest()
    assert a.ctx.call == "CreateRenderState"  # the last record an entry was given


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
