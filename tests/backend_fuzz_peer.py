"""Child process of the backend fuzzer: mutated but well-formed streams into a real backend.

``python tests/backend_fuzz_peer.py BACKEND FIRST COUNT`` runs streams ``FIRST`` ..
``FIRST + COUNT - 1``. Stream ``i`` is a scene of :data:`SCENES_FUZZED` (chosen by ``i``)
run by a fresh client into a fresh backend (on Vulkan, every stream of one child borrows
the child's one ``VulkanDevice``: instance and device creation were 40 of a stream's 68 ms;
a stream's objects are its backend's, destroyed at its close, and what one leaves behind on
the device is the next streams' problem, so a finding), where each record the client
sends has, with probability :data:`RATE`, one numeric value replaced by a hostile value (:data:`HOSTILE`) -- a payload or tail field on the general path, a packed
value on the emitter's compiled door (draws, CSO records) -- or a few bytes of its staged
blob overwritten in place (SPIR-V, texels, vertex elements); a value the field's type
cannot carry is not sent (the record stays well-formed: the backend must judge it).
Before stream ``i`` it prints ``START i``; after it, ``DONE i {json}`` with the outcome:
``ok``, ``refused`` (a named ``PipeFatal``: its kind), ``raised`` (any other exception: a
finding), the validation messages, the mutation counts (all, on the compiled door, of a
blob) and the slowest record's seconds.
A driver crash kills the process between ``START`` and ``DONE``: the parent names it.
"""

from __future__ import annotations

import copy
import json
import os
import random
import struct
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("MGPIPE_VK_VALIDATION", "on")

SCENES_FUZZED = ("blend-toggle", "clears", "readback", "texture-upload", "instanced",
                 "restart-strip", "viewports", "depth", "scissor", "blaze3d-frame")  # fmt: skip
RATE = 0.15
TRACE = os.environ.get("MGPIPE_FUZZ_TRACE") == "1"
HOSTILE = (0, 1, -1, 2, 3, 7, 99, 255, 256, 1000, 4097, 65535, 65536, 2**31 - 1, 2**31,
           2**32 - 1, -(2**31), 10**6, float("nan"), float("inf"), float("-inf"), 1e30)  # fmt: skip


def _leaves(obj: Any, path: tuple = ()) -> list[tuple]:
    """Paths of the numeric leaves of a payload (dicts and lists of them)."""
    out: list[tuple] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaves(v, path + (k,))
    elif isinstance(obj, (list, tuple)) and not (len(obj) == 2 and all(isinstance(x, int) for x in obj)
                                                 and type(obj).__name__ == "Handle"):  # fmt: skip
        for i, v in enumerate(obj):
            out += _leaves(v, path + (i,))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out.append(path)
    return out


def _set(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, tuple):
        obj = list(obj)
    obj[head] = _set(obj[head], rest, value)
    return obj


class Mutator:
    """Wraps an encoder and the emitter's compiled door: per chosen record, one hostile
    numeric value (a payload or tail field on the general path, a packed value on the
    compiled one), or a few bytes of its staged blob overwritten (same length: SPIR-V,
    texels, buffer bytes)."""

    def __init__(self, encoder: Any, rng: random.Random) -> None:
        self.encode, self.rng = encoder.encode, rng
        self.mutations = self.fast_mutations = self.blob_mutations = 0
        encoder.encode = self

    def __call__(self, call: str, payload: Any = None, tails: tuple = (), blob: Any = None) -> Any:
        if self.rng.random() < RATE:
            sites = [("payload", p) for p in _leaves(payload or {})]
            sites += [("tails", p) for p in _leaves(list(tails))]
            if blob:
                sites.append(("blob", ()))
            if sites:
                where, path = self.rng.choice(sites)
                p2, t2, b2 = payload, tails, blob
                if where == "blob":
                    b2 = bytearray(blob)
                    for _ in range(self.rng.randint(1, 4)):
                        b2[self.rng.randrange(len(b2))] = self.rng.randrange(256)
                    b2, what = bytes(b2), "bytes"
                else:
                    what = self.rng.choice(HOSTILE)
                    if where == "payload":
                        p2 = _set(copy.deepcopy(payload), path, what)
                    else:
                        t2 = tuple(_set(copy.deepcopy(list(tails)), path, what))
                if TRACE:  # which record a finding came from
                    print(f"MUTATE {call} {where}{path} = {what!r}", file=sys.stderr, flush=True)
                try:
                    rec = self.encode(call, p2, t2, b2)
                    self.mutations += 1
                    self.blob_mutations += where == "blob"
                    return rec
                except (ValueError, OverflowError, TypeError, KeyError):
                    pass  # the field's type cannot carry it: not a well-formed record
        return self.encode(call, payload, tails, blob)

    def fast(self, call: str, emit: Any) -> Any:
        """A compiled emitter whose values are mutated like the general path's fields."""
        rng = self.rng

        def mutated(*values: Any) -> int:
            if values and rng.random() < RATE:
                k, v = rng.randrange(len(values)), rng.choice(HOSTILE)
                if isinstance(values[k], (int, float)) and not isinstance(values[k], bool):
                    hostile = values[:k] + (v,) + values[k + 1:]
                    if TRACE:
                        print(f"MUTATE {call} fast[{k}] = {v!r}", file=sys.stderr, flush=True)
                    try:
                        seq = emit(*hostile)
                        self.mutations += 1
                        self.fast_mutations += 1
                        return seq
                    except (struct.error, ValueError, OverflowError, TypeError):
                        pass  # the packed type cannot carry it (nothing was sent)
            return emit(*values)

        mutated.direct = getattr(emit, "direct", False)  # type: ignore[attr-defined]
        return mutated


