"""The control page at the front of ``SEG_CMD`` (seed 001 §11.2 ``RingControl``).

``SEG_CMD`` starts with one :data:`PAGE_SIZE` page; the ring's control area
(:data:`~.ring.CONTROL_SLOTS`: ``head``, ``tail``, ``published_seq``, ``applied_seq``,
the two parked flags, ``dead``; little-endian ``u64`` slots) lives at its start, the
record bytes follow the page. Each slot has one writer. The parked flags the socket
doorbell uses are the ring's own:

- ``data_parked`` (:data:`CONSUMER_PARKED`): the server is blocked waiting for records;
- ``space_parked`` (:data:`PRODUCER_PARKED`): the client is blocked waiting for space or
  for ``applied_seq``.

:func:`fence` is the full barrier the parked-flag protocol needs between "store my flag /
cursor" and "load the other side's" (§11.3: the lost-wakeup window is closed by two
``seq_cst`` fences): a lock round trip, a locked read-modify-write, which is a full
barrier on x86-64. A weakly ordered CPU needs a real ``seq_cst`` fence here (a C call);
the Python runtime does not ship one.
"""

from __future__ import annotations

import struct
import threading

from .ring import CONTROL_SIZE, CONTROL_SLOTS

__all__ = ["PAGE_SIZE", "ControlPage", "fence", "CONSUMER_PARKED", "PRODUCER_PARKED"]

PAGE_SIZE = 4096
_U64 = struct.Struct("<Q")
_fence_lock = threading.Lock()
assert CONTROL_SIZE <= PAGE_SIZE


def fence() -> None:
    """A full memory barrier (a locked read-modify-write)."""
    _fence_lock.acquire()
    _fence_lock.release()


def slot_offset(name: str) -> int:
    """Byte offset of a control slot in the page."""
    return CONTROL_SLOTS.index(name) * _U64.size


CONSUMER_PARKED = slot_offset("data_parked")
PRODUCER_PARKED = slot_offset("space_parked")


class ControlPage:
    """``u64`` loads and stores of the control page's slots over ``buf``."""

    __slots__ = ("_buf",)

    def __init__(self, buf: memoryview) -> None:
        if len(buf) < PAGE_SIZE:
            raise ValueError(f"a control page needs {PAGE_SIZE} B, got {len(buf)}")
        self._buf = buf[:PAGE_SIZE]

    def load(self, offset: int) -> int:
        return _U64.unpack_from(self._buf, offset)[0]

    def store(self, offset: int, value: int) -> None:
        _U64.pack_into(self._buf, offset, value)
