// Sets of state files with each distinct KV cell stored once (`.stzp`, docs/PACK.md).
//
// A member is rebuilt from (1) its literal stream: every byte outside its K/V groups (headers,
// tokens, cell metadata, layer headers; the whole file when it is not a state file),
// compressed as a .stz, and (2) per K/V group, runs of cells taken from stored cell blocks.
// A cell block holds distinct cells that some member brought first, section after section
// (rows, or transposed channel runs), compressed as a .stz with the preset's pipelines.
// The set is append-only: records are added after the last commit and a new commit (the
// whole member list) makes them visible; an interrupted append leaves bytes after the last
// commit that readers ignore and the next append cuts away. Memory: hashes and offsets of
// the cells (cells.hpp), one block and one chunk pipeline at a time, never a whole member.
#pragma once
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "cells.hpp"
#include "engine/engine.hpp"
#include "pack_format.hpp"

namespace stz {

class BlockCache;

class MemoryFile final : public RandomFile {
public:
    uint64_t size() const override { return data.size(); }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;
    void write_at(uint64_t off, const uint8_t* src, size_t n) override;
    void truncate(uint64_t size) override { data.resize(size, 0); }
    Bytes data;
};

struct PackOptions {
    CompressOptions compress;  // preset, threads, memory budget, parse hints
    uint64_t block_bytes = 16ull << 20;  // raw bytes of one cell block at most
};

struct PackAddResult {
    uint64_t size = 0, stored = 0, cells = 0, cells_shared = 0;
    std::string format;
};

// Where a set stands: its committed members (record offsets), where the last commit ends and
// how many bytes follow it (an interrupted append).
struct PackState {
    std::vector<uint64_t> members;
    uint64_t commit_offset = 0;  // record offset of the commit in use
    uint64_t committed_end = 0;
    uint64_t trailing_bytes = 0;
    // A later commit record whose header is valid but whose payload is not: damage, not an
    // interrupted append (the writer writes and syncs a commit's payload before its header).
    // The members are those of the commit before it; empty when there is none.
    std::string damaged_commit;
};
// Finds the last valid commit: the one the file ends with, or else (an interrupted append or
// a damaged last commit, see PackState) the last one a walk over the records from the start
// reaches. Throws DataError if the header is bad or no commit is valid.
PackState read_pack_state(InputSource& f);

// The member records a commit lists, each decoded (or its error kept). Records must not
// overlap one another or the commit (DataError otherwise), so their decoded metadata is
// bounded by the size of the file whatever the commit claims.
struct PackMember;
std::vector<PackMember> read_pack_members(InputSource& f, const PackState& st);

// Bytes of cells the members' runs rebuild (saturating): what unpack writes beyond the
// literal streams. A set whose runs re-use its blocks far more than kPlausibleCellReuse times
// its own size is a decompression bomb (valid, but `-l` says so).
uint64_t pack_cell_bytes_claimed(const std::vector<PackMember>& members);
inline constexpr uint64_t kPlausibleCellReuse = 1024;

class PackWriter {
public:
    ~PackWriter();
    // A new set in an empty file: writes the header and an empty commit.
    static std::unique_ptr<PackWriter> create(RandomFile& f, const PackOptions& opt);
    // An existing set: cuts bytes after the last commit and rebuilds the cell index from the
    // stored blocks (decoding each once) and the member names from the member records.
    // Refuses a set whose last commit is damaged (PackState::damaged_commit) unless
    // `cut_damaged_commit`: then the append continues from the commit before it.
    static std::unique_ptr<PackWriter> append(RandomFile& f, const PackOptions& opt, bool cut_damaged_commit = false);
    // Adds one member (its name already normalised, not yet in the set). `in` must stay valid
    // while the member is pending (pending() counts the last members added that still are):
    // the new cells of pending members are gathered into shared blocks (so the cells a
    // checkpoint adds are coded with those of the next ones), read from their inputs when a
    // block is full or when the members are settled: at the commit, or by add() once
    // kMaxPendingMembers are pending (which bounds the inputs held open). `stored` is filled
    // by commit(). After an exception the writer must not be used again (nothing is committed).
    PackAddResult add(InputSource& in, const std::string& name);
    size_t pending() const { return pending_.size(); }
    static constexpr size_t kMaxPendingMembers = 64;
    bool has_member(const std::string& name) const { return names_.count(name) != 0; }
    // Writes the pending blocks and member records, checks every added member rebuilt from
    // the set against its input byte for byte (a hash match is not trusted alone; a mismatch
    // throws and nothing is committed), then writes the commit record and syncs. Returns the
    // members added since the last commit, with their stored bytes.
    std::vector<PackAddResult> commit();

private:
    struct CellLoc {
        uint32_t block;  // index into block_offsets_ (a block gets its id when it is started)
        uint32_t index;
    };
    struct PendingCell {
        uint32_t member, group;
        uint64_t cell;
    };
    struct PendingBlock {
        uint32_t id = 0;
        BlockHead head;
        std::vector<Section> templates;  // per part: the section a block of these cells is described by
        std::vector<PendingCell> cells;
    };
    struct PendingMember {
        InputSource* in = nullptr;
        MemberRecord record;  // runs name block ids until the blocks are written
        std::vector<CellGroup> groups;
        PackAddResult result;
        double block_share = 0;  // bytes of shared blocks attributed to this member
        bool resolved = false;   // runs already name block offsets (a copy of a written member's)
    };
    struct WholeKey {
        uint64_t size;
        Hash128 hash;
        bool operator<(const WholeKey& o) const {
            return std::tie(size, hash.lo, hash.hi) < std::tie(o.size, o.hash.lo, o.hash.hi);
        }
    };
    // A member with the same bytes as one already added: its record (a copy of the other's,
    // literal stream and runs shared); nullopt when there is none.
    std::optional<MemberRecord> same_content(uint64_t size, const Hash128& h, bool& resolved);
    PackWriter(RandomFile& f, const PackOptions& opt);
    void settle();  // writes the open blocks and the pending members' records, checks them
    void reserve_index(const std::set<uint64_t>& blocks);
    void index_block(uint64_t offset);
    // Memory of one entry of cells_ (key, value, node and bucket), for the budget check.
    static constexpr uint64_t kIndexBytesPerCell = 64;
    void flush_block(PendingBlock& b);
    MemberGroup add_group(uint32_t member, const ParsedFile& parsed, uint32_t group);
    void write_literal(PendingMember& pm, const ParsedFile& parsed, const std::vector<CellGroup>& groups);
    RandomFile& f_;
    PackOptions opt_;
    uint64_t end_ = 0;
    std::vector<uint64_t> members_;
    std::unordered_map<std::string, uint64_t> names_;
    std::vector<uint64_t> block_offsets_;
    std::unordered_map<CellHash, CellLoc, CellHashKey> cells_;
    std::vector<PendingMember> pending_;
    std::vector<PackAddResult> settled_;  // members settled since the last commit
    // Whole members by size and XXH3-128: record offset once written, else ~pending index.
    std::map<WholeKey, uint64_t> whole_;
    std::map<std::string, PendingBlock> open_blocks_;  // by layout and element types
    std::unique_ptr<BlockCache> cache_;  // blocks just written or decoded, for the checks
};

struct PackMember {
    uint64_t offset = 0;  // record offset
    std::optional<MemberRecord> record;
    std::string error;  // why the record could not be read (record empty)
};

class PackReader {
public:
    explicit PackReader(InputSource& f, uint64_t cache_bytes = 256ull << 20);
    ~PackReader();
    const PackState& state() const { return state_; }
    // Every committed member; a damaged member record gives an entry with `error` set.
    const std::vector<PackMember>& members() const { return members_; }
    // Rebuilds member `i` into `out` (resized to the member's size), reading only the records
    // it needs, then reads `out` back and checks the member's size and XXH3-128.
    void restore(size_t i, RandomFile& out, const DecompressOptions& dopt = {});
    // Checks member `i` without writing it anywhere: rebuilds it in file order into its
    // XXH3-128, holding at most `window_bytes` of it at a time (plus the block cache).
    void test(size_t i, const DecompressOptions& dopt = {}, uint64_t window_bytes = 16ull << 20);

private:
    InputSource& f_;
    PackState state_;
    std::vector<PackMember> members_;
    std::unique_ptr<BlockCache> cache_;  // decoded blocks shared by the members restored one after another
};

}  // namespace stz
