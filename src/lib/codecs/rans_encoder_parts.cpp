// The parts statezip's rANS encoders share (rans_encoder_parts.hpp).
#include "rans_encoder_parts.hpp"

#include "cpu_features.hpp"
#include "uint7.hpp"
#include "x86_intrinsics.hpp"

namespace stz::rans_enc {

Reciprocals::Reciprocals() {
    rcp[1] = ~0u;
    for (uint32_t f = 2; f <= (1u << kShiftFull); ++f) {
        uint32_t s = 0;
        while (f > (1u << s)) ++s;
        rcp[f] = static_cast<uint32_t>(((uint64_t(1) << (s + 31)) + f - 1) / f);
        shift[f] = static_cast<uint8_t>(s - 1);
    }
}
const Reciprocals& reciprocals() {
    static const Reciprocals r;
    return r;
}

bool steps_avx512_available() { return cpu::avx512_bw_vl(); }
// (On this Zen 5: generated 100 MB f16 and q8_0 sessions compress 9-15 % faster with the
// division, the corpus's trained q8_0 caches 3-8 %, the random-weight ones the same. Intel's
// gathers are much faster than AMD's and its 512-bit divisions slower; not measured here, so the
// reciprocals stay there.)
bool steps_avx512_divide_faster() { return steps_avx512_available() && cpu::amd(); }
bool steps_order0_vbmi_available() { return cpu::avx512_vbmi(); }
bool steps_avx2_available() { return cpu::avx2(); }

// htscodecs' symbol list of the present symbols (the form rans_order1_decoder.cpp reads): each
// run of consecutive symbols [a, b) as a, then, if it is longer, a + 1 and how many follow it.
uint8_t* put_symbol_list(uint8_t* p, const SymbolSet& present) {
    for (unsigned a = present.first_from(0, true); a < 256;) {
        const unsigned b = present.first_from(a, false);
        *p++ = static_cast<uint8_t>(a);
        if (b - a >= 2) *p++ = static_cast<uint8_t>(a + 1), *p++ = static_cast<uint8_t>(b - a - 2);
        a = present.first_from(b, true);
    }
    *p++ = 0;
    return p;
}

uint8_t* put_order0_table(const uint32_t* count, uint32_t n, uint8_t* table, uint32_t* entry) {
    uint8_t sym[256];
    uint32_t f[256], k = 0;
    const SymbolSet present = SymbolSet::of_nonzero(count);
    present.each([&](unsigned j) { sym[k] = static_cast<uint8_t>(j), f[k++] = count[j]; });
    // Counts to a power of two up to 4,096 (the library's rounding: the same bytes), written so.
    uint32_t to = 1;
    while (to < n && to < (1u << kShiftFull)) to <<= 1;
    normalise(sym, f, k, n, to);
    uint8_t* t = put_symbol_list(table, present);
    for (uint32_t i = 0; i < k; ++i) t += put_uint7(t, f[i]);
    int up = 0;
    while ((to << up) < (1u << kShiftFull)) ++up;
    const Reciprocals& r = reciprocals();
    for (uint32_t i = 0, start = 0; i < k; ++i) {
        const uint32_t freq = f[i] << up;
        entry[sym[i]] = entry_of(start, freq, r.shift[freq], kShiftFull);
        start += freq;
    }
    return t;
}

void normalise(uint8_t* sym, uint32_t* f, uint32_t& k, uint32_t size, uint32_t total) {
    if (k == 0) { sym[0] = 0, f[0] = total, k = 1; return; }
    for (int pass = 0;; ++pass) {
        const uint64_t tr = (uint64_t(total) << 31) / size + (1u << 30) / size;
        uint32_t largest = 0, sum = 0, at = 0;
        for (uint32_t i = 0; i < k; ++i) {
            if (largest < f[i]) largest = f[i], at = i;
            f[i] = static_cast<uint32_t>((f[i] * tr) >> 31);
            if (!f[i]) f[i] = 1;
            sum += f[i];
        }
        int adjust = static_cast<int>(total - sum);
        if (adjust >= 0) { f[at] += adjust; return; }
        if (f[at] > uint32_t(-adjust) && (pass == 1 || f[at] / 2 >= uint32_t(-adjust))) { f[at] += adjust; return; }
        if (pass == 0) { size = sum; continue; }
        adjust += f[at] - 1, f[at] = 1;
        for (uint32_t i = 0; adjust && i < k; ++i) {
            if (f[i] < 2) continue;
            if (f[i] > uint32_t(-adjust)) f[i] += adjust, adjust = 0;
            else adjust += f[i] - 1, f[i] = 1;
        }
        return;
    }
}

template <int Shift>
bool steps_scalar(const uint8_t* by_step, size_t steps, const uint32_t* entry, uint32_t* state, uint8_t*& words,
                  const uint8_t* lowest, int context_shift) {
    const uint32_t* rcp = reciprocals().rcp.data();
    uint8_t* w = words;
    size_t left = steps;
    while (left && w - lowest >= 2 * kLanes) {
        const size_t s = --left;
        const uint8_t* const row = by_step + s * kLanes;
        for (int lane = kLanes - 1; lane >= 0; --lane) {
            const uint32_t context = s ? row[lane - kLanes] : 0;
            put_symbol<Shift>(state[lane], w, entry[(context >> context_shift) << 8 | row[lane]], rcp);
        }
    }
    words = w;
    return left == 0;
}
template bool steps_scalar<kShiftFast>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
template bool steps_scalar<kShiftFull>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);

