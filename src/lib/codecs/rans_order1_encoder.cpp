// An order-1 encoder of htscodecs' 32-way rANS streams (the kernel part of RANS_ORDER_X32 | 1),
// writing the same bytes as the library's rans_compress_O1_32x16* at a fraction of their set-up,
// and, where its counts say they are smaller (each row charged for its decoding), statezip's
// streams with grouped contexts (the rows of 2^s neighbouring previous bytes merged:
// choose_grouping; rans_order1_decoder.hpp).
//
// Why: on every call the library zeroes and sums a 256 x 256 table of pair counts, normalises
// and writes every context's frequencies walking all 256 symbols of each, and builds a 16-byte
// coding entry for every one of the 65,536 (context, symbol) pairs whether they occur or not:
// about 1 ms before its first symbol on a 30 KB plane of many-symbol contexts, and the default
// preset codes order 1 on planes of 0.02-1 MB (exponent planes, quant planes of small models).
// Here the pair counts are kept zero between calls and only the rows used are cleared, only the
// symbols present are normalised, and only the pairs present get an entry; the lanes then code
// sixteen at a time from a step-major copy of the input.
//
// Identical bytes, because the library is the reference: the table precision (10 or 12 bits) is
// chosen by the library's rans_compute_shift estimate, recomputed here over the nonzero counts
// with the same floating-point operations in the same order; packed tables come from the
// library's order-0 coder; the normalisation is the library's integer procedure step for step
// (rans_encoder_parts.cpp). The stream's layout is described in rans_order1_decoder.cpp, the
// coder in rans_encoder_parts.hpp.
#include "rans_order1_encoder.hpp"

#include <htscodecs/rANS_static4x16.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "../base/bytes.hpp"
#include "byte_transpose.hpp"
#include "klogk.hpp"
#include "rans_encoder_parts.hpp"
#include "rans_order0_small.hpp"
#include "rans_order1_form.hpp"
#include "uint7.hpp"

#include "x86_intrinsics.hpp"

