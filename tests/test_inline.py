"""The inliner (runtime/client/inline.py): a callee's body run in its caller's frame.

What a user relies on: the inlined draw does what the draw as written does -- for the
CSO cache it was read from, and for anything else standing in that place (a bench
strategy's cache, a subclass's own validate) -- and a callee the inliner cannot copy
faithfully is refused by name when the module loads, never copied wrong.
"""

from __future__ import annotations

import inspect
import linecache
import traceback
from pathlib import Path

import pytest

from mgpipe.runtime.client.api import Client
from mgpipe.runtime.client.cso_cache import RenderStateCsoCache
from mgpipe.runtime.backends.recorder import Recorder
from mgpipe.runtime.client.inline import InlineError, inline_call
from mgpipe.runtime.server.applier import Applier
from mgpipe.runtime.wire.stage import StageSegment

GL_TRIANGLES = 0x0004


# -- the shapes it inlines and the ones it refuses ---------------------------------
class Box:
    def __init__(self) -> None:
        self.total = 0
        self.log: list[int] = []

    def add(self, n):  # type: ignore[no-untyped-def]
        k = n * 2
        self.total += k
        self.log.append(k)

    def pair(self, n):  # type: ignore[no-untyped-def]
        n = n + 1  # a parameter it assigns: a local of its own
        return n, self.total

    def early(self, n):  # type: ignore[no-untyped-def]
        if n:
            return 1
        self.total = 0

    def hidden(self, n):  # type: ignore[no-untyped-def]
        self.total += undefined_name  # type: ignore[name-defined] # noqa: F821


class Other:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def add(self, n):  # type: ignore[no-untyped-def]
        self.calls.append(n)


def host(box, n):  # type: ignore[no-untyped-def]
    k = 100
    box.add(n)
    return k, box.total


def host_pair(box, n):  # type: ignore[no-untyped-def]
    got, total = box.pair(n)
    return got, total, n


def host_twice(box, n):  # type: ignore[no-untyped-def]
    box.add(n)
    box.add(n)


def host_expr(box, n):  # type: ignore[no-untyped-def]
    box.add(n + 1)


def host_early(box, n):  # type: ignore[no-untyped-def]
    box.early(n)


def host_hidden(box, n):  # type: ignore[no-untyped-def]
    box.hidden(n)


def test_the_body_runs_in_the_hosts_frame_with_its_locals_apart() -> None:
    fn = inline_call(host, "box.add(n)", Box, "add")
    b = Box()
    assert fn(b, 3) == (100, 6) and b.log == [6]  # the callee's k never met the host's


def test_an_object_of_another_class_takes_the_call_as_written() -> None:
    fn = inline_call(host, "box.add(n)", Box, "add")
    o = Other()
    o.total = 0  # type: ignore[attr-defined]
    fn(o, 5)
    assert o.calls == [5]


def test_a_final_return_is_the_sites_value_and_an_assigned_parameter_a_copy() -> None:
    fn = inline_call(host_pair, "got, total = box.pair(n)", Box, "pair")
    b = Box()
    b.total = 7
    assert fn(b, 1) == (2, 7, 1)  # the host's n untouched by the callee's n = n + 1


@pytest.mark.parametrize(
    "fn, site, method, line_says, text",
    [
        (host_twice, "box.add(n)", "add", "box.add(n)", "2 statements 'box.add(n)', expected exactly one"),
        (host, "box.nothing(n)", "add", "def host(", "0 statements 'box.nothing(n)'"),
        (host_expr, "box.add(n + 1)", "add", "box.add(n + 1)", "expected plain names"),
        (host_early, "box.early(n)", "early", "return 1", "has a Return here, expected none"),
        (host_hidden, "box.hidden(n)", "hidden", "undefined_name",
         "reads 'undefined_name', expected a name of its module or a builtin"),
    ],
)  # fmt: skip
def test_what_it_cannot_copy_faithfully_is_refused_at_its_place(fn, site: str, method: str,
                                                                line_says: str, text: str) -> None:  # fmt: skip
    """One line ``file:line:col: INLINE-SHAPE: ...`` at the statement that cannot be copied
    (or the call site), in this file."""
    with pytest.raises(InlineError) as exc:
        inline_call(fn, site, Box, method)
    path, line, col, gate, said = exc.value.located
    assert str(exc.value) == f"{path}:{line}:{col}: {gate}: {said}"
    assert path == __file__ and gate == "INLINE-SHAPE" and text in said
    source_line = linecache.getline(path, line)
    assert line_says in source_line and source_line.find(line_says) <= col - 1 + len(line_says)
    if line_says != "def host(":  # the statement itself, inside the host or the callee
        owner = fn if method == "add" else getattr(Box, method)  # the site, or the callee
        lines, first = inspect.getsourcelines(owner)
        assert first < line < first + len(lines)


