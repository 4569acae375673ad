// celldedup: repeated columns (cells) of channel-major data become references; the decoder
// refuses references that are out of order, forward or inconsistent with the block.
#include <catch2/catch.hpp>

#include "codecs/pipeline.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::random_bytes;

namespace {

// 8 channel rows of 50 f16 cells; cell c repeats cell c % 7 from column 7 on.
Bytes repeated_columns(DataShape& s) {
    s.kind = ElemKind::F16, s.elem_bytes = 2, s.transposed = true, s.row_bytes = 50 * 2;
    Bytes unique = random_bytes(8 * 7 * 2, 9), m;
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 50; ++c) m.insert(m.end(), &unique[(r * 7 + c % 7) * 2], &unique[(r * 7 + c % 7) * 2] + 2);
    return m;
}

}  // namespace

TEST_CASE("celldedup replaces repeated columns of transposed data and restores them", "[codec]") {
    DataShape s;
    Bytes m = repeated_columns(s);
    Pipeline p = parse_pipeline("celldedup", s);
    EncodedChunk e = encode_pipeline(p, m);
    CHECK(e.payload.size() < 8 * 7 * 2 + 43 * 2 + 8);  // 7 unique columns and 43 references
    CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == m);
    // Two channel rows of one chunk (a chunk holds whole rows): still exact.
    Bytes two(m.begin(), m.begin() + 2 * 100);
    EncodedChunk e2 = encode_pipeline(p, two);
    CHECK(decode_pipeline(p, e2.payload, e2.stage_input_sizes) == two);
    // Row-major data (not transposed) is copied: the row dedup handles rows.
    s.transposed = false;
    Pipeline rm = parse_pipeline("celldedup", s);
    CHECK(encode_pipeline(rm, m).payload.size() == m.size() + 1);
}

TEST_CASE("celldedup refuses crafted references", "[codec][corruption]") {
    DataShape s;
    Bytes m = repeated_columns(s);
    Pipeline p = parse_pipeline("celldedup", s);
    EncodedChunk e = encode_pipeline(p, m);
    const size_t ref_len = load_le<uint32_t>(e.payload.data() + e.payload.size() - 5);
    const size_t refs = e.payload.size() - 5 - ref_len;
    auto decode = [&](const Bytes& payload) { return decode_pipeline(p, payload, e.stage_input_sizes); };
    Bytes forward = e.payload;
    forward[refs + 1] = 100;  // first reference names unique column 100 of 7
    CHECK_THROWS_WITH(decode(forward), Catch::Contains("later column"));
    Bytes zero_delta = e.payload;
    zero_delta[refs] = 0;
    CHECK_THROWS_WITH(decode(zero_delta), Catch::Contains("out of order"));
    Bytes past_end = e.payload;
    past_end[refs] = 60;  // column 60 of 50
    CHECK_THROWS_AS(decode(past_end), Error);
    Bytes bad_mode = e.payload;
    bad_mode.back() = 7;
    CHECK_THROWS_WITH(decode(bad_mode), Catch::Contains("bad block"));
    Bytes short_body = e.payload;
    short_body.erase(short_body.begin());  // the unique columns no longer fill whole rows
    CHECK_THROWS_AS(decode(short_body), Error);
}

TEST_CASE("celldedup stays linear on columns that agree on their first rows only", "[codec][hostile]") {
    // 64 channel rows x 20000 cells: every column equal in rows 0-7 and distinct below.
    DataShape s;
    s.kind = ElemKind::F16, s.elem_bytes = 2, s.transposed = true, s.row_bytes = 20000 * 2;
    Bytes m(64 * 20000 * 2, 0);
    for (size_t r = 8; r < 64; ++r)
        for (size_t c = 0; c < 20000; ++c) store_le<uint16_t>(&m[(r * 20000 + c) * 2], static_cast<uint16_t>(c * 3 + r));
    Pipeline p = parse_pipeline("celldedup", s);
    EncodedChunk e = encode_pipeline(p, m);  // quadratic: 2e8 column comparisons; bounded: 1.6e5
    CHECK(e.payload.size() == m.size() + 1);  // no repeats: copied
    CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == m);
}
