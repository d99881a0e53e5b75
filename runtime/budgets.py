"""Cost budgets both sides of the pipe know: per-record work and server memory.

A well-formed record can still ask for unbounded work (one draw of 10^6 instances, a draw
count of 2^32 - 1) or memory (an 88-byte ``ResourceRespecify`` of a 4 GiB buffer). The
budgets below bound both. The client refuses past them before a record is encoded
(:func:`client_draw`, :func:`client_buffer`, :func:`client_image`); the server refuses
what exceeds them before any table changes and before any driver call (the applier's
``PREPARE`` step runs :func:`check_respecify` and :func:`check_draw`), so a hostile client
meets the same wall as a careless one.

======================  =================  ==============================================
budget                  default            what it bounds
======================  =================  ==============================================
``draw_instances``      65,536             ``InstanceCount`` of one draw record
``draw_vertices``       4,194,304 (2^22)   instances x vertices of one draw record, summed
                                           over its ranges (a multi-draw's rows included;
                                           an indirect draw's counts are in its buffer and
                                           are the backend's to bound)
``buffer_bytes``        1 GiB              one buffer's size
``image_bytes``         1 GiB              one image, every level and layer, each texel
                                           counted at :data:`TEXEL_BYTES_BOUND` bytes
``resource_bytes``      2 GiB              every live buffer and image of a context
``objects_per_kind``    2^20               live objects of one handle kind (the server's
                                           handle tables stop there; the client's slot
                                           allocators refuse at the same count)
======================  =================  ==============================================

The server's resource memory is thus at most ``resource_bytes`` plus the backends' own
per-object bookkeeping for ``objects_per_kind`` objects per kind.

Each budget can be set for a process with ``MGPIPE_BUDGET_<NAME>`` (e.g.
``MGPIPE_BUDGET_BUFFER_BYTES=1048576``); a spawned server inherits the client's
environment, so both sides read the same numbers. A refusal is
``Fatal{ResourceLimit, "<Call>.<Field>"}`` with the numbers in its log::

    Fatal{ResourceLimit, "ResourceRespecify.Width"}: buffer of 4294967296 bytes > budget buffer_bytes 1073741824
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from .errors import LoggedFatal

__all__ = ["Budgets", "ResourceLimit", "budgets", "TEXEL_BYTES_BOUND", "image_texels",
           "check_respecify", "check_destroy", "check_draw", "check_draw_source",
           "check_draw_namespace", "client_draw", "client_buffer",
           "client_image"]  # fmt: skip

#: The widest texel of any format the backends store (RGBA32F / RGBA32UI): 16 bytes. An
#: image's budgeted size counts every texel at this width, whatever its format.
TEXEL_BYTES_BOUND = 16

ENV_PREFIX = "MGPIPE_BUDGET_"


class ResourceLimit(LoggedFatal):
    """A record (or an API call) past one of the :class:`Budgets`."""

    KIND = "ResourceLimit"


@dataclass(frozen=True)
class Budgets:
    draw_instances: int = 1 << 16
    draw_vertices: int = 1 << 22
    buffer_bytes: int = 1 << 30
    image_bytes: int = 1 << 30
    resource_bytes: int = 2 << 30
    objects_per_kind: int = 1 << 20

    @classmethod
    def from_env(cls, env: Any = None) -> "Budgets":
        """The defaults, with each ``MGPIPE_BUDGET_<NAME>`` that is set (a positive
        integer; anything else is a ``ValueError`` naming the variable)."""
        env = os.environ if env is None else env
        kw = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is None:
                continue
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if value <= 0:
                raise ValueError(f"{ENV_PREFIX}{f.name.upper()}={raw!r}: expected a positive "
                                 "integer")  # fmt: skip
            kw[f.name] = value
        return cls(**kw)


_CURRENT: list[Budgets] = []


def budgets() -> Budgets:
    """This process's budgets (read from the environment once)."""
    if not _CURRENT:
        _CURRENT.append(Budgets.from_env())
    return _CURRENT[0]


def set_budgets(b: Budgets | None) -> None:
    """Replace this process's budgets (None: read the environment again); for tests."""
    _CURRENT.clear()
    if b is not None:
        _CURRENT.append(b)


def image_texels(width: int, height: int, depth: int, layers: int, levels: int) -> int:
    """Texels of an image's whole mip chain (each level halves every extent, floor 1)."""
    total = 0
    w, h, d = max(width, 1), max(height, 1), max(depth, 1)
    for _ in range(max(min(levels, 64), 1)):
        total += w * h * d
        if w == h == d == 1:
            break
        w, h, d = max(w >> 1, 1), max(h >> 1, 1), max(d >> 1, 1)
    return total * max(layers, 1)


def _refuse(where: str, what: str, n: int, name: str, limit: int) -> None:
    raise ResourceLimit(where, f"{what} {n} > budget {name} {limit}")


def _buffer(where: str, size: int, b: Budgets) -> int:
    if size > b.buffer_bytes:
        _refuse(where, "buffer of", size, "buffer_bytes", b.buffer_bytes)
    return size


