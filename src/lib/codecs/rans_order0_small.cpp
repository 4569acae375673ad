// htscodecs' order-0 4x16 stream (rans_order0_small.hpp), coded by statezip.
//
// Why: the library's wrapper codes every plane under 1,001 bytes as such a stream, and the default
// cuts a small quantised cache into dozens of them (a V section of 512 q5_0 blocks is 22 planes of
// 512 bytes); the library's coder sets up per call what such a plane does not need: its encoder
// counts into eight histograms and prepares all 256 symbols, its decoder fills 4,096 slots one at
// a time, three stores each. perf on the hd32 caches of the corpus: 5-6 us a call either way,
// 15 % of a q5_0 cache's compression (31 calls) and 8 % of a q8_0 sequence's decompression.
// Here the decoder fills its slots a vector at a time (the order-1 rows' fill), and the encoder
// prepares the symbols present only, with the order-1 encoder's rounding and reciprocals.
//
// The body (htscodecs' rANS_static4x16pr.c, order 0; the CRAM 3.1 codecs):
//   table   the order-0 table of rans_symbol_list.hpp: counts normalised to a power of two up to
//           4,096 (the library's rounding: rans_encoder_parts' normalise), scaled up to 4,096 to code
//   states  4 u32, little-endian, each at least 2^15
//   words   16-bit, little-endian: byte i is decoded by state i mod 4, which then takes the next
//           word while it is below 2^15 (and two bytes remain)
// The encoder codes the bytes last to first, writing the words downwards.
#include "rans_order0_small.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

#include "../base/bytes.hpp"
#include "rans_encoder_parts.hpp"
#include "rans_symbol_list.hpp"

namespace stz {
namespace {

constexpr int kShift = 12;
constexpr uint32_t kTotal = 1u << kShift, kSlotMask = kTotal - 1;
constexpr uint32_t kStateLow = order1::kStateLow;
constexpr int kStates = 4;

// One step of a state: its symbol out, the state advanced (slot entries as order-1 rows:
// (frequency - 1) << 20 | the slot's offset within its symbol << 8 | the symbol).
inline uint8_t step(const uint32_t* table, uint32_t& x) {
    const uint32_t e = table[x & kSlotMask];
    x = ((e >> (kShift + 8)) + 1) * (x >> kShift) + ((e >> 8) & kSlotMask);
    return static_cast<uint8_t>(e);
}

}  // namespace

bool rans_order0_small_encode(const uint8_t* in, size_t n, uint8_t* out, size_t* out_size, const uint32_t* counts) {
    if (n == 0 || n > (1u << 30)) return false;
    uint32_t own[256];  // (zeroed only where the bytes are counted here)
    const uint32_t* count = counts;
    if (!count) {
        std::fill(std::begin(own), std::end(own), 0u);
        for (size_t i = 0; i < n; ++i) ++own[in[i]];
        count = own;
    }
    std::array<uint8_t, 3 * 256 + 1> table;
    uint32_t entry[256];
    const auto table_size = static_cast<size_t>(
        rans_enc::put_order0_table(count, static_cast<uint32_t>(n), table.data(), entry) - table.data());
    if (*out_size < table_size + 4 * kStates) return false;

    // The words downwards from the end of the room, above the table and the states (then below
    // the words); byte i by state i mod 4, the last byte first.
    const uint8_t* const lowest = out + table_size + 4 * kStates;
    uint8_t* w = out + *out_size;
    const uint32_t* const rcp = rans_enc::reciprocals().rcp.data();
    auto put = [&](uint32_t& x, uint8_t byte) { return rans_enc::put_symbol_within<kShift>(x, w, entry[byte], rcp, lowest); };
    uint32_t x[kStates] = {kStateLow, kStateLow, kStateLow, kStateLow};
    size_t i = n;
    for (; i % kStates; --i)
        if (!put(x[(i - 1) % kStates], in[i - 1])) return false;
    uint32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    for (; i; i -= kStates)
        if (!put(x3, in[i - 1]) || !put(x2, in[i - 2]) || !put(x1, in[i - 3]) || !put(x0, in[i - 4])) return false;
    const uint32_t final_states[kStates] = {x0, x1, x2, x3};
    rans_enc::put_states(w, final_states, kStates);
    const size_t coded = static_cast<size_t>(out + *out_size - w);
    std::memcpy(out, table.data(), table_size);
    std::memmove(out + table_size, w, coded);
    *out_size = table_size + coded;
    return true;
}

bool rans_order0_small_decode(const uint8_t* in, size_t in_size, uint8_t* out, size_t n, order1::FillFn fill) {
    const uint8_t* p = in;
    const uint8_t* const end = in + in_size;
    std::array<uint8_t, 256> sym;
    std::array<uint32_t, 256> freq;
    int k = 0;
    if (!read_order0_table(p, end, sym, freq, k) || end - p < 4 * kStates) return false;
    uint32_t state[kStates];
    for (uint32_t& x : state) {
        x = load_le<uint32_t>(p);
        if (x < kStateLow) return false;
        p += 4;
    }
    if (k == 1) {  // every slot is the one symbol, whose steps take no word
        std::memset(out, sym[0], n);
        return true;
    }
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
