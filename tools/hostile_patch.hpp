// Hostile `--patch-from` files (patch.hpp), built in memory: a patch map crafted by hand,
// stored as a real .stz with valid checksums and the `reference` property of patch_ref(),
// for tests/hostile/test_hostile_patch.cpp and stz-hostile (bench/hostile.sh).
#pragma once
#include <cstdint>

#include "base/bytes.hpp"
#include "rebuild/patch_map.hpp"

namespace stzhostile {

using stz::Bytes;

// The reference the crafted patches name: `size` bytes of seeded noise (stz-hostile patch-ref).
inline constexpr uint64_t kPatchRefBytes = 1u << 20;
Bytes patch_ref(uint64_t size = kPatchRefBytes);

// A .stz whose stored stream is the head of `map` (no dictionary, its meta bytes `meta`) and
// then `stream` (new rows), with the properties a --patch-from file has: `reference` = ref's
// identity and `patched_size` = `claimed` (default: the map's original size).
Bytes craft_patch(const stz::PatchMap& map, const Bytes& meta, const Bytes& ref, const Bytes& stream = {},
                  uint64_t claimed = UINT64_MAX);

// `pieces` one-byte copies of REF's first byte: one transposed part of `pieces` channels whose
// REF rows are 0 bytes apart (0.x: one write per byte, 1 GiB in ~21 s; 2^60 never ends).
Bytes patch_byte_copies(uint64_t pieces, const Bytes& ref);
// About `bytes` of whole-REF copies: bytes / (16 x REF) row-major groups whose 16 runs each
// copy all of REF, each group repeating the previous one's runs (0.x: copied, hashed and
// written out in full before the hash check failed).
Bytes patch_repeated_copies(uint64_t bytes, const Bytes& ref);
// A real-shaped small patch (40 cells copied, 1 KiB of meta) whose `patched_size` claims
// `claimed` bytes (0.x Python allocated the claim: MemoryError, or GBs with its ref).
Bytes patch_size_claim(uint64_t claimed, const Bytes& ref);

}  // namespace stzhostile
