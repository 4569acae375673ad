// statezip's own order-0 rANS form (rans_order0_halves.hpp): a plane from kMinBytes in two
// halves, each an htscodecs order-0 X32 stream, written by rans_encode_stream and read with both
// halves' lanes stepped together (AVX-512 with VBMI2), by the library's kernels half by half, or
// by statezip's lanes one at a time: the same bytes on every path, the same stream from every
// encoder, damaged streams refused or decoded inside their buffers. A stream kept in tests/data
// holds the format. Below kMinBytes a plane is one such stream, which the same lanes decode alone
// (rans_order0_decode_one) where the library's decoder would fill its table one slot at a time.
#include <htscodecs/rANS_static4x16.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include "codecs/rans_codec.hpp"
#include "codecs/rans_order0_halves.hpp"
#include "codecs/uint7.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::kKernelSlack;
using stztest::PaddedInput;

namespace {

constexpr int kOrder0 = RANS_ORDER_X32;

// The stream rans_encode_stream writes for `in` at order 0 under `mask`; empty where none.
Bytes stream_under(int mask, const Bytes& in) {
    rans_select_cpu(mask);
    const auto n = static_cast<unsigned>(in.size());
    PaddedInput src(in, kKernelSlack);
    unsigned size = rans_compress_bound_4x16(n, kOrder0);
    Bytes out(size + kKernelSlack);
    if (!rans_encode_stream(src.data(), n, out.data(), &size, kOrder0)) return {};
    out.resize(size);
    return out;
}

// `stream` decoded under `mask` into exactly n bytes (the stream with the library's slack
// after it); empty if refused.
Bytes decoded_under(int mask, const Bytes& stream, size_t n) {
    rans_select_cpu(mask);
    std::vector<uint8_t> in(stream.size() + kKernelSlack);
    std::copy(stream.begin(), stream.end(), in.begin());
    std::vector<uint8_t> out(n);
    if (!rans_decode_stream(in.data(), static_cast<unsigned>(stream.size()), out.data(), static_cast<unsigned>(n))) return {};
    return Bytes(out.begin(), out.end());
}

// Where the halves' body starts (after the flags byte and the size).
size_t body_at(const Bytes& stream) {
    uint32_t n = 0;
    const unsigned size_bytes = get_uint7(stream.data() + 1, stream.size() - 1, n);
    REQUIRE(size_bytes);
    return 1 + size_bytes;
}

// The body after the stream's flags and size, decoded by `decode(body, body_size, out)` into a
// buffer of exactly n bytes (the body alone in its buffer: no slack after it); empty if refused.
template <class Decode>
Bytes decoded_body(const Bytes& stream, size_t n, Decode&& decode) {
    const size_t at = body_at(stream);
    std::vector<uint8_t> body(stream.begin() + static_cast<std::ptrdiff_t>(at), stream.end());
    std::vector<uint8_t> out(n);
    if (!decode(body.data(), static_cast<unsigned>(body.size()), out.data())) return {};
    return Bytes(out.begin(), out.end());
}

// The halves decoded by statezip's own lanes, in pairs or one at a time (no library kernel).
Bytes decoded_own(const Bytes& stream, size_t n, bool in_pairs) {
    return decoded_body(stream, n, [&](uint8_t* body, unsigned size, uint8_t* out) {
        return rans_order0_decode_halves(body, size, out, static_cast<unsigned>(n), in_pairs, nullptr);
    });
}

// One stream decoded by rans_order0_decode_one.
Bytes decoded_one(const Bytes& stream, size_t n) {
    return decoded_body(stream, n, [&](uint8_t* body, unsigned size, uint8_t* out) {
        return rans_order0_decode_one(body, size, out, static_cast<unsigned>(n)) != nullptr;
    });
}

std::vector<int> masks_here() {
    const int allowed = rans_allowed_cpu_mask();
    return {allowed, allowed & ~(RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512), 0};
}

// A plane of skewed values that codes to about 2 bits a byte (the fixture: small in tests/data).
Bytes skewed_plane(size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    std::geometric_distribution<int> value(0.35);
    Bytes b(n);
    for (auto& v : b) v = static_cast<uint8_t>(std::min(value(g), 255));
    return b;
}

// Two streams of one plane: as written when each half's table counted every byte, and as written
// since the halves' tables (from 64 KB) are counted on a sample (rans_order0_counts.hpp).
const char* kFixture = STATEZIP_TEST_DATA "/rans-halves-order0.stream";
const char* kSampledFixture = STATEZIP_TEST_DATA "/rans-halves-order0-sampled.stream";
constexpr size_t kFixtureBytes = (128u << 10) + 45;  // skewed_plane(kFixtureBytes, 11)

}  // namespace

