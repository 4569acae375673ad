// An order-0 plane in two halves (rans_order0_halves.hpp): written as two htscodecs order-0 X32
// streams by the library's own encoder kernels, read by stepping both halves' lanes together.
//
// Why: an order-0 X32 stream has 32 lanes, two vectors of sixteen, and each lane's steps are a
// chain: the state's low 12 bits pick a table entry (a gather), the entry gives the new state,
// which may take a 16-bit word whose place in the stream depends on how many lanes before it took
// one. htscodecs' AVX-512 decoder waits on that chain (1.5-2.0 GB/s here on planes of 0.1-2 MB);
// two streams stepped together keep four vectors in flight, and the words of a stream's 32 lanes
// are placed by one 32-bit expansion (VBMI2) instead of two dependent loads: 2.1-3.0 GB/s on the
// same planes (quant planes of q8_0 and q4_0 caches; the order-0 decoding was 64 % of a q8_0
// cache's decompression).
//
// One half's stream (htscodecs' rANS_static32x16pr*.c, order 0): the symbols present (the symbol
// list of rans_symbol_list.hpp), a uint7 count for each in ascending order, which sum to a power
// of two up to 4096 (scaled up to 4096); 32 states, u32 little-endian, each at least 2^15; then the
// 16-bit words. Step i decodes out[32 i + z] by lane z, lanes in order, each state below 2^15
// after its step taking the next word (a zero past the stream's end, as the library reads it);
// the n mod 32 bytes after the last whole step are the symbols of lanes 0.. at their states.
#include "rans_order0_halves.hpp"

#include "x86_intrinsics.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "../base/large_buffers.hpp"
#include "cpu_features.hpp"
#include "rans_order1_lanes.hpp"
#include "rans_symbol_list.hpp"

