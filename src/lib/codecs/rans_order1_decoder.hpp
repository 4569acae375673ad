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

// statezip's own streams (flagged kRansOrderGrouped in the stream's flags byte): the kernel part
// above preceded by a form byte (rans_order1_form.hpp). Its context shift s: a step's row is its
// lane's previous symbol >> s, one row for 2^s neighbouring symbols (the quants of a trained
// model's K, whose next value in a channel depends on the magnitude of the one before, not on
// its exact value: one row per previous value would be a table as large as the plane); the
// frequency table then lists the union of the rows present and the symbols present, each row's
// frequencies over that list. Its two-halves bit: after the table a uint7, the bytes of the first
// half's lanes (states and words), which decode out[0, 32 * (n / 64)), then the second half's,
// which decode the rest, each half as the 32 lanes of a stream of its own over the one table
// (s = 0 allowed there: rows of single symbols). Decoded only here; the scalar form on any CPU.
unsigned char* rans_order1_decode_grouped_avx512(unsigned char* in, unsigned int in_size, unsigned char* out,
                                                 unsigned int out_size);
unsigned char* rans_order1_decode_grouped_avx2(unsigned char* in, unsigned int in_size, unsigned char* out,
                                               unsigned int out_size);
unsigned char* rans_order1_decode_grouped_scalar(unsigned char* in, unsigned int in_size, unsigned char* out,
                                                 unsigned int out_size);

}  // namespace stz
