// rans: static order-0 / order-1 rANS (htscodecs' rANS 4x16 with 32-way interleave, "X32"),
// for byte planes whose histogram is skewed (the sign/exponent byte of floats, quant scales).
// Output: a mode byte (0 = stored, 1 = htscodecs stream), then the bytes. An order-1 stream may
// have grouped contexts (kRansOrderGrouped, rans_order1_decoder.hpp), a large order-0 plane be in
// two halves (rans_order0_halves.hpp): statezip's own forms of them.
//
// htscodecs 1.3.0 (Debian 12) has defects fixed upstream later; each is guarded here:
//  - SSE4 order-1 decoder mis-decodes valid streams: the SSE4 kernels are never allowed
//    (rans_init_cpu_once, before any call);
//  - AVX2 order-0 decoder reads 8 bytes past its input, AVX-512 order-1 encoder reads 1 byte
//    before it: every buffer handed to the library has kPad bytes of slack on both sides;
//  - divide by zero on empty input: inputs under kMinCoded bytes are stored, never coded;
//  - a decoder trusts its stream: only the flags this encoder writes are accepted, and the
//    returned pointer and size are checked exactly.
#include "rans_codec.hpp"

#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <cmath>
#include <vector>
#include <mutex>

#include "codec_impls.hpp"
#include "klogk.hpp"
#include "symbol_set.hpp"