namespace stz {
namespace {

using order1::kLanes;
using order1::kStateLow;
constexpr int kShift = 12;
constexpr uint32_t kSlots = 1u << kShift, kSlotMask = kSlots - 1;
constexpr size_t kWordsAhead = 64;  // a vector step of 32 lanes reads up to 32 words

// One half's decoder: its table (slot entries as order-1 rows: (frequency - 1) << 20 | the slot's
// offset within its symbol << 8 | the symbol), its lanes' states, its words [p, end).
struct Half {
    uint32_t* table = nullptr;
    alignas(64) uint32_t state[kLanes];
    const uint8_t* p = nullptr;
    const uint8_t* end = nullptr;
    int single_symbol = -1;  // the only symbol, where the table has one: every slot decodes it
    // A copy of the last words, zero-padded, once fewer than kWordsAhead remain (as htscodecs'
    // decoders read them: a word past the stream's end is 0).
    alignas(64) uint8_t tail[2 * kWordsAhead];
};

// The halves' tables of 4096 slots (and the fill's overrun), one pair per thread: kept, not
// allocated per call.
struct HalfTables {
    uint32_t slots[2][kSlots + order1::kFillOverrun];
};
HalfTables& half_tables() {
    thread_local const auto tables = make_large_table<HalfTables>();
    return *tables;
}

// A half's frequency table and states, as the library reads them; false where it refuses.
bool open_half(const uint8_t* in, size_t in_size, Half& h, order1::FillFn fill) {
    if (in_size < 4 * kLanes) return false;
    const uint8_t* p = in;
    const uint8_t* const end = in + in_size;
    std::array<uint8_t, 256> sym;
    std::array<uint32_t, 256> freq;
    int k = 0;
    if (!read_order0_table(p, end, sym, freq, k)) return false;
    h.single_symbol = k == 1 ? sym[0] : -1;
    if (k > 1) fill(h.table, sym.data(), freq.data(), k, kShift);
    if (end - p < 4 * kLanes) return false;
    for (int z = 0; z < kLanes; ++z, p += 4) {
        h.state[z] = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
        if (h.state[z] < kStateLow) return false;
    }
    h.p = p, h.end = end;
    return true;
}

// Once fewer than kWordsAhead bytes of words remain at `p`: the rest moved into the half's
// zero-padded copy, so that a vector step may load kWordsAhead bytes; the new place of `p`.
const uint8_t* keep_words_ahead(Half& h, const uint8_t* p) {
    const size_t left = static_cast<size_t>(h.end - p);
    std::memmove(h.tail, p, left);
    std::memset(h.tail + left, 0, sizeof h.tail - left);
    h.end = h.tail + sizeof h.tail;
    return h.tail;
}

// Steps [from, to) of a half, one lane at a time; then, at `to`, its last n mod 32 symbols.
void steps_one_by_one(Half& h, uint8_t* out, size_t from, size_t to, size_t n) {
    for (size_t i = from; i < to; ++i)
        for (int z = 0; z < kLanes; ++z) {
            const uint32_t e = h.table[h.state[z] & kSlotMask];
            uint32_t s = ((e >> (kShift + 8)) + 1) * (h.state[z] >> kShift) + ((e >> 8) & kSlotMask);
            if (s < kStateLow) {
                const uint32_t word = h.end - h.p >= 2 ? uint32_t(h.p[0]) | uint32_t(h.p[1]) << 8 : 0;
                if (h.end - h.p >= 2) h.p += 2;
                s = s << 16 | word;
            }
            h.state[z] = s;
            out[i * kLanes + z] = static_cast<uint8_t>(e);
        }
    for (size_t z = 0; z < n % kLanes; ++z) out[to * kLanes + z] = static_cast<uint8_t>(h.table[h.state[z] & kSlotMask]);
}

#if defined(__x86_64__)
#define STZ_PAIR_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt")))

// One step of a half's 32 lanes (two vectors of sixteen): their symbols stored at `out`, their
// words taken from `p` in lane order by one expansion of the 32 words ahead.
STZ_PAIR_TARGET __attribute__((always_inline)) inline void step32(__m512i& lo, __m512i& hi, const uint32_t* table,
                                                                  const uint8_t*& p, uint8_t* out) {
    const __m512i slot_mask = _mm512_set1_epi32(kSlotMask), one = _mm512_set1_epi32(1);
    const __m512i e_lo = _mm512_i32gather_epi32(_mm512_and_epi32(lo, slot_mask), table, 4);
    const __m512i e_hi = _mm512_i32gather_epi32(_mm512_and_epi32(hi, slot_mask), table, 4);
    const __m512i f_lo = _mm512_add_epi32(_mm512_srli_epi32(e_lo, kShift + 8), one);
    const __m512i f_hi = _mm512_add_epi32(_mm512_srli_epi32(e_hi, kShift + 8), one);
    lo = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(lo, kShift), f_lo),
                          _mm512_and_epi32(_mm512_srli_epi32(e_lo, 8), slot_mask));
    hi = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(hi, kShift), f_hi),
                          _mm512_and_epi32(_mm512_srli_epi32(e_hi, 8), slot_mask));
    const __m512i low = _mm512_set1_epi32(kStateLow);
    const __mmask16 k_lo = _mm512_cmplt_epu32_mask(lo, low), k_hi = _mm512_cmplt_epu32_mask(hi, low);
    const __mmask32 takes = _mm512_kunpackw(k_hi, k_lo);
    const __m512i words = _mm512_maskz_expand_epi16(takes, _mm512_loadu_si512(p));
    lo = _mm512_mask_or_epi32(lo, k_lo, _mm512_slli_epi32(lo, 16),
                              _mm512_cvtepu16_epi32(_mm512_castsi512_si256(words)));
    hi = _mm512_mask_or_epi32(hi, k_hi, _mm512_slli_epi32(hi, 16),
                              _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(words, 1)));
    p += 2 * static_cast<size_t>(__builtin_popcount(takes));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(e_lo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm512_cvtepi32_epi8(e_hi));
}

