"""The ring's control page (seed 001 §11.2 ``RingControl``) in shared memory.

One 4 KiB page at the front of the command segment; every word that one side writes and
the other reads sits on its own 64-byte cache line (one contention group per line):

=================== ======== =========================================================
word                writer   meaning
=================== ======== =========================================================
``head``            client   published bytes (monotonic byte count, never reset)
``tail``            server   released bytes (the producer's space)
``applied_seq``     server   records applied (record ordinals, §11.6)
``consumer_parked`` server   1 while the server is blocked on the doorbell
``producer_parked`` client   1 while the client is blocked on the doorbell
=================== ======== =========================================================

Each word is an aligned u64 written and read with one store / one load. :func:`fence`
is the full barrier the parked-flag protocol needs between "store my flag / cursor" and
"load the other side's" (§11.3: the lost-wakeup window is closed by two ``seq_cst``
fences); a lock round trip is a locked read-modify-write, i.e. a full barrier.
"""

from __future__ import annotations

import struct
import threading

__all__ = ["PAGE_SIZE", "LINE", "WORDS", "ControlPage", "fence"]

PAGE_SIZE = 4096
LINE = 64
#: The words of the page in line order (line i holds WORDS[i]).
WORDS = ("head", "tail", "applied_seq", "consumer_parked", "producer_parked")
_U64 = struct.Struct("<Q")
_fence_lock = threading.Lock()


def fence() -> None:
    """A full memory barrier (a locked read-modify-write)."""
    _fence_lock.acquire()
    _fence_lock.release()


class ControlPage:
    """Typed access to the words of a control page over ``buf`` (>= :data:`PAGE_SIZE`)."""

    __slots__ = ("_buf", "_pack", "_unpack")

    def __init__(self, buf: memoryview) -> None:
        if len(buf) < PAGE_SIZE:
            raise ValueError(f"a control page needs {PAGE_SIZE} B, got {len(buf)}")
        self._buf = buf[:PAGE_SIZE]
        self._pack = _U64.pack_into
        self._unpack = _U64.unpack_from

    @staticmethod
    def offset(word: str) -> int:
        return WORDS.index(word) * LINE

    def load(self, offset: int) -> int:
        return self._unpack(self._buf, offset)[0]

    def store(self, offset: int, value: int) -> None:
        self._pack(self._buf, offset, value)


HEAD = ControlPage.offset("head")
TAIL = ControlPage.offset("tail")
APPLIED = ControlPage.offset("applied_seq")
CONSUMER_PARKED = ControlPage.offset("consumer_parked")
PRODUCER_PARKED = ControlPage.offset("producer_parked")
