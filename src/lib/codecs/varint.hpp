// LEB128 varints, shared by the codecs that store lengths and references.
#pragma once
#include <string>

#include "base/bytes.hpp"

namespace stz {

inline void put_varint(Bytes& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
}

// Reads a varint at `pos`; throws Error("<codec>: ...") if it is truncated or too long.
inline uint64_t get_varint(ByteSpan in, size_t& pos, const char* codec) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= in.size()) throw Error(std::string(codec) + ": truncated length");
        uint8_t b = in[pos++];
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    throw Error(std::string(codec) + ": length too long");
}

}  // namespace stz
