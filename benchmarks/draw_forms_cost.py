"""Client CPU, wire and staged bytes per draw of each draw form (issue 19): direct, indirect, user indices, client arrays; recorder backend, monolith. Run: .venv/bin/python benchmarks/draw_forms_cost.py"""
import struct, time
from mgpipe.runtime.backends.registry import make_backend
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.stage import StageSegment
from mgpipe.runtime.harness.scenes.kit import GL, setup, STRIDE
from mgpipe.runtime.harness.scenes.draws import triangles
N = 20000
def client():
    st = StageSegment(1 << 24); c = Client(Applier(make_backend("recorder"), st).apply, st, width=64, height=64)
    setup(c, triangles()); return c
def run(label, fn, c):
    fn(c)  # warm (pushes state)
    w0, s0, t0 = c.wire_bytes, c.staged_bytes, time.perf_counter()
    for _ in range(N): fn(c)
    dt = time.perf_counter() - t0
    print(f"{label:28s} {1e6*dt/N:7.2f} us/draw  {(c.wire_bytes-w0)/N:6.1f} wire B/draw  {(c.staged_bytes-s0)/N:6.1f} staged B/draw")
c = client(); run("draw_arrays (direct)", lambda c: c.draw_arrays(GL.TRIANGLES, 0, 6), c)
c = client(); c.bind_indirect_buffer(c.create_buffer(struct.pack("<4I", 6, 1, 0, 0)))
run("draw_arrays_indirect", lambda c: c.draw_arrays_indirect(GL.TRIANGLES, 0), c)
c = client(); c.bind_index_buffer(c.create_buffer(struct.pack("<6H", *range(6))))
run("draw_elements (buffer)", lambda c: c.draw_elements(GL.TRIANGLES, 6, 2), c)
c = client(); idx = struct.pack("<6H", *range(6))
run("draw_elements (user indices)", lambda c: c.draw_elements(GL.TRIANGLES, 6, 2, indices=idx), c)
c = client(); tri = triangles(); data = struct.pack(f"<{len(tri)}f", *tri)
c.vertex_attrib_pointer(0, data, 3, stride=STRIDE); c.vertex_attrib_pointer(1, data, 4, stride=STRIDE, offset=12)
run("draw_arrays (client arrays)", lambda c: c.draw_arrays(GL.TRIANGLES, 0, 6), c)
