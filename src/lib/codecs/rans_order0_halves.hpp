// statezip's own form of an order-0 X32 rANS stream: a plane in two halves, each half an
// htscodecs order-0 X32 stream of its own (rans_order0_halves.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "rans_order1_form.hpp"

namespace stz {

// htscodecs' kernels: the kernel part of an X32 stream (no flags byte, no size) from n bytes,
// and back into exactly n bytes.
using RansEncodeKernel = unsigned char* (*)(unsigned char*, unsigned int, unsigned char*, unsigned int*);
using RansDecodeKernel = unsigned char* (*)(unsigned char*, unsigned int, unsigned char*, unsigned int);

namespace order0_halves {

// Planes from this size are written in two halves: the second half's frequency table (~150-400
// bytes, up to 1 % of a 32 KB plane's stream) and 32 states cost little, and the decoder steps
// both halves' lanes together, 1.3-1.5x as fast as one stream's (whose 32 lanes wait on their
// gathers' latency). From 32 KB, not 128 KB: the 64 KB quant planes of a random-weight q4_0
// cache's layers decompress 9 % faster (lib_duel, interleaved), the corpus's 82 files 1-2 %,
// for 9.6 KB more over their 88 MB (0.011 %); from 16 KB another 9.2 KB for no speed measured.
// Stepping four streams together instead of two was 7 % slower (the gathers' throughput, not
// their latency, is then the limit).
constexpr size_t kMinBytes = 32u << 10;

// The first half of an n-byte plane: the split of an order-1 plane in two halves (its whole
// steps of 32 lanes in n / 2; the second half has as many steps or one more, then the n mod 32
// bytes left).
using order1_form::first_half_bytes;

}  // namespace order0_halves

// Whether an order-0 plane of n bytes is written in two halves: from kMinBytes, unless all its
// bytes are one value (its stream then decodes to a fill, and two halves would only add a table
// and 32 states).
bool rans_order0_halves_pay(const uint8_t* in, size_t n);

// The body of the form (what follows the flags byte and the size): a uint7 L, then L bytes, the
// kernel part of the first half's stream (the plane's first first_half_bytes(n) bytes), then
// the kernel part of the second half's stream (the rest). `encode` codes each half; `*out_size`
// is the room at `out`, then the body's length. False if a half's stream could not be written
// or would not be smaller than the half. `in` needs the kernels' slack.
bool rans_order0_encode_halves(uint8_t* in, unsigned n, uint8_t* out, unsigned* out_size, RansEncodeKernel encode);

// Whether this CPU steps both halves together (AVX-512 with VBMI2's word expansion).
bool rans_order0_pairs_available();
// The body above into exactly n bytes at `out`: with `in_pairs`, both halves' lanes stepped
// together (only where rans_order0_pairs_available); else each half by `decode_half` (a library
// kernel), or, null, by statezip's own lanes one at a time. The same bytes as the library's
// decoders for every body rans_order0_encode_halves writes. False if the body is malformed.
// Reads no byte outside `in` and writes none outside `out` except through `decode_half` (the
// library's kernels read a little past their input: the caller's slack).
bool rans_order0_decode_halves(const uint8_t* in, unsigned in_size, uint8_t* out, unsigned n, bool in_pairs,
                               RansDecodeKernel decode_half);

// One order-0 X32 stream's kernel part (a half's form) into exactly n bytes at `out`, by the
// lanes rans_order0_decode_halves steps in pairs, one stream alone (only where
// rans_order0_pairs_available): the library's bytes without its set-up, whose scalar fill of the
// 4096 slots was half of its decoder's time on planes of a few KB. `out`, or null if the stream
// is malformed; reads no byte outside `in`.
unsigned char* rans_order0_decode_one(unsigned char* in, unsigned in_size, unsigned char* out, unsigned n);
// Two such streams, independent of each other (two planes), into exactly na bytes at a_out and nb
// at b_out, their lanes stepped together as the halves' are (only where
// rans_order0_pairs_available). On planes of 2 KB (a q5_1 cache's scale bytes) their steps take
// about 9 % less time than one stream's after the other (63 steps a stream: less to overlap than
// in the halves of a large plane, and the same table fill and states). False if either stream is malformed (the outputs may then hold anything); reads no byte outside
// the streams and writes none outside the outputs.
bool rans_order0_decode_two(const uint8_t* a_in, unsigned a_size, uint8_t* a_out, unsigned na, const uint8_t* b_in,
                            unsigned b_size, uint8_t* b_out, unsigned nb);

}  // namespace stz
