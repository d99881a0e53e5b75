"""Compiled server dispatch: one handler per opcode, rendered from the tables.

:func:`handler_source` renders, for one call, the source of ``handle(raw, size)``:

1. decode (the call's compiled decoder, :mod:`..wire.compiled`, inlined);
2. a null entry of a non-``kOptional`` call refuses here, before anything changes;
3. resolve every handle field of ``HANDLE_FIELDS`` (payload paths and tail elements) into
   ``res`` by field path: null / range / unknown / stale / kind refusals by name, the
   default framebuffer, and first uses of the implicit kinds *planned* (checked, not made);
4. the call's own checks (``PREPARE``) and the object the record names (create / delete /
   respecify: checked by the applier's ``_plan_*``, not yet applied);
5. only then mutate: planned implicit creates, the object change, ``PUSH``, ``last``;
6. call the backend entry.

So a refused record leaves every table as it was: nothing mutates before step 5, and
nothing in step 5 refuses.

A call whose steps 1-5 depend on the record's bytes alone (:func:`_memo_rule`) remembers
an accepted record by those bytes: the same bytes again go straight to step 6 with the
remembered record, under the same budgets (compared by value: the same ones), at most
:data:`MEMO_LIMIT` records per handler. A call whose checks past decode are its one
handle's (:func:`_row_memo_rule`: ``BindRenderState``) remembers the object's row by the
handle's slot: a record naming that slot, once decoded, is applied with the row while it
is live at the record's gen (``PUSH_MEMO`` repeats the push).

For an entry that reads no record (``lazy``) the handler builds neither the payload record
nor ``Decoded`` where nothing else reads them (a ``kCtxState`` payload is kept as its
unpacked members: ``LastPayloads`` builds it when read); for an entry's lean form
(``lean``, docs/BACKENDS.md §3) it calls ``_lean(raw)`` / ``_lean(raw, offset, blob)`` and
sets nothing on the context for an entry. Each handler counts what it applied in a global
of its own namespace (:data:`COUNTER`: ``applier.applied`` reads them).
"""

from __future__ import annotations

import re
from functools import lru_cache
from types import CodeType

from ..schema.layouts import path_name
from ..schema.kinds import reissue_kinds, resource_kinds
from ..wire.compiled import _HOST_SPAN, decoder_source
from ..wire.records import layout
from ..wire.spec import TailSpec, call_spec
from .apply_state import PREPARE, PREPARE_SOURCE, PUSH, PUSH_MEMO, PUSH_SOURCE
from .handle_fields import KIND_FROM_RECORD, RESOURCE, Site, implicit_kinds, role, sites, table_of

__all__ = ["handler_source", "handler_code", "STATE_CLASS", "ENTRY_WITHOUT_RECORD", "COUNTER"]

STATE_CLASS = "kCtxState"


def _attr(var: str, path: tuple) -> str:
    for key in path:
        var += f"[{key}]" if isinstance(key, int) else f".{key}"
    return var


def _resolve(site: Site, hexpr: str, name: str, what: str, ind: str, dynamic: bool) -> list[str]:
    """Lines resolving one handle ``hexpr`` of ``site`` into ``res[name]``.

    ``name`` / ``what`` are source expressions (string literals, or ``%`` formats for tail
    elements when ``dynamic``)."""
    kind = site.kind
    table = table_of(kind)
    out = [f"{ind}h = {hexpr}"]
    null = "res[%s] = None" % name if site.nullable else f"raise _HR({what} + '.Null')"
    out.append(f"{ind}if h == _NULL:")
    out.append(f"{ind}    {null}")
    out.append(f"{ind}else:")
    i2 = ind + "    "
    if kind == "Framebuffer":
        out.append(f"{i2}if h == _DFB:")
        out.append(f"{i2}    res[{name}] = _ctx.default_framebuffer")
        out.append(f"{i2}else:")
        i2 += "    "
    out.append(f"{i2}try:")
    out.append(f"{i2}    e = _rows_{table}[h[0]]")
    out.append(f"{i2}    ok = e.live and e.gen == h[1]")
    out.append(f"{i2}except KeyError:")
    out.append(f"{i2}    ok = False")
    out.append(f"{i2}if ok:")
    out.append(f"{i2}    res[{name}] = e.obj")
    if kind in resource_kinds():
        out.append(f"{i2}    if e.obj.kind != {kind!r}:")
        out.append(f"{i2}        raise _HR({what} + '.Kind')")
    out.append(f"{i2}else:")
    if kind in implicit_kinds():
        out.append(f"{i2}    _plan_implicit(_T_{table}, h, {what}, {name}, implicit)")
    else:
        out.append(f"{i2}    raise _T_{table}._fault(h, {what})")
    return out


