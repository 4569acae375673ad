// The counts of an order-0 table, on a sample where the plane is large (rans_order0_counts.hpp).
//
// Why: counting every byte (four tables of counters, 3.5 GB/s, the fastest form tried) was 17 %
// of a random-weight q8_0 cache's compression. A sample of 1 KB in every 8 KB gives the same
// table within sampling noise; what it cannot tell is which rare values occur at all, and a value
// without a frequency cannot be coded. Those come from the plane's range (one vector pass: its
// smallest and largest byte, read as unsigned and as signed, and the narrower taken, since int8
// quants wrap around 0) and a scan for the values in it the sample missed, all of them at once.
#include "rans_order0_counts.hpp"

#include <algorithm>
#include <cstring>

#include "../base/bytes.hpp"
#include "cpu_features.hpp"
#include "x86_intrinsics.hpp"

namespace stz::rans_enc {
namespace {

constexpr size_t kSampleBlock = 1024, kSampleStride = 8192;
constexpr int kMaxScanned = 16;  // values scanned for; more missing from the sample: count all

// in[from, to) added to four tables of counters in turn (a run of one byte then waits on four).
void count_span(const uint8_t* in, size_t from, size_t to, uint32_t (&counts)[4][256]) {
    size_t i = from;
    for (; i + 4 <= to; i += 4) ++counts[0][in[i]], ++counts[1][in[i + 1]], ++counts[2][in[i + 2]], ++counts[3][in[i + 3]];
    for (; i < to; ++i) ++counts[0][in[i]];
}

// The four tables' sums into count[v].
void sum_tables(const uint32_t (&counts)[4][256], uint32_t* count) {
    for (int v = 0; v < 256; ++v) count[v] = counts[0][v] + counts[1][v] + counts[2][v] + counts[3][v];
}

// The bytes' smallest and largest value as unsigned (lo, hi) and as signed (slo, shi, each as
// its byte): sixteen lanes at a time by the compiler's vectors (SSE2's min/max), then folded.
struct ByteRanges {
    uint8_t lo = 0xff, hi = 0, slo = 0xff, shi = 0;  // signed ones biased by 0x80 while scanned
};
ByteRanges byte_ranges(const uint8_t* in, size_t n) {
    typedef uint8_t Lanes __attribute__((vector_size(16)));
    Lanes lo, hi, slo, shi;
    std::memset(&lo, 0xff, sizeof lo), std::memset(&hi, 0, sizeof hi), slo = lo, shi = hi;
    const Lanes bias = lo ^ 0x7f;  // 0x80 in every lane
    size_t i = 0;
    for (; i + sizeof(Lanes) <= n; i += sizeof(Lanes)) {
        Lanes v;
        std::memcpy(&v, in + i, sizeof v);
        const Lanes s = v ^ bias;
        lo = lo < v ? lo : v, hi = hi > v ? hi : v, slo = slo < s ? slo : s, shi = shi > s ? shi : s;
    }
    ByteRanges r;
    auto take = [&r](uint8_t v) {
        const auto s = static_cast<uint8_t>(v ^ 0x80);
        r.lo = std::min(r.lo, v), r.hi = std::max(r.hi, v), r.slo = std::min(r.slo, s), r.shi = std::max(r.shi, s);
    };
    for (size_t z = 0; z < sizeof(Lanes); ++z) {
        r.lo = std::min<uint8_t>(r.lo, lo[z]), r.hi = std::max<uint8_t>(r.hi, hi[z]);
        r.slo = std::min<uint8_t>(r.slo, slo[z]), r.shi = std::max<uint8_t>(r.shi, shi[z]);
    }
    for (; i < n; ++i) take(in[i]);
    r.slo ^= 0x80, r.shi ^= 0x80;
    return r;
}

// Which of the k values (k <= kMaxScanned) occur in in[0, n): found[j] for values[j].
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bw"))) void find_values_avx512(const uint8_t* in, size_t n, const uint8_t* values,
                                                                    int k, bool* found) {
    __mmask64 hit[kMaxScanned] = {};
    __m512i want[kMaxScanned];
    for (int j = 0; j < k; ++j) want[j] = _mm512_set1_epi8(static_cast<char>(values[j]));
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i v = _mm512_loadu_si512(in + i);
        for (int j = 0; j < k; ++j) hit[j] |= _mm512_cmpeq_epi8_mask(v, want[j]);
    }
    for (int j = 0; j < k; ++j) found[j] = hit[j] != 0;
    for (; i < n; ++i)
        for (int j = 0; j < k; ++j) found[j] = found[j] || in[i] == values[j];
}
#endif

}  // namespace

void find_byte_values(const uint8_t* in, size_t n, const uint8_t* values, int k, bool* found, bool allow_avx512) {
    if (k > kMaxScanned) throw Error("find_byte_values: more values than it scans for");
#if defined(__x86_64__)
    if (allow_avx512 && cpu::avx512_bw_vl()) return find_values_avx512(in, n, values, k, found);
#else
    (void)allow_avx512;
#endif
    typedef uint8_t Lanes __attribute__((vector_size(16)));
    Lanes hit[kMaxScanned] = {};
    size_t i = 0;
    for (; i + sizeof(Lanes) <= n; i += sizeof(Lanes)) {
        Lanes v;
        std::memcpy(&v, in + i, sizeof v);
        for (int j = 0; j < k; ++j) hit[j] |= reinterpret_cast<Lanes>(v == values[j]);
    }
    for (int j = 0; j < k; ++j) {
        found[j] = false;
        for (size_t z = 0; z < sizeof(Lanes); ++z) found[j] = found[j] || hit[j][z];
    }
    for (; i < n; ++i)
        for (int j = 0; j < k; ++j) found[j] = found[j] || in[i] == values[j];
}

uint32_t order0_table_counts(const uint8_t* in, size_t n, uint32_t* count) {
    uint32_t counts[4][256] = {};
    const bool sampled = n >= kSampledCountsFrom;
    if (!sampled) count_span(in, 0, n, counts);
    // Block k of the sample is the ((k mod 8) + 1)-th KB of the k-th 8 KB: a plane of rows a power
    // of two long (a channel or a cell each) is sampled in every part of its rows, not only in
    // their first KB.
    constexpr size_t kPhases = kSampleStride / kSampleBlock;
    for (size_t k = 0, at = 0; sampled && (at = k * kSampleStride + k % kPhases * kSampleBlock) + kSampleBlock <= n; ++k)
        count_span(in, at, at + kSampleBlock, counts);
    sum_tables(counts, count);
    if (sampled) {
        // The values in the plane's narrower range that the sample missed.
        const ByteRanges r = byte_ranges(in, n);
        const int unsigned_span = r.hi - r.lo, signed_span = static_cast<uint8_t>(r.shi - r.slo);
        const uint8_t first = unsigned_span <= signed_span ? r.lo : r.slo;
        uint8_t missed[256];
        int k = 0;
        for (int d = 0; d <= std::min(unsigned_span, signed_span); ++d)
            if (const auto v = static_cast<uint8_t>(first + d); !count[v]) missed[k++] = v;
        if (k > kMaxScanned) {
            std::memset(counts, 0, sizeof counts);
            count_span(in, 0, n, counts);
            sum_tables(counts, count);
        } else if (k) {
            bool found[kMaxScanned];
            find_byte_values(in, n, missed, k, found);
            for (int j = 0; j < k; ++j) count[missed[j]] = found[j];
        }
    }
    uint32_t total = 0;
    for (int v = 0; v < 256; ++v) total += count[v];
    return total;
}

}  // namespace stz::rans_enc
