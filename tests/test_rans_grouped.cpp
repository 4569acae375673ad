// Order-1 rANS streams with grouped contexts (rans_order1_decoder.hpp): written by rans_encode_stream
// where they are smaller than htscodecs' stream, the same bytes from every encoder form, read by
// every decoder form (AVX-512, AVX2 and the scalar one any CPU has), and damaged ones refused or
// decoded to garbage inside the output, never read or written outside their buffers. A stream
// kept in tests/data holds the format: a later decoder must still read it.
#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include "codecs/rans_codec.hpp"
#include "codecs/rans_order1_decoder.hpp"
#include "codecs/uint7.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::kKernelSlack;
using stztest::PaddedInput;

namespace {

// Rows of channels whose next value follows the last one's magnitude (the quants of a trained
// model's K, channel by channel): value = clamp(a * previous + noise), as signed bytes, each
// lane's run a channel.
Bytes channel_walks(size_t n, double keep, double noise, uint64_t seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> step(0, noise);
    Bytes b(n);
    double v = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i % 512 == 0) v = step(g);
        v = std::clamp(keep * v + step(g), -127.0, 127.0);
        b[i] = static_cast<uint8_t>(static_cast<int>(std::lround(v)));
    }
    return b;
}

// The rans stream rans_encode_stream writes for `in` at order 1 under `mask` (rans_select_cpu);
// empty where it writes none (no stream smaller than the input).
Bytes stream_under(int mask, const Bytes& in) {
    rans_select_cpu(mask);
    const auto n = static_cast<unsigned>(in.size());
    PaddedInput src(in, kKernelSlack);
    unsigned size = rans_compress_bound_4x16(n, RANS_ORDER_X32 | 1);
    Bytes out(size + kKernelSlack);
    if (!rans_encode_stream(src.data(), n, out.data(), &size, RANS_ORDER_X32 | 1)) return {};
    out.resize(size);
    return out;
}

// `stream` decoded under `mask` into a buffer of exactly n bytes; empty if refused.
Bytes decoded_under(int mask, const Bytes& stream, size_t n) {
    rans_select_cpu(mask);
    std::vector<uint8_t> in(stream.begin(), stream.end());  // exactly its size: ASan sees a read past
    std::vector<uint8_t> out(n);
    if (!rans_decode_stream(in.data(), static_cast<unsigned>(in.size()), out.data(), static_cast<unsigned>(n))) return {};
    return Bytes(out.begin(), out.end());
}

// The masks of the CPU paths this machine has: its best, AVX2 at most, none (scalar).
std::vector<int> masks_here() {
    const int allowed = rans_allowed_cpu_mask();
    return {allowed, allowed & ~(RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512), 0};
}

// The library's own order-1 stream for `in` (what the stream would be without grouping).
size_t library_size(const Bytes& in) {
    PaddedInput src(in, kKernelSlack);
    unsigned size = rans_compress_bound_4x16(static_cast<unsigned>(in.size()), RANS_ORDER_X32 | 1);
    Bytes out(size + kKernelSlack);
    REQUIRE(rans_compress_to_4x16(src.data(), static_cast<unsigned>(in.size()), out.data(), &size, RANS_ORDER_X32 | 1));
    return size;
}

const char* kFixture = STATEZIP_TEST_DATA "/rans-grouped-order1.stream";
// The fixture's plane: channel_walks(kFixtureBytes, 0.9, 12, 7).
constexpr size_t kFixtureBytes = 6000;

}  // namespace

TEST_CASE("rans grouped order-1: smaller where rows of neighbouring values pay, the same bytes and values on every CPU path",
          "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    std::set<int> shifts;
    uint64_t seed = 1;
    for (size_t n : {1001, 4097, 20000, 65543, 300001})
        for (double noise : {3.0, 12.0, 40.0}) {
            const Bytes in = channel_walks(n, 0.9, noise, seed++);
            INFO(n << " bytes, noise " << noise);
            const Bytes stream = stream_under(masks[0], in);
            if (stream.empty() || !(stream[0] & kRansOrderGrouped)) continue;
            CHECK(stream[0] == (RANS_ORDER_X32 | 1 | kRansOrderGrouped));
            CHECK(stream.size() < library_size(in));
            unsigned n_read = 0;
            const unsigned size_bytes = get_uint7(stream.data() + 1, stream.size() - 1, n_read);
            REQUIRE(size_bytes);
            shifts.insert(stream[1 + size_bytes]);
            for (int mask : masks) {
                INFO("mask " << mask);
                CHECK(stream_under(mask, in) == stream);
                CHECK(decoded_under(mask, stream, in.size()) == in);
            }
        }
    rans_select_cpu(rans_allowed_cpu_mask());
    // Grouping was chosen, and at more than one shift (else the planes above need changing).
    CHECK(shifts.size() >= 2);
}

TEST_CASE("rans grouped order-1: damaged streams are refused or decoded inside their buffers", "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    const Bytes in = channel_walks(20000, 0.9, 12, 99);
    const Bytes stream = stream_under(masks[0], in);
    REQUIRE(!stream.empty());
    REQUIRE((stream[0] & kRansOrderGrouped) != 0);
    unsigned n_read = 0;
    const unsigned shift_at = 1 + get_uint7(stream.data() + 1, stream.size() - 1, n_read);
    for (int mask : masks) {
        INFO("mask " << mask);
        // A shift the format does not have, the flag on a stream of another form: refused.
        for (int shift : {0, 8, 255}) {
            Bytes bad = stream;
            bad[shift_at] = static_cast<uint8_t>(shift);
            CHECK(decoded_under(mask, bad, in.size()).empty());
        }
        for (int flags : {RANS_ORDER_X32 | kRansOrderGrouped, 1 | kRansOrderGrouped, RANS_ORDER_X32 | 1 | kRansOrderGrouped | RANS_ORDER_CAT}) {
            Bytes bad = stream;
            bad[0] = static_cast<uint8_t>(flags);
            CHECK(decoded_under(mask, bad, in.size()).empty());
        }
        CHECK(decoded_under(mask, stream, in.size() - 1).empty());
        CHECK(decoded_under(mask, Bytes(stream.begin(), stream.begin() + shift_at + 1), in.size()).empty());
    }
    std::mt19937_64 g(5);
    for (int round = 0; round < 300; ++round) {
        Bytes bad = stream;
        for (int flips = 1 + static_cast<int>(g() % 4); flips > 0; --flips)
            bad[shift_at + g() % (bad.size() - shift_at)] ^= static_cast<uint8_t>(1u << (g() % 8));
        if (round % 3 == 0) bad.resize(shift_at + g() % (bad.size() - shift_at));
        for (int mask : masks) (void)decoded_under(mask, bad, in.size());  // refused or garbage; ASan checks the bounds
    }
    // Nothing of a damaged stream's table reaches the next stream's bytes.
    for (int mask : masks) CHECK(decoded_under(mask, stream, in.size()) == in);
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans grouped order-1: the stream kept in tests/data still decodes", "[entropy][golden]") {
    rans_init_cpu_once();
    std::ifstream f(kFixture, std::ios::binary);
    REQUIRE(f);
    const Bytes stream{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    REQUIRE(stream.size() > 2);
    CHECK((stream[0] & kRansOrderGrouped) != 0);
    const Bytes plane = channel_walks(kFixtureBytes, 0.9, 12, 7);
    for (int mask : masks_here()) {
        INFO("mask " << mask);
        CHECK(decoded_under(mask, stream, plane.size()) == plane);
    }
    rans_select_cpu(rans_allowed_cpu_mask());
}
