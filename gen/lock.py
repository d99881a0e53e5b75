"""Opcodes cannot be renumbered by editing the lock: the lock has a witness.

``PipeCalls.lock`` pins name -> opcode and is only ever appended to (APPEND-ONLY checks the
catalogue's rows against it). The lock is a file like any other, so it is itself checked
against the opcode table already in the output directory, ``PipeWire.inc`` (G3), which was
generated from it:

* ``LOCK-MISSING`` -- there is no lock (next to existing outputs or not): a lost lock is
  restored from version control, and a new catalogue starts with ``mgpipe gen --init-lock``;
* ``LOCK-WITNESS`` -- a call ``PipeWire.inc`` numbers would get another opcode, or its lock
  row disappeared (``--init-lock`` may only rebuild a lost lock that numbers every call as
  ``PipeWire.inc`` does).

A retired call keeps its row and its opcode; ``ci/run`` also checks the lock's git history
(:mod:`mgpipe.gen.lockhistory`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mgpipe.gen.catalogue import Loc, display
from mgpipe.gen.errors import GenError, decode_utf8
from mgpipe.gen.g3_wire import FILE as WITNESS_FILE
from mgpipe.gen.g3_wire import OP_PREFIX, OP_SENTINELS


@dataclass(frozen=True)
class Witness:
    """The opcodes an existing ``PipeWire.inc`` assigns: name -> (opcode, line)."""

    path: str  # as shown in messages
    opcodes: dict[str, tuple[int, int]]


@dataclass(frozen=True)
class LockPolicy:
    """What `mgpipe gen` checks the lock against: the output directory and --init-lock."""

    out_dir: Path
    init_lock: bool = False


def read_witness(out_dir: Path) -> Witness | None:
    """The opcode table of ``out_dir/PipeWire.inc``, or None when there is none."""
    path = Path(out_dir) / WITNESS_FILE
    if not path.is_file():
        return None
    shown = display(path, path.parent)
    text = decode_utf8(path.read_bytes(), shown, "LOCK-WITNESS")
    row = re.compile(rf"^\s*{re.escape(OP_PREFIX)}([A-Za-z_]\w*) = (\d+),\s*$")
    opcodes: dict[str, tuple[int, int]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        m = row.match(line)
        if m and m.group(1) not in OP_SENTINELS:
            opcodes[m.group(1)] = (int(m.group(2)), n)
    return Witness(shown, opcodes)


def check_lock(ctx, policy: LockPolicy) -> None:  # type: ignore[no-untyped-def]
    """LOCK-MISSING / LOCK-WITNESS (see the module doc); errors go to ``ctx``."""
    cat = ctx.cat
    lock_path = cat.path_of("PipeCalls.lock")
    has_lock = (cat.root / "PipeCalls.lock").is_file()
    try:
        witness = read_witness(policy.out_dir)
    except GenError as exc:
        ctx.errors.add(exc)
        return
    if not has_lock and not policy.init_lock:
        beside = (f" next to existing outputs ({witness.path} numbers {len(witness.opcodes)} calls)"
                  if witness else "")
        ctx.err(Loc(lock_path, 1, 1), "LOCK-MISSING",
                f"PipeCalls.lock not found{beside}, expected it restored from version control, "
                f"or `mgpipe gen --init-lock` to start a new catalogue")
        return
    if witness is None:
        return
    locked = {r.name.text: (int(r.opcode.text), r) for r in cat.lock if r.opcode.kind == "int"}
    rows = {r.name.text: i + 1 for i, r in enumerate(cat.calls)}
    for name, (op, line) in sorted(witness.opcodes.items(), key=lambda kv: kv[1]):
        at = Loc(witness.path, line, 1)
        if name in locked:
            lop, row = locked[name]
            if lop != op:
                ctx.err(row.opcode.loc, "LOCK-WITNESS",
                        f"{lock_path} pins {name} at opcode {lop} but {witness.path}:{line} numbers "
                        f"it {op}: one of them was edited, expected them to agree (restore the "
                        f"edited one from version control)")
            continue
        now = rows.get(name)
        if now is None:
            ctx.err(at, "LOCK-WITNESS",
                    f"{witness.path} numbers {name} opcode {op} but neither PipeCalls.def nor "
                    f"{lock_path} has it any more, expected its row and its lock row back (a "
                    f"retired call keeps its row and its opcode)")
        elif now != op:
            ctx.err(at, "LOCK-WITNESS",
                    f"call {name} would move from opcode {op} ({witness.path}:{line}) to {now}, and "
                    f"{lock_path} has no row for it, expected L({name}, {op}) back in the lock and "
                    f"{name} back at row {op}")
        elif not policy.init_lock:
            ctx.err(at, "LOCK-WITNESS",
                    f"{witness.path} numbers {name} opcode {op} but {lock_path} has no row for it: a "
                    f"lock row disappeared, expected L({name}, {op}) back (a retired call keeps its "
                    f"row and its opcode)")


def gate_lock(ctx) -> None:  # type: ignore[no-untyped-def]
    """The lock gate; it runs only when generating (``ctx.lock`` names the output dir)."""
    if ctx.lock is not None:
        check_lock(ctx, ctx.lock)


__all__ = ["LockPolicy", "Witness", "check_lock", "gate_lock", "read_witness"]
