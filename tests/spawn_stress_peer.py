"""A server process for the doorbell stress test: the real session (handshake, shared ring,
socket doorbell), with a consumer that checks each record's sequence number and pauses at
random. Run by ``tests/test_spawn_doorbell.py`` as ``python <this file>``."""

from __future__ import annotations

import random
import socket
import struct
import time

from mgpipe.runtime.transport import handshake
from mgpipe.runtime.transport.process import CONTROL_FD
from mgpipe.runtime.transport.session import Session
from mgpipe.runtime.wire.header import header_size

_SEQ = struct.Struct("<Q")


def _plant_lost_wakeup(s: Session) -> None:
    """Negative control: a waiter that parks WITHOUT re-checking after raising its flag
    (the preemption between its check and its flag store is modelled by a yield)."""
    bell = s.bell

    def wait(ready, timeout=None) -> bool:
        while not ready():
            time.sleep(0)
            bell.page.store(bell.my_parked, 1)
            bell._poll.poll()
            bell.page.store(bell.my_parked, 0)
            if not bell._drain():
                s.exit(0)
        return True

    bell.wait = wait  # type: ignore[method-assign]


def _open_window(s: Session, seconds: float) -> None:
    """The race a re-check closes, held open on purpose: the first time the waiter raises
    its parked flag it stops ``seconds`` just before the store (it has seen an empty ring;
    a record published now finds the flag down and knocks nobody)."""
    page, flag = s.bell.page, s.bell.my_parked
    opened = [False]

    class Held:
        """The bell's control page, its first raise of the parked flag held back."""

        def store(self, off: int, value: int) -> None:
            if off == flag and value == 1 and not opened[0]:
                opened[0] = True
                time.sleep(seconds)
            page.store(off, value)

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(page, name)

    s.bell.page = Held()  # type: ignore[assignment]


def main() -> None:
    # this peer's own Hello.config keys, typed like the server's (handshake.CONFIG)
    handshake.CONFIG.update({"seed": int, "pause_every": int, "plant": str, "window_s": float})
    s = Session.accept(socket.socket(fileno=CONTROL_FD))
    rng = random.Random(int(s.config["seed"]))
    pause_every = int(s.config["pause_every"])
    hdr = header_size()
    state = {"next": 1, "bad": -1}

    def check(rec: bytes) -> None:
        (seq,) = _SEQ.unpack_from(rec, hdr)
        if seq != state["next"] and state["bad"] < 0:
            state["bad"] = state["next"]
        state["next"] += 1
        if rng.randrange(pause_every) == 0:
            time.sleep(rng.random() * 2e-4)

    if float(s.config.get("window_s", 0.0)) > 0:
        _open_window(s, float(s.config["window_s"]))
    if s.config.get("plant") == "no-recheck":
        _plant_lost_wakeup(s)
    s.welcome("stress-peer")
    s.consume(check)
    s.report({"count": state["next"] - 1, "bad": state["bad"]})
    s.exit(0)


if __name__ == "__main__":
    main()
