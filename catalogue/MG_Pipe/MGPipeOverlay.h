// MGPipeOverlay.h -- mgpipe's own declarations beside MobileGL's ABI: what mgpipe's runtime
// needs that MobileGL's MG_Pipe headers do not state (MobileGL's record header lives in its
// generated PipeWire.inc, its ring and cache sizes in its transport). Nothing here changes a
// payload: the payload structs, their sizes and the chunk table are MobileGL's and stay in
// the imported headers. Read by the same reader, with Tails.def, HandleFields.def and
// EsprytSpans.def and RenderStateSetters.def (the overlay lists).
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeHandles.h"
#include "MGPipeValueTypes.h"

// MobileGL's ratchet (its MGPipeTypes.h: ResidualValueBlock's size, which may only go down),
// a macro the importer does not carry; generated/PipeWire.inc asserts the block against it.
#ifndef MGL_RESIDUAL_BLOCK_SIZE
#define MGL_RESIDUAL_BLOCK_SIZE 8
#endif

namespace MobileGL {
    enum : Uint32 {
        // A record's Size (header included) and every tail's start are multiples of this.
        kMGPipeRecordAlign = 8,
        // Shared-memory segments a host span or blob may name (0: a pointer, monolith).
        kMGPipeSegCmd = 1,
        kMGPipeSegStage = 2,
        kMGPipeSegReply = 3,
        kMGPipeSegEvent = 4,
        // The client's CSO caches.
        kMGPipeCsoCacheCapacity = 64,
        kMGPipeSamplerCacheCapacity = 256,
        // Tail bounds MobileGL's headers leave to its codec.
        kMGPipeMaxStreamOutputTargets = 4,
        kMGPipeMaxDrawRanges = 4096,
        kMGPipeMaxSubRegions = 96,
        // The handle kinds that share the resource slot space (Buffer, Texture, Renderbuffer).
        kMGPipeResourceKindMask = (1u << static_cast<Uint32>(MGPipeKind::Buffer)) |
                                  (1u << static_cast<Uint32>(MGPipeKind::Texture)) |
                                  (1u << static_cast<Uint32>(MGPipeKind::Renderbuffer)),
        // The kinds whose create may be re-issued on a live handle (a vertex layout re-sent on
        // a configuration change, a program re-created per link).
        kMGPipeReissuableKindMask = (1u << static_cast<Uint32>(MGPipeKind::VertexElementsCso)) |
                                    (1u << static_cast<Uint32>(MGPipeKind::ShaderCso)),
        // The default framebuffer is {slot 0, this generation} of kind Framebuffer (MobileGL
        // spells it as the handle constant kMGPipeDefaultFramebuffer, which the reader cannot
        // read as a number).
        kMGPipeDefaultFramebufferGen = 1,
        // The viewport count: the element count MobileGL gives RenderStateParameters'
        // Viewports / DepthRanges / ScissorBoxes (its MAX_VIEWPORTS, evaluated by the compiler
        // from MobileGL's own name, so it moves with it; tests/test_bundled_abi.py checks it
        // against the three arrays' element counts).
        kMGPipeMaxViewports = MAX_VIEWPORTS,
        // Every render-state chunk: the all-ones value of the Uint32 ChunkMask of
        // MGPRenderStateDesc / MGPDynamicState (bit i = chunk i of its half; MobileGL's
        // headers name no such value).
        kMGPipeRenderStateChunkMaskAll = 0xFFFFFFFFu,
        // MG_Util/Types.h spells Array<T, N> as T[N] (MobileGL's is std::array): the generated
        // comparators then need no Array overload beside the C array one.
        kMGPipeArrayIsCArray = 1,
    };

    // MGPClear.DrawBufferIndex of the whole-framebuffer form (glClear): "no one draw buffer,
    // all of BufferMask" (MobileGL's MGPipeTypes.h says DrawBufferIndex = -1 in words only).
    enum : Int32 { kMGPipeClearDrawBufferAll = -1 };