def _image(where: str, w: int, h: int, depth: int, layers: int, levels: int, b: Budgets) -> int:
    if w <= 0 or h <= 0:
        return 0  # no extent: no storage
    size = image_texels(w, h, depth, layers, levels) * TEXEL_BYTES_BOUND
    if size > b.image_bytes:
        _refuse(where, f"{w}x{h}x{max(depth, 1)} x {max(layers, 1)} layers x {levels} levels:",
                size, "image_bytes", b.image_bytes)  # fmt: skip
    return size


# -- the server side (the applier's PREPARE step) ------------------------------------------
def _ledger(ctx: Any) -> dict[int, int]:
    led = getattr(ctx, "_budget_bytes", None)
    if led is None:
        led = ctx._budget_bytes = {}
    return led


def check_respecify(ctx: Any, d: Any, buffer_target: int) -> None:
    """A ``ResourceRespecify`` past ``buffer_bytes`` / ``image_bytes`` / ``resource_bytes``
    is refused before anything is allocated; else the context's ledger takes its size."""
    b = budgets()
    p = d.payload
    where = f"{d.name}.Width"
    if int(p.Target) == buffer_target:
        size = _buffer(where, int(p.Width), b)
    else:
        size = _image(where, int(p.Width), int(p.Height), int(p.Depth), int(p.ArrayLayers),
                      int(p.Levels), b)  # fmt: skip
    led = _ledger(ctx)
    slot = int(p.Resource[0])
    total = getattr(ctx, "_budget_total", 0) - led.get(slot, 0) + size
    if total > b.resource_bytes:
        _refuse(where, "live resources of", total, "resource_bytes", b.resource_bytes)
    led[slot] = size
    ctx._budget_total = total


def check_destroy(ctx: Any, slot: int) -> None:
    """A destroyed resource leaves the ledger."""
    led = _ledger(ctx)
    ctx._budget_total = getattr(ctx, "_budget_total", 0) - led.pop(slot, 0)


def reset_ledger(ctx: Any) -> None:
    ctx._budget_bytes = {}
    ctx._budget_total = 0


@lru_cache(maxsize=None)
def _indirect_flag() -> int:
    from .schema import tables as _t

    return int(_t.enum("MGPDrawFlagBit")["kDrawIsIndirect"])


def check_draw(d: Any) -> None:
    """A draw record past ``draw_instances`` / ``draw_vertices`` is refused."""
    b = _CURRENT[0] if _CURRENT else budgets()
    p = d.payload
    inst = int(p.InstanceCount)
    if inst < 1:
        inst = 1
    if inst > b.draw_instances:
        _refuse(f"{d.name}.InstanceCount", "instances", inst, "draw_instances", b.draw_instances)
    if d.tails and not int(p.Flags) & _indirect_flag():  # indirect: counts live in a buffer
        verts = sum([int(r.Count) for r in d.tails[0]]) * inst
        if verts > b.draw_vertices:
            _refuse(f"{d.name}.Count", "instances x vertices", verts, "draw_vertices",
                    b.draw_vertices)  # fmt: skip


def check_draw_source(p: str, tails: str, d: str, ind: str = "    ") -> list[str]:
    """Lines of :func:`check_draw` inline in a generated handler (``p``, ``tails``, ``d``:
    the payload, the present tails and the decoded record there; the names the lines read
    are :func:`check_draw_namespace`'s). Within the budgets they run no call at all; a
    draw past one calls :func:`check_draw`, whose refusal names it."""
    flag = _indirect_flag()
    return [
        f"{ind}_b = _BUD[0] if _BUD else _budgets()",
        f"{ind}_inst = {p}.InstanceCount",
        f"{ind}if _inst < 1:",
        f"{ind}    _inst = 1",
        f"{ind}if _inst > _b.draw_instances:",
        f"{ind}    _check_draw({d})",
        f"{ind}if {tails} and not {p}.Flags & {flag}:",
        f"{ind}    _rows = {tails}[0]",
        f"{ind}    if len(_rows) == 1:",
        f"{ind}        _verts = _rows[0].Count * _inst",
        f"{ind}    else:",
        f"{ind}        _verts = sum([r.Count for r in _rows]) * _inst",
        f"{ind}    if _verts > _b.draw_vertices:",
        f"{ind}        _check_draw({d})",
    ]


def check_draw_namespace() -> dict[str, Any]:
    """The globals :func:`check_draw_source`'s lines read."""
    return {"_BUD": _CURRENT, "_budgets": budgets, "_check_draw": check_draw}


# -- the client side (before a record is encoded) ------------------------------------------
def client_draw(what: str, count: int, instances: int) -> None:
    b = budgets()
    inst = max(instances, 1)
    if inst > b.draw_instances:
        _refuse(f"{what}.instances", "instances", inst, "draw_instances", b.draw_instances)
    if count * inst > b.draw_vertices:
        _refuse(f"{what}.count", "instances x vertices", count * inst, "draw_vertices",
                b.draw_vertices)  # fmt: skip


def client_buffer(what: str, size: int) -> None:
    _buffer(f"{what}.size", size, budgets())


def client_image(what: str, w: int, h: int, depth: int, layers: int, levels: int) -> None:
    _image(f"{what}.extent", w, h, depth, layers, levels, budgets())