_MUTATOR: list[Mutator] = []  # the stream's mutator, which the compiled doors consult


def _install_fast_mutation() -> None:
    from mgpipe.runtime.client.emitter import Emitter

    real = Emitter.fast
    if getattr(real, "_fuzzed", False):
        return

    def fast(self: Any, call: str, *a: Any, **k: Any) -> Any:
        emit = real(self, call, *a, **k)
        return _MUTATOR[-1].fast(call, emit) if _MUTATOR else emit

    fast._fuzzed = True  # type: ignore[attr-defined]
    Emitter.fast = fast  # type: ignore[method-assign]


_DEVICE: list[Any] = []  # the child's one VulkanDevice, made at its first Vulkan stream


def _backend(name: str) -> Any:
    if name == "vulkan":
        from mgpipe.runtime.backends.vulkan.backend import VulkanBackend
        from mgpipe.runtime.backends.vulkan.device import VulkanDevice

        if not _DEVICE:
            _DEVICE.append(VulkanDevice())
        return VulkanBackend(width=64, height=48, dev=_DEVICE[0])
    from mgpipe.runtime.backends.gles import GlesBackend

    return GlesBackend()


def run_stream(backend: str, i: int) -> dict[str, Any]:
    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.errors import PipeFatal
    from mgpipe.runtime.harness.scenes import SCENES
    from mgpipe.runtime.server.applier import Applier
    from mgpipe.runtime.wire.stage import StageSegment

    be = _backend(backend)
    stage = StageSegment(4 << 20)
    applier = Applier(be, stage)
    slowest = [0.0]

    def timed(raw: Any) -> Any:
        t0 = time.monotonic()
        try:
            return applier.apply(raw)
        finally:
            slowest[0] = max(slowest[0], time.monotonic() - t0)

    _install_fast_mutation()
    rng = random.Random(i)
    _MUTATOR[:] = [Mutator.__new__(Mutator)]  # compiled doors made in the constructor see it
    _MUTATOR[0].rng, _MUTATOR[0].mutations = rng, 0
    _MUTATOR[0].fast_mutations = _MUTATOR[0].blob_mutations = 0
    c = Client(timed, stage, transport="monolith", width=64, height=48,
               reverse=applier.apply.reverse)  # the wrapped sink reads the applier's answers
    mut = _MUTATOR[0]
    mut.encode = c.em.encoder.encode
    c.em.encoder.encode = mut
    scene = SCENES_FUZZED[i % len(SCENES_FUZZED)]
    out: dict[str, Any] = {"scene": scene, "outcome": "ok"}
    try:
        SCENES[scene].run(c, 2)
        c.present()
    except PipeFatal as e:
        out.update(outcome="refused", kind=e.kind, reason=e.reason)
    except Exception as e:  # noqa: BLE001 - a raw exception is the finding
        out.update(outcome="raised", kind=type(e).__name__, reason=str(e)[:200])
    dev = getattr(be, "dev", None)
    out["messages"] = [str(m)[:int(os.environ.get("MGPIPE_FUZZ_MSG", "200"))] for m in dev.take_messages()] if dev is not None else []
    out["mutations"] = mut.mutations
    out["fast_mutations"], out["blob_mutations"] = mut.fast_mutations, mut.blob_mutations
    out["slowest_s"] = round(slowest[0], 3)
    try:
        be.close()
    except Exception:  # noqa: BLE001 - a refused context's teardown is not under test
        pass
    if dev is not None:
        out["messages"] += [str(m)[:int(os.environ.get("MGPIPE_FUZZ_MSG", "200"))] for m in dev.take_messages()]
    return out


def main(backend: str, first: int, count: int) -> int:
    for i in range(first, first + count):
        print(f"START {i}", flush=True)
        print(f"DONE {i} {json.dumps(run_stream(backend, i))}", flush=True)
    for dev in _DEVICE:
        dev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
