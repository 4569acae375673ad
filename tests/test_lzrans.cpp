// lzrans (lz_or_rans_codec.cpp): a block by zstd where its 16-byte probes repeat, else by
// order-0 rANS, the first byte naming the coder. Which coder a block gets, the same bytes back
// through every decode entry point, and damaged tags and bodies refused.
#include <catch2/catch.hpp>
#include <random>

#include "codecs/codec.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

const Codec& lzrans() { return *find_codec("lzrans"); }
Bytes params(const std::string& level = "1") { return lzrans().make_params({level}, DataShape{}); }

Bytes random_values(size_t n, unsigned values, uint32_t seed) {
    std::mt19937 rng(seed);
    Bytes b(n);
    for (auto& v : b) v = static_cast<uint8_t>(rng() % values);
    return b;
}

// `unit` copied until n bytes: every probe after the first copy repeats.
Bytes repeated(const Bytes& unit, size_t n) {
    Bytes b;
    while (b.size() < n) b.insert(b.end(), unit.begin(), unit.end());
    b.resize(n);
    return b;
}

Bytes encoded(const Bytes& in, const Bytes& p = params()) {
    Bytes out;
    lzrans().encode(in, p, out);
    return out;
}

// The block decoded by decode, decode_into and decode_into_slack (with slack around both
// buffers); all three must agree.
Bytes decoded_every_way(const Bytes& block, size_t n, const Bytes& p = params()) {
    Bytes a;
    lzrans().decode(block, p, n, a);
    Bytes b(n);
    lzrans().decode_into(block, p, n, b.data());
    const size_t slack = Codec::kSlack;
    Bytes in(block.size() + 2 * slack), out(n + slack);
    std::copy(block.begin(), block.end(), in.begin() + slack);
    lzrans().decode_into_slack(ByteSpan(in.data() + slack, block.size()), p, n, out.data(), true);
    out.resize(n);
    CHECK(a == b);
    CHECK(a == out);
    return a;
}

constexpr uint8_t kTagRans = 0, kTagZstd = 1;

}  // namespace

TEST_CASE("lzrans codes a near-random block by rANS and a repeating one by zstd", "[codec][lzrans]") {
    const Bytes noise = random_values(200000, 256, 1);
    const Bytes block = encoded(noise);
    CHECK(block[0] == kTagRans);
    CHECK(decoded_every_way(block, noise.size()) == noise);

    // A unit of 4 KB repeated: every probe after the first unit repeats.
    const Bytes turns = repeated(random_values(4096, 256, 2), 200000);
    const Bytes z = encoded(turns);
    CHECK(z[0] == kTagZstd);
    CHECK(z.size() < 6000);  // zstd's matches, not an entropy coder's 200 KB
    CHECK(decoded_every_way(z, turns.size()) == turns);

    // Repeats in 3 % of the block (one 16-byte row in 33 copied from earlier rows): zstd.
    Bytes some = random_values(160000, 256, 3);
    for (size_t row = 100; row < some.size() / 16; row += 33)
        std::copy_n(some.begin() + 16 * (row - 50), 16, some.begin() + 16 * row);
    CHECK(encoded(some)[0] == kTagZstd);
    CHECK(decoded_every_way(encoded(some), some.size()) == some);
}

TEST_CASE("lzrans leaves a plane of few values to rANS, whose 8-byte words repeat by chance", "[codec][lzrans]") {
    // Four values: 8-byte words repeat often (2^16 of them), 16-byte probes almost never.
    const Bytes few = random_values(65536, 4, 4);
    const Bytes block = encoded(few);
    CHECK(block[0] == kTagRans);
    CHECK(block.size() < few.size() / 3);  // about 2 bits a byte
    CHECK(decoded_every_way(block, few.size()) == few);
}

TEST_CASE("lzrans round-trips small, empty and constant blocks at each level", "[codec][lzrans]") {
    for (const char* level : {"1", "3", "-1"}) {
        const Bytes p = params(level);
        CHECK(lzrans().describe(p) == std::string("lzrans:") + level);
        for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{100}, size_t{5000}}) {
            for (const Bytes& in : {random_values(n, 256, 5), Bytes(n, 7)}) {
                const Bytes block = encoded(in, p);
                REQUIRE(!block.empty());
                CHECK(block.size() <= lzrans().max_encoded_size(in.size()));
                CHECK(decoded_every_way(block, in.size(), p) == in);
            }
        }
    }
}

