"""Per-call state updates of the applier (seed 001 §10.1): validate, then push.

``PREPARE[call](ctx, decoded) -> dict`` runs after the record's handles resolved and
before any table changes; it may refuse (``ProtocolCorruption``) and returns the data a
created object keeps. ``PUSH[call](ctx, decoded, obj)`` then updates the context; it
never refuses (a refusal after a table change would leave half a record applied), except
``SetDynamicState``, whose record changes no table. ``obj`` is the object the record's
first handle field names (created, resolved or retired), or None.

``PUSH_SOURCE[call](indent, obj) -> lines`` is ``PUSH[call]`` as source the handler runs
inline (the steady-state pushes: ``BindRenderState``, ``SetDynamicState``; the lines read
the handler's ``_ctx``, ``p`` (the payload), ``d`` and the object expression ``obj``).
``PREPARE_SOURCE[call](indent) -> lines`` is a check the generated handler runs inline in
place of ``PREPARE[call]`` (same refusals, no frame): for a call whose prepare only checks
and whose record names no object (the draw budgets). The handler's namespace binds what
those lines read (``_BUD``, ``_budgets``, ``_check_draw``, the working block ``_rs`` and
its views: :func:`inline_namespace`). ``PUSH_MEMO[call]`` repeats a ``PUSH_SOURCE`` push
for a record whose object's row the handler remembers (:class:`PushMemo`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from .. import budgets as _budgets
from ..errors import ProtocolCorruption
from ..schema import tables as _t
from ..schema.kinds import resource_kinds
from ..wire.codec import Decoded
from .context import ServerContext, ServerObject
from .working_state import (build_pipeline_subset, pending_subset_test, scatter_dynamic_source,
                            scatter_namespace, scatter_pending_source, scatter_pipeline_source)

__all__ = ["PREPARE", "PREPARE_SOURCE", "PUSH", "PUSH_SOURCE", "PUSH_MEMO", "PushMemo",
           "resource_kind", "inline_namespace"]

Prepare = Callable[[ServerContext, Decoded], dict[str, Any]]
Push = Callable[[ServerContext, Decoded, ServerObject | None], None]


@lru_cache(maxsize=None)
def _resource_targets() -> dict[int, str]:
    """``MGPipeResourceTarget`` value -> the handle kind of the resource."""
    targets = _t.enum_members("MGPipeResourceTarget")
    buffer, texture, renderbuffer = resource_kinds()
    out = {}
    for name, value in targets.items():
        out[int(value)] = (
            buffer
            if name == "Buffer"
            else renderbuffer if name == "Renderbuffer" else texture
        )
    return out


def resource_kind(call: str, target: int) -> str:
    try:
        return _resource_targets()[target]
    except KeyError:
        raise ProtocolCorruption(f"{call}.Target") from None


def _prep_resource(ctx: ServerContext, d: Decoded) -> dict[str, Any]:
    kind = resource_kind(d.name, int(d.payload.Target))
    if d.name == "ResourceRespecify":  # the memory budgets, before anything is allocated
        _budgets.check_respecify(ctx, d, int(_t.enum("MGPipeResourceTarget")["Buffer"]))
    return {"kind": kind}


def _prep_destroy(ctx: ServerContext, d: Decoded) -> dict[str, Any]:
    _budgets.check_destroy(ctx, int(d.payload.Handle[0]))
    return {}


def _prep_draw(ctx: ServerContext, d: Decoded) -> dict[str, Any]:
    _budgets.check_draw(d)  # the per-record work budgets
    return {}


def _draw_source(ind: str) -> list[str]:
    return _budgets.check_draw_source("p", "tails", "d", ind)


def _prep_create_render_state(ctx: ServerContext, d: Decoded) -> dict[str, Any]:
    base = ctx.resolved.get("BaseCso")
    base_bytes = None if base is None else base.data["pipeline"]
    assert d.blob is not None
    subset = build_pipeline_subset(int(d.payload.ChunkMask), d.blob, base_bytes, d.name)
    return {"pipeline": subset}


def _prep_framebuffer(ctx: ServerContext, d: Decoded) -> dict[str, Any]:
    if int(d.payload.Target) > _t.enum("MGPipeFramebufferTarget")["Named"]:
        raise ProtocolCorruption("SetFramebufferState.Target")
    return {}


def _prep_applier_reset(ctx: ServerContext, d: Decoded) -> dict[str, Any]:
    if int(d.payload.ContextSerial) <= ctx.context_serial:
        raise ProtocolCorruption("ApplierReset.ContextSerial")
    return {}


PREPARE: dict[str, Prepare] = {
    "ResourceCreate": _prep_resource,
    "ResourceRespecify": _prep_resource,
    "CreateRenderState": _prep_create_render_state,
    "SetFramebufferState": _prep_framebuffer,
    "ApplierReset": _prep_applier_reset,
    "ResourceDestroy": _prep_destroy,
    "DrawVbo": _prep_draw,
}

#: calls whose ``PREPARE`` the handler runs inline (see the module docstring)
PREPARE_SOURCE: dict[str, Callable[[str], list[str]]] = {"DrawVbo": _draw_source}


def inline_namespace(ctx: ServerContext) -> dict[str, Any]:
    """The globals the ``PREPARE_SOURCE`` and ``PUSH_SOURCE`` lines read."""
    return _budgets.check_draw_namespace() | scatter_namespace(ctx.render_state)


def _bind_render_state(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    # the scatter is lazy: the block takes the subset when it is next read
    ctx.render_state.scatter_pipeline(obj.data["pipeline"])
    ctx.render_state_cso = obj.handle
    p = d.payload
    ctx.render_state_version = p.Version
    ctx.pipeline_version = p.PipelineVersion


def _set_dynamic_state(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    # the payload's members are the decoder's ints (no int() round trip)
    p = d.payload
    ctx.render_state.scatter_dynamic(p.ChunkMask, d.blob, d.name)
    ctx.dynamic_version = p.Version


def _bind_render_state_source(ind: str, obj: str) -> list[str]:
    return [
        *scatter_pipeline_source(f"{obj}.data['pipeline']", ind),
        f"{ind}_ctx.render_state_cso = {obj}.handle",
        f"{ind}_ctx.render_state_version = p.Version",
        f"{ind}_ctx.pipeline_version = p.PipelineVersion",
    ]


def _set_dynamic_state_source(ind: str, obj: str) -> list[str]:
    return [
        *scatter_dynamic_source("p.ChunkMask", "d.blob", "d.name", ind),
        f"{ind}_ctx.dynamic_version = p.Version",
    ]


def _binder(attr: str, member: str) -> Push:
    def push(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
        setattr(ctx, attr, getattr(d.payload, member))

    return push


def _set_framebuffer(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    assert obj is not None
    obj.payload = d.payload
    targets = _t.enum("MGPipeFramebufferTarget")
    target = int(d.payload.Target)
    if target in (targets["Draw"], targets["Both"]):
        ctx.draw_framebuffer = obj.handle
    if target in (targets["Read"], targets["Both"]):
        ctx.read_framebuffer = obj.handle


def _window(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    ctx.put_window(d.name, d.payload.Start, d.tails[0])


def _shader_buffers(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    ctx.put_window(f"{d.name}[{d.payload.Class}]", d.payload.Start, d.tails[0])


def _attrib_defaults(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    mask, window, values = int(d.payload.Mask), ctx.windows[d.name], d.tails[0]
    bits = [i for i in range(mask.bit_length()) if mask >> i & 1]
    for i, bit in enumerate(bits[: len(values)]):
        if bit < len(window):
            ctx.put_window(d.name, bit, values[i : i + 1])


def _program_bindings(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    assert obj is not None
    obj.data["bindings"] = (d.payload, d.tails)


def _storage_block(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    """The block is named, not indexed (``Name``: the blob, NUL included)."""
    assert obj is not None
    blocks = obj.data.setdefault("storage_blocks", {})
    name = bytes(d.blob if d.blob is not None else b"").split(b"\0", 1)[0]
    blocks[name.decode("utf-8", "replace")] = int(d.payload.Binding)


def _stream_output(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    """The XFB namespace has no wire handle: the bound object is (GL name, lifetime id)."""
    ctx.xfb = (int(d.payload.GlName), int(d.payload.LifetimeId))


def _texture_params(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    assert obj is not None
    obj.data["params"] = d.payload


def _respecify(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    assert obj is not None
    obj.payload = d.payload


def _applier_reset(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    ctx.reset_bindings()
    ctx.context_serial = int(d.payload.ContextSerial)


def _present(ctx: ServerContext, d: Decoded, obj: ServerObject | None) -> None:
    ctx.frame_serial = int(d.payload.FrameSerial)


PUSH: dict[str, Push] = {
    "BindRenderState": _bind_render_state,
    "SetDynamicState": _set_dynamic_state,
    "BindVertexElements": _binder("vertex_elements", "Handle"),
    "BindShaderState": _binder("shader_state", "Handle"),
    "SetDrawProgram": _binder("draw_program", "Handle"),
    "SetDispatchProgram": _binder("dispatch_program", "Handle"),
    "BindStreamOutput": _stream_output,
    "SetFramebufferState": _set_framebuffer,
    "SetVertexBuffers": _window,
    "SetSamplerViews": _window,
    "BindSamplerStates": _window,
    "SetShaderImages": _window,
    "SetShaderBuffers": _shader_buffers,
    "SetVertexAttribDefaults": _attrib_defaults,
    "SetProgramBindings": _program_bindings,
    "SetStorageBlockBinding": _storage_block,
    "SetTextureParams": _texture_params,
    "ResourceRespecify": _respecify,
    "ApplierReset": _applier_reset,
    "Present": _present,
}

#: the pushes a handler runs inline (see the module docstring): each is its ``PUSH`` entry
PUSH_SOURCE: dict[str, Callable[[str, str], list[str]]] = {
    "BindRenderState": _bind_render_state_source,
    "SetDynamicState": _set_dynamic_state_source,
}


class PushMemo(NamedTuple):
    """How a record of a ``PUSH_SOURCE`` call whose object's row is remembered (dispatch's
    row memo) repeats its push.

    After the push lines ran: ``cond()`` (source; the tables are read when it is asked
    for, never at import) holds where the push is the same again for
    the same live object; ``keep(obj)`` (source expressions over the push's locals and the
    object ``obj``) is what the push took from the object; ``hit(ind, names)`` the lines
    doing the push again from the locals ``names`` (one per ``keep``) and the record
    (``p``)."""

    cond: Callable[[], str]
    keep: Callable[[str], list[str]]
    hit: Callable[[str, list[str]], list[str]]


def _bind_memo_hit(ind: str, names: list[str]) -> list[str]:
    sub, cso = names
    return [
        *scatter_pending_source(sub, ind),
        f"{ind}_ctx.render_state_cso = {cso}",
        f"{ind}_ctx.render_state_version = p.Version",
        f"{ind}_ctx.pipeline_version = p.PipelineVersion",
    ]


#: the ``PUSH_SOURCE`` calls whose push a remembered row repeats: BindRenderState's lazy
#: bind of the CSO's full subset (a CSO's subset is fixed at its create) and its handle;
#: the record's two counters are read from the record
PUSH_MEMO: dict[str, PushMemo] = {
    "BindRenderState": PushMemo(
        lambda: pending_subset_test("_sub"),
        lambda obj: ["_sub", f"{obj}.handle"],
        _bind_memo_hit,
    ),
}
