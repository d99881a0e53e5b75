"""The chunk-table algorithm, for any classification of the real layout (hypothesis).

Whatever classes the catalogue gives RenderStateParameters' members, the table must
partition [0, sizeof) into alternating pipeline/dynamic chunks, each byte in the half of
the member (or split sub-member) that owns it, padding with the member before it.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mgpipe.gen import INCLUDE_DIR
from mgpipe.gen.catalogue import Loc
from mgpipe.gen.chunks import DYNAMIC, PIPELINE, SPLIT, ClassRow, chunk_table, member_extents
from mgpipe.gen.errors import ErrorCollector
from mgpipe.gen.layout import read_headers

LAYOUTS = read_headers(INCLUDE_DIR)
RS = LAYOUTS.structs["RenderStateParameters"]
FACE = LAYOUTS.structs["StencilFaceState"]
HERE = Loc("test", 1, 1)
halves = st.sampled_from([PIPELINE, DYNAMIC])


def row(cls: str) -> ClassRow:
    return ClassRow(frozenset({cls}), HERE)


@settings(max_examples=150, deadline=None)
@given(st.lists(halves, min_size=len(RS.members), max_size=len(RS.members)),
       st.lists(halves, min_size=len(FACE.members), max_size=len(FACE.members)),
       st.booleans())
def test_any_classification_partitions_the_block(classes, face, split) -> None:
    member_classes = {m.name: row(c) for m, c in zip(RS.members, classes)}
    if split:
        member_classes["StencilStates"] = row(SPLIT)
    sub = {"StencilFaceState": {m.name: row(c) for m, c in zip(FACE.members, face)}}
    extents, _ = member_extents(LAYOUTS, RS, member_classes, sub)
    errors = ErrorCollector()
    chunks = chunk_table(RS.size, extents, errors, RS.name)
    assert not errors
    at = 0
    for i, c in enumerate(chunks):
        assert c.offset == at and c.length > 0
        if i:
            assert c.cls != chunks[i - 1].cls  # halves alternate
        at += c.length
    assert at == RS.size
    # every byte is in the half of its owner
    for e in extents:
        owner = next(c for c in chunks if c.offset <= e.begin < c.offset + c.length)
        assert {owner.cls} == set(e.classes)
        assert e.end <= owner.offset + owner.length
    for half in (PIPELINE, DYNAMIC):  # bits are dense per half
        assert [c.index for c in chunks if c.cls == half] == list(range(sum(c.cls == half for c in chunks)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_classification_partitions_the_bundled_trees_block(data) -> None:  # type: ignore[no-untyped-def]
    """The same property on the bundled catalogue/MG_Pipe's RenderStateParameters (MobileGL's
    layout: other members, offsets and padding than the original shape's)."""
    lay = _bundled()
    rs, face = lay.structs["RenderStateParameters"], lay.structs["StencilFaceState"]
    classes = {m.name: row(data.draw(halves)) for m in rs.members}
    split = next((m.name for m in rs.members if m.struct == face.name), None)
    sub = {}
    if split is not None and data.draw(st.booleans()):
        classes[split] = row(SPLIT)
        sub = {face.name: {m.name: row(data.draw(halves)) for m in face.members}}
    extents, _ = member_extents(lay, rs, classes, sub)
    errors = ErrorCollector()
    chunks = chunk_table(rs.size, extents, errors, rs.name)
    assert not errors
    at = 0
    for i, c in enumerate(chunks):
        assert c.offset == at and c.length > 0
        if i:
            assert c.cls != chunks[i - 1].cls
        at += c.length
    assert at == rs.size
    for e in extents:
        owner = next(c for c in chunks if c.offset <= e.begin < c.offset + c.length)
        assert {owner.cls} == set(e.classes) and e.end <= owner.offset + owner.length


_BUNDLED: list = []


def _bundled():  # type: ignore[no-untyped-def]
    if not _BUNDLED:
        from mgpipe.gen import CATALOGUE_DIR
        from mgpipe.gen.build import build

        _BUNDLED.append(build(CATALOGUE_DIR).layouts)
    return _BUNDLED[0]


def test_padding_joins_the_member_before_it() -> None:
    """DepthTestEnabled (1 byte at 540) owns the 3 padding bytes before DepthFunc (544)."""
    member_classes = {m.name: row(DYNAMIC) for m in RS.members}
    member_classes["DepthTestEnabled"] = row(PIPELINE)
    extents, _ = member_extents(LAYOUTS, RS, member_classes, {})
    chunks = chunk_table(RS.size, extents, ErrorCollector(), RS.name)
    pipeline = [(c.offset, c.length) for c in chunks if c.cls == PIPELINE]
    assert pipeline == [(540, 4)]