namespace stz {
namespace {

using rans_enc::kLanes;
// The table's longest form: shift byte, symbol list (<= 2 bytes a symbol and its end), and 256
// contexts of 256 frequencies of at most two uint7 bytes (<= 4096).
constexpr size_t kMaxTableBytes = 1 + 2 * 256 + 1 + 256 * 256 * 2;

// Per thread, reused: pair counts (all zero between calls), each context's nonzero counts as a
// list (ascending symbols; 16 entries of slack for whole-vector stores), coding entries (only
// the pairs of the current input are meaningful), the table.
struct Scratch {
    alignas(64) uint32_t pairs[256][256];
    alignas(64) uint32_t entry[256 * 256];
    alignas(64) uint32_t freq[256 * 256 + 16];
    uint8_t symbol[256 * 256 + 16];
    uint32_t list_start[257];
    std::array<uint8_t, kMaxTableBytes> table;
};
Scratch& scratch() {
    thread_local const auto s = make_large_table<Scratch>();  // value-initialised: zero counts
    return *s;
}

// A plane of few values (a q4 or q5 block's values whole: 16 or 32 of them) has few pairs, each
// met often, and one table's increments of the same cell wait for each other: its pairs go into
// four small tables in turn, added up after. (Byte planes keep one table: four of 64K cells would
// not stay in the cache.)
constexpr unsigned kFewValueBits = 5, kFewValues = 1u << kFewValueBits;

bool all_below_few_values(const uint8_t* in, unsigned n) {
    constexpr uint64_t kHighBits = 0x0101010101010101ull * (0x100 - kFewValues);  // of each byte
    uint64_t any = 0;
    unsigned i = 0;
    for (; i + 8 <= n; i += 8) any |= load_le<uint64_t>(in + i);
    for (; i < n; ++i) any |= in[i];
    return (any & kHighBits) == 0;
}

void count_few_value_pairs(const uint8_t* in, unsigned n, uint32_t (*pairs)[256]) {
    constexpr unsigned b = kFewValueBits;
    uint32_t t[4][kFewValues * kFewValues] = {};
    unsigned prev = 0, i = 0;
    for (; i + 4 <= n; i += 4) {
        ++t[0][prev << b | in[i]], ++t[1][in[i] << b | in[i + 1]];
        ++t[2][in[i + 1] << b | in[i + 2]], ++t[3][in[i + 2] << b | in[i + 3]];
        prev = in[i + 3];
    }
    for (; i < n; ++i) ++t[0][prev << b | in[i]], prev = in[i];
    for (unsigned c = 0; c < kFewValues; ++c)
        for (unsigned v = 0; v < kFewValues; ++v) {
            const unsigned cell = c << b | v;
            pairs[c][v] += t[0][cell] + t[1][cell] + t[2][cell] + t[3][cell];
        }
}

// The pairs the library's encoder counts: (previous byte, byte) over the whole input with 0
// before the first, and each lane's first byte once more after 0. In two halves
// (rans_order1_form.hpp) the lanes are those of both halves.
void count_pairs(const uint8_t* in, unsigned n, uint32_t (*pairs)[256], bool halves) {
    if (all_below_few_values(in, n)) {
        count_few_value_pairs(in, n, pairs);
    } else {
        uint8_t prev = 0;
        for (unsigned i = 0; i < n; ++i) ++pairs[prev][in[i]], prev = in[i];
    }
    // The lanes of the m bytes from `from`; the input's first byte already follows its 0.
    auto lane_starts = [&](size_t from, size_t m) {
        for (int lane = from ? 0 : 1; lane < kLanes; ++lane) ++pairs[0][in[from + lane * (m / kLanes)]];
    };
    if (!halves) return lane_starts(0, n);
    const size_t first = order1_form::first_half_bytes(n);
    lane_starts(0, first);
    lane_starts(first, n - first);
}

// Whether the encoder writes an n-byte plane in two halves, where statezip's own streams may be
// written (`own_forms`).
bool in_two_halves(unsigned n, bool own_forms) { return own_forms && n >= order1_form::kTwoHalvesMinBytes; }

// Row `c`'s nonzero counts and their symbols, appended at `k` (returned: the new end); the row
// left zero. (The forms below for AVX-512 and AVX2 list the same.)
using ListRowFn = uint32_t (*)(uint32_t* row, uint32_t* freq, uint8_t* symbol, uint32_t k);
uint32_t list_row_scalar(uint32_t* row, uint32_t* freq, uint8_t* symbol, uint32_t k) {
    for (int j = 0; j < 256; ++j)
        if (row[j]) freq[k] = row[j], symbol[k++] = static_cast<uint8_t>(j), row[j] = 0;
    return k;
}

// The pairs of `in` counted (count_pairs), then every context's list (Scratch::freq, symbol,
// list_start; the counts cleared) and the library's totals: per context its pairs, plus one
// for the last byte's value.
void list_pairs(Scratch& s, const uint8_t* in, unsigned n, uint32_t* totals, ListRowFn list_row, bool halves) {
    count_pairs(in, n, s.pairs, halves);
    const uint8_t last = in[n - 1];
    uint32_t k = 0;
    for (int c = 0; c < 256; ++c) {
        s.list_start[c] = k;
        k = list_row(s.pairs[c], s.freq, s.symbol, k);
        uint32_t total = c == last;
        for (uint32_t i = s.list_start[c]; i < k; ++i) total += s.freq[i];
        totals[c] = total;
    }
    s.list_start[256] = k;
}

// The pairs' entropies from the listed contexts (`totals` with the last byte's one more each
// context c == last has): order 1 from each context's counts, order 0 from their sums per symbol.
PairCounts pair_counts(const Scratch& s, uint8_t last, const uint32_t* totals, unsigned n) {
    const double* const table = klogk_table();
    uint64_t single[256] = {};
    PairCounts m;
    m.bytes = n;
    for (int c = 0; c < 256; ++c) {
        const uint32_t begin = s.list_start[c], end = s.list_start[c + 1];
        if (begin == end) continue;
        m.bits1 += klogk(table, totals[c] - (c == last));
        for (uint32_t i = begin; i < end; ++i) m.bits1 -= klogk(table, s.freq[i]), single[s.symbol[i]] += s.freq[i];
        m.pairs += end - begin;
    }
    uint64_t all = 0;
    for (int v = 0; v < 256; ++v) all += single[v], m.symbols += single[v] != 0, m.bits0 -= klogk(table, single[v]);
    m.bits0 += klogk(table, all);
    return m;
}

}  // namespace

PairCounts rans_order1_pair_counts(const uint8_t* in, unsigned n) {
    Scratch& s = scratch();
    uint32_t totals[256];
    list_pairs(s, in, n, totals, list_row_scalar, in_two_halves(n, true));
    return pair_counts(s, in[n - 1], totals, n);
}

namespace {

using namespace rans_enc;
constexpr unsigned kPackTableAbove = 1000;  // the library tries to pack tables longer than this

// The instruction sets' forms of the parts that are vectors (the scalar one on any CPU).
struct Form {
    ListRowFn list_row;
    StepsFn steps10, steps12;
};
constexpr Form kScalar{list_row_scalar, steps_scalar<kShiftFast>, steps_scalar<kShiftFull>};

#if defined(__x86_64__)
// Row `c`'s nonzero counts and their symbols, appended at `k` (returned: the new end), sixteen
// counts a compare; the row left zero.
__attribute__((target("avx512f,popcnt"))) uint32_t list_row_avx512(uint32_t* row, uint32_t* freq, uint8_t* symbol,
                                                             uint32_t k) {
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int j = 0; j < 256; j += 16) {
        const __m512i v = _mm512_loadu_si512(row + j);
        _mm512_storeu_si512(row + j, _mm512_setzero_si512());
        const __mmask16 nonzero = _mm512_test_epi32_mask(v, v);
        _mm512_storeu_si512(freq + k, _mm512_maskz_compress_epi32(nonzero, v));
        const __m512i sym = _mm512_add_epi32(iota, _mm512_set1_epi32(j));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(symbol + k), _mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(nonzero, sym)));
        k += static_cast<uint32_t>(__builtin_popcount(nonzero));
    }
    return k;
}

