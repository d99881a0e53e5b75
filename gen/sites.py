"""Plant sites found by meaning: the row a defect belongs in, in whatever catalogue it is.

A literal plant (:mod:`mgpipe.gen.plants`) edits text it was written against, so it only
fits the catalogue it was written for. A site here is a *kind of row* - "a call that posts a
reply", "a plain verb call with no flag", "a BARRIER_PULLED ownership row" - found by reading
the copied catalogue with the same reader the generator uses; the edit lands on the column's
own ``line:col``, and what it found (the call's name, its payload, a flag) is handed back as
facts that the control's expected message is completed with.

A tree without the list a site needs (the bundled catalogue has no MGP_VERB_OP_LIST) raises
:class:`NotApplicable`: the control is reported ``N/A`` with that reason, never ``PASS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mgpipe.gen.catalogue import Catalogue, load_catalogue
from mgpipe.gen.errors import ErrorCollector
from mgpipe.gen.plants import PlantError
from mgpipe.gen.rows import Tok
from mgpipe.gen.vocabulary import vocabulary

Facts = dict[str, str]


class NotApplicable(Exception):
    """The tree has no row of the kind this control plants in."""


def _cat(tree: Path, catalogue_name: str) -> Catalogue:
    return load_catalogue(tree / catalogue_name, errors=ErrorCollector())


def _rows(cat: Catalogue, list_name: str) -> tuple:  # type: ignore[type-arg]
    if list_name == "MGP_CALL_LIST":
        return cat.calls
    if list_name == "MGP_RENDER_STATE_SETTERS":  # either shape (an overlay list on a MobileGL-shaped tree)
        if not cat.setters:
            raise NotApplicable("the catalogue has no MGP_RENDER_STATE_SETTERS list (RenderStateSetters.def)")
        return cat.setters
    if list_name == "MGP_FIELDS":
        return tuple(r for rows in cat.field_lists.values() for r in rows[:1])
    rows = cat.rows(list_name)
    if not rows and list_name not in cat.lists:
        raise NotApplicable(f"the catalogue has no {list_name} list")
    return rows


def _plain(cat: Catalogue, r) -> bool:  # type: ignore[no-untyped-def]
    v = vocabulary(cat.shape)
    return r.cls.text == v.verb_call_class and r.flags.parts == (v.no_flag,) and r.wait.text == "kWaitNone"


def _reply(cat: Catalogue, r) -> bool:  # type: ignore[no-untyped-def]
    v = vocabulary(cat.shape)
    return v.reply_flag in r.flags.parts and r.wait.text == v.reply_wait


#: the kinds of row a control can ask for, by name (the name is what docs/SELFTEST.md shows)
WHERE: dict[str, Callable] = {  # type: ignore[type-arg]
    "plain verb call": _plain,
    "reply-slot call": _reply,
    "payload field list": lambda cat, r: True,
    "barrier-pulled row": lambda cat, r: r.ownership.text == vocabulary(cat.shape).barrier_pulled,
    "verify row": lambda cat, r: True,
    "coverage row": lambda cat, r: True,
    "version-bump setter row": lambda cat, r: r.bump.text == "kBumpVersion",
    "both-bump setter row": lambda cat, r: r.bump.text == "kBumpBoth",
    "fill verb row": lambda cat, r: True,
    "dirty-surface row": lambda cat, r: True,
    "subsystem row": lambda cat, r: True,
    "fatal-family row": lambda cat, r: True,
    "unemitted barrier-pulled row": lambda cat, r: (
        r.ownership.text == vocabulary(cat.shape).barrier_pulled
        and r.field.text not in {e.accessor.text for e in cat.rows("MGP_COVERAGE_EMITTED_LIST")}),
    "applier-derived row": lambda cat, r: r.ownership.text == "APPLIER_DERIVED",
    "stamp row of a verb call": lambda cat, r: any(
        c.name.text == r.call.text and c.cls.text == vocabulary(cat.shape).verb_call_class for c in cat.calls),
}


def _facts(cat: Catalogue, row) -> Facts:  # type: ignore[no-untyped-def]
    out: Facts = {}
    for name in ("name", "payload", "field", "call", "verb", "member", "mutator", "family", "setter"):
        tok = getattr(row, name, None)
        if isinstance(tok, Tok):
            out[name] = tok.text
    if hasattr(row, "member"):
        out["struct"] = next(s for s, rows in cat.field_lists.items() if row in rows)
    out["free_flag"] = vocabulary(cat.shape).free_flag
    return out


def _edit_at(tree: Path, catalogue_name: str, tok: Tok, new: str, span_to: str | None = None) -> None:
    """Replace the argument ``tok`` (its raw text at its own line:col) by ``new``."""
    rel = tok.loc.path.split("/", 1)[1]
    path = tree / catalogue_name / rel
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    line = lines[tok.loc.line - 1]
    at = tok.loc.col - 1
    raw = tok.raw.split("\n", 1)[0] if tok.raw else tok.text
    if not line[at:].startswith(raw):
        raise PlantError(f"{rel}:{tok.loc.line}:{tok.loc.col}: {raw!r} is not where the reader put it")
    lines[tok.loc.line - 1] = line[:at] + new + line[at + len(raw):]
    path.write_text("".join(lines), encoding="utf-8")


@dataclass(frozen=True)
class AtRow:
    """In the first row of ``list`` that is a ``where``, set ``column`` to ``new``.

    ``new`` is completed with the row's facts (``{name}``, ``{payload}``, ``{a_flag}`` ...);
    ``new=None`` deletes the column together with the comma before it.
    """

    list: str
    where: str
    column: str
    new: str | None
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        cat = _cat(tree, catalogue_name)
        pick = WHERE[self.where]
        row = next((r for r in _rows(cat, self.list) if pick(cat, r)), None)
        if row is None:
            raise NotApplicable(f"the catalogue has no {self.where} in {self.list}")
        facts = _facts(cat, row)
        tok = getattr(row, self.column)
        facts["old"] = tok.text
        if self.new is None:
            self._delete(tree, catalogue_name, row, tok)
        else:
            _edit_at(tree, catalogue_name, tok, self.new.format(**facts))
        return facts

    def _delete(self, tree: Path, catalogue_name: str, row, tok: Tok) -> None:  # type: ignore[no-untyped-def]
        rel = tok.loc.path.split("/", 1)[1]
        path = tree / catalogue_name / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        line = lines[tok.loc.line - 1]
        at = tok.loc.col - 1
        comma = line.rfind(",", 0, at)
        if comma < 0 or not line[at:].startswith(tok.raw):
            raise PlantError(f"{rel}:{tok.loc.line}: no ', {tok.raw}' to delete")
        lines[tok.loc.line - 1] = line[:comma] + line[at + len(tok.raw):]
        path.write_text("".join(lines), encoding="utf-8")


def _last_line(row) -> int:  # type: ignore[no-untyped-def]
    """The last line a row's arguments reach (a row may be broken after a comma)."""
    toks = [getattr(row, f) for f in row.__dataclass_fields__ if isinstance(getattr(row, f), Tok)]
    return max(t.loc.line + t.raw.count("\n") for t in toks)


