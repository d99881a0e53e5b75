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
    }


def test_negative_control_a_new_entry_changes_the_table() -> None:
    classes = bt.backend_classes()
    refused = next(c for c, cells in bt.rows(classes) if cells["gles"].startswith("refused"))
    planted = type("Planted", (classes["gles"],), {refused: staticmethod(lambda ctx, d: None)})
    table = bt.markdown(dict(classes, gles=planted))
    assert table != bt.markdown(classes)
    assert f"| `{refused}` | executed |" in table
