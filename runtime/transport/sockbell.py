"""The socket doorbell (seed 001 §11.3 ``SocketDoorbell``): one byte, knocked only when parked.

Each side owns one end of a dedicated ``AF_UNIX`` stream pair; a knock is one byte sent
to the other end. A waiter

1. checks its predicate, spins briefly (``spin_s``),
2. stores its parked flag in the control page, :func:`~.control_page.fence`, re-checks,
3. blocks in ``poll`` on its doorbell end AND the control socket -- with no timeout.

A signaller stores its cursor, :func:`~.control_page.fence`, and knocks only if the
other side's parked flag is set. Either the waiter's re-check sees the new cursor or the
signaller sees the flag: no wakeup is lost. A stale knock only causes one extra re-check.

There is no timeout anywhere: a stopped peer (``SIGSTOP``, Android's freezer) keeps its
sockets open, so the waiter keeps waiting and resumes when it continues; a dead peer's
sockets close, ``poll`` reports hangup / EOF, and the waiter hands control to
``on_control`` (which reads the control socket and raises the latch). Slow and dead
are told apart by the kernel, not by a threshold.
"""

from __future__ import annotations

import errno
import select
import socket
import time
from collections.abc import Callable

from .control_page import ControlPage, fence

__all__ = ["SocketBell", "DEFAULT_SPIN_S"]

DEFAULT_SPIN_S = 50e-6
_IN = select.POLLIN | select.POLLHUP | select.POLLERR | select.POLLNVAL


class SocketBell:
    """One direction's waiting and the other direction's knocking, for one side.

    ``my_parked`` is the control-page word this side raises while it blocks;
    ``peer_parked`` the word that says the other side is blocked (knock only then).
    ``on_control()`` runs when the control socket is readable or hung up during a wait;
    it raises to end the wait (death, a Fatal from the peer) or returns to keep waiting.
    """

    def __init__(
        self,
        page: ControlPage,
        bell: socket.socket,
        ctrl: socket.socket,
        my_parked: int,
        peer_parked: int,
        on_control: Callable[[], None],
        spin_s: float = DEFAULT_SPIN_S,
    ) -> None:
        self.page = page
        self.bell = bell
        self.ctrl = ctrl
        self.my_parked = my_parked
        self.peer_parked = peer_parked
        self.on_control = on_control
        self.spin_s = spin_s
        self.dead = False
        self.knocks = 0  # bytes sent: the peer was parked
        self.parks = 0  # times this side blocked in poll
        self._poll = select.poll()
        self._poll.register(bell.fileno(), _IN)
        self._poll.register(ctrl.fileno(), _IN)
        self._bell_fd = bell.fileno()
        self._page_load = page.load
        self._knock = b"\x01"

    @property
    def parked(self) -> bool:
        return bool(self._page_load(self.my_parked))

    # -- signaller ------------------------------------------------------------
    def ring(self) -> None:
        """Knock iff the peer is parked (call after storing the cursor it waits on)."""
        fence()
        if self._page_load(self.peer_parked) and not self.dead:
            try:
                self.bell.send(self._knock, socket.MSG_DONTWAIT)
                self.knocks += 1
            except BlockingIOError:
                pass  # the peer's buffer is full of knocks: it will wake anyway
            except OSError:
                self.dead = True  # a closed peer; the next wait reports it

    def kill(self) -> None:
        self.dead = True

    # -- waiter ---------------------------------------------------------------
    def _drain(self) -> bool:
        """Swallow queued knocks; False when the peer's end is closed."""
        while True:
            try:
                data = self.bell.recv(4096, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            if len(data) < 4096:
                return True

    def wait(self, ready: Callable[[], bool], timeout: float | None = None) -> bool:
        """Block until ``ready()``. ``timeout`` is ignored (no threshold tells death)."""
        if ready():
            return True
        spin_end = time.monotonic() + self.spin_s
        while time.monotonic() < spin_end:
            time.sleep(0)
            if ready():
                return True
        page = self.page
        while True:
            page.store(self.my_parked, 1)
            fence()
            if ready():
                page.store(self.my_parked, 0)
                return True
            self.parks += 1
            try:
                events = self._poll.poll()
            except InterruptedError:  # pragma: no cover - PEP 475 retries poll itself
                events = []
            finally:
                page.store(self.my_parked, 0)
            for fd, _ev in events:
                if fd == self._bell_fd:
                    if not self._drain():
                        self.dead = True
                        self.on_control()  # the peer is gone: the control socket says how
                else:
                    self.on_control()
            if ready():
                return True
            if self.dead:
                self.on_control()
                raise OSError(errno.EPIPE, "doorbell peer closed")