#if defined(__x86_64__)
namespace {

// The quotients floor(v / freq) of sixteen states by a division in doubles: exact, since v < 2^32 and
// freq <= 2^12 are exact doubles, and where v / freq is not a whole number it lies at least 1 / freq
// >= 2^-12 from one, past the division's rounding error (under 2^32 * 2^-53 = 2^-21). One less
// where freq is 1: what the reciprocal ~0 gives, which that entry's bias expects.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i quotients_by_division(__m512i v, __m512i freq) {
    const __m256i v_low = _mm512_castsi512_si256(v), v_high = _mm512_extracti64x4_epi64(v, 1);
    const __m256i f_low = _mm512_castsi512_si256(freq), f_high = _mm512_extracti64x4_epi64(freq, 1);
    const __m256i q_low = _mm512_cvttpd_epu32(_mm512_div_pd(_mm512_cvtepu32_pd(v_low), _mm512_cvtepu32_pd(f_low)));
    const __m256i q_high = _mm512_cvttpd_epu32(_mm512_div_pd(_mm512_cvtepu32_pd(v_high), _mm512_cvtepu32_pd(f_high)));
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q_low), q_high, 1);
    const __m512i one = _mm512_set1_epi32(1);
    return _mm512_mask_sub_epi32(q, _mm512_cmpeq_epi32_mask(freq, one), q, one);
}

// Sixteen lanes' states take one symbol each (entries e, reciprocals r, unless `Divide`): the lanes
// whose state is too large for its symbol first give out their low 16 bits below `w`, in lane
// order (the highest lane's word highest, as the library writes them).
template <int Shift, bool Divide = false>
__attribute__((target("avx512f,avx512bw,avx512vl,popcnt"))) inline __m512i code_half(__m512i x, __m512i e, __m512i r,
                                                                                     uint8_t*& w) {
    const __m512i freq = _mm512_srli_epi32(e, kFreqAt);
    const __mmask16 out = _mm512_cmpge_epu32_mask(x, _mm512_slli_epi32(freq, 31 - Shift));
    const int n_out = __builtin_popcount(out);
    w -= 2 * n_out;
    _mm256_mask_storeu_epi16(w, static_cast<__mmask16>((1u << n_out) - 1),
                             _mm512_cvtepi32_epi16(_mm512_maskz_compress_epi32(out, x)));
    const __m512i v = _mm512_mask_srli_epi32(x, out, x, 16);
    __m512i q;
    if constexpr (Divide) {
        (void)r;
        q = quotients_by_division(v, freq);
    } else {
        // q = (state * rcp) >> (32 + rcp_shift): the products' high halves (even lanes' by one
        // multiply, odd lanes' by another), then one shift per lane.
        const __m512i high_even = _mm512_srli_epi64(_mm512_mul_epu32(v, r), 32);
        const __m512i high_odd = _mm512_mul_epu32(_mm512_srli_epi64(v, 32), _mm512_srli_epi64(r, 32));
        q = _mm512_srlv_epi32(_mm512_mask_blend_epi32(0xAAAA, high_even, high_odd),
                              _mm512_and_si512(_mm512_srli_epi32(e, kRcpShiftAt), _mm512_set1_epi32(kRcpShiftMask)));
    }
    return _mm512_add_epi32(_mm512_add_epi32(v, _mm512_and_si512(e, _mm512_set1_epi32(kBiasMask))),
                            _mm512_mullo_epi32(q, _mm512_sub_epi32(_mm512_set1_epi32(1 << Shift), freq)));
}

