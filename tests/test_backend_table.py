"""docs/BACKEND_TABLE.md (the README's backend table) is generated from the backends'
entry tables and is current: every catalogue call, per backend, executed or refused by
name. Regenerate: ``python -m mgpipe.runtime.harness.backend_table``."""

from __future__ import annotations

from mgpipe.runtime.backends.base import call_names
from mgpipe.runtime.harness import backend_table as bt


def test_the_committed_table_is_current() -> None:
    assert (
        bt.OUT.read_text() == bt.document()
    ), "stale: python -m mgpipe.runtime.harness.backend_table"


def test_every_call_has_a_row_per_backend() -> None:
    rs = bt.rows()
    assert [c for c, _ in rs] == list(call_names())
    assert all(set(cells) == {"gles", "vulkan"} for _, cells in rs)
    assert {v for _, cells in rs for v in cells.values()} <= {
        "executed",
        "state",
        "refused: UnimplementedCall",
        bt.NOT_IMPLEMENTED,
    }


def test_an_optional_calls_null_entry_is_not_implemented_and_drops_the_record() -> None:
    """kOptional: a null entry is an answer, not an error (SetSwapInterval on gles is
    applied as a dropped record: the frame goes on); a null entry of a call that is not
    optional is the refusal (the control: gles's SetStorageBlockBinding)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from _gles import gles_client

    from mgpipe.runtime.errors import NullEntry

    cells = dict(bt.rows())
    assert cells["SetSwapInterval"]["gles"] == bt.NOT_IMPLEMENTED
    assert cells["SetStorageBlockBinding"]["gles"] == "refused: UnimplementedCall"
    with gles_client() as (c, be):
        c.em.emit("SetSwapInterval", {})
        c.clear()
        c.present()  # no fault: the record was dropped
    try:
        with gles_client() as (c, be):
            c.em.emit("SetStorageBlockBinding", {})
            c.present()
    except NullEntry as e:
        assert str(e) == 'Fatal{UnimplementedCall, "SetStorageBlockBinding"}'
    else:
        raise AssertionError("a non-optional null entry was not refused")


def test_negative_control_a_new_entry_changes_the_table() -> None:
    classes = bt.backend_classes()
    refused = next(c for c, cells in bt.rows(classes) if cells["gles"].startswith("refused"))
    planted = type("Planted", (classes["gles"],), {refused: staticmethod(lambda ctx, d: None)})
    table = bt.markdown(dict(classes, gles=planted))
    assert table != bt.markdown(classes)
    assert f"| `{refused}` | executed |" in table