// The same eight counts a compare: the nonzero ones one by one.
__attribute__((target("avx2,popcnt"))) uint32_t list_row_avx2(uint32_t* row, uint32_t* freq, uint8_t* symbol, uint32_t k) {
    for (int j = 0; j < 256; j += 8) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j));
        unsigned nonzero = ~static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, _mm256_setzero_si256())))) & 0xff;
        if (!nonzero) continue;
        alignas(32) uint32_t counts[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(counts), v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + j), _mm256_setzero_si256());
        for (; nonzero; nonzero &= nonzero - 1) {
            const int i = __builtin_ctz(nonzero);
            freq[k] = counts[i];
            symbol[k++] = static_cast<uint8_t>(j + i);
        }
    }
    return k;
}

constexpr Form kAvx512{list_row_avx512, steps_avx512<kShiftFast>, steps_avx512<kShiftFull>};
constexpr Form kAvx512Divide{list_row_avx512, steps_avx512<kShiftFast, true>, steps_avx512<kShiftFull, true>};
// The AVX-512 form this CPU runs faster (the same bytes).
const Form& avx512_form() {
    static const Form& form = steps_avx512_divide_faster() ? kAvx512Divide : kAvx512;
    return form;
}
constexpr Form kAvx2{list_row_avx2, steps_avx2<kShiftFast>, steps_avx2<kShiftFull>};
#endif

// htscodecs' fast_log: a linear approximation of the natural log from a double's bits.
inline double fast_log(double a) {
    return static_cast<double>(std::bit_cast<int64_t>(a) - 4606921278410026770LL) * 1.539095918623324e-16;
}