TEST_CASE("lzrans refuses unknown tags, swapped coders, cut blocks and bad parameters", "[codec][lzrans]") {
    const Bytes noise = random_values(50000, 256, 6);
    const Bytes turns = repeated(random_values(1000, 256, 7), 50000);
    const Bytes r = encoded(noise), z = encoded(turns);
    REQUIRE(r[0] == kTagRans);
    REQUIRE(z[0] == kTagZstd);
    Bytes out;
    CHECK_THROWS_AS(lzrans().decode(Bytes{}, params(), 0, out), Error);
    for (uint8_t tag : {uint8_t{2}, uint8_t{0x80}, uint8_t{0xff}}) {
        Bytes bad = r;
        bad[0] = tag;
        CHECK_THROWS_AS(lzrans().decode(bad, params(), noise.size(), out), Error);
    }
    // Each body under the other coder's tag: refused (a rANS mode byte is not a zstd frame, a
    // zstd frame's first byte is no rANS mode).
    Bytes swapped = r;
    swapped[0] = kTagZstd;
    CHECK_THROWS_AS(lzrans().decode(swapped, params(), noise.size(), out), Error);
    swapped = z;
    swapped[0] = kTagRans;
    CHECK_THROWS_AS(lzrans().decode(swapped, params(), turns.size(), out), Error);
    // Cut short, or declared another size: refused.
    for (const Bytes* block : {&r, &z}) {
        const size_t n = block == &r ? noise.size() : turns.size();
        for (size_t keep : {size_t{1}, size_t{2}, block->size() / 2, block->size() - 1}) {
            const Bytes cut(block->begin(), block->begin() + static_cast<long>(keep));
            CHECK_THROWS_AS(lzrans().decode(cut, params(), n, out), Error);
        }
        CHECK_THROWS_AS(lzrans().decode(*block, params(), n + 1, out), Error);
    }
    // zstd's long mode, other parameter sizes and levels out of range are not lzrans parameters.
    CHECK_THROWS_AS(lzrans().check_params(Bytes{1, 1}), Error);
    CHECK_THROWS_AS(lzrans().check_params(Bytes{1}), Error);
    CHECK_THROWS_AS(lzrans().check_params(Bytes{100, 0}), Error);
    CHECK_THROWS_AS(lzrans().make_params({"1", "long"}, DataShape{}), Error);
    CHECK_THROWS_AS(lzrans().make_params({"x"}, DataShape{}), Error);
}

namespace {

// Blocks kept in tests/data, one per coder; their inputs are made again here.
const char* kKeptRans = STATEZIP_TEST_DATA "/lzrans-rans.block";
const char* kKeptZstd = STATEZIP_TEST_DATA "/lzrans-zstd.block";
Bytes kept_rans_input() { return random_values(50000, 40, 21); }
Bytes kept_zstd_input() { return repeated(random_values(1000, 256, 22), 50000); }

}  // namespace

TEST_CASE("lzrans: the blocks kept in tests/data still decode", "[codec][lzrans][golden]") {
    const Bytes r = stztest::read_file(kKeptRans), z = stztest::read_file(kKeptZstd);
    const Bytes r_in = kept_rans_input(), z_in = kept_zstd_input();
    REQUIRE(r.size() > 2);
    REQUIRE(z.size() > 2);
    CHECK(r[0] == kTagRans);
    CHECK(r[1] == 1);  // a coded rANS stream, not stored
    CHECK(z[0] == kTagZstd);
    CHECK(decoded_every_way(r, r_in.size()) == r_in);
    CHECK(decoded_every_way(z, z_in.size()) == z_in);
    // The encoder still chooses the same coders for these inputs (a change of the estimate is a
    // change of the writer: the blocks are then retaken, and the old ones must still decode).
    CHECK(encoded(r_in)[0] == kTagRans);
    CHECK(encoded(z_in)[0] == kTagZstd);
}
