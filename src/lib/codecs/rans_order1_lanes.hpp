// The 32 lanes of an order-1 X32 rANS stream (rans_order1_decoder.cpp): their states, a symbol
// decoded one lane at a time, and the SIMD steps per instruction set (rans_order1_steps.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stz::order1 {

constexpr int kLanes = 32;
constexpr uint32_t kStateLow = 1u << 15;  // a state below this takes the next 16-bit word

struct LaneStates {
    alignas(64) uint32_t state[kLanes];
    alignas(64) uint32_t context[kLanes];  // the lane's previous symbol
};

// The largest context shift a stream with grouped contexts may give: the row of a step is its
// lane's previous symbol >> that shift (htscodecs' streams: 0, the symbol itself; grouped, the
// previous symbol's top bits, so that a row serves 2^shift neighbouring symbols).
constexpr int kMaxContextShift = 7;

// Slot entries of `table` (256 rows of 1 << Shift): (frequency - 1) << (Shift + 8) | the slot's
// offset within its symbol << 8 | the symbol. A word is taken only while two bytes remain before
// `end` (as htscodecs' decoders do near the end of a stream). The row: the context >> context_shift.
template <int Shift>
inline uint8_t decode_one(const uint32_t* table, uint32_t& state, uint32_t& context, const uint8_t*& p,
                          const uint8_t* end, int context_shift) {
    constexpr uint32_t mask = (1u << Shift) - 1;
    const uint32_t e = table[((context >> context_shift) << Shift) + (state & mask)];
    state = ((e >> (Shift + 8)) + 1) * (state >> Shift) + ((e >> 8) & mask);
    if (state < kStateLow && end - p >= 2) state = state << 16 | uint32_t(p[0]) | uint32_t(p[1]) << 8, p += 2;
    return static_cast<uint8_t>(context = e & 0xff);
}

// One context's row of slots: symbol sym[i] takes the next freq[i] slots, from the row's start
// (the frequencies checked to sum to 1 << shift). Whole vectors only: a symbol's last store
// runs up to 15 (AVX-512) or 7 (AVX2) entries past its slots, into the next symbol's, filled
// after it, or past the row, into the next context's row, filled after it if the stream has
// that context (the table keeps kFillOverrun entries after its last row). A masked store per
// symbol instead cost a third of the fill on the quant planes of trained q8_0 caches, whose
// rows hold ~200 symbols of a few slots each.
using FillFn = void (*)(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n, int shift);
void fill_row_scalar(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n, int shift);
__attribute__((target("avx512f"))) void fill_row_avx512(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n,
                                                        int shift);
__attribute__((target("avx2"))) void fill_row_avx2(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n,
                                                   int shift);
constexpr size_t kFillOverrun = 16;

// Steps [0, steps) of all lanes, the symbols in step order into `by_step` (32 a step): vectors
// of lanes while 64 bytes of words remain before `end` (a step takes at most 32 words), then
// one lane at a time (the scalar form: one lane at a time throughout). `p` is left after the
// words taken. Rows as decode_one.
using StepsFn = void (*)(const uint32_t* table, LaneStates& s, size_t steps, uint8_t* by_step, const uint8_t*& p,
                         const uint8_t* end, int context_shift);
template <int Shift>
void steps_scalar(const uint32_t* table, LaneStates& s, size_t steps, uint8_t* by_step, const uint8_t*& p,
                  const uint8_t* end, int context_shift);
// (The target attributes belong to the declarations too: GCC takes a definition whose target
// differs from its declaration's for another version of the function.)
template <int Shift>
__attribute__((target("avx512f,popcnt"))) void steps_avx512(const uint32_t* table, LaneStates& s, size_t steps,
                                                            uint8_t* by_step, const uint8_t*& p, const uint8_t* end,
                                                            int context_shift);
template <int Shift>
__attribute__((target("avx2,popcnt"))) void steps_avx2(const uint32_t* table, LaneStates& s, size_t steps,
                                                       uint8_t* by_step, const uint8_t*& p, const uint8_t* end,
                                                       int context_shift);

// Two sets of lanes (the two halves of a plane, rans_order1_form.hpp) stepped together over one
// table: steps [0, k) of both, each with its own words (`pa` up to `a_end`, `pb` up to `b_end`),
// while 64 bytes of words remain in each; returns k (at most `steps`), after which each set's
// steps go on by a StepsFn from step k. Where the lanes of one plane wait on each step's gather,
// four vectors of them in flight keep the gathers' throughput busy instead.
using PairStepsFn = size_t (*)(const uint32_t* table, LaneStates& a, LaneStates& b, size_t steps, uint8_t* a_by_step,
                               uint8_t* b_by_step, const uint8_t*& pa, const uint8_t* a_end, const uint8_t*& pb,
                               const uint8_t* b_end, int context_shift);
template <int Shift>
__attribute__((target("avx512f,popcnt"))) size_t pair_steps_avx512(const uint32_t* table, LaneStates& a, LaneStates& b,
                                                                  size_t steps, uint8_t* a_by_step, uint8_t* b_by_step,
                                                                  const uint8_t*& pa, const uint8_t* a_end,
                                                                  const uint8_t*& pb, const uint8_t* b_end,
                                                                  int context_shift);
template <int Shift>
__attribute__((target("avx2,popcnt"))) size_t pair_steps_avx2(const uint32_t* table, LaneStates& a, LaneStates& b,
                                                             size_t steps, uint8_t* a_by_step, uint8_t* b_by_step,
                                                             const uint8_t*& pa, const uint8_t* a_end, const uint8_t*& pb,
                                                             const uint8_t* b_end, int context_shift);

}  // namespace stz::order1
