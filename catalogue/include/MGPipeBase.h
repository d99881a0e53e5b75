// MGPipeBase.h -- scalar vocabulary shared by every MGPipe header.
// Fixed-width names only; no layout is implied here beyond the C++ types themselves.
// Spelled with builtin types only, so that a header-only parse (libclang) needs no
// system include path; the LP64/LLP64 widths are the ones MGPipe targets.
#pragma once

typedef unsigned char Uint8;
typedef unsigned short Uint16;
typedef unsigned int Uint32;
typedef unsigned long long Uint64;
typedef signed char Int8;
typedef short Int16;
typedef int Int32;
typedef long long Int64;
typedef unsigned int Uint;
typedef float Float;
typedef double Double;
typedef bool Bool;
typedef unsigned int GLenum;
typedef unsigned int GLbitfield;
typedef decltype(sizeof(0)) SizeT;  // the width of an object size (std::size_t)
