// rans:1 codes order-1 only where it pays: on bytes independent of their predecessor it falls
// back to order-0 (its larger tables would cost more than they save), on bytes that follow
// their predecessor it keeps order-1.
#include <catch2/catch.hpp>

#include <algorithm>

#include "codecs/pipeline.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

size_t coded_size(const char* spec, const Bytes& in) {
    Pipeline p = parse_pipeline(spec, DataShape{});
    EncodedChunk e = encode_pipeline(p, in);
    REQUIRE(decode_pipeline(p, e.payload, e.stage_input_sizes) == in);
    return e.payload.size();
}

}  // namespace

TEST_CASE("rans:1 falls back to order-0 where order-1 tables do not pay, and keeps order-1 where they do", "[codec]") {
    // Skewed bytes, each drawn independently (a quant plane of an untrained model): 200 KB.
    Bytes noise = stztest::random_bytes(200000, 5), independent(200000);
    for (size_t i = 0; i < independent.size(); ++i) independent[i] = static_cast<uint8_t>((noise[i] % 64) * (noise[i] % 3));
    const size_t o0 = coded_size("rans:0", independent), o1 = coded_size("rans:1", independent);
    CHECK(o1 <= o0 + 16);  // order-1's tables for 256 contexts would add kilobytes
    // Bytes that depend on the previous one (a channel's run of similar values): a random walk
    // over 64 values (order-0 about 6 bits a byte, order-1 about 2.3).
    Bytes chained(200000);
    chained[0] = 32;
    for (size_t i = 1; i < chained.size(); ++i)
        chained[i] = static_cast<uint8_t>(std::clamp(int(chained[i - 1]) + int(noise[i] % 5) - 2, 0, 63));
    CHECK(coded_size("rans:1", chained) < coded_size("rans:0", chained) * 3 / 4);
}
