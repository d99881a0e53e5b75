// Types.h -- the scalar and container vocabulary the MGPipe headers are spelt in.
// mgpipe's own definitions of the names MobileGL's headers use; LP64 widths.
#pragma once

#ifndef MGP_ASSERT_POD
// A payload's size, pinned where it is declared: the wire is byte-for-byte this struct.
#define MGP_ASSERT_POD(T, N) \
    static_assert(sizeof(T) == (N) && __is_trivially_copyable(T), #T " is a wire POD of " #N " bytes")
#endif

namespace MobileGL {
    using Uint8 = unsigned char;
    using Uint16 = unsigned short;
    using Uint32 = unsigned int;
    using Uint64 = unsigned long long;
    using Int8 = signed char;
    using Int16 = short;
    using Int32 = int;
    using Int64 = long long;
    using Int = Int32;
    using Uint = Uint32;
    using Float = float;
    using Double = double;
    using Bool = bool;
    using SizeT = decltype(sizeof(0));
    using GLenum = unsigned int;
    using GLbitfield = unsigned int;
    using GLint = int;
    using GLuint = unsigned int;
    // A fixed-length run of T, laid out as T[N].
    template <typename T, SizeT N> using Array = T[N];

    // Small vectors: N components of T, nothing else.
    template <typename T> struct Vec2 { T X, Y; };
    template <typename T> struct Vec3 { T X, Y, Z; };
    template <typename T> struct Vec4 { T X, Y, Z, W; };
    using FloatVec2 = Vec2<Float>;
    using FloatVec3 = Vec3<Float>;
    using FloatVec4 = Vec4<Float>;
    using IntVec2 = Vec2<Int32>;
    using IntVec4 = Vec4<Int32>;
    using UintVec4 = Vec4<Uint32>;
    using BoolVec4 = Vec4<Bool>;
} // namespace MobileGL
