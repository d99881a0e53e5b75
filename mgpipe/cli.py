"""The ``mgpipe`` command line.

Subcommands are contributed by command modules. Each module named in
:data:`COMMAND_MODULES` exposes::

    def register(subparsers: argparse._SubParsersAction) -> None:
        p = subparsers.add_parser("gen", help="...")
        p.add_argument(...)
        p.set_defaults(func=run)          # run(args: argparse.Namespace) -> int

To add a command, write such a module and append its dotted name to
:data:`COMMAND_MODULES`; nothing else in this file changes.

Nothing the user types ends in a traceback: a command-line mistake (an unknown option or
command, a value of the wrong type, a misspelt choice, a missing argument) is one line
``<command line>:1:1: GATE: what was wrong, expected what`` naming the closest names, a
bad environment setting is refused before the command starts (:mod:`mgpipe.environment`),
and Ctrl-C ends any command with one line and exit code 130.
"""

from __future__ import annotations

import _thread
import argparse
import ast
import importlib
import os
import re
import signal
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import NoReturn

import mgpipe
from mgpipe.gen.errors import GenError, GenErrors, exit_code_for
from mgpipe.refusal import refusal, unknown

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

#: The exit code of a command ended by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def _choices(action: argparse.Action | None) -> list[str]:
    if action is None or action.choices is None:
        return []
    return [str(c) for c in action.choices]


