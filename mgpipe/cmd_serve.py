"""``mgpipe serve``: the MGPipe server process (started by the ``spawn`` transport, never by hand).

It expects its control socket on descriptor 3 (``mgpipe.runtime.transport.process``) and
the handshake described in ``mgpipe.runtime.transport.serve``.
"""

from __future__ import annotations

import argparse
import os
import stat

from mgpipe.refusal import refusal


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="the server process of the spawn transport (control socket on fd 3)",
        description="Run by the spawn transport: applies records from the shared ring.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mgpipe.runtime.transport.process import CONTROL_FD

    try:
        is_socket = stat.S_ISSOCK(os.fstat(CONTROL_FD).st_mode)
    except OSError:
        is_socket = False
    if not is_socket:
        raise refusal("NO-CONTROL-SOCKET", f"no control socket on descriptor {CONTROL_FD}, "
                                           "expected the spawn transport to start this process")
    from mgpipe.runtime.transport.serve import main

    return main()
