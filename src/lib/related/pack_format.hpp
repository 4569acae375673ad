// The byte layout of a `.stzp` set file (docs/PACK.md): a fixed header, then checksummed
// records (cell blocks, literal streams, members, commits), appended and never rewritten.
// One struct per record body with its encode and decode; named sizes; every field read from
// a file is checked before use (stz::DataError naming the offset).
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.hpp"
#include "base/hashing.hpp"

namespace stz {

inline constexpr uint8_t kPackMagic[8] = {0x89, 'S', 'T', 'Z', 'P', '\r', '\n', 0x1a};
inline constexpr uint16_t kPackVersion = 1;
inline constexpr uint64_t kPackHeaderBytes = 24;  // magic, u16 version, u16 flags, u32 0, u64 xxh3 of the 16 before
inline constexpr uint8_t kRecordMagic[4] = {'S', 'T', 'Z', 'r'};
inline constexpr uint64_t kRecordHeaderBytes = 4 + 1 + 8 + 8;  // magic, type, u64 payload length, u64 xxh3 of those 13
inline constexpr uint64_t kRecordTrailerBytes = 8;             // u64 xxh3 of the payload
inline constexpr uint8_t kCommitMagic[8] = {'S', 'T', 'Z', 'P', 'E', 'N', 'D', '\n'};
// Limits a reader enforces before allocating (a writer refuses what a reader would reject).
inline constexpr uint64_t kMaxMemberRecord = 64ull << 20;   // member and commit record payloads
inline constexpr uint32_t kMaxPackMembers = 1u << 20;
inline constexpr size_t kMaxMemberName = 4096;
inline constexpr uint64_t kMaxBlockRaw = 64ull << 20;       // decoded bytes of one cell block
inline constexpr uint32_t kMaxGroupSections = 1u << 16;

enum class RecordType : uint8_t { Block = 1, Literal = 2, Member = 3, Commit = 4 };
const char* record_type_name(RecordType t);

// XXH3-128 of a buffer (Hash128: hashing.hpp): cells and blocks.
Hash128 hash128(ByteSpan d);

// Where one K/V section's bytes of a cell sit: rows (cell c = bytes [c*cell_bytes, +cell_bytes))
// or, when `elem_bytes` > 0, transposed (channel ch of cell c at ch*n_cells*elem_bytes + c*elem_bytes).
struct CellLayout {
    uint64_t cell_bytes = 0;
    uint64_t elem_bytes = 0;  // 0: rows; otherwise transposed elements of this size
    bool operator==(const CellLayout&) const = default;
};

// A block: `n_cells` distinct cells of one geometry, laid out section after section as the
// layouts say (rows, or channel runs over the block's cells), stored as an embedded .stz.
struct BlockHead {
    uint64_t signature = 0;  // the cells' group signature (cells.hpp): hashes are seeded with it
    std::vector<CellLayout> layout;
    uint32_t n_cells = 0;
    uint64_t raw_bytes() const;  // n_cells x sum of cell_bytes (checked at decode)
};
Bytes encode_block_head(const BlockHead& b);
BlockHead decode_block_head(SpanReader& r);  // r is positioned at the payload start

// One run of a member's cells taken from consecutive cells of one stored block.
struct PackRun {
    uint64_t block_offset = 0;  // record offset of the block in the set
    uint32_t first = 0, count = 0;
};
// A K/V group of a member: its sections (file offset and cell layout each), cells in file order.
struct MemberGroup {
    std::vector<uint64_t> offsets;  // file offset of each section
    std::vector<CellLayout> layout;
    uint64_t n_cells = 0;
    std::vector<PackRun> runs;  // counts add up to n_cells
};
struct MemberRecord {
    std::string name;
    uint64_t size = 0;
    Hash128 hash;
    std::string format;
    uint64_t literal_offset = 0;  // record offset of the literal stream (the bytes outside groups)
    uint64_t literal_bytes = 0;
    uint64_t stored_bytes = 0;    // bytes this member added to the set (its blocks, literal stream, own record)
    uint64_t cells = 0, cells_shared = 0;
    std::vector<MemberGroup> groups;
};
Bytes encode_member(const MemberRecord& m);
// Checks every count against the payload and every section against the member's size
// (inside [0, size), no two overlapping); `base` = file offset of the payload.
MemberRecord decode_member(ByteSpan payload, uint64_t base);

struct CommitRecord {
    std::vector<uint64_t> members;  // record offsets, in the order added
    uint64_t self_offset = 0;       // record offset of this commit (with the magic, the last 16 payload bytes)
};
Bytes encode_commit(const CommitRecord& c);
CommitRecord decode_commit(ByteSpan payload, uint64_t base);

// Member names: relative, normalised ("a/./b" -> "a/b"), no "..", no empty result, no NUL,
// at most kMaxMemberName bytes. Returns nullopt when a name cannot be made safe.
std::optional<std::string> normalise_member_name(const std::string& path);

}  // namespace stz