// htscodecs' rans_compute_shift over the lists: its estimate of the cost of 10- and 12-bit
// tables (each context's entropy at both precisions, plus a guess at the table's bytes), and
// per context the power of two its counts are normalised to (`scaled_max`). The same floating
// point operations in the same order, so the same choice; x / f > m is taken as x >= (m + 1) * f.
int choose_shift(const Scratch& s, const uint32_t* totals, uint32_t* scaled_max) {
    double e10 = 0, e12 = 0;
    uint32_t max_total = 0;
    SymbolSet::of_nonzero(totals).each([&](unsigned c) {
        uint32_t max_val = std::bit_ceil(totals[c]);
        const uint32_t begin = s.list_start[c], end = s.list_start[c + 1];
        int bumped10 = 0, bumped12 = 0;
        for (uint32_t i = begin; i < end; ++i) {
            bumped10 += uint64_t(max_val) >= uint64_t((1u << kShiftFast) + 1) * s.freq[i];
            bumped12 += uint64_t(max_val) >= uint64_t((1u << kShiftFull) + 1) * s.freq[i];
        }
        const double l10 = std::log(static_cast<double>((1 << kShiftFast) + bumped10));
        const double l12 = std::log(static_cast<double>((1 << kShiftFull) + bumped12));
        const double t_full = static_cast<double>(1 << kShiftFull) / totals[c];
        const double t_fast = static_cast<double>(1 << kShiftFast) / totals[c];
        for (uint32_t i = begin; i < end; ++i) {
            const double f = s.freq[i], fast = f * t_fast, full = f * t_full;
            e10 -= f * (fast_log(fast > 1 ? fast : 1) - l10);
            e12 -= f * (fast_log(full > 1 ? full : 1) - l12);
            e10 += 1.3;
            e12 += 4.7;
        }
        if (end - begin < 64 && max_val > 128) max_val /= 2;
        if (max_val > 1024) max_val /= 2;
        if (max_val > (1u << kShiftFull)) max_val = 1u << kShiftFull;
        scaled_max[c] = max_val;
        if (max_total < max_val) max_total = max_val;
    });
    return e10 / e12 < 1.01 || max_total <= (1u << kShiftFast) ? kShiftFast : kShiftFull;
}

// One context's frequencies over the alphabet (uint7 each; a run of zeros as 0, run - 1), from
// its nonzero ones and the alphabet position of each symbol.
uint8_t* put_context(uint8_t* p, const uint8_t* sym, const uint32_t* f, uint32_t k, const uint8_t* rank,
                     int alphabet_size) {
    int next = 0;  // the alphabet position written next
    for (uint32_t i = 0; i < k; ++i) {
        if (const int zeros = rank[sym[i]] - next) *p++ = 0, *p++ = static_cast<uint8_t>(zeros - 1);
        p += put_uint7(p, f[i]);
        next = rank[sym[i]] + 1;
    }
    if (const int zeros = alphabet_size - next) *p++ = 0, *p++ = static_cast<uint8_t>(zeros - 1);
    return p;
}

// Grouped contexts: the row of a pair is its previous byte >> shift, one row for 2^shift
// neighbouring values. The quants of a trained model's K, taken channel by channel, depend on the
// magnitude of the value one row up, hardly on its exact value: one row per value gives each row
// few pairs and a table that on a plane of 50-130 KB costs a quarter of the plane (corpus hd32
// q8_0 files, estimated: order 1 with a row per value 669 KB of K quants, rows of 8 values 614
// KB) and, decoding, a slot table of 1 MB where 32 rows take 128 KB. htscodecs' streams are
// shift 0.
constexpr int kMaxGroupShift = 5;
constexpr double kTableBytesPerPair = 0.5;  // what a table entry costs (as order_from_counts)

// The order-1 entropy (bits), distinct pairs and rows with rows grouped by `shift`, from the rows
// listed (list_pairs; each row's total has one more for the last byte's value, not a pair). Only
// the pairs listed are visited: summed per group, each symbol's first sighting in the group noted
// without a branch (a group of many rows sees most symbols again and again: a branch on it
// mispredicted), then the symbols noted taken and cleared. Scanning 256 counts per group for five
// groupings cost more than a small plane's pairs.
void grouped_bits(const Scratch& s, const uint32_t* totals, uint8_t last, int shift, double& bits, uint32_t& pairs,
                  uint32_t& rows) {
    const double* const table = klogk_table();
    uint32_t counts[256] = {};
    uint8_t seen[256 + 1];  // one more than there are symbols: the last sighting's write is always made
    bits = 0, pairs = 0, rows = 0;
    for (int b = 0; b < (256 >> shift); ++b) {
        const uint32_t begin = s.list_start[b << shift], end = s.list_start[(b + 1) << shift];
        if (begin == end) continue;
        ++rows;
        uint64_t total = 0;
        for (int c = b << shift; c < (b + 1) << shift; ++c) total += totals[c] - (c == last);
        uint32_t n_seen = 0;
        for (uint32_t i = begin; i < end; ++i) {
            const uint8_t v = s.symbol[i];
            seen[n_seen] = v;
            n_seen += counts[v] == 0;
            counts[v] += s.freq[i];
        }
        bits += klogk(table, total);
        for (uint32_t i = 0; i < n_seen; ++i) bits -= klogk(table, counts[seen[i]]), counts[seen[i]] = 0;
        pairs += n_seen;
    }
}

