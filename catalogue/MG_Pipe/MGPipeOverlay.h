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
} // namespace MobileGL