@lru_cache(maxsize=None)
def handler_code(call: str, has_entry: bool, lazy: bool = False,
                 lean: bool = False) -> tuple[CodeType, tuple[str, ...]]:  # fmt: skip
    """The compiled :func:`handler_source` (compiled once per process, bound per applier)."""
    src, tables = handler_source(call, has_entry, lazy, lean)
    return compile(src, f"<mgpipe apply {call}>", "exec"), tables


#: an attribute reference on the payload local, ``p.Cso``, ``p.Blob.Offset``, ``p.A[2].B``
_P_REF = re.compile(r"\bp\.([A-Za-z_]\w*(?:\[\d+\])?(?:\.[A-Za-z_]\w*(?:\[\d+\])?)*)")
_BARE_P = re.compile(r"\bp\b(?!\.)")
_BARE_D = re.compile(r"\bd\b")
_STRINGS = re.compile(r"('[^'\\]*')")  # the generated code's string literals (reprs of names)
ENTRY_WITHOUT_RECORD = "    return _entry(_ctx, None)"
#: the handler's count of the records it applied (or skipped, for a null optional entry):
#: a global of its own namespace (``applier.applied`` / ``skipped`` read it)
COUNTER = "_n"
COUNT = f"{COUNTER} += 1"
#: the lean form's call (docs/BACKENDS.md §3): the record's bytes, and for a call with one
#: blob reference its ``Offset`` and its bytes (copied once)
LEAN_ENTRY = "    return _lean(raw)"
LEAN_ENTRY_BLOB = "    return _lean(raw, bo, blob)"
#: what the handler sets on the context for the entry alone (a lean form reads none of it)
_CTX_FOR_ENTRY = re.compile(r"^\s+_ctx\.(?:call|raw|resolved) = ")
#: a lazy handler of a ``kCtxState`` call keeps the unpacked payload members in ``ctx.last``
#: (a ``LastPayloads``, which builds the record with ``_build_last`` when it is read)
LAST_BUILDER = "_build_last"


def _payload_refs(payload: str) -> dict[str, str]:
    """payload path -> the expression reading it from the unpacked tuple ``v``: each
    scalar ``v[i]`` (its place in the layout's flat list), each ``MGPipeHandle`` member
    ``(v[slot], v[gen])``."""
    flat = [f.path for f in layout(payload).flat]
    out = {path: f"v[{i}]" for i, path in enumerate(flat)}
    for path in flat:
        head, _, last = path.rpartition(".")
        if head and last == "Slot" and f"{head}.Gen" in out:
            members = [q for q in flat if q.startswith(head + ".")]
            if members == [f"{head}.Slot", f"{head}.Gen"]:
                out[head] = f"({out[head + '.Slot']}, {out[head + '.Gen']})"
    return out


