"""The resolved ``SETTERS`` rows (RenderStateSetters.def) and the setter argument kinds.

Each row names a RenderState setter (and arm), its bump group and the members it writes;
resolved here into the byte ranges of ``RenderStateParameters`` it writes and each range's
class (``kPipeline`` / ``kDynamic``, per sub-member for the split ``StencilStates``), all
from the generated tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any

from ..schema import tables as _t

__all__ = [
    "Arg", "SetterRow", "setter_rows", "rows_of", "row_for", "method_name", "clear_cache",
    "member", "RS_STRUCT", "rs_struct", "KITS",
]  # fmt: skip



class Kits(dict):
    """Per-setter patch kits (``setter_kits``) by setter name, each compiled at its first
    subscript by the builder registered for it in :attr:`builders` (``()``: no kit, the
    general path); emptied with the rows by :func:`clear_cache`."""

    def __init__(self) -> None:
        super().__init__()
        self.builders: dict[str, Callable[[str], tuple | None]] = {}

    def __missing__(self, setter: str) -> tuple:
        build = self.builders.get(setter)
        k = self[setter] = (build(setter) if build is not None else None) or ()
        return k


KITS = Kits()

def rs_struct() -> str:
    """The render-state block, as the tables name it (``RENDER_STATE["struct"]``)."""
    return str(_t.tables().RENDER_STATE["struct"])


def __getattr__(name: str) -> str:
    if name == "RS_STRUCT":  # read from the tables on first use, not at import
        return rs_struct()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class Arg:
    """What a setter parameter holds (read by the G7 test to generate arguments).

    ``kind``: ``f32`` ``u32`` ``i32`` ``bool`` ``glenum`` ``enum`` (``ref`` = enum name),
    ``index`` (``ref`` bounds it: a constant, or ``.Member``, an array member of the
    render-state block whose element count is the bound; :func:`index_bound`), ``arm``
    (``ref`` = selector enum),
    ``face`` (``CullFaceMode``), ``pixel`` (a ``PixelStoreParameters`` member name).
    """

    kind: str
    ref: str | None = None


F32 = Annotated[float, Arg("f32")]
U32 = Annotated[int, Arg("u32")]
I32 = Annotated[int, Arg("i32")]
B8 = Annotated[bool, Arg("bool")]
GLenum = Annotated[int, Arg("glenum")]
Face = Annotated[int | str, Arg("face", "CullFaceMode")]
#: MobileGL sizes the viewport arrays with a macro (``MAX_VIEWPORTS``) the tables do not
#: carry as a constant: the bound is the element count of the block's ``Viewports`` array
ViewportIndex = Annotated[int, Arg("index", ".Viewports")]
DrawBufferIndex = Annotated[int, Arg("index", "kMGMaxDrawBuffers")]
Cap = Annotated[int | str, Arg("arm", "CapabilityInput")]
Hint = Annotated[int | str, Arg("arm", "HintTarget")]


def index_bound(ref: str) -> int:
    """The exclusive bound an ``index`` argument's ``ref`` names: ``CONSTANTS[ref]``, or,
    for ``.Member``, the element count of that array member of the render-state block."""
    if not ref.startswith("."):
        return int(_t.constant(ref))
    return int(member(rs_struct(), ref[1:])["count"])


def _enum(name: str) -> Any:
    return Annotated[int | str, Arg("enum", name)]


BlendFactorArg = _enum("BlendFactor")
BlendEquationArg = _enum("BlendEquation")
LogicOpArg = _enum("LogicOperation")
DepthFuncArg = _enum("DepthTestFunc")
StencilOpArg = _enum("StencilOperation")
CullFaceArg = _enum("CullFaceMode")
FrontFaceArg = _enum("FrontFaceMode")
ProvokingArg = _enum("ProvokingVertexMode")
PixelParam = Annotated[str, Arg("pixel")]


@dataclass(frozen=True, slots=True)
class SetterRow:
    """One ``SETTERS`` row, resolved: the byte ranges it writes and their class."""

    setter: str
    arm: str | None
    bump: str
    writes: tuple[str, ...]
    ranges: tuple[tuple[int, int, str], ...]  # (offset, size, "kPipeline" | "kDynamic")

    @property
    def label(self) -> str:
        return self.setter if self.arm is None else f"{self.setter}({self.arm})"


def method_name(setter: str) -> str:
    """``SetStencilFunc`` -> ``set_stencil_func``."""
    out = []
    for i, ch in enumerate(setter):
        if ch.isupper() and i and not setter[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def member(struct: str, name: str) -> dict:
    """``STRUCTS[struct]`` member ``name``."""
    for m in _t.struct_info(struct)["members"]:
        if m["name"] == name:
            return m
    raise _t.TablesError(f"{struct} has no member {name!r}")


def _ranges(path: str) -> list[tuple[int, int, str]]:
    rs = _t.tables().RENDER_STATE
    head, _, sub = path.partition(".")
    m = member(rs_struct(), head)
    if not sub:
        return [(m["offset"], m["size"], rs["member_class"][head])]
    s = member(m["struct"], sub)
    cls = rs["member_class"][head]
    if cls == "kSplit":
        cls = rs["sub_member_class"][sub]
    return [
        (m["offset"] + i * m["elem_size"] + s["offset"], s["size"], cls) for i in range(m["count"])
    ]


@lru_cache(maxsize=None)
def _schema() -> tuple[dict[tuple[str, str | None], SetterRow], dict[str, tuple[SetterRow, ...]]]:
    by_key: dict[tuple[str, str | None], SetterRow] = {}
    by_setter: dict[str, list[SetterRow]] = {}
    for r in _t.tables().SETTERS:
        ranges = tuple(x for w in r["writes"] for x in _ranges(w))
        row = SetterRow(r["setter"], r["arm"], r["bump"], tuple(r["writes"]), ranges)
        by_key[(row.setter, row.arm)] = row
        by_setter.setdefault(row.setter, []).append(row)
    return by_key, {k: tuple(v) for k, v in by_setter.items()}


def setter_rows() -> tuple[SetterRow, ...]:
    """Every ``SETTERS`` row, resolved, in table order."""
    return tuple(_schema()[0].values())


def clear_cache() -> None:
    """Forget the resolved rows (after the tables module or its SETTERS was replaced)."""
    _schema.cache_clear()
    KITS.clear()


def rows_of(setter: str) -> tuple[SetterRow, ...]:
    """Every row of one setter, in table order (arms included)."""
    return _schema()[1].get(setter, ())


def row_for(setter: str, arm: str | None) -> SetterRow | None:
    return _schema()[0].get((setter, arm))
