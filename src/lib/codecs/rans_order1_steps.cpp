// The order-1 lanes' SIMD steps (rans_order1_lanes.hpp): sixteen lanes a gather with AVX-512,
// eight with AVX2. Each step of a lane: its slot entry from the table (row: the lane's previous
// symbol, column: the state's low bits), its symbol, its new state, and a 16-bit word for each
// state that fell below kStateLow, taken from `p` in lane order.
#include "rans_order1_lanes.hpp"

#include "x86_intrinsics.hpp"

#include <array>
#include <climits>

namespace stz::order1 {
namespace {

template <int Shift>
__attribute__((target("avx512f,popcnt"), always_inline)) inline __m512i step16(const uint32_t* table, __m512i& state,
                                                                               __m512i& context, const uint8_t*& p,
                                                                               __m128i context_shift) {
    const __m512i mask = _mm512_set1_epi32((1 << Shift) - 1);
    const __m512i row = _mm512_slli_epi32(_mm512_srl_epi32(context, context_shift), Shift);
    const __m512i slot = _mm512_add_epi32(row, _mm512_and_si512(state, mask));
    const __m512i e = _mm512_i32gather_epi32(slot, table, 4);
    const __m512i freq = _mm512_add_epi32(_mm512_srli_epi32(e, Shift + 8), _mm512_set1_epi32(1));
    const __m512i offset = _mm512_and_si512(_mm512_srli_epi32(e, 8), mask);
    context = _mm512_and_si512(e, _mm512_set1_epi32(0xff));
    state = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(state, Shift), freq), offset);
    const __mmask16 renorm = _mm512_cmplt_epu32_mask(state, _mm512_set1_epi32(kStateLow));
    const __m512i words = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    p += 2 * __builtin_popcount(renorm);
    state = _mm512_or_si512(_mm512_mask_slli_epi32(state, renorm, state, 16), _mm512_maskz_expand_epi32(renorm, words));
    return context;
}

// For each mask of the eight lanes that take a word: the index of the word each such lane takes
// (the set lanes below it), for a permute of the eight words loaded (AVX2 has no expand).
using WordSpread = std::array<std::array<int32_t, 8>, 256>;
const WordSpread& word_spread() {
    static const auto spread = [] {
        WordSpread t{};
        for (int m = 0; m < 256; ++m)
            for (int lane = 0, k = 0; lane < 8; ++lane)
                if (m >> lane & 1) t[m][lane] = k++;
        return t;
    }();
    return spread;
}

template <int Shift>
__attribute__((target("avx2,popcnt"), always_inline)) inline __m256i step8(const uint32_t* table, __m256i& state,
                                                                           __m256i& context, const uint8_t*& p,
                                                                           const WordSpread& spread, __m128i context_shift) {
    const __m256i mask = _mm256_set1_epi32((1 << Shift) - 1);
    const __m256i row = _mm256_slli_epi32(_mm256_srl_epi32(context, context_shift), Shift);
    const __m256i slot = _mm256_add_epi32(row, _mm256_and_si256(state, mask));
    const __m256i e = _mm256_i32gather_epi32(reinterpret_cast<const int*>(table), slot, 4);
    const __m256i freq = _mm256_add_epi32(_mm256_srli_epi32(e, Shift + 8), _mm256_set1_epi32(1));
    const __m256i offset = _mm256_and_si256(_mm256_srli_epi32(e, 8), mask);
    context = _mm256_and_si256(e, _mm256_set1_epi32(0xff));
    state = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_srli_epi32(state, Shift), freq), offset);
    // Unsigned state < kStateLow, as a signed compare with the sign bits flipped.
    const __m256i flip = _mm256_set1_epi32(INT_MIN);
    const __m256i renorm = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(kStateLow) ^ INT_MIN),
                                              _mm256_xor_si256(state, flip));
    const int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(renorm));
    const __m256i words = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    p += 2 * __builtin_popcount(static_cast<unsigned>(lanes));
    const __m256i taken =
        _mm256_permutevar8x32_epi32(words, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(spread[lanes].data())));
    state = _mm256_blendv_epi8(state, _mm256_or_si256(_mm256_slli_epi32(state, 16), taken), renorm);
    return context;
}

