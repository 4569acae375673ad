// htscodecs' uint7: an unsigned integer in 7-bit groups, the most significant first, the top bit
// set on every byte but the last (its stream headers' sizes, its frequency tables' counts).
#pragma once
#include <cstddef>
#include <cstdint>

namespace stz {

constexpr unsigned kMaxUint7Bytes = 5;  // a 32-bit value

inline unsigned put_uint7(uint8_t* out, uint32_t v) {
    // Frequency tables are mostly counts below 2^14 (one or two bytes): those without the loop.
    if (v < (1u << 7)) return out[0] = static_cast<uint8_t>(v), 1;
    if (v < (1u << 14)) return out[0] = static_cast<uint8_t>(v >> 7 | 0x80), out[1] = static_cast<uint8_t>(v & 0x7f), 2;
    unsigned n = 0;
    for (int shift = 28; shift > 0; shift -= 7)
        if (v >> shift || n) out[n++] = static_cast<uint8_t>(((v >> shift) & 0x7f) | 0x80);
    out[n++] = static_cast<uint8_t>(v & 0x7f);
    return n;
}

// The value's bytes at `in` (0 if cut short by `in_size`, longer than kMaxUint7Bytes or over 32
// bits), the value in `v`.
inline unsigned get_uint7(const uint8_t* in, size_t in_size, uint32_t& v) {
    uint64_t value = 0;
    for (unsigned n = 0; n < in_size && n < kMaxUint7Bytes; ++n) {
        value = value << 7 | (in[n] & 0x7f);
        if (!(in[n] & 0x80)) return value >> 32 ? 0 : (v = static_cast<uint32_t>(value), n + 1);
    }
    return 0;
}

}  // namespace stz
