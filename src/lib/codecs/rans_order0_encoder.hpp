// htscodecs' order-0 X32 stream (the body rans_compress_O0_32x16 and its AVX2 and AVX-512 forms
// write), by statezip's encoder (rans_order0_encoder.cpp): up to 64 KB the library's bytes; from
// there a table counted on a sample (a stream every decoder of the form reads), faster where the
// CPU has AVX-512 VBMI (its steps look the symbols' entries up by byte permutes, not gathers).
// Every variant writes the same bytes.
#pragma once

namespace stz {

// Whether this CPU runs rans_order0_encode_x32 (AVX-512 F, BW, VL, VBMI, with POPCNT).
bool rans_order0_encoder_available();

// The kernel part of an order-0 X32 stream of n bytes (a RansEncodeKernel, rans_order0_halves.hpp):
// the frequency table, 32 states, the 16-bit words. `*out_size`: the room at `out`, then the
// body's length. Null (nothing promised at `out`) if n is 0 or the body does not fit. Only where
// rans_order0_encoder_available().
unsigned char* rans_order0_encode_x32(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size);
// The same bytes by the gathering steps (AVX-512 F, BW, VL; AVX2; each with POPCNT, only where
// the CPU has them) or one lane at a time (any CPU).
unsigned char* rans_order0_encode_x32_avx512(unsigned char* in, unsigned int n, unsigned char* out,
                                             unsigned int* out_size);
unsigned char* rans_order0_encode_x32_avx2(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size);
unsigned char* rans_order0_encode_x32_scalar(unsigned char* in, unsigned int n, unsigned char* out,
                                             unsigned int* out_size);

}  // namespace stz
