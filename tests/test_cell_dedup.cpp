// celldedup: repeated columns (cells) of channel-major data become references; dedup: repeated
// rows. The decoders refuse references that are out of order, forward or inconsistent with the
// block.
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

namespace {

// 5 channel rows (not a multiple of the 4 rows compared at a time) of 1100 cells (more than
// one 1024-column copy tile) of `elem`-byte values. source[c] < 0: cell c is unique (random);
// otherwise it repeats cell source[c]. The repeats cut the unique cells into runs of every
// length: long ones (copied as one block per row), short ones, one across the tile boundary.
struct ColumnPattern {
    std::vector<int> source;
    Bytes data, unique_body;  // the block; its unique columns, row by row (the encoder's body)
};

ColumnPattern column_pattern(uint32_t elem) {
    constexpr int kRows = 5, kCols = 1100;
    ColumnPattern p;
    p.source.assign(kCols, -1);
    p.source[100] = 99;                                      // the column just before
    p.source[104] = 3, p.source[105] = 4;                    // far back, consecutive sources
    for (int c = 200; c < 220; ++c) p.source[c] = c - 190;   // 20 repeats of columns 10..29
    p.source[300] = 299, p.source[302] = 301;                // short unique runs between repeats
    for (int c = 500; c < 540; c += 3) p.source[c] = c / 7;  // scattered, sources out of order
    p.source[1019] = 5, p.source[1031] = 1030;               // unique run 1020..1030 crosses the tile
    p.source[kCols - 1] = 0;                                 // the last column repeats the first
    const Bytes noise = random_bytes(size_t{kRows} * kCols * elem, 31 + elem);
    p.data.resize(noise.size());
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c) {
            const int from = p.source[c] < 0 ? c : p.source[c];
            std::memcpy(&p.data[(r * kCols + c) * size_t{elem}], &noise[(r * kCols + from) * size_t{elem}], elem);
        }
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c)
            if (p.source[c] < 0) p.unique_body.insert(p.unique_body.end(), &p.data[(r * kCols + c) * size_t{elem}],
                                                      &p.data[(r * kCols + c) * size_t{elem}] + elem);
    return p;
}

}  // namespace

TEST_CASE("celldedup copies runs of unique columns exactly, for 2- and 4-byte values", "[codec]") {
    for (uint32_t elem : {2u, 4u}) {
        CAPTURE(elem);
        const ColumnPattern cp = column_pattern(elem);
        DataShape s;
        s.kind = elem == 2 ? ElemKind::F16 : ElemKind::F32, s.elem_bytes = elem, s.transposed = true, s.row_bytes = 1100 * elem;
        Pipeline p = parse_pipeline("celldedup", s);
        EncodedChunk e = encode_pipeline(p, cp.data);
        REQUIRE(e.payload.size() > cp.unique_body.size() + 5);
        REQUIRE(e.payload.back() == 1);
        // The body is the unique columns in order, row by row; the references follow it.
        const size_t ref_len = load_le<uint32_t>(e.payload.data() + e.payload.size() - 5);
        CHECK(e.payload.size() - 5 - ref_len == cp.unique_body.size());
        CHECK(std::equal(cp.unique_body.begin(), cp.unique_body.end(), e.payload.begin()));
        CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == cp.data);

        // The first reference is {delta 100, unique column 99}: naming unique column 100 or a
        // far later one (a multi-byte varint) is refused, not read past the body row.
        const size_t refs = cp.unique_body.size();
        REQUIRE(e.payload[refs] == 100);
        REQUIRE(e.payload[refs + 1] == 99);
        Bytes later = e.payload;
        later[refs + 1] = 100;
        CHECK_THROWS_WITH(decode_pipeline(p, later, e.stage_input_sizes), Catch::Contains("later column"));
        Bytes far = e.payload;
        far[refs + 1] = 0xe8;  // unique column 1000: the varint 0xe8 0x07
        far.insert(far.begin() + refs + 2, 0x07);
        store_le<uint32_t>(&far[far.size() - 5], static_cast<uint32_t>(ref_len + 1));
        CHECK_THROWS_WITH(decode_pipeline(p, far, e.stage_input_sizes), Catch::Contains("later column"));
        Bytes short_body = e.payload;
        short_body.erase(short_body.begin(), short_body.begin() + elem);
        CHECK_THROWS_AS(decode_pipeline(p, short_body, e.stage_input_sizes), Error);
    }
}

TEST_CASE("dedup copies runs of unique rows between references exactly, and refuses a body that runs short", "[codec]") {
    // Rows of 18 bytes (a q4_0 block: a V row of a head of 32) and of 64: unique runs of 1 to
    // 40 rows between repeats, a repeat first after the first row and last at the end.
    for (uint64_t row : {18u, 64u}) {
        CAPTURE(row);
        DataShape s;
        s.row_bytes = row;
        const Bytes noise = random_bytes(400 * row, 21);
        Bytes data;
        size_t fresh = 0, n = 0;
        const int runs[] = {1, 3, 40, 2, 17, 1, 5};
        for (int run : runs) {
            data.insert(data.end(), noise.begin() + fresh * row, noise.begin() + (fresh + run) * row), fresh += run, n += run;
            data.insert(data.end(), noise.begin() + (n % fresh) * row, noise.begin() + (n % fresh + 1) * row), ++n;
        }
        Pipeline p = parse_pipeline("dedup", s);
        EncodedChunk e = encode_pipeline(p, data);
        REQUIRE(e.payload.back() == 1);
        const size_t ref_len = load_le<uint32_t>(e.payload.data() + e.payload.size() - 5);
        const size_t body = e.payload.size() - 5 - ref_len;
        CHECK(body == fresh * row);
        CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == data);
        // One unique row fewer in the body: the last run finds too few, whichever run it is.
        Bytes short_body = e.payload;
        short_body.erase(short_body.begin(), short_body.begin() + static_cast<std::ptrdiff_t>(row));
        CHECK_THROWS_WITH(decode_pipeline(p, short_body, e.stage_input_sizes), Catch::Contains("too few unique rows"));
    }
}
