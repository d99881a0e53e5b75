"""The server process: one child, an explicit environment, the handshake, the client's death
(seed 001 §15.1, §15.3)."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mgpipe.runtime.errors import PipeFatal
from mgpipe.runtime.transport.process import child_env
from mgpipe.runtime.transport.shm import SharedSegment
from mgpipe.runtime.transport.spawn import SpawnTransport, build_fingerprint

REPO = Path(__file__).resolve().parents[1]


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out.update(int(x) for x in text)
    return out


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_closed_transport_leaves_no_descriptor_behind() -> None:
    """Sockets and segment descriptors close with the transport; a mapping (and the
    descriptor ``mmap`` keeps inside it) goes with the last view of it."""
    SpawnTransport().close()  # warm: imports, lazily opened files
    gc.collect()
    before = _fds()
    for _ in range(3):
        SpawnTransport().close()
    gc.collect()
    assert _fds() == before


@pytest.mark.parametrize("how", ["close", "abandon"])
def test_a_server_whose_client_leaves_exits_by_itself_within_a_second(how: str) -> None:
    """Close (the report handshake, then EOF) or abandon (EOF alone: a client that dies
    leaves the same EOF): the server exits on its own, status 0, within 1 s; it is never
    the teardown's kill (that would read -9)."""
    SpawnTransport().close()  # warm: imports
    t = SpawnTransport()
    t0 = time.monotonic()
    getattr(t, how)()
    took = time.monotonic() - t0
    assert t.child.returncode == 0, t.child.returncode
    assert took < 1.0, f"{how}: the server took {took:.2f} s to leave"


def test_close_then_exit_leaves_the_server_quiet(capfd) -> None:
    """A client that sends Close and leaves without reading the report (its sockets shut
    at once): the server's report meets a closed peer and it exits quietly (status 0, no
    BrokenPipeError, no traceback on the stderr it shares), within 1 s."""
    from mgpipe.runtime.transport.control import encode
    from mgpipe.runtime.transport.framing import send_frame

    SpawnTransport().close()  # warm: imports
    capfd.readouterr()
    for _ in range(3):
        t = SpawnTransport()
        t0 = time.monotonic()
        send_frame(t._ctrl, encode("Close", report=True))
        t.abandon()
        took = time.monotonic() - t0
        assert t.child.returncode == 0 and took < 1.0, (t.child.returncode, took)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_the_process_tree_grows_by_exactly_one_and_the_child_never_spawns(monkeypatch) -> None:
    monkeypatch.setenv("MGPIPE_TRANSPORT", "spawn")  # a setting that would make a child spawn
    monkeypatch.setenv("MGPIPE_IPC_SPIN_US", "50")
    before = _children(os.getpid())
    t = SpawnTransport()
    try:
        new = _children(os.getpid()) - before
        assert new == {t.child_pid}
        assert _children(t.child_pid) == set()  # handshake done: the child is fully up
        environ = Path(f"/proc/{t.child_pid}/environ").read_bytes().split(b"\0")
        assert not [e for e in environ if e.startswith((b"MGPIPE_TRANSPORT=", b"MGPIPE_IPC_"))]
    finally:
        t.close()
    assert _children(os.getpid()) - before == set()  # reaped


def test_child_env_drops_every_transport_setting() -> None:
    env = child_env({"PATH": "/bin", "MGPIPE_TRANSPORT": "spawn", "MGPIPE_IPC_STAGE_MB": "9"},
                    {"MGPIPE_TRANSPORT": "spawn", "X": "1"})  # fmt: skip
    assert env == {"PATH": "/bin", "X": "1"}


