"""The parked-flag doorbell (seed 001 §11.3, ``CondVarDoorbell``).

A waiter checks its predicate, spins briefly, then raises ``parked`` (declaring the
predicate it waits on) and blocks; the signaller publishes first and notifies only a
parked waiter whose declared predicate now holds, and only once per park (issue 20: a
parked waiter was notified by every publish until it ran, and a client waiting for record
N by every release before N). The parked count
is also written to a caller's flag slot (a ring's control area) when one is given, so a
peer can see it; the wakeup itself is this process's condition variable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..errors import TransportShutdown

__all__ = ["DEFAULT_SPIN_S", "Doorbell"]

#: Spin before parking (``MOBILEGL_IPC_SPIN_US`` default 50 us, §11.3).
DEFAULT_SPIN_S = 50e-6


class Doorbell:
    """Condition-variable doorbell with the parked-flag protocol (``CondVarDoorbell``).

    The waiter checks its predicate, spins briefly (yielding the GIL), then raises
    ``parked`` with its predicate declared, re-checks, and blocks. The signaller publishes
    its state first and notifies only while ``parked`` is raised, so an unparked waiter
    costs no wakeup; it evaluates the parked waiters' declared predicates under the lock
    and notifies only when one holds, at most once per park (``_knocked``, cleared each
    time a waiter blocks again). No wakeup is lost: a waiter re-checks under the lock
    before it blocks, and a signaller holding the lock with ``parked`` raised sees every
    waiter inside ``wait`` with its predicate declared.
    :meth:`kill` is the death state: every waiter wakes and raises
    :class:`TransportShutdown` (unless its predicate already holds).
    """

    def __init__(self, spin_s: float = DEFAULT_SPIN_S, *, flags: memoryview | None = None,
                 slot: int = 0) -> None:  # fmt: skip
        self._cond = threading.Condition(threading.Lock())
        self._parked = 0
        self._waiting: list[Callable[[], bool]] = []  # the parked waiters' predicates
        self._knocked = False  # notified since a waiter last blocked
        # where the parked count is published for a peer (a ring's control area), if any
        self._flags, self._slot = flags, slot
        self.dead = False
        self.spin_s = spin_s
        self.notifies = 0  # times ring() found a parked waiter and notified
        self.parks = 0  # times a waiter actually blocked

    @property
    def parked(self) -> bool:
        return self._parked > 0

    def ring(self) -> None:
        if self._parked and not self._knocked:
            with self._cond:
                if self._parked and not self._knocked and self._due():
                    self._knocked = True
                    self.notifies += 1
                    self._cond.notify_all()

    def _due(self) -> bool:
        """Whether a parked waiter's declared predicate holds (called under the lock)."""
        for ready in self._waiting:
            if ready():
                return True
        return False

    def kill(self) -> None:
        with self._cond:
            self.dead = True
            self._cond.notify_all()

    def wait(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``ready()``; False when ``timeout`` seconds pass first."""
        if ready():
            return True
        now = time.monotonic()
        deadline = now + max(timeout, 0.0)
        spin_end = min(now + self.spin_s, deadline)
        while not self.dead and time.monotonic() < spin_end:
            time.sleep(0)
            if ready():
                return True
        with self._cond:
            self._parked += 1
            self._waiting.append(ready)
            if self._flags is not None:
                self._flags[self._slot] = self._parked
            try:
                while True:
                    # re-armed BEFORE the re-check: a signaller that published after it
                    # sees ``_knocked`` down and comes in (no wakeup is lost)
                    self._knocked = False
                    if ready():
                        return True
                    if self.dead:
                        raise TransportShutdown("Doorbell.Dead")
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    self.parks += 1
                    self._cond.wait(min(remaining, threading.TIMEOUT_MAX))
            finally:
                self._parked -= 1
                self._waiting.remove(ready)
                if self._flags is not None:
                    self._flags[self._slot] = self._parked