def _without_record(call: str, lines: list[str], lean: bool = False) -> list[str] | None:
    """The handler ``lines`` building neither the payload record nor the ``Decoded`` (for an
    entry that reads neither): every ``p.<path>`` read from ``v``, the entry given None (or,
    ``lean``, its lean form given the record's bytes and its blob), a budget refusal given
    the record it names (built there), ``ctx.last`` given the unpacked members ``v`` (built
    into the record when read), the blob's bytes copied once into ``blob`` where the push
    or the lean form reads them. None where the handler needs the record (a bare ``p`` or
    ``d``, a path that is not a scalar or a handle, a ``d`` member other than the blob and
    the name)."""
    spec = call_spec(call)
    build = f"    p = {layout(spec.payload).build('v')}"
    try:
        at_p = lines.index(build)
    except ValueError:
        return None
    at_d = next((i for i, line in enumerate(lines) if line.startswith("    d = Decoded((")), None)
    if at_d is None or lines[-1] != "    return _entry(_ctx, d)":
        return None
    if len(spec.blob_paths) > 1 and lean:
        return None
    decoded = lines[at_d][len("    d = "):].replace(", p, ", f", {build[len('    p = '):]}, ", 1)
    refs = _payload_refs(spec.payload)
    blob = "blob" if spec.blob_paths else "None"
    last = f"    _last[{call!r}] = p"
    out: list[str] = []
    for i, line in enumerate(lines):
        if i == at_p:
            continue
        if i == at_d:
            if spec.blob_paths:
                out.append("    blob = bytes(b0)")
            continue
        if line.strip() == "return _entry(_ctx, d)":  # the end, and a remembered row's
            ind = line[: len(line) - len(line.lstrip())]
            out.append(ind + ((LEAN_ENTRY_BLOB if spec.blob_paths else LEAN_ENTRY) if lean
                              else ENTRY_WITHOUT_RECORD).strip())  # fmt: skip
            continue
        if line.strip() == "_check_draw(d)":  # a refusal: the record it names, built here
            out.append(line.replace("_check_draw(d)", f"_check_draw({decoded})"))
            continue
        if line == last:
            out.append(f"    _last[{call!r}] = v")
            continue
        if lean and _CTX_FOR_ENTRY.match(line):  # no entry reads the context: a lean form
            continue
        missing: list[str] = []

        def ref(m: re.Match[str]) -> str:
            path = m.group(1)
            if path not in refs:
                missing.append(path)
                return m.group(0)
            return refs[path]

        parts = _STRINGS.split(line)  # code at even places, quoted names at odd ones
        code = [_P_REF.sub(ref, part).replace("d.blob", blob).replace("d.name", repr(call))
                for part in parts[::2]]  # fmt: skip
        parts[::2] = code
        if missing or any(_BARE_P.search(c) or _BARE_D.search(c) for c in code):
            return None
        out.append("".join(parts))
    if any(line == f"    _last[{call!r}] = v" for line in out):
        out += ["", f"def {LAST_BUILDER}(v):", f"    return {build[len('    p = '):]}"]
    elif spec.blob_paths and not lean and not any(re.search(r"\bblob\b", c) for c in out):
        out.remove("    blob = bytes(b0)")  # nothing reads the copy
    return out


def _present_test(t: TailSpec) -> str | None:
    """The condition (source) under which tail ``t`` is present (None: always)."""
    if t.cond_field is not None and t.when != "kAlways":
        test = "!=" if t.when == "kWhenSet" else "=="
        return f"p.{t.cond_field} & {t.cond_value} {test} 0"
    return None