// One step's coding entries and reciprocals, sixteen lanes a half.
struct StepEntries {
    __m512i entry[2], rcp[2];
};

template <bool Divide>
__attribute__((target("avx512f,avx512bw,avx512vl,popcnt"))) inline StepEntries fetch_step(const uint8_t* by_step,
                                                                                           size_t s,
                                                                                           const uint32_t* entry,
                                                                                           const uint32_t* rcp,
                                                                                           __m128i context_shift) {
    const __m256i sym = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(by_step + s * kLanes));
    const __m256i ctx =
        s ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(by_step + (s - 1) * kLanes)) : _mm256_setzero_si256();
    StepEntries next;
    for (int h = 0; h < 2; ++h) {
        const __m128i sh = h ? _mm256_extracti128_si256(sym, 1) : _mm256_castsi256_si128(sym);
        const __m128i ch = h ? _mm256_extracti128_si256(ctx, 1) : _mm256_castsi256_si128(ctx);
        const __m512i row = _mm512_slli_epi32(_mm512_srl_epi32(_mm512_cvtepu8_epi32(ch), context_shift), 8);
        const __m512i idx = _mm512_or_si512(row, _mm512_cvtepu8_epi32(sh));
        next.entry[h] = _mm512_i32gather_epi32(idx, entry, 4);
        if constexpr (!Divide) next.rcp[h] = _mm512_i32gather_epi32(_mm512_srli_epi32(next.entry[h], kFreqAt), rcp, 4);
    }
    return next;
}

}  // namespace

// The next step's entries are gathered before this step's states are coded: the gathers' latency
// (two in a row) then overlaps a step of arithmetic (12 % faster on Zen 4 than gathering in place).
template <int Shift, bool Divide>
bool steps_avx512(const uint8_t* by_step, size_t steps, const uint32_t* entry, uint32_t* state, uint8_t*& words,
                  const uint8_t* lowest, int context_shift) {
    const uint32_t* rcp = reciprocals().rcp.data();
    const __m128i row_shift = _mm_cvtsi32_si128(context_shift);
    __m512i x[2] = {_mm512_loadu_si512(state), _mm512_loadu_si512(state + 16)};
    uint8_t* w = words;
    size_t left = steps;
    StepEntries next{};
    if (left) next = fetch_step<Divide>(by_step, left - 1, entry, rcp, row_shift);
    while (left && w - lowest >= 2 * kLanes) {
        const size_t s = --left;
        const StepEntries now = next;
        if (s) next = fetch_step<Divide>(by_step, s - 1, entry, rcp, row_shift);
        for (int h = 1; h >= 0; --h) x[h] = code_half<Shift, Divide>(x[h], now.entry[h], now.rcp[h], w);
    }
    _mm512_storeu_si512(state, x[0]);
    _mm512_storeu_si512(state + 16, x[1]);
    words = w;
    return left == 0;
}

