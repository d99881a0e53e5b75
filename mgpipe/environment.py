"""Every environment setting mgpipe reads, checked before a command starts.

:data:`KNOBS` is the table: name -> the check of a value that is set (an unset or empty
setting means the default and is never refused). A check returns None for a good value,
else the refusal's text after the value (``is not ..., expected ...``); :func:`check_environment`
raises the first refusal as one line ``<environment>:1:1: BAD-ENVIRONMENT: ...``.

A check imports the generated tables only when ``MGPIPE_TABLES_MODULE`` names other
ones (``mgpipe gen`` must run while the bundled ones are stale or missing) and a driver
binding only when its own setting is set.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import shlex
from collections.abc import Callable, Mapping

from mgpipe.gen.errors import GenError
from mgpipe.refusal import refusal

__all__ = ["KNOBS", "WHERE", "check_environment", "bad_setting"]

#: Where an environment refusal is placed (like ``<command line>`` for an argument).
WHERE = "<environment>"

_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _closest(value: str, names: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(value, names, n=3, cutoff=0.5)
    return ("the closest: " + ", ".join(close)) if close else "one of " + ", ".join(names)


def _transport(value: str) -> str | None:
    from mgpipe.runtime.transport.registry import TRANSPORTS

    if value in TRANSPORTS:
        return None
    return f"is not a transport, expected {_closest(value, TRANSPORTS)}"


def _tables_module(value: str) -> str | None:
    if not _MODULE_NAME.match(value):
        return "is not a dotted module name, expected e.g. mgpipe.generated.pipe_tables"
    try:
        spec = importlib.util.find_spec(value)
    except (ImportError, ValueError):  # a parent package that is not there
        spec = None
    if spec is None:
        return ("names no module that can be imported, expected an importable Python module "
                "written by `mgpipe gen` (or unset it for the bundled tables)")  # fmt: skip
    try:
        module = importlib.import_module(value)
    except Exception as exc:  # noqa: BLE001 - whatever its import raised, in one line
        return (f"fails to import ({type(exc).__name__}: {exc}), expected a module "
                "written by `mgpipe gen`")  # fmt: skip
    missing = [name for name in _table_names() if not hasattr(module, name)]
    if missing:
        return (
            f"lacks {', '.join(missing[:6])}{', ...' if len(missing) > 6 else ''}, "
            "expected a module written by `mgpipe gen` (every table the bundled one has)"
        )
    return None


def _table_names() -> list[str]:
    """The tables the bundled module defines (none to hold against when it is absent)."""
    from mgpipe.runtime.schema.tables import DEFAULT_MODULE

    try:
        bundled = importlib.import_module(DEFAULT_MODULE)
    except Exception:  # noqa: BLE001 - not generated yet: nothing to compare with
        return []
    return sorted(n for n in vars(bundled) if n.isupper() and not n.startswith("_"))


def _clang_args(value: str) -> str | None:
    try:
        shlex.split(value)
    except ValueError as exc:
        return f"cannot be split like a shell line ({exc}), expected balanced quotes"
    return None


def _vk_validation(value: str) -> str | None:
    try:
        from mgpipe.runtime.backends.vulkan.device import validation_mode
    except Exception:  # noqa: BLE001 - no Vulkan binding here: the backend refuses itself
        return None
    try:
        validation_mode(value)
    except RuntimeError:
        return "is not a validation mode, expected on, off or auto"
    return None


def _egl_platform(value: str) -> str | None:
    try:
        from mgpipe.runtime.backends.gles.egl import PLATFORMS
    except Exception:  # noqa: BLE001 - no EGL binding here: the backend refuses itself
        return None
    if value in PLATFORMS:
        return None
    return f"is not an EGL display kind, expected {_closest(value, PLATFORMS)}"


def _cache_dir(value: str) -> str | None:
    if os.path.exists(value) and not os.path.isdir(value):
        return "is a file, expected a directory (or a path that does not exist yet)"
    return None


#: setting -> check of its value (see the module docstring). ``MGPIPE_VK_DEVICE`` is
#: matched against the devices there are, which the Vulkan backend lists when it refuses.
KNOBS: dict[str, Callable[[str], str | None]] = {
    "MGPIPE_TRANSPORT": _transport,
    "MGPIPE_TABLES_MODULE": _tables_module,
    "MGPIPE_CLANG_ARGS": _clang_args,
    "MGPIPE_CACHE_DIR": _cache_dir,
    "MGPIPE_VK_VALIDATION": _vk_validation,
    "MGPIPE_EGL_PLATFORM": _egl_platform,
}


def bad_setting(name: str, value: str, text: str) -> GenError:
    """``<environment>:1:1: BAD-ENVIRONMENT: NAME=value <text>`` (the value spelt as a
    shell would take it back: quoted only when it has to be)."""
    return refusal("BAD-ENVIRONMENT", f"{name}={shlex.quote(value)} {text}", WHERE)


#: the settings only the runtime reads: the generator's commands (which must run while the
#: generated tables are stale, missing or named wrongly) never look at them
RUNTIME_KNOBS: frozenset[str] = frozenset(
    {"MGPIPE_TRANSPORT", "MGPIPE_TABLES_MODULE", "MGPIPE_VK_VALIDATION", "MGPIPE_EGL_PLATFORM"}
)
#: the commands that run the generator only
GENERATOR_COMMANDS: frozenset[str] = frozenset(
    {"gen", "calls", "layout", "chunks", "self-test", "version"}
)


def knobs_of(command: str | None) -> list[str]:
    """The settings ``command`` reads (every one when the command is not known)."""
    if command in GENERATOR_COMMANDS:
        return [name for name in KNOBS if name not in RUNTIME_KNOBS]
    return list(KNOBS)


def check_environment(env: Mapping[str, str] | None = None, command: str | None = None) -> None:
    """Raise the refusal of the first bad setting in ``env`` (default ``os.environ``) that
    ``command`` reads (every setting when no command is named)."""
    env = os.environ if env is None else env
    for name in knobs_of(command):
        check = KNOBS[name]
        value = env.get(name, "")
        if value:
            text = check(value)
            if text is not None:
                raise bad_setting(name, value, text)
