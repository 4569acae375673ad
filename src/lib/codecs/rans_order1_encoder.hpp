// statezip's own encoder of htscodecs' order-1 32-way rANS streams (rans_order1_encoder.cpp).
#pragma once

#include <cstdint>

namespace stz {

// Every pair of an input counted (the encoder's own counts, before it writes anything): the
// entropies in bits of the bytes at order 0 and order 1 (the pair counts' own, no table), the
// distinct byte values and pairs, the input's length.
struct PairCounts {
    double bits0 = 0, bits1 = 0;
    uint32_t symbols = 0, pairs = 0;
    uint64_t bytes = 0;
};
namespace order1 {
// What the encoder's choice of grouping charges for each row of a table, in bytes, besides its
// coded bytes and entries: the decoder fills each row's 1024 or 4096 slots (4 KB or 16 KB) and
// its steps gather from all the rows, so a table of 256 rows (1 MB) falls out of the core's L1
// and L2 where one of 128 does not. Over the 82 files of the three corpus folders (bytes, and
// decompression in-process, interleaved, against no charge): 8 -1.4 KB; 16 +4.0 KB and +1.3 %;
// 32 +20.8 KB (+0.02 %) and +2.7 % (the hd32 q4_0 cache +13 %, q5_0 +6 %); 64 +49.7 KB and
// another +0.5-1.9 %.
inline constexpr double kTableBytesPerRow = 32;
}  // namespace order1

// The pair counts of `in` (n >= 32), the same as the encoders' below count, on any CPU.
PairCounts rans_order1_pair_counts(const uint8_t* in, unsigned n);
// What to do with an input, given its pair counts: store it, code it at order 0, or at order 1.
enum class OrderVerdict { Store, Order0, Order1 };
using OrderTest = OrderVerdict (*)(const PairCounts&);

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
// The AVX-512 form with the states' quotients by division instead of gathered reciprocals (the
// same bytes; rans_order1_encode_if_avx512 takes it where it runs faster).
unsigned char* rans_order1_encode_avx512_divide(unsigned char* in, unsigned int n, unsigned char* out,
                                                unsigned int* out_size);
// The same once `test` (null: always), given every pair of `in` (the counts the encoder makes
// anyway: an order estimate from them costs no second count), says order 1; *verdict gets what
// it said, and nothing is written unless it was order 1. With `stream_form` not null the stream
// may be one of statezip's own (rans_order1_form.hpp: streams only statezip decodes): rows
// grouped where the counts say that costs fewer bytes, each row charged kTableBytesPerRow
// (`test` then sees the grouped rows' entropy and pairs), a plane from kTwoHalvesMinBytes in two
// halves; *stream_form gets the form byte the stream starts with, or 0 for htscodecs' stream (no
// form byte).
unsigned char* rans_order1_encode_if_avx512(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                                            OrderTest test, OrderVerdict* verdict, int* stream_form);
unsigned char* rans_order1_encode_if_avx2(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                                          OrderTest test, OrderVerdict* verdict, int* stream_form);
// The same one lane at a time, on any CPU (the same bytes: where a CPU lacks AVX2 the .stz is
// still the one the others write).
unsigned char* rans_order1_encode_if_scalar(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                                            OrderTest test, OrderVerdict* verdict, int* stream_form);

}  // namespace stz
