// An order-1 decoder of htscodecs' 32-way rANS streams (the kernel part of RANS_ORDER_X32 | 1),
// used for small planes instead of the library's AVX-512 and AVX2 ones: every stream decodes to
// the same bytes, and the set-up costs a fraction. It also reads statezip's own streams
// (rans_order1_decoder.hpp), of any size: grouped contexts, where a row is the previous symbol
// >> s, and planes in two halves, whose two sets of lanes it steps together.
//
// Why: htscodecs rebuilds, on every call, a 32-bit entry for each of the 4,096 (or 1,024) slots
// of every context, one slot at a time, after walking each context's 256 possible symbols
// several times over. The default preset codes order 1 on planes of 0.1-0.3 MB (exponent
// planes, quant planes of small models), where that set-up was 70 % of the library's decoding
// time (perf annotate, a 175 KB quant plane of a trained q8_0 cache: 630 us a call, 278 MB/s),
// and order-1 decoding a third of the default's decompression of the corpus. Here each
// context's frequencies are read once, over the symbols present only, and its slots filled a
// vector at a time; the lanes then decode as in the library (sixteen lanes a gather with
// AVX-512, eight with AVX2: rans_order1_steps.cpp) into a buffer in step order, which one
// transposition turns into the lanes' runs.
//
// The stream, as htscodecs writes it (its rANS_static32x16pr.c; the CRAM 3.1 codecs):
//   u8      table shift (10 or 12) << 4 | 1 if the frequency table is packed
//   packed: uint7 table bytes, uint7 packed bytes, then the table by order-0 rANS 4x16
//   table   the contexts present (a symbol list), then for each of them its frequencies over
//           those symbols: a uint7 each, a 0 followed by a count of further 0s; a context's
//           frequencies sum to a power of two up to 1 << shift (scaled up to it)
//   states  32 u32, little-endian; then the 16-bit words the states take in turn, lane by
//           lane, step by step
// Lane z decodes out[z * (n / 32) ...] for n / 32 bytes, lane 31 then the n % 32 bytes left at
// the end; every lane's first context is 0. uint7: uint7.hpp. Symbol list: the first symbol,
// then each next one, where a symbol one above the one before is followed by a count of further
// consecutive symbols; a 0 ends the list.
#include "rans_order1_decoder.hpp"

#include <array>
#include <memory>

#include "byte_transpose.hpp"
#include "cpu_features.hpp"
#include "rans_order0_small.hpp"
#include "rans_order1_form.hpp"
#include "rans_order1_lanes.hpp"
#include "rans_symbol_list.hpp"

