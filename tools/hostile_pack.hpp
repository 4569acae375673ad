// Hostile `.stzp` sets (docs/PACK.md), built in memory with every checksum valid: records
// repeated or nested in a commit, a damaged last commit, a run naming block offset 2^64-1, a
// decompression bomb of re-used blocks, a block of one-byte cells. Shared by
// tests/hostile/test_hostile_pack.cpp and by stz-hostile (bench/hostile.sh).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "base/bytes.hpp"
#include "related/pack_format.hpp"

namespace stzhostile {

using stz::Bytes;

// A small synthetic state file (session9, `cells` cells, seeded).
Bytes small_state(uint32_t cells, uint64_t seed);
// A set of these members (name, bytes) written by the library.
Bytes pack_set(const std::vector<std::pair<std::string, Bytes>>& members);
// Appends one record (header and payload checks valid) to `set`; returns its offset.
uint64_t append_record(Bytes& set, stz::RecordType type, const Bytes& payload);
// Appends a commit listing `members`, which becomes the set's last commit.
void append_commit(Bytes& set, const std::vector<uint64_t>& members);
// The member offsets of the set's last valid commit.
std::vector<uint64_t> committed_members(const Bytes& set);

// A commit listing one member record `times` times (at most 2^20): the record of a 2000-cell
// member with a run per cell (32 KB), after a valid commit of that member and another.
Bytes repeated_member_set(uint32_t times);
// A commit listing a member record and a second, valid member record nested inside the
// first one's name.
Bytes nested_member_set();
// A set of three members whose last commit has one bit flipped in its payload.
Bytes damaged_last_commit_set();
// A set whose member has a cell run naming block offset 2^64-1 (the old "no block" sentinel).
Bytes sentinel_block_offset_set();
// A valid set of one member of `reuse` x `block_bytes` zero bytes: one block of zero cells
// (64 KiB each) that the member's runs use `reuse` times.
Bytes reuse_bomb_set(uint64_t block_bytes, uint32_t reuse);
// A valid set of one member of `cells` zero bytes stored as `cells` one-byte cells in blocks
// of at most 64 Mi cells.
Bytes one_byte_cells_set(uint64_t cells);

}  // namespace stzhostile