def _spelt(action: argparse.Action) -> str:
    if action.option_strings:
        return "/".join(action.option_strings)
    return str(action.metavar or action.dest)


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one-line refusals (subparsers are made of
    this class too: ``add_subparsers`` takes the parent's class). Options are spelt out
    in full: a prefix (``--back`` for ``--backend``) is refused with the closest names."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def _action_named(self, name: str) -> argparse.Action | None:
        for action in self._actions:
            if name in action.option_strings or name in (action.metavar, action.dest):
                return action
        return None

    def options(self) -> list[str]:
        return sorted(o for a in self._actions for o in a.option_strings)

    def command(self) -> str:
        """``mgpipe`` or ``mgpipe run``: who the message is about."""
        return self.prog

    def error(self, message: str) -> NoReturn:  # argparse's one channel for every mistake
        raise _translate(self, message)


#: argparse's error messages (the same wording in Python 3.11 to 3.13) -> how each becomes
#: a refusal; one it does not know still becomes one line (BAD-ARGUMENT with its text).
_INVALID_CHOICE = re.compile(r"^argument (?P<arg>\S+): invalid choice: (?P<value>.+?)"
                             r" \(choose from .*\)$")  # fmt: skip
_INVALID_TYPE = re.compile(r"^argument (?P<arg>\S+): invalid (?P<type>\S+) value: (?P<value>.+)$")
_REQUIRED = re.compile(r"^the following arguments are required: (?P<args>.+)$")
_EXPECTED_VALUE = re.compile(r"^argument (?P<arg>\S+): expected (?P<what>.+)$")
_AMBIGUOUS = re.compile(r"^ambiguous option: (?P<opt>\S+) could match (?P<matches>.+)$")
_UNRECOGNIZED = re.compile(r"^unrecognized arguments: (?P<args>.+)$")
_TYPE_WORDS = {"int": "an integer", "float": "a number"}


def _literal(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return str(value)


def _translate(parser: Parser, message: str) -> GenError:
    who = parser.command()
    if m := _INVALID_CHOICE.match(message):
        action = parser._action_named(m["arg"])
        value = _literal(m["value"])
        if isinstance(action, argparse._SubParsersAction):
            return unknown("UNKNOWN-COMMAND", f"{who} command", value, _choices(action))
        return unknown("BAD-CHOICE", f"{who} {m['arg']} value", value, _choices(action))
    if m := _INVALID_TYPE.match(message):
        kind = _TYPE_WORDS.get(m["type"], f"a {m['type']} value")
        return refusal("BAD-ARGUMENT", f"{who} {m['arg']} {_literal(m['value'])!r} is not "
                                       f"{kind}, expected {kind}")  # fmt: skip
    if m := _REQUIRED.match(message):
        missing = [a.strip() for a in m["args"].split(",")]
        action = parser._action_named(missing[0])
        if isinstance(action, argparse._SubParsersAction):
            strays = [w for w in getattr(parser, "argv", ()) if w.startswith("-")]
            if strays:  # `mgpipe --versio`: the misspelt option is the mistake
                return _unrecognized(parser, strays)
            return refusal("MISSING-ARGUMENT", f"no command given to {who}, expected one of "
                                               f"{', '.join(_choices(action))}")  # fmt: skip
        wants = ", ".join(missing)
        return refusal("MISSING-ARGUMENT", f"{who} needs {wants}, expected "
                                           f"`{who} {' '.join(missing)}` (see `{who} --help`)")  # fmt: skip
    if m := _EXPECTED_VALUE.match(message):
        return refusal("MISSING-VALUE", f"{who} {m['arg']} has no value, expected {m['what']}")
    if m := _AMBIGUOUS.match(message):
        return refusal("AMBIGUOUS-OPTION", f"{who} {m['opt']} could be {m['matches']}, "
                                           "expected one of them spelt out")  # fmt: skip
    if m := _UNRECOGNIZED.match(message):
        return _unrecognized(parser, m["args"].split())
    return refusal("BAD-ARGUMENT", f"{who}: {message}, expected `{who} --help`'s usage")


def _unrecognized(parser: Parser, extras: Iterable[str]) -> GenError:
    """The first word nobody took: a misspelt option (the closest ones), else a stray word."""
    extras = list(extras)
    who = parser.command()
    for word in extras:
        if word.startswith("-"):
            return unknown("UNKNOWN-OPTION", f"{who} option", word.split("=", 1)[0],
                           parser.options())  # fmt: skip
    positional = [_spelt(a) for a in parser._actions if not a.option_strings]
    takes = " ".join(positional) if positional else "no further words"
    return refusal("UNEXPECTED-ARGUMENT", f"{who} got {extras[0]!r} too many, expected {takes}")


class _Version(argparse.Action):
    """``--version``: the installed package's version, read only when asked for (reading
    package metadata costs more than the rest of `mgpipe --help`)."""

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:  # type: ignore[no-untyped-def, override]
        sys.stdout.write(f"mgpipe {mgpipe.__version__}\n")
        parser.exit()


def build_parser(modules: Sequence[str] | None = None) -> Parser:
    """The argument parser with every command module's subcommand registered."""
    parser = Parser(
        prog="mgpipe", description="MGPipe toolchain: catalogue generator and reference runtime."
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show program's version number and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES if modules is None else modules:
        module = importlib.import_module(name)
        register = getattr(module, "register", None)
        if not callable(register):
            raise TypeError(f"command module {name} has no register(subparsers) function")
        register(subparsers)
    return parser


def _parse(parser: Parser, argv: Sequence[str] | None) -> argparse.Namespace:
    parser.argv = list(sys.argv[1:] if argv is None else argv)
    args, extras = parser.parse_known_args(argv)
    if extras:  # name the options of the subcommand they were given to
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        raise _unrecognized(sub.choices.get(args.command, parser), extras)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input (GenError/GenErrors) prints ``path:line:col: GATE: text``
    lines to stderr and returns 2, never a traceback; Ctrl-C returns 130."""
    args = None
    if argv is None:
        _keep_ctrl_c_out_of_callbacks()
    try:
        from mgpipe.environment import check_environment

        parser = build_parser()
        args = _parse(parser, argv)
        check_environment(command=getattr(args, "command", None))
        func = getattr(args, "func", None)
        if func is None:
            raise refusal("NO-HANDLER", f"command {args.command!r} did not set a handler, "
                                        "expected every command to name its function")  # fmt: skip
        rc = func(args)
    except KeyboardInterrupt:
        return _interrupted(args, as_program=argv is None)
    except (GenError, GenErrors) as exc:
        return exit_code_for(exc, all_errors=bool(getattr(args, "all_errors", False)))
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:  # a dependency this command needs is not installed
        return exit_code_for(refusal("MISSING-MODULE", f"no module named {exc.name!r} "
                                     f"({_command(args)}), expected mgpipe's dependencies "
                                     "installed: `pip install -e .` (or `pip install -e '.[test]'`)"))  # fmt: skip
    except RuntimeError as exc:  # a runtime module that cannot build its inlined hot path
        located = getattr(exc, "located", None)  # (runtime/client/inline.py: InlineError)
        if located is None:
            raise
        return exit_code_for(GenError(*located))
    except LookupError as exc:  # the generated tables module cannot be used
        if type(exc).__name__ != "TablesError":
            raise
        return exit_code_for(refusal("TABLES-MODULE", f"{exc}"))
    except OSError as exc:  # an unreadable input or unwritable output: name the path
        where = exc.filename if exc.filename is not None else "<command line>"
        return exit_code_for(GenError(str(where), 1, 1, "IO-ERROR",
                                      f"{exc.strerror or exc}, expected a readable input / writable output"))
    return int(rc or 0)


def _keep_ctrl_c_out_of_callbacks() -> None:
    """A Ctrl-C that lands inside a weakref callback or a ``__del__`` is "unraisable": Python
    prints ``Exception ignored in ...`` with its traceback and runs on, so the interrupt is
    lost. Deliver it again, once that callback has returned, to the code that was running."""
    default = sys.unraisablehook

    def hook(unraisable) -> None:  # type: ignore[no-untyped-def]
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            # from another thread, a moment later: raised here, it would be unraisable again
            threading.Timer(0.005, _thread.interrupt_main).start()
            return
        default(unraisable)

    sys.unraisablehook = hook


def _command(args: argparse.Namespace | None) -> str:
    return f"mgpipe {args.command}" if args is not None and args.command else "mgpipe"


def _interrupted(args: argparse.Namespace | None, as_program: bool) -> int:
    if as_program:  # the process ends now: a second Ctrl-C must not cut its shutdown short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdout.flush()
        if sys.stderr.isatty():  # end a progress line being redrawn in place
            sys.stderr.write("\n")
    except (OSError, ValueError):
        pass
    print(f"{_command(args)}: interrupted (Ctrl-C), stopped before its end", file=sys.stderr)
    if as_program:  # nothing is left to do: leave before a late signal can land in shutdown
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(EXIT_INTERRUPTED)
    return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
