// A set of byte values as four 64-bit words, for the rANS coders' frequency tables: the symbols
// present are visited in ascending order by their bits, not by testing all 256 values (a branch
// per value, mispredicted at every edge of a run of present symbols: on the small planes of a
// quantised cache, 64-512 bytes each, building and reading the tables that way cost as much as
// coding the bytes).
#pragma once

#include <bit>
#include <cstdint>

namespace stz {

struct SymbolSet {
    uint64_t word[4] = {};

    // The values whose count is not 0 (no branch on a count).
    static SymbolSet of_nonzero(const uint32_t* count) {
        SymbolSet set;
        for (unsigned w = 0; w < 4; ++w) {
            uint64_t bits = 0;
            for (unsigned b = 0; b < 64; ++b) bits |= uint64_t{count[64 * w + b] != 0} << b;
            set.word[w] = bits;
        }
        return set;
    }
    void add(unsigned s) { word[s >> 6] |= uint64_t{1} << (s & 63); }
    bool has(unsigned s) const { return (word[s >> 6] >> (s & 63)) & 1; }
    unsigned size() const {
        return static_cast<unsigned>(std::popcount(word[0]) + std::popcount(word[1]) + std::popcount(word[2]) +
                                     std::popcount(word[3]));
    }
    // The first value from s (s <= 256) that is in the set (`in`) or not in it; 256 if none.
    unsigned first_from(unsigned s, bool in) const {
        for (unsigned w = s >> 6; w < 4; ++w) {
            const uint64_t bits = (in ? word[w] : ~word[w]) & (~uint64_t{0} << (w == s >> 6 ? s & 63 : 0));
            if (bits) return 64 * w + static_cast<unsigned>(std::countr_zero(bits));
        }
        return 256;
    }
    // f(value) for every value in the set, ascending.
    template <class F>
    void each(F&& f) const {
        for (unsigned w = 0; w < 4; ++w)
            for (uint64_t bits = word[w]; bits; bits &= bits - 1) f(64 * w + static_cast<unsigned>(std::countr_zero(bits)));
    }
};

}  // namespace stz
