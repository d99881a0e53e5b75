"""The ``mgpipe`` command line.

Subcommands are contributed by command modules. Each module named in
:data:`COMMAND_MODULES` exposes::

    def register(subparsers: argparse._SubParsersAction) -> None:
        p = subparsers.add_parser("gen", help="...")
        p.add_argument(...)
        p.set_defaults(func=run)          # run(args: argparse.Namespace) -> int

To add a command, write such a module and append its dotted name to
:data:`COMMAND_MODULES`; nothing else in this file changes.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

import mgpipe
from mgpipe.gen.errors import GenError, GenErrors, exit_code_for

#: Every command module, in the order its subcommand appears in ``--help``.
COMMAND_MODULES: tuple[str, ...] = (
    "mgpipe.cmd_bench",
    "mgpipe.cmd_gen",
    "mgpipe.cmd_inspect",
    "mgpipe.cmd_run",
    "mgpipe.cmd_compare",
    "mgpipe.cmd_selftest",
    "mgpipe.cmd_serve",
    "mgpipe.cmd_version",
)


def build_parser(modules: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser with every command module's subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="mgpipe", description="MGPipe toolchain: catalogue generator and reference runtime."
    )
    parser.add_argument("--version", action="version", version=f"mgpipe {mgpipe.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES if modules is None else modules:
        module = importlib.import_module(name)
        register = getattr(module, "register", None)
        if not callable(register):
            raise TypeError(f"command module {name} has no register(subparsers) function")
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input (GenError/GenErrors) prints ``path:line:col: GATE: text``
    lines to stderr and returns 2, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.error(f"command {args.command!r} did not set a handler")
    try:
        rc = func(args)
    except (GenError, GenErrors) as exc:
        return exit_code_for(exc, all_errors=bool(getattr(args, "all_errors", False)))
    except BrokenPipeError:
        return 0
    except OSError as exc:  # an unreadable input or unwritable output: name the path
        where = exc.filename if exc.filename is not None else "<command line>"
        return exit_code_for(GenError(str(where), 1, 1, "IO-ERROR",
                                      f"{exc.strerror or exc}, expected a readable input / writable output"))
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
