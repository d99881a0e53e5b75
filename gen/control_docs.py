"""What each `mgpipe self-test` control protects, in words: the column of the controls
table in docs/SELFTEST.md, rendered by :func:`markdown_table` (a test keeps the document
equal to it, so the table lists every control there is)."""

from __future__ import annotations

from mgpipe.gen.controls import CONTROLS, Control

PROTECTS: dict[str, str] = {
    'pod-pointer': 'wire payloads hold no pointer (ARCHITECTURE.md §4: "never a pointer")',
    'pod-reference': 'wire payloads hold no reference',
    'pod-function-pointer': 'wire payloads hold no function pointer',
    'pod-anonymous-union': "no union in a wire struct (and no anonymous record's absolute path in the tables)",
    'pod-long-double': 'no long double (its width differs by platform)',
    'pod-int128': 'no __int128 (not a wire scalar)',
    'pod-float16': 'no _Float16 (not a wire scalar; libclang cannot even name its kind)',
    'pod-vector': 'no vector types',
    'pod-not-fixed-width': 'every scalar has one width on LP64 and LLP64 (no long)',
    'pod-bit-field': "no bit-fields (libclang offsets are bytes, the codec's too)",
    'pod-named-union': 'no union, named or not, in the catalogue headers or inside a wire struct',
    'pod-packed-attribute': "no packing attribute changes a wire struct's alignment",
    'pod-pragma-pack': "no #pragma pack changes a wire struct's alignment",
    'name-keyword-call': 'call names are identifiers C++ accepts (G1/G2 declare them)',
    'name-reserved-struct': 'struct names are not reserved to the C++ implementation',
    'name-reserved-member': 'member names are not reserved to the C++ implementation',
    'append-only-moved': 'opcodes never renumber: a locked call keeps its row (PipeCalls.lock)',
    'append-only-deleted': 'opcodes never renumber: a locked call keeps its row (PipeCalls.lock)',
    'lock-missing': 'a lost PipeCalls.lock is refused, not silently rebuilt (new catalogues: --init-lock)',
    'lock-swap-and-unlock': 'opcodes cannot be renumbered by swapping rows and deleting their lock rows',
    'lock-row-deleted': 'a lock row cannot disappear while generated/PipeWire.inc numbers its call',
    'lock-opcode-edited': "a lock row's opcode cannot be edited away from generated/PipeWire.inc's",
    'wait-class-reply-slot': 'every kReplySlot row waits kWaitReply and no other row does (no hung waiter, no unanswered wait)',
    'wait-class-no-slot': 'every kReplySlot row waits kWaitReply and no other row does (no hung waiter, no unanswered wait)',
    'unknown-wait-class': 'the wait-class column names an MGPipeWaitClass enumerator',
    'unknown-payload': "a call's payload is a struct libclang found in catalogue/include",
    'unknown-class': 'the class column names an MGPipeCallClass enumerator',
    'unknown-flag': 'every flag names an MGPipeCallFlag enumerator',
    'duplicate-call': 'call names are unique',
    'blob-ref': 'a kHasBlob payload carries an MGPBlobRef',
    'size-drift': 'a wire payload never changes size without a reviewed PayloadSizes.def pin',
    'size-pin': 'every payload has an ABI pin',
    'field-missing': 'every struct member has a PipeFields.def row (G4 compares every field)',
    'field-unknown': 'every PipeFields.def row names a real member',
    'field-order': 'field lists follow declaration order',
    'field-list': 'each MGP_FIELDS_ list names a struct, and each payload has a list',
    'pipe-inputs': 'PipeInputs.def rows and struct PipeInputs fields correspond one to one; lifetimes are known',
    'ownership-two': 'every PipeInputs field is in exactly one ownership class (G8)',
    'ownership-none': 'every PipeInputs field is in exactly one ownership class (G8)',
    'coverage-call': 'a coverage row names a real call (G6)',
    'coverage-unmapped': 'zero UNMAPPED backend read points (G6)',
    'coverage-accessor': 'a coverage row names a real PipeInputs accessor, once',
    'fill-points': 'validate classes and fill points name real classes, calls and fields (G5)',
    'tails': "every kVarTail call's tails name real members, bounds and conditions",
    'spans': 'Espryt span boundaries name members, in ascending offset order (G7)',
    'handle-unmapped': 'every handle a record carries is mapped to a kind (the applier resolves it by name)',
    'handle-kind': 'handle kinds are MGPipeHandleKind enumerators (or Resource / KindFromRecord)',
    'chunk-unclassified': 'the pipeline/dynamic chunks partition all 1168 bytes exactly (G7)',
    'chunk-overlap': 'the pipeline/dynamic chunks partition all 1168 bytes exactly (G7)',
    'rs-class': 'render-state classes are MGPipeRenderStateClass enumerators',
    'chunk-mask': 'neither half has more chunks than ChunkMask has bits',
    'setter-version-writes-pipeline': "a setter's bump group matches the classes of the bytes it writes",
    'setter-both-writes-dynamic': "a setter's bump group matches the classes of the bytes it writes",
    'setter-member': 'a setter writes real members',
    'setter-coverage': 'every render-state member is written by some setter',
    'def-syntax': 'a malformed .def row is refused at its line:col in plain words',
    'def-shape': "every row has its list's argument count",
    'def-missing': 'every catalogue file is present',
    'def-encoding': 'a .def or lock file that is not UTF-8 is refused at its first bad byte',
    'catalogue-missing': 'a missing catalogue directory is one refusal naming it',
    'header-missing': 'a missing include/ is one root cause, its echoes counted',
    'header-vocabulary': 'a header declaration the rows are read against is missing: one root cause',
    'header-compile': 'the headers compile (libclang diagnostics at their place)',
    'header-duplicate': 'one declaration per struct/enum/constant name',
    'stale-hand-edit': "`gen --check` (CI's diff gate) names every generated file that differs",
    'stale-after-change': "`gen --check` (CI's diff gate) names every generated file that differs",
    'g4-float-bits': 'G4 comparators compare floats by bits: -0.0 != 0.0, NaN payloads told apart',
    'clean': 'the unplanted copy passes: every red above is caused by its plant',
    'flag-none': 'kNone stands alone in a flag column',
    'any-wait-class-reply': 'every kReplySlot row waits kWaitReply (any tree: the site is a reply-slot call)',
    'any-wait-class-no-slot': 'no row waits kWaitReply without kReplySlot (any tree)',
    'any-flag-none': 'kNone stands alone in a flag column (any tree)',
    'any-unknown-flag': 'every flag is an enumerator of the flag enum (any tree)',
    'any-unknown-class': 'the class column names a call-class enumerator (any tree)',
    'any-unknown-wait-class': 'the wait-class column names a wait-class enumerator (any tree)',
    'any-unknown-payload': "a call's payload is a struct the headers declare (any tree)",
    'any-def-shape': "every row has its list's argument count (any tree)",
    'any-field-unknown': 'every field-list row names a real member (any tree)',
    'documented-count': 'MGP_CALL_LIST_DOCUMENTED_COUNT equals the rows (MobileGL tree)',
    'ownership-phase': 'every BARRIER_PULLED row names the phase that retires it (MobileGL tree)',
    'ownership-record-supplied': 'RECORD_SUPPLIED is derived from the emitted list, never written by hand (MobileGL tree)',
    'flag-bit': 'no two flags share a bit (any tree: the site is the flag enum)',
    'chunk-table': 'the chunk table is read from the headers, never assumed (MobileGL tree)',
    'ownership-field': 'an ownership row names a PipeInputs field (MobileGL tree)',
    'ownership-missing': 'every PipeInputs field is in an ownership class (MobileGL tree)',
    'ownership-twice': 'no PipeInputs field is in two ownership classes (MobileGL tree)',
    'ownership-forward': "a sticky forward's class is its field row's (MobileGL tree)",
    'verify-list': 'MGP_VERIFY_PAYLOAD_LIST names exactly the field-listed structs (MobileGL tree)',
    'dirty-surface-twice': 'one DirtySurface.def row per mutator (MobileGL tree; with the frontend sources, both directions)',
    'subsystem-deps': 'every subsystem dependency row names one-bit constants the headers define (MobileGL tree)',
    'fatal-family-twice': 'one FatalFamilies.def row per family, with its reason (MobileGL tree)',
    'stale-after-change-mg-pipe': 'a catalogue change without `mgpipe gen` is caught, lock included (bundled MG_Pipe tree)',
    'any-append-only-moved': 'opcodes never renumber: a locked call keeps its row (any tree with a PipeCalls.lock)',
    'any-lock-opcode-edited': "a lock row's opcode cannot be edited away from generated/PipeWire.inc's (any tree with a lock)",
    'any-lock-missing': 'a lost PipeCalls.lock is refused, not silently rebuilt (any tree with a lock)',
    'verb-stamp-missing': 'every verb-shaped call has a stamp row or a reasoned exemption (MobileGL tree)',
    'any-duplicate-call': 'call names are unique (any tree)',
    'any-field-missing': 'every payload member has a field-list row (any tree)',
    'any-field-order': 'field lists follow declaration order (any tree)',
    'any-field-list': 'each payload has a field list (any tree)',
    'any-pod-pointer': 'wire payloads hold no pointer (any tree: the site is a real payload member)',
    'any-size-pin': "a payload's size moves only with its header pin (MobileGL shape: MGP_ASSERT_POD, the compiler's check)",
    'any-header-vocabulary': 'a header declaration the rows are read against is missing: one root cause (any tree)',
    'any-name-keyword-call': 'call names are identifiers C++ accepts (any tree)',
    'any-coverage-call': 'a coverage row names a real call (any tree)',
    'any-coverage-accessor': 'a coverage list names a real accessor (any tree)',
    'any-fill-points': 'fill verbs name real validate classes (any tree)',
    'any-setter-both-writes-dynamic': "a setter's bump group matches the classes of the bytes it writes (any tree with RenderStateSetters.def)",
    'any-setter-version-writes-pipeline': "a setter's bump group matches the classes of the bytes it writes (any tree with RenderStateSetters.def)",
    'def-missing-mg': 'every catalogue file is present (MobileGL shape)',
    'def-encoding-mg': 'a .def file that is not UTF-8 is refused at its first bad byte (MobileGL shape)',
    'header-compile-mg': 'the headers compile (MobileGL shape)',
    'header-duplicate-mg': 'one declaration per struct name (MobileGL shape)',
}