// The grouping (0 to kMaxGroupShift) whose coded bytes and table (entries and rows) come to the
// least, estimated; its entropy and pairs into `counts` (for the order test).
int choose_grouping(const Scratch& s, const uint32_t* totals, uint8_t last, PairCounts& counts) {
    uint32_t rows = 0;
    for (int c = 0; c < 256; ++c) rows += s.list_start[c] != s.list_start[c + 1];
    double best = counts.bits1 / 8 + kTableBytesPerPair * counts.pairs + order1::kTableBytesPerRow * rows;
    int best_shift = 0;
    for (int shift = 1; shift <= kMaxGroupShift; ++shift) {
        double bits = 0;
        uint32_t pairs = 0;
        grouped_bits(s, totals, last, shift, bits, pairs, rows);
        const double cost = bits / 8 + kTableBytesPerPair * pairs + order1::kTableBytesPerRow * rows;
        if (cost < best) best = cost, best_shift = shift, counts.bits1 = bits, counts.pairs = pairs;
    }
    return best_shift;
}

// The listed rows merged into their groups, in place: group b's list is written where its first
// row's began or lower (a group's list is no longer than its rows' together), after its rows'
// pairs (back to back, as in grouped_bits) are read; its total is theirs. Rows from 256 >> shift
// on are left empty.
void merge_groups(Scratch& s, uint32_t* totals, int shift) {
    uint32_t k = 0;
    for (int b = 0; b < (256 >> shift); ++b) {
        uint32_t counts[256] = {};
        uint32_t total = 0;
        for (int c = b << shift; c < (b + 1) << shift; ++c) total += totals[c];
        for (uint32_t i = s.list_start[b << shift]; i < s.list_start[(b + 1) << shift]; ++i) counts[s.symbol[i]] += s.freq[i];
        s.list_start[b] = k;
        totals[b] = total;
        SymbolSet::of_nonzero(counts).each([&](unsigned v) { s.freq[k] = counts[v], s.symbol[k++] = static_cast<uint8_t>(v); });
    }
    for (int b = 256 >> shift; b < 256; ++b) s.list_start[b] = k, totals[b] = 0;
    s.list_start[256] = k;
}

// The frequency table into s.table (returned: its length), the pairs' entries into s.entry,
// from the rows listed (list_pairs, then merge_groups if grouped). `shift` is set to the table's
// precision. The list of rows is the union of the rows present and the symbols present (for
// htscodecs' streams these are the same), each row's frequencies over it; a row of a symbol that
// no group takes is all zeros.
size_t build_table(Scratch& s, const uint32_t* totals, int& shift) {
    SymbolSet present = SymbolSet::of_nonzero(totals);
    uint8_t rank[256];
    int alphabet_size = 0;
    for (uint32_t i = 0; i < s.list_start[256]; ++i) present.add(s.symbol[i]);
    present.each([&](unsigned c) { rank[c] = static_cast<uint8_t>(alphabet_size++); });
    uint8_t* p = put_symbol_list(s.table.data() + 1, present);
    uint32_t scaled_max[256] = {};
    shift = choose_shift(s, totals, scaled_max);
    const Reciprocals& r = reciprocals();
    present.each([&](unsigned c) {
        if (!totals[c]) {
            p = put_context(p, nullptr, nullptr, 0, rank, alphabet_size);
            return;
        }
        const uint32_t begin = s.list_start[c];
        uint32_t k = s.list_start[c + 1] - begin;
        uint8_t sym[256];
        uint32_t f[256];
        std::memcpy(sym, s.symbol + begin, k);
        std::memcpy(f, s.freq + begin, 4 * k);
        uint32_t max_total = scaled_max[c];
        if (shift == kShiftFast && max_total > (1u << kShiftFast)) max_total = 1u << kShiftFast;
        normalise(sym, f, k, totals[c], max_total);
        p = put_context(p, sym, f, k, rank, alphabet_size);
        int up = 0;
        for (uint32_t t = max_total; t && t < (1u << shift); t *= 2) ++up;
        uint32_t start = 0;
        for (uint32_t i = 0; i < k; ++i) {
            const uint32_t freq = f[i] << up;
            s.entry[c << 8 | sym[i]] = entry_of(start, freq, r.shift[freq], shift);
            start += freq;
        }
    });
    s.table[0] = static_cast<uint8_t>(shift << 4);
    return static_cast<size_t>(p - s.table.data());
}