@dataclass(frozen=True)
class DropRow:
    """Delete the first row of ``list`` that is a ``where`` (all its lines); ``copy=True``
    writes the row a second time instead."""

    list: str
    where: str
    copy: bool = False
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        cat = _cat(tree, catalogue_name)
        pick = WHERE[self.where]
        row = next((r for r in _rows(cat, self.list) if pick(cat, r)), None)
        if row is None:
            raise NotApplicable(f"the catalogue has no {self.where} in {self.list}")
        facts = _facts(cat, row)
        rel = row.loc.path.split("/", 1)[1]
        path = tree / catalogue_name / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        first, last = row.loc.line - 1, _last_line(row) - 1
        if not lines[last].rstrip().endswith("\\") or lines[first][: row.loc.col - 1].strip():
            raise PlantError(f"{rel}:{row.loc.line}: the row does not stand on its own continued lines")
        if self.copy:
            lines[last + 1:last + 1] = lines[first:last + 1]
        else:
            del lines[first:last + 1]
        path.write_text("".join(lines), encoding="utf-8")
        return facts


@dataclass(frozen=True)
class HeaderEdit:
    """In the header that declares ``role`` (a vocabulary role: ``flag_enum``,
    ``chunk_boundaries``), either add ``line`` as the enum's last enumerator or rename the
    declaration everywhere in that header (``rename``)."""

    role: str
    line: str = ""
    rename: str = ""
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        import re

        cat = _cat(tree, catalogue_name)
        v = vocabulary(cat.shape)
        name = getattr(v, self.role)
        if not name:
            raise NotApplicable(f"the catalogue's vocabulary has no {self.role}")
        root = tree / catalogue_name
        headers = sorted(root.glob("*.h")) + sorted((root / "include").glob("*.h"))
        facts: Facts = {"decl": name, "free_flag": v.free_flag}
        for h in headers:
            text = h.read_text(encoding="utf-8")
            if self.rename:
                if not re.search(rf"\b{name}\b\s*=|\b(?:enum|struct)\s+(?:class\s+)?{name}\b", text):
                    continue
                for other in headers:  # every header that names it, so the tree still compiles
                    t = other.read_text(encoding="utf-8")
                    if re.search(rf"\b{name}\b", t):
                        other.write_text(re.sub(rf"\b{name}\b", self.rename, t), encoding="utf-8")
                return facts
            m = re.search(rf"\benum\s+{name}\b[^{{;]*\{{", text)
            if m is None:
                continue
            close = text.index("};", m.end())
            new = text[:close] + "    " + self.line.format(**facts) + "\n" + text[close:]
            h.write_text(new, encoding="utf-8")
            return facts
        raise NotApplicable(f"no header of the catalogue declares {name}")


