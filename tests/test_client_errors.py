"""GL's error model on the client (issue 21 item 5 / 7): misuse a GL implementation answers
with an error is a named :class:`ClientError` (its ``gl_error`` the GL error) raised before
anything is encoded -- the wire sees nothing, the context lives on -- and the client's
budgets and slot bands are the server's."""

from __future__ import annotations

import struct
import threading
import time

import pytest

from _gles import gles_client
from _vk_support import setup_color

from mgpipe.runtime import budgets
from mgpipe.runtime.budgets import Budgets, ResourceLimit
from mgpipe.runtime.client.api import Client, ClientError
from mgpipe.runtime.client.slots import SlotAllocator
from mgpipe.runtime.errors import HandleExhausted, SecondProducer, TransportShutdown
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.wire.stage import StageSegment

GL_TRIANGLES = 4


def _recorder_client() -> Client:
    stage = StageSegment(1 << 20)
    return Client(Applier(Recorder(), stage).apply, stage, transport="monolith",
                  width=16, height=16)  # fmt: skip


def _made(c: Client, what: str) -> object:
    if what == "buffer":
        return c.create_buffer(b"1234")
    if what == "texture":
        return c.create_texture_2d(4, 4)
    prog, _vb = setup_color(c)
    return prog


MISUSE = {  # name -> (object to make, the misuse, the GL error[, the delete before it])
    "draw_arrays_mode_string": (None, lambda c, o: c.draw_arrays("tri", 0, 3), "GL_INVALID_ENUM"),
    "draw_arrays_mode_99": (None, lambda c, o: c.draw_arrays(99, 0, 3), "GL_INVALID_ENUM"),
    "draw_arrays_negative_count": (None, lambda c, o: c.draw_arrays(GL_TRIANGLES, 0, -3),
                                   "GL_INVALID_VALUE"),
    "blend_func_NOPE": (None, lambda c, o: c.blend_func("NOPE", "One"), "GL_INVALID_ENUM"),
    "blend_func_value_99": (None, lambda c, o: c.blend_func(99, "One"), "GL_INVALID_ENUM"),
    "depth_func_12345": (None, lambda c, o: c.depth_func(12345), "GL_INVALID_ENUM"),
    "depth_func_sentinel": (None, lambda c, o: c.depth_func("DepthTestFuncCount"),
                            "GL_INVALID_ENUM"),
    "viewport_None": (None, lambda c, o: c.viewport(None, 0, 4, 4), "GL_INVALID_VALUE"),
    "viewport_nan": (None, lambda c, o: c.viewport(0, float("nan"), 4, 4), "GL_INVALID_VALUE"),
    "viewport_inf": (None, lambda c, o: c.viewport(0, 0, float("inf"), 4), "GL_INVALID_VALUE"),
    "scissor_None": (None, lambda c, o: c.scissor(0, 0, None, 4), "GL_INVALID_VALUE"),
    "bind_texture_unit_-1": (None, lambda c, o: c.bind_texture(-1, None), "GL_INVALID_VALUE"),
    "bind_texture_unit_1e9": ("texture", lambda c, o: c.bind_texture(10**9, o), "GL_INVALID_VALUE"),
    "double_delete_buffer": ("buffer", lambda c, o: c.delete_buffer(o),
                             "GL_INVALID_OPERATION", "delete_buffer"),
    "buffer_data_after_delete": ("buffer", lambda c, o: c.buffer_data(o, b"1"),
                                 "GL_INVALID_OPERATION", "delete_buffer"),
    "attrib_pointer_after_delete": ("buffer", lambda c, o: c.vertex_attrib_pointer(0, o, 3), "GL_INVALID_OPERATION", "delete_buffer"),
    "double_delete_texture": ("texture", lambda c, o: c.delete_texture(o),
                              "GL_INVALID_OPERATION", "delete_texture"),
    "sub_image_after_delete": ("texture", lambda c, o: c.tex_sub_image_2d(o, 0, 0, 0, 1, 1, b"1234"), "GL_INVALID_OPERATION", "delete_texture"),
    "bind_texture_after_delete": ("texture", lambda c, o: c.bind_texture(0, o),
                                  "GL_INVALID_OPERATION", "delete_texture"),
    "double_delete_program": ("program", lambda c, o: c.delete_program(o),
                              "GL_INVALID_OPERATION", "delete_program"),
    "use_program_after_delete": ("program", lambda c, o: c.use_program(o),
                                 "GL_INVALID_OPERATION", "delete_program"),
    "reflection_nested": (None, lambda c, o: c.create_program({0: b"", 4: b""}, b"[" * 2000),
                          "GL_INVALID_OPERATION"),
    "reflection_rows_not_objects": (None, lambda c, o: c.create_program(
        {0: b"", 4: b""}, b'{"samplers": ["a"]}'), "GL_INVALID_OPERATION"),
}