    // The values of MGPTextureParams.Swizzle[i]: MobileGL's TextureSwizzleParam
    // (MG_State/GLState/TextureState/TextureEnum.h, outside MG_Pipe), in its order.
    enum class TextureSwizzleParam : Uint8 { Red = 0, Green = 1, Blue = 2, Alpha = 3, Zero = 4, One = 5 };

    // MGPAttribValue.ValueClass: the view the application wrote (MobileGL's MGPipeTypes.h:
    // the three-way split kMGPipeClearValueClass* reuses, in its order).
    enum : Uint8 { kMGPipeAttribValueClassFloat = 0, kMGPipeAttribValueClassInt = 1, kMGPipeAttribValueClassUint = 2 };

    // The values of MGPResourceDesc.StorageKind: MobileGL's TextureStorageType
    // (MG_State/GLState/TextureState/TextureEnum.h, outside MG_Pipe), in its order.
    enum class TextureStorageType : Uint8 { Mipmap = 0, Buffer = 1 };

    // The calls MobileGL's monolith routes around its interface tables (its route escapes:
    // the rows of MG_Pipe/PipeRoute.h's MGPipeRouteEscapes, in their order), one member per
    // call of PipeCalls.def. The recorder golden hashes them in the escape form (the payload,
    // then what the escape adds), not as table rows.
    enum class MGPipeRouteEscape : Uint8 {
        ResourceRespecify = 0, ResourceFlushRange = 1, MapPersistent = 2, CreateShaderState = 3,
        SetProgramBindings = 4,
    };

    // The targets glHint names, in the order RenderStateSetters.def's SetHint rows use as
    // their selector (MobileGL's frontend keeps hints in its own state, not in MG_Pipe).
    enum class HintTarget : Uint32 {
        LineSmooth = 0, PolygonSmooth = 1, TextureCompression = 2, FragmentShaderDerivative = 3,
    };

    // Which version counters a RenderState setter bumps (RenderStateSetters.def's Bump
    // column; checked against the chunk classes of the bytes the setter writes).
    enum MGPipeSetterBump : Uint8 {
        kBumpBoth = 0,         // the parameter version and the pipeline-state version
        kBumpVersion = 1,      // the parameter version only (dynamic bytes)
        kBumpConditional = 2,  // the parameter version; the pipeline version iff a pipeline byte moved
        kBumpNone = 3,         // neither (state outside the parameter block)
    };

    // Every record starts with this: its opcode, the ring's framing flags (never the call's
    // flags) and its size in bytes, header and tails included.
    struct MGPWireRecHeader {
        Uint16 Op;
        Uint16 Flags;
        Uint32 Size;
    };
    MGP_ASSERT_POD(MGPWireRecHeader, 8);

    // ---- The reverse channel (docs/REVERSE_CHANNEL.md): mgpipe's own transport, outside the
    // MG_Pipe ABI the call rows carry. MobileGL keeps its reverse channel in MG_Remote
    // (Transport/EventRing.h), with other kinds and heads; these are mgpipe's, read by the
    // same reader into the tables' STRUCTS / ENUMS / CONSTANTS (Model.transport_structs).
    enum : Uint32 {
        // SEG_REPLY: this many slots of this many bytes (seed 001 §11.1), slot id = seq % slots.
        kMGPipeReplySlots = 8,
        kMGPipeReplySlotSize = 2u << 20,
        // An ERROR reply's bytes: its reason, cut at this many bytes.
        kMGPipeReplyErrorMaxBytes = 256,
        // SEG_EVENT: MGPEventRingControl, then a data ring of this many bytes (a power of two).
        kMGPipeEventRingSize = 256u << 10,
        // Every event record (header + payload) starts and ends on this many bytes.
        kMGPipeEventAlign = 16,
        // The most BufferWriteback bytes one event carries inline.
        kMGPipeEventWritebackInline = 4096,
        // A LogLine's text is cut at this many bytes.
        kMGPipeEventLogMaxBytes = 1024,
    };

