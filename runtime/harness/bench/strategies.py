"""The render-state strategies the bench compares in one run, on one workload.

Each strategy is the unmodified client plus, where the strategy differs from mgpipe's
own path, a small emitter of its own that reuses the client's encoder, emitter and CSO
cache (nothing is forked):

(a) ``mgpipe``       the client as shipped: CSO over the pipeline subset + dynamic state.
(b) ``block-push``   the whole 1168-byte ``RenderStateParameters`` on every validate.
                     No call of the catalogue carries it any more (the residual block of
                     seed 001 §9.4 was ratcheted down to ``CapabilityBits``), so it rides
                     the residual call the way seed 004 §6.3 describes its first shape:
                     ``SetResidualValueState`` whose blob is the whole block; the bench's
                     server side writes it into the working block (both halves).
(c) ``block-cso``    the client's ``whole_block`` control (seed 001 Appendix A bit 63):
                     content addressing over all 1168 bytes, one CSO per distinct block.
(d) ``per-setter``   a push after every GL setter call (the design seed 004 §5.1 rejects):
                     the setter's change leaves at once through the CSO cache (bind, or
                     create + bind, or the changed dynamic chunks); a setter that changed
                     nothing still makes its interface call (a re-bind of the bound CSO).
(e) ``no-transition`` mgpipe with the CSO cache's transition cache switched off
                     (``transition_cache=False``): every pipeline change gathers and hashes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .pipe import NULL, Client, CsoStats, RenderState, RenderStateCsoCache

__all__ = ["Strategy", "STRATEGIES", "BlockPush", "BlockPushServer", "install_per_setter",
           "CSO_KEYED_BACKENDS"]  # fmt: skip

RESIDUAL_CALL = "SetResidualValueState"


@dataclass(frozen=True)
class Strategy:
    key: str
    name: str
    doc: str
    client_kwargs: Callable[[], dict[str, Any]] = dict
    install: Callable[[Client], None] | None = None
    wrap_backend: Callable[[Any], Any] | None = None
    #: None when the strategy runs on this runtime, else why it does not.
    unavailable: Callable[[], str | None] = field(default=lambda: None)

    #: it binds no render-state CSO (the pipeline half reaches the backend only through
    #: the working block)
    binds_no_cso: bool = False

    def unavailable_on(self, transport: str, backend: str) -> str | None:
        """None when the strategy runs on ``transport`` / ``backend``, else why it does
        not (it is then not run, rather than run without the part it needs):

        * a server half that wraps the backend (``wrap_backend``) needs the backend in
          this process; the spawn server builds its backend by name from the registry
          (serve.py) with no hook for a wrapper;
        * a strategy that binds no CSO cannot drive a backend whose pipelines are keyed
          by the bound CSO (:data:`CSO_KEYED_BACKENDS`): it would draw every draw with
          the first block's pipeline state."""
        if transport == "spawn" and self.wrap_backend is not None:
            return (
                "on spawn: its server half wraps the backend in this process; the "
                "spawn server builds its backend by name and takes no wrapper"
            )
        if self.binds_no_cso and backend in CSO_KEYED_BACKENDS:
            return (
                f"on {backend}: its pipelines are keyed by the bound render-state CSO, "
                "and this strategy binds none (every draw would run the first "
                "block's pipeline)"
            )
        return None


#: Backends whose pipelines are keyed by the bound render-state CSO (Vulkan: the renderer's
#: ``PipelineKey(cso, shader, vertex layout, render pass, ...)``, decoded from the working
#: block when the key is first seen). The guard's ``same-backend-work-as-a`` check catches
#: a backend that does this and is missing here.
CSO_KEYED_BACKENDS = ("vulkan",)


# -- (b) whole-block push ---------------------------------------------------------
class BlockPush:
    """Stands where the tracker's CSO cache stands: every validate ships the whole block."""

    quiet_version = None  # never quiet: every draw validates (and pushes)

    def __init__(self, emit: Callable[..., Any]) -> None:
        self._emit = emit
        self.stats = CsoStats()
        self.bound = NULL
        self.pushes = 0

    @property
    def live(self) -> int:
        return 0

    def validate(self, rs: RenderState) -> None:
        self._emit(RESIDUAL_CALL, {}, blob=rs.block_bytes())
        self.pushes += 1

    def release_all(self) -> None:
        return None


