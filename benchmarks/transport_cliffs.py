"""Issue 20's three transport cliffs, side by side in one process (process CPU time).

    python benchmarks/transport_cliffs.py [--quick] [--runs R]

1. **spawn warm-up**: the spawn server's CPU per draw (its Report's ``cpu_ns``, counted
   from ``Welcome``) on the blend-toggle scene at 500 and at 5,000 draws, and their ratio
   (target <= 1.5x); ``lazy`` is the same server with :func:`~mgpipe.runtime.transport.serve.prepare`
   turned off (the handlers compiled inside the first frames, as before). Also the wall
   time from spawning to ``Welcome`` (both forms) and ``compile()`` calls after Welcome.
2. **inproc knocks**: condition-variable notifies per 1,000 draws on inproc in a run where
   the client never waits and the apply thread is parked when the burst starts (the client
   holds the GIL for the whole burst: ``sys.setswitchinterval``), now and with the
   always-knock doorbell planted back (every publish notifies a parked waiter).
3. **2 MiB upload**: CPU per ``tex_image`` of a 1024x512 RGBA8 level (+ one draw) through
   spawn (client + server, the difference of a run of N and one of N/4 uploads, each in
   a fresh process) against monolith (likewise), and their ratio (target <= 2x); ``before``
   is the spawn server's stage wired as before (a private copy per view plus the
   decoder's copy); the server's private copies per upload.

Each figure is the best of ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.client.api import GL_TRIANGLES, Client
from mgpipe.runtime.harness.runner import STAGE_CAPACITY
from mgpipe.runtime.harness.scenes import SCENES
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.transport import doorbell
from mgpipe.runtime.transport.inproc import InprocTransport
from mgpipe.runtime.transport.monolith import MonolithTransport
from mgpipe.runtime.transport.spawn import SpawnTransport
from mgpipe.runtime.wire.stage import StageSegment

#: the server process, counting ``compile()`` calls after Welcome into its summary
#: (``compiles``) and, with argv[1] == "lazy", without the warm-up before Welcome.
PEER = r"""
import builtins, sys
from mgpipe.runtime.transport import serve, session
n, armed, real = [0], [False], builtins.compile
def counting(*a, **k):
    if armed[0]:
        n[0] += 1
    return real(*a, **k)
builtins.compile = counting
if "lazy" in sys.argv[1:]:
    serve.prepare = lambda applier: 0
if "copying" in sys.argv[1:]:  # the wiring before issue 20: a fresh copy per view
    serve.server_applier = lambda backend, stage, **kw: serve.Applier(backend, stage, **kw)
welcome = session.Session.welcome
def armed_welcome(self, backend):
    armed[0] = True
    welcome(self, backend)
session.Session.welcome = armed_welcome
summary = serve.backend_summary
serve.backend_summary = lambda *a, **k: {**summary(*a, **k), "compiles": n[0],
                                          "copies": 0}