#: how the ``shapes`` of a control read in the table's "runs on" column
RUNS_ON = {(): "every tree", ("bundled",): "original shape", ("bundled", "overlay"): "original shape, bundled MG_Pipe",
           ("overlay",): "bundled MG_Pipe", ("mobilegl",): "bundled MG_Pipe, MobileGL's tree"}

#: the gates with a control on the original shape only, and why no such gate exists for the
#: MobileGL shape (the gates that do exist there have a control running on both MobileGL-
#: shaped trees: the "runs on" column)
NOT_MOBILEGL: dict[str, str] = {
    'SIZE-DRIFT / SIZE-PIN': "the MobileGL shape has no PayloadSizes.def: sizes are pinned in the headers "
                             "(MGP_ASSERT_POD), which the compiler checks (`any-size-pin`: HEADER-COMPILE); an "
                             "'every payload pinned' gate would refuse MobileGL's own tree (MGPCaps, GetCaps' "
                             "reply, carries no pin in either tree)",
    'PIPE-INPUTS': 'no PipeInputs.def: the PipeInputs fields are read from Coverage.def\'s accessor list, not declared twice',
    'OWNERSHIP': "the original shape's class-bitmask column; MobileGL's FieldOwnership.def names one class per row, "
                 "its gates are OWNERSHIP-MISSING / -TWICE / -CLASS / -PHASE / -FORWARD / -FIELD (controls above)",
    'COVERAGE-UNMAPPED': 'MobileGL\'s Coverage.def has no UNMAPPED marker: an unanswered accessor is an OWNERSHIP-MISSING',
    'CHUNK-PARTITION / RS-CLASS / CHUNK-MASK': "the MobileGL shape has no class column: a member's class follows from "
                                                "the compiler-evaluated chunk table, whose partition MobileGL's "
                                                "static_asserts hold (HEADER-COMPILE; `chunk-table`)",
    'HEADER-MISSING': 'the MobileGL shape keeps its headers beside the .def files: there is no include/ to lose '
                      '(a lost header is HEADER-COMPILE)',
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _expected(c: Control) -> str:
    return " + ".join(f"`{_cell(e)}`" for e in c.expect)


def markdown_table() -> str:
    """The controls table of docs/SELFTEST.md, one row per control, in run order."""
    rows = ["| control | gate | `--disable-gate` group | runs on | what it protects | planted defect | "
            "expected in the output | collateral allowed |",
            "|---|---|---|---|---|---|---|---|"]
    for c in CONTROLS:
        group = f"`{c.registry}`" if c.registry else "—"
        also = ", ".join(sorted(c.also)) or "—"
        rows.append(f"| `{c.name}` | {c.gate} | {group} | {RUNS_ON[c.shapes]} | {_cell(PROTECTS[c.name])} | "
                    f"{_cell(c.planted)} | {_expected(c)} | {also} |")
    rows += ["", "Gates whose controls run on the original shape only, and why the MobileGL shape has no "
             "such gate:", "", "| gate | why not on the MobileGL shape |", "|---|---|"]
    rows += [f"| {g} | {_cell(why)} |" for g, why in NOT_MOBILEGL.items()]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")


__all__ = ["NOT_MOBILEGL", "PROTECTS", "RUNS_ON", "markdown_table"]
