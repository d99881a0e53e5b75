"""What the server holds between records: objects, bindings and the pushed state.

:class:`ServerContext` is the ``server_ctx`` every backend entry receives
(docs/BACKENDS.md, section 4). It exposes:

- ``render_state`` (:class:`~.working_state.WorkingRenderState`): the working
  ``RenderStateParameters`` bytes (``.data``), a numpy view (``.view()``) and its
  ``Uint16`` ``.version``; plus the last bind's ``render_state_cso``,
  ``render_state_version``, ``pipeline_version`` and the last ``dynamic_version``;
- ``tables``: one :class:`~.handle_table.HandleTable` per server table (resources share one);
- the current bindings: ``draw_framebuffer``, ``read_framebuffer``, ``vertex_elements``,
  ``shader_state``, ``draw_program``, ``dispatch_program`` (handles), and ``xfb``: the
  bound stream output as ``(GlName, LifetimeId)`` of the last ``BindStreamOutput`` (the XFB
  namespace has no wire handle; ``(0, 0)``: the default object, nothing bound);
- ``windows``: binding-point windows, a list of element records per point, as many
  points as the tail's bound (``"SetVertexBuffers"``, ``"SetSamplerViews"``,
  ``"BindSamplerStates"``, ``"SetShaderImages"``, ``"SetShaderBuffers[<Class>]"``,
  ``"SetVertexAttribDefaults"``); a point never written holds the zero element;
- ``last``: the last payload record of every ``kCtxState`` call (index buffer, indirect
  buffers, pixel pack, patch, context values, ...), and ``last_tails`` the tails of the
  last record of a ``kCtxState`` call that has tails;
- ``resolved``: this record's objects by field path (``"Cso"``, ``"Color[2].Res"``,
  ``"MGPBoundView[3].View"``); for a delete, the object just retired;
- ``call``, ``raw``: the call being applied and its record's bytes;
- ``stage``: the blob segment.

Every record value here is immutable (docs/BACKENDS.md): nothing needs copying.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import xxhash

from ..schema import tables as _t
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.records import SCALAR_CODES, pack_record, to_plain, zero
from ..wire.spec import TailSpec, call_spec
from ..wire.stage import StageSegment
from .handle_table import HandleTable
from .working_state import WorkingRenderState

__all__ = ["ServerObject", "ServerContext", "LastPayloads", "WINDOW_CALLS", "tail_zero",
           "element_bytes", "element_plain"]

#: Calls whose first tail is a binding-point window kept by the server.
WINDOW_CALLS = ("SetVertexBuffers", "SetSamplerViews", "BindSamplerStates", "SetShaderImages")


@lru_cache(maxsize=None)
def _scalar_code(call: str, element: str) -> str | None:
    for row in _t.tables().TAILS:
        if row["call"] == call and row["element"] == element and row.get("scalar"):
            return row["scalar"]
    return None


def tail_zero(t: TailSpec) -> Any:
    """The zero element of a tail (a record, or 0 / 0.0 for a scalar tail)."""
    scalar = _scalar_code(t.call, t.element)
    if scalar is None:
        return zero(t.element)
    return 0.0 if scalar in ("f32", "f64") else 0


def element_bytes(t: TailSpec, value: Any) -> bytes:
    """The wire bytes of one tail element."""
    scalar = _scalar_code(t.call, t.element)
    if scalar is None:
        return pack_record(t.element, value)
    return struct.pack("<" + SCALAR_CODES[scalar], value)


def element_plain(t: TailSpec, value: Any) -> Any:
    scalar = _scalar_code(t.call, t.element)
    if scalar is None:
        return to_plain(value, json_safe=True)
    if scalar in ("f32", "f64") and not math.isfinite(value):
        return "0x" + struct.pack("<" + SCALAR_CODES[scalar], value).hex()
    return value


_MISSING = object()


class LastPayloads(dict):
    """``ctx.last`` of a server whose handlers build no payload record for an entry that
    reads none (docs/BACKENDS.md §3): such a handler keeps the payload's unpacked members
    (a plain ``tuple``: a payload record is always a record type) and the record is built
    from them when first read (``builders[call](members)``), then kept. Every read gives
    the payload record, as a plain dict holding it would."""

    __slots__ = ("builders",)

    def __init__(self) -> None:
        super().__init__()
        self.builders: dict[str, Any] = {}

    def _record(self, call: str, value: Any) -> Any:
        if type(value) is tuple:
            value = self.builders[call](value)
            dict.__setitem__(self, call, value)
        return value

    def __getitem__(self, call: str) -> Any:
        return self._record(call, dict.__getitem__(self, call))

    def get(self, call: str, default: Any = None) -> Any:
        value = dict.get(self, call, _MISSING)
        return default if value is _MISSING else self._record(call, value)

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(k, self[k]) for k in list(dict.keys(self))]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[k] for k in list(dict.keys(self))]

    def copy(self) -> dict[str, Any]:
        return dict(self.items())

    def pop(self, call: str, *default: Any) -> Any:
        if dict.__contains__(self, call):
            value = self[call]
            dict.__delitem__(self, call)
            return value
        return dict.pop(self, call, *default)

    def setdefault(self, call: str, default: Any = None) -> Any:
        if dict.__contains__(self, call):
            return self[call]
        return dict.setdefault(self, call, default)

    def popitem(self) -> tuple[str, Any]:
        call = next(reversed(dict.keys(self)))
        return call, self.pop(call)

    def __iter__(self) -> Any:  # a Python-level iter: dict(last) and {**last} read through get
        return dict.__iter__(self)

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(dict(self.items()))


@dataclass
class ServerObject:
    """One live object of a server table."""

    kind: str
    handle: Handle
    payload: Any = None  # the creating / latest describing payload record
    blob: bytes | None = None  # a copy of the creating record's blob, if any
    data: dict[str, Any] = field(default_factory=dict)  # applier-derived (e.g. "pipeline")
    backend: Any = None  # the backend's own object, if it keeps one


class ServerContext:
    """The applier's per-context state (see the module docstring)."""

    def __init__(self, stage: StageSegment, tables: dict[str, HandleTable]) -> None:
        self.stage = stage
        self.tables = tables
        self.render_state = WorkingRenderState()
        self.default_framebuffer = ServerObject("Framebuffer", default_framebuffer())
        self.resolved: dict[str, ServerObject | None] = {}
        self.last: dict[str, Any] = {}
        self.last_tails: dict[str, tuple[tuple[Any, ...], ...]] = {}
        self.windows: dict[str, list[Any]] = {}
        self._window_tail: dict[str, TailSpec] = {}
        self.context_serial = 0
        self.frame_serial = 0
        self.call = ""
        self.raw = b""
        self.reset_bindings()

    # -- bindings and windows ------------------------------------------------
    def reset_bindings(self) -> None:
        """Bindings and windows back to "nothing bound" (``ApplierReset``)."""
        self.render_state_cso = NULL
        self.render_state_version = 0
        self.pipeline_version = 0
        self.dynamic_version = 0
        self.draw_framebuffer = default_framebuffer()
        self.read_framebuffer = default_framebuffer()
        self.vertex_elements = NULL
        self.shader_state = NULL
        self.draw_program = NULL
        self.dispatch_program = NULL
        self.xfb: tuple[int, int] = (0, 0)
        self.windows.clear()
        keys = [(c, c) for c in WINDOW_CALLS + ("SetVertexAttribDefaults",)]
        keys += [(f"SetShaderBuffers[{cls}]", "SetShaderBuffers")
                 for cls in range(_t.constant("kMGPipeShaderBufferClassCount"))]  # fmt: skip
        for key, call in keys:
            t = call_spec(call).tails[0]
            self.windows[key] = [tail_zero(t)] * (t.bound or 0)
            self._window_tail[key] = t
        self.last.clear()
        self.last_tails.clear()

    def put_window(self, key: str, start: int, rows: tuple[Any, ...]) -> None:
        self.windows[key][start : start + len(rows)] = rows

    def remember(self, call: str, payload: Any, tails: tuple = ()) -> None:
        self.last[call] = payload
        if tails:
            self.last_tails[call] = tails

    # -- snapshot for recorders ---------------------------------------------
    def pushed_state(self) -> dict[str, Any]:
        """The pushed state a verb sees, as plain Python (JSON-ready)."""

        def h(x: Handle) -> list[int]:
            return [x.slot, x.gen]

        def window(key: str) -> dict[str, Any]:
            t = self._window_tail[key]
            out = {}
            for i, e in enumerate(self.windows[key]):
                if any(element_bytes(t, e)):
                    out[str(i)] = element_plain(t, e)
            return out

        rs = self.render_state
        return {
            "render_state_xxh64": xxhash.xxh64_hexdigest(bytes(rs.data)),
            "render_state_block_version": rs.version,
            "render_state_cso": h(self.render_state_cso),
            "render_state_version": self.render_state_version,
            "pipeline_version": self.pipeline_version,
            "dynamic_version": self.dynamic_version,
            "draw_framebuffer": h(self.draw_framebuffer),
            "read_framebuffer": h(self.read_framebuffer),
            "vertex_elements": h(self.vertex_elements),
            "shader_state": h(self.shader_state),
            "draw_program": h(self.draw_program),
            "dispatch_program": h(self.dispatch_program),
            "xfb": list(self.xfb),
            "windows": {k: window(k) for k in sorted(self.windows)},
            "last": {k: to_plain(v, json_safe=True) for k, v in sorted(self.last.items())},
        }
