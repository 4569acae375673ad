// statezip's own encoder of htscodecs' order-1 32-way rANS streams (rans_order1_encoder.cpp).
#pragma once

namespace stz {

// Whether this CPU runs the encoder's AVX-512 form (F, BW, VL, with POPCNT), its AVX2 form
// (with POPCNT), and the library has the order-0 coder that packs large tables.
bool rans_order1_encoder_avx512_available();
bool rans_order1_encoder_avx2_available();
// What htscodecs' rans_compress_O1_32x16* write for `in` (n >= 32 bytes) into `out` (room for
// *out_size bytes): the same bytes, *out_size set to their count; null where the library's
// would fail (too little room). Reads no byte outside `in`, writes none outside `out`.
// Sixteen lanes a step with AVX-512, eight with AVX2.
unsigned char* rans_order1_encode_avx512(unsigned char* in, unsigned int n, unsigned char* out,
                                         unsigned int* out_size);
unsigned char* rans_order1_encode_avx2(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size);

}  // namespace stz
