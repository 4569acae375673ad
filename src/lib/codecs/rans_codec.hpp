// The rANS codec's CPU-path policy, visible to tests: htscodecs 1.3.0 picks a SIMD kernel per
// call from a process-wide mask, and its SSE4 order-1 decoder mis-decodes valid streams
// (fixed upstream in 1.5.2). statezip installs this mask once, before its first rANS call.
#pragma once

namespace stz {

// RANS_CPU_* bits statezip allows: AVX-512, AVX2 and NEON kernels (and the scalar ones, which
// need no bit); never the SSE4 kernels. A CPU without AVX2 therefore runs the scalar code.
int rans_allowed_cpu_mask();
// Installs rans_allowed_cpu_mask() process-wide, once (std::call_once); every rANS encode and
// decode calls it first, so no thread codes before the mask is in place.
void rans_init_cpu_once();

}  // namespace stz
