"""Every command of the README's table, given a wrong argument, a bad environment setting or
Ctrl-C, answers in one line and the documented exit code -- never a traceback.

- a command-line mistake: ``<command line>:1:1: GATE: ...`` naming the closest names, exit 2;
- a bad environment setting: ``<environment>:1:1: BAD-ENVIRONMENT: ...``, exit 2, before
  the command starts;
- an output path that cannot be written: refused before any work;
- Ctrl-C (SIGINT sent to the command's process group mid-run, as a terminal does): one
  line, exit 130; the spawned server process leaves quietly with its client.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mgpipe import cli

REPO_ROOT = Path(__file__).resolve().parent.parent


def _one_line(err: str) -> str:
    assert "Traceback" not in err and "usage:" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- wrong arguments --------------------------------------------------------------------
@pytest.mark.parametrize("argv, gate, says", [
    ([], "MISSING-ARGUMENT", "no command given to mgpipe, expected one of bench, gen"),
    (["rn", "all"], "UNKNOWN-COMMAND", "no mgpipe command named 'rn', expected the closest: run"),
    (["--versio"], "UNKNOWN-OPTION", "expected the closest: --version"),
    (["gen", "--chek"], "UNKNOWN-OPTION", "no mgpipe gen option named '--chek', expected the closest: --check"),
    (["gen", "--check", "--catalog", "x"], "UNKNOWN-OPTION", "expected the closest: --catalogue"),
    (["calls", "--jsn"], "UNKNOWN-OPTION", "no mgpipe calls option named '--jsn', expected the closest: --json"),
    (["layout", "--jsn"], "UNKNOWN-OPTION", "expected the closest: --json"),
    (["chunks", "--jsn"], "UNKNOWN-OPTION", "expected the closest: --json"),
    (["self-test", "-k"], "MISSING-VALUE", "mgpipe self-test -k has no value"),
    (["run", "all", "--bakend", "gles"], "UNKNOWN-OPTION",
     "no mgpipe run option named '--bakend', expected the closest: --backend"),
    (["run", "all", "--back", "gles"], "UNKNOWN-OPTION", "expected the closest: --backend"),
    (["run", "all", "-n", "abc"], "BAD-ARGUMENT", "mgpipe run -n 'abc' is not an integer"),
    (["run", "all", "--transport", "spwn"], "BAD-CHOICE",
     "no mgpipe run --transport value named 'spwn', expected the closest: spawn"),
    (["run"], "MISSING-ARGUMENT", "mgpipe run needs scene"),
    (["run", "all", "extra"], "UNEXPECTED-ARGUMENT", "mgpipe run got 'extra' too many"),
    (["compare", "all", "--transport", "spwn"], "BAD-CHOICE", "expected the closest: spawn"),
    (["compare", "all", "--outt", "x"], "UNKNOWN-OPTION", "expected the closest: --out"),
    (["bench", "--quik"], "UNKNOWN-OPTION", "no mgpipe bench option named '--quik', expected the closest: --quick"),
    (["serve", "--now"], "UNKNOWN-OPTION", "no mgpipe serve option named '--now'"),
    (["version", "x"], "UNEXPECTED-ARGUMENT", "mgpipe version got 'x' too many"),
])  # fmt: skip
def test_an_argument_mistake_is_one_located_line(argv, gate, says, capsys) -> None:
    assert cli.main(argv) == 2
    out = capsys.readouterr()
    line = _one_line(out.err)
    assert line.startswith(f"<command line>:1:1: {gate}: "), line
    assert says in line and ", expected " in line, line
    assert out.out == ""


def test_the_console_entry_answers_a_mistake_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "run", "all", "--bakend", "gles"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert _one_line(proc.stderr).startswith("<command line>:1:1: UNKNOWN-OPTION: ")


def test_python_m_mgpipe_in_an_uninstalled_source_tree_names_the_fix() -> None:
    # -S: no site-packages, so neither the install nor its dependencies are there; the
    # repository root on sys.path makes mgpipe/ importable without its mapped subpackages
    proc = subprocess.run([sys.executable, "-S", "-m", "mgpipe", "calls"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    line = _one_line(proc.stderr)
    assert line.startswith("<command line>:1:1: NOT-INSTALLED: "), line
    assert "pip install -e ." in line


def test_a_missing_dependency_inside_a_command_is_one_line(monkeypatch, capsys) -> None:
    def boom(args):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")

    real = cli._parse

    def parse(parser, argv):
        args = real(parser, argv)
        args.func = boom
        return args

    monkeypatch.setattr(cli, "_parse", parse)
    assert cli.main(["calls"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("<command line>:1:1: MISSING-MODULE: no module named 'matplotlib'")


# -- environment settings -----------------------------------------------------------------
@pytest.mark.parametrize("name, value, argv, says", [
    ("MGPIPE_TRANSPORT", "spwn", ["run", "all"], "=spwn is not a transport, expected the closest: spawn"),
    ("MGPIPE_TABLES_MODULE", "no_such_tables", ["run", "clears"], "=no_such_tables names no module"),
    ("MGPIPE_TABLES_MODULE", "json", ["run", "blend-toggle"], "=json lacks CALLS"),
    ("MGPIPE_TABLES_MODULE", "not a name", ["compare", "clears"], "='not a name' is not a dotted module name"),
    ("MGPIPE_CLANG_ARGS", '"-DX', ["gen", "--check"], "cannot be split like a shell line"),
    ("MGPIPE_VK_VALIDATION", "maybe", ["run", "clears"], "=maybe is not a validation mode, expected on, off or auto"),
    ("MGPIPE_EGL_PLATFORM", "surfless", ["serve"], "expected the closest: surfaceless"),
])  # fmt: skip
def test_a_bad_environment_setting_is_refused_before_the_command(name, value, argv, says,
                                                                  monkeypatch, capsys) -> None:  # fmt: skip
    monkeypatch.setenv(name, value)
    assert cli.main(argv) == 2
    out = capsys.readouterr()
    line = _one_line(out.err)
    assert line.startswith(f"<environment>:1:1: BAD-ENVIRONMENT: {name}="), line
    assert says in line, line
    assert out.out == ""  # refused before the command printed anything


@pytest.mark.parametrize("argv", [["calls"], ["gen", "--check"], ["chunks"]])
def test_the_generator_commands_do_not_read_the_runtime_settings(argv, monkeypatch, capsys) -> None:
    """gen must run while the generated tables are broken: a runtime setting is not its."""
    for name, value in (("MGPIPE_TABLES_MODULE", "no_such_tables"), ("MGPIPE_TRANSPORT", "spwn"),
                        ("MGPIPE_VK_VALIDATION", "maybe"), ("MGPIPE_EGL_PLATFORM", "surfless")):
        monkeypatch.setenv(name, value)
    assert cli.main(argv) == 0, capsys.readouterr().err


def test_a_vulkan_device_that_is_not_there_is_one_line(monkeypatch, capsys) -> None:
    monkeypatch.setenv("MGPIPE_VK_DEVICE", "no-such-gpu")  # matched against the devices there are
    assert cli.main(["run", "clears", "--backend", "vulkan"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "no device named like 'no-such-gpu' (available: 0: " in line, line


def test_a_cache_dir_that_is_a_file_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "f").write_text("")
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path / "f"))
    assert cli.main(["calls"]) == 2
    assert "MGPIPE_CACHE_DIR=" in _one_line(capsys.readouterr().err)
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path / "new"))  # not there yet: fine
    assert cli.main(["chunks"]) == 0


def test_the_bad_tables_module_in_a_subprocess_is_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, MGPIPE_TABLES_MODULE="no_such_tables")
    proc = subprocess.run([sys.executable, "-m", "mgpipe", "run", "blend-toggle"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert "BAD-ENVIRONMENT: MGPIPE_TABLES_MODULE=" in _one_line(proc.stderr)


# -- output paths, before any work ------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize("where", ["file", "under-a-file"])
def test_an_output_path_that_cannot_be_a_directory_is_refused_up_front(
        command, where, tmp_path: Path, monkeypatch, capsys) -> None:  # fmt: skip
    from mgpipe.runtime.harness import compare, runner

    def never(*a, **k):
        raise AssertionError("a scene ran before the output path was checked")

    monkeypatch.setattr(runner, "run_scene", never)
    monkeypatch.setattr(compare, "compare_scene", never)
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" if where == "file" else tmp_path / "afile" / "x"
    assert cli.main([command, "all", "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("<command line>:1:1: OUT-NOT-A-DIRECTORY: --out "), line


# -- Ctrl-C ------------------------------------------------------------------------------
def _interrupted(argv: list[str], after: float, tmp_path: Path,
                 env: dict[str, str] | None = None) -> tuple[int, str, str]:  # fmt: skip
    """Run ``mgpipe argv``, send SIGINT to its process group ``after`` seconds in (what a
    terminal's Ctrl-C does), and return its exit code, stdout and stderr (read to EOF:
    every process holding them, a server child included, has ended)."""
    proc = subprocess.Popen([sys.executable, "-m", "mgpipe", *argv], cwd=tmp_path,
                            env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        time.sleep(after)
        assert proc.poll() is None, f"mgpipe {' '.join(argv)} ended before the interrupt"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return proc.returncode, out, err


def _assert_interrupted(rc: int, err: str, command: str) -> None:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "BrokenPipeError" not in err, err
    assert rc == cli.EXIT_INTERRUPTED, (rc, err)
    assert err.splitlines()[-1] == f"mgpipe {command}: interrupted (Ctrl-C), stopped before its end"


#: the cheapest invocation of each long-running command that is surely still running
#: 1-2 s in (a cold layout cache makes gen read the headers with libclang).
LONG = {
    "gen": (["gen", "--out", "{tmp}/generated"], 1.0, {"MGPIPE_CACHE_DIR": "{tmp}/cache"}),
    "gen --check": (["gen", "--check"], 1.0, {"MGPIPE_CACHE_DIR": "{tmp}/cache"}),
    "self-test": (["self-test"], 1.5, {}),
    "run": (["run", "viewport-churn", "-n", "10000000"], 1.5, {}),
    "run inproc": (["run", "viewport-churn", "--transport", "inproc", "-n", "10000000"], 1.5, {}),
    "run spawn": (["run", "all", "--backend", "vulkan", "--transport", "spawn", "-n", "100000"],
                  2.0, {}),
    "compare": (["compare", "all"], 2.0, {}),
    "bench": (["bench", "--quick"], 2.0, {}),
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(LONG))
def test_ctrl_c_mid_run_is_one_line_and_exit_130(key: str, tmp_path: Path) -> None:
    argv, after, env = LONG[key]
    fill = {"tmp": str(tmp_path)}
    argv = [a.format(**fill) for a in argv]
    env = {k: v.format(**fill) for k, v in env.items()}
    rc, _out, err = _interrupted(argv, after, tmp_path, env)
    _assert_interrupted(rc, err, argv[0])


@pytest.mark.parametrize(
    "argv",
    [
        ["calls"],
        ["layout"],
        ["chunks"],
        ["--version"],
        ["layout", "RenderStateParameters", "--json"],
    ],
)
def test_ctrl_c_while_a_quick_command_prints_is_one_line_and_exit_130(argv, monkeypatch,
                                                                       capsys) -> None:  # fmt: skip
    """The quick commands end before a real signal could land: the interrupt is planted
    in their first write to stdout (where such a command spends its time)."""

    class Interrupting:
        def write(self, text: str) -> int:
            raise KeyboardInterrupt

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stdout", Interrupting())
    assert cli.main(argv) == cli.EXIT_INTERRUPTED
    line = _one_line(capsys.readouterr().err)
    assert line.endswith("interrupted (Ctrl-C), stopped before its end"), line


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _spawn_run(tmp_path: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "mgpipe", "run", "viewport-churn",
                             "--transport", "spawn", "-n", "10000000"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not (kids := _children(proc.pid)) or not _ignores_sigint(kids[0]):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.2)  # the server is serving
    return proc, kids[0]


def _ignores_sigint(pid: int) -> bool:
    """The server has set SIGINT to SIG_IGN (its serve loop's first act): waited for by
    state, never by a fixed sleep (a loaded machine takes seconds to start a child)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ign = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
    return bool(ign >> (signal.SIGINT - 1) & 1)


def test_the_spawned_server_ignores_ctrl_c_and_leaves_quietly_with_its_client(tmp_path) -> None:
    proc, child = _spawn_run(tmp_path)
    try:
        os.kill(child, signal.SIGINT)  # the client decides when the session ends
        time.sleep(0.5)
        assert Path(f"/proc/{child}").exists() and proc.poll() is None
        assert os.getpgid(child) != os.getpgid(proc.pid)  # a terminal's Ctrl-C misses it
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    _assert_interrupted(proc.returncode, err, "run")
    assert (
        not Path(f"/proc/{child}").exists()
        or "zombie" in Path(f"/proc/{child}/status").read_text().lower()
    )


def _gone_after(pid: int, since: float, limit: float = 30.0) -> float:
    """Seconds from ``since`` until ``pid`` has exited (gone, or a zombie awaiting its
    reaper), polled every 10 ms."""
    while time.monotonic() - since < limit:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state in ("Z", "X"):
            break
        time.sleep(0.01)
    return time.monotonic() - since


def test_the_spawned_server_leaves_quietly_when_its_client_is_killed(tmp_path) -> None:
    proc, child = _spawn_run(tmp_path)
    t0 = time.monotonic()
    proc.kill()  # SIGKILL: the client cannot say goodbye
    gone = _gone_after(child, t0)
    _out, err = proc.communicate(timeout=60)  # EOF: the server, which shares stderr, ended
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert err == ""
    assert gone < 1.0, f"the server outlived its killed client by {gone:.2f} s"


_CALLBACK_SIGINT = """
import os, signal, sys, time, weakref
from mgpipe import cli
if sys.argv[1] == "hooked":
    cli._keep_ctrl_c_out_of_callbacks()
class Obj: pass
def landed_in_a_callback(_ref):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.01)
try:
    obj = Obj(); ref = weakref.ref(obj, landed_in_a_callback); del obj
    for _ in range(3_000_000): pass
    time.sleep(0.2)
    print("ran on")
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("mode, expected", [("hooked", "interrupted"), ("plain", "ran on")])
def test_a_ctrl_c_landing_in_a_weakref_callback_still_interrupts(mode: str, expected: str) -> None:
    """Python swallows a KeyboardInterrupt raised inside a weakref callback ("Exception
    ignored in ..."); the CLI delivers it again (the plain run is the control: it runs on)."""
    proc = subprocess.run([sys.executable, "-c", _CALLBACK_SIGINT, mode], capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.strip() == expected, proc.stderr
    if mode == "hooked":
        assert "Exception ignored" not in proc.stderr, proc.stderr