namespace {

// Sixty-four symbols' 32-bit values from four byte planes of 256 (`plane`, 64-byte aligned): per
// plane two two-table byte permutes (symbols below and from 128) and a blend on the symbols' top
// bit, then bytes interleaved to words and words to 32-bit lanes. The interleaves work within
// 128-bit blocks: `idx` holds the symbols in the order that makes out[m] symbols 16 m .. 16 m + 15.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) inline void look_up(const uint8_t (*plane)[256],
                                                                                    __m512i idx, __mmask64 upper,
                                                                                    __m512i* out) {
    __m512i b[4];
    for (int k = 0; k < 4; ++k) {
        const __m512i* t = reinterpret_cast<const __m512i*>(plane[k]);
        const __m512i below = _mm512_permutex2var_epi8(_mm512_load_si512(t), idx, _mm512_load_si512(t + 1));
        const __m512i above = _mm512_permutex2var_epi8(_mm512_load_si512(t + 2), idx, _mm512_load_si512(t + 3));
        b[k] = _mm512_mask_blend_epi8(upper, below, above);
    }
    const __m512i low01 = _mm512_unpacklo_epi8(b[0], b[1]), high01 = _mm512_unpackhi_epi8(b[0], b[1]);
    const __m512i low23 = _mm512_unpacklo_epi8(b[2], b[3]), high23 = _mm512_unpackhi_epi8(b[2], b[3]);
    out[0] = _mm512_unpacklo_epi16(low01, low23);
    out[1] = _mm512_unpackhi_epi16(low01, low23);
    out[2] = _mm512_unpacklo_epi16(high01, high23);
    out[3] = _mm512_unpackhi_epi16(high01, high23);
}

// Position p = 16 L + 4 m + j of the permuted symbols (L: 128-bit block, m: output vector, j:
// lane within the block's four) holds symbol 16 m + 4 L + j: look_up's interleaves then put
// symbol 16 m + i in lane i of out[m].
constexpr std::array<uint8_t, 64> kLookUpOrder = [] {
    std::array<uint8_t, 64> order{};
    for (int p = 0; p < 64; ++p) order[p] = static_cast<uint8_t>(16 * ((p >> 2) & 3) + 4 * (p >> 4) + (p & 3));
    return order;
}();

}  // namespace

// A gather of sixteen lanes cost about twelve cycles here (Zen 5), two per half-step: the
// permutes look up sixty-four symbols' entries and reciprocals in about forty instructions.
size_t steps_order0_vbmi(const uint8_t* in, size_t pairs, const Order0Planes& planes, uint32_t* state, uint8_t*& words,
                         const uint8_t* lowest) {
    const __m512i order = _mm512_loadu_si512(kLookUpOrder.data());
    __m512i x[2] = {_mm512_loadu_si512(state), _mm512_loadu_si512(state + 16)};
    uint8_t* w = words;
    size_t left = pairs;
    while (left && w - lowest >= 4 * kLanes) {
        const size_t pair = --left;
        const __m512i idx = _mm512_permutexvar_epi8(order, _mm512_loadu_si512(in + pair * 2 * kLanes));
        const __mmask64 upper = _mm512_movepi8_mask(idx);
        __m512i e[4], r[4];
        look_up(planes.entry, idx, upper, e);
        look_up(planes.rcp, idx, upper, r);
        // The pair's upper step (symbols 32-63) first; each step's lanes 16-31, then 0-15.
        for (int v = 3; v >= 0; --v) x[v & 1] = code_half<kShiftFull>(x[v & 1], e[v], r[v], w);
    }
    _mm512_storeu_si512(state, x[0]);
    _mm512_storeu_si512(state + 16, x[1]);
    words = w;
    return left;
}

namespace {

// Per mask of 8 lanes, the vpermd order that moves the lanes set to the top positions, in lane
// order (the others below them, in any order): their words then end a 16-byte store.
struct WordGather {
    alignas(32) std::array<std::array<int32_t, 8>, 256> order{};
    WordGather() {
        for (int m = 0; m < 256; ++m) {
            const int set = __builtin_popcount(static_cast<unsigned>(m));
            int at_set = 8 - set, at_clear = 0;
            for (int lane = 0; lane < 8; ++lane) order[m][(m >> lane & 1) ? at_set++ : at_clear++] = lane;
        }
    }
};
const WordGather& word_gather() {
    static const WordGather g;
    return g;
}

}  // namespace

