// Quantised blocks for the codec tests: the shape a plan gives a K layer of blocks, and K
// layers whose quants do (as a trained model's) or do not depend on their channel.
#pragma once
#include "test_util.hpp"

namespace stztest {

// Rows of `blocks_per_row` blocks of type `t`; with `record_blocks`, records of a 12-byte head
// and that many blocks (a 2023 file's layers).
inline stz::DataShape blocks_shape(stz::ElemType t, uint64_t blocks_per_row, uint64_t record_blocks = 0) {
    const auto& i = stz::elem_type_info(t);
    stz::DataShape s;
    s.kind = stz::ElemKind::Block;
    s.elem_bytes = i.block_bytes;
    s.block_head = i.head_bytes;
    s.row_bytes = blocks_per_row * i.block_bytes;
    if (record_blocks) s.record_head = 12, s.record_bytes = 12 + record_blocks * i.block_bytes;
    return s;
}

// A K layer whose quants depend on their channel (as a trained model's do): channel c's
// values stay near a level of its own.
inline stz::Bytes channel_blocks(stz::ElemType t, size_t rows, size_t cols, uint64_t seed) {
    const uint64_t W = stz::elem_type_info(t).block_bytes;
    stz::Bytes b = random_bytes(rows * cols * W, seed);
    for (size_t i = 0; i < rows * cols; ++i)
        for (uint64_t k = stz::elem_type_info(t).head_bytes; k < W; ++k) {
            uint8_t& x = b[i * W + k];
            const uint8_t level = static_cast<uint8_t>(((i % cols) * 37 + k * 11) & 0xff);
            x = static_cast<uint8_t>(level ^ (x & 0x11));  // a few bits of noise
        }
    return b;
}

}  // namespace stztest
