// Byte statistics used by inspect and bench: zero share, order-0 entropy, and the
// per-channel order-0 bound of 16-bit data (the floor for coders that model each channel).
#pragma once
#include "io.hpp"
#include "section.hpp"

namespace stz {

struct SectionStats2 {
    double zero_fraction = 0;    // of the sampled bytes
    double entropy_bits = 0;     // order-0, bits per byte
    double channel_bound = 0;    // bits per element, per-channel order-0 (16-bit types only; 0 otherwise)
    uint64_t sampled = 0;
};

// Samples at most `budget` bytes of the section (evenly spread, row-aligned where possible).
SectionStats2 section_stats(InputSource& in, const Section& s, uint64_t budget = 1u << 20);

}  // namespace stz
