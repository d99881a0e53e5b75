"""What the server holds between records: objects, bindings and the pushed state.

:class:`ServerContext` is the ``server_ctx`` every backend entry receives. It exposes:

- ``render_state`` (:class:`~.render_state_working.WorkingRenderState`): the working
  ``RenderStateParameters`` bytes (``.data``), a numpy view (``.view()``) and its
  ``Uint16`` ``.version``; plus the last bind's ``render_state_cso``,
  ``render_state_version``, ``pipeline_version`` and the last ``dynamic_version``;
- ``tables``: one :class:`~.handles.HandleTable` per server table (resources share one);
- the current bindings: ``draw_framebuffer``, ``read_framebuffer``, ``vertex_elements``,
  ``shader_state``, ``draw_program``, ``dispatch_program``, ``xfb`` (handles);
- ``windows``: binding-point windows as numpy arrays of the tail element dtype sized by
  the tail's bound (``"SetVertexBuffers"``, ``"SetSamplerViews"``, ``"BindSamplerStates"``,
  ``"SetShaderImages"``, ``"SetShaderBuffers[<Class>]"``, ``"SetVertexAttribDefaults"``);
- ``last``: a copy of the last payload of every ``kCtxState`` call (index buffer,
  indirect buffers, pixel pack, patch, context values, ...), and ``last_tails`` the
  tails of the last ``SetStreamOutputTargets`` / ``SetShaderBuffers`` host spans;
- ``resolved``: this record's objects by field path (``"Cso"``, ``"Color[2].Res"``,
  ``"MGPBoundView[3].View"``); for a delete, the object just retired;
- ``stage``: the blob segment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xxhash

from ..schema import layouts
from ..schema import tables as _t
from ..wire.handle import NULL, Handle, default_framebuffer
from ..wire.spec import call_spec
from ..wire.stage import StageSegment
from .handle_table import HandleTable
from .working_state import WorkingRenderState

__all__ = ["ServerObject", "ServerContext", "handle_of", "WINDOW_CALLS"]

#: Calls whose first tail is a binding-point window kept by the server.
WINDOW_CALLS = ("SetVertexBuffers", "SetSamplerViews", "BindSamplerStates", "SetShaderImages")


def handle_of(rec: Any) -> Handle:
    """The :class:`Handle` of an ``MGPipeHandle`` record."""
    return Handle(int(rec["Slot"]), int(rec["Gen"]))


@dataclass
class ServerObject:
    """One live object of a server table."""

    kind: str
    handle: Handle
    payload: np.void | None = None  # a copy of the creating/latest describing payload
    blob: bytes | None = None  # a copy of the creating record's blob, if any
    data: dict[str, Any] = field(default_factory=dict)  # applier-derived (e.g. "pipeline")
    backend: Any = None  # the backend's own object, if it keeps one


def _copy(rec: np.void) -> np.void:
    out = np.zeros(1, rec.dtype)
    out[0] = rec
    return out[0]


class ServerContext:
    """The applier's per-context state (see the module docstring)."""

    def __init__(self, stage: StageSegment, tables: dict[str, HandleTable]) -> None:
        self.stage = stage
        self.tables = tables
        self.render_state = WorkingRenderState()
        self.default_framebuffer = ServerObject("Framebuffer", default_framebuffer())
        self.resolved: dict[str, ServerObject | None] = {}
        self.last: dict[str, np.void] = {}
        self.last_tails: dict[str, tuple[np.ndarray, ...]] = {}
        # JSON views for recorders, rebuilt only when the state they show changes.
        self._json_cache: dict[str, Any] = {}
        self.windows: dict[str, np.ndarray] = {}
        self.context_serial = 0
        self.frame_serial = 0
        self.call = ""
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
        self.xfb = NULL
        self.windows.clear()
        for call in WINDOW_CALLS + ("SetVertexAttribDefaults",):
            t = call_spec(call).tails[0]
            self.windows[call] = np.zeros(t.bound or 0, t.dtype)
        t = call_spec("SetShaderBuffers").tails[0]
        for cls in range(_t.constant("kMGPipeShaderBufferClassCount")):
            self.windows[f"SetShaderBuffers[{cls}]"] = np.zeros(t.bound or 0, t.dtype)
        self.last.clear()
        self.last_tails.clear()
        self._json_cache = {}

    def put_window(self, key: str, start: int, rows: np.ndarray) -> None:
        self.windows[key][start : start + len(rows)] = rows
        self._json_cache.pop("window:" + key, None)

    def remember(self, call: str, payload: np.void, tails: tuple[np.ndarray, ...] = ()) -> None:
        self.last[call] = _copy(payload)
        self._json_cache.pop("last:" + call, None)
        if tails:
            self.last_tails[call] = tuple(np.array(t, copy=True) for t in tails)

    # -- snapshot for recorders ---------------------------------------------
    def pushed_state(self) -> dict[str, Any]:
        """The pushed state a verb sees, as plain Python (JSON-ready)."""

        def h(x: Handle) -> list[int]:
            return [x.slot, x.gen]

        def cached(key: str, make: Any) -> Any:
            if key not in self._json_cache:
                self._json_cache[key] = make()
            return self._json_cache[key]

        def window(key: str) -> dict[str, Any]:
            arr = self.windows[key]
            if not len(arr):
                return {}
            used = np.flatnonzero(arr.view(np.uint8).reshape(len(arr), -1).any(axis=1))
            return {str(i): layouts.to_dict(arr[i], json_safe=True) for i in used}

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
            "xfb": h(self.xfb),
            "windows": {k: cached("window:" + k, lambda k=k: window(k)) for k in sorted(self.windows)},
            "last": {k: cached("last:" + k, lambda v=v: layouts.to_dict(v, json_safe=True))
                     for k, v in sorted(self.last.items())},
        }
