// The counts an order-0 frequency table is made of (rans_order0_encoder.cpp): of every byte of a
// small plane; of a sample of a large one, with every byte value the plane holds counted at least
// once, so that the table codes every byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stz::rans_enc {

// Planes from this size are counted on a sample.
constexpr size_t kSampledCountsFrom = 64u << 10;

// count[v] for each byte value v of in[0, n): exact below kSampledCountsFrom; else 1 KB in every
// 8 KB counted (at a place in it that moves from one 8 KB to the next), then each value the
// plane holds and the sample missed set to 1 (found by a scan for at most 16 such values within
// the plane's range; more, and every byte is counted). Nonzero exactly for the values the plane
// holds. Returns the counts' sum. The same counts on every CPU.
uint32_t order0_table_counts(const uint8_t* in, size_t n, uint32_t* count);

// Which of the k byte values (at most 16) occur in in[0, n): found[j] for values[j]. With
// `allow_avx512` false, the portable form that CPUs without AVX-512 BW run (for tests: both
// forms give the same answer).
void find_byte_values(const uint8_t* in, size_t n, const uint8_t* values, int k, bool* found, bool allow_avx512 = true);

}  // namespace stz::rans_enc
