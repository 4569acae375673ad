// k log2 k for the entropy estimates of the codecs (rans: whether a plane is worth coding and
// which order pays; qctx: whether a model per channel pays, which plane is smaller), by
// sum c log2(n / c) = n log2 n - sum c log2 c. Tabulated for the small counts that most
// symbols and pairs have: one log2 per used symbol or pair was a third of an estimate's time
// on small planes. The table is built once; klogk_table() is called once per estimate, not
// per count (a function-local static tests its guard on every call).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace stz {

inline constexpr size_t kKlogkTable = 4096;

inline const double* klogk_table() {
    static const std::vector<double> table = [] {
        std::vector<double> t(kKlogkTable);
        for (size_t k = 1; k < t.size(); ++k) t[k] = double(k) * std::log2(double(k));
        return t;
    }();
    return table.data();
}

inline double klogk(const double* table, uint64_t k) { return k < kKlogkTable ? table[k] : double(k) * std::log2(double(k)); }

// Counts underestimate a source's entropy by about (symbols used - 1) / (2 ln 2) bits per
// context (Miller-Madow): this many bits per symbol used beyond the first, added back by the
// estimates that compare orders or models on a sample.
inline constexpr double kMillerMadowBits = 0.5 / 0.6931471805599453;

}  // namespace stz
