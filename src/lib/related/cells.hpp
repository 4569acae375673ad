// Cells of a KV cache, found by content: the shared core of `--patch-from` (patch.hpp) and
// `pack` (deduplicated sets).
//
// A *cell* is one KV position: its K row in every layer and its V values in every layer (a
// row when V is row-major; when V is transposed, the cell's column: one element in each
// channel row). Quantised rows are taken as their bytes. A *group* is the set of K/V
// sections that share one cell index (one stream or sequence record: `kv.k[*]`/`kv.v[*]`,
// `s1.kv.*`, `rec2.kv.*`, ...); every section of a group must have the same cell count.
//
// A cell's *bytes* are its pieces concatenated in a fixed order: part by part (the group's
// sections in file order), and within a transposed part channel by channel. Its *hash* is
// a fold of the XXH3-128 of each part's bytes (acc = XXH3-128(acc || part hash), starting
// from the group's layout signature; a transposed part of more than 64 channels is itself a
// fold of its blocks of 64 channels), so two cells have equal hashes only if (up to 2^-128)
// their groups have the same layout and their bytes are equal. Each part is hashed in one
// pass over its section (transposed V in bands of columns), which is what makes it fast. Matching is by this hash, in any order and across groups; a caller that writes
// output from a match must still compare the bytes (verify_run) because the output must
// never be wrong.
//
// Memory: 16 bytes per cell (the hashes) plus the index; cell data is read in tiles of at
// most kCellTileBytes, never a whole section.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/io.hpp"
#include "sections/section.hpp"

namespace stz {

struct CellHash {
    uint64_t lo = 0, hi = 0;
    bool operator==(const CellHash& o) const { return lo == o.lo && hi == o.hi; }
};
struct CellHashKey {
    size_t operator()(const CellHash& h) const { return static_cast<size_t>(h.lo); }
};

// One K or V section of a group.
struct CellPart {
    uint32_t section = 0;     // index into ParsedFile::sections
    uint64_t offset = 0;      // the section's offset in the file
    uint64_t row_bytes = 0;   // bytes of one row of the section
    uint64_t channels = 1;    // transposed: rows of the section (channels); otherwise 1
    uint64_t piece_bytes = 0; // bytes of one cell per channel: row_bytes, or one element when transposed
    bool transposed = false;
    uint64_t cell_bytes() const { return channels * piece_bytes; }
    // File offset of cell `c`'s piece in channel `ch`.
    uint64_t piece_offset(uint64_t c, uint64_t ch) const {
        return transposed ? offset + ch * row_bytes + c * piece_bytes : offset + c * row_bytes;
    }
};

struct CellGroup {
    std::string prefix;  // "", "s1.", "rec2.", ...: the section names before "kv."
    uint64_t n_cells = 0;
    std::vector<CellPart> parts;
    uint64_t signature = 0;   // hash of the layout (parts' piece sizes, channels, transposed)
    uint64_t cell_bytes = 0;  // sum of the parts' cell_bytes
};

// The groups of a parsed file (only sections with a row structure; a prefix whose sections
// disagree on the cell count is left out). Never throws on a parse that tiles its file.
std::vector<CellGroup> find_cell_groups(const ParsedFile& f);

// Every part of every group as a group of its own, so that a "cell" is one row (or one
// column of a transposed section) and rows are matched by content one layer at a time:
// this finds, e.g., the layer-0 V rows of a token seen before, which whole cells do not
// share. Parts of equal layout (any layer) match each other; `origin` gets each new group's
// source group index.
std::vector<CellGroup> split_parts(const std::vector<CellGroup>& groups, std::vector<uint32_t>* origin = nullptr);

inline constexpr uint64_t kCellTileBytes = 4u << 20;

// Reads cells [first, first + count) of `g` into dst (count * g.cell_bytes bytes, each cell
// contiguous in the order above). One read per part (row-major) or per channel (transposed).
void read_cells(InputSource& in, const CellGroup& g, uint64_t first, uint64_t count, uint8_t* dst);
// Cells per tile for a group (>= 1), so a tile holds at most ~kCellTileBytes.
uint64_t cells_per_tile(const CellGroup& g);

// The hash of one cell given its bytes (g.cell_bytes, in read_cells order); equals hash_cells'.
CellHash hash_cell(const CellGroup& g, const uint8_t* cell);
// The hash of every cell of `g`, in cell order (each section read once, in bands).
std::vector<CellHash> hash_cells(InputSource& in, const CellGroup& g);

struct CellRef {
    uint32_t group = 0;
    uint64_t cell = 0;
};

// A file's cells by hash: the reference side of a match. Holds only hashes and positions.
class CellIndex {
public:
    CellIndex() = default;
    // Hashes every cell of every group of `parsed` (the parse of `in`).
    CellIndex(InputSource& in, const ParsedFile& parsed);
    // Hashes every cell of the given groups of `in` (e.g. split_parts of its groups).
    CellIndex(InputSource& in, std::vector<CellGroup> groups);
    const std::vector<CellGroup>& groups() const { return groups_; }
    const std::vector<CellHash>& hashes(uint32_t group) const { return hashes_[group]; }
    // A cell with this hash (the first one indexed), or nullopt.
    std::optional<CellRef> find(const CellHash& h) const;
    uint64_t cells() const { return map_.size(); }

private:
    std::vector<CellGroup> groups_;
    std::vector<std::vector<CellHash>> hashes_;
    std::unordered_map<CellHash, CellRef, CellHashKey> map_;
};

// A run of consecutive cells of one file group equal (by hash) to consecutive cells of a
// reference group; `ref_group == kNoRef` marks a run of new cells.
inline constexpr uint32_t kNoRef = UINT32_MAX;
struct CellRun {
    uint64_t first = 0;   // first cell in the file's group
    uint64_t count = 0;
    uint32_t ref_group = kNoRef;
    uint64_t ref_first = 0;
};

// Matches every cell of `file_group` (with its hashes) against `ref`, returning runs that
// cover [0, n_cells) in order. A match is taken only when the reference group has the same
// layout (signature); runs extend while both sides stay consecutive and keep matching.
std::vector<CellRun> match_cells(const CellGroup& file_group, const std::vector<CellHash>& file_hashes,
                                 const CellIndex& ref);

// True when the run's cells are byte-equal in both files (reads both in tiles).
bool verify_run(InputSource& file, const CellGroup& file_group, InputSource& ref, const CellGroup& ref_group,
                const CellRun& run);

// Splits `runs` so that no matched run survives unverified: a matched run whose bytes differ
// is re-checked cell by cell and the differing cells become new. Returns the verified runs.
std::vector<CellRun> verified_runs(InputSource& file, const CellGroup& file_group, InputSource& ref,
                                   const CellIndex& ref_index, const std::vector<CellRun>& runs);

}  // namespace stz
