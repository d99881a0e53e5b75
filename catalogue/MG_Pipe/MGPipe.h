// MGPipe.h -- the catalogue's column vocabulary: call classes, call flags, wait classes.
// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned
// sizes) written by catalogue/import_abi.py; the words are mgpipe's.
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeVectors.h"

namespace MobileGL {
    enum MGPipeCallClass : Uint8 {
        kScreen = 0,
        kCtxCso = 1,
        kCtxState = 2,
        kCtxObject = 3,
        kCtxVerb = 4,
        kCtxQuery = 5,
        kCallClassCount = 6,
    };

    enum MGPipeCallFlags : Uint32 {
        kNone = 0,
        kNeedsAck = 1,
        kHasBlob = 2,
        kVarTail = 4,
        kHostSpan = 8,
        kReplySlot = 16,
        kOptional = 32,
    };

    enum MGPipeWaitClass : Uint8 {
        kWaitNone = 0,
        kWaitApplied = 1,
        kWaitReply = 2,
        kWaitPresent = 3,
        kWaitClassCount = 4,
    };

    enum : Uint64 { kMGPipeSubsystemRenderState = 1 };

    enum : Uint64 { kMGPipeSubsystemPixelPack = 2 };

    enum : Uint64 { kMGPipeSubsystemPatchState = 4 };

    enum : Uint64 { kMGPipeSubsystemVertexAttribDefaults = 8 };

    enum : Uint64 { kMGPipeSubsystemResidualValues = 16 };

    enum : Uint64 { kMGPipeSubsystemEsprytSlots = 32 };

    enum : Uint64 { kMGPipeSubsystemMagmaVertexInput = 64 };

    enum : Uint64 { kMGPipeSubsystemResources = 128 };

    enum : Uint64 { kMGPipeSubsystemVertexInput = 256 };

    enum : Uint64 { kMGPipeSubsystemFramebuffer = 512 };

    enum : Uint64 { kMGPipeSubsystemTextureResources = 1024 };

    enum : Uint64 { kMGPipeSubsystemSamplers = 2048 };

    enum : Uint64 { kMGPipeSubsystemPrograms = 4096 };

    enum : Uint64 { kMGPipeSubsystemBufferBindings = 8192 };

    enum : Uint64 { kMGPipeBehaviourNoCsoContentAddressing = 0x8000000000000000 };

    enum : Uint64 { kMGPipeSubsystemsMigratedAtP2 = 127 };

    enum : Uint64 { kMGPipeSubsystemsMigratedAtP3a = 511 };

    enum : Uint64 { kMGPipeSubsystemsMigratedAtP4a = 8191 };

    enum : Uint64 { kMGPipeSubsystemsMigratedAtP5e = 16383 };
} // namespace MobileGL
