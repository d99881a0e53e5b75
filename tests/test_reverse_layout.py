"""The reverse channel's byte layouts come from the overlay header, not from Python.

``catalogue/MG_Pipe/MGPipeOverlay.h`` declares the reply slot header, the event ring's
control words, the event header and every event's fixed head; ``runtime/server/reverse.py``
builds its codecs from the generated tables (:func:`wire`). The bytes are checked by hand
here (offsets from the C layout rules, not from the tables). Negative controls: a planted
width change in a copy of the overlay moves the bytes the event ring writes, and the same
change left unpinned is refused by the header compile, by name, at the overlay.
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen.build import build
from mgpipe.runtime.schema import tables as _t
from mgpipe.runtime.server import reverse

REPO = Path(__file__).resolve().parents[1]
GL_ERROR_HEAD = "    struct MGPEventGlError {\n        Uint32 Code;\n    };\n    MGP_ASSERT_POD(MGPEventGlError, 4);\n"


def _overlay_copy(tmp_path: Path) -> Path:
    for name in ("MG_Pipe", "MG_Util", "MG_Backend"):
        shutil.copytree(REPO / "catalogue" / name, tmp_path / "catalogue" / name)
    return tmp_path / "catalogue" / "MG_Pipe"


def _plant(tree: Path, new: str) -> None:
    f = tree / "MGPipeOverlay.h"
    text = f.read_text()
    assert GL_ERROR_HEAD in text
    f.write_text(text.replace(GL_ERROR_HEAD, new, 1))


def _gl_error_bytes(code: int, seq: int) -> tuple[bytes, list]:
    """One GlError pushed on a fresh ring: the record's bytes and what the reader decodes."""
    ring = reverse.EventRing(size=1 << 12)
    ring.seq = seq
    ring.gl_error(code)
    head = struct.unpack_from("<Q", ring.buf, 0)[0]  # Head: the ring control's first u64
    ctl = len(ring.buf) - ring.capacity
    raw = bytes(ring.buf[ctl : ctl + head])
    events, _ = reverse.read_events(ring, 0, seq)
    return raw, [(e.kind.name, e.seq, e.values) for e in events]


def test_the_bundled_overlay_gives_the_bytes_decoded_by_hand() -> None:
    w = reverse.wire()
    # MGPEventRingControl: u64 Head, u64 Tail, u32 Full, u32 Dropped, u8 Reserved[40]
    assert (w.ctl_size, w.head[0], w.tail[0], w.full[0], w.dropped[0]) == (64, 0, 8, 16, 20)
    raw, events = _gl_error_bytes(0x0502, 7)
    # MGPEventHeader {u16 Kind = GlError (1), u16 Flags, u32 Size = 4, u64 Seq}, then Code,
    # padded to the 16-byte event alignment
    assert raw == struct.pack("<HHIQ", 1, 0, 4, 7) + struct.pack("<I", 0x0502) + bytes(12)
    assert events == [("GlError", 7, (0x0502,))]
    mb = reverse.ReplyMailbox(slots=2, slot_size=64)
    mb.post(3, reverse.Reply.ok(b"xyz"), "Probe")  # slot 3 % 2 = 1, header {u64, u32, u32}
    assert bytes(mb.buf[64:83]) == struct.pack("<QII", 3, 0, 3) + b"xyz"


def test_a_planted_head_width_moves_the_bytes_the_ring_writes(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _overlay_copy(tmp_path)
    _plant(tree, GL_ERROR_HEAD.replace("Uint32 Code", "Uint64 Code").replace("GlError, 4)", "GlError, 8)"))
    out = tmp_path / "gen"
    assert cli.main(["gen", "--catalogue", str(tree), "--out", str(out)]) == 0
    spec = importlib.util.spec_from_file_location("planted_reverse_tables", out / "pipe_tables.py")
    assert spec is not None and spec.loader is not None
    planted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(planted)
    before, _ = _gl_error_bytes(0x0502, 7)
    monkeypatch.setattr(_t, "_module", planted)
    w = reverse.wire()
    assert w.body[w.Kind.GlError].format == "<Q"
    raw, events = _gl_error_bytes(0x0502, 7)
    assert raw == struct.pack("<HHIQ", 1, 0, 8, 7) + struct.pack("<Q", 0x0502) + bytes(8)
    assert raw != before and events == [("GlError", 7, (0x0502,))]


def test_a_planted_width_left_unpinned_is_refused_at_the_overlay(tmp_path: Path) -> None:
    from mgpipe.gen.errors import GenError, GenErrors

    tree = _overlay_copy(tmp_path)
    _plant(tree, GL_ERROR_HEAD.replace("Uint32 Code", "Uint64 Code"))
    with pytest.raises((GenError, GenErrors)) as exc:
        build(tree, use_cache=False)
    lines = [line for line in str(exc.value).splitlines() if ": HEADER-COMPILE: " in line]
    assert any(line.startswith("MG_Pipe/MGPipeOverlay.h:") and "MGPEventGlError" in line
               for line in lines), str(exc.value)
