// Hostile inputs, built in memory: crafted .stz files (valid checksums, bad
// parameters or sizes) and grammatical state files that are expensive to parse or store.
// Shared by tests/hostile/ and by stz-hostile, which writes them for bench/hostile.sh.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "base/bytes.hpp"

namespace stzhostile {

using stz::Bytes;

// `n` bytes of seeded noise (mt19937_64, one byte per draw).
Bytes noise(size_t n, uint64_t seed);
// Some f16-like rows: repeated values, so every codec has something to model.
Bytes sample_rows(size_t n);

Bytes le64(uint64_t a);
Bytes le64x2(uint64_t a, uint64_t b);
// chanctx stage parameters: record size, flags (2 = match model), row_records, byte classes.
Bytes chanctx_params(unsigned record, uint8_t flags, uint64_t row_records, const Bytes& classes);

// One pipeline stage as stored in a chunk record, unchecked.
struct RawStage {
    uint8_t codec;
    uint32_t in_size;
    Bytes params;
};

// A complete .stz of one opaque section and one chunk, written byte by byte (not by
// ContainerWriter, which refuses what the reader rejects), with every checksum valid. The
// file and chunk claim `declared` bytes (default: the size of `raw`, whose hash is stored).
Bytes craft_stz(const Bytes& raw, const std::vector<RawStage>& stages, const Bytes& payload, uint32_t declared = 0);
// One stage of `codec` with `params` over `raw`, the payload encoded with `good_params`.
Bytes craft_one_stage(const std::string& codec, const Bytes& good_params, const Bytes& params, const Bytes& raw);

// Codec parameters: chanctx with the match model and row_records = 2^63+1 over `raw_bytes` of sample
// rows (kHistory x rows wraps; 0.1.0 read ~2^63 bytes away: SIGSEGV).
Bytes chanctx_row_records(size_t raw_bytes = 8192);
// Work bounded by the input: a bf16 chanctx stage declaring `declared` bytes of output from ~100 payload bytes.
Bytes oversized_stage(uint32_t declared = 64u << 20);
// Work bounded by the input: chanctx payload for `records` f16 records (no match model) whose range-coder part is
// 16 bytes of noise: the stream runs past its end. `chanctx_range_overrun_params` go with it.
Bytes chanctx_range_overrun_payload(size_t records);
Bytes chanctx_range_overrun_params();
// The same as a whole .stz declaring 2 x `records` bytes.
Bytes range_overrun(size_t records = 100000);

// A file made of a few pieces at offsets, zero elsewhere (written sparse by stz-hostile).
struct SparseImage {
    uint64_t size = 0;
    std::vector<std::pair<uint64_t, Bytes>> pieces;
};
// Memory bounded by the input: a real header, then an end record claiming as many chunks as a file of about
// `apparent_size` bytes allows (0.1.0's -l allocated the apparent size before checking).
SparseImage huge_chunk_count(uint64_t apparent_size);

// Parse time and output size bounded by the input: ggsq v2 whose body is `n` empty memory records (u32 n_stream = 1,
// u32 cell_count = 0): grammatical, and two sections per 8 bytes.
Bytes ggsq2_empty_records(size_t n);
// Parse time bounded by the input: ggsq v2 of `records` K-only records (1 stream, 1 cell, 1 layer, one f16 K row, no V
// entries): the parser finds the V part absent by trial, once per record.
Bytes ggsq2_k_only_records(size_t records);
// Output size bounded by the input: ggsq v2 of `records` KV records of one cell and 512 layers whose K and V rows are
// one random f16 each: two sections per 14 bytes, incompressible.
Bytes ggsq2_many_layers(size_t records, uint64_t seed);

}  // namespace stzhostile
