// htscodecs' order-0 4x16 stream (rans_order0_small.hpp), coded by statezip.
//
// Why: the library's wrapper codes every plane under 1,001 bytes as such a stream, and the default
// cuts a small quantised cache into dozens of them (a V section of 512 q5_0 blocks is 22 planes of
// 512 bytes); the library's coder sets up per call what such a plane does not need: its encoder
// counts into eight histograms and prepares all 256 symbols, its decoder fills 4,096 slots one at
// a time, three stores each. perf on the hd32 caches of the corpus: 5-6 us a call either way,
// 15 % of a q5_0 cache's compression (31 calls) and 8 % of a q8_0 sequence's decompression.
// Here the decoder fills its slots a vector at a time (the order-1 rows' fill), and the encoder
// prepares the symbols present only.
//
// The body (htscodecs' rANS_static4x16pr.c, order 0; the CRAM 3.1 codecs):
//   table   the order-0 table of rans_symbol_list.hpp: counts normalised to a power of two up to
//           4,096 (the library's rounding, below), scaled up to 4,096 to code
//   states  4 u32, little-endian, each at least 2^15
//   words   16-bit, little-endian: byte i is decoded by state i mod 4, which then takes the next
//           word while it is below 2^15 (and two bytes remain)
// The encoder codes the bytes last to first, writing the words downwards.
#include "rans_order0_small.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "rans_order1_lanes.hpp"
#include "rans_symbol_list.hpp"

namespace stz {
namespace {

constexpr int kShift = 12;
constexpr uint32_t kTotal = 1u << kShift, kSlotMask = kTotal - 1;
constexpr uint32_t kStateLow = order1::kStateLow;
constexpr int kStates = 4;

// The library's rounding of counts (summing to `size`) to `total` (its normalise_freq), so that a
// plane codes to the bytes the library's encoder writes: each count scaled and rounded down (at
// least 1), the difference given to or taken from the largest count; where that count cannot give
// it (less than twice the excess), the whole rounding once more on the rounded counts, then the
// largest set to 1 and the rest of the excess taken from the others in symbol order.
void normalise_counts(std::array<uint32_t, 256>& f, uint32_t size, uint32_t total) {
    for (int pass = 0;; ++pass) {
        const uint64_t scale = (uint64_t(total) << 31) / size + (1u << 30) / size;
        uint32_t sum = 0, largest = 0;
        int top = 0;
        for (int j = 0; j < 256; ++j) {
            if (!f[j]) continue;
            if (largest < f[j]) largest = f[j], top = j;
            f[j] = std::max<uint32_t>(static_cast<uint32_t>((f[j] * scale) >> 31), 1);
            sum += f[j];
        }
        int64_t adjust = int64_t(total) - sum;
        if (adjust >= 0) {
            f[top] += static_cast<uint32_t>(adjust);
            return;
        }
        const int64_t excess = -adjust;
        if (f[top] > excess && (pass == 1 || f[top] / 2 >= excess)) {
            f[top] -= static_cast<uint32_t>(excess);
            return;
        }
        if (pass == 0) {
            size = sum;
            continue;
        }
        adjust += f[top] - 1;
        f[top] = 1;
        for (int j = 0; adjust && j < 256; ++j) {
            if (f[j] < 2) continue;
            const int64_t take = f[j] > -adjust ? adjust : 1 - int64_t(f[j]);
            f[j] = static_cast<uint32_t>(f[j] + take);
            adjust -= take;
        }
        return;
    }
}

// The table: the symbol list (a symbol one above the one before followed by the count of further
// consecutive symbols; a 0 ends it), then each symbol's count. At most 3 x 256 + 1 bytes.
size_t write_table(uint8_t* out, const std::array<uint32_t, 256>& f) {
    uint8_t* p = out;
    for (int j = 0, run = 0; j < 256; ++j) {
        if (!f[j]) continue;
        if (run) {
            --run;
            continue;
        }
        *p++ = static_cast<uint8_t>(j);
        if (j && f[j - 1]) {
            int next = j + 1;
            while (next < 256 && f[next]) ++next;
            run = next - (j + 1);
            *p++ = static_cast<uint8_t>(run);
        }
    }
    *p++ = 0;
    for (int j = 0; j < 256; ++j)
        if (f[j]) p += put_uint7(p, f[j]);
    return static_cast<size_t>(p - out);
}

void put_u32(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v), p[1] = static_cast<uint8_t>(v >> 8);
    p[2] = static_cast<uint8_t>(v >> 16), p[3] = static_cast<uint8_t>(v >> 24);
}

order1::FillFn fill_for_cpu() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return order1::fill_row_avx512;
    if (__builtin_cpu_supports("avx2")) return order1::fill_row_avx2;
    return order1::fill_row_scalar;
}

