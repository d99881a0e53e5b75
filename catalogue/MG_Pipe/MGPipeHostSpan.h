// MGPipeHostSpan.h -- a span of client memory named by a record (pointer or segment offset).
// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned
// sizes) written by catalogue/import_abi.py; the words are mgpipe's.
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeVectors.h"

namespace MobileGL {
    enum : Uint32 { kMGHostSpanSegNone = 0 };

    enum : Uint32 { kMGHostSpanSegFromServerIndexMirror = 0xffffffff };

    struct MGHostSpan {
        const void* Ptr;
        Uint32 Seg;
        Uint32 Pad0;
        Uint64 Size;
        Uint64 Offset;
    };
    MGP_ASSERT_POD(MGHostSpan, 32);
} // namespace MobileGL
