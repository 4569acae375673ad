// The pack-reader fuzz entry (libFuzzer target fuzz_pack.cpp, and the regression test that
// replays tests/fuzz/regressions/pack/*), kept apart from fuzz_entry.hpp.
#pragma once
#include <cstddef>
#include <cstdint>

namespace stzfuzz {
// A `.stzp` set read behind its checksums: the file header's and every record's header and
// payload checks are recomputed first (walking the records by their lengths), so that
// mutations reach the record decoders, the commit and member checks, restore, the in-order
// rebuild of -t and an append. Throws nothing but crashes (or aborts) on a finding.
void pack(const uint8_t* data, size_t size);
}  // namespace stzfuzz
