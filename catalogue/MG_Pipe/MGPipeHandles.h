// MGPipeHandles.h -- the wire handle and the handle kinds.
// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned
// sizes) written by catalogue/import_abi.py; the words are mgpipe's.
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeVectors.h"

namespace MobileGL {
    enum class MGPipeKind : Uint8 {
        None = 0,
        Buffer = 1,
        Texture = 2,
        Renderbuffer = 3,
        Framebuffer = 4,
        Xfb = 5,
        RenderStateCso = 6,
        VertexElementsCso = 7,
        SamplerCso = 8,
        SamplerViewCso = 9,
        ShaderCso = 10,
        Fence = 11,
        Query = 12,
        Context = 13,
        KindCount = 14,
    };

    struct MGPipeHandle {
        Uint32 Slot;
        Uint32 Gen;
        friend constexpr Bool operator==(const MGPipeHandle& a, const MGPipeHandle& b) {
            return a.Slot == b.Slot && a.Gen == b.Gen;
        }
    };
    MGP_ASSERT_POD(MGPipeHandle, 8);

    enum : Uint32 { kMGPipeFirstAllocatableSlot = 1 };

    enum : Uint32 { kMGPipeShaderCsoSlotLimit = 0x100000 };

    enum : Uint32 { kMGPipeShaderCsoCompositeSlotBase = 0xf0000 };
} // namespace MobileGL