// The library packs a table longer than kPackTableAbove by its order-0 coder when that saves
// more than 6 bytes: flag bit 0, uint7 plain length, uint7 packed length, the packed bytes.
size_t pack_table(uint8_t* table, size_t length) {
    if (length <= kPackTableAbove) return length;
    const unsigned plain = static_cast<unsigned>(length - 1);
    thread_local Bytes packed;
    packed.resize(length + 64);
    size_t packed_size = packed.size();
    if (rans_order0_small_encode(table + 1, plain, packed.data(), &packed_size) && packed_size + 6 < length) {
        uint8_t* p = table + 1;
        table[0] |= 1;
        p += put_uint7(p, plain);
        p += put_uint7(p, static_cast<uint32_t>(packed_size));
        std::memcpy(p, packed.data(), packed_size);
        length = static_cast<size_t>(p + packed_size - table);
    }
    return length;
}

// The lanes' words and final states for `in`: written downwards from `end`, not below `lowest`;
// returned their start, or null if they do not fit. Entries by (previous byte >> context_shift, byte).
template <int Shift>
uint8_t* encode_lanes(uint8_t* in, unsigned n, const uint32_t* entry, uint8_t* end, const uint8_t* lowest,
                      StepsFn steps_fn, int context_shift) {
    const uint32_t* rcp = reciprocals().rcp.data();
    const size_t steps = n / kLanes, tail = n - kLanes * steps;
    if (size_t(end - lowest) < 2 * tail + 4 * kLanes) return nullptr;  // the tail's words, the states
    uint32_t state[kLanes];
    for (uint32_t& x : state) x = kStateLow;
    uint8_t* w = end;
    for (size_t i = n; i-- > kLanes * steps;)
        put_symbol<Shift>(state[kLanes - 1], w, entry[(in[i - 1] >> context_shift) << 8 | in[i]], rcp);
    Bytes by_step(steps * kLanes);
    transpose_bytes<false>(by_step.data(), steps, kLanes, [&](uint64_t lane) { return in + lane * steps; });
    if (!steps_fn(by_step.data(), steps, entry, state, w, lowest + 4 * kLanes, context_shift)) return nullptr;
    put_states(w, state, kLanes);
    return w;
}

// The stream for `in` from its listed rows (`totals`): the form byte (`form`: 0 for htscodecs'
// stream, which has none), the table, then the lanes' words; in two halves, a uint7 of the first
// half's lane bytes before them.
unsigned char* encode_listed(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                             const uint32_t* totals, const Form& form, int stream_form) {
    Scratch& s = scratch();
    int shift = 0;
    const size_t table_bytes = pack_table(s.table.data(), build_table(s, totals, shift));
    const size_t head = (stream_form ? 1 : 0) + table_bytes;
    const bool halves = stream_form & order1_form::kTwoHalves;
    const size_t length_room = halves ? kMaxUint7Bytes : 0;
    // The lanes' bytes are written downwards from the end of `out`, then moved to follow the table.
    if (head + length_room > *out_size) return nullptr;
    if (stream_form) out[0] = static_cast<uint8_t>(stream_form);
    std::memcpy(out + head - table_bytes, s.table.data(), table_bytes);
    uint8_t* const end = out + *out_size;
    const uint8_t* const lowest = out + head + length_room;
    const int context_shift = stream_form & order1_form::kContextShiftBits;
    auto lanes = [&](uint8_t* part, unsigned part_n, uint8_t* part_end) -> uint8_t* {
        return shift == kShiftFull
                   ? encode_lanes<kShiftFull>(part, part_n, s.entry, part_end, lowest, form.steps12, context_shift)
                   : encode_lanes<kShiftFast>(part, part_n, s.entry, part_end, lowest, form.steps10, context_shift);
    };
    uint8_t* start = nullptr;
    uint8_t* at = out + head;
    if (!halves) {
        start = lanes(in, n, end);
    } else {  // the second half's lanes first, written downwards: the first's then lie before them
        const unsigned first = static_cast<unsigned>(order1_form::first_half_bytes(n));
        uint8_t* const second_start = lanes(in + first, n - first, end);
        if (second_start) start = lanes(in, first, second_start);
        if (start) at += put_uint7(at, static_cast<uint32_t>(second_start - start));
    }
    if (!start) return nullptr;
    const size_t lane_bytes = static_cast<size_t>(end - start);
    std::memmove(at, start, lane_bytes);
    *out_size = static_cast<unsigned>(at - out + lane_bytes);
    return out;
}