def handler_source(call: str, has_entry: bool, lazy: bool = False,
                   lean: bool = False) -> tuple[str, tuple[str, ...]]:  # fmt: skip
    """(source of ``handle(raw, size)``, the table names it binds as ``_rows_*``/``_T_*``).

    ``lazy``: the entry reads no record (an entry marked ``reads_decoded = False``, the
    recorder's raw capture): where nothing else reads it either, the handler builds neither
    the payload record nor the ``Decoded`` and calls ``entry(ctx, None)``; ``lean`` (with
    ``lazy``): it calls the entry's lean form instead (``_lean(raw)``, or
    ``_lean(raw, offset, blob)`` for a call with one blob reference).

    Only what the call needs is emitted: no ``implicit`` list for a call without a site of
    an implicit kind, no loop over a tail that cannot be present (a tail site's loop runs
    under its tail's presence test, over the decoder's own tail local), the call's inline
    check (``PREPARE_SOURCE``) instead of a ``PREPARE`` frame, ``last_tails`` only for a
    call that has tails.
    """
    spec = call_spec(call)
    r = role(call)
    all_sites = sites(call)
    object_site = all_sites[0] if all_sites and r != "use" else None
    tables: set[str] = set()
    # the call's decoder, inline (no frame between the handler and its decoder)
    body = decoder_source(call).splitlines()[1:]
    assert body[-1].startswith("    return Decoded(")
    body[-1] = body[-1].replace("    return ", "    d = ", 1)
    lines = ["def handle(raw, size):", *body]
    if not has_entry and not spec.optional:
        lines.append(f"    raise _NullEntry({call!r})")
        return "\n".join(lines) + "\n", ()
    use_sites = [s for s in all_sites if s is not object_site]
    implicit = any(s.kind in implicit_kinds() for s in use_sites)
    row = (_row_memo_rule(call, use_sites)
           if object_site is None and not implicit and has_entry else None)  # fmt: skip
    if row is not None:  # a remembered row: after the record's own checks, before resolve
        lines += _row_memo_hit(call, row)
    lines.append("    res = {}")
    if implicit:
        lines.append("    implicit = []")
    for site in use_sites:
        if site.kind == KIND_FROM_RECORD:
            raise ValueError(f"{call}.{site.field}: KindFromRecord only names the record's object")
        tables.add(table_of(site.kind))
        if site.tail is None:
            for path in site.paths:
                name = path_name(path)
                lines += _resolve(site, _attr("p", path), repr(name), repr(f"{call}.{name}"),
                                  "    ", False)  # fmt: skip
        else:
            for k, t in enumerate(spec.tails):
                if t.element != site.tail:
                    continue
                cond = _present_test(t)
                ind = "    "
                if cond is not None:  # an absent tail: no loop at all
                    lines.append(f"    if {cond}:")
                    ind = "        "
                for path in site.paths:
                    suffix = f".{path_name(path)}" if path else ""
                    name = f"'{site.tail}[%d]{suffix}' % i"
                    what = f"'{call}.{site.tail}[%d]{suffix}' % i"
                    lines.append(f"{ind}i = 0")
                    lines.append(f"{ind}for x in t{k}:")
                    lines += _resolve(site, _attr("x", path), name, what, ind + "    ", True)
                    lines.append(f"{ind}    i += 1")
    lines.append(f"    _ctx.call = {call!r}")
    lines.append("    _ctx.raw = raw")
    lines.append("    _ctx.resolved = res")
    if call in PREPARE_SOURCE:
        lines += PREPARE_SOURCE[call]("    ")
    elif call in PREPARE:
        lines.append("    prepared = _prepare(_ctx, d)")
    elif object_site is not None:
        lines.append("    prepared = _EMPTY")
    if object_site is not None:
        tables.add(table_of(object_site.kind) if object_site.kind not in (KIND_FROM_RECORD, RESOURCE)
                   else RESOURCE)  # fmt: skip
        lines.append(f"    h = {_attr('p', object_site.paths[0])}")
        name = path_name(object_site.paths[0])
        lines.append(f"    plan = _plan_{r}(d, h, {name!r}, prepared)")
    if implicit:
        lines.append("    if implicit:")
        lines.append("        _make_implicit(implicit, res)")
    obj = "None"
    if object_site is not None:
        lines.append("    obj = _commit(plan, d, res)")
        obj = "obj"
    elif all_sites:
        obj = f"res[{all_sites[0].field!r}]" if all_sites[0].tail is None else "None"
    if call in PUSH_SOURCE:
        if obj != "None" and not obj.isidentifier():
            lines.append(f"    obj = {obj}")
            obj = "obj"
        lines += PUSH_SOURCE[call]("    ", obj)
        if row is not None:
            lines += _row_memo_store(call, row, obj)
    elif call in PUSH:
        lines.append(f"    _push(_ctx, d, {obj})")
    if spec.cls == STATE_CLASS:
        lines.append(f"    _last[{call!r}] = p")
        if spec.tails:  # a call without tails never has any
            lines.append("    if tails:")
            lines.append(f"        _last_tails[{call!r}] = tails")
    if not has_entry:
        lines.append(f"    {COUNT}")
        lines.append("    return None")
        return "\n".join(_counted(_scalars_from_v(call, lines))) + "\n", tuple(sorted(tables))
    lines.append(f"    {COUNT}")
    lines.append("    return _entry(_ctx, d)")
    out = _without_record(call, lines, lean) if lazy else None
    if out is None:
        out = _scalars_from_v(call, lines)
    memo = _memo_rule(call, use_sites) if object_site is None and not implicit else None
    if memo is not None:
        out = _with_memo(call, out, memo)
    return "\n".join(_counted(_tidy(call, out))) + "\n", tuple(sorted(tables))


def _counted(lines: list[str]) -> list[str]:
    """``handle`` declaring its counter global (one store per record, no dict item)."""
    return [lines[0], f"    global {COUNTER}", *lines[1:]]


