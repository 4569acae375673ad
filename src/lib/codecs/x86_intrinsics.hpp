// The x86 SIMD intrinsics, for the files whose functions carry AVX2 / AVX-512 target attributes.
// Included by .cpp files only, before their other code: the diagnostic settings below then hold
// for the rest of that file.
#pragma once

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics start some vectors from an undefined value, which its
// -Wmaybe-uninitialized (and, for the narrowing conversions, -Wuninitialized) reports in every
// function that inlines them (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#endif
