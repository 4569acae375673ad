// The parts of statezip's encoder of htscodecs' 32-way rANS streams (rans_order1_encoder.cpp)
// that are not about order 1: htscodecs' normalisation, symbol list and order-0 table, the coding
// entries, the lanes' steps, and order 0's steps without gathers (rans_order0_encoder.cpp; an
// order-0 encoder on the gathering steps ran no faster than the library's AVX2 one).
// The coder is the 16-bit-word rANS of htscodecs' rANS_word.h: a state in
// [2^15, 2^31) gives out its low 16 bits when it reaches freq << (31 - shift), then becomes
// (state / freq) << shift | (state % freq) + start. 32 lanes; within a step the library writes
// lane 31's word highest, and at the end the 32 states, lane 0's first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../base/bytes.hpp"
#include "symbol_set.hpp"

namespace stz::rans_enc {

constexpr int kLanes = 32;
constexpr uint32_t kStateLow = 1u << 15;
constexpr int kShiftFast = 10, kShiftFull = 12;

// A symbol's (or pair's) coding entry: bias (13 bits: start, plus (1 << shift) - 1 for a
// frequency of 1), the reciprocal's shift (4 bits), the frequency (13 bits).
constexpr uint32_t kBiasMask = 0x1fff;
constexpr int kRcpShiftAt = 13;
constexpr uint32_t kRcpShiftMask = 15;
constexpr int kFreqAt = 17;
constexpr uint32_t entry_of(uint32_t start, uint32_t freq, uint32_t rcp_shift, int shift) {
    return (start + (freq == 1 ? (1u << shift) - 1 : 0)) | rcp_shift << kRcpShiftAt | freq << kFreqAt;
}
// Reciprocals per frequency (at most 1 << kShiftFull), as rANS_word.h's RansEncSymbolInit
// computes them: state / freq == (state * rcp) >> (32 + rcp_shift) for every state below 2^31.
struct Reciprocals {
    std::array<uint32_t, (1u << kShiftFull) + 1> rcp{};
    std::array<uint8_t, (1u << kShiftFull) + 1> shift{};
    Reciprocals();
};
const Reciprocals& reciprocals();

// Whether this CPU runs the AVX-512 steps (F, BW, VL, with POPCNT), the AVX2 steps (with POPCNT).
bool steps_avx512_available();
bool steps_avx2_available();

// htscodecs' symbol list of the present symbols (the form rans_order1_decoder.cpp reads).
uint8_t* put_symbol_list(uint8_t* p, const SymbolSet& present);

// The order-0 frequency table of n bytes with these counts, as htscodecs' order-0 encoders write
// it (rans_symbol_list.hpp: the counts normalised to a power of two up to 4,096), at `table`
// (room for 3 * 256 + 1 bytes; returns its end), and each present symbol's coding entry at 4,096
// (its count scaled up) in entry[symbol]. n at least 1.
uint8_t* put_order0_table(const uint32_t* count, uint32_t n, uint8_t* table, uint32_t* entry);

// htscodecs' normalise_freq over a table's nonzero counts (f, ascending symbols sym; none for a
// context that only ends the input, which then gets all of `total` on symbol 0): scaled from
// `size` to sum to `total`, the remainder put on (or, within limits, taken from) the largest;
// once more from the scaled counts if that fails, then taken from every count of 2 or more.
void normalise(uint8_t* sym, uint32_t* f, uint32_t& k, uint32_t size, uint32_t total);

// One symbol into one lane's state: the word below `w` if the state is too large for it.
template <int Shift>
inline void put_symbol(uint32_t& x, uint8_t*& w, uint32_t e, const uint32_t* rcp) {
    const uint32_t freq = e >> kFreqAt;
    if (x >= freq << (31 - Shift)) {
        w -= 2;
        const uint16_t word = static_cast<uint16_t>(x);
        std::memcpy(w, &word, 2);
        x >>= 16;
    }
    const uint32_t q = static_cast<uint32_t>((uint64_t(x) * rcp[freq]) >> (32 + ((e >> kRcpShiftAt) & kRcpShiftMask)));
    x += (e & kBiasMask) + q * ((1u << Shift) - freq);
}

// put_symbol unless the state's word would go below `lowest`: then false, nothing written.
template <int Shift>
inline bool put_symbol_within(uint32_t& x, uint8_t*& w, uint32_t e, const uint32_t* rcp, const uint8_t* lowest) {
    if (w - lowest < 2 && x >= (e >> kFreqAt) << (31 - Shift)) return false;
    put_symbol<Shift>(x, w, e, rcp);
    return true;
}

// The final states below the words, little-endian, the first lane's lowest (as every htscodecs
// stream ends its lanes).
inline void put_states(uint8_t*& w, const uint32_t* state, int lanes) {
    for (int lane = lanes - 1; lane >= 0; --lane) w -= 4, store_le<uint32_t>(w, state[lane]);
}

// Steps steps-1 .. 0 of all 32 lanes into `state` (the lanes' states) and downwards from
// `words`: step s's symbols are by_step[32 s ..], their entries entry[(previous step's symbol >>
// context_shift) << 8 | symbol] (0 before step 0). Stops early, returning false, rather than write
// below `lowest` (a step writes at most 64 bytes). Sixteen lanes at a time with AVX-512, eight with
// AVX2, one with the scalar form (the same bytes: a CPU without AVX2 writes what the others do).
using StepsFn = bool (*)(const uint8_t* by_step, size_t steps, const uint32_t* entry, uint32_t* state,
                         uint8_t*& words, const uint8_t* lowest, int context_shift);
template <int Shift>
bool steps_scalar(const uint8_t* by_step, size_t steps, const uint32_t* entry, uint32_t* state, uint8_t*& words,
                  const uint8_t* lowest, int context_shift);
// An order-0 table as byte planes: byte k of each symbol's coding entry and of its reciprocal,
// for steps_order0_vbmi (symbols absent from the plane: any value, never looked up).
struct alignas(64) Order0Planes {
    uint8_t entry[4][256];
    uint8_t rcp[4][256];
};
// Whether this CPU runs steps_order0_vbmi (AVX-512 F, BW, VBMI, with POPCNT).
bool steps_order0_vbmi_available();

#if defined(__x86_64__)
// Steps 2 pairs - 1 .. 0 of an order-0 stream's 32 lanes, step s coding in[32 s, 32 s + 32), as
// steps_avx512 codes them (the same bytes) but with the entries looked up by byte permutes
// instead of gathers. Stops early while a pair's 128 bytes of words might go below `lowest`:
// returns how many pairs (the lowest) are left to code.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,popcnt"))) size_t steps_order0_vbmi(
    const uint8_t* in, size_t pairs, const Order0Planes& planes, uint32_t* state, uint8_t*& words,
    const uint8_t* lowest);

// (The target attributes belong to the declarations too: GCC takes a definition whose target
// differs from its declaration's for another version of the function.)
// `Divide`: each state's quotient by its symbol's frequency from a division in doubles instead of
// the reciprocal's multiply; the reciprocals are then not gathered (half the gathers). The same
// bytes (the division is exact, below).
template <int Shift, bool Divide = false>
__attribute__((target("avx512f,avx512bw,avx512vl,popcnt"))) bool steps_avx512(const uint8_t* by_step, size_t steps,
                                                                                const uint32_t* entry, uint32_t* state,
                                                                                uint8_t*& words, const uint8_t* lowest,
                                                                                int context_shift);
// Whether steps_avx512 runs faster with Divide on this CPU: on AMD's, whose gathers are slow (on
// Zen 5 a gather of sixteen took longer than two divisions of eight doubles; Zen 4 not measured).
bool steps_avx512_divide_faster();
template <int Shift>
__attribute__((target("avx2,popcnt"))) bool steps_avx2(const uint8_t* by_step, size_t steps, const uint32_t* entry,
                                                       uint32_t* state, uint8_t*& words, const uint8_t* lowest,
                                                       int context_shift);
#endif

}  // namespace stz::rans_enc
