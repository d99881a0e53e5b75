"""The one validated model every output renders from (pydantic, frozen).

The model holds facts already decided: opcodes, layouts (from libclang), the chunk table,
ownership, coverage. Templates only print it; the Python tables module is a dump of it.

One model for both catalogue shapes (``Model.shape``): the bundled ``catalogue/`` and
MobileGL's own ``MG_Pipe`` tree (:mod:`mgpipe.gen.build_mobilegl`). What the fields hold for
MobileGL's tree:

* ``calls``: MGP_CALL_LIST rows in order (opcode = row); ``flag_bits`` from the
  ``MGPipeCallFlags`` enumerators; ``validate_class`` through the stamp row (MGP_VERB_OP_LIST
  call -> verb -> the verb's MGP_FILL_VERB_LIST class), None for a call with no stamp row.
* ``structs``: every wire struct (payloads, field-listed structs and what they nest),
  members in declaration order with libclang's offsets and sizes; ``pinned_size`` is the
  header's own pin (``MGP_ASSERT_POD(T, N)`` / ``static_assert(sizeof(T) == N)``), None where
  the headers pin none (MGPCaps). ``std::array<T, N>`` members (MobileGL's ``Array``) read as
  arrays of ``T`` (``count`` N).
* ``transport_structs``: the structs of mgpipe's overlay header that no record carries (the
  reverse channel's reply slot and event layouts), built like ``structs``; the Python tables
  list them in ``STRUCTS``, the ABI fingerprint and the C++ wire outputs do not.
* ``render_state``: the chunks from ``kMGPipeRenderStateChunkBoundaries`` and
  ``MGPipeRenderStateChunkIsPipeline`` (evaluated by the compiler); a member's ``cls`` is the
  class of the chunks its bytes lie in (``kSplit`` across both, with ``sub_members``).
  ``spans`` / ``setters`` / ``tails`` / ``handle_fields`` come from mgpipe's overlay lists
  when the tree carries them, else are empty.
* ``pipe_inputs``: Coverage.def's accessors (first-seen order = field id); ``field`` is the
  accessor name (the tree declares no PipeInputs struct, so ``type`` is ""); ``lifetime``
  kSticky for MGP_COVERAGE_STICKY_LIST; ``ownership`` one of ``ownership_classes``
  (RECORD_SUPPLIED derived), with ``phase``, ``why`` and ``emitted_by``.
* ``validate_classes``: MGP_FILL_CLASS_LIST; ``fill_points``: (class, accessors) of
  MGP_FILL_FIELD_LIST; ``verbs``: MGP_FILL_VERB_LIST (= GLFunctionsTable's order).
* ``documented_count``: MGP_CALL_LIST_DOCUMENTED_COUNT; ``lists``: every other real list
  row by row (:class:`Named`; ``model.rows_of("MGP_VERB_OP_LIST")``).
* ``names``: the header spelling of each vocabulary role (``model.name_of("flag_enum")`` is
  ``MGPipeCallFlags`` there, ``MGPipeCallFlag`` in the bundled catalogue;
  :mod:`mgpipe.gen.vocabulary`).
* ``catalogue_fingerprint`` (the build fingerprint) = ``abi_fingerprint``
  (:mod:`mgpipe.gen.identity`): rows, members and chunk table, never a file's text.
* ``inputs``: paths spelt ``catalogue/...`` (bundled) or ``MG_Pipe/...`` (MobileGL), never
  the directory's own name.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Member(Frozen):
    name: str
    offset: int
    size: int
    type: str  # as written: "Uint32", "MGPipeHandle", "FloatVec4[16]"
    scalar: str | None  # u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 b8, for scalar elements
    struct: str | None  # element struct name for struct members
    count: int  # array length, 1 when not an array
    elem_size: int
    is_float: bool  # the element (or any leaf inside it) is a float: compare by bits
    cls: str | None = None  # render-state class (RenderStateParameters only)


class SubMember(Frozen):
    path: str  # "StencilStates[1].Ref"
    offset: int
    size: int
    scalar: str | None
    cls: str | None = None


class Struct(Frozen):
    name: str
    size: int
    align: int
    header: str  # display path of the declaring header
    members: tuple[Member, ...]
    pinned_size: int | None  # PayloadSizes.def
    has_blob_ref: bool  # holds an MGPBlobRef member (directly or nested)


class Call(Frozen):
    opcode: int
    name: str
    payload: str
    cls: str
    flags: tuple[str, ...]  # as written, kNone dropped
    flag_bits: int
    wait_class: str
    validate_class: str | None
    payload_size: int
    table: str  # "MGPipeScreen" (share-group scope) or "MGPipeContext" (G1, G2)


class Chunk(Frozen):
    offset: int
    length: int
    cls: str  # kPipeline | kDynamic
    index: int  # position within its half (the ChunkMask bit)
    members: tuple[str, ...]  # members (or sub-members) whose bytes it holds


class RenderState(Frozen):
    struct: str
    size: int
    members: tuple[Member, ...]
    sub_members: tuple[SubMember, ...]  # split members expanded, every element
    chunks: tuple[Chunk, ...]
    spans: tuple[Span, ...]  # Espryt span boundaries (EsprytSpans.def)
    pipeline_members: tuple[str, ...]

    @property
    def pipeline(self) -> tuple[Chunk, ...]:
        return tuple(c for c in self.chunks if c.cls == "kPipeline")

    @property
    def dynamic(self) -> tuple[Chunk, ...]:
        return tuple(c for c in self.chunks if c.cls == "kDynamic")


class Tail(Frozen):
    call: str
    element: str  # struct name or scalar type name
    elem_size: int
    scalar: str | None  # for a scalar element
    count_field: str | None  # None: exactly one element
    bound: str | None  # constant name
    bound_value: int | None
    cond_field: str | None
    cond_bit: str | None
    cond_value: int
    when: str  # kAlways | kWhenSet | kWhenClear


class HandleField(Frozen):
    call: str
    field: str  # generic path; a tail as <Element>[] or <Element>[].Member
    kind: str  # MGPipeHandleKind enumerator, Resource or KindFromRecord
    nullable: bool


class Span(Frozen):
    constant: str
    member: str
    offset: int


class Setter(Frozen):
    setter: str
    arm: str | None
    bump: str
    writes: tuple[str, ...]


class PipeInput(Frozen):
    id: int
    accessor: str
    field: str
    lifetime: str
    ownership: str
    call: str  # answering call, or kClientResolved
    type: str  # "" where the tree declares no PipeInputs struct (MobileGL's MG_Pipe)
    fill_classes: tuple[str, ...]
    phase: str | None = None  # the retiring phase (FieldOwnership.def), "-" for none
    why: str | None = None  # the row's reason, or how the class was derived
    emitted_by: str | None = None  # the call Coverage.def's emitted list names, if any


class Verb(Frozen):
    """A frontend verb (FillPoints.def MGP_FILL_VERB_LIST) and its validate class."""

    name: str
    cls: str


class Named(Frozen):
    """A row of one of MobileGL's free-standing lists: a key, its values, its reason.

    ``list`` names the list (``MGP_VERB_OP_LIST``, ``MGP_DIRTY_SURFACE_LIST``, ...);
    ``key`` is the row's first column, ``values`` the middle columns as written (a flag
    column as its ``|``-separated parts), ``why`` the reason string where the list has one.
    """

    list: str
    key: str
    values: tuple[str, ...]
    why: str | None = None


class FieldList(Frozen):
    struct: str
    fields: tuple[str, ...]


class Enum(Frozen):
    name: str
    values: tuple[tuple[str, int], ...]


class InputFile(Frozen):
    path: str  # display path, never absolute: "<catalogue dir name>/<name>"
    name: str  # path inside the catalogue: "PipeCalls.def", "include/MGPipe.h"
    fingerprint: str


HEADERS = "include/"


def is_header(name: str) -> bool:
    """A catalogue input that is a C++ header: under ``include/`` (bundled) or beside the
    .def files (MobileGL's tree)."""
    return name.startswith(HEADERS) or name.endswith((".h", ".hh", ".hpp"))

#: Which catalogue inputs each model field is computed from ("include/" = every header:
#: the headers are one translation unit, so any of them can move any layout). An output's
#: provenance header lists exactly the inputs of the fields it reads (its ``READS``).
SOURCES: dict[str, tuple[str, ...]] = {
    "calls": ("PipeCalls.def", "FillPoints.def", HEADERS),
    "structs": ("PayloadSizes.def", "PipeFields.def", HEADERS),
    "transport_structs": (HEADERS,),
    "enums": (HEADERS,),
    "constants": (HEADERS,),
    "field_lists": ("PipeFields.def",),
    "render_state": ("PipeFields.def", "EsprytSpans.def", HEADERS),
    "setters": ("RenderStateSetters.def", "PipeFields.def", HEADERS),
    "tails": ("Tails.def", HEADERS),
    "handle_fields": ("HandleFields.def",),
    "pipe_inputs": ("PipeInputs.def", "FieldOwnership.def", "Coverage.def", "FillPoints.def", HEADERS),
    "validate_classes": (HEADERS,),
    "ownership_classes": (HEADERS,),
    "fill_points": ("FillPoints.def", HEADERS),
    "shape": (),
    "names": (),
    "documented_count": ("PipeCalls.def",),
    "verbs": ("FillPoints.def", HEADERS),
    "lists": ("PipeFields.def", "Coverage.def", "FieldOwnership.def", "DirtySurface.def",
              "FatalFamilies.def", "SubsystemDeps.def"),
    "abi_fingerprint": ("PipeCalls.def", "PipeFields.def", HEADERS),
}


class Model(Frozen):
    catalogue_fingerprint: str  # the build fingerprint: the ABI fingerprint (gen/identity.py)
    input_fingerprint: str  # xxh64 over every input
    inputs: tuple[InputFile, ...]
    calls: tuple[Call, ...]
    structs: tuple[Struct, ...]
    #: the overlay's structs no record carries (the reverse channel's reply slot and event
    #: layouts): in the tables' STRUCTS, outside the ABI fingerprint and the wire outputs
    transport_structs: tuple[Struct, ...] = ()
    enums: tuple[Enum, ...]
    constants: tuple[tuple[str, int], ...]
    field_lists: tuple[FieldList, ...]
    render_state: RenderState
    setters: tuple[Setter, ...]
    tails: tuple[Tail, ...]
    handle_fields: tuple[HandleField, ...]
    pipe_inputs: tuple[PipeInput, ...]
    validate_classes: tuple[str, ...]
    ownership_classes: tuple[str, ...]
    fill_points: tuple[tuple[str, tuple[str, ...]], ...]
    #: "bundled" or "mobilegl" (see :mod:`mgpipe.gen.vocabulary`)
    shape: str = "bundled"
    #: role -> the header spelling of that role (``flag_enum`` -> ``MGPipeCallFlags``)
    names: tuple[tuple[str, str], ...] = ()
    #: MGP_CALL_LIST_DOCUMENTED_COUNT (MobileGL's tree), None where the catalogue has none
    documented_count: int | None = None
    #: the frontend verbs in GLFunctionsTable order (MobileGL's FillPoints.def)
    verbs: tuple[Verb, ...] = ()
    #: MobileGL's other lists, row by row: MGP_VERIFY_PAYLOAD_LIST, MGP_COVERAGE_STICKY_LIST,
    #: MGP_COVERAGE_DELTA_LIST, MGP_COVERAGE_EMITTED_LIST, MGP_FIELD_OWNERSHIP_FORWARD_LIST,
    #: MGP_FIELD_OWNERSHIP_ARG_LIST, MGP_VERB_OP_LIST, MGP_VERB_OP_EXEMPT_LIST,
    #: MGP_DIRTY_SURFACE_LIST, MGL_FATAL_FAMILY_LIST, MGL_SUBSYSTEM_DEPENDENCY_LIST
    lists: tuple[Named, ...] = ()
    #: xxh64 over the ABI (rows, members, chunk table), never over a file's text
    abi_fingerprint: str = ""

    def name_of(self, role: str) -> str:
        """The header spelling of a vocabulary role (``model.name_of("flag_enum")``)."""
        return dict(self.names)[role]

    def rows_of(self, list_name: str) -> tuple[Named, ...]:
        """The rows of one of MobileGL's lists by its real name (empty when absent)."""
        return tuple(r for r in self.lists if r.list == list_name)

    def inputs_of(self, reads: tuple[str, ...]) -> tuple[InputFile, ...]:
        """The inputs the model fields ``reads`` are computed from (see :data:`SOURCES`)."""
        wanted = {src for field in reads for src in SOURCES[field]}
        return tuple(f for f in self.inputs
                     if f.name in wanted or (HEADERS in wanted and is_header(f.name)))

    def struct(self, name: str) -> Struct:
        for s in self.structs:
            if s.name == name:
                return s
        raise KeyError(name)

    def enum(self, name: str) -> Enum:
        for e in self.enums:
            if e.name == name:
                return e
        raise KeyError(name)

    def payload_structs(self) -> tuple[Struct, ...]:
        """Every struct a record can carry: payloads first (opcode order), then the rest."""
        seen: list[str] = []
        for c in self.calls:
            if c.payload not in seen:
                seen.append(c.payload)
        rest = [s.name for s in self.structs if s.name not in seen]
        return tuple(self.struct(n) for n in seen + rest)


__all__ = [
    "Call",
    "Chunk",
    "Enum",
    "FieldList",
    "InputFile",
    "Member",
    "Model",
    "Named",
    "Verb",
    "is_header",
    "PipeInput",
    "SOURCES",
    "RenderState",
    "Setter",
    "Struct",
    "SubMember",
]
