// MGPipeHostSpan.h -- the two byte-reference shapes: MGPBlobRef (blob segment) and
// MGHostSpan, the only shape that varies with the transport (seed 001 section 4).
#pragma once
#include "MGPipeBase.h"

enum : Uint32 {
    kMGHostSpanSegNone = 0,   // monolith: bytes are addressed by Ptr / in-process
    kMGPipeSegCmd = 1,
    kMGPipeSegStage = 2,
    kMGPipeSegReply = 3,
    kMGPipeSegEvent = 4,
    kMGHostSpanSegFromServerIndexMirror = 0xFFFFFFFEu,
};

// A reference into a blob segment: Offset/Size in bytes within segment Seg.
struct MGPBlobRef {
    Uint64 Offset;
    Uint64 Size;
    Uint32 Seg;
    Uint32 Pad0;
};

// Monolith: Ptr is the host address of the bytes. Split: Ptr == 0 and the bytes are at
// Offset within segment Seg. Only ever carried in a variable tail.
struct MGHostSpan {
    Uint64 Ptr;
    Uint64 Size;
    Uint32 Seg;
    Uint32 Pad0;
    Uint64 Offset;
};
