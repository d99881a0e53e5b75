"""Starting the server process (seed 001 §15.1): one child, a known descriptor, an explicit environment.

The child gets the control socket as descriptor :data:`CONTROL_FD` (``posix_spawn`` with
a ``dup2`` file action; nothing else is inherited: Python opens every descriptor
close-on-exec, and a descriptor the client's process made inheritable itself is closed
in the child by a ``close`` file action, :func:`inherited_fds`). Its environment is built here, explicitly: every transport setting
(``MGPIPE_TRANSPORT``, ``MGPIPE_IPC_*``) is dropped so the child can never spawn again,
and the server entry hard-sets the in-process path itself too (both, as the seed asks).
The child runs in a process group of its own: a terminal's Ctrl-C interrupts the client
only, and the server ends quietly when the client's sockets close.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping

__all__ = ["CONTROL_FD", "SERVER_MODULE", "TRANSPORT_ENV", "child_env", "inherited_fds", "Child"]

#: The descriptor number the child finds its control socket on.
CONTROL_FD = 3
#: The server entry the child runs (``python -m`` of it); ``mgpipe serve`` runs the same.
SERVER_MODULE = "mgpipe.runtime.transport.serve"
#: The transport selection setting (``mgpipe run`` reads it when ``--transport`` is absent).
TRANSPORT_ENV = "MGPIPE_TRANSPORT"
_IPC_PREFIX = "MGPIPE_IPC_"


def child_env(base: Mapping[str, str] | None = None,
              extra: Mapping[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """The child's environment: ``base`` (default ``os.environ``) without any transport
    setting, plus ``extra``; the transport keys are dropped from ``extra`` too."""
    env = {k: v for k, v in (os.environ if base is None else base).items()}
    env.update(extra or {})
    for key in list(env):
        if key == TRANSPORT_ENV or key.startswith(_IPC_PREFIX):
            del env[key]
    return env


def inherited_fds(keep: int) -> list[int]:
    """This process's inheritable descriptors above stderr, except ``keep``: what a child
    would inherit unless its spawn closes them."""
    out = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return out
    for name in names:
        fd = int(name)
        if fd <= 2 or fd == keep:
            continue
        try:
            if os.get_inheritable(fd):
                out.append(fd)
        except OSError:  # the listing's own descriptor, gone already
            continue
    return sorted(out)


class Child:
    """The spawned server: its pid (local to this process, never sent anywhere) and reaping."""

    def __init__(self, control_fd: int, env: Mapping[str, str],
                 argv: list[str] | None = None) -> None:  # fmt: skip
        """``argv`` replaces ``python -m`` :data:`SERVER_MODULE` (a test's own peer)."""
        # -P: the child's sys.path does not start with the current directory, so a source
        # checkout's mgpipe/ directory never shadows the installed package.
        argv = argv or [sys.executable, "-P", "-m", SERVER_MODULE]
        # setpgroup=0: the child leads a process group of its own, so the Ctrl-C a terminal
        # sends to the client's group never reaches it; it leaves when its client goes.
        self.pid = os.posix_spawn(
            argv[0], argv, dict(env),
            file_actions=[*((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited_fds(control_fd)),
                          (os.POSIX_SPAWN_DUP2, control_fd, CONTROL_FD)], setpgroup=0,
        )  # fmt: skip
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        """Reap the child (call once its sockets are closed: it exits on EOF at once)."""
        if self.returncode is None:
            _pid, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