    // A reply slot's status word (MGPReplySlotHeader.Status).
    enum class MGPipeReplyStatus : Uint32 { OK = 0, DECLINED = 1, ERROR = 2 };

    // SEG_EVENT record kinds (MGPEventHeader.Kind); Pad fills to the end of the ring. The fixed
    // payload head of kind K is the struct MGPEvent<K> where one is declared (none: LogLine,
    // whose text is the whole payload, and Pad).
    enum class MGPipeEventKind : Uint16 {
        Pad = 0, GlError = 1, QueryResult = 2, FenceSignaled = 3, ReadbackDone = 4, GpuWritten = 5,
        BufferWriteback = 6, LogLine = 7,
    };

    // A LogLine's level (MGPEventHeader.Flags): at most Warn is lossy, Error and above lossless
    // (rate limited).
    enum class MGPipeLogLevel : Uint16 { Warn = 3, Error = 4 };

    // The head of one SEG_REPLY slot; the answer's bytes follow it. Written last by the server.
    struct MGPReplySlotHeader {
        Uint64 Seq;
        Uint32 Status;
        Uint32 Size;  // answer bytes after the header
    };
    MGP_ASSERT_POD(MGPReplySlotHeader, 16);

    // SEG_EVENT's control words: Head / Tail are byte counts, never reset; Full latches
    // eventRingFull (apply stops at the record boundary); Dropped counts lossy drops.
    struct MGPEventRingControl {
        Uint64 Head;
        Uint64 Tail;
        Uint32 Full;
        Uint32 Dropped;
        Uint8 Reserved[40];
    };
    MGP_ASSERT_POD(MGPEventRingControl, 64);

    // Every SEG_EVENT record starts with this, stamped with the seq of the record that caused it.
    struct MGPEventHeader {
        Uint16 Kind;   // MGPipeEventKind
        Uint16 Flags;  // LogLine: its MGPipeLogLevel
        Uint32 Size;   // payload bytes (the record is padded to kMGPipeEventAlign)
        Uint64 Seq;
    };
    MGP_ASSERT_POD(MGPEventHeader, 16);

    struct MGPEventGlError {
        Uint32 Code;
    };
    MGP_ASSERT_POD(MGPEventGlError, 4);

    struct MGPEventQueryResult {
        Uint32 Slot;
        Uint32 Gen;
        Uint64 Value;
    };
    MGP_ASSERT_POD(MGPEventQueryResult, 16);

    struct MGPEventFenceSignaled {
        Uint32 Slot;
        Uint32 Gen;
    };
    MGP_ASSERT_POD(MGPEventFenceSignaled, 8);

    struct MGPEventReadbackDone {
        Uint64 Seq;  // the readback record's seq
    };
    MGP_ASSERT_POD(MGPEventReadbackDone, 8);

    // RangeCount MGPEventRange follow.
    struct MGPEventGpuWritten {
        Uint32 Slot;
        Uint32 Gen;
        Uint32 RangeCount;
    };
    MGP_ASSERT_POD(MGPEventGpuWritten, 12);

    struct MGPEventRange {
        Uint64 Offset;
        Uint64 Size;
    };
    MGP_ASSERT_POD(MGPEventRange, 16);

    // The written bytes follow (at most kMGPipeEventWritebackInline).
    struct MGPEventBufferWriteback {
        Uint32 Slot;
        Uint32 Gen;
        Uint64 Offset;
    };
    MGP_ASSERT_POD(MGPEventBufferWriteback, 16);

    // One row of GetCaps' FormatCapabilities blob.
    struct MGPFormatCapabilityRow {
        Uint32 Format;
        Uint32 Flags;
    };
    MGP_ASSERT_POD(MGPFormatCapabilityRow, 8);
} // namespace MobileGL
