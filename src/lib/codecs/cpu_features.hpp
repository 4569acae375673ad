// The x86 features statezip's own SIMD kernels need, as libgcc detected them at start-up
// (__builtin_cpu_supports reads that: no CPUID per call, which traps under a hypervisor). Every
// kernel form that uses POPCNT asks for it here too. All false off x86-64.
#pragma once

namespace stz::cpu {

#if defined(__x86_64__)
inline bool avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}
inline bool avx512() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
}
inline bool avx512_bw_vl() { return avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"); }
inline bool avx512_vbmi() { return avx512_bw_vl() && __builtin_cpu_supports("avx512vbmi"); }
inline bool avx512_vbmi2() { return avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi2"); }
// An AMD CPU (kernels whose fastest form differs by vendor ask this, not a model list).
inline bool amd() {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd");
}
#else
inline bool avx2() { return false; }
inline bool avx512() { return false; }
inline bool avx512_bw_vl() { return false; }
inline bool avx512_vbmi() { return false; }
inline bool avx512_vbmi2() { return false; }
inline bool amd() { return false; }
#endif

}  // namespace stz::cpu