@pytest.mark.parametrize("name", sorted(MISUSE))
def test_misuse_is_a_named_client_error_and_never_reaches_the_wire(name: str) -> None:
    setup, misuse, gl_error, *delete = MISUSE[name]
    with gles_client() as (c, be):
        obj = _made(c, setup) if setup else None
        if delete:  # the legal first delete goes out
            getattr(c, delete[0])(obj)
        c.present()
        records = c.em.records
        t0 = time.process_time()
        with pytest.raises(ClientError) as exc:
            misuse(c, obj)
        # refused before any work its arguments ask for (bind_texture(10**9) once built a
        # 10^9-element list first): a check costs microseconds, a tenth of a second is a bug
        assert time.process_time() - t0 < 0.1
        assert exc.value.gl_error == gl_error
        assert c.em.records == records  # nothing encoded
        assert c.present() > 0 and not c.device_lost


def test_the_misuse_check_control_a_legal_call_goes_out() -> None:
    """Control: the same calls, legal, are encoded (the checks refuse only the misuse)."""
    with gles_client() as (c, be):
        buf = c.create_buffer(b"1234")
        before = c.em.records
        c.buffer_data(buf, b"12345678")
        c.blend_func("SrcAlpha", "OneMinusSrcAlpha")
        c.depth_func("LessEqual")
        c.viewport(0, 0, 8, 8)
        c.delete_buffer(buf)
        assert c.em.records > before
        assert c.present() > 0


def test_client_budgets_refuse_before_encoding() -> None:
    with gles_client() as (c, be):
        setup_color(c)
        before = c.em.records
        with pytest.raises(ResourceLimit, match="draw_arrays.instances"):
            c.draw_arrays(GL_TRIANGLES, 0, 3, instances=10**6)
        with pytest.raises(ResourceLimit, match="draw_arrays.count"):
            c.draw_arrays(GL_TRIANGLES, 0, 2**32 - 1)
        with pytest.raises(ResourceLimit, match="buffer_data.size"):
            c.buffer_data(c.create_buffer(), 2**32 - 1)
        with pytest.raises(ResourceLimit, match="create_texture.extent"):
            c.create_texture_2d(65536, 65536)
        assert c.em.by_call["DrawVbo"] == 0
        assert c.em.records - before == 1  # the one ResourceCreate of the empty buffer
        # control: at the budget, not past it
        c.draw_arrays(GL_TRIANGLES, 0, 3, instances=budgets.budgets().draw_instances)
        assert c.present() > 0


def test_budgets_read_from_the_environment_and_refuse_nonsense() -> None:
    b = Budgets.from_env({"MGPIPE_BUDGET_DRAW_INSTANCES": "7"})
    assert b.draw_instances == 7 and b.buffer_bytes == Budgets().buffer_bytes
    with pytest.raises(ValueError, match="MGPIPE_BUDGET_BUFFER_BYTES"):
        Budgets.from_env({"MGPIPE_BUDGET_BUFFER_BYTES": "-1"})


def test_server_refuses_past_the_budget_and_the_ledger_releases() -> None:
    """The server's ledger: live bytes past ``resource_bytes`` are refused; a destroyed
    buffer's bytes come back (control: the same respecify passes after the delete)."""
    budgets.set_budgets(Budgets(resource_bytes=3000, buffer_bytes=2000))
    try:
        with gles_client() as (c, be):
            a = c.create_buffer(bytes(2000))
            c.present()
            b = c.create_buffer()
            c.delete_buffer(a)
            c.buffer_data(b, bytes(2000))  # fits once a's 2000 bytes are gone
            assert c.present() > 0
        with gles_client() as (c, be):
            c.create_buffer(bytes(2000))
            budgets.client_buffer, saved = (lambda *a: None), budgets.client_buffer
            try:
                with pytest.raises(ResourceLimit, match="ResourceRespecify.Width"):
                    c.create_buffer(bytes(1500))
                    c.present()
            finally:
                budgets.client_buffer = saved
    finally:
        budgets.set_budgets(None)