// The low byte of each of eight 32-bit lanes, as 8 bytes at `dst`.
__attribute__((target("avx2"), always_inline)) inline void store_low_bytes(uint8_t* dst, __m256i v) {
    const __m256i in_halves = _mm256_shuffle_epi8(
        v, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1));
    const __m256i together = _mm256_permutevar8x32_epi32(in_halves, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(together));
}

template <int Shift>
void rest_one_by_one(const uint32_t* table, LaneStates& s, size_t i, size_t steps, uint8_t* by_step, const uint8_t*& p,
                     const uint8_t* end, int context_shift) {
    for (; i < steps; ++i)
        for (int z = 0; z < kLanes; ++z)
            by_step[i * kLanes + z] = decode_one<Shift>(table, s.state[z], s.context[z], p, end, context_shift);
}

}  // namespace

template <int Shift>
void steps_scalar(const uint32_t* table, LaneStates& s, size_t steps, uint8_t* by_step, const uint8_t*& p,
                  const uint8_t* end, int context_shift) {
    rest_one_by_one<Shift>(table, s, 0, steps, by_step, p, end, context_shift);
}

template <int Shift>
__attribute__((target("avx512f,popcnt"))) void steps_avx512(const uint32_t* table, LaneStates& s, size_t steps,
                                                            uint8_t* by_step, const uint8_t*& in, const uint8_t* end,
                                                            int context_shift) {
    const __m128i row_shift = _mm_cvtsi32_si128(context_shift);
    __m512i state0 = _mm512_load_si512(s.state), state1 = _mm512_load_si512(s.state + 16);
    __m512i context0 = _mm512_load_si512(s.context), context1 = _mm512_load_si512(s.context + 16);
    const uint8_t* p = in;  // a local: stores through by_step cannot alias it
    size_t i = 0;
    for (; i < steps && end - p >= 64; ++i) {
        const __m512i sym0 = step16<Shift>(table, state0, context0, p, row_shift);
        const __m512i sym1 = step16<Shift>(table, state1, context1, p, row_shift);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(by_step + i * kLanes), _mm512_cvtepi32_epi8(sym0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(by_step + i * kLanes + 16), _mm512_cvtepi32_epi8(sym1));
    }
    _mm512_store_si512(s.state, state0), _mm512_store_si512(s.state + 16, state1);
    _mm512_store_si512(s.context, context0), _mm512_store_si512(s.context + 16, context1);
    rest_one_by_one<Shift>(table, s, i, steps, by_step, p, end, context_shift);
    in = p;
}

