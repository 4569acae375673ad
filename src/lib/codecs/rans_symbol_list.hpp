// Parts of htscodecs' rANS frequency tables that its order-0 and order-1 streams share, for
// statezip's own coders (rans_order1_decoder.cpp, rans_order0_halves.cpp, rans_order0_small.cpp):
// counts as uint7, the list of the symbols present, and an order-0 table of both.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "symbol_set.hpp"
#include "uint7.hpp"

namespace stz {

// A uint7 at `p` (uint7.hpp), `p` moved past it.
inline bool read_uint7(const uint8_t*& p, const uint8_t* end, uint32_t& v) {
    const unsigned n = get_uint7(p, static_cast<size_t>(end - p), v);
    p += n;
    return n != 0;
}

// The symbols in ascending order (a symbol listed twice counts once, as in the library).
inline bool read_symbol_list(const uint8_t*& p, const uint8_t* end, std::array<uint8_t, 256>& list, int& count) {
    if (p >= end) return false;
    SymbolSet present;
    int sym = *p++, run = 0;
    do {
        present.add(static_cast<unsigned>(sym));
        if (run) {
            --run;
            if (++sym > 255) return false;
        } else {
            if (p >= end) return false;
            if (*p == sym + 1) {
                sym = *p++;
                if (p >= end) return false;
                run = *p++;
            } else {
                sym = *p++;
            }
        }
    } while (sym);
    count = 0;
    present.each([&](unsigned s) { list[count++] = static_cast<uint8_t>(s); });
    return true;
}

// An order-0 frequency table (htscodecs' order-0 streams, 4x16 and X32 alike): the symbol list,
// then a uint7 count for each listed symbol in ascending order, which sum to a power of two up to
// 4096 (scaled up to 4096, as the library reads them). The k symbols with a count into `sym`, their
// scaled counts into `freq`; `p` moved past the table. False where the library refuses the table.
inline bool read_order0_table(const uint8_t*& p, const uint8_t* end, std::array<uint8_t, 256>& sym,
                              std::array<uint32_t, 256>& freq, int& k) {
    constexpr uint64_t kTotal = 4096;
    std::array<uint8_t, 256> list;
    int n_list = 0;
    k = 0;
    if (!read_symbol_list(p, end, list, n_list)) return false;
    uint64_t total = 0;
    for (int i = 0; i < n_list; ++i) {
        uint32_t f = 0;
        if (!read_uint7(p, end, f)) return false;
        if (f == 0) continue;
        sym[k] = list[i], freq[k++] = f;
        total += f;
    }
    if (total == 0 || total > kTotal) return false;
    int scale = 0;
    while ((total << scale) < kTotal) ++scale;
    if ((total << scale) != kTotal) return false;
    for (int i = 0; i < k; ++i) freq[i] <<= scale;
    return true;
}

}  // namespace stz