@dataclass(frozen=True)
class SetValue:
    """Set the object-like ``#define NAME VALUE`` to ``new`` (``{old}`` is its value)."""

    name: str
    new: str
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        cat = _cat(tree, catalogue_name)
        v = cat.values.get(self.name)
        if v is None:
            raise NotApplicable(f"the catalogue defines no {self.name}")
        rel = v.path.split("/", 1)[1]
        path = tree / catalogue_name / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        line = lines[v.line - 1]
        at = v.value_col - 1
        new = self.new.format(old=v.value, rows=len(cat.calls),
                              more=str(int(v.value) + 1) if v.value.isdigit() else v.value)
        lines[v.line - 1] = line[:at] + line[at:].replace(v.value, new, 1)
        path.write_text("".join(lines), encoding="utf-8")
        return {"old": v.value, "new": new, "rows": str(len(cat.calls))}


@dataclass(frozen=True)
class LockSite:
    """A defect against the tree's ``PipeCalls.lock`` (N/A on a tree that carries none):

    * ``swap``: the first two adjacent plain verb calls of MGP_CALL_LIST trade rows (facts:
      ``name`` the call moved down, ``row`` its new row, ``op`` its locked opcode);
    * ``opcode``: that call's lock row re-pinned one opcode higher (``new`` the planted one);
    * ``remove``: the lock deleted.
    """

    how: str
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        import re

        from mgpipe.gen.catalogue import LOCK_FILE

        root = tree / catalogue_name
        lock = root / LOCK_FILE
        cat = _cat(tree, catalogue_name)
        if not lock.is_file() or not cat.lock:
            raise NotApplicable(f"the catalogue has no {LOCK_FILE}")
        if self.how == "remove":
            lock.unlink()
            return {"lock": cat.lock_path}
        calls = list(cat.calls)
        pair = next((i for i in range(len(calls) - 1)
                     if _plain(cat, calls[i]) and _plain(cat, calls[i + 1])), None)
        if pair is None:
            raise NotApplicable("the catalogue has no two adjacent plain verb calls")
        a, b = calls[pair], calls[pair + 1]
        facts: Facts = {"name": a.name.text, "row": str(pair + 2), "op": str(pair + 1),
                        "other": b.name.text, "lock": cat.lock_path}
        if self.how == "opcode":
            row = next((r for r in cat.lock if r.name.text == a.name.text), None)
            if row is None:
                raise NotApplicable(f"the lock has no row for {a.name.text}")
            facts["new"] = str(int(row.opcode.text) + 1)
            facts["op"] = row.opcode.text
            _edit_at(tree, catalogue_name, row.opcode, facts["new"])
            return facts
        rel = a.loc.path.split("/", 1)[1]
        path = root / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        (a0, a1), (b0, b1) = ((r.loc.line - 1, _last_line(r)) for r in (a, b))
        if a1 != b0 or not all(_continued(lines[i]) for i in range(b0, b1)):
            raise PlantError(f"{rel}:{a.loc.line}: rows {a.name.text} and {b.name.text} are not "
                             f"adjacent continued lines")
        lines[a0:b1] = lines[b0:b1] + lines[a0:a1]
        path.write_text("".join(lines), encoding="utf-8")
        if not re.search(rf"\b{re.escape(a.name.text)}\b", lines[a0 + (b1 - b0)]):
            raise PlantError(f"{rel}: the swap of {a.name.text} and {b.name.text} did not land")
        return facts


def _payload_field_lists(cat: Catalogue, at_least: int) -> list[tuple[str, tuple]]:  # type: ignore[type-arg]
    """The field lists of the payloads of plain verb calls (call order) with ``at_least`` rows."""
    seen: list[str] = []
    for c in cat.calls:
        if _plain(cat, c) and c.payload.text in cat.field_lists and c.payload.text not in seen:
            seen.append(c.payload.text)
    return [(s, cat.field_lists[s]) for s in seen if len(cat.field_lists[s]) >= at_least]