TEST_CASE("rans order-0 in two halves: written from its size on, the same bytes on every decoder and from every encoder",
          "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    const size_t min = order0_halves::kMinBytes;
    int written = 0;
    uint64_t seed = 1;
    for (size_t n : {min - 1, min, min + 31, min + 64, size_t{300001}, size_t{1} << 20})
        for (int kind : {0, 2, 3, 4, 6, 7, 9}) {
            const Bytes in = stztest::plane(kind, n, seed++);
            INFO(n << " bytes, kind " << kind);
            const Bytes stream = stream_under(masks[0], in);
            if (stream.empty()) continue;  // not worth coding: stored by the codec
            // Below the size one stream; from it one stream too where a half's stream would not be
            // smaller than the half (a near-uniform plane: each half pays its own table and states).
            if (n < min || stream[0] == kOrder0) {
                CHECK(stream[0] == kOrder0);
                CHECK(decoded_under(masks[0], stream, n) == in);
                continue;
            }
            REQUIRE(stream[0] == (kOrder0 | kRansOrderGrouped));
            ++written;
            for (int mask : masks) {
                INFO("mask " << mask);
                CHECK(stream_under(mask, in) == stream);
                CHECK(decoded_under(mask, stream, n) == in);
            }
            CHECK(decoded_own(stream, n, false) == in);
            if (rans_order0_pairs_available()) CHECK(decoded_own(stream, n, true) == in);
        }
    CHECK(written >= 20);
    rans_select_cpu(rans_allowed_cpu_mask());
}

extern "C" unsigned char* rans_compress_O0_32x16(unsigned char*, unsigned int, unsigned char*, unsigned int*);

