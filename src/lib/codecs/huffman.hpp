// A static order-0 Huffman coder for byte planes that are close to random (the quants of a
// quantised K or V cache: 5-8 % below 8 bits a byte). On such planes rANS gains next to
// nothing over a prefix code and costs twice the time; this coder reaches within ~0.5 % of the
// order-0 entropy there at several times the speed.
//
// Stream: 128 bytes of code lengths (two 4-bit lengths a byte, symbol 2k in the low half,
// 0 = absent; at most kMaxBits, a complete code), three u32 LE byte sizes of streams 0-2,
// then four bit streams (stream 3 is the rest). Stream k codes symbols [k*q, (k+1)*q) of the
// n, q = n / 4, stream 3 up to n. Codes are canonical (shorter first, then by symbol), written
// least significant bit first, each stream padded with zero bits to a whole byte.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/bytes.hpp"

namespace stz::huffman {

constexpr int kMaxBits = 11;
constexpr size_t kHeaderBytes = 128 + 12;
// Bytes past the end of a stream that encode() may write (then cut off by its return value).
constexpr size_t kEncodeSlack = 8;

struct Histogram {
    uint32_t count[256] = {};
};
Histogram histogram(ByteSpan in);

// Length-limited code lengths (<= kMaxBits) for a histogram with any number of used symbols:
// a complete code over at least two symbols (a single symbol gets a one-bit partner).
struct CodeLengths {
    uint8_t bits[256] = {};
};
CodeLengths code_lengths(const Histogram& h);

// encode()'s output size for these counts and lengths, or up to 3 bytes more (rounding).
size_t encoded_size(const Histogram& h, const CodeLengths& lengths);
// Room encode() needs for n input bytes (kEncodeSlack included).
size_t encode_bound(size_t n);
// Writes the stream for `in` (whose every byte has a length) at `out` (encode_bound bytes
// of room); returns its size.
size_t encode(ByteSpan in, const CodeLengths& lengths, uint8_t* out);
// Decodes a stream of exactly in.size() bytes into out_size bytes at `out`. Every length,
// size and bit count is checked: a stream this encoder could not have written throws Error.
void decode(ByteSpan in, uint8_t* out, size_t out_size);

}  // namespace stz::huffman
