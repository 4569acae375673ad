// The rANS coders' set of byte values (symbol_set.hpp) against a plain array of flags, and the
// tables built with it (the symbol list's runs, the order-0 table, the order-1 rows) against the
// library's: the same stream bytes for every shape of the set of symbols present, including runs
// that touch 0 and 255, runs of one, two and three, and all 256 values; and a small plane coded from
// the estimate's counts (rans_encode_stream's order0_counts) the same as one that counts itself.
#include <htscodecs/rANS_static4x16.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "codecs/rans_codec.hpp"
#include "codecs/symbol_set.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::kKernelSlack;
using stztest::PaddedInput;

namespace {

// The sets of symbols the tests draw bytes from: each an ascending list.
std::vector<std::pair<std::string, std::vector<uint8_t>>> symbol_shapes() {
    std::vector<std::pair<std::string, std::vector<uint8_t>>> shapes;
    auto range = [](unsigned a, unsigned b) {  // [a, b)
        std::vector<uint8_t> v;
        for (unsigned s = a; s < b; ++s) v.push_back(static_cast<uint8_t>(s));
        return v;
    };
    shapes.push_back({"0 alone", {0}});
    shapes.push_back({"255 alone", {255}});
    shapes.push_back({"0 and 1", {0, 1}});
    shapes.push_back({"254 and 255", {254, 255}});
    shapes.push_back({"0 1 2 and 255", {0, 1, 2, 255}});
    shapes.push_back({"63 64 (a word's edge)", {63, 64}});
    shapes.push_back({"all 256", range(0, 256)});
    shapes.push_back({"one run 100..199", range(100, 200)});
    std::vector<uint8_t> odd, mixed;
    for (unsigned s = 1; s < 256; s += 2) odd.push_back(static_cast<uint8_t>(s));
    shapes.push_back({"every odd value", odd});
    // Runs of 1, 2, 3, 4, ... with gaps of 1, 2, 3, ...
    for (unsigned s = 0, len = 1, gap = 1; s < 256; s += len + gap, ++len, ++gap)
        for (unsigned k = s; k < s + len && k < 256; ++k) mixed.push_back(static_cast<uint8_t>(k));
    shapes.push_back({"runs of growing length", mixed});
    return shapes;
}

// n bytes from `symbols`, skewed towards the first ones, every symbol at least once.
Bytes bytes_of(const std::vector<uint8_t>& symbols, size_t n, uint32_t seed) {
    Bytes out(n);
    uint32_t x = seed;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        const size_t pick = (static_cast<uint64_t>(x >> 8) * (x >> 20)) % (symbols.size() * symbols.size());
        out[i] = symbols[static_cast<size_t>(std::sqrt(static_cast<double>(pick)))];
    }
    for (size_t k = 0; k < symbols.size() && k < n; ++k) out[(k * 7919) % n] = symbols[k];
    return out;
}

}  // namespace

TEST_CASE("symbol set: the members, their order and the runs' ends as a plain array of flags says") {
    for (const auto& [name, symbols] : symbol_shapes()) {
        INFO(name);
        uint32_t count[256] = {};
        bool flag[256] = {};
        for (uint8_t s : symbols) count[s] = 3, flag[s] = true;
        const SymbolSet set = SymbolSet::of_nonzero(count);
        SymbolSet added;
        for (uint8_t s : symbols) added.add(s);
        std::vector<unsigned> visited;
        set.each([&](unsigned s) { visited.push_back(s); });
        CHECK(visited == std::vector<unsigned>(symbols.begin(), symbols.end()));
        CHECK(set.size() == symbols.size());
        for (unsigned s = 0; s <= 256; ++s) {
            if (s < 256) {
                CHECK(set.has(s) == flag[s]);
                CHECK(added.has(s) == flag[s]);
            }
            unsigned in = s, out = s;
            while (in < 256 && !flag[in]) ++in;
            while (out < 256 && flag[out]) ++out;
            CHECK(set.first_from(s, true) == in);
            CHECK(set.first_from(s, false) == out);
        }
    }
}

TEST_CASE("symbol set: order-0 and order-1 streams whose tables list every shape of symbol set are the library's bytes") {
    rans_init_cpu_once();
    for (const auto& [name, symbols] : symbol_shapes())
        for (size_t n : {300, 1000, 1500, 20000})
            for (int flags : {RANS_ORDER_X32 | 0, RANS_ORDER_X32 | 1}) {
                INFO(name << ", " << n << " bytes, flags " << flags);
                const Bytes in = bytes_of(symbols, n, static_cast<uint32_t>(n + symbols.size()));
                PaddedInput src(in, kKernelSlack);
                const unsigned bound = rans_compress_bound_4x16(static_cast<unsigned>(n), flags);
                Bytes lib(bound + kKernelSlack), own(bound + kKernelSlack);
                unsigned lib_len = bound, own_len = bound;
                REQUIRE(rans_compress_to_4x16(src.data(), static_cast<unsigned>(n), lib.data(), &lib_len, flags));
                const bool coded = rans_encode_stream(src.data(), static_cast<unsigned>(n), own.data(), &own_len, flags);
                if (!coded) {  // only where the library stores the bytes raw
                    CHECK((lib[0] & RANS_ORDER_CAT) != 0);
                    continue;
                }
                Bytes back(n + kKernelSlack);
                REQUIRE(rans_decode_stream(own.data(), own_len, back.data(), static_cast<unsigned>(n)));
                CHECK(std::equal(in.begin(), in.end(), back.begin()));
                if (own[0] & kRansOrderGrouped) continue;  // statezip's own form: decoded above
                REQUIRE(own_len == lib_len);
                CHECK(std::equal(lib.begin(), lib.begin() + lib_len, own.begin()));
                // Under 1,001 bytes at order 0 (the 4x16 stream): the same from the counts given.
                if (flags & 1 || n > 1000) continue;
                uint32_t counts[256] = {};
                for (uint8_t b : in) ++counts[b];
                Bytes counted(bound + kKernelSlack);
                unsigned counted_len = bound;
                REQUIRE(rans_encode_stream(src.data(), static_cast<unsigned>(n), counted.data(), &counted_len, flags, counts));
                REQUIRE(counted_len == lib_len);
                CHECK(std::equal(lib.begin(), lib.begin() + lib_len, counted.begin()));
            }
}
