// htscodecs' order-0 X32 stream (rans_order0_encoder.hpp), written by statezip.
//
// The table of a large plane is counted on a sample, not on every byte (rans_order0_counts.hpp):
// the full count was 17 % of a random-weight q8_0 cache's compression. The stream is the
// library's form, which every decoder reads; only its table differs from the one the library
// would write. So that a .stz does not depend on the CPU, this encoder runs on every CPU, with
// steps as wide as it allows (the same bytes from each).
//
// Why: the default and fast presets code near-random quant planes at order 0 (the random-weight
// caches' int8 and 4-bit quants), and the library's encoder was 43-46 % of such a cache's
// compression (perf). Its loop gathers each step's entries and reciprocals, two gathers of
// sixteen lanes a half-step, about twelve cycles each on this machine; the order-1 encoder's
// steps run at the same speed for the same reason. For order 0 the table is 256 entries, small
// enough for AVX-512 VBMI's byte permutes to look up sixty-four symbols in about forty
// instructions (rans_encoder_parts' steps_order0_vbmi).
//
// The body (htscodecs' rANS_static32x16pr.c, order 0):
//   table   the order-0 table (rans_encoder_parts' put_order0_table)
//   states  32 u32, little-endian, lane 0's first
//   words   16-bit, little-endian: byte i is coded by lane i mod 32, the last byte first; within
//           a step of 32 bytes lane 31's word is written highest
#include "rans_order0_encoder.hpp"

#include <array>
#include <cstring>
#include <algorithm>

#include "rans_encoder_parts.hpp"
#include "rans_order0_counts.hpp"

namespace stz {

using rans_enc::kLanes;

namespace {

using rans_enc::kShiftFull;

// Steps [0, steps) of the stream's lanes, downwards from the last, into x and below w (not below
// `lowest`): by `wide` (a StepsFn, or null for none), then, where the room left might not hold a
// batch of them, one step at a time. False if the room runs out.
template <class PutStep>
bool code_steps(const uint8_t* in, size_t steps, rans_enc::StepsFn wide, const uint32_t* entry, uint32_t* x,
                uint8_t*& w, const uint8_t* lowest, PutStep&& put_step) {
    constexpr size_t kBatch = 64;  // steps; each writes at most 64 bytes
    while (wide && steps >= kBatch && static_cast<size_t>(w - lowest) >= kBatch * 2 * kLanes + 2 * kLanes) {
        steps -= kBatch;
        // Order 0: a context shift of 8 takes every entry from row 0.
        if (!wide(in + steps * kLanes, kBatch, entry, x, w, lowest, 8)) return false;
    }
    while (steps)
        if (!put_step(--steps)) return false;
    return true;
}

// The stream of n bytes with the steps `wide` (or, with `vbmi`, steps_order0_vbmi's).
unsigned char* encode_x32(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size,
                          rans_enc::StepsFn wide, bool vbmi) {
    if (n == 0) return nullptr;
    uint32_t count[256];
    const uint32_t total = rans_enc::order0_table_counts(in, n, count);
    std::array<uint8_t, 3 * 256 + 1> table;
    uint32_t entry[256] = {};
    const auto table_size = static_cast<size_t>(rans_enc::put_order0_table(count, total, table.data(), entry) - table.data());
    constexpr size_t kStateBytes = 4 * kLanes;
    if (*out_size < table_size + kStateBytes) return nullptr;
    const uint32_t* const rcp = rans_enc::reciprocals().rcp.data();

    // The words downwards from the end of the room, above the table and the states.
    const uint8_t* const lowest = out + table_size + kStateBytes;
    uint8_t* w = out + *out_size;
    auto put = [&](uint32_t& x, uint8_t byte) {
        return rans_enc::put_symbol_within<kShiftFull>(x, w, entry[byte], rcp, lowest);
    };
    uint32_t x[kLanes];
    std::fill(x, x + kLanes, rans_enc::kStateLow);
    // Step s's 32 bytes one lane at a time, lane 31 first.
    auto put_step = [&](size_t s) {
        for (int lane = kLanes - 1; lane >= 0; --lane)
            if (!put(x[lane], in[s * kLanes + lane])) return false;
        return true;
    };
    // The n mod 32 bytes after the last whole step, the last first; then the steps.
    size_t steps = n / kLanes;
    for (size_t at = n; at > steps * kLanes; --at)
        if (!put(x[(at - 1) % kLanes], in[at - 1])) return nullptr;
#if defined(__x86_64__)
    if (vbmi) {
        // An odd top step alone; then pairs of steps, and one step at a time where the room left
        // is too tight for a pair.
        rans_enc::Order0Planes planes{};
        for (int s = 0; s < 256; ++s) {
            if (!count[s]) continue;
            const uint32_t e = entry[s], r = rcp[e >> rans_enc::kFreqAt];
            for (int b = 0; b < 4; ++b)
                planes.entry[b][s] = static_cast<uint8_t>(e >> 8 * b), planes.rcp[b][s] = static_cast<uint8_t>(r >> 8 * b);
        }
        if (steps % 2 && !put_step(--steps)) return nullptr;
        steps = 2 * rans_enc::steps_order0_vbmi(in, steps / 2, planes, x, w, lowest);
    }
#else
    (void)vbmi;
#endif
    if (!code_steps(in, steps, wide, entry, x, w, lowest, put_step)) return nullptr;
    rans_enc::put_states(w, x, kLanes);
    const auto coded = static_cast<size_t>(out + *out_size - w);
    std::memcpy(out, table.data(), table_size);
    std::memmove(out + table_size, w, coded);
    *out_size = static_cast<unsigned>(table_size + coded);
    return out;
}

}  // namespace

bool rans_order0_encoder_available() { return rans_enc::steps_order0_vbmi_available(); }

unsigned char* rans_order0_encode_x32(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size) {
    return encode_x32(in, n, out, out_size, nullptr, true);
}

unsigned char* rans_order0_encode_x32_scalar(unsigned char* in, unsigned int n, unsigned char* out,
                                             unsigned int* out_size) {
    return encode_x32(in, n, out, out_size, rans_enc::steps_scalar<kShiftFull>, false);
}

#if defined(__x86_64__)
unsigned char* rans_order0_encode_x32_avx2(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size) {
    return encode_x32(in, n, out, out_size, rans_enc::steps_avx2<kShiftFull>, false);
}
unsigned char* rans_order0_encode_x32_avx512(unsigned char* in, unsigned int n, unsigned char* out,
                                             unsigned int* out_size) {
    return encode_x32(in, n, out, out_size, rans_enc::steps_avx512<kShiftFull>, false);
}
#else  // the gathering steps are x86-64's; elsewhere the plain steps encode
unsigned char* rans_order0_encode_x32_avx2(unsigned char*, unsigned int, unsigned char*, unsigned int*) { return nullptr; }
unsigned char* rans_order0_encode_x32_avx512(unsigned char*, unsigned int, unsigned char*, unsigned int*) { return nullptr; }
#endif

}  // namespace stz
