// statezip's own decoder of htscodecs' order-1 32-way rANS streams (rans_order1_decoder.cpp).
#pragma once

#include "../base/bytes.hpp"

namespace stz {

// Whether this CPU runs the AVX-512 (AVX-512F) or the AVX2 form (both with POPCNT), and the
// library has the order-0 decoder that packed frequency tables need.
bool rans_order1_avx512_available();
bool rans_order1_avx2_available();
// The kernel part of an RANS_ORDER_X32 | 1 stream (what htscodecs' rans_uncompress_O1_32x16*
// take) into exactly out_size bytes at `out`: `out`, or null if the stream is malformed. The
// same bytes as the library's decoders for every stream the library writes. Reads no byte
// outside `in`, writes none outside `out`. Sixteen lanes a step with AVX-512, eight with AVX2.
unsigned char* rans_order1_decode_avx512(unsigned char* in, unsigned int in_size, unsigned char* out,
                                         unsigned int out_size);
unsigned char* rans_order1_decode_avx2(unsigned char* in, unsigned int in_size, unsigned char* out,
                                       unsigned int out_size);

}  // namespace stz
