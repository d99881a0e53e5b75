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

} // namespace MobileGL