// The pairs counted and listed per context (the counts left zero), then the stream unless
// `test` (given the pairs' entropies) says otherwise. `stream_form` (null: htscodecs' stream
// only) gets the form byte of statezip's own stream written (rans_order1_form.hpp: the grouping
// choose_grouping chose, two halves from kTwoHalvesMinBytes), 0 for htscodecs' stream.
unsigned char* encode(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size, const Form& form,
                      OrderTest test = nullptr, OrderVerdict* verdict = nullptr, int* stream_form = nullptr) {
    if (n < kLanes || rans_compress_bound_4x16(n, 1) - 20 > *out_size) return nullptr;
    Scratch& s = scratch();
    uint32_t totals[256];
    const bool halves = in_two_halves(n, stream_form != nullptr);
    list_pairs(s, in, n, totals, form.list_row, halves);
    int grouping = 0;
    if (test || stream_form) {
        PairCounts counts = pair_counts(s, in[n - 1], totals, n);
        if (stream_form) grouping = choose_grouping(s, totals, in[n - 1], counts);
        if (test && (*verdict = test(counts)) != OrderVerdict::Order1) return nullptr;
    }
    if (grouping) merge_groups(s, totals, grouping);
    const int written_form = grouping | (halves ? order1_form::kTwoHalves : 0);
    if (stream_form) *stream_form = written_form;
    return encode_listed(in, n, out, out_size, totals, form, written_form);
}

}  // namespace

unsigned char* rans_order1_encode_if_scalar(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                                            OrderTest test, OrderVerdict* verdict, int* stream_form) {
    return encode(in, n, out, out_size, kScalar, test, verdict, stream_form);
}

#if defined(__x86_64__)

bool rans_order1_encoder_avx512_available() { return rans_enc::steps_avx512_available(); }
bool rans_order1_encoder_avx2_available() { return rans_enc::steps_avx2_available(); }

unsigned char* rans_order1_encode_avx512(unsigned char* in, unsigned int n, unsigned char* out,
                                         unsigned int* out_size) {
    return encode(in, n, out, out_size, kAvx512);
}
unsigned char* rans_order1_encode_avx512_divide(unsigned char* in, unsigned int n, unsigned char* out,
                                                unsigned int* out_size) {
    return encode(in, n, out, out_size, kAvx512Divide);
}
unsigned char* rans_order1_encode_avx2(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size) {
    return encode(in, n, out, out_size, kAvx2);
}
unsigned char* rans_order1_encode_if_avx512(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                                            OrderTest test, OrderVerdict* verdict, int* stream_form) {
    return encode(in, n, out, out_size, avx512_form(), test, verdict, stream_form);
}
unsigned char* rans_order1_encode_if_avx2(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                                          OrderTest test, OrderVerdict* verdict, int* stream_form) {
    return encode(in, n, out, out_size, kAvx2, test, verdict, stream_form);
}

#else  // the encoder's vector forms are x86-64's; elsewhere the scalar form or the library encodes

bool rans_order1_encoder_avx512_available() { return false; }
bool rans_order1_encoder_avx2_available() { return false; }
unsigned char* rans_order1_encode_avx512(unsigned char*, unsigned int, unsigned char*, unsigned int*) { return nullptr; }
unsigned char* rans_order1_encode_avx512_divide(unsigned char*, unsigned int, unsigned char*, unsigned int*) { return nullptr; }
unsigned char* rans_order1_encode_avx2(unsigned char*, unsigned int, unsigned char*, unsigned int*) { return nullptr; }
unsigned char* rans_order1_encode_if_avx512(unsigned char*, unsigned int, unsigned char*, unsigned int*, OrderTest,
                                            OrderVerdict*, int*) {
    return nullptr;
}
unsigned char* rans_order1_encode_if_avx2(unsigned char*, unsigned int, unsigned char*, unsigned int*, OrderTest,
                                          OrderVerdict*, int*) {
    return nullptr;
}

#endif
}  // namespace stz
