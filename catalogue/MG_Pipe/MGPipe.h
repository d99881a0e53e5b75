// MGPipe.h -- the catalogue's column vocabulary: call classes, call flags, wait classes.
// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned
// sizes) written by catalogue/import_abi.py; the words are mgpipe's.
#pragma once

#include "MG_Util/Types.h"

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
} // namespace MobileGL
