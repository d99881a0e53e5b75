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

    // MobileGL's vectors derive from VecBase<Derived, T, N> (MG_Util/Math/VectorTypes.h),
    // which the generated comparators (PipeVerify.inc) name: declared here so that they
    // compile against these headers too. These plain structs never derive from it; they
    // compare through the bitwise == below, as the comparators compare a VecBase's data
    // (memcmp: -0.0 differs from 0.0, NaN payloads are told apart; no padding to compare).
    template <class Derived, class T, SizeT N>
    struct VecBase;
#define MGP_VECTOR_BITWISE_EQ(V) \
    inline Bool operator==(const V& a, const V& b) { return __builtin_memcmp(&a, &b, sizeof(V)) == 0; }
    MGP_VECTOR_BITWISE_EQ(FloatVec2)
    MGP_VECTOR_BITWISE_EQ(FloatVec3)
    MGP_VECTOR_BITWISE_EQ(FloatVec4)
    MGP_VECTOR_BITWISE_EQ(IntVec2)
    MGP_VECTOR_BITWISE_EQ(IntVec4)
    MGP_VECTOR_BITWISE_EQ(UintVec4)
    MGP_VECTOR_BITWISE_EQ(BoolVec4)
#undef MGP_VECTOR_BITWISE_EQ
} // namespace MobileGL
