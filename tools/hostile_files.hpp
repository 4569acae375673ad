// Hostile inputs of the second hardening pass that are files rather than file systems: sets
// with crafted but checksum-valid records. Shared by tests/hostile/test_hostile_files.cpp and
// stz-hostile (bench/hostile.sh). The FIFO, device and reference cases need no generator.
#pragma once
#include <cstdint>

#include "base/bytes.hpp"

namespace stzhostile {

// A valid .stzp set of two small plain members whose second member record claims `size`
// bytes (its literal stream claims them too, so that the record still decodes), re-encoded
// with a valid checksum. With size = 2^64-1, the members' sizes add up past 2^64.
stz::Bytes set_with_member_size(uint64_t size);

}  // namespace stzhostile