// One step of a state: its symbol out, the state advanced (slot entries as order-1 rows:
// (frequency - 1) << 20 | the slot's offset within its symbol << 8 | the symbol).
inline uint8_t step(const uint32_t* table, uint32_t& x) {
    const uint32_t e = table[x & kSlotMask];
    x = ((e >> (kShift + 8)) + 1) * (x >> kShift) + ((e >> 8) & kSlotMask);
    return static_cast<uint8_t>(e);
}

}  // namespace

bool rans_order0_small_encode(const uint8_t* in, size_t n, uint8_t* out, size_t* out_size) {
    if (n == 0 || n > (1u << 30)) return false;
    std::array<uint32_t, 256> f{};
    for (size_t i = 0; i < n; ++i) ++f[in[i]];
    uint32_t to = 1;
    while (to < n && to < kTotal) to <<= 1;
    normalise_counts(f, static_cast<uint32_t>(n), to);
    std::array<uint8_t, 3 * 256 + 1> table;
    const size_t table_size = write_table(table.data(), f);
    if (*out_size < table_size + 4 * kStates) return false;
    int up = 0;
    while ((to << up) < kTotal) ++up;
    std::array<uint32_t, 256> start, freq;
    for (uint32_t j = 0, at = 0; j < 256; ++j) start[j] = at, freq[j] = f[j] << up, at += freq[j];

    // The words downwards from the end of the room, above the table and the states (then below
    // the words).
    uint8_t* const lowest = out + table_size + 4 * kStates;
    uint8_t* p = out + *out_size;
    uint32_t state[kStates] = {kStateLow, kStateLow, kStateLow, kStateLow};
    for (size_t i = n; i-- > 0;) {
        uint32_t& x = state[i % kStates];
        const uint32_t fr = freq[in[i]];
        if (x >= fr << (31 - kShift)) {  // the state would pass 2^31: its low word out first
            if (p - lowest < 2) return false;
            p -= 2, p[0] = static_cast<uint8_t>(x), p[1] = static_cast<uint8_t>(x >> 8);
            x >>= 16;
        }
        x = ((x / fr) << kShift) + x % fr + start[in[i]];
    }
    for (int z = kStates; z-- > 0;) p -= 4, put_u32(p, state[z]);
    const size_t coded = static_cast<size_t>(out + *out_size - p);
    std::memcpy(out, table.data(), table_size);
    std::memmove(out + table_size, p, coded);
    *out_size = table_size + coded;
    return true;
}

bool rans_order0_small_decode(const uint8_t* in, size_t in_size, uint8_t* out, size_t n) {
    const uint8_t* p = in;
    const uint8_t* const end = in + in_size;
    std::array<uint8_t, 256> sym;
    std::array<uint32_t, 256> freq;
    int k = 0;
    if (!read_order0_table(p, end, sym, freq, k) || end - p < 4 * kStates) return false;
    uint32_t state[kStates];
    for (uint32_t& x : state) {
        x = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
        if (x < kStateLow) return false;
        p += 4;
    }
    if (k == 1) {  // every slot is the one symbol, whose steps take no word
        std::memset(out, sym[0], n);
        return true;
    }
    static const order1::FillFn fill = fill_for_cpu();
    alignas(64) uint32_t table[kTotal + order1::kFillOverrun];
    fill(table, sym.data(), freq.data(), k, kShift);
    size_t i = 0;
    // Four steps take at most four words: while eight bytes remain, no state's word is checked.
    for (; i + kStates <= n && end - p >= 2 * kStates; i += kStates)
        for (int z = 0; z < kStates; ++z) {
            uint32_t& x = state[z];
            out[i + z] = step(table, x);
            const bool take = x < kStateLow;
            const uint32_t word = uint32_t(p[0]) | uint32_t(p[1]) << 8;
            x = take ? x << 16 | word : x;
            p += take ? 2 : 0;
        }
    for (; i < n; ++i) {
        uint32_t& x = state[i % kStates];
        out[i] = step(table, x);
        if (x < kStateLow && end - p >= 2) x = x << 16 | uint32_t(p[0]) | uint32_t(p[1]) << 8, p += 2;
    }
    return true;
}

}  // namespace stz