def test_the_cli_refuses_an_inline_error_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command whose runtime module cannot build its inlined hot path (InlineError as
    the module loads) answers with the located line and exit 2, no traceback."""
    from mgpipe import cli

    (tmp_path / "inline_boom_cmd.py").write_text(
        "from mgpipe.runtime.client.inline import InlineError\n"
        "def run(args):\n"
        "    raise InlineError(('x.py', 3, 5), 'Box.f has a Return here, expected none')\n"
        "def register(subparsers):\n"
        "    subparsers.add_parser('inline-boom').set_defaults(func=run)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "inline_boom_cmd"))
    assert cli.main(["inline-boom"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["x.py:3:5: INLINE-SHAPE: Box.f has a Return here, expected none"]


def test_a_traceback_through_the_inlined_frame_shows_its_lines() -> None:
    fn = inline_call(host, "box.add(n)", Box, "add")
    b = Box()
    b.log = None  # type: ignore[assignment]
    with pytest.raises(AttributeError) as exc:
        fn(b, 1)
    text = "".join(traceback.format_exception(exc.value))
    assert "<mgpipe inlined host: Box.add>" in text and "log.append(" in text  # its line


# -- the draws ------------------------------------------------------------------------
def _client(cls: type[Client] = Client, sink: object = None) -> Client:
    """A client with a program and a vertex buffer bound, its records applied (or handed
    to ``sink``)."""
    stage = StageSegment(1 << 20)
    applier = Applier(Recorder(), stage)
    if sink is None:
        sink = applier.apply
    else:
        sink = (lambda out, apply: lambda r: (out.append(bytes(r)), apply(r)))(sink, applier.apply)
    c = cls(sink, stage, transport="monolith")
    vb = c.create_buffer(bytes(36))
    c.use_program(c.create_program({0: b"vs", 4: b"fs"}))
    c.vertex_attrib_pointer(0, vb, 3, stride=12)
    return c


def test_a_cache_standing_in_the_caches_place_is_called() -> None:
    """A bench strategy's stand-in (never quiet, its own validate) is asked at every draw:
    the inlined body is the CSO cache's alone."""
    c = _client()
    asked: list[object] = []

    class StandIn:
        quiet_version = None
        stats = c.tr.cso.stats

        def validate(self, rs: object) -> None:
            asked.append(rs)

    c.tr.cso = StandIn()  # type: ignore[assignment]
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    assert asked == [c.tr.rs, c.tr.rs]


def test_a_subclass_with_its_own_draw_validate_is_called() -> None:
    seen: list[str] = []

    class Watching(Client):
        def _validate_draw(self) -> None:
            seen.append("validate")
            super()._validate_draw()

    c = _client(Watching)
    c.draw_arrays(GL_TRIANGLES, 0, 3)
    assert seen == ["validate"] and c.draws == 1


def test_the_inlined_draw_sends_what_the_draw_as_written_sends() -> None:
    """The same toggles and viewports through the inlined draw and through the source
    method (``__wrapped__``): the same records, byte for byte."""
    streams = []
    for fn in (Client.draw_arrays, Client.draw_arrays.__wrapped__):
        out: list[bytes] = []
        c = _client(sink=out)
        for i in range(40):
            (c.enable if i % 3 else c.disable)("Blend")
            if i % 5 == 0:
                c.viewport(i, 0, 64 + i, 48)
            fn(c, GL_TRIANGLES, 0, 3 + i % 2)
        streams.append(out)
    assert streams[0] == streams[1] and len(streams[0]) > 40


def test_the_inlined_indexed_draw_sends_what_the_draw_as_written_sends() -> None:
    """glDrawElements the same way: toggles and scissor boxes between indexed draws."""
    streams = []
    for fn in (Client.draw_elements, Client.draw_elements.__wrapped__):
        out: list[bytes] = []
        c = _client(sink=out)
        c.bind_index_buffer(c.create_buffer(bytes(12)))
        for i in range(30):
            (c.enable if i % 2 else c.disable)("Blend")
            if i % 4 == 0:
                c.scissor(0, 0, 32 + i, 32)
            fn(c, GL_TRIANGLES, 3, 2, 2 * (i % 3))
        streams.append(out)
    assert streams[0] == streams[1] and len(streams[0]) > 30


def test_negative_control_a_validate_that_returns_early_is_refused_at_load() -> None:
    """A return in the middle of validate (which the inliner cannot turn into a jump)
    stops the module from building the inlined draw: named, not inlined wrong."""

    class Early(RenderStateCsoCache):
        def validate(self, rs):  # type: ignore[no-untyped-def, override]
            if rs is None:
                return
            self.stats.reuses += 1

    with pytest.raises(InlineError, match="Return"):
        inline_call(Client.draw_arrays.__wrapped__, "self._validate_draw()", Client,
                    "_validate_draw", inner=(("cso.validate(rs)", Early, "validate"),))  # fmt: skip


def test_a_validate_set_on_one_cache_is_refused_not_bypassed() -> None:
    """The draws run the class's validate inline: a per-instance validate would never be
    called, so the cache refuses one (slots) instead of ignoring it."""
    c = _client()
    with pytest.raises(AttributeError):
        c.tr.cso.validate = lambda rs: None  # type: ignore[method-assign]
