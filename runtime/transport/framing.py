"""Control-plane framing (seed 001 §11.4): ``[u32 'MGLF'][u32 len][payload]``.

Every control message crosses the control socket as one frame. The reader checks every
header as it reads it: a bad magic or a length over :data:`MAX_FRAME` (64 MiB) latches
the reader into failure with :class:`ProtocolMismatch` (``Fatal{ProtocolMismatch,
"Frame.Magic"}`` / ``"Frame.Length"``); every later read raises the same error. A receive
buffer that is too small is told the size it needs and the frame stays queued
(:meth:`FrameReader.receive_into`), so nothing is lost.

Descriptors never ride in a payload: they cross beside a frame through ``SCM_RIGHTS``
(:meth:`FrameReader.recv_fds`), where the kernel renumbers them.
"""

from __future__ import annotations

import array
import os
import select
import socket
import struct

from ..errors import PipeFatal

__all__ = [
    "MAGIC",
    "MAX_FRAME",
    "HEADER",
    "ProtocolMismatch",
    "PeerClosed",
    "encode_frame",
    "FrameReader",
    "send_frame",
]

#: ``'MGLF'`` read as a little-endian u32 (the bytes on the wire are ``b"MGLF"``).
MAGIC: int = int.from_bytes(b"MGLF", "little")
#: The largest payload a frame may carry (seed 001 §11.4: 64 MiB).
MAX_FRAME = 64 << 20
HEADER = struct.Struct("<II")
_RECV_CHUNK = 1 << 16
#: descriptors one read takes (``SCM_RIGHTS``); the kernel closes any past the buffer.
_MAX_FDS = 16
_FD_SIZE = array.array("i").itemsize


class ProtocolMismatch(PipeFatal):
    """A control frame no peer of this protocol could have sent (``MOBILEGL_ERR_PROTOCOL_MISMATCH``)."""

    def __init__(self, reason: str) -> None:
        super().__init__("ProtocolMismatch", reason)


class PeerClosed(ConnectionError):
    """The peer closed its end (EOF / hangup): it exited or was killed."""


def encode_frame(payload: bytes) -> bytes:
    """One frame around ``payload``; ValueError over :data:`MAX_FRAME`."""
    if len(payload) > MAX_FRAME:
        raise ValueError(f"control payload of {len(payload)} B exceeds the {MAX_FRAME} B cap")
    return HEADER.pack(MAGIC, len(payload)) + payload


def send_frame(sock: socket.socket, payload: bytes, fds: list[int] | None = None) -> None:
    """Send one frame; ``fds`` travel with its first byte through ``SCM_RIGHTS``."""
    data = encode_frame(payload)
    if fds:
        sent = socket.send_fds(sock, [data], list(fds))
        data = data[sent:]
    if data:
        sock.sendall(data)


class FrameReader:
    """Reassembles frames from a stream socket and checks each header on read."""

    def __init__(self, sock: socket.socket, accept_fds: bool = True) -> None:
        """``accept_fds`` False: every descriptor that arrives is closed on arrival (this
        side asked for none); set it False once the descriptors asked for are taken."""
        self.sock = sock
        self._buf = bytearray()
        self._fds: list[int] = []
        self.accept_fds = accept_fds
        self.failed: ProtocolMismatch | None = None
        self.eof = False

    # -- header check --------------------------------------------------------
    def _check(self) -> int | None:
        """Length of the first queued frame's payload; None until its header is here."""
        if self.failed is not None:
            raise self.failed
        if len(self._buf) < HEADER.size:
            return None
        magic, length = HEADER.unpack_from(self._buf)
        if magic != MAGIC:
            self.failed = ProtocolMismatch("Frame.Magic")
        elif length > MAX_FRAME:
            self.failed = ProtocolMismatch("Frame.Length")
        if self.failed is not None:
            raise self.failed
        return length

    def _complete(self) -> int | None:
        length = self._check()
        if length is None or len(self._buf) < HEADER.size + length:
            return None
        return length

    # -- socket --------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        """Queue bytes that arrived (for readers that own the socket read)."""
        self._buf += data
        self._check()

    def fill(self, blocking: bool = True) -> bool:
        """Read what the socket has (one read); False when nothing was there (non-blocking).

        ``recvmsg`` is called directly with ``MSG_DONTWAIT``: ``socket.recv_fds`` of
        CPython 3.11 drops its ``flags`` argument, so a "non-blocking" read through it
        blocks until the peer writes again."""
        if self.eof:
            raise PeerClosed("control socket closed")
        flags = 0 if blocking else socket.MSG_DONTWAIT
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(
                _RECV_CHUNK, socket.CMSG_SPACE(_MAX_FDS * _FD_SIZE), flags
            )
        except (BlockingIOError, InterruptedError):
            return False
        except (ConnectionResetError, BrokenPipeError) as exc:
            self.eof = True
            raise PeerClosed("control socket reset") from exc
        fds = _fds_of(anc)
        if fds and not self.accept_fds:
            for fd in fds:
                os.close(fd)
            fds = []
        if not data and not fds:
            self.eof = True
            raise PeerClosed("control socket closed")
        self._fds.extend(fds)
        self.feed(data)
        return True

    # -- frames --------------------------------------------------------------
    @property
    def buffered(self) -> bool:
        """Bytes are queued here already (a socket poll will not report them again)."""
        return bool(self._buf)

    def readable_within(self, timeout: float) -> bool:
        """Whether the socket turns readable (data, EOF or an error) within ``timeout`` s."""
        if self.buffered or self.eof:
            return True
        poll = select.poll()
        poll.register(self.sock.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        return bool(poll.poll(max(0.0, timeout) * 1000.0))

    def peek_frame_size(self) -> int | None:
        """Payload size of the next complete frame, or None when none is complete."""
        return self._complete()

    def receive_into(self, buf: bytearray | memoryview) -> tuple[bool, int] | None:
        """Copy the next complete frame's payload into ``buf``.

        ``(True, size)`` when it fit (the frame is consumed); ``(False, size)`` when ``buf``
        is too small: ``size`` is what it needs and the frame stays queued. None when no
        frame is complete yet.
        """
        length = self._complete()
        if length is None:
            return None
        view = memoryview(buf).cast("B")
        if len(view) < length:
            return False, length
        view[:length] = self._buf[HEADER.size : HEADER.size + length]
        del self._buf[: HEADER.size + length]
        return True, length

    def next_frame(self) -> bytes | None:
        """The next complete payload (consumed), or None when none is complete."""
        length = self._complete()
        if length is None:
            return None
        out = bytes(self._buf[HEADER.size : HEADER.size + length])
        del self._buf[: HEADER.size + length]
        return out

    def read_frame(self) -> bytes:
        """Block until a whole frame is here; PeerClosed on EOF first."""
        while True:
            frame = self.next_frame()
            if frame is not None:
                return frame
            self.fill()

    def recv_fds(self) -> list[int]:
        """Descriptors that arrived so far (``SCM_RIGHTS``), handed over once."""
        fds, self._fds = self._fds, []
        return fds

    def close_fds(self) -> None:
        """Close every descriptor that arrived and was not taken."""
        for fd in self.recv_fds():
            os.close(fd)


def _fds_of(ancdata: list[tuple[int, int, bytes]]) -> list[int]:
    """The descriptors in ``SCM_RIGHTS`` ancillary data (a truncated trailing one dropped)."""
    fds = array.array("i")
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % _FD_SIZE])
    return list(fds)
