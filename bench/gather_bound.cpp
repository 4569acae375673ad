// What one AVX-512 gather of sixteen 32-bit slots costs on this CPU: the bound on statezip's
// order-0 rANS decoding, whose step of 32 lanes of two streams (64 bytes) is four such gathers
// from 4,096-slot tables (rans_order0_halves.cpp). Chains of dependent gathers (each one's slots
// from the last one's values, as a lane's next slot comes from its state), 1, 4 and 8 of them
// side by side; and sixteen dependent scalar loads side by side, for comparison.
//
//   g++ -O2 -o gather_bound bench/gather_bound.cpp && ./gather_bound
//
// Prints ns per gather: with 4 or 8 chains in flight, the gathers' throughput; with one, their
// latency. (bench/PROFILE.md, forty-first pass: ~6 ns a gather in throughput on the Zen 5 guest,
// so 64 bytes of order-0 symbols take at least ~24 ns: 2.7 GB/s.)
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr long kSteps = 20000000;
constexpr unsigned kSlotMask = 0xfff;

template <int Chains>
__attribute__((target("avx512f"))) double ns_per_gather(const uint32_t* table) {
    __m512i chain[Chains];
    for (int c = 0; c < Chains; ++c)
        chain[c] = _mm512_add_epi32(_mm512_set_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16),
                                    _mm512_set1_epi32(100 * c));
    const __m512i mask = _mm512_set1_epi32(kSlotMask);
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < kSteps; ++i)
        for (int c = 0; c < Chains; ++c) chain[c] = _mm512_i32gather_epi32(_mm512_and_epi32(chain[c], mask), table, 4);
    const auto t1 = std::chrono::steady_clock::now();
    __m512i sum = chain[0];
    for (int c = 1; c < Chains; ++c) sum = _mm512_add_epi32(sum, chain[c]);
    volatile int sink = _mm512_reduce_add_epi32(sum);
    (void)sink;
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / kSteps / Chains;
}

double ns_per_16_scalar_loads(const uint32_t* table) {
    uint32_t s[16];
    for (uint32_t k = 0; k < 16; ++k) s[k] = k * 77;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < kSteps; ++i)
        for (uint32_t k = 0; k < 16; ++k) s[k] = table[s[k] & kSlotMask] + k;
    const auto t1 = std::chrono::steady_clock::now();
    volatile uint32_t sink = 0;
    for (uint32_t k = 0; k < 16; ++k) sink = sink + s[k];
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / kSteps;
}

}  // namespace

int main() {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) {
        std::puts("no AVX-512 on this CPU");
        return 0;
    }
    std::vector<uint32_t> table(kSlotMask + 1);  // 16 KB, as a decoder's slot table
    for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<uint32_t>(i * 2654435761u) & kSlotMask;
    for (int run = 0; run < 3; ++run)
        std::printf("ns per gather of 16: 1 chain %.2f, 4 chains %.2f, 8 chains %.2f; 16 scalar loads %.2f\n",
                    ns_per_gather<1>(table.data()), ns_per_gather<4>(table.data()), ns_per_gather<8>(table.data()),
                    ns_per_16_scalar_loads(table.data()));
}
