// Parts of htscodecs' rANS frequency tables that its order-0 and order-1 streams share, for
// statezip's own decoders (rans_order1_decoder.cpp, rans_order0_halves.cpp): counts as uint7
// and the list of the symbols present.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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
    std::array<bool, 256> present{};
    int sym = *p++, run = 0;
    do {
        present[sym] = true;
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
    for (int i = 0; i < 256; ++i)
        if (present[i]) list[count++] = static_cast<uint8_t>(i);
    return true;
}

}  // namespace stz