serve.main()
"""

W, H = 1024, 512  # 2 MiB of RGBA8
UPLOAD_STAGE = 16 << 20


def peer_argv(lazy: bool = False, copying: bool = False) -> list[str]:
    return [sys.executable, "-c", PEER] + (["lazy"] if lazy else []) + (
        ["copying"] if copying else [])  # fmt: skip


# -- 1. spawn warm-up -----------------------------------------------------------------------
def spawn_server(draws: int, lazy: bool = False) -> dict[str, float]:
    """One spawn run of the blend toggle: server CPU per draw, Welcome wall, compiles."""
    w0 = time.perf_counter()
    t = SpawnTransport("recorder", stage_capacity=STAGE_CAPACITY, config={"summary": []},
                       server_argv=peer_argv(lazy))  # fmt: skip
    welcome_s = time.perf_counter() - w0
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    SCENES["blend-toggle"].run(c, max(draws // 2, 1))
    c.tr.cso.release_all()
    t.wait_applied()
    report = t.close()
    assert report is not None and report["applied_seq"] == c.records
    return {"us_per_draw": report["cpu_ns"] / max(c.draws, 1) / 1e3, "welcome_ms": welcome_s * 1e3,
            "compiles": report["summary"]["compiles"], "draws": c.draws}  # fmt: skip


def warmup(runs: int, lazy: bool = False, draws: tuple[int, int] = (500, 5000)) -> dict[str, Any]:
    lo = min((spawn_server(draws[0], lazy) for _ in range(runs)), key=lambda r: r["us_per_draw"])
    hi = min((spawn_server(draws[1], lazy) for _ in range(runs)), key=lambda r: r["us_per_draw"])
    return {"lo": lo, "hi": hi, "ratio": lo["us_per_draw"] / hi["us_per_draw"]}


# -- 2. inproc knocks -------------------------------------------------------------------------
def always_knock(self: doorbell.Doorbell) -> None:
    """The doorbell before issue 20: every ring notifies while a waiter is parked."""
    if self._parked:
        with self._cond:
            self.notifies += 1
            self._cond.notify_all()


@contextmanager
def planted_always_knock() -> Iterator[None]:
    saved = doorbell.Doorbell.ring
    doorbell.Doorbell.ring = always_knock  # type: ignore[method-assign]
    try:
        yield
    finally:
        doorbell.Doorbell.ring = saved  # type: ignore[method-assign]


def inproc_knocks(draws: int = 1000) -> dict[str, float]:
    """Blend-toggle draws on inproc, the apply thread parked at the start and the client
    never waiting inside the burst (it keeps the GIL: a 1 s switch interval); notifies
    of both bells per 1,000 draws, and parks."""
    stage = StageSegment(STAGE_CAPACITY)
    applier = Applier(Recorder(), stage)
    t = InprocTransport(applier.apply, 1 << 22)
    ring = t.ring
    c = Client(None, stage, transport=t, reverse=applier.apply.reverse)  # type: ignore[arg-type]
    _steady_setup(c)
    _toggle(c, 4)  # both CSOs minted, both transitions known
    t.wait_applied()
    deadline = time.monotonic() + 5.0
    while not ring.data_bell.parked and time.monotonic() < deadline:
        time.sleep(0.001)
    parked = ring.data_bell.parked
    before = (ring.data_bell.notifies, ring.space_bell.notifies, ring.space_bell.parks, c.draws)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    try:
        _toggle(c, draws)
        burst = (ring.data_bell.notifies, ring.space_bell.notifies, ring.space_bell.parks, c.draws)
    finally:
        sys.setswitchinterval(interval)
    c.close()
    data, space, parks, d = (b - a for a, b in zip(before, burst))
    d = max(d, 1)
    return {"data": data * 1000 / d, "space": space * 1000 / d, "client_parks": parks,
            "draws": d, "all": (data + space) * 1000 / d, "server_parked": parked}  # fmt: skip


def _steady_setup(c: Client) -> None:
    vb = c.create_buffer(bytes(36))
    c.use_program(c.create_program({0: b"vs", 4: b"fs"}))
    c.vertex_attrib_pointer(0, vb, 3, stride=12)


def _toggle(c: Client, draws: int) -> None:
    for _ in range(draws // 2):
        c.enable("Blend")
        c.draw_arrays(GL_TRIANGLES, 0, 3)
        c.disable("Blend")
        c.draw_arrays(GL_TRIANGLES, 0, 3)


# -- 3. 2 MiB upload ----------------------------------------------------------------------------
def _upload_setup(c: Client) -> Any:
    _steady_setup(c)
    tex = c.create_texture("2d", W, H)
    c.bind_texture(0, tex)
    return tex


def _uploads(c: Client, tex: Any, n: int, data: bytes) -> None:
    for _ in range(n):
        c.tex_image(tex, 0, data)
        c.draw_arrays(GL_TRIANGLES, 0, 3)


def _warm(c: Client, tex: Any, data: bytes) -> None:
    # every page of the stage touched once (first touches are not the upload's cost)
    _uploads(c, tex, UPLOAD_STAGE // len(data) + 2, data)


def monolith_upload(n: int) -> int:
    stage = StageSegment(UPLOAD_STAGE)
    applier = Applier(Recorder(), stage)
    c = Client(None, stage, transport=MonolithTransport(applier.apply),  # type: ignore[arg-type]
               reverse=applier.apply.reverse)  # fmt: skip
    tex, data = _upload_setup(c), bytes(W * H * 4)
    _warm(c, tex, data)
    t0 = time.process_time_ns()
    _uploads(c, tex, n, data)
    t1 = time.process_time_ns()
    c.close()
    return t1 - t0


def spawn_upload(n: int, before: bool = False) -> tuple[int, int]:
    """(client CPU of the ``n`` uploads, the server's CPU since Welcome); ``before``: the
    server's stage wired as before issue 20 (a fresh private copy per view, the decoder's
    copy on top)."""
    t = SpawnTransport("recorder", stage_capacity=UPLOAD_STAGE, config={"summary": []},
                       server_argv=peer_argv(copying=before))  # fmt: skip
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    tex, data = _upload_setup(c), bytes(W * H * 4)
    _warm(c, tex, data)
    t.wait_applied()
    t0 = time.process_time_ns()
    _uploads(c, tex, n, data)
    t.wait_applied()
    t1 = time.process_time_ns()
    report = t.close()
    assert report is not None
    return t1 - t0, report["cpu_ns"]


def monolith_upload_fresh(n: int) -> int:
    """:func:`monolith_upload` in a fresh process, as the spawn server always is (a warm
    process's freed memory takes the recorder's kept copies without page faults: the
    same upload then costs a third as much)."""
    out = subprocess.run([sys.executable, __file__, "--monolith-upload", str(n)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return int(out.stdout.split()[-1])


def upload(runs: int, n: int = 16, before: bool = False) -> dict[str, float]:
    """Milliseconds of CPU per 2 MiB upload: monolith, spawn (client + server), the ratio;
    each side the difference of a fresh process's run of ``n`` and one of ``n // 4``."""
    n1 = max(n // 4, 1)
    mono = min(monolith_upload_fresh(n) - monolith_upload_fresh(n1)
               for _ in range(runs)) / (n - n1) / 1e6  # fmt: skip
    best = None
    for _ in range(runs):
        (c2, s2), (c1, s1) = spawn_upload(n, before), spawn_upload(n1, before)
        row = ((c2 - c1) / (n - n1) / 1e6, (s2 - s1) / (n - n1) / 1e6)
        if best is None or sum(row) < sum(best):
            best = row
    assert best is not None
    return {"mono": max(mono, 1e-6), "client": best[0], "server": best[1],
            "spawn": best[0] + best[1], "ratio": (best[0] + best[1]) / max(mono, 1e-6)}  # fmt: skip


def _driver_viewing(rec: Recorder) -> list[memoryview]:
    """Make ``rec``'s ResourceSubData read its bytes as a driver entry does (the GLES
    backend's ``_blob``: ``ctx.stage.view`` of the payload's reference), then record."""
    from mgpipe.runtime.wire.spec import call_spec

    path, inner = call_spec("ResourceSubData").blob_paths[0], rec.ResourceSubData
    seen: list[memoryview] = []
    same: list[bool] = []
    _driver_viewing.same = same  # type: ignore[attr-defined]

    def driver(ctx: Any, d: Any) -> Any:
        ref = d.payload
        for key in path:
            ref = ref[key] if isinstance(key, int) else getattr(ref, key)
        view = ctx.stage.view((ref.Offset, ref.Size, ref.Seg), "ResourceSubData.Blob")
        seen.append(view)
        same.append(d.blob is view.obj)  # the decoded blob is the bytes the driver reads
        return inner(ctx, d)

    rec.ResourceSubData = driver  # type: ignore[attr-defined]
    return seen


def server_copies() -> dict[str, int]:
    """Private copies the spawn server's stage (serve.CopyingStage wired as serve() wires
    it: serve.server_applier) makes for one 2 MiB ResourceSubData whose bytes the decoder
    and then the driver entry read, and whether the decoded blob is that copy itself (no
    decoder copy on top); the client's records fed in process."""
    from mgpipe.runtime.transport.serve import CopyingStage, server_applier

    stage = CopyingStage(UPLOAD_STAGE)
    rec = Recorder()
    seen = _driver_viewing(rec)
    same = _driver_viewing.same  # type: ignore[attr-defined]
    applier = server_applier(rec, stage)
    c = Client(None, stage, transport=MonolithTransport(applier.apply),  # type: ignore[arg-type]
               reverse=applier.apply.reverse)  # fmt: skip
    tex, data = _upload_setup(c), bytes(W * H * 4)
    _uploads(c, tex, 1, data)
    copies, copied, views = stage.copies, stage.copied_bytes, len(seen)
    _uploads(c, tex, 1, data)
    c.close()
    assert len(seen) == views + 1 and bytes(seen[-1]) == data
    return {"copies": stage.copies - copies, "copied_bytes": stage.copied_bytes - copied,
            "decoded_blob_is_the_copy": int(same[-1])}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run per figure (a smoke run)")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure, best kept (default 3)")
    ap.add_argument("--monolith-upload", type=int, metavar="N", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.monolith_upload is not None:  # the fresh process of monolith_upload_fresh
        print(monolith_upload(args.monolith_upload))
        return
    runs = 1 if args.quick else args.runs
    now, lazy = warmup(runs), warmup(runs, lazy=True)
    knocks = inproc_knocks()
    with planted_always_knock():
        planted = inproc_knocks()
    n_up = 8 if args.quick else 16
    up, up0, cp = upload(runs, n_up), upload(runs, n_up, before=True), server_copies()
    print(f"{'figure':<44} {'lazy/before':>12} {'now':>10} {'target':>8}")
    for key, label in (("lo", "spawn server us/draw at 500 draws"),
                       ("hi", "spawn server us/draw at 5000 draws")):  # fmt: skip
        print(f"{label:<44} {lazy[key]['us_per_draw']:>12.1f} {now[key]['us_per_draw']:>10.1f}")
    print(f"{'  ratio 500 / 5000':<44} {lazy['ratio']:>12.2f} {now['ratio']:>10.2f} {'1.5x':>8}")
    print(f"{'  compile() calls after Welcome (500 draws)':<44} {lazy['lo']['compiles']:>12} "
          f"{now['lo']['compiles']:>10} {0:>8}")  # fmt: skip
    print(f"{'  spawn -> Welcome wall ms (500-draw run)':<44} {lazy['lo']['welcome_ms']:>12.0f} "
          f"{now['lo']['welcome_ms']:>10.0f}")  # fmt: skip
    print(f"{'inproc knocks / 1000 draws (client never waits)':<44} {planted['all']:>12.1f} "
          f"{knocks['all']:>10.1f} {'~0':>8}")  # fmt: skip
    print(f"{'2 MiB upload ms CPU: monolith':<44} {up0['mono']:>12.2f} {up['mono']:>10.2f}")
    print(
        f"{'2 MiB upload ms CPU: spawn client + server':<44} "
        f"{up0['client']:>5.2f} + {up0['server']:.2f} {up['client']:>4.2f} + {up['server']:.2f}"
    )
    print(f"{'  ratio spawn / monolith':<44} {up0['ratio']:>12.2f} {up['ratio']:>10.2f} {'2x':>8}")
    print(f"{'  server private copies per upload (stage)':<44} {'':>12} {cp['copies']:>10} {1:>8}")


if __name__ == "__main__":
    main()