template <int Shift>
__attribute__((target("avx512f,popcnt"))) size_t pair_steps_avx512(const uint32_t* table, LaneStates& a, LaneStates& b,
                                                                  size_t steps, uint8_t* a_by_step, uint8_t* b_by_step,
                                                                  const uint8_t*& a_in, const uint8_t* a_end,
                                                                  const uint8_t*& b_in, const uint8_t* b_end,
                                                                  int context_shift) {
    const __m128i row_shift = _mm_cvtsi32_si128(context_shift);
    __m512i a0 = _mm512_load_si512(a.state), a1 = _mm512_load_si512(a.state + 16);
    __m512i b0 = _mm512_load_si512(b.state), b1 = _mm512_load_si512(b.state + 16);
    __m512i a_context0 = _mm512_load_si512(a.context), a_context1 = _mm512_load_si512(a.context + 16);
    __m512i b_context0 = _mm512_load_si512(b.context), b_context1 = _mm512_load_si512(b.context + 16);
    const uint8_t* pa = a_in;  // locals: stores through the step buffers cannot alias them
    const uint8_t* pb = b_in;
    size_t i = 0;
    for (; i < steps && a_end - pa >= 64 && b_end - pb >= 64; ++i) {
        // The halves alternate: each vector's gather is issued while the other half's wait.
        const __m512i sym_a0 = step16<Shift>(table, a0, a_context0, pa, row_shift);
        const __m512i sym_b0 = step16<Shift>(table, b0, b_context0, pb, row_shift);
        const __m512i sym_a1 = step16<Shift>(table, a1, a_context1, pa, row_shift);
        const __m512i sym_b1 = step16<Shift>(table, b1, b_context1, pb, row_shift);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a_by_step + i * kLanes), _mm512_cvtepi32_epi8(sym_a0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a_by_step + i * kLanes + 16), _mm512_cvtepi32_epi8(sym_a1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(b_by_step + i * kLanes), _mm512_cvtepi32_epi8(sym_b0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(b_by_step + i * kLanes + 16), _mm512_cvtepi32_epi8(sym_b1));
    }
    _mm512_store_si512(a.state, a0), _mm512_store_si512(a.state + 16, a1);
    _mm512_store_si512(b.state, b0), _mm512_store_si512(b.state + 16, b1);
    _mm512_store_si512(a.context, a_context0), _mm512_store_si512(a.context + 16, a_context1);
    _mm512_store_si512(b.context, b_context0), _mm512_store_si512(b.context + 16, b_context1);
    a_in = pa, b_in = pb;
    return i;
}

template <int Shift>
__attribute__((target("avx2,popcnt"))) void steps_avx2(const uint32_t* table, LaneStates& s, size_t steps,
                                                       uint8_t* by_step, const uint8_t*& in, const uint8_t* end,
                                                       int context_shift) {
    const __m128i row_shift = _mm_cvtsi32_si128(context_shift);
    __m256i state[4], context[4];
    for (int g = 0; g < 4; ++g) {
        state[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(s.state + 8 * g));
        context[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(s.context + 8 * g));
    }
    const WordSpread& spread = word_spread();
    const uint8_t* p = in;
    size_t i = 0;
    for (; i < steps && end - p >= 64; ++i) {  // the four groups written out: their states stay in registers
        uint8_t* row = by_step + i * kLanes;
        store_low_bytes(row, step8<Shift>(table, state[0], context[0], p, spread, row_shift));
        store_low_bytes(row + 8, step8<Shift>(table, state[1], context[1], p, spread, row_shift));
        store_low_bytes(row + 16, step8<Shift>(table, state[2], context[2], p, spread, row_shift));
        store_low_bytes(row + 24, step8<Shift>(table, state[3], context[3], p, spread, row_shift));
    }
    for (int g = 0; g < 4; ++g) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(s.state + 8 * g), state[g]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(s.context + 8 * g), context[g]);
    }
    rest_one_by_one<Shift>(table, s, i, steps, by_step, p, end, context_shift);
    in = p;
}

template <int Shift>
__attribute__((target("avx2,popcnt"))) size_t pair_steps_avx2(const uint32_t* table, LaneStates& a, LaneStates& b,
                                                             size_t steps, uint8_t* a_by_step, uint8_t* b_by_step,
                                                             const uint8_t*& a_in, const uint8_t* a_end,
                                                             const uint8_t*& b_in, const uint8_t* b_end,
                                                             int context_shift) {
    const __m128i row_shift = _mm_cvtsi32_si128(context_shift);
    __m256i state[2][4], context[2][4];
    LaneStates* const sets[2] = {&a, &b};
    for (int h = 0; h < 2; ++h)
        for (int g = 0; g < 4; ++g) {
            state[h][g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sets[h]->state + 8 * g));
            context[h][g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sets[h]->context + 8 * g));
        }
    const WordSpread& spread = word_spread();
    const uint8_t* pa = a_in;
    const uint8_t* pb = b_in;
    size_t i = 0;
    for (; i < steps && a_end - pa >= 64 && b_end - pb >= 64; ++i) {  // the halves' groups alternate
        uint8_t* const row_a = a_by_step + i * kLanes;
        uint8_t* const row_b = b_by_step + i * kLanes;
        for (int g = 0; g < 4; ++g) {
            store_low_bytes(row_a + 8 * g, step8<Shift>(table, state[0][g], context[0][g], pa, spread, row_shift));
            store_low_bytes(row_b + 8 * g, step8<Shift>(table, state[1][g], context[1][g], pb, spread, row_shift));
        }
    }
    for (int h = 0; h < 2; ++h)
        for (int g = 0; g < 4; ++g) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(sets[h]->state + 8 * g), state[h][g]);
            _mm256_store_si256(reinterpret_cast<__m256i*>(sets[h]->context + 8 * g), context[h][g]);
        }
    a_in = pa, b_in = pb;
    return i;
}