def test_client_slot_band_is_the_server_table() -> None:
    """The client mints no slot the server's tables cannot hold: HandleExhausted on the
    client, by name, at the server's count."""
    budgets.set_budgets(Budgets(objects_per_kind=8))
    try:
        c = _recorder_client()
        bufs = [c.create_buffer() for _ in range(8)]
        before = c.em.records
        with pytest.raises(HandleExhausted, match="Buffer.Slots"):
            c.create_buffer()
        assert c.em.records == before
        assert c.present() > 0  # the context lives
        del bufs
    finally:
        budgets.set_budgets(None)
    alloc = SlotAllocator("Buffer")
    table = Applier(Recorder(), StageSegment(1 << 16)).tables
    top = {t.kind: t.ordinary_last for t in table.values()}
    assert alloc._ordinary.last == top["Buffer"] == budgets.budgets().objects_per_kind


def test_spawn_refuses_calls_after_close_and_a_second_producer() -> None:
    """While one thread is putting a record into the ring, another thread's submit is
    SecondProducer (nothing of it reaches the ring); a context handed to another thread
    afterwards goes on; after close every call raises TransportShutdown."""
    from mgpipe.runtime.transport.spawn import SpawnTransport

    t = SpawnTransport()
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    c.create_buffer(b"1234")
    rec = bytes(c.em.encoder.encode("Flush", {}))
    inside, go = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def slow_pack(view, off, *values) -> None:  # the producer, stopped inside put
        view[off : off + len(rec)] = rec
        inside.set()
        go.wait(10)

    def second() -> None:
        inside.wait(10)
        try:
            t.submit(rec)
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            errors.append(e)
        go.set()

    th = threading.Thread(target=second)
    th.start()
    before = t.emit_seq
    t.put(len(rec), slow_pack, ())
    th.join(10)
    assert len(errors) == 1 and isinstance(errors[0], SecondProducer)
    assert t.emit_seq == before + 1  # the producer's record only
    handed: list[int] = []
    th = threading.Thread(target=lambda: handed.append(c.present()))  # a handover: allowed
    th.start()
    th.join(30)
    assert handed and handed[0] > 0
    c.close()
    with pytest.raises(TransportShutdown, match="Transport.Closed"):
        c.present()
    with pytest.raises(TransportShutdown, match="Transport.Closed"):
        t.flush()


def test_without_the_liveness_check_the_double_delete_loses_the_context(monkeypatch) -> None:
    """Negative control: the liveness check removed, the second delete reaches the wire
    and the server latches ProtocolCorruption -- what the check prevents."""
    import mgpipe.runtime.client.api as api
    from mgpipe.runtime.errors import ProtocolCorruption

    monkeypatch.setattr(api, "live", lambda *a: None)
    with gles_client() as (c, be):
        buf = c.create_buffer(b"1234")
        c.delete_buffer(buf)
        with pytest.raises(ProtocolCorruption, match="Stale|DoubleFree"):
            c.delete_buffer(buf)
            c.present()


def test_four_producers_on_spawn_neither_corrupt_nor_lose_a_record() -> None:
    """Four threads submitting at once into one spawn ring (the issue saw 4 threads corrupt
    it every time, 2 lose records): every submit either lands or is SecondProducer, and the
    server applies exactly the ones that landed, with no corruption latched."""
    from mgpipe.runtime.transport.spawn import SpawnTransport

    t = SpawnTransport()
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    rec = bytes(c.em.encoder.encode("Flush", {}))
    base = t.emit_seq  # what the client's construction sent
    landed, refused, other = [0] * 4, [0] * 4, []
    start = threading.Barrier(4)

    def producer(k: int) -> None:
        start.wait(10)
        for _ in range(500):
            try:
                t.submit(rec)
                landed[k] += 1
            except SecondProducer:
                refused[k] += 1
            except BaseException as e:  # noqa: BLE001 - the test inspects it
                other.append(e)
                return

    threads = [threading.Thread(target=producer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    before_close = t.emit_seq
    report = t.close(report=True)
    assert other == [] and not t.lost
    assert sum(landed) + sum(refused) == 4 * 500 and sum(landed) == before_close - base
    assert sum(landed) > 0
    assert report is not None and report["applied_seq"] == before_close  # none lost