// Eight lanes a group, the groups of a step from lanes 24-31 down. The words a group gives out
// are moved to the top of a vector and stored as 16 bytes ending where the words go: the bytes
// below them are written again by what follows (more words, at least the 128 bytes of states).
template <int Shift>
bool steps_avx2(const uint8_t* by_step, size_t steps, const uint32_t* entry, uint32_t* state, uint8_t*& words,
                const uint8_t* lowest, int context_shift) {
    const uint32_t* rcp = reciprocals().rcp.data();
    const __m128i row_shift = _mm_cvtsi32_si128(context_shift);
    const auto& order = word_gather().order;
    __m256i x[4];
    for (int g = 0; g < 4; ++g) x[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state + 8 * g));
    const __m256i bias_bits = _mm256_set1_epi32(kBiasMask), shift_bits = _mm256_set1_epi32(kRcpShiftMask);
    const __m256i total = _mm256_set1_epi32(1 << Shift), one = _mm256_set1_epi32(1), low16 = _mm256_set1_epi32(0xffff);
    uint8_t* w = words;
    size_t left = steps;
    while (left && w - lowest >= 2 * kLanes) {
        const size_t s = --left;
        const uint8_t* const row = by_step + s * kLanes;
        for (int g = 3; g >= 0; --g) {
            const __m256i sym = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + 8 * g)));
            const __m256i ctx = s ? _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row - kLanes + 8 * g)))
                                  : _mm256_setzero_si256();
            const __m256i row_of = _mm256_slli_epi32(_mm256_srl_epi32(ctx, row_shift), 8);
            const __m256i e = _mm256_i32gather_epi32(reinterpret_cast<const int*>(entry), _mm256_or_si256(row_of, sym), 4);
            const __m256i freq = _mm256_srli_epi32(e, kFreqAt);
            const __m256i r = _mm256_i32gather_epi32(reinterpret_cast<const int*>(rcp), freq, 4);
            // States and bounds are below 2^31 (a bound of 2^31 less one still is): a signed compare.
            const __m256i out = _mm256_cmpgt_epi32(x[g], _mm256_sub_epi32(_mm256_slli_epi32(freq, 31 - Shift), one));
            const unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(out)));
            const __m256i moved = _mm256_and_si256(
                _mm256_permutevar8x32_epi32(x[g], _mm256_load_si256(reinterpret_cast<const __m256i*>(order[mask].data()))), low16);
            const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(moved, _mm256_setzero_si256()), 0x08);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(w - 16), _mm256_castsi256_si128(packed));
            w -= 2 * __builtin_popcount(mask);
            const __m256i v = _mm256_blendv_epi8(x[g], _mm256_srli_epi32(x[g], 16), out);
            const __m256i high_even = _mm256_srli_epi64(_mm256_mul_epu32(v, r), 32);
            const __m256i high_odd = _mm256_mul_epu32(_mm256_srli_epi64(v, 32), _mm256_srli_epi64(r, 32));
            const __m256i q = _mm256_srlv_epi32(_mm256_blend_epi32(high_even, high_odd, 0xAA),
                                                _mm256_and_si256(_mm256_srli_epi32(e, kRcpShiftAt), shift_bits));
            x[g] = _mm256_add_epi32(_mm256_add_epi32(v, _mm256_and_si256(e, bias_bits)),
                                    _mm256_mullo_epi32(q, _mm256_sub_epi32(total, freq)));
        }
    }
    for (int g = 0; g < 4; ++g) _mm256_storeu_si256(reinterpret_cast<__m256i*>(state + 8 * g), x[g]);
    words = w;
    return left == 0;
}

template bool steps_avx512<kShiftFast, false>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
template bool steps_avx512<kShiftFull, false>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
template bool steps_avx512<kShiftFast, true>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
template bool steps_avx512<kShiftFull, true>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
template bool steps_avx2<kShiftFast>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
template bool steps_avx2<kShiftFull>(const uint8_t*, size_t, const uint32_t*, uint32_t*, uint8_t*&, const uint8_t*, int);
#endif

}  // namespace stz::rans_enc
