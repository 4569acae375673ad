// The channel layout of the channel-context codec (chanctx): records of a
// fixed size, a class per byte position (0 = near-random, stored as a byte plane;
// 1..7 = modelled with the same byte of the previous record in the channel as context),
// and where that previous record is (row-major: one row up; transposed: the one before).
#pragma once
#include "codec.hpp"
#include "base/limits.hpp"

namespace stz {

inline constexpr unsigned kMaxRecordBytes = 64;
inline constexpr unsigned kMaxByteClasses = 7;

struct ChannelLayout {
    unsigned record = 2;
    bool transposed = false;
    bool match = false;
    uint64_t row_records = 1;
    uint8_t cls[kMaxRecordBytes] = {};

    size_t stride() const { return transposed ? 1 : row_records; }
    bool has_prev(size_t i) const { return transposed ? (i % row_records) != 0 : i >= row_records; }
    unsigned classes() const {
        unsigned c = 0;
        for (unsigned b = 0; b < record; ++b) c = std::max<unsigned>(c, cls[b]);
        return c;
    }
};

// Byte classes by element kind: which bytes carry the predictable sign/exponent/scale bits.
inline Bytes byte_classes_for(const DataShape& s) {
    switch (s.kind) {
        case ElemKind::F16: return {0, 1};  // mantissa byte raw; sign/exponent byte modelled
        case ElemKind::BF16: return {2, 1}; // both modelled (the low byte holds an exponent bit)
        case ElemKind::F32: case ElemKind::I32: return {0, 0, 2, 1};
        case ElemKind::Block: {
            Bytes c(s.elem_bytes, 3);       // quants: one class
            if (s.block_head >= 2) c[0] = 0, c[1] = 1;  // f16 scale: low byte raw, high byte modelled
            for (unsigned b = 2; b < s.block_head; ++b) c[b] = 2;  // min / high-bit fields
            return c;
        }
        default: return {1};
    }
}

inline Bytes channel_layout_params(const DataShape& shape, bool match) {
    Bytes cls = byte_classes_for(shape);
    uint64_t rec = cls.size();
    // Rows larger than a chunk (never cut by the engine) carry no channel structure.
    uint64_t rows = shape.row_bytes && shape.row_bytes <= kMaxChunkRaw && shape.row_bytes % rec == 0 ? shape.row_bytes / rec : 1;
    Bytes p{static_cast<uint8_t>(rec), static_cast<uint8_t>((shape.transposed ? 1 : 0) | (match ? 2 : 0))};
    append_le<uint64_t>(p, rows);
    append_bytes(p, cls);
    return p;
}

// Parses and validates the parameters: a record of 1..64 bytes, known flags, a row of at
// most one chunk (so row_records x record and kHistory x row_records cannot overflow, and a
// previous record is never further back than the chunk), classes 0..7.
inline ChannelLayout read_channel_layout(ByteSpan p) {
    auto bad = [](const char* why) { return Error(std::string("channel layout: bad parameters (") + why + ")"); };
    if (p.size() < 11) throw bad("truncated");
    ChannelLayout f;
    f.record = p[0];
    if (p[1] & ~3u) throw bad("unknown flags");
    f.transposed = p[1] & 1;
    f.match = p[1] & 2;
    f.row_records = load_le<uint64_t>(p.data() + 2);
    if (f.record == 0 || f.record > kMaxRecordBytes || p.size() != 10 + f.record) throw bad("record size");
    if (f.row_records == 0 || f.row_records > kMaxChunkRaw / f.record) throw bad("row larger than a chunk");
    for (unsigned b = 0; b < f.record; ++b) {
        f.cls[b] = p[10 + b];
        if (f.cls[b] > kMaxByteClasses) throw bad("byte class");
    }
    return f;
}

}  // namespace stz