void fill_row_scalar(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n, int shift) {
    for (int i = 0; i < n; ++i)
        for (uint32_t y = 0; y < freq[i]; ++y) *row++ = (freq[i] - 1) << (shift + 8) | y << 8 | sym[i];
}

__attribute__((target("avx512f"))) void fill_row_avx512(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n,
                                                        int shift) {
    const __m512i first = _mm512_slli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 8);
    const __m512i step = _mm512_set1_epi32(16 << 8);
    for (int i = 0; i < n; ++i) {
        const uint32_t f = freq[i];
        __m512i e = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>((f - 1) << (shift + 8) | sym[i])), first);
        for (uint32_t y = 0; y < f; y += 16, e = _mm512_add_epi32(e, step)) _mm512_storeu_si512(row + y, e);
        row += f;
    }
}

__attribute__((target("avx2"))) void fill_row_avx2(uint32_t* row, const uint8_t* sym, const uint32_t* freq, int n,
                                                   int shift) {
    const __m256i first = _mm256_slli_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), 8);
    const __m256i step = _mm256_set1_epi32(8 << 8);
    for (int i = 0; i < n; ++i) {
        const uint32_t f = freq[i];
        __m256i e = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>((f - 1) << (shift + 8) | sym[i])), first);
        for (uint32_t y = 0; y < f; y += 8, e = _mm256_add_epi32(e, step))
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + y), e);
        row += f;
    }
}

template void steps_avx512<10>(const uint32_t*, LaneStates&, size_t, uint8_t*, const uint8_t*&, const uint8_t*, int);
template void steps_avx512<12>(const uint32_t*, LaneStates&, size_t, uint8_t*, const uint8_t*&, const uint8_t*, int);
template size_t pair_steps_avx512<10>(const uint32_t*, LaneStates&, LaneStates&, size_t, uint8_t*, uint8_t*,
                                      const uint8_t*&, const uint8_t*, const uint8_t*&, const uint8_t*, int);
template size_t pair_steps_avx512<12>(const uint32_t*, LaneStates&, LaneStates&, size_t, uint8_t*, uint8_t*,
                                      const uint8_t*&, const uint8_t*, const uint8_t*&, const uint8_t*, int);
template size_t pair_steps_avx2<10>(const uint32_t*, LaneStates&, LaneStates&, size_t, uint8_t*, uint8_t*,
                                    const uint8_t*&, const uint8_t*, const uint8_t*&, const uint8_t*, int);
template size_t pair_steps_avx2<12>(const uint32_t*, LaneStates&, LaneStates&, size_t, uint8_t*, uint8_t*,
                                    const uint8_t*&, const uint8_t*, const uint8_t*&, const uint8_t*, int);
template void steps_avx2<10>(const uint32_t*, LaneStates&, size_t, uint8_t*, const uint8_t*&, const uint8_t*, int);
template void steps_avx2<12>(const uint32_t*, LaneStates&, size_t, uint8_t*, const uint8_t*&, const uint8_t*, int);
template void steps_scalar<10>(const uint32_t*, LaneStates&, size_t, uint8_t*, const uint8_t*&, const uint8_t*, int);
template void steps_scalar<12>(const uint32_t*, LaneStates&, size_t, uint8_t*, const uint8_t*&, const uint8_t*, int);

}  // namespace stz::order1
