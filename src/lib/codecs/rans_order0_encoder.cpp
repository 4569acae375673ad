// htscodecs' order-0 X32 stream (rans_order0_encoder.hpp), written by statezip.
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

#include "rans_encoder_parts.hpp"

namespace stz {

using rans_enc::kLanes;

bool rans_order0_encoder_available() { return rans_enc::steps_order0_vbmi_available(); }

unsigned char* rans_order0_encode_x32(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size) {
#if defined(__x86_64__)
    if (n == 0) return nullptr;
    // Four count tables in turn: a run of one byte then waits on four counters, not one.
    uint32_t counts[4][256] = {};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) ++counts[0][in[i]], ++counts[1][in[i + 1]], ++counts[2][in[i + 2]], ++counts[3][in[i + 3]];
    for (; i < n; ++i) ++counts[0][in[i]];
    uint32_t count[256];
    for (int j = 0; j < 256; ++j) count[j] = counts[0][j] + counts[1][j] + counts[2][j] + counts[3][j];
    std::array<uint8_t, 3 * 256 + 1> table;
    uint32_t entry[256];
    const auto table_size = static_cast<size_t>(rans_enc::put_order0_table(count, n, table.data(), entry) - table.data());
    constexpr size_t kStateBytes = 4 * kLanes;
    if (*out_size < table_size + kStateBytes) return nullptr;
    const uint32_t* const rcp = rans_enc::reciprocals().rcp.data();
    rans_enc::Order0Planes planes{};
    for (int s = 0; s < 256; ++s) {
        if (!count[s]) continue;
        const uint32_t e = entry[s], r = rcp[e >> rans_enc::kFreqAt];
        for (int b = 0; b < 4; ++b)
            planes.entry[b][s] = static_cast<uint8_t>(e >> 8 * b), planes.rcp[b][s] = static_cast<uint8_t>(r >> 8 * b);
    }

    // The words downwards from the end of the room, above the table and the states.
    const uint8_t* const lowest = out + table_size + kStateBytes;
    uint8_t* w = out + *out_size;
    auto put = [&](uint32_t& x, uint8_t byte) {
        return rans_enc::put_symbol_within<rans_enc::kShiftFull>(x, w, entry[byte], rcp, lowest);
    };
    uint32_t x[kLanes];
    std::fill(x, x + kLanes, rans_enc::kStateLow);
    // Step s's 32 bytes one lane at a time, lane 31 first.
    auto put_step = [&](size_t s) {
        for (int lane = kLanes - 1; lane >= 0; --lane)
            if (!put(x[lane], in[s * kLanes + lane])) return false;
        return true;
    };
    // The n mod 32 bytes after the last whole step, the last first; then an odd top step alone;
    // then pairs of steps, and one step at a time where the room left is too tight for a pair.
    size_t steps = n / kLanes;
    for (size_t at = n; at > steps * kLanes; --at)
        if (!put(x[(at - 1) % kLanes], in[at - 1])) return nullptr;
    if (steps % 2 && !put_step(--steps)) return nullptr;
    for (steps = 2 * rans_enc::steps_order0_vbmi(in, steps / 2, planes, x, w, lowest); steps;)
        if (!put_step(--steps)) return nullptr;
    rans_enc::put_states(w, x, kLanes);
    const auto coded = static_cast<size_t>(out + *out_size - w);
    std::memcpy(out, table.data(), table_size);
    std::memmove(out + table_size, w, coded);
    *out_size = static_cast<unsigned>(table_size + coded);
    return out;
#else
    (void)in, (void)n, (void)out, (void)out_size;
    return nullptr;
#endif
}

}  // namespace stz
