// MGPipeRenderStateSpans.h -- RenderStateParameters cut into chunks: the boundaries and which
// half (pipeline or dynamic) each chunk belongs to.
// The boundaries are byte offsets into RenderStateParameters; chunk i spans
// [boundary i, boundary i+1). The generator evaluates both with the compiler.
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeValueTypes.h"

namespace MobileGL::MG_Pipe {
    inline constexpr SizeT kMGPipeRenderStateChunkCount = 15;
    inline constexpr Array<SizeT, kMGPipeRenderStateChunkCount + 1> kMGPipeRenderStateChunkBoundaries = {
        0,
        264,
        292,
        312,
        584,
        752,
        772,
        784,
        800,
        812,
        840,
        868,
        876,
        880,
        904,
        1168,
    };
    // The halves alternate: even chunks are dynamic state, odd chunks pipeline state.
    constexpr Bool MGPipeRenderStateChunkIsPipeline(SizeT index) { return (index & 1u) != 0; }
    static_assert(kMGPipeRenderStateChunkBoundaries[kMGPipeRenderStateChunkCount] ==
                  sizeof(RenderStateParameters), "the chunks cover the whole block");
} // namespace MobileGL::MG_Pipe