// Steps [0, steps) of both halves together. The words' places and ends in locals: through the
// halves' members every symbol stored (bytes, which may alias anything) would reload them.
STZ_PAIR_TARGET void pair_steps(Half& a, uint8_t* out_a, Half& b, uint8_t* out_b, size_t steps) {
    __m512i a_lo = _mm512_load_si512(a.state), a_hi = _mm512_load_si512(a.state + 16);
    __m512i b_lo = _mm512_load_si512(b.state), b_hi = _mm512_load_si512(b.state + 16);
    const uint8_t *pa = a.p, *pb = b.p, *a_end = a.end, *b_end = b.end;
    constexpr auto ahead = static_cast<std::ptrdiff_t>(kWordsAhead);
    for (size_t i = 0; i < steps; ++i) {
        if (a_end - pa < ahead) pa = keep_words_ahead(a, pa), a_end = a.end;
        if (b_end - pb < ahead) pb = keep_words_ahead(b, pb), b_end = b.end;
        step32(a_lo, a_hi, a.table, pa, out_a + i * kLanes);
        step32(b_lo, b_hi, b.table, pb, out_b + i * kLanes);
    }
    a.p = pa, b.p = pb;
    _mm512_store_si512(a.state, a_lo), _mm512_store_si512(a.state + 16, a_hi);
    _mm512_store_si512(b.state, b_lo), _mm512_store_si512(b.state + 16, b_hi);
}

// Steps [0, steps) of one stream: pair_steps' loop on a single half.
STZ_PAIR_TARGET void single_steps(Half& h, uint8_t* out, size_t steps) {
    __m512i lo = _mm512_load_si512(h.state), hi = _mm512_load_si512(h.state + 16);
    const uint8_t *p = h.p, *end = h.end;
    constexpr auto ahead = static_cast<std::ptrdiff_t>(kWordsAhead);
    for (size_t i = 0; i < steps; ++i) {
        if (end - p < ahead) p = keep_words_ahead(h, p), end = h.end;
        step32(lo, hi, h.table, p, out + i * kLanes);
    }
    h.p = p;
    _mm512_store_si512(h.state, lo), _mm512_store_si512(h.state + 16, hi);
}
#undef STZ_PAIR_TARGET
#endif

// A half of n bytes into `out`: one symbol everywhere, or the steps from `from` on.
void finish_half(Half& h, uint8_t* out, size_t n, size_t from) {
    if (h.single_symbol >= 0) return void(std::memset(out, h.single_symbol, n));
    steps_one_by_one(h, out, from, n / kLanes, n);
}

#if defined(__x86_64__)
// Two opened streams into na and nb bytes: their whole steps together while both have steps left,
// then the longer one's alone, then each one's last n mod 32 symbols (or its fill).
void decode_together(Half& a, uint8_t* a_out, size_t na, Half& b, uint8_t* b_out, size_t nb) {
    const size_t a_steps = a.single_symbol < 0 ? na / kLanes : 0, b_steps = b.single_symbol < 0 ? nb / kLanes : 0;
    const size_t together = std::min(a_steps, b_steps);
    if (together) pair_steps(a, a_out, b, b_out, together);
    if (a_steps > together) single_steps(a, a_out + together * kLanes, a_steps - together);
    if (b_steps > together) single_steps(b, b_out + together * kLanes, b_steps - together);
    finish_half(a, a_out, na, a_steps);
    finish_half(b, b_out, nb, b_steps);
}
#endif

// Two streams opened with the thread's two tables (false where either is malformed).
bool open_two(const uint8_t* a_in, size_t a_size, Half& a, const uint8_t* b_in, size_t b_size, Half& b,
              order1::FillFn fill) {
    HalfTables& tables = half_tables();
    a.table = tables.slots[0], b.table = tables.slots[1];
    return open_half(a_in, a_size, a, fill) && open_half(b_in, b_size, b, fill);
}

