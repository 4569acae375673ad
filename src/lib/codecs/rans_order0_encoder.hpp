// htscodecs' order-0 X32 stream (the body rans_compress_O0_32x16 and its AVX2 and AVX-512 forms
// write), by statezip's encoder (rans_order0_encoder.cpp): the same bytes, faster where the CPU
// has AVX-512 VBMI (its steps look the symbols' entries up by byte permutes, not gathers).
#pragma once

namespace stz {

// Whether this CPU runs rans_order0_encode_x32 (AVX-512 F, BW, VL, VBMI, with POPCNT).
bool rans_order0_encoder_available();

// The kernel part of an order-0 X32 stream of n bytes (a RansEncodeKernel, rans_order0_halves.hpp):
// the frequency table, 32 states, the 16-bit words. `*out_size`: the room at `out`, then the
// body's length. Null (nothing promised at `out`) if n is 0 or the body does not fit. Only where
// rans_order0_encoder_available().
unsigned char* rans_order0_encode_x32(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size);

}  // namespace stz