@dataclass(frozen=True)
class FieldRows:
    """A defect in the field list of a plain verb call's payload (PipeFields.def, found by
    the reader), whatever the list's layout (one row a line or several on one line):

    * ``drop``: its first row deleted (facts: ``struct``, ``member``);
    * ``swap``: its first two rows trade places (``first``, ``second``);
    * ``rename``: the list renamed ``MGP_FIELDS_SelfTestNoSuchStruct`` (``struct``).
    """

    how: str
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        cat = _cat(tree, catalogue_name)
        lists = _payload_field_lists(cat, 2)
        if not lists:
            raise NotApplicable("the catalogue has no field list of a plain verb call's payload")
        struct, rows = lists[0]
        facts: Facts = {"struct": struct, "member": rows[0].member.text, "first": rows[0].member.text,
                        "second": rows[1].member.text}
        if self.how == "swap":
            a, b = rows[0].member, rows[1].member
            _edit_at(tree, catalogue_name, b, a.text)  # the later one first: a's column holds
            _edit_at(tree, catalogue_name, a, b.text)
            return facts
        tok = rows[0].member if self.how == "drop" else None
        loc = tok.loc if tok is not None else cat.field_list_locs[struct]
        rel = loc.path.split("/", 1)[1]
        path = tree / catalogue_name / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        line = lines[loc.line - 1]
        if self.how == "rename":
            old = f"MGP_FIELDS_{struct}("
            if old not in line:
                raise PlantError(f"{rel}:{loc.line}: {old!r} is not where the reader put it")
            lines[loc.line - 1] = line.replace(old, "MGP_FIELDS_SelfTestNoSuchStruct(", 1)
        else:
            at = loc.col - 1
            start = max(line.rfind(" ", 0, at), line.rfind("\t", 0, at)) + 1
            end = line.index(")", at) + 1
            while end < len(line) and line[end] == " ":
                end += 1
            lines[loc.line - 1] = line[:start] + line[end:]
        path.write_text("".join(lines), encoding="utf-8")
        return facts


#: MemberEdit's kinds: (the member's type as declared, its planted declaration)
_MEMBER_EDITS: dict[str, tuple[str, str]] = {
    "pointer": ("Uint64", "Uint64* {member};"),
    "bit-field": ("Uint32", "Uint32 {member} : 32;"),
    "long": ("Int64", "long {member};"),
}


@dataclass(frozen=True)
class MemberEdit:
    """In the header that declares a plain verb call's payload (call order), redeclare its
    first member of the kind's type (size and alignment unchanged on LP64, so no size pin
    and no field list moves) as ``how`` (:data:`_MEMBER_EDITS`): a pointer, a bit-field, a
    ``long`` (facts: ``struct``, ``member``)."""

    how: str
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        import re

        cat = _cat(tree, catalogue_name)
        typ, planted = _MEMBER_EDITS[self.how]
        root = tree / catalogue_name
        headers = sorted(root.glob("*.h")) + sorted((root / "include").glob("*.h"))
        payloads = list(dict.fromkeys(c.payload.text for c in cat.calls if _plain(cat, c)))
        for name in payloads:
            for h in headers:
                text = h.read_text(encoding="utf-8")
                m = re.search(rf"\bstruct\s+{name}\s*\{{", text)
                if m is None:
                    continue
                close = text.find("\n    };", m.end())
                close = text.find("};", m.end()) if close < 0 else close
                body = text[m.end():close]
                mem = re.search(rf"^(\s*){typ}\s+(\w+)\s*;", body, re.M)
                if mem is None:
                    break
                facts = {"struct": name, "member": mem.group(2)}
                new = mem.group(1) + planted.format(**facts)
                s, e = m.end() + mem.start(), m.end() + mem.end()
                h.write_text(text[:s] + new + text[e:], encoding="utf-8")
                return facts
        raise NotApplicable(f"no plain verb call's payload declares a {typ} member")


@dataclass(frozen=True)
class PayloadPin:
    """The header's own size pin of a plain verb call's payload (``MGP_ASSERT_POD(T, N)``)
    re-pinned ``delta`` bytes off (facts: ``payload``, ``old``, ``new``)."""

    delta: int = 4
    file: str = "(found by meaning)"

    def run(self, tree: Path, catalogue_name: str) -> Facts:
        import re

        cat = _cat(tree, catalogue_name)
        root = tree / catalogue_name
        headers = sorted(root.glob("*.h")) + sorted((root / "include").glob("*.h"))
        for name in dict.fromkeys(c.payload.text for c in cat.calls if _plain(cat, c)):
            for h in headers:
                text = h.read_text(encoding="utf-8")
                m = re.search(rf"\bMGP_ASSERT_POD\(\s*{name}\s*,\s*(\d+)\s*\)", text)
                if m is None:
                    continue
                new = str(int(m.group(1)) + self.delta)
                h.write_text(text[:m.start(1)] + new + text[m.end(1):], encoding="utf-8")
                return {"payload": name, "old": m.group(1), "new": new, "header": h.name}
        raise NotApplicable("the catalogue has no MGP_ASSERT_POD pin of a plain verb call's payload")


def _continued(line: str) -> bool:
    return line.rstrip().endswith("\\")


__all__ = ["FieldRows", "HeaderEdit", "MemberEdit", "PayloadPin", "AtRow", "DropRow", "Facts", "LockSite", "NotApplicable", "SetValue", "WHERE"]
