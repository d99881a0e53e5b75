"""The render-state block and its accounting: the one commit path of every setter.

:class:`RenderBlock` holds the ``RenderStateParameters`` bytes (a ``bytearray`` with a numpy
structured view ``p`` for the setters to write through), the two wire counters
``version`` / ``pipeline_version`` (``Uint16``, they wrap) and their widened twins
``version_wide`` / ``pipeline_version_wide`` (they never wrap: the CSO cache compares
these, so 65,536 setter calls between two draws cause an extra push, never a missed one,
seed 001 §5.2, seed 004 §5.2).

A setter's write becomes a *patch*: per byte range its row writes, (offset, end, bytes, is
pipeline, dynamic chunk bit). :meth:`RenderBlock._apply` compares and copies a patch and
accounts what moved: the dynamic chunks dirtied (``dyn_dirty``), the patch's token (a small
int per patch value, :func:`token`) appended to the pipeline log (``pipe_log``, the
transition cache's key) and the counters per the
row's bump group. A setter whose bytes depend on its arguments only derives its patch
once per argument tuple (:meth:`RenderBlock._memo_commit`); any other runs its write
and diffs (:meth:`RenderBlock._commit`); a setter with a precompiled kit (``setter_kits``)
packs its bytes directly (:meth:`RenderBlock._span` for a dynamic run, else a patch
into :meth:`RenderBlock._apply`). Guards are bitwise: a patch that moves no byte bumps
nothing.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from functools import lru_cache
from operator import itemgetter

import numpy as np

from ..schema import tables as _t
from ..schema.layouts import dtype as struct_dtype
from .setter_rows import SetterRow, row_for, rs_struct

__all__ = ["BUMP", "PACK_ERRORS", "PIPE_LOG_LIMIT", "RenderBlock", "row_patch_plan"]

_VERSION_FIELD = ("MGPBindRenderState", "Version")  # the wire width of the counters


@lru_cache(maxsize=None)
def _counter_mask() -> int:
    return _t.field(*_VERSION_FIELD).max_value


#: bump group -> 0 none, 1 m_version, 2 conditional, 3 both
BUMP = {"kBumpNone": 0, "kBumpVersion": 1, "kBumpConditional": 2, "kBumpBoth": 3}
#: what a precompiled packer raises for an argument the general path must take (or refuse)
PACK_ERRORS = (struct.error, OverflowError, TypeError, ValueError, KeyError)
#: setter arguments remembered per row for the patch memo (bounded: enums and flags only)
_MEMO_LIMIT = 4096
#: pipeline writes remembered between two validates before the log gives up (-> a hash)
PIPE_LOG_LIMIT = 32


@lru_cache(maxsize=None)
def _dyn_chunks() -> tuple[tuple[int, int], ...]:
    return tuple((int(o), int(n)) for o, n in _t.tables().RENDER_STATE["dynamic_chunks"])


@lru_cache(maxsize=None)
def row_patch_plan(row: SetterRow) -> tuple[tuple[int, int, bool, int], ...]:
    """Per range of ``row``: (offset, end, is pipeline, dynamic chunk bit)."""
    out = []
    for off, n, cls in row.ranges:
        bit = 0
        if cls != "kPipeline":
            for i, (o, size) in enumerate(_dyn_chunks()):
                if o <= off and off + n <= o + size:
                    bit = 1 << i
                    break
            else:
                raise _t.TablesError(f"{row.label}: range {off}+{n} is in no dynamic chunk")
        out.append((off, off + n, cls == "kPipeline", bit))
    return tuple(out)


#: pipeline-log tokens: a patch's value -> a small int that stands for it in the log (the
#: transition cache's key hashes a tuple of ints, never the nested patch tuples); tokens are
#: never reused, so clearing the table (past its limit) only costs misses
_TOKENS: dict[tuple, int] = {}
_TOKEN_LIMIT = 1 << 16
_next_token = itertools.count(1).__next__


def token(patch: tuple) -> int:
    """The log token of ``patch`` (equal patches, equal tokens; see :data:`_TOKENS`)."""
    t = _TOKENS.get(patch)
    if t is None:
        if len(_TOKENS) >= _TOKEN_LIMIT:
            _TOKENS.clear()
        t = _TOKENS[patch] = _next_token()
    return t


def _runs(patch: tuple) -> list[tuple[slice, bytes]]:
    """The fewest slices that write ``patch``: adjacent ranges merged, and evenly spaced
    one-byte ranges as one strided slice."""
    ranges = sorted((o, e, b) for o, e, b, _, _ in patch)
    merged: list[list] = []
    for o, e, b in ranges:
        if merged and merged[-1][1] == o:
            merged[-1][1], merged[-1][2] = e, merged[-1][2] + b
        else:
            merged.append([o, e, b])
    starts = [o for o, _, _ in merged]
    steps = {b - a for a, b in zip(starts, starts[1:])}
    if len(merged) > 1 and len(steps) == 1 and all(e - o == 1 for o, e, _ in merged):
        step = steps.pop()
        return [(slice(starts[0], starts[-1] + 1, step), b"".join(b for _, _, b in merged))]
    return [(slice(o, e), b) for o, e, b in merged]


def _check(patch: tuple) -> tuple | None:
    """(getter, wanted, slice, stores, token) of an all-pipeline ``patch`` (the memo appends the
    row's bump group: what :meth:`RenderBlock._apply` unpacks): the getter takes the
    fewest slices of the block that cover it (:func:`_runs`) in one call, ``wanted`` is what
    they must hold, ``stores`` writes them (each from a ``bytearray``: CPython copies any
    other right-hand side into a temporary one first; for one run ``slice`` and ``stores``
    are its slice and bytearray, no loop to store them, else ``slice`` is None),
    ``token`` stands for the patch in the pipeline log."""
    if not patch or not all(pipe for _, _, _, pipe, _ in patch):
        return None
    runs = _runs(patch)
    getter = itemgetter(*[sl for sl, _ in runs])
    wanted = tuple(b for _, b in runs)
    stores = tuple((sl, bytearray(b)) for sl, b in runs)
    if len(runs) == 1:  # the slice and its bytearray themselves (no loop to store them)
        return getter, wanted[0], stores[0][0], stores[0][1], token(patch)
    return getter, wanted, None, stores, token(patch)


@lru_cache(maxsize=None)
def _span_code(arity: int, finite: bool, run: tuple | None) -> Any:
    """The code of a span setter of ``arity`` arguments (:meth:`RenderBlock._span`): the
    finite check first where ``finite``, then, where the kit gives ``run`` (its offset,
    end, chunk bit, bump group, repeat count and whether a suffix follows, compiled in as
    constants), the pack / compare / store / accounting; else the member write alone."""
    a = ", ".join(f"a{i}" for i in range(arity))
    lines = [f"def put({a}):"]
    if finite:
        diffs = " == ".join(f"(a{i} - a{i})" for i in range(arity))
        lines += ["    try:  # v - v: 0 for a finite number, NaN for NaN / inf",
                  f"        ok = {diffs} == 0",
                  "    except TypeError:  # not a number",
                  "        ok = False",
                  "    if not ok:",
                  f"        refuse({a})"]  # fmt: skip
    if run is None:
        lines.append(f"    return general({a})")
        return compile("\n".join(lines) + "\n", f"<mgpipe span setter {arity}>", "exec")
    o, e, bit, bump, repeat, suffixed = run
    data = f"pack({a})" + (f" * {repeat}" if repeat != 1 else "") + (" + suffix" if suffixed else "")
    lines += ["    try:",
              f"        data = {data}",
              "    except PACK_ERRORS:",
              f"        return general({a})",
              f"    if buf[{o}:{e}] == data:",
              "        return None",
              f"    mv[{o}:{e}] = data",
              f"    block.dyn_dirty |= {bit}"]  # fmt: skip
    if bump:
        lines.append("    block.version_wide += 1")
        if bump == 3:
            lines.append("    block.pipeline_version_wide += 1")
    lines.append("    return None")
    return compile("\n".join(lines) + "\n", f"<mgpipe span setter {arity}>", "exec")


#: a remembered all-pipeline patch's apply (``check``: :func:`_check` + the row's bump group),
#: written once and compiled into :meth:`RenderBlock._checked` and into the toggles
#: (``_toggle_code``); its names: ``block``, its ``buf`` and ``PIPE_LOG_LIMIT``
_CHECKED_BODY = """\
    get, wanted, sl, stores, tok, bump = check
    if sl is not None:  # one (strided) slice: compared and stored whole, no call
        if buf[sl] == wanted:
            return None
        buf[sl] = stores
    else:
        if get(buf) == wanted:
            return None
        for sl, b in stores:
            buf[sl] = b
    log = block.pipe_log
    if log is not None:
        if block._log_n < PIPE_LOG_LIMIT:
            block.pipe_log = log + (tok,)
            block._log_n += 1
        else:
            block.pipe_log = None
    if bump:  # a pipeline byte moved: kBumpConditional bumps both, as kBumpBoth
        block.version_wide += 1
        if bump >= 2:
            block.pipeline_version_wide += 1
    return None
"""


@lru_cache(maxsize=None)
def _checked_code() -> Any:
    return compile("def checked(check):\n" + _CHECKED_BODY, "<mgpipe checked patch>", "exec")


@lru_cache(maxsize=None)
def _toggle_code(key: tuple) -> Any:
    """``toggle(arg)``: the setter ``key[0]`` with ``arg`` and the constants ``key[1:]``
    (``("SetCapability", True)``: glEnable) in one frame once its patch is remembered: the
    memo's entry looked up by ``arg`` (``mine``: the entries the toggle took from the memo,
    kept when the memo is cleared -- a patch depends on its arguments only), then the
    remembered patch applied inline (``_CHECKED_BODY``); the
    setter itself (``general(arg)``) before that, the general apply for a patch of any
    other kind."""
    src = (
        "def toggle(arg):\n"
        "    try:  # the memo's entries by ``arg`` alone (no key tuple built per call)\n"
        "        row, patch, check = mine[arg]\n"
        "    except KeyError:\n"
        "        out = general(arg)\n"
        f"        entry = memo.get(({key[0]!r}, arg, *{key[1:]!r}))\n"
        "        if entry is not None:\n"
        "            mine[arg] = entry\n"
        "        return out\n"
        "    if check is None:\n"
        "        return block._apply(row, patch)\n" + _CHECKED_BODY
    )
    return compile(src, f"<mgpipe toggle {key[0]}>", "exec")


class RenderBlock:
    """The parameter block, its counters and what moved since the CSO cache last looked."""

    def __init__(self) -> None:
        info = _t.struct_info(rs_struct())
        self._buf = bytearray(info["size"])
        self._mv = memoryview(self._buf)  # stores of ``bytes`` through it: no temporary copy
        self._arr = np.frombuffer(self._buf, dtype=struct_dtype(rs_struct()))
        self.p = self._arr[0]  # a structured view into ``_buf``
        # the counters widened (never wrap): the CSO cache compares these (seed 001 §5.2)
        self.version_wide = 0
        self.pipeline_version_wide = 0
        # what moved since the CSO cache last looked: dynamic chunk bits, and the pipeline
        # writes in order (None once more than PIPE_LOG_LIMIT: the cache then hashes)
        self.dyn_dirty = 0
        self.pipe_log: tuple | None = ()
        self._log_n = 0  # len(pipe_log), kept: no call per toggle
        self._mask = _counter_mask()
        self._memo: dict[tuple, tuple] = {}
        self._checked = self._compiled(_checked_code(), "checked")

    def _compiled(self, code: Any, name: str, **names: Any) -> Callable[..., Any]:
        """The function ``name`` of ``code`` over this block (``block``, ``buf``, ``memo``,
        ``PIPE_LOG_LIMIT``, ``mine``: a dict of the function's own, and ``names``)."""
        ns = {"block": self, "buf": self._buf, "memo": self._memo, "mine": {},
              "PIPE_LOG_LIMIT": PIPE_LOG_LIMIT, **names}  # fmt: skip
        exec(code, ns)
        return ns[name]  # type: ignore[no-any-return]

    @property
    def version(self) -> int:
        """The wire's ``Version`` (the widened counter in the counter width): computed where
        a record carries it, never stored per setter."""
        return self.version_wide & self._mask

    @property
    def pipeline_version(self) -> int:
        """The wire's ``PipelineVersion`` (see :attr:`version`)."""
        return self.pipeline_version_wide & self._mask

    @property
    def block(self) -> memoryview:
        """The live ``RenderStateParameters`` bytes (read-only view)."""
        return memoryview(self._buf).toreadonly()

    def block_bytes(self) -> bytes:
        return bytes(self._buf)

    def _row(self, setter: str, arm: int | str | None = None, enum: str | None = None) -> SetterRow:
        if arm is not None and enum is not None:
            if not isinstance(arm, str):
                names = {v: k for k, v in _t.enum(enum).items()}
                if arm not in names:
                    raise ValueError(f"{setter}: {arm!r} is not a {enum} value")
                arm = names[arm]
        row = row_for(setter, arm)
        if row is None:
            raise ValueError(f"{setter}: no SETTERS row for arm {arm!r}")
        return row

    def _commit(self, row: SetterRow, write: Callable[[], None]) -> None:
        """The general path: run ``write`` on the block, then account what moved."""
        self._apply(row, self._derive(row, write))  # one accounting path for every setter

    def _derive(self, row: SetterRow, write: Callable[[], None]) -> tuple:
        """The patch ``write`` makes (bytes per range), the block left as it was."""
        buf = self._buf
        plan = row_patch_plan(row)
        before = [bytes(buf[o:e]) for o, e, _, _ in plan]
        try:
            write()
            return tuple((o, e, bytes(buf[o:e]), pipe, bit) for o, e, pipe, bit in plan)
        finally:
            for b, (o, e, _, _) in zip(before, plan):
                buf[o:e] = b

    def _memo_commit(self, key: tuple, row_of: Callable[[], SetterRow],
                     write: Callable[[SetterRow], None]) -> None:  # fmt: skip
        """The fast path of a setter whose bytes depend on its arguments only: the patch is
        derived once per argument tuple (``key``), then only compared and copied."""
        try:
            row, patch, check = self._memo[key]
        except KeyError:
            row = row_of()
            patch = self._derive(row, lambda: write(row))
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            check = _check(patch)
            if check is not None:  # and the row's bump group (0 none, 1, 2 conditional, 3)
                check += (BUMP[row.bump],)
            self._memo[key] = (row, patch, check)
        self._apply(row, patch, check)

    def _apply(self, row: SetterRow, patch: tuple, check: tuple | None = None) -> None:
        """Write ``patch`` ((offset, end, bytes, is pipeline, chunk bit) per range); account
        the moved bytes: dynamic chunk bits, the pipeline log, the counters. ``check``
        (:func:`_check`, a remembered all-pipeline patch): every range compared in one call."""
        buf = self._buf
        dyn = 0
        if check is not None:  # all pipeline: the log takes its token, the row's bump
            return self._checked(check)
        else:
            tok = None
            moved = pipe_moved = False
            mv = self._mv
            for o, e, b, pipe, bit in patch:
                if buf[o:e] != b:
                    mv[o:e] = b
                    moved = True
                    if pipe:
                        pipe_moved = True
                    else:
                        dyn |= bit
            if not moved:
                return
        # what _account does, inline: a remembered toggle stays one Python call
        self.dyn_dirty |= dyn
        if pipe_moved and self.pipe_log is not None:
            if self._log_n < PIPE_LOG_LIMIT:
                self.pipe_log += (token(patch) if tok is None else tok,)
                self._log_n += 1
            else:
                self.pipe_log = None
        bump = BUMP[row.bump]
        if not bump:
            return
        self.version_wide += 1
        if bump == 3 or (bump == 2 and pipe_moved):
            self.pipeline_version_wide += 1

    def _account(self, row: SetterRow, patch: tuple | None, pipe_moved: bool, dyn: int) -> None:
        """Bytes moved: the dynamic chunks dirtied, the patch logged if a pipeline byte moved,
        the counters per the row's bump group."""
        self.dyn_dirty |= dyn
        if pipe_moved and self.pipe_log is not None:
            if self._log_n < PIPE_LOG_LIMIT:
                self.pipe_log += (token(patch),)
                self._log_n += 1
            else:
                self.pipe_log = None
        bump = BUMP[row.bump]
        if not bump:
            return
        self.version_wide += 1
        if bump == 3 or (bump == 2 and pipe_moved):
            self.pipeline_version_wide += 1

    def _span(self, kit: tuple, general: Callable[..., Any],
              refuse: Callable[..., Any] | None = None) -> Callable[..., Any]:  # fmt: skip
        """The setter of a span kit (dynamic bytes in one chunk, see ``setter_kits``) as one
        compiled frame (:func:`_span_code`): its run packed from the arguments, compared
        and copied in one slice and accounted as :meth:`_apply` does (no pipeline byte, no
        log); ``general(*args)``, the setter's member write, where there is no kit or the
        packer refuses the arguments. ``refuse``: the arguments must be finite numbers
        first (``refuse(*args)`` raises the API's error for those that are not)."""
        if not kit:
            if refuse is None:
                return general
            pack = suffix = run = None
            arity = general.__code__.co_argcount - 1  # a bound method's own arguments
        else:
            o, e, bit, bump, pack, repeat, suffix = kit
            fmt = pack.__self__  # the kit's struct.Struct: one argument per value
            arity = len(fmt.unpack(bytes(fmt.size)))
            run = (o, e, bit, bump, repeat, bool(suffix))
        ns = {"general": general, "refuse": refuse, "pack": pack, "suffix": suffix,
              "buf": self._buf, "mv": self._mv, "block": self,
              "PACK_ERRORS": PACK_ERRORS}  # fmt: skip
        exec(_span_code(arity, refuse is not None, run), ns)
        return ns["put"]  # type: ignore[no-any-return]

    def _put_scalars(self, kit: tuple, values: tuple) -> bool:
        """A scalar patch kit (``setter_kits``): one value per member (enumerator names
        allowed) through :meth:`_apply`; False, touching nothing, when there is no kit or a
        packer refuses a value."""
        if not kit:
            return False
        row, packs, enums, plan = kit
        try:
            packed = [p(en[v] if type(v) is str else v) for p, en, v in zip(packs, enums, values)]
        except PACK_ERRORS:
            return False
        self._apply(row, tuple([(o, e, b, pipe, bit)
                                for (o, e, pipe, bit), b in zip(plan, packed)]))  # fmt: skip
        return True

    def _put_subs(self, kit: tuple, elems: tuple[int, ...], values: tuple) -> bool:
        """A sub-member kit's patch (``setter_kits``): ``values`` (one per write, enumerator
        names allowed) into the elements ``elems``, the other elements keeping their bytes,
        accounted as :meth:`_apply` does; False, touching nothing, when a packer refuses a value."""
        row, packs, enums, entries = kit
        try:
            packed = [p(en[v] if type(v) is str else v) for p, en, v in zip(packs, enums, values)]
        except PACK_ERRORS:
            return False
        buf = self._buf
        moved = pipe_moved = False
        dyn = 0
        for o, e, pipe, bit, wi, i in entries:
            if i in elems and buf[o:e] != packed[wi]:
                self._mv[o:e] = packed[wi]
                moved = True
                if pipe:
                    pipe_moved = True
                else:
                    dyn |= bit
        if moved:  # the log's patch: every range as the call left it (as _derive gives it)
            patch = None
            if pipe_moved:
                patch = tuple([(o, e, bytes(buf[o:e]), pipe, bit)
                               for o, e, pipe, bit, _, _ in entries])  # fmt: skip
            self._account(row, patch, pipe_moved, dyn)
        return True

    def _either(self, setter: str, args: tuple, row_of: Callable[[], SetterRow],
                write: Callable[[SetterRow], None]) -> None:  # fmt: skip
        """The memo path unless a float is among the arguments (-0.0 == 0.0 as a key)."""
        if any(isinstance(v, float) for _, v in args):
            row = row_of()
            self._commit(row, lambda: write(row))
        else:
            self._memo_commit((setter, args), row_of, write)