// Both halves by statezip's lanes: stepped together (`in_pairs`) or one lane at a time.
bool decode_own(const uint8_t* a_in, size_t a_size, const uint8_t* b_in, size_t b_size, uint8_t* out, size_t n,
                bool in_pairs) {
    const size_t na = order0_halves::first_half_bytes(n);
    Half a, b;
#if defined(__x86_64__)
    if (in_pairs) {
        if (!open_two(a_in, a_size, a, b_in, b_size, b, order1::fill_row_avx512)) return false;
        decode_together(a, out, na, b, out + na, n - na);
        return true;
    }
#endif
    if (!open_two(a_in, a_size, a, b_in, b_size, b, order1::fill_row_scalar)) return false;
    finish_half(a, out, na, 0);
    finish_half(b, out + na, n - na, 0);
    return true;
}

}  // namespace

bool rans_order0_halves_pay(const uint8_t* in, size_t n) {
    return n >= order0_halves::kMinBytes && std::memcmp(in, in + 1, n - 1) != 0;
}

bool rans_order0_encode_halves(uint8_t* in, unsigned n, uint8_t* out, unsigned* out_size, RansEncodeKernel encode) {
    const auto na = static_cast<unsigned>(order0_halves::first_half_bytes(n)), nb = n - na;
    const unsigned room = *out_size;
    if (na == 0 || room < kMaxUint7Bytes) return false;
    // The first half's stream after room for its length, then moved up to where the length ends.
    unsigned a_size = room - kMaxUint7Bytes;
    if (!encode(in, na, out + kMaxUint7Bytes, &a_size) || a_size >= na) return false;
    const unsigned length_bytes = put_uint7(out, a_size);
    std::memmove(out + length_bytes, out + kMaxUint7Bytes, a_size);
    const unsigned used = length_bytes + a_size;
    unsigned b_size = room - used;
    if (!encode(in + na, nb, out + used, &b_size) || b_size >= nb) return false;
    *out_size = used + b_size;
    return true;
}

bool rans_order0_pairs_available() { return cpu::avx512_vbmi2(); }

unsigned char* rans_order0_decode_one(unsigned char* in, unsigned in_size, unsigned char* out, unsigned n) {
#if defined(__x86_64__)
    Half h;
    h.table = half_tables().slots[0];
    if (!open_half(in, in_size, h, order1::fill_row_avx512)) return nullptr;
    size_t steps = 0;
    if (h.single_symbol < 0) single_steps(h, out, steps = n / kLanes);
    finish_half(h, out, n, steps);
    return out;
#else
    (void)in, (void)in_size, (void)out, (void)n;
    return nullptr;
#endif
}

bool rans_order0_decode_two(const uint8_t* a_in, unsigned a_size, uint8_t* a_out, unsigned na, const uint8_t* b_in,
                            unsigned b_size, uint8_t* b_out, unsigned nb) {
#if defined(__x86_64__)
    Half a, b;
    if (!open_two(a_in, a_size, a, b_in, b_size, b, order1::fill_row_avx512)) return false;
    decode_together(a, a_out, na, b, b_out, nb);
    return true;
#else
    (void)a_in, (void)a_size, (void)a_out, (void)na, (void)b_in, (void)b_size, (void)b_out, (void)nb;
    return false;
#endif
}

bool rans_order0_decode_halves(const uint8_t* in, unsigned in_size, uint8_t* out, unsigned n, bool in_pairs,
                               RansDecodeKernel decode_half) {
    uint32_t a_size = 0;
    const uint8_t* p = in;
    if (n < 2 * kLanes || !read_uint7(p, in + in_size, a_size) || a_size > static_cast<size_t>(in + in_size - p))
        return false;
    const uint8_t* const b = p + a_size;
    const auto b_size = static_cast<unsigned>(in + in_size - b);
    const auto na = static_cast<unsigned>(order0_halves::first_half_bytes(n));
    // (route_of in rans_kernels.cpp tells rans_decodes_within the same condition: change both.)
    if (in_pairs || !decode_half) return decode_own(p, a_size, b, b_size, out, n, in_pairs);
    return decode_half(const_cast<uint8_t*>(p), a_size, out, na) == out &&
           decode_half(const_cast<uint8_t*>(b), b_size, out + na, n - na) == out + na;
}

}  // namespace stz