namespace stz {
namespace {

using order1::kLanes;
using order1::kStateLow;
using order1::LaneStates;
constexpr int kMaxShift = 12;
// A packed table larger than this is no table the library writes (256 contexts x 256 frequencies of
// at most two bytes, plus the symbol list: about 130 KB).
constexpr uint32_t kMaxTableBytes = 1u << 20;

// Slot entries: (frequency - 1) << (shift + 8) | the slot's offset within its symbol << 8 | the
// symbol. A table of 256 rows of 1 << shift entries, kept per thread (4 MiB), zeroed once: a row no
// stream filled decodes garbage (a corrupt stream's, which the chunk's checksum rejects), never an
// undefined read. In huge pages (make_large_table): from operator new its
// 1,024 small pages faulted in one by one on every thread's first order-1 stream, ~11 ms on a
// virtual machine, where a small file's whole decompression takes less.
uint32_t* slot_table() {
    struct Slots {
        uint32_t entries[(256u << kMaxShift) + order1::kFillOverrun];
    };
    thread_local const auto table = make_large_table<Slots>();
    return table->entries;
}

// One context's frequencies over the symbols present, scaled to 1 << shift, into its row: read into
// a list of the symbols that have one (a run of zeros skipped whole), then the slots filled.
bool read_context(const uint8_t*& p, const uint8_t* end, const std::array<uint8_t, 256>& symbols, int n_symbols,
                  int shift, uint32_t* row, order1::FillFn fill) {
    if (p >= end) return false;
    std::array<uint8_t, 256> sym;
    std::array<uint32_t, 256> freq;
    const uint32_t total_max = 1u << shift;
    uint64_t total = 0;
    int k = 0, n = 0;
    const uint8_t* q = p;  // a local: the stores into the lists cannot change it
    // Symbol n's count at q, q moved past it (and past a run's length): false if malformed.
    const auto read_one = [&] {
        uint32_t f = *q;
        if (f < 0x80) {
            ++q;
        } else if (!read_uint7(q, end, f) || f > total_max) {
            return false;
        }
        if (f == 0) {
            if (q >= end) return false;
            n += *q++;  // that many more symbols without this context
        } else {
            sym[k] = symbols[n], freq[k++] = f, total += f;
        }
        ++n;
        return true;
    };
    // While two bytes remain: a one-byte count without a branch on whether it is 0 (a run of
    // absent symbols follows, its length in the next byte). Rows mix the two at random: on the
    // tables of 4-bit quants' byte pairs (128 rows over 256 symbols) that branch, mispredicted,
    // held the reading up.
    while (n < n_symbols && end - q >= 2) {
        const uint32_t f = q[0];
        if (f >= 0x80) {
            if (!read_one()) return false;
            continue;
        }
        const uint32_t absent = f == 0;
        sym[k] = symbols[n], freq[k] = f;
        k += static_cast<int>(absent ^ 1), total += f;
        n += 1 + static_cast<int>(q[1] & (0u - absent));
        q += 1 + absent;
    }
    while (n < n_symbols && q < end)  // past the end the rest are 0 (as the library reads it)
        if (!read_one()) return false;
    p = q;
    if (total == 0) return true;  // a context no symbol follows: no row
    if (total > total_max) return false;
    int scale = 0;
    while ((total << scale) < total_max) ++scale;
    uint32_t at = 0;
    for (int i = 0; i < k; ++i) {
        freq[i] <<= scale;
        if (freq[i] > total_max - at) return false;
        at += freq[i];
    }
    if (at != total_max) return false;
    fill(row, sym.data(), freq.data(), k, shift);
    return true;
}

bool read_table(const uint8_t*& p, const uint8_t* end, int shift, uint32_t* table, order1::FillFn fill) {
    std::array<uint8_t, 256> symbols;
    int n_symbols = 0;
    if (!read_symbol_list(p, end, symbols, n_symbols)) return false;
    for (int i = 0; i < n_symbols; ++i)
        if (!read_context(p, end, symbols, n_symbols, shift, table + (size_t(symbols[i]) << shift), fill)) return false;
    return true;
}

// The lanes' symbols, decoded in step order into `by_step`, put in their places: lane z's run
// at out + z * steps; then lane 31's last n % 32 symbols.
template <int Shift>
void lanes_out(uint8_t* by_step, size_t steps, const uint32_t* table, LaneStates& s, uint8_t* out, size_t n,
               const uint8_t* p, const uint8_t* end, int context_shift) {
    transpose_bytes<true>(by_step, steps, kLanes, [&](uint64_t lane) { return out + lane * steps; });
    for (size_t i = kLanes * steps; i < n; ++i)
        out[i] = order1::decode_one<Shift>(table, s.state[kLanes - 1], s.context[kLanes - 1], p, end, context_shift);
}

template <int Shift>
void decode_lanes(order1::StepsFn steps_fn, const uint32_t* table, LaneStates& s, uint8_t* out, size_t n,
                  const uint8_t* p, const uint8_t* end, int context_shift) {
    const size_t steps = n / kLanes;
    Bytes by_step(steps * kLanes);  // not zero-filled; large ones are kept blocks (large_buffers.hpp)
    steps_fn(table, s, steps, by_step.data(), p, end, context_shift);
    lanes_out<Shift>(by_step.data(), steps, table, s, out, n, p, end, context_shift);
}

// A plane in two halves (rans_order1_form.hpp): both sets of lanes stepped together while the
// pair kernel (null: none on this CPU) can, then each on its own to its last step.
template <int Shift>
void decode_two_halves(order1::StepsFn steps_fn, order1::PairStepsFn pair_fn, const uint32_t* table, LaneStates& a,
                       LaneStates& b, uint8_t* out, size_t n, const uint8_t* pa, const uint8_t* a_end,
                       const uint8_t* pb, const uint8_t* end, int context_shift) {
    const size_t na = order1_form::first_half_bytes(n), steps_a = na / kLanes, steps_b = (n - na) / kLanes;
    Bytes by_step((steps_a + steps_b) * kLanes);  // the first half's steps, then the second's
    uint8_t* const by_a = by_step.data();
    uint8_t* const by_b = by_a + steps_a * kLanes;
    const size_t together = pair_fn ? pair_fn(table, a, b, steps_a, by_a, by_b, pa, a_end, pb, end, context_shift) : 0;
    steps_fn(table, a, steps_a - together, by_a + together * kLanes, pa, a_end, context_shift);
    steps_fn(table, b, steps_b - together, by_b + together * kLanes, pb, end, context_shift);
    lanes_out<Shift>(by_a, steps_a, table, a, out, na, pa, a_end, context_shift);
    lanes_out<Shift>(by_b, steps_b, table, b, out + na, n - na, pb, end, context_shift);
}

// The lanes' 32 initial states at `p` (each at least kStateLow), `p` moved past them.
bool read_states(const uint8_t*& p, const uint8_t* end, LaneStates& s) {
    if (end - p < 4 * kLanes) return false;
    for (int z = 0; z < kLanes; ++z, p += 4) {
        s.state[z] = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
        s.context[z] = 0;
        if (s.state[z] < kStateLow) return false;
    }
    return true;
}

// The frequency table (packed or not) into `table`; `p` then at the states. False if malformed.
bool read_any_table(const uint8_t*& p, const uint8_t* end, int shift, bool packed, uint32_t* table,
                    order1::FillFn fill) {
    if (!packed) return read_table(p, end, shift, table, fill);
    uint32_t table_bytes = 0, packed_bytes = 0;
    if (!read_uint7(p, end, table_bytes) || !read_uint7(p, end, packed_bytes)) return false;
    if (table_bytes > kMaxTableBytes || end - p <= 16 || packed_bytes >= size_t(end - p) - 16) return false;
    Bytes unpacked(table_bytes);
    if (!table_bytes || !rans_order0_small_decode(p, packed_bytes, unpacked.data(), table_bytes, fill)) return false;
    const uint8_t* t = unpacked.data();
    if (!read_table(t, t + table_bytes, shift, table, fill)) return false;
    p += packed_bytes;
    return true;
}

// `grouped`: the stream starts with its form byte (rans_order1_form.hpp): its context shift (1
// to kMaxContextShift; 0 too in two halves) and whether the plane is in two halves.
template <order1::FillFn Fill, order1::StepsFn Steps10, order1::StepsFn Steps12, order1::PairStepsFn Pair10,
          order1::PairStepsFn Pair12>
unsigned char* decode(unsigned char* in, unsigned int in_size, unsigned char* out, unsigned int out_size, bool grouped) {
    if (in_size < 4 * kLanes) return nullptr;
    const uint8_t* p = in;
    const uint8_t* const end = in + in_size;
    const int form = grouped ? *p++ : 0;
    const int context_shift = form & order1_form::kContextShiftBits;
    const bool halves = form & order1_form::kTwoHalves;
    if ((form & ~order1_form::kFormBits) || (grouped && !halves && context_shift == 0)) return nullptr;
    static_assert(order1_form::kContextShiftBits == order1::kMaxContextShift);
    const int shift = *p >> 4;
    const bool packed = *p++ & 1;
    if (shift != 10 && shift != kMaxShift) return nullptr;
    uint32_t* const table = slot_table();
    if (!read_any_table(p, end, shift, packed, table, Fill)) return nullptr;
    LaneStates s;
    if (!halves) {
        if (!read_states(p, end, s)) return nullptr;
        if (shift == kMaxShift) decode_lanes<kMaxShift>(Steps12, table, s, out, out_size, p, end, context_shift);
        else decode_lanes<10>(Steps10, table, s, out, out_size, p, end, context_shift);
        return out;
    }
    // Two halves: the first's lanes fill the uint7 length before them, the second's the rest.
    uint32_t first_bytes = 0;
    LaneStates second;
    if (out_size < 2 * kLanes || !read_uint7(p, end, first_bytes) || first_bytes > size_t(end - p)) return nullptr;
    const uint8_t* const first_end = p + first_bytes;
    const uint8_t* q = first_end;
    if (!read_states(p, first_end, s) || !read_states(q, end, second)) return nullptr;
    if (shift == kMaxShift)
        decode_two_halves<kMaxShift>(Steps12, Pair12, table, s, second, out, out_size, p, first_end, q, end, context_shift);
    else decode_two_halves<10>(Steps10, Pair10, table, s, second, out, out_size, p, first_end, q, end, context_shift);
    return out;
}

}  // namespace

bool rans_order1_avx512_available() { return cpu::avx512(); }
bool rans_order1_avx2_available() { return cpu::avx2(); }

namespace {
// The decoder in each form: its fill and its steps at both table precisions.
constexpr auto decode_avx512 = decode<order1::fill_row_avx512, order1::steps_avx512<10>, order1::steps_avx512<12>,
                                     order1::pair_steps_avx512<10>, order1::pair_steps_avx512<12>>;
constexpr auto decode_avx2 = decode<order1::fill_row_avx2, order1::steps_avx2<10>, order1::steps_avx2<12>,
                                   order1::pair_steps_avx2<10>, order1::pair_steps_avx2<12>>;
constexpr auto decode_scalar =
    decode<order1::fill_row_scalar, order1::steps_scalar<10>, order1::steps_scalar<12>, nullptr, nullptr>;
}  // namespace

unsigned char* rans_order1_decode_avx512(unsigned char* in, unsigned int in_size, unsigned char* out, unsigned int out_size) {
    return decode_avx512(in, in_size, out, out_size, false);
}
unsigned char* rans_order1_decode_avx2(unsigned char* in, unsigned int in_size, unsigned char* out, unsigned int out_size) {
    return decode_avx2(in, in_size, out, out_size, false);
}
unsigned char* rans_order1_decode_grouped_avx512(unsigned char* in, unsigned int in_size, unsigned char* out,
                                                 unsigned int out_size) {
    return decode_avx512(in, in_size, out, out_size, true);
}
unsigned char* rans_order1_decode_grouped_avx2(unsigned char* in, unsigned int in_size, unsigned char* out,
                                               unsigned int out_size) {
    return decode_avx2(in, in_size, out, out_size, true);
}
unsigned char* rans_order1_decode_grouped_scalar(unsigned char* in, unsigned int in_size, unsigned char* out,
                                                 unsigned int out_size) {
    return decode_scalar(in, in_size, out, out_size, true);
}

}  // namespace stz
