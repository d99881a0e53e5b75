"""Shared-memory segments (seed 001 §11.1 ``ShmSegment``).

The client creates every segment: ``os.memfd_create`` + ``mmap`` where the kernel has
memfd, else a ``multiprocessing.shared_memory`` block (whose descriptor is passed the
same way). The peer maps a segment from the descriptor it received through
``SCM_RIGHTS`` (:meth:`SharedSegment.adopt`); neither side ever names the other's
descriptor number or mapping address.
"""

from __future__ import annotations

import mmap
import os

__all__ = ["SharedSegment", "PAGE"]

PAGE = mmap.PAGESIZE


class SharedSegment:
    """One mapping of a shared segment; ``buf`` is a writable ``memoryview`` of ``size`` bytes."""

    def __init__(self, fd: int, size: int, *, keep: object = None) -> None:
        self.size = size
        self.fd = fd
        self._keep = keep  # a SharedMemory block (fallback) that owns the name
        self._map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.buf = memoryview(self._map)

    @classmethod
    def create(cls, name: str, size: int) -> "SharedSegment":
        """A new zero-filled segment of ``size`` bytes (rounded up to a page)."""
        size = -(-size // PAGE) * PAGE
        memfd = getattr(os, "memfd_create", None)
        if memfd is not None:
            fd = memfd(f"mgpipe-{name}", getattr(os, "MFD_CLOEXEC", 0))
            os.ftruncate(fd, size)
            return cls(fd, size)
        from multiprocessing import shared_memory  # platforms without memfd

        block = shared_memory.SharedMemory(create=True, size=size)
        fd = os.dup(block._fd)  # noqa: SLF001 - the block's descriptor is what SCM_RIGHTS passes
        return cls(fd, size, keep=block)

    @classmethod
    def adopt(cls, fd: int, size: int) -> "SharedSegment":
        """Map a segment whose descriptor arrived through ``SCM_RIGHTS`` and close that
        descriptor (the mapping keeps the memory); refuses a segment shorter than announced."""
        try:
            actual = os.fstat(fd).st_size
            if actual < size:
                raise ValueError(f"shared segment holds {actual} B, the peer announced {size} B")
            seg = cls(fd, size)
        finally:
            os.close(fd)
        seg.fd = -1
        return seg

    def release_fd(self) -> None:
        """Drop the descriptor (and a fallback block's name) once the peer has mapped the
        segment; both mappings stay valid until their views go."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self._keep is not None:
            self._keep.close()
            try:
                self._keep.unlink()
            except FileNotFoundError:
                pass
            self._keep = None

    def close(self) -> None:
        """Release the descriptor and unmap (the mapping stays while a view is exported)."""
        self.release_fd()
        if self._map.closed:
            return
        self.buf.release()
        try:
            self._map.close()
        except BufferError:  # a view still exported: the mapping goes with its last view
            pass