#: records remembered per memo-eligible handler (:func:`_memo_rule`); 0: no memo at all
MEMO_LIMIT = 4096


def _memo_rule(call: str, use_sites: list[Site]) -> str | None:
    """The condition (source over ``v`` and ``res``) under which an accepted record of
    ``call`` may be remembered by its bytes, or None where it never may.

    A remembered record skips decode, resolve and the call's checks on its next arrival
    with the same bytes, so every one of those must be a function of the bytes alone (and
    of the budgets, compared by identity at the hit): the call mutates nothing in its
    handler (no object it names, no ``PUSH``, no ``PREPARE`` frame, not a context-state
    call whose payload is kept, no blob, whose bytes live in the stage), and, per record,
    every handle it resolves is null (a live handle can go stale) and no tail that names
    handles or stage bytes (``MGHostSpan``) is present."""
    spec = call_spec(call)
    if (MEMO_LIMIT <= 0 or call in PUSH or call in PUSH_SOURCE or spec.cls == STATE_CLASS
            or (call in PREPARE and call not in PREPARE_SOURCE) or spec.blob_paths):  # fmt: skip
        return None
    conds: list[str] = []
    refs = _payload_refs(spec.payload)
    tails_with_sites = {s.tail for s in use_sites if s.tail is not None}
    for site in use_sites:
        if site.tail is None:
            if not site.nullable:
                return None  # a null there is refused: it always names a live object
            conds += [f"res[{path_name(path)!r}] is None" for path in site.paths]
    for t in spec.tails:
        if t.element in tails_with_sites or t.element == _HOST_SPAN:
            test = _present_test(t)
            if test is None:
                return None  # always present
            conds.append("not (" + _P_REF.sub(lambda m: refs[m.group(1)], test) + ")")
    return " and ".join(conds) if conds else "True"


def _with_memo(call: str, lines: list[str], cond: str) -> list[str]:
    """The handler ``lines`` with the record memo of :func:`_memo_rule`: a hit sets what the
    full path sets and calls the entry with the remembered record (None for an entry that
    reads none, the bytes for a lean form); a miss that passes every check and ``cond`` is
    remembered (the memo is emptied when full: a bound, not an LRU). The budgets it was
    checked under are kept as ``[budgets]``: a hit compares them with the budgets now
    (``_BUD``, a list that is empty until they are read again after a change)."""
    budget = any(line.strip().startswith("_b = _BUD[0]") for line in lines)
    hit = "m is not None and m[0] == _BUD" if budget else "m is not None"
    full = lines[-1] == "    return _entry(_ctx, d)"
    lean = lines[-1] == LEAN_ENTRY
    head = [
        lines[0],
        "    m = _memo.get(raw)",
        f"    if {hit}:",
        *([] if lean else [f"        _ctx.call = {call!r}", "        _ctx.raw = raw",
                           "        _ctx.resolved = m[1]"]),
        f"        {COUNT}",
        "        return _entry(_ctx, m[2])" if full else "    " + lines[-1],
    ]
    store = [
        f"    if {cond}:",
        f"        if len(_memo) >= {MEMO_LIMIT}:",
        "            _memo.clear()",
        f"        _memo[raw] = ({'[_b]' if budget else 'None'}, res, {'d' if full else 'None'})",
    ]
    return head + lines[1:-2] + store + lines[-2:]


def _row_memo_rule(call: str, use_sites: list[Site]) -> Site | None:
    """The one handle site whose object's row an accepted record of ``call`` may leave
    remembered by the handle's slot (``PUSH_MEMO``), or None where it never may.

    A later record naming that slot, past its own checks (decode), is applied with the
    remembered row while that row is live at the record's gen (a deleted object's row is
    never live again; a re-created one is another row) and, for a kind that may re-issue
    its create, holds the same object: the resolve's answer, without the resolve. The
    call names no object of its own, mutates nothing but its push, which ``PUSH_MEMO``
    repeats from what depends on the object alone (the rest it reads from the record), has
    no ``PREPARE``, no blob and no tail, and is not a context-state call (whose payload is
    kept); its one site is a handle of the payload that is never null (a null is refused:
    it is never remembered) and of no implicit kind (the default framebuffer's among them)."""
    spec = call_spec(call)
    if (MEMO_LIMIT <= 0 or call not in PUSH_MEMO or call not in PUSH_SOURCE or call in PREPARE
            or spec.cls == STATE_CLASS or spec.blob_paths or spec.tails or len(use_sites) != 1):  # fmt: skip
        return None
    site = use_sites[0]
    if (site.tail is not None or site.nullable or len(site.paths) != 1
            or site.kind in implicit_kinds() or site.kind == KIND_FROM_RECORD):  # fmt: skip
        return None
    refs = _payload_refs(spec.payload)
    head = ".".join(str(k) for k in site.paths[0])
    if f"{head}.Slot" not in refs or f"{head}.Gen" not in refs:
        return None
    return site


