"""The header declarations a catalogue's rows are read against, by the role they play.

The bundled catalogue and MobileGL's own ``MG_Pipe`` tree name some of them differently
(the flag enum is ``MGPipeCallFlag`` in one and ``MGPipeCallFlags`` in the other; the
handle kinds ``MGPipeHandleKind`` and ``MGPipeKind``). Every gate and output asks for a
role (``vocab.flag_enum``), never for a spelling, so one reader serves both shapes; each
spelling is written here once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Vocabulary:
    shape: str  # "bundled" | "mobilegl"
    class_enum: str = "MGPipeCallClass"
    flag_enum: str = "MGPipeCallFlag"
    wait_enum: str = "MGPipeWaitClass"
    handle_kind_enum: str = "MGPipeHandleKind"
    handle_struct: str = "MGPipeHandle"
    blob_struct: str = "MGPBlobRef"
    #: the one wire struct whose shape changes with the transport (a pointer in monolith, a
    #: segment offset across processes): its members are the transport's, not WIRE-POD's
    host_span_struct: str | None = None
    rs_struct: str = "RenderStateParameters"
    #: the flag that means "no flag": alone in its column or not at all
    no_flag: str = "kNone"
    reply_flag: str = "kReplySlot"
    reply_wait: str = "kWaitReply"
    blob_flag: str = "kHasBlob"
    var_tail_flag: str = "kVarTail"
    #: a flag no other column or member is checked against (a table entry may be null)
    free_flag: str = "kOptional"
    #: the C++ language standard the headers are written in
    std: str = "c++17"
    #: macros whose ``M(T, N)`` pins ``sizeof(T) == N`` in the headers ("" where the
    #: catalogue pins sizes in PayloadSizes.def instead)
    pin_macros: tuple[str, ...] = ()
    #: members excluded from a field list because they are padding (a regular expression)
    padding_member: str | None = None
    #: the ``constexpr`` chunk boundaries of RenderStateParameters and the function that
    #: says whether chunk i is in the pipeline half (MGPipeRenderStateSpans.h)
    chunk_boundaries: str | None = None
    chunk_is_pipeline: str | None = None
    chunk_count: str | None = None
    #: the function-pointer struct whose members are the frontend's verbs, in order
    verb_table_struct: str | None = None
    #: the four ownership classes of FieldOwnership.def (RECORD_SUPPLIED is derived)
    ownership_classes: tuple[str, ...] = ()
    record_supplied: str = "RECORD_SUPPLIED"
    barrier_pulled: str = "BARRIER_PULLED"
    #: the verb class of the call that is a verb of the catalogue's own kind
    verb_call_class: str = "kCtxVerb"
    #: a FieldOwnership row's "no phase"
    no_phase: str = "-"


BUNDLED = Vocabulary(shape="bundled")

MOBILEGL = Vocabulary(
    shape="mobilegl",
    flag_enum="MGPipeCallFlags",
    handle_kind_enum="MGPipeKind",
    host_span_struct="MGHostSpan",
    std="c++23",
    pin_macros=("MGP_ASSERT_POD",),
    padding_member=r"Pad\d*",
    chunk_boundaries="kMGPipeRenderStateChunkBoundaries",
    chunk_is_pipeline="MGPipeRenderStateChunkIsPipeline",
    chunk_count="kMGPipeRenderStateChunkCount",
    verb_table_struct="GLFunctionsTable",
    ownership_classes=("RECORD_SUPPLIED", "APPLIER_DERIVED", "BARRIER_PULLED", "FATAL"),
)


def vocabulary(shape: str) -> Vocabulary:
    return MOBILEGL if shape == "mobilegl" else BUNDLED


__all__ = ["BUNDLED", "MOBILEGL", "Vocabulary", "vocabulary"]
