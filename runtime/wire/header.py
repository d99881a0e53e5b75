"""The record header codec: ``MGPWireRecHeader{Op, Flags, Size}`` (seed 001 §4, §11.2).

Every record, on any transport, starts with this header; ``Size`` includes the header and
is a multiple of :data:`RECORD_ALIGN`. ``Op`` :data:`PAD_OP` (0) is reserved for the
ring's wrap pad. The layout is the tables' (``STRUCTS["MGPWireRecHeader"]``).
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import ProtocolCorruption
from ..schema import tables as _t

__all__ = [
    "RECORD_ALIGN",
    "record_align",
    "PAD_OP",
    "header_size",
    "pack_header",
    "read_header",
    "make_record",
    "check_record",
]

#: ``Op`` reserved for the wrap padding record (§11.2).
PAD_OP = 0


@lru_cache(maxsize=None)
def record_align() -> int:
    """Record granularity (seed 001 §4: "Size includes the header, a multiple of 8"), from
    the header constant ``kMGPipeRecordAlign`` (``RECORD_ALIGN``; read on first use)."""
    return int(_t.constant("kMGPipeRecordAlign"))


def __getattr__(name: str) -> int:
    if name == "RECORD_ALIGN":  # read from the tables on first use, not at import
        return record_align()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_HEADER = "MGPWireRecHeader"


@lru_cache(maxsize=None)
def _hdr() -> _t.Packer:
    p = _t.packer(_HEADER, ("Op", "Flags", "Size"))
    if p.size % record_align():
        raise _t.TablesError(f"{_HEADER} is {p.size} B, not a multiple of {record_align()}")
    return p


def header_size() -> int:
    """``sizeof(MGPWireRecHeader)`` from the tables."""
    return _hdr().size


def pack_header(op: int, flags: int, size: int) -> bytes:
    return _hdr().pack(op, flags, size)


def read_header(buf: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int, int]:
    """``(op, flags, size)`` of the header at ``offset``."""
    return _hdr().unpack_from(buf, offset)


def make_record(op: int, payload: bytes | bytearray | memoryview = b"", flags: int = 0) -> bytes:
    """A whole record: header + ``payload``, zero-padded to :data:`RECORD_ALIGN`."""
    body = bytes(payload)
    size = header_size() + len(body)
    size += -size % record_align()
    return (pack_header(op, flags, size) + body).ljust(size, b"\0")


def check_record(record: memoryview) -> tuple[int, int, int]:
    """Producer-side check that a record describes itself; ``(op, flags, size)``.

    Refuses (``ProtocolCorruption("Ring.Emit.Header")``) a record shorter than a
    header, ``Op`` 0, or ``Size`` that is not the record's length or not aligned.
    """
    if len(record) < header_size():
        raise ProtocolCorruption("Ring.Emit.Header")
    op, flags, size = read_header(record)
    if op == PAD_OP or size != len(record) or size % record_align():
        raise ProtocolCorruption("Ring.Emit.Header")
    return op, flags, size
