// MGPipeVectors.h -- the small vectors the value blocks are spelt in: N components and
// nothing else. MobileGL derives them from one vector template; mgpipe declares each as a
// plain struct beside the payloads, so that every layout the runtime reads is a struct of
// its own (same names, sizes and component order).
#pragma once

#include "MG_Util/Types.h"

namespace MobileGL {
    struct FloatVec2 { Float X, Y; };
    struct FloatVec3 { Float X, Y, Z; };
    struct FloatVec4 { Float X, Y, Z, W; };
    struct IntVec2 { Int32 X, Y; };
    struct IntVec4 { Int32 X, Y, Z, W; };
    struct UintVec4 { Uint32 X, Y, Z, W; };
    struct BoolVec4 { Bool X, Y, Z, W; };
} // namespace MobileGL