TEST_CASE("rans order-0 in two halves: a plane of one value is one stream, and halves of one value still decode",
          "[entropy]") {
    rans_init_cpu_once();
    const size_t n = order0_halves::kMinBytes + 77;
    const Bytes same(n, 42);
    CHECK_FALSE(rans_order0_halves_pay(same.data(), n));
    for (int mask : masks_here()) CHECK(stream_under(mask, same)[0] == kOrder0);
    // Written by hand (the encoder does not): each half a stream of one symbol, which every
    // decoder path fills (the library's kernels read past such a stream's end as zero words).
    PaddedInput src(same, kKernelSlack);
    Bytes stream{static_cast<uint8_t>(kOrder0 | kRansOrderGrouped)};
    uint8_t u7[kMaxUint7Bytes];
    stream.insert(stream.end(), u7, u7 + put_uint7(u7, static_cast<uint32_t>(n)));
    unsigned size = rans_compress_bound_4x16(static_cast<unsigned>(n), kOrder0);
    Bytes body(size + kKernelSlack);
    REQUIRE(rans_order0_encode_halves(src.data(), static_cast<unsigned>(n), body.data(), &size, rans_compress_O0_32x16));
    stream.insert(stream.end(), body.begin(), body.begin() + size);
    for (int mask : masks_here()) CHECK(decoded_under(mask, stream, n) == same);
    CHECK(decoded_own(stream, n, false) == same);
    if (rans_order0_pairs_available()) CHECK(decoded_own(stream, n, true) == same);
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans order-0 in two halves: damaged streams are refused or decoded inside their buffers", "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    const Bytes in = stztest::plane(6, order0_halves::kMinBytes + 100, 21);
    const Bytes stream = stream_under(masks[0], in);
    REQUIRE(stream.size() > 300);
    REQUIRE(stream[0] == (kOrder0 | kRansOrderGrouped));
    const size_t at = body_at(stream);
    for (int mask : masks) {
        INFO("mask " << mask);
        CHECK(decoded_under(mask, stream, in.size() - 1).empty());
        const Bytes cut(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(at) + 1);
        CHECK(decoded_under(mask, cut, in.size()).empty());
        // A first half's length past the body, or leaving a half without its states: refused.
        for (uint32_t length : {uint32_t{0}, uint32_t{100}, static_cast<uint32_t>(stream.size()), 0xffffffffu}) {
            Bytes bad(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(at));
            uint8_t u7[kMaxUint7Bytes];
            bad.insert(bad.end(), u7, u7 + put_uint7(u7, length));
            bad.insert(bad.end(), stream.begin() + static_cast<std::ptrdiff_t>(at) + 2, stream.end());
            CHECK(decoded_under(mask, bad, in.size()).empty());
        }
    }
    stztest::for_each_damaged(stream, at, 200, [&](const Bytes& bad) {
        for (int mask : masks) (void)decoded_under(mask, bad, in.size());
        (void)decoded_own(bad, in.size(), false);
        if (rans_order0_pairs_available()) (void)decoded_own(bad, in.size(), true);
    });
    for (int mask : masks) CHECK(decoded_under(mask, stream, in.size()) == in);
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans order-0 in two halves: the streams kept in tests/data still decode", "[entropy][golden]") {
    rans_init_cpu_once();
    const Bytes plane = skewed_plane(kFixtureBytes, 11);
    Bytes latest;
    for (const char* path : {kFixture, kSampledFixture}) {
        INFO(path);
        std::ifstream f(path, std::ios::binary);
        REQUIRE(f);
        const Bytes fixture{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
        REQUIRE(fixture.size() > 2);
        CHECK(fixture[0] == (kOrder0 | kRansOrderGrouped));
        for (int mask : masks_here()) CHECK(decoded_under(mask, fixture, plane.size()) == plane);
        CHECK(decoded_own(fixture, plane.size(), false) == plane);
        latest = fixture;
    }
    // The encoder still writes the latest: a change of its bytes is a change of the format's
    // writer (a new fixture is then taken, and the old ones must still decode, as above).
    const Bytes written = stream_under(masks_here()[0], plane);
    if (const char* retake = std::getenv("STATEZIP_RETAKE_FIXTURE")) {
        std::ofstream(retake, std::ios::binary).write(reinterpret_cast<const char*>(written.data()),
                                                      static_cast<std::streamsize>(written.size()));
    }
    CHECK(written == latest);
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans order-0, one stream below the halves' size: statezip's lanes decode the library's bytes", "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    int checked = 0;
    uint64_t seed = 40;
    for (size_t n : {size_t{1001}, size_t{1033}, size_t{2032}, size_t{4113}, size_t{16256}, size_t{30001},
                     order0_halves::kMinBytes - 1})
        for (int kind : {0, 2, 3, 4, 6, 7, 9}) {
            const Bytes in = stztest::plane(kind, n, seed++);
            INFO(n << " bytes, kind " << kind);
            const Bytes stream = stream_under(masks[0], in);
            if (stream.empty()) continue;  // not worth coding: stored by the codec
            REQUIRE(stream[0] == kOrder0);
            ++checked;
            for (int mask : masks) {
                INFO("mask " << mask);
                CHECK(decoded_under(mask, stream, n) == in);
            }
            if (rans_order0_pairs_available()) CHECK(decoded_one(stream, n) == in);
        }
    CHECK(checked >= 40);
    // Damaged: refused, or some bytes inside the buffers (the chunk's checksum rejects them).
    const Bytes in = stztest::plane(6, 20000, 77);
    const Bytes stream = stream_under(masks[0], in);
    REQUIRE(stream.size() > 300);
    CHECK(decoded_under(masks[0], stream, in.size() - 1).empty());
    stztest::for_each_damaged(stream, body_at(stream), 200, [&](const Bytes& bad) {
        (void)decoded_under(masks[0], bad, in.size());
        if (rans_order0_pairs_available()) (void)decoded_one(bad, in.size());
    });
    rans_select_cpu(rans_allowed_cpu_mask());
}