@pytest.fixture(scope="module")
def other_catalogue_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tables generated from a copy of catalogue/ with one call appended."""
    root = tmp_path_factory.mktemp("other-catalogue")
    cat = root / "catalogue"
    subprocess.run(["cp", "-r", str(REPO / "catalogue"), str(cat)], check=True)
    calls = cat / "PipeCalls.def"
    lines = calls.read_text().rstrip("\n").split("\n")
    row = next(line for line in lines if "X(SetContextValues," in line).rstrip(" \\")
    lines[-1] += " \\"
    lines.append(row.replace("X(SetContextValues,", "X(SetContextValuesAppended,"))
    calls.write_text("\n".join(lines) + "\n")
    out = root / "tables"
    proc = subprocess.run([sys.executable, "-m", "mgpipe.cli", "gen", "--catalogue", str(cat),
                           "--out", str(out)], capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


def test_a_child_built_from_another_catalogue_is_abi_mismatch_on_both_sides(
    other_catalogue_tables: Path, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": str(other_catalogue_tables), "MGPIPE_TABLES_MODULE": "pipe_tables"}
    theirs = subprocess.run(
        [sys.executable, "-c", "from mgpipe.runtime.transport.spawn import build_fingerprint as f; print(f())"],
        env=child_env(extra=env), capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert theirs != build_fingerprint()
    log = tmp_path / "server.log"
    with pytest.raises(PipeFatal) as e:
        SpawnTransport(env=env, config={"log": str(log), "tag": "abi"})
    assert e.value.kind == "AbiMismatch"  # the client's side
    assert theirs in e.value.reason and build_fingerprint() in e.value.reason
    # the child's side: it refused the Hello itself, before it mapped anything
    assert f'fatal Fatal{{AbiMismatch, "Hello.fingerprint {build_fingerprint()} != {theirs}"}}' \
        in log.read_text()  # fmt: skip


_CLIENT = """
import os, sys, time
from mgpipe.runtime.transport.spawn import SpawnTransport
t = SpawnTransport()
print(t.child_pid, flush=True)
time.sleep(600)
"""


def test_a_killed_client_makes_the_server_exit_at_once() -> None:
    client = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CLIENT)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        server = int(client.stdout.readline())
        assert not _gone(server)
        client.send_signal(signal.SIGKILL)
        client.wait()
        t0 = time.monotonic()
        while not _gone(server) and time.monotonic() - t0 < 20:  # harness bound, not product
            time.sleep(0.01)
        assert _gone(server), "the server outlived its client"
    finally:
        client.kill()
        client.wait()


def test_shared_memory_fallback_without_memfd(monkeypatch) -> None:
    monkeypatch.delattr(os, "memfd_create")
    seg = SharedSegment.create("fallback", 5000)
    try:
        assert seg.size >= 5000 and seg.size % 4096 == 0
        seg.buf[:3] = b"abc"
        peer = SharedSegment.adopt(os.dup(seg.fd), seg.size)
        assert bytes(peer.buf[:3]) == b"abc"
        peer.buf[3:4] = b"d"
        assert bytes(seg.buf[:4]) == b"abcd"
        peer.close()
        seg.release_fd()  # the name goes; the mapping stays
        seg.buf[4:5] = b"e"
        assert bytes(seg.buf[:5]) == b"abcde"
    finally:
        seg.close()


def test_adopt_refuses_a_segment_shorter_than_announced() -> None:
    seg = SharedSegment.create("short", 4096)
    try:
        with pytest.raises(ValueError):
            SharedSegment.adopt(os.dup(seg.fd), 8192)
    finally:
        seg.close()


def test_mgpipe_run_transport_spawn_from_the_command_line(tmp_path: Path) -> None:
    env = dict(os.environ, MGPIPE_TRANSPORT="spawn")
    run = [sys.executable, "-m", "mgpipe.cli", "run", "readback", "-n", "2", "--out"]
    proc = subprocess.run(run + [str(tmp_path / "s")], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    mono = subprocess.run(run + [str(tmp_path / "m"), "--transport", "monolith"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.stdout.split()[-1] == mono.stdout.split()[-1]  # the recording digest
    # the recording the child kept comes back whole: the same file as monolith's
    assert (tmp_path / "s/readback.json").read_text() == (tmp_path / "m/readback.json").read_text()
    serve = subprocess.run([sys.executable, "-m", "mgpipe.cli", "serve"], capture_output=True,
                           text=True, timeout=60)  # fmt: skip
    assert serve.returncode == 2 and "no control socket on descriptor 3" in serve.stderr


def test_a_hello_whose_descriptors_are_not_its_segments_is_refused_by_name(tmp_path: Path) -> None:
    """A client that announces a 1 MiB ring but passes a pipe gets Fatal{ProtocolMismatch}."""
    import socket

    from mgpipe.runtime.schema import tables as _t
    from mgpipe.runtime.transport import control
    from mgpipe.runtime.transport.framing import FrameReader, send_frame
    from mgpipe.runtime.transport.process import Child

    ctrl, child_ctrl = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    child = Child(child_ctrl.fileno(), child_env())
    child_ctrl.close()
    r, w = os.pipe()
    segs = [{"seg": _t.constant("kMGPipeSegCmd"), "size": 1 << 20},
            {"seg": _t.constant("kMGPipeSegStage"), "size": 1 << 20}]  # fmt: skip
    hello = control.encode("Hello", abi=control.CONTROL_ABI, fingerprint=build_fingerprint(),
                           config={"log": str(tmp_path / "log")}, segments=segs)  # fmt: skip
    send_frame(ctrl, hello, [r, w, r])
    msg = control.decode(FrameReader(ctrl).read_frame())
    assert msg.kind == "Fatal" and msg["kind"] == "ProtocolMismatch"
    assert msg["reason"].startswith("Hello.segments")
    ctrl.close()
    os.close(r)
    os.close(w)
    assert child.wait() == 3


def test_a_backends_own_summary_crosses_and_answers_the_same_methods() -> None:
    """What a spawned backend says about itself (digest, stats(), info(), recording) comes
    back as a RemoteBackend answering the same methods; what it lacks stays absent."""
    from mgpipe.runtime.backends.recorder import Recorder
    from mgpipe.runtime.harness.runner import RemoteBackend
    from mgpipe.runtime.transport.serve import backend_summary

    class Gpu:
        def stats(self) -> dict:
            return {"gl_calls": 7}

        def info(self) -> dict:
            return {"renderer": "x"}

    gpu = RemoteBackend(backend_summary(Gpu(), recording=True))
    assert gpu.stats() == {"gl_calls": 7} and gpu.info() == {"renderer": "x"}
    assert not hasattr(gpu, "recording_digest") and not hasattr(gpu, "to_json")
    rec = Recorder()
    remote = RemoteBackend(backend_summary(rec, recording=True))
    assert remote.recording_digest() == rec.recording_digest()
    assert remote.to_json() == rec.to_json()
    assert not hasattr(RemoteBackend(backend_summary(rec, recording=False)), "to_json")


def test_the_spawn_door_takes_values_by_position_and_reads_tail_past_its_end() -> None:
    """Issue 20: the spawn door of a struct packer builds no argument list per record, and
    a steady scene's doors look at the server's ``tail`` about once a lap, not per record
    (the control for both is tests/test_transport.py's, on the same Ring and compile_door)."""
    import dis

    from test_transport import _struct_packer  # a tables-headed record, one struct call

    from mgpipe.runtime.client.api import Client
    from mgpipe.runtime.harness.runner import STAGE_CAPACITY
    from mgpipe.runtime.harness.scenes.core import blend_rep, blend_setup
    from mgpipe.runtime.transport.spawn import SpawnTransport

    t = SpawnTransport("recorder", stage_capacity=STAGE_CAPACITY, config={"summary": []})
    door = t.door(*_struct_packer())
    assert not any(i.opname == "CALL_FUNCTION_EX" for i in dis.get_instructions(door))
    looks, real = [0], t.ring._refill

    def counting(w: int) -> int:
        looks[0] += 1
        return real(w)

    t.ring._refill = counting  # type: ignore[method-assign]
    c = Client(None, t.stage, transport=t)  # type: ignore[arg-type]
    blend_setup(c)
    for _ in range(2000):
        blend_rep(c)
    t.wait_applied()
    records = t.emit_seq
    c.close()
    assert not t.lost and records >= 4000
    assert looks[0] <= records // 50, (looks[0], records)  # measured: 1 (no lap in 400 KiB)
