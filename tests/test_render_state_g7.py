"""G7: every RenderState setter against its SETTERS row (seed 000 §2, seed 001 §5.3).

pipeline-subset bytes changed <=> m_pipelineStateVersion moved; dynamic-subset bytes
changed => m_version moved; bitwise-equal calls move nothing; SetStencilFunc's version
split is per-field. Negative controls: a row's bump group changed, a stray set_* method.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from mgpipe.runtime.client import g7check, render_state
from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.client.render_state import Arg, RenderState, SetterRow, setter_rows
from mgpipe.runtime.client.setter_rows import index_bound

ROWS = setter_rows()
LogicOpArg = Annotated[str, Arg("enum", "LogicOperation")]


def _strategy(arg: Arg) -> st.SearchStrategy:
    if arg.kind == "f32":
        return st.floats(width=32)
    if arg.kind == "u32":
        return st.integers(0, 2**32 - 1)
    if arg.kind == "i32":
        return st.integers(-(2**31), 2**31 - 1)
    if arg.kind == "bool":
        return st.booleans()
    if arg.kind == "glenum":
        return st.integers(0, 0xFFFF)
    if arg.kind in ("enum", "face"):
        values = _t.enum_members(arg.ref)
        return st.sampled_from(sorted(values) + sorted(values.values()))
    if arg.kind == "index":
        return st.integers(0, index_bound(arg.ref) - 1)
    if arg.kind == "pixel":
        members = _t.struct_info("PixelStoreParameters")["members"]
        return st.sampled_from([m["name"] for m in members if m["count"] == 1])
    raise AssertionError(f"no strategy for {arg}")


def _args(row: SetterRow) -> st.SearchStrategy:
    params = g7check.setter_params(RenderState, row)
    return st.tuples(*(_strategy(a) for _, a in params if a.kind != "arm"))


def test_every_setter_is_paired_with_a_row() -> None:
    assert g7check.unpaired(RenderState) == []
    names = {render_state.method_name(r.setter) for r in ROWS}
    assert names == set(g7check.public_setters(RenderState))


@pytest.mark.parametrize("row", ROWS, ids=[r.label for r in ROWS])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_setter_bumps_follow_bytes(row: SetterRow, data: st.DataObject) -> None:
    first = data.draw(_args(row), label="first")
    args = data.draw(_args(row), label="args")

    def factory() -> RenderState:
        rs = RenderState()
        g7check.call_setter(rs, row, first)  # the row's own bytes start somewhere arbitrary
        return rs

    assert g7check.check_setter(factory, row, args) == []


def test_every_row_can_move_its_bytes() -> None:
    """A checker that never sees a change cannot fail: each row, driven twice with two
    different argument tuples, moves at least one byte it writes (except kBumpNone)."""
    for row in ROWS:
        if row.bump == "kBumpNone":
            continue

        def moves(args: tuple, row: SetterRow = row) -> bool:
            rs = RenderState()
            before = rs.block_bytes()
            g7check.call_setter(rs, row, args)
            return rs.block_bytes() != before

        # the first example that moves a byte is the proof: no shrinking of it
        find(_args(row), moves, settings=settings(database=None, phases=[Phase.generate]))


def test_stencil_func_split_is_per_field() -> None:
    assert g7check.check_stencil_func(RenderState) == []


def test_versions_wrap_at_uint16() -> None:
    rs = RenderState()
    width = _t.field("MGPBindRenderState", "Version").max_value
    rs.version_wide = rs.pipeline_version_wide = width
    rs.set_depth_func("Greater")
    assert (rs.version, rs.pipeline_version) == (0, 0)  # the wire's Uint16s wrap ...
    assert (rs.version_wide, rs.pipeline_version_wide) == (width + 1, width + 1)  # ... these not


# -- negative controls: the checker goes red, naming the setter -----------------------
def _swap_bump(monkeypatch: pytest.MonkeyPatch, setter: str, bump: str) -> None:
    mod = _t.tables()
    rows = tuple(dict(r, bump=bump) if r["setter"] == setter else r for r in mod.SETTERS)
    monkeypatch.setattr(mod, "SETTERS", rows)
    render_state.clear_cache()


@pytest.fixture
def restore_cache():
    yield
    render_state.clear_cache()


@pytest.mark.parametrize(
    "setter,bump,args,expect",
    [
        ("SetDepthFunc", "kBumpVersion", ("Greater",), "pipeline-subset bytes changed"),
        ("SetViewport", "kBumpBoth", (1.0, 2.0, 3.0, 4.0), "moved but no pipeline-subset"),
        ("SetClearColor", "kBumpNone", (0.5, 0.5, 0.5, 1.0), "dynamic-subset bytes changed"),
        ("SetStencilMask", "kBumpBoth", ("Front", 7), "moved but no pipeline-subset"),
    ],
)
def test_checker_fails_when_a_bump_group_changes(
    monkeypatch: pytest.MonkeyPatch, restore_cache: None, setter: str, bump: str,
    args: tuple, expect: str,
) -> None:  # fmt: skip
    row = next(r for r in setter_rows() if r.setter == setter)
    assert g7check.check_setter(RenderState, row, args) == []
    _swap_bump(monkeypatch, setter, bump)
    bad = next(r for r in setter_rows() if r.setter == setter)
    findings = g7check.check_setter(RenderState, bad, args)
    assert findings and all(f.startswith(setter) for f in findings)
    assert any(expect in f for f in findings), findings


def test_checker_fails_when_stencil_func_loses_its_condition(
    monkeypatch: pytest.MonkeyPatch, restore_cache: None
) -> None:
    _swap_bump(monkeypatch, "SetStencilFunc", "kBumpBoth")
    findings = g7check.check_stencil_func(RenderState)
    assert any("only Ref changed" in f for f in findings), findings
    assert all(f.startswith("SetStencilFunc") for f in findings)


def test_checker_fails_on_a_method_whose_group_changed() -> None:
    class Demoted(RenderState):
        def set_logic_op(
            self, op: LogicOpArg
        ) -> None:  # writes the pipeline byte but bumps m_version only
            row = dataclasses.replace(self._row("SetLogicOp"), bump="kBumpVersion")
            self._commit(row, lambda: self.p.__setitem__("LogicOp", _t.enum("LogicOperation")[op]))

    row = next(r for r in setter_rows() if r.setter == "SetLogicOp")
    findings = g7check.check_setter(Demoted, row, ("Xor",))
    assert findings == [
        "SetLogicOp: pipeline-subset bytes changed but m_pipelineStateVersion did not move"
    ]


def test_walker_fails_on_an_unlisted_setter_and_a_missing_method() -> None:
    class Extra(RenderState):
        def set_fog_density(self, d: float) -> None:
            pass

    assert g7check.unpaired(Extra) == ["Extra.set_fog_density: public setter not listed in SETTERS"]

    class Missing(RenderState):
        set_logic_op = None  # type: ignore[assignment]

    assert any(
        f.startswith("SetLogicOp: SETTERS row has no method") for f in g7check.unpaired(Missing)
    )
