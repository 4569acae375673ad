// The patch map of a `--patch-from` file (docs/FORMAT.md, "Reference files"): how the
// original file is rebuilt from the stored stream and the reference file. Both directions
// walk the same segment sequence (PatchWalker), so what the encoder stores and what the
// decoder copies cannot disagree.
#pragma once
#include <array>
#include <optional>

#include "base/bytes.hpp"
#include "base/hashing.hpp"

namespace stz {

// Version 1: no token model. Version 2 (written only when there is one): a token model
// (PatchTokenModel) after the regions. Readers take both.
inline constexpr uint8_t kPatchMapVersion = 1;
inline constexpr uint8_t kPatchMapVersionTokens = 2;
inline constexpr uint64_t kMaxPatchMapBytes = 64ull << 20;

struct PatchRun {
    uint64_t count = 0;
    std::optional<uint32_t> ref_group;  // index into PatchMap::ref_groups; none: new cells (stored)
    uint64_t ref_first = 0;
};
struct PatchPart {
    uint64_t channels = 1, piece_bytes = 0;
    bool transposed = false;
    uint64_t row_tail = 0;  // transposed: bytes of each channel row after the cells (stored)
    bool in_meta = false;   // new rows are in the meta frame (quantised rows: zstd with REF's as context)
};
struct PatchGroup {  // a cell group of the original file
    uint64_t n_cells = 0;
    std::vector<PatchPart> parts;
    std::vector<PatchRun> runs;  // cover [0, n_cells) in order
};
struct PatchRefPart {
    uint64_t offset = 0, row_bytes = 0;
};
struct PatchRefGroup {  // a cell group of the reference file (only its layout: where its cells are)
    uint64_t n_cells = 0;
    std::vector<PatchRefPart> parts;
};
// Stream: bytes from the meta bytes; Part: a K/V layer's rows; Tokens: a token prefix from REF.
enum class RegionKind : uint8_t { Stream = 0, Part = 1, Tokens = 2 };
struct PatchRegion {  // consecutive regions tile the original file
    RegionKind kind = RegionKind::Stream;
    uint64_t length = 0;                   // Stream, Tokens: bytes
    uint32_t group = 0, part = 0;          // Part
    uint64_t ref_offset = 0, shared = 0;   // Tokens: the first `shared` bytes come from REF at ref_offset
};

struct PatchExtent {
    uint64_t offset = 0, length = 0;
};

inline constexpr uint64_t kMaxPatchMetaBytes = 64ull << 20;

// Token positions of the original mapped to cells of one group: `count` positions, the i-th
// of them to cell `first + i * stride`, or to no cell (first = kNoTokenCell).
inline constexpr uint64_t kNoTokenCell = UINT64_MAX;
struct TokenCellRun {
    uint64_t count = 0;
    uint64_t first = kNoTokenCell;
    int64_t stride = 1;
};
// The original's token list predicted from its cells (token_model.hpp): the first `prefix`
// tokens are REF's at ref_offset, the next `tail` are held, transformed, at `meta_offset` of
// the meta bytes; each position's key is the bytes its cell has in `group` (taken from REF).
struct PatchTokenModel {
    uint64_t meta_offset = 0, ref_offset = 0, prefix = 0, tail = 0;
    uint32_t group = 0;
    std::vector<TokenCellRun> cells;  // cover prefix + tail positions, in order
};

struct PatchMap {
    uint64_t original_size = 0;
    Hash128 original_xxh128;
    // Every byte of the original outside the K/V rows the stored stream holds (headers,
    // tokens, cell metadata, quantised rows) follows the map in one zstd frame (patch.hpp).
    uint64_t meta_raw = 0;
    std::vector<PatchExtent> dictionary;  // REF's bytes that prime that frame (not part of the map)
    std::vector<PatchRefGroup> ref_groups;
    std::vector<PatchGroup> groups;
    std::vector<PatchRegion> regions;
    std::optional<PatchTokenModel> tokens;
};

// What a map may copy from REF (its runs and shared tokens, counted with repeats): at most
// this many times REF's size. A writer stores cells beyond it as new (docs/FORMAT.md, "Limits
// of a --patch-from file"), so a reader never copies for long on a few bytes of map.
inline constexpr uint64_t kMaxRefCopyFactor = 4;

// The largest original a --patch-from file can rebuild from a REF of `ref_size` bytes and a
// stored stream of `stored_bytes`: kMaxRefCopyFactor x REF, the stream, and the meta bytes.
inline uint64_t max_patch_original(uint64_t ref_size, uint64_t stored_bytes) {
    uint64_t n = 0;
    if (__builtin_mul_overflow(ref_size, kMaxRefCopyFactor, &n) || __builtin_add_overflow(n, stored_bytes, &n) ||
        __builtin_add_overflow(n, kMaxPatchMetaBytes, &n))
        return UINT64_MAX;
    return n;
}

Bytes encode_patch_map(const PatchMap& m);
// Parses and checks a map (every count and size consistent, regions tiling original_size, each
// part in at most one region, no more runs than the original has bytes); `base` is the map's
// offset for error messages. With `used`, the map may be followed by other bytes (the meta
// frame); *used = its length. An original larger than `max_original` is refused first.
PatchMap decode_patch_map(ByteSpan data, uint64_t base, size_t* used = nullptr, uint64_t max_original = UINT64_MAX);

// The bytes a map's walk takes from each source, summed from its records (no walk).
struct PatchSources {
    uint64_t from_ref = 0, from_stream = 0, from_meta = 0;
};
// Checks, before anything is copied, every REF copy against the layout a writer emits: a
// row-major run copies whole REF rows (piece bytes = REF row bytes), a transposed run pieces
// of REF channel rows that hold the REF group's cells, every channel row and shared token
// inside REF; and that all copies together stay within kMaxRefCopyFactor x ref_size. Throws
// DataError; returns what the map takes from REF, the stored stream and the meta bytes.
PatchSources check_patch_sources(const PatchMap& m, uint64_t ref_size);

// One step of rebuilding the original: `length` bytes at `file_offset` of the original come
// either from the stored stream (next bytes) or from the reference at `ref_offset`.
struct PatchSegment {
    uint64_t file_offset = 0, length = 0;
    bool from_ref = false;
    bool part = false;  // from the stored stream (new K/V rows), else from the meta bytes
    uint64_t ref_offset = 0;
};

// Walks a map's segments in file order (empty segments skipped).
class PatchWalker {
public:
    explicit PatchWalker(const PatchMap& m) : m_(m) {}
    std::optional<PatchSegment> next();

private:
    bool step(PatchSegment& s);  // one candidate segment (may be empty); false at the end
    const PatchMap& m_;
    size_t region_ = 0;
    uint64_t channel_ = 0;
    size_t run_ = 0;
    int token_phase_ = 0;
    uint64_t file_pos_ = 0;
};

}  // namespace stz