namespace stz {

int rans_allowed_cpu_mask() {
    return RANS_CPU_ENC_AVX2 | RANS_CPU_ENC_AVX512 | RANS_CPU_ENC_NEON | RANS_CPU_DEC_AVX2 | RANS_CPU_DEC_AVX512 |
           RANS_CPU_DEC_NEON;
}

void rans_init_cpu_once() {
    static std::once_flag once;
    std::call_once(once, [] { rans_select_cpu(rans_allowed_cpu_mask()); });
}

namespace {

constexpr size_t kPad = 64;           // slack before and after every buffer the library touches
constexpr size_t kMinCoded = 64;      // below this, table overhead alone exceeds any gain: store
constexpr size_t kMinOrder1 = 8192;   // order-1 tables cost more than they save below ~8 KB
constexpr uint8_t kModeStored = 0, kModeRans = 1;
// A plane coded at order 0 whose estimate (its order-0 entropy, before the table's cost of
// another 0.5-2 %) is at least this share of its bytes is stored: coding it saved at most ~2 % of
// the plane for as much time, both ways, as the rest of its file took (a random-weight model's
// 4-bit quants, whose bytes are nearly uniform: the iq4_nl cache of the corpus compresses 2.1x
// and decompresses 1.7x faster for 1.1 % more bytes, the q4_1 one 1.8x and 1.25x for 1.3 %; zstd
// likewise stores literals that Huffman would barely shrink). The corpus's 82 files: 36 KB more
// (0.04 %), all of it random-weight 4-bit caches and f32 mantissa planes. Planes that order 1 may
// code keep the gate of the tables' cost alone: their order-0 estimate says little of what order
// 1 saves (the synthetic q8_0 sessions of bench/scale.sh: 2-3 % at order 0, 12 % at order 1).
constexpr double kStoredFromOrder0 = 0.965, kStoredFrom = 0.98;
constexpr int kStreamFlagsAllowed = 1 | RANS_ORDER_X32 | RANS_ORDER_CAT | kRansOrderGrouped;

// The sampling step of an estimate over n bytes: every byte up to `full`, every 2nd up to
// `half`, every 4th up to 4 * `samples`, past that about `samples` bytes. A step above 4 is
// odd, so that a plane whose rows are a power of two long is still sampled in every column.
// (The estimates' decisions on every corpus file are the same as counting at the steps of
// before, 1 and 4, which cost 6-10 % of the default's compression.)
size_t sample_step(size_t n, size_t full, size_t half, size_t samples) {
    if (n <= full) return 1;
    if (n <= half) return 2;
    return std::max<size_t>(4, (n / samples) | 1);
}

// The counts of the bytes of `in` at first, first + step, ... into count[256] (returns how many):
// four histograms in turn (a value repeated within a few bytes does not wait on its own count),
// then summed.
size_t count_sampled(ByteSpan in, size_t first, size_t step, uint32_t* count) {
    uint32_t h[4][256] = {};
    size_t i = first, n = 0;
    for (; i + 3 * step < in.size(); i += 4 * step, n += 4)
        ++h[0][in[i]], ++h[1][in[i + step]], ++h[2][in[i + 2 * step]], ++h[3][in[i + 3 * step]];
    for (; i < in.size(); i += step, ++n) ++h[0][in[i]];
    for (int s = 0; s < 256; ++s) count[s] = h[0][s] + h[1][s] + h[2][s] + h[3][s];
    return n;
}

// Order-0 entropy, in bits, of n bytes with these counts: sum c log2(n / c) = n log2 n - sum c
// log2 c from the table (log2 itself, 256 calls a plane, was 3-4 % of the default's time over the
// corpus's f16 files, perf), the values present in ascending order.
double order0_bits(const uint32_t* count, size_t n) {
    const double* const table = klogk_table();
    double bits = klogk(table, static_cast<uint32_t>(n));
    SymbolSet::of_nonzero(count).each([&](unsigned s) { bits -= klogk(table, count[s]); });
    return bits;
}

// Order-0 entropy, in bits, of the bytes of `in` at first, first + step, ... (`n` gets how many).
double sampled_bits(ByteSpan in, size_t first, size_t step, size_t& n) {
    uint32_t count[256];
    n = count_sampled(in, first, step, count);
    return order0_bits(count, n);
}

// Whether a plane at an order its caller decided is worth coding: its order-0 entropy estimate
// (no table cost) below `stored_from` of its bytes, so that near-random planes are stored without
// spending the coder's time on them. A sample of the bytes past 16 KB (sample_step), about 16 K of
// them past 64 KB: there each sampled byte is a cache line of its own, so the sample's size is its
// cost in memory reads (64 K read a 4 MB plane whole: the random-weight q8_0 caches compress 2.3 %
// faster with 16 K, with the same decisions on every corpus file). `count` gets the counts of
// every byte where the sample is the whole plane (up to 16 KB), else `exact` is false.
bool worth_coding(ByteSpan in, double stored_from, uint32_t* count, bool& exact) {
    const size_t step = sample_step(in.size(), 16u << 10, 64u << 10, 16u << 10);
    const size_t n = count_sampled(in, 0, step, count);
    exact = step == 1;
    return order0_bits(count, n) / 8 < stored_from * static_cast<double>(n);
}

// Whether order-1 is expected to beat order-0 on `in` by at least 1 %, tables included: the
// order-1 table (a frequency list per context) costs far more than order-0's, and on planes
// whose bytes do not depend on the previous one (quants of a model without channel structure)
// order-1 loses 2-3 %. Entropies from the pairs at sample_step's positions (every pair up to
// 32 KB; a first, smaller sample on large planes, see choose_order), table sizes from the
// distinct symbols and pairs seen, ~0.8 bytes each (htscodecs
// packs its tables; 0.6-1.0 all pick the smaller order on the corpus's q8_0 and q4_0 quants).
// Order-0 and order-1 costs of `in` from the pairs at every step-th position: the coded bytes
// (entropy scaled to the whole plane) and the tables' sizes in entries, ~0.8 bytes each.
struct OrderCosts {
    double coded0 = 0, coded1 = 0;
    size_t symbols = 0, pairs_seen = 0, contexts = 0;
    double scale = 1;  // bytes of the plane per sampled pair
    double cost0() const { return coded0 + 0.8 * static_cast<double>(symbols); }
    // `order1_table`: the order-1 table's size in distinct pairs; 0 = the pairs seen.
    double cost1(size_t order1_table = 0) const {
        return coded1 + 0.8 * static_cast<double>(order1_table ? order1_table : pairs_seen);
    }
    // The same with the entropies corrected for the sample's size (kMillerMadowBits): for a
    // sample of pairs spread over many contexts the undercount is most of order-1's apparent
    // gain (4 MB of independent bytes of ~200 values: 16 K pairs made order-1 look 13 % smaller).
    double corrected0() const { return cost0() + scale * kMillerMadowBits * static_cast<double>(symbols ? symbols - 1 : 0) / 8; }
    double corrected1(size_t order1_table = 0) const {
        return cost1(order1_table) + scale * kMillerMadowBits * static_cast<double>(pairs_seen - contexts) / 8;
    }
};
// The pairs (byte before, byte) at positions 1, 1 + step, ... of `bytes` counted into `pairs`,
// each pair's first sighting listed in `seen`; returns how many are listed. A function of its
// own, with nothing else live: inlined into order_costs, GCC kept the list's length and the
// pointers on the stack, and each pair waited on a store and reload of the length (order_costs
// 14.4 % -> 11.9 % of the default's compression of v040's 211 KB f16 file, perf; what is left is
// the counters' own increments, which repeat within a few pairs on a sign/exponent plane).
__attribute__((noinline)) size_t count_sampled_pairs(const uint8_t* __restrict bytes, size_t size, size_t step,
                                                     uint32_t* __restrict pairs, uint16_t* __restrict seen) {
    size_t n_seen = 0;
    for (size_t i = 1; i < size; i += step) {
        const uint16_t pair = static_cast<uint16_t>(bytes[i - 1] << 8 | bytes[i]);
        const uint32_t before = pairs[pair]++;
        seen[n_seen] = pair;
        n_seen += before == 0;
    }
    return n_seen;
}

OrderCosts order_costs(ByteSpan in, size_t step) {
    // The pair counts live per thread; only the pairs seen are visited and cleared after use:
    // zeroing and scanning all 65536 per call cost more than counting a small plane. Raw
    // arrays, not vectors: the counting loop then keeps its pointers in registers (a vector's
    // push_back may write anywhere as far as the compiler knows), and a pair's first sighting
    // is recorded without a branch (written always, kept only when its count was 0; one slot
    // more than there are pairs for that last write).
    struct PairTable {
        uint32_t pairs[256 * 256];  // zero between calls
        uint16_t seen[256 * 256 + 1];
    };
    thread_local const auto table_mem = make_large_table<PairTable>();
    uint32_t* const pairs = table_mem->pairs;
    uint16_t* const seen = table_mem->seen;
    uint32_t single[256] = {}, context[256] = {};
    const size_t n = in.size() > 1 ? (in.size() - 2) / step + 1 : 0;  // pairs counted
    const size_t n_seen = count_sampled_pairs(in.data(), in.size(), step, pairs, seen);
    // The symbol and context counts are the pair counts summed (the same integers as counting
    // them per sample, at a fraction of the cost).
    for (size_t k = 0; k < n_seen; ++k) single[seen[k] & 0xff] += pairs[seen[k]], context[seen[k] >> 8] += pairs[seen[k]];
    // Entropy of n symbols with counts k: sum k log2(n / k) = n log2 n - sum k log2 k.
    const double* const table = klogk_table();
    double h0 = klogk(table, static_cast<uint32_t>(n)), h1 = 0;
    size_t syms = 0, contexts = 0;
    for (int s = 0; s < 256; ++s) {
        if (single[s]) h0 -= klogk(table, single[s]), ++syms;
        if (context[s]) h1 += klogk(table, context[s]), ++contexts;
    }
    for (size_t k = 0; k < n_seen; ++k) h1 -= klogk(table, pairs[seen[k]]), pairs[seen[k]] = 0;
    const double scale = static_cast<double>(in.size()) / std::max<size_t>(n, 1);  // bytes per sampled pair
    return {h0 / 8 * scale, h1 / 8 * scale, syms, n_seen, contexts, scale};
}

// Distinct byte values of `in` (all of it: a sample could miss a rare one).
size_t distinct_bytes(ByteSpan in) {
    uint8_t used[4][256] = {};
    size_t i = 0;
    for (; i + 4 <= in.size(); i += 4) used[0][in[i]] = used[1][in[i + 1]] = used[2][in[i + 2]] = used[3][in[i + 3]] = 1;
    for (; i < in.size(); ++i) used[0][in[i]] = 1;
    size_t k = 0;
    for (int s = 0; s < 256; ++s) k += (used[0][s] | used[1][s] | used[2][s] | used[3][s]);
    return k;
}

constexpr size_t kMaxSampledPairs = size_t{1} << 14;

// The same choice from every pair of the plane (the order-1 encoder's own counts, PairCounts):
// choose_order's tests on the counts' entropies, which need no correction for a sample's size.
OrderVerdict order_from_counts(const PairCounts& c) {
    const double coded0 = c.bits0 / 8, coded1 = c.bits1 / 8;
    if (coded0 >= kStoredFrom * static_cast<double>(c.bytes)) return OrderVerdict::Store;
    const double cost0 = coded0 + 0.8 * c.symbols, cost1 = coded1 + 0.8 * c.pairs;
    return cost1 < 0.99 * cost0 ? OrderVerdict::Order1 : OrderVerdict::Order0;
}

// The order-0 side of the first estimate choose_order makes: whether the plane is worth coding
// at all (what worth_coding asks of planes coded at a fixed order). Its coded size is
// order_costs(in, step).coded0, from the bytes at the same positions (the sampled pairs' second
// bytes) summed in the same order: the same double, at a fraction of the cost of counting
// pairs. A plane not worth coding (a scale's near-random low byte) is stored without its pairs
// counted; the decision is the one order_costs' counts gave.
bool worth_coding_sampled(ByteSpan in, size_t step) {
    size_t n = 0;
    const double h0 = sampled_bits(in, 1, step, n);
    const double coded0 = h0 / 8 * (static_cast<double>(in.size()) / std::max<size_t>(n, 1));
    return coded0 < kStoredFrom * static_cast<double>(in.size());
}

// The step of the first sample choose_order takes of a plane: every kMaxSampledPairs-th pair of
// a large one, else its full estimate's step.
size_t first_sample_step(size_t n) {
    return n > 2 * kMaxSampledPairs ? n / kMaxSampledPairs : sample_step(n, 32u << 10, 256u << 10, 128u << 10);
}

// Whether a plane is worth coding at all, on that first sample: asked before any order is
// weighed, so that a near-random plane (a scale's low byte) is stored without its pairs counted.
bool worth_coding_first(ByteSpan in) { return worth_coding_sampled(in, first_sample_step(in.size())); }

// The order of a plane worth coding (worth_coding_first), from samples.
OrderVerdict choose_order(ByteSpan in) {
    // Large planes first ask a sample of kMaxSampledPairs pairs whether order-1 wins clearly
    // (by 5 %) even with the largest table the plane's byte values allow (every pair of them):
    // the sign/exponent planes of floats (a few dozen values, order-1 15-20 % smaller) are
    // then decided at a fraction of the cost (counting every pair of a 160 KB plane was 18 %
    // of a small bf16 file's compression). A sample alone misjudges the table (it sees fewer
    // distinct pairs than there are), so anything less clear gets the full estimate: the
    // same decisions as before on the corpus. (16 K pairs, not 64 K: the same decisions on
    // every corpus file, and 4 % off the default's compression time over the corpus folder.)
    const auto order = [](bool order1) { return order1 ? OrderVerdict::Order1 : OrderVerdict::Order0; };
    const size_t full_step = sample_step(in.size(), 32u << 10, 256u << 10, 128u << 10);
    if (in.size() > 2 * kMaxSampledPairs) {
        const size_t quick_step = first_sample_step(in.size());
        const OrderCosts quick = order_costs(in, quick_step);
        // Only a sample dense in its pairs (8 or more a pair) can judge order 1 at a glance:
        // sparser, its entropies are off by more than the correction makes good. The table of
        // every pair of bytes first: on a plane of megabytes it still wins, and the pass over
        // every byte that counts the values is not needed.
        if (quick.pairs_seen * 8 <= kMaxSampledPairs) {
            if (quick.corrected1(256 * 256) < 0.95 * quick.corrected0()) return OrderVerdict::Order1;
            const size_t values = distinct_bytes(in);
            if (quick.corrected1(values * values) < 0.95 * quick.corrected0()) return OrderVerdict::Order1;
        }
        // Planes of 32-48 KB are sampled at the same step both times: the counts are these.
        if (quick_step == full_step) return order(quick.corrected1() < 0.99 * quick.corrected0());
        const OrderCosts full = order_costs(in, full_step);
        return order(full.corrected1() < 0.99 * full.corrected0());
    }
    const OrderCosts full = order_costs(in, full_step);
    return order(full.corrected1() < 0.99 * full.corrected0());
}

// Room for n bytes in `buf` (reused per thread) with kPad bytes of slack on both sides. Only the
// slack is zeroed (the library reads it at most, never uses it; the rest is written before it is
// read). Bytes: a plane-sized buffer is a kept block (large_buffers.hpp), whose pages are there,
// where a zeroed new[] of each larger size faulted every page in again.
uint8_t* padded(Bytes& buf, size_t n) {
    if (buf.size() < n + 2 * kPad) {
        Bytes larger(n + 2 * kPad);
        std::memset(larger.data(), 0, kPad);
        std::memset(larger.data() + kPad + n, 0, kPad);
        buf.swap(larger);
    }
    return buf.data() + kPad;
}

// The bytes for the library to read (it reads past its input, before it on one encoder): `in`
// where it lies if kPad bytes around it may be read (`slack`), else a copy in a padded buffer
// kept per thread. The pointer is non-const for the library's signatures; it only reads.
uint8_t* library_input(ByteSpan in, bool slack) {
    if (slack) return const_cast<uint8_t*>(in.data());
    thread_local Bytes copy;
    uint8_t* p = padded(copy, in.size());
    std::memcpy(p, in.data(), in.size());
    return p;
}

class RansCodec final : public Codec {
public:
    uint8_t id() const override { return 12; }
    std::string_view name() const override { return "rans"; }
    // Argument: the order, 0 or 1 (default 1). Parameter byte: order | RANS_ORDER_X32.
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (args.size() > 1) throw Error("rans takes one argument: the order (0 or 1)");
        int order = args.empty() ? 1 : parse_int_arg(args[0], 0, 1, "rans");
        return Bytes{static_cast<uint8_t>(order | RANS_ORDER_X32)};
    }
    void check_params(ByteSpan params) const override { (void)flags_of(params); }
    std::vector<std::string> sample_specs() const override { return {"rans:0", "rans:1"}; }
    static int flags_of(ByteSpan params) {
        if (params.size() != 1 || (params[0] != RANS_ORDER_X32 && params[0] != (RANS_ORDER_X32 | 1)))
            throw Error("rans: bad parameters");
        return params[0];
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override { encode_from(in, params, out, false); }
    // `in` has kSlack >= kPad readable bytes on both sides: coded where it lies.
    void encode_in_slack(ByteSpan in, ByteSpan params, Bytes& out) const override {
        static_assert(kSlack >= kPad);
        encode_from(in, params, out, true);
    }
    // `estimate`: whether order 1 (where the parameters allow it) is to be measured first;
    // else it is taken as the caller decided.
    static void encode_from(ByteSpan in, ByteSpan params, Bytes& out, bool in_slack, bool estimate = true) {
        int flags = flags_of(params);
        if (in.size() < kMinCoded || in.size() > INT_MAX / 2) return store(in, out);
        rans_init_cpu_once();
        uint32_t counts[256];
        bool counted = false;
        if ((flags & 1) && estimate && in.size() >= kMinOrder1) {
            // Up to kRansExactOrderBytes the order comes from every pair of the plane
            // (order_from_counts): statezip's order-1 encoder counts them before it writes anyway
            // (where the CPU lacks that encoder they are counted for the choice alone: the .stz
            // must not depend on the CPU); larger planes are judged on a sample (choose_order).
            // Whether the plane is worth coding at all is asked first, of a sample.
            if (!worth_coding_first(in)) return store(in, out);
            OrderVerdict choice = OrderVerdict::Order1;
            switch (in.size() <= kRansExactOrderBytes ? encode_order1_measured(in, in_slack, out, choice)
                                                      : MeasuredEncode::NotHere) {
                case MeasuredEncode::Written: return;
                case MeasuredEncode::Failed: return store(in, out);
                case MeasuredEncode::Declined: break;
                case MeasuredEncode::NotHere: choice = choose_order(in); break;
            }
            if (choice == OrderVerdict::Store) return store(in, out);
            if (choice == OrderVerdict::Order0) flags &= ~1;
        } else {
            if (in.size() < kMinOrder1) flags &= ~1;
            if (!worth_coding(in, flags & 1 ? kStoredFrom : kStoredFromOrder0, counts, counted)) return store(in, out);
        }
        uint8_t* const src = library_input(in, in_slack);
        // (A small order-0 plane's stream takes the estimate's counts, where they are of every
        // byte, instead of counting the plane again.)
        const uint32_t* const order0_counts = counted && !(flags & 1) ? counts : nullptr;
        const bool coded = append_stream(in, flags, out, [&](uint8_t* dst, unsigned* written) {
            return rans_encode_stream(src, static_cast<unsigned>(in.size()), dst, written, flags, order0_counts);
        });
        if (!coded) store(in, out);
    }
    // The order-1 stream after `out`'s mode byte, if order_from_counts says order 1 on every pair
    // of `in` (`choice` gets what it said): `out` grows only when the stream is written.
    static MeasuredEncode encode_order1_measured(ByteSpan in, bool in_slack, Bytes& out, OrderVerdict& choice) {
        MeasuredEncode r = MeasuredEncode::NotHere;
        const bool written = append_stream(in, RANS_ORDER_X32 | 1, out, [&](uint8_t* dst, unsigned* size) {
            r = rans_encode_order1_if(library_input(in, in_slack), static_cast<unsigned>(in.size()), dst, size,
                                      order_from_counts, choice);
            return r == MeasuredEncode::Written;
        });
        return r == MeasuredEncode::Written && !written ? MeasuredEncode::Failed : r;
    }
    // The mode byte and the stream `write(dst, &written)` puts at dst, straight into `out` (kPad
    // bytes of slack after it, cut off after), not through a buffer of its own and a copy. False,
    // and `out` as it was, unless a stream smaller than `in` was written.
    template <class Write>
    static bool append_stream(ByteSpan in, int flags, Bytes& out, Write&& write) {
        const unsigned bound = rans_compress_bound_4x16(static_cast<unsigned>(in.size()), flags);
        const size_t base = out.size();
        out.resize(base + 1 + bound + kPad);
        out[base] = kModeRans;
        unsigned written = bound;
        if (!write(out.data() + base + 1, &written) || written == 0 || written > bound || written >= in.size()) {
            out.resize(base);
            return false;
        }
        out.resize(base + 1 + written);
        return true;
    }
    static void store(ByteSpan in, Bytes& out) {
        out.push_back(kModeStored);
        append_bytes(out, in);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        flags_of(params);
        if (in.empty()) throw Error("rans: empty block");
        // Sizes checked before allocating.
        if (in[0] == kModeRans) check_coded(in.subspan(1), out_size);
        else if (in[0] == kModeStored && in.size() - 1 != out_size) throw Error("rans: stored size does not match");
        if (in[0] != kModeRans) return decode_appending(in, params, out_size, out);
        // Into `out` itself, with kPad bytes of slack after (cut off after): no copy out of a
        // buffer of the library's own (decode_into, whose caller's memory has no slack, copies).
        const size_t base = out.size();
        out.resize(base + out_size + kPad);
        try {
            decode_coded(in.subspan(1), out_size, out.data() + base, decodes_within(in.subspan(1), out_size));
        } catch (...) {
            out.resize(base);
            throw;
        }
        out.resize(base + out_size);
    }
    // Whether a checked stream (check_coded) decodes by statezip's decoders alone (no byte read
    // outside it, none written outside the output: rans_decodes_within).
    static bool decodes_within(ByteSpan body, size_t out_size) {
        rans_init_cpu_once();
        return rans_decodes_within(body.data(), static_cast<unsigned>(body.size()), static_cast<unsigned>(out_size));
    }
    // A checked stream (check_coded) into `dst`, which has kPad bytes of slack after out_size
    // unless the stream decodes within its bounds. The stream is read where it lies when that may
    // be done (`in_place`: kPad bytes after it may be read, or it decodes within its bounds), else
    // from a padded copy (the library reads past its input: a copy of a megabyte-plane's stream
    // was 3 % of a random-weight q8_0 cache's decompression).
    static void decode_coded(ByteSpan body, size_t out_size, uint8_t* dst, bool in_place) {
        rans_init_cpu_once();
        uint8_t* const src = library_input(body, in_place);
        if (!rans_decode_stream(src, static_cast<unsigned>(body.size()), dst, static_cast<unsigned>(out_size)))
            throw Error("rans: corrupt stream");
    }
    static void check_coded(ByteSpan body, size_t out_size) {
        if (out_size < kMinCoded || out_size > INT_MAX / 2 || body.size() < 2 || body.size() >= out_size)
            throw Error("rans: bad coded size");
        if (body[0] & ~kStreamFlagsAllowed) throw Error("rans: unsupported stream flags");
    }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* out) const override {
        flags_of(params);
        if (in.empty()) throw Error("rans: empty block");
        if (const std::optional<ByteSpan> stored = rans_stored_bytes(in, out_size)) {
            if (out_size) std::memcpy(out, stored->data(), out_size);
            return;
        }
        if (in[0] != kModeRans) throw Error("rans: unknown mode");
        const ByteSpan body = in.subspan(1);
        check_coded(body, out_size);
        if (decodes_within(body, out_size)) return decode_coded(body, out_size, out, true);  // no slack needed
        thread_local Bytes dst_buf;
        uint8_t* dst = padded(dst_buf, out_size);
        decode_coded(body, out_size, dst, false);
        std::memcpy(out, dst, out_size);
    }
    // `out` (and, if in_slack, `in`) has kSlack >= kPad bytes of slack after it: no
    // padded buffer and no copy for it.
    void decode_into_slack(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* out, bool in_slack) const override {
        static_assert(kSlack >= kPad);
        flags_of(params);
        if (in.empty() || in[0] != kModeRans) return decode_into(in, params, out_size, out);
        check_coded(in.subspan(1), out_size);
        decode_coded(in.subspan(1), out_size, out, in_slack || decodes_within(in.subspan(1), out_size));
    }
    bool decodes_in_pairs(ByteSpan in, ByteSpan params, size_t out_size) const override {
        flags_of(params);
        if (in.size() < 2 || in[0] != kModeRans || out_size < kMinCoded || out_size > INT_MAX / 2) return false;
        rans_init_cpu_once();
        return rans_decodes_in_pairs(in.data() + 1, static_cast<unsigned>(in.size() - 1), static_cast<unsigned>(out_size));
    }
    void decode_pair_together(ByteSpan a, ByteSpan, size_t a_size, uint8_t* a_dst, ByteSpan b, ByteSpan, size_t b_size,
                              uint8_t* b_dst) const override {
        const ByteSpan a_body = a.subspan(1), b_body = b.subspan(1);
        check_coded(a_body, a_size), check_coded(b_body, b_size);
        if (!rans_decode_two_streams(a_body.data(), static_cast<unsigned>(a_body.size()), a_dst,
                                     static_cast<unsigned>(a_size), b_body.data(), static_cast<unsigned>(b_body.size()),
                                     b_dst, static_cast<unsigned>(b_size)))
            throw Error("rans: corrupt stream");
    }
    std::string describe(ByteSpan params) const override {
        return params.size() == 1 ? "rans:" + std::to_string(params[0] & 1) : "rans";
    }
    size_t max_encoded_size(size_t n) const override { return n + 1; }
};

}  // namespace

std::unique_ptr<Codec> make_rans_codec() { return std::make_unique<RansCodec>(); }

std::optional<ByteSpan> rans_stored_bytes(ByteSpan stage_output, size_t out_size) {
    if (stage_output.empty() || stage_output[0] != kModeStored) return std::nullopt;
    if (stage_output.size() - 1 != out_size) throw Error("rans: stored size does not match");
    return stage_output.subspan(1);
}

void rans_encode_decided(ByteSpan in, int order, Bytes& out) {
    const uint8_t params[1] = {static_cast<uint8_t>((order ? 1 : 0) | RANS_ORDER_X32)};
    RansCodec::encode_from(in, params, out, false, false);
}

}  // namespace stz
