// Gathering small sections: `planes` over records (a head of other bytes, then a body of
// rows) and the plan that writes a run of K layers [hdr, K] x n as one section of records.
#include <catch2/catch.hpp>
#include <random>

#include "container.hpp"
#include "pipeline.hpp"
#include "plan.hpp"
#include "synth.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::random_bytes;

namespace {

// f16 bit patterns whose exponent depends on the channel (as K values do), random mantissas.
Bytes channel_floats16(size_t rows, size_t cols, uint64_t seed) {
    std::mt19937_64 g(seed);
    Bytes b;
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) {
            unsigned e = 10 + c % 5 + (g() % 4 == 0 ? g() % 3 : 0);
            append_le<uint16_t>(b, static_cast<uint16_t>((g() & 1) << 15 | e << 10 | (g() & 0x3ff)));
        }
    return b;
}

DataShape f16_rows(uint64_t cols) {
    DataShape s;
    s.kind = ElemKind::F16;
    s.elem_bytes = 2;
    s.row_bytes = 2 * cols;
    return s;
}

DataShape q8_rows(uint64_t blocks) {
    DataShape s;
    s.kind = ElemKind::Block;
    s.elem_bytes = 34;
    s.block_head = 2;
    s.row_bytes = 34 * blocks;
    return s;
}

}  // namespace

// The planes stage existed before records: its parameters and output for shapes without
// records must stay byte for byte what they were (files written with id 13 still decode, and
// the same input still gives the same file). Hashes taken from the code before records.
TEST_CASE("planes output without records is unchanged", "[gather]") {
    const Bytes f16 = channel_floats16(500, 32, 21);
    Bytes q8 = random_bytes(34 * 8 * 40, 22);
    struct Case {
        const char* spec;
        DataShape shape;
        const Bytes* data;
    };
    const Case cases[] = {
        {"planes(top=rans:1,rest=store)", f16_rows(32), &f16},
        {"planes:rm(top=zstd:1,rest=store)", f16_rows(32), &f16},
        {"planes:rm(top=rans:1,rest=zstd:3)", f16_rows(32), &f16},
        {"planes(top=rans:1,q=zstd:3,rest=zstd:3)", q8_rows(8), &q8},
        {"planes:rm(all=zstd:3)", q8_rows(8), &q8},
    };
    const uint64_t expected[] = {0x58e254a7819d2cc1ull, 0x5790256c792821f8ull, 0x263c803909953270ull,
                                 0xc73c2152ddf35cf4ull, 0xbb32188b5db8588cull};
    for (size_t i = 0; i < std::size(cases); ++i) {
        const Case& c = cases[i];
        INFO(c.spec);
        Pipeline p = parse_pipeline(c.spec, c.shape);
        Bytes all = p.stages[0].params;
        append_bytes(all, encode_pipeline(p, *c.data).payload);
        CHECK(hash64(all) == expected[i]);
    }
}
