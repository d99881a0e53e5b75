"""What every gate reads: the catalogue, the layouts, where errors go, and the shared names.

:class:`Ctx` is handed to each gate of :data:`mgpipe.gen.gates.GATES`; the constants are the
header declarations the gates read by name (see ``VOCABULARY`` in :mod:`mgpipe.gen.gates`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mgpipe.gen.catalogue import Catalogue, Loc
from mgpipe.gen.errors import ErrorCollector, one_of
from mgpipe.gen.layout_model import Layouts, Struct
from mgpipe.gen.vocabulary import BUNDLED, Vocabulary

if TYPE_CHECKING:
    from mgpipe.gen.lock import LockPolicy

CLIENT_RESOLVED = "kClientResolved"
REPLY_FLAG, REPLY_WAIT = "kReplySlot", "kWaitReply"
BLOB_STRUCT = "MGPBlobRef"
RS_STRUCT = "RenderStateParameters"
INPUTS_STRUCT = "PipeInputs"


@dataclass
class Ctx:
    cat: Catalogue
    lay: Layouts
    errors: ErrorCollector = field(default_factory=ErrorCollector)
    disabled: frozenset[str] = frozenset()
    lock: LockPolicy | None = None  # generating: check the lock against the outputs' opcodes
    vocab: Vocabulary = BUNDLED  # the header spellings of the roles the gates read

    def enum(self, name: str) -> dict[str, int]:
        e = self.lay.enums.get(name)
        return e.values() if e else {}

    def err(self, loc: Loc, gate: str, text: str) -> None:
        self.errors.add(loc.error(gate, text))

    def struct_loc(self, s: Struct) -> Loc:
        return Loc(s.path, s.line, s.col)


def one_of_enum(values: dict[str, int]) -> str:
    return one_of(values, "an enumerator of an enum the headers do not declare (or leave empty)")


def holds(lay: Layouts, struct: str, target: str, depth: int = 0) -> bool:
    """Does ``struct`` contain a ``target`` member, directly or nested?"""
    s = lay.structs.get(struct)
    if s is None or depth > 8:
        return False
    return any(m.struct == target or (m.struct and holds(lay, m.struct, target, depth + 1))
               for m in s.members)



HANDLE_STRUCT = "MGPipeHandle"
HANDLE_KIND_ENUM = "MGPipeHandleKind"

__all__ = ["BLOB_STRUCT", "CLIENT_RESOLVED", "Ctx", "HANDLE_KIND_ENUM", "HANDLE_STRUCT",
           "INPUTS_STRUCT", "RS_STRUCT", "holds", "one_of_enum"]