class BlockPushServer:
    """The server half of (b): the residual record's blob becomes the working block.

    Every other entry is the wrapped backend's own; the residual entry writes both halves
    (the pipeline chunks and every dynamic chunk, which bumps the working block's
    version), then forwards to the wrapped backend's entry if it has one.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._inner_residual = getattr(inner, RESIDUAL_CALL, None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def SetResidualValueState(self, ctx: Any, d: Any) -> object:  # noqa: N802 (a call name)
        ws = ctx.render_state
        block = bytes(d.blob)
        if len(block) != ws.size:
            raise ValueError(f"{RESIDUAL_CALL}: blob of {len(block)} bytes, expected {ws.size}")
        ws.scatter_pipeline(b"".join(block[o : o + n] for o, n in ws.pipeline_chunks))
        ws.scatter_dynamic((1 << len(ws.dynamic_chunks)) - 1,
                           b"".join(block[o : o + n] for o, n in ws.dynamic_chunks), RESIDUAL_CALL)  # fmt: skip
        if self._inner_residual is not None:
            return self._inner_residual(ctx, d)
        return None


def _install_block_push(c: Client) -> None:
    c.tr.cso = BlockPush(c.em.emit)


# -- (d) per-setter push ----------------------------------------------------------
def install_per_setter(c: Client) -> None:
    """Wrap every ``set_*`` of the client's RenderState so the change is pushed at once."""
    rs, cso, em = c.state, c.tr.cso, c.em
    t = em.transport

    def push() -> None:
        before = t.emit_seq  # every record goes through the transport
        cso.validate(rs)
        if t.emit_seq == before:  # nothing moved: the naive design still calls in
            em.emit("BindRenderState", {"Cso": cso.bound, "Version": rs.version,
                                        "PipelineVersion": rs.pipeline_version})  # fmt: skip

    for name, _ in inspect.getmembers(type(rs), inspect.isfunction):
        if name.startswith("set_"):
            setattr(rs, name, _after(getattr(rs, name), push))
    # glEnable / glDisable are the render state's own on the client (one frame shorter):
    # here they go through the wrapped set_capability, a push after each as well
    c.enable = functools.partial(rs.set_capability, enabled=True)  # type: ignore[method-assign]
    c.disable = functools.partial(rs.set_capability, enabled=False)  # type: ignore[method-assign]
    # glViewport / glScissor are compiled span setters on the client: the class's methods
    # call the render state's (wrapped) setters
    del c.viewport, c.scissor


def _after(setter: Callable[..., None], push: Callable[[], None]) -> Callable[..., None]:
    def per_setter(*args: Any, **kwargs: Any) -> None:
        setter(*args, **kwargs)
        push()

    return per_setter


# -- (e) transition cache off ---------------------------------------------------------
TRANSITION_SWITCH = "transition_cache"


def _transition_switch_missing() -> str | None:
    if TRANSITION_SWITCH in inspect.signature(RenderStateCsoCache).parameters:
        return None
    return f"the CSO cache has no {TRANSITION_SWITCH!r} switch on this runtime"


def _transition_off(c: Client) -> None:
    setattr(c.tr.cso, TRANSITION_SWITCH, False)


STRATEGIES: dict[str, Strategy] = {
    s.key: s
    for s in (
        Strategy("a", "mgpipe", "CSO over the pipeline subset + dynamic state"),
        Strategy("b", "block-push", "whole 1168-byte block on every draw",
                 install=_install_block_push, wrap_backend=BlockPushServer, binds_no_cso=True),
        Strategy("c", "block-cso", "a CSO per distinct whole block (bit 63 control)",
                 client_kwargs=lambda: {"whole_block": True}),
        Strategy("d", "per-setter", "a push per GL setter call", install=install_per_setter),
        Strategy("e", "no-transition", "mgpipe, transition cache off",
                 install=_transition_off, unavailable=_transition_switch_missing),
    )  # fmt: skip
}