def _row_memo_hit(call: str, site: Site) -> list[str]:
    """Lines (before the resolve) applying a record whose handle's slot has a remembered
    row: re-check the row (live, at the record's gen; the same object for a re-issuing
    kind), set what the full path sets, repeat the push (``PUSH_MEMO``) and call the entry
    as the full path does."""
    memo = PUSH_MEMO[call]
    names = [f"_k{i}" for i in range(len(memo.keep("obj")))]
    head = _attr("p", site.paths[0])
    check = _row_check(site)
    ind = "            "
    return [
        f"    m = _memo.get({head}.Slot)",
        "    if m is not None:",
        f"        _e, res, {', '.join(names)} = m",
        f"        if {check}:",
        f"{ind}_ctx.call = {call!r}",
        f"{ind}_ctx.raw = raw",
        f"{ind}_ctx.resolved = res",
        *memo.hit(ind, names),
        f"{ind}{COUNT}",
        f"{ind}return _entry(_ctx, d)",
    ]


def _row_check(site: Site) -> str:
    """The remembered row ``_e`` still answers the record's handle as the resolve would:
    live, at the record's gen (and, for a kind that may re-issue its create, holding the
    object remembered with it)."""
    check = f"_e.live and _e.gen == {_attr('p', site.paths[0])}.Gen"
    if site.kind in reissue_kinds():
        check += f" and _e.obj is res[{path_name(site.paths[0])!r}]"
    return check


def _row_memo_store(call: str, site: Site, obj: str) -> list[str]:
    """Lines run after the push of an accepted record: remember its object's row by the
    handle's slot, with its resolved objects and what the push took from the object."""
    memo = PUSH_MEMO[call]
    head = _attr("p", site.paths[0])
    return [
        f"    if {memo.cond()}:",
        f"        if len(_memo) >= {MEMO_LIMIT}:",
        "            _memo.clear()",
        f"        _memo[{head}.Slot] = (e, res, {', '.join(memo.keep(obj))})",
    ]


_V_UNPACK = re.compile(r"^    v = _P\(raw, \d+\)$")
_V_ALIAS = re.compile(r"^    (\w+(?:, \w+)*) = (v\[\d+\](?:, v\[\d+\])*)$")
_V_REF = re.compile(r"\bv\[(\d+)\]")
_BLOB_TEST = "    if bg == _stage_seg and 0 <= bo <= _stage_cap and 0 <= bs <= _stage_cap - bo:"


