// Byte statistics used by inspect and bench: zero share, order-0 entropy, and the
// per-channel order-0 bound of float K/V data: for each byte of the element, the order-0
// entropy of that byte within its channel (a column of row-major data, a row of transposed
// data), summed over the element's bytes. It is the floor for a coder that models every byte
// per channel without further context. (With few values per channel it is biased low: about
// 255 / (2 ln 2 N) bits per byte for N values per channel.)
#pragma once
#include "base/io.hpp"
#include "sections/section.hpp"

namespace stz {

struct ByteStats {
    double zero_fraction = 0;  // of the sampled bytes
    double entropy_bits = 0;   // order-0, bits per byte
    double channel_bound = 0;  // bits per element (f16, bf16, f32 sections with rows; 0 otherwise)
    uint64_t sampled = 0;
};

// Samples at most `budget` bytes of the section (evenly spread, row-aligned where possible).
ByteStats section_stats(InputSource& in, const Section& s, uint64_t budget = 1u << 20);
// The per-channel order-0 bound of a whole section, in bits per element (0 if not a float section).
double channel_bound_bits(InputSource& in, const Section& s);

}  // namespace stz
