// The Huffman coder (rans mode 2): exact round trips over sizes and distributions, complete
// length-limited codes, the rans codec's choice between it and rANS, and streams it could not
// have written rejected with an error, never a crash or a wrong size.
#include <catch2/catch.hpp>

#include <cmath>

#include "codecs/codec.hpp"
#include "codecs/huffman.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

// n bytes where value v has weight ~ 1 / (v + 1)^skew (skew 0: uniform over `values`).
Bytes zipf_bytes(size_t n, int values, double skew, uint64_t seed) {
    std::vector<double> cumulative(values);
    double sum = 0;
    for (int v = 0; v < values; ++v) cumulative[v] = sum += 1 / std::pow(v + 1, skew);
    const Bytes noise = stztest::random_bytes(4 * n + 4, seed);
    Bytes out(n);
    for (size_t i = 0; i < n; ++i) {
        uint32_t r;
        std::memcpy(&r, noise.data() + 4 * i, 4);
        const double x = r / 4294967296.0 * sum;
        out[i] = static_cast<uint8_t>(std::lower_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin());
    }
    return out;
}

Bytes huffman_encode(const Bytes& in) {
    const auto lengths = huffman::code_lengths(huffman::histogram(in));
    Bytes out(huffman::encode_bound(in.size()));
    out.resize(huffman::encode(in, lengths, out.data()));
    return out;
}

// The rans codec's own block for `plane` (order 0).
Bytes rans0_block(const Bytes& plane) {
    const Codec* rans = find_codec("rans");
    REQUIRE(rans);
    Bytes coded;
    rans->encode(plane, rans->make_params({"0"}, DataShape{}), coded);
    return coded;
}

}  // namespace

TEST_CASE("huffman round-trips every size and distribution exactly", "[codec][huffman]") {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{19}, size_t{64}, size_t{1000}, size_t{65537}, size_t{300001}})
        for (double skew : {0.0, 0.7, 1.5, 4.0})
            for (int values : {1, 2, 17, 256}) {
                const Bytes in = zipf_bytes(n, values, skew, n * 31 + values);
                const auto h = huffman::histogram(in);
                const auto lengths = huffman::code_lengths(h);
                const Bytes coded = huffman_encode(in);
                INFO("n " << n << " skew " << skew << " values " << values);
                CHECK(coded.size() <= huffman::encoded_size(h, lengths));
                CHECK(coded.size() + 3 >= huffman::encoded_size(h, lengths));
                Bytes back(n, 0x5A);
                huffman::decode(coded, back.data(), n);
                CHECK(back == in);
            }
}

TEST_CASE("huffman code lengths are complete and limited, also for counts that want deep codes", "[codec][huffman]") {
    // Fibonacci counts give an unlimited Huffman tree one level deeper per symbol.
    huffman::Histogram h;
    uint32_t a = 1, b = 1;
    for (int s = 0; s < 40; ++s) h.count[s * 5] = a, b = a + b, a = b - a;
    for (int s = 200; s < 256; ++s) h.count[s] = 1;
    const auto lengths = huffman::code_lengths(h);
    uint32_t kraft = 0;
    for (int s = 0; s < 256; ++s) {
        CHECK(lengths.bits[s] <= huffman::kMaxBits);
        CHECK((lengths.bits[s] > 0) == (h.count[s] > 0));
        if (lengths.bits[s]) kraft += 1u << (huffman::kMaxBits - lengths.bits[s]);
    }
    CHECK(kraft == 1u << huffman::kMaxBits);
}

TEST_CASE("rans takes Huffman on near-random planes and rANS on skewed ones, both exact", "[codec][huffman]") {
    const Codec* rans = find_codec("rans");
    const Bytes params = rans->make_params({"0"}, DataShape{});
    // A quant plane: bell-shaped over all 256 values (about 7.3 bits a byte).
    const Bytes noise = stztest::random_bytes(400000, 3);
    Bytes quants(200000);
    for (size_t i = 0; i < quants.size(); ++i) quants[i] = static_cast<uint8_t>(noise[2 * i] / 2 + noise[2 * i + 1] / 2);
    const Bytes skewed = zipf_bytes(200000, 40, 2.0, 11);
    const Bytes near_random_block = rans0_block(quants), skewed_block = rans0_block(skewed);
    CHECK(near_random_block[0] == 2);
    CHECK(skewed_block[0] == 1);
    for (const Bytes* pair : std::initializer_list<const Bytes*>{&quants, &skewed}) {
        const Bytes block = pair == &quants ? near_random_block : skewed_block;
        Bytes back;
        rans->decode(block, params, pair->size(), back);
        CHECK(back == *pair);
        Bytes into(pair->size());
        rans->decode_into(block, params, into.size(), into.data());
        CHECK(into == *pair);
    }
}

TEST_CASE("huffman rejects streams it could not have written", "[codec][huffman][hostile]") {
    const Bytes noise = stztest::random_bytes(20000, 8);
    Bytes in(10000);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(noise[2 * i] / 2 + noise[2 * i + 1] / 2);
    const Bytes coded = huffman_encode(in);
    Bytes out(in.size());
    // A length over the limit, an incomplete code, a stream size past the end, a cut stream.
    Bytes bad = coded;
    bad[0] = 0xFF;
    CHECK_THROWS_AS(huffman::decode(bad, out.data(), out.size()), Error);
    bad = coded;
    for (int k = 0; k < 128; ++k) bad[k] = 0;
    CHECK_THROWS_AS(huffman::decode(bad, out.data(), out.size()), Error);
    bad = coded;
    bad[128 + 3] = 0x7F;
    CHECK_THROWS_AS(huffman::decode(bad, out.data(), out.size()), Error);
    CHECK_THROWS_AS(huffman::decode(ByteSpan(coded).first(coded.size() - 1), out.data(), out.size()), Error);
    CHECK_THROWS_AS(huffman::decode(ByteSpan(coded).first(100), out.data(), out.size()), Error);
    // A longer stream than the symbols need.
    Bytes longer = coded;
    longer.push_back(0);
    CHECK_THROWS_AS(huffman::decode(longer, out.data(), out.size()), Error);
    // Any single flipped byte: an error or n bytes written, never a crash (sanitizer builds
    // and the fuzzers check the memory side).
    for (size_t pos = 0; pos < coded.size(); pos += 7) {
        Bytes flipped = coded;
        flipped[pos] ^= 0x5A;
        try {
            huffman::decode(flipped, out.data(), out.size());
        } catch (const Error&) {
        }
    }
    // Through the codec: a Huffman block whose size cannot be right.
    const Codec* rans = find_codec("rans");
    const Bytes params = rans->make_params({"0"}, DataShape{});
    Bytes block = {2};
    block.insert(block.end(), coded.begin(), coded.end());
    Bytes back;
    CHECK_THROWS_AS(rans->decode(block, params, coded.size(), back), Error);  // no smaller than its output
    CHECK_THROWS_AS(rans->decode(Bytes{2, 0, 0}, params, 1000, back), Error);  // shorter than a header
    rans->decode(block, params, in.size(), back);
    CHECK(back == in);
}