def _tidy(call: str, lines: list[str]) -> list[str]:
    """The handler ``lines`` with what its steady path need not execute taken out (same
    checks, same refusals, same values):

    - the stage's inline blob test for unsigned ``Offset`` / ``Size`` members (their
      layout codes): ``bo + bs <= cap`` (both are >= 0);
    - ``tails = ()`` where no line reads ``tails``; ``res = {}`` where nothing reads it or
      it is only handed to the context (``_ctx.resolved = {}``);
    - the payload members read into locals by one unpack where that executes fewer
      instructions than their ``v[i]`` reads (``v`` itself kept where it is read whole).
    """
    spec = call_spec(call)
    end = lines.index("") if "" in lines else len(lines)  # handle() alone (not _build_last)
    out, defs = list(lines[:end]), lines[end:]
    if spec.blob_paths and _BLOB_TEST in out:
        flat = {f.path: f for f in layout(spec.payload).flat}
        ref = ".".join(str(k) for k in spec.blob_paths[0])
        if len(spec.blob_paths) == 1 and all(
                flat[f"{ref}.{m}"].code in "BHIQ" for m in ("Offset", "Size")):  # fmt: skip
            out[out.index(_BLOB_TEST)] = "    if bg == _stage_seg and bo + bs <= _stage_cap:"

    def code(line: str) -> str:
        return "".join(_STRINGS.split(line)[::2])

    def uses(name: str, skip: str) -> bool:
        pat = re.compile(rf"\b{name}\b")
        return any(pat.search(code(line)) for line in out if line != skip)

    if "    tails = ()" in out and not uses("tails", "    tails = ()"):
        out.remove("    tails = ()")
    if "    res = {}" in out:
        rest = [line for line in out if line not in ("    res = {}", "    _ctx.resolved = res")]
        if not any(re.search(r"\bres\b", code(line)) for line in rest):
            out.remove("    res = {}")
            if "    _ctx.resolved = res" in out:
                out[out.index("    _ctx.resolved = res")] = "    _ctx.resolved = {}"
    at = next((i for i, line in enumerate(out) if _V_UNPACK.match(line)), None)
    if at is None:
        return out + defs
    n = len(layout(spec.payload).flat)
    names = [f"v{i}" for i in range(n)]
    aliases: dict[int, int] = {}
    for i, line in enumerate(out):
        m = _V_ALIAS.match(line)
        if m is None:
            continue
        targets, sources = m.group(1).split(", "), _V_REF.findall(m.group(2))
        if len(targets) != len(sources) or any(
                _assigned_elsewhere(out, t, i) for t in targets):  # fmt: skip
            continue
        for t, k in zip(targets, sources):
            if names[int(k)] != f"v{k}":
                break
        else:
            for t, k in zip(targets, sources):
                names[int(k)] = t
            aliases[i] = 1
    refs = sum(len(_V_REF.findall(code(line))) for i, line in enumerate(out) if i not in aliases)
    alias_refs = sum(len(_V_REF.findall(out[i])) for i in aliases)
    # one unpack of n members costs n + 2 instructions; each v[i] read 3, each local read 1;
    # an alias line's reads and stores go away with it
    if 2 * refs + 4 * alias_refs <= n + 2:
        return out + defs
    whole = any(re.search(r"\bv\b(?!\[\d+\])", code(line)) for j, line in enumerate(out) if j > at)
    read = {int(k) for i, line in enumerate(out) if i not in aliases for k in _V_REF.findall(line)}
    unpack = ", ".join(nm if nm != f"v{k}" or k in read else "_" for k, nm in enumerate(names))
    body: list[str] = []
    for i, line in enumerate(out):
        if i in aliases:
            continue
        if i == at:
            if whole:
                body += [line, f"    {unpack} = v"]
            else:
                body.append(f"    {unpack} = {line.split(' = ', 1)[1]}")
            continue
        if i > at:
            parts = _STRINGS.split(line)
            parts[::2] = [_V_REF.sub(lambda m: names[int(m.group(1))], c) for c in parts[::2]]
            line = "".join(parts)
        body.append(line)
    return body + defs


def _assigned_elsewhere(lines: list[str], name: str, at: int) -> bool:
    """Whether ``name`` is assigned on any line but ``at`` (an alias must be its only store)."""
    pat = re.compile(rf"^\s*(?:\w+, )*{name}(?:, \w+)* = |^\s*{name} \S?= ")
    return any(pat.search(line) for i, line in enumerate(lines) if i != at)


def _scalars_from_v(call: str, lines: list[str]) -> list[str]:
    """``lines`` with every read of a scalar payload member (``p.Flags``,
    ``p.Blob.Offset``) taken from the unpacked tuple ``v`` (one index, not a chain of
    attribute loads); the record itself is still built (handles stay ``Handle``\\ s)."""
    spec = call_spec(call)
    build = f"    p = {layout(spec.payload).build('v')}"
    if build not in lines:
        return lines
    at_p = lines.index(build)
    scalars = {f.path: f"v[{i}]" for i, f in enumerate(layout(spec.payload).flat)}

    def ref(m: re.Match[str]) -> str:
        return scalars.get(m.group(1), m.group(0))

    out = lines[: at_p + 1]
    for line in lines[at_p + 1 :]:
        parts = _STRINGS.split(line)
        parts[::2] = [_P_REF.sub(ref, part) for part in parts[::2]]
        out.append("".join(parts))
    return out
