"""The headless EGL context: which display answered, and a failed search as one line."""

from __future__ import annotations

import os
import subprocess
import sys

from mgpipe.runtime.backends.gles.egl import EglContext, display_info
from mgpipe.runtime.backends.gles.gl import GL, CountedGL, gl_string


def test_a_gles3_context_on_a_headless_display() -> None:
    ctx = EglContext()
    try:
        info = display_info()
        assert info["platform"] in ("surfaceless", "default") or info["platform"].startswith(
            "device"
        )
        gl = CountedGL()
        assert gl_string(gl, GL.GL_VERSION).startswith("OpenGL ES 3")
        assert gl.counts["glGetString"] == 1 and gl.total() == 1
    finally:
        ctx.destroy()


def test_no_display_is_one_line_and_exit_2() -> None:
    env = dict(os.environ, MGPIPE_EGL_PLATFORM="no-such-platform")
    res = subprocess.run([sys.executable, "-m", "mgpipe", "run", "clears", "--backend", "gles"],
                         env=env, capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "MGPIPE_EGL_PLATFORM=no-such-platform" in lines[0], res.stderr
