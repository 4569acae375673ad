// What the qctx codec (quant_context_codec.cpp) and its mode 2, the rANS planes
// (quant_context_planes.cpp), share: the block layouts, the parameters, where a block lies in
// the chunk, mode 0's plane of the bytes after the scales (mode 2's last plane), and the
// entry points of mode 2. The format is described in quant_context_codec.cpp.
#pragma once
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "codec.hpp"
#include "klogk.hpp"

namespace stz::qctx {

inline constexpr unsigned kMaxCols = 128, kMinRate = 3, kMaxRate = 7, kDefaultRate = 4;
inline constexpr unsigned kElems = 32;  // values per block

struct BlockLayout {
    unsigned bytes, bits;  // block size; bits per quant value
    bool has_min, has_high;
    unsigned quants_at() const { return 2 + (has_min ? 2 : 0) + (has_high ? 4 : 0); }
};

// The block layouts qctx knows, by the index its parameters store (so the order is format).
inline constexpr BlockLayout kLayouts[] = {
    {34, 8, false, false},  // q8_0
    {18, 4, false, false},  // q4_0, iq4_nl
    {20, 4, true, false},   // q4_1
    {22, 5, false, true},   // q5_0
    {24, 5, true, true},    // q5_1
};

struct QParams {
    BlockLayout layout;
    unsigned cols = 1, rate = kDefaultRate;
    uint64_t record = 0, head = 0;  // records of `record` bytes, `head` of other data then blocks; 0 = none
    bool planes_only = false;       // the encoder writes mode 2 (or 0), never mode 1
};

// Each of the 8 low bits of `bits` as bit 4 of its own byte (bit i in byte i): a q5 block's high
// bits, eight values' worth, beside their nibbles.
inline uint64_t high_bits_as_bytes(uint32_t bits) {
    constexpr uint64_t kEachByte = 0x0101010101010101ull, kBitOfByte = 0x8040201008040201ull, kLow7 = 0x7f7f7f7f7f7f7f7full;
    const uint64_t in_place = ((bits & 0xffu) * kEachByte) & kBitOfByte;  // byte i: bit i of `bits`, at bit i
    const uint64_t set = ((in_place & kLow7) + kLow7) | in_place;          // bit 7 of byte i: byte i nonzero
    return (set & ~kLow7) >> 3;
}

// The 32 values of a block, and back. Eight values a word (byte j's low nibble is value j, its
// high nibble value j + 16): a byte at a time, the high bits ORed into bytes just stored cost
// the store-to-load wait per value (a third of the encoder's count of a q5 plane).
inline void unpack(const BlockLayout& L, const uint8_t* b, uint8_t* v) {
    const uint8_t* qs = b + L.quants_at();
    if (L.bits == 8) return void(std::memcpy(v, qs, kElems));
    constexpr uint64_t kNibbles = 0x0f0f0f0f0f0f0f0full;
    const uint64_t q0 = load_le<uint64_t>(qs), q1 = load_le<uint64_t>(qs + 8);
    uint64_t w[4] = {q0 & kNibbles, q1 & kNibbles, q0 >> 4 & kNibbles, q1 >> 4 & kNibbles};
    if (L.has_high) {
        const uint32_t qh = load_le<uint32_t>(qs - 4);
        for (unsigned m = 0; m < 4; ++m) w[m] |= high_bits_as_bytes(qh >> 8 * m);
    }
    for (unsigned m = 0; m < 4; ++m) store_le<uint64_t>(v + 8 * m, w[m]);
}
inline void pack(const BlockLayout& L, const uint8_t* v, uint8_t* b) {
    uint8_t* qs = b + L.quants_at();
    if (L.bits == 8) return void(std::memcpy(qs, v, kElems));
    for (unsigned j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((v[j] & 15) | (v[j + 16] & 15) << 4);
    if (L.has_high) {
        uint32_t qh = 0;
        for (unsigned j = 0; j < kElems; ++j) qh |= uint32_t(v[j] >> 4 & 1) << j;
        std::memcpy(b + L.quants_at() - 4, &qh, 4);
    }
}


// Where block i lies: blocks back to back, or the bodies of records (each after its head).
struct Geometry {
    uint64_t record, head, W;
    size_t blocks = 0, per_record = 0, tail = 0;
    Geometry(const QParams& q, size_t size) : record(q.record), head(q.head), W(q.layout.bytes) {
        if (record) {
            per_record = (record - head) / W;
            blocks = size / record * per_record;
        } else {
            blocks = per_record = size / W;
            tail = size - blocks * W;
        }
    }
    template <typename T>
    T* block(T* base, size_t i) const {
        return record ? base + i / per_record * record + head + i % per_record * W : base + i * W;
    }
};

// Mode 0: the bytes after the scales of every block, channel-major (for each column of the
// row, each byte position, the rows in order: order-1 context is the same byte one row up).
// Where a model per channel does not pay (the random-weight model's K) they go through
// order-1 rANS: as small as an adaptive shared model and at rANS's speed instead of a binary
// decision per bit.
struct PayloadPlane {
    size_t skip, per, cols, rows;  // scale bytes; payload bytes per block; columns and rows of blocks
    PayloadPlane(const QParams& q, size_t blocks)
        : skip(q.layout.has_min ? 4 : 2), per(q.layout.bytes - skip), cols(blocks % q.cols ? 1 : q.cols),
          rows(cols ? blocks / cols : 0) {}
    size_t size() const { return rows * cols * per; }
    size_t at(size_t block, size_t k) const { return ((block % cols) * per + k) * rows + block / cols; }
};

// The rans codec and its order-1 parameters (mode 0's plane and mode 2's planes).
const Codec& rans();
const Bytes& rans_order1();

// Which last plane (mode 3's whole values, or mode 2's bytes after the scales) and whether
// its rans stage may use order 1. Whole values where they are expected smaller (each plane by
// the best of order 0, order 1 and stored, from the first blocks): on few rows, where order-1's
// tables of byte pairs cost more than they find; the bytes on many rows of 4-bit values,
// where the pair of values in a byte is a wider context.
struct PlanesChoice {
    bool whole_values;
    std::optional<bool> row_context;  // none: as rans:1 chooses from the plane's pairs
    // Order 0 decided for the bytes after the scales: their plane may then be in storage order
    // (mode 4), which order 0 codes to the same size without a transposition either way.
    bool storage_order() const { return !whole_values && row_context.has_value() && !*row_context; }
};
// The last plane of the rANS planes modes: the bytes after the scales channel-major (mode 2),
// the 32 values of every block whole (mode 3), the bytes after the scales in storage order
// (mode 4).
enum class LastPlane { Bytes, WholeValues, StorageOrder };
PlanesChoice choose_planes(const QParams& q, const Geometry& g, ByteSpan in);

// Mode 2's payload (after the mode byte, before the partial last block): the blocks of `in`
// (g.blocks of them) as rANS planes, and back into `o` (out_size bytes, the whole records
// or blocks; the partial last block is the caller's). With whole values, mode 3's: the last
// plane holds each block's 32 values whole instead of its bytes after the scales; in storage
// order, mode 4's: the last plane holds them block after block.
void encode_planes(ByteSpan in, const QParams& q, const Geometry& g, Bytes& out, const PlanesChoice& choice);
void decode_planes(ByteSpan body, const QParams& q, const Geometry& g, size_t out_size, uint8_t* o, LastPlane last);

}  // namespace stz::qctx
