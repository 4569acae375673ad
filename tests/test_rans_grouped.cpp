// statezip's own order-1 rANS streams (rans_order1_form.hpp): grouped contexts, written by
// rans_encode_stream where they are smaller than htscodecs' stream, and planes in two halves,
// written from kTwoHalvesMinBytes; the same bytes from every encoder form, read by every decoder
// form (AVX-512, AVX2 and the scalar one any CPU has), and damaged ones refused or decoded to
// garbage inside the output, never read or written outside their buffers. Streams kept in
// tests/data hold the format: a later decoder must still read them.
#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <cstdlib>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>

#include "codecs/rans_codec.hpp"
#include "codecs/rans_order1_decoder.hpp"
#include "codecs/rans_order1_form.hpp"
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

// The fixtures' plane: channel_walks(kFixtureBytes, 0.9, 12, 7); oldest first (the writer's
// choice of grouping has changed since the first: every one must still decode).
const char* const kFixtures[] = {STATEZIP_TEST_DATA "/rans-grouped-order1.stream",
                                 STATEZIP_TEST_DATA "/rans-grouped-order1-rows.stream"};
constexpr size_t kFixtureBytes = 6000;
// A plane in two halves, grouped: channel_walks(kHalvesFixtureBytes, 0.9, 12, 8); oldest first.
const char* const kHalvesFixtures[] = {STATEZIP_TEST_DATA "/rans-halves-order1.stream",
                                       STATEZIP_TEST_DATA "/rans-halves-order1-rows.stream"};
constexpr size_t kHalvesFixtureBytes = 40000;

// Distinct byte values of `in`: at most that many rows in any table of it.
size_t distinct_values(const Bytes& in) {
    return std::set<uint8_t>(in.begin(), in.end()).size();
}

// `stream` with its byte at `at` set to `value`, decoded under `mask` into n bytes; empty if refused.
Bytes decoded_with_byte(int mask, Bytes stream, size_t at, int value, size_t n) {
    stream[at] = static_cast<uint8_t>(value);
    return decoded_under(mask, stream, n);
}

// Where the form byte of a stream of statezip's own form lies (after the flags and the size).
unsigned form_at(const Bytes& stream) {
    unsigned n_read = 0;
    const unsigned size_bytes = get_uint7(stream.data() + 1, stream.size() - 1, n_read);
    REQUIRE(size_bytes);
    return 1 + size_bytes;
}

Bytes read_fixture(const char* path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f);
    return Bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A damaged `stream` of `in` (form byte at `form_at`): random bit flips and cuts after the form
// byte, decoded under every mask: refused or garbage, and ASan checks the bounds; then the
// undamaged stream still decodes (nothing of a damaged stream's table reaches the next one).
void flip_bits(const Bytes& stream, const Bytes& in, unsigned from, const std::vector<int>& masks) {
    stztest::for_each_damaged(stream, from, 300, [&](const Bytes& bad) {
        for (int mask : masks) (void)decoded_under(mask, bad, in.size());
    });
    for (int mask : masks) CHECK(decoded_under(mask, stream, in.size()) == in);
}

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
            const bool halves = n >= order1_form::kTwoHalvesMinBytes;
            if (stream.empty() || (!halves && !(stream[0] & kRansOrderGrouped))) continue;
            CHECK(stream[0] == (RANS_ORDER_X32 | 1 | kRansOrderGrouped));
            const int form = stream[form_at(stream)];
            CHECK(((form & order1_form::kTwoHalves) != 0) == halves);
            // Grouped: no larger than htscodecs' stream by more than the charge for the rows it
            // saves the decoder (at most one row per value of the plane); in two halves, 32 more
            // lane states (and the first half's length) besides.
            const double rows_charge = order1::kTableBytesPerRow * static_cast<double>(distinct_values(in));
            if (halves) CHECK(static_cast<double>(stream.size()) <= static_cast<double>(library_size(in)) + rows_charge + 4 * 32 + 5);
            else CHECK(static_cast<double>(stream.size()) < static_cast<double>(library_size(in)) + rows_charge);
            if (form & order1_form::kContextShiftBits) shifts.insert(form & order1_form::kContextShiftBits);
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
    const unsigned shift_at = form_at(stream);
    for (int mask : masks) {
        INFO("mask " << mask);
        // A shift the format does not have, the flag on a stream of another form: refused. (With
        // order 0 the flag is the order-0 form in two halves, test_rans_halves0.cpp: the stream is
        // then read as that form, refused or decoded to garbage inside the buffers.)
        for (int shift : {0, 8, 255}) CHECK(decoded_with_byte(mask, stream, shift_at, shift, in.size()).empty());
        for (int flags : {1 | kRansOrderGrouped, RANS_ORDER_X32 | 1 | kRansOrderGrouped | RANS_ORDER_CAT})
            CHECK(decoded_with_byte(mask, stream, 0, flags, in.size()).empty());
        (void)decoded_with_byte(mask, stream, 0, RANS_ORDER_X32 | kRansOrderGrouped, in.size());
        CHECK(decoded_under(mask, stream, in.size() - 1).empty());
        CHECK(decoded_under(mask, Bytes(stream.begin(), stream.begin() + shift_at + 1), in.size()).empty());
    }
    flip_bits(stream, in, shift_at, masks);
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans order-1 in two halves: damaged streams are refused or decoded inside their buffers", "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    const Bytes in = channel_walks(70001, 0.9, 12, 98);
    const Bytes stream = stream_under(masks[0], in);
    REQUIRE(!stream.empty());
    const unsigned at = form_at(stream);
    REQUIRE((stream[at] & order1_form::kTwoHalves) != 0);
    for (int mask : masks) {
        INFO("mask " << mask);
        // Form bytes the format does not have (0 is no form; bits 3-6 are unused): refused.
        for (int form : {0, order1_form::kTwoHalves | 0x08, order1_form::kTwoHalves | 0x40, 0xff})
            CHECK(decoded_with_byte(mask, stream, at, form, in.size()).empty());
        CHECK(decoded_under(mask, stream, in.size() - 1).empty());
        CHECK(decoded_under(mask, Bytes(stream.begin(), stream.begin() + at + 1), in.size()).empty());
    }
    flip_bits(stream, in, at, masks);
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans order-1 in two halves: a first half's length that leaves a half without its states is refused", "[entropy]") {
    rans_init_cpu_once();
    const std::vector<int> masks = masks_here();
    // Each byte a few values around a multiple of the one before: every row different (no
    // grouping) and a table of 256 rows, which the encoder packs; its stated length then finds
    // the first half's length after it.
    std::mt19937_64 g(97);
    Bytes in(200001);
    for (size_t i = 1; i < in.size(); ++i) in[i] = static_cast<uint8_t>(in[i - 1] * 37 + 11 + g() % 7);
    const Bytes stream = stream_under(masks[0], in);
    REQUIRE(!stream.empty());
    const unsigned at = form_at(stream);
    REQUIRE(stream[at] == order1_form::kTwoHalves);
    size_t p = at + 1;
    REQUIRE((stream[p] & 1) != 0);  // packed: uint7 table bytes, uint7 packed bytes, the packed table
    ++p;
    uint32_t table_bytes = 0, packed_bytes = 0;
    p += get_uint7(stream.data() + p, stream.size() - p, table_bytes);
    p += get_uint7(stream.data() + p, stream.size() - p, packed_bytes);
    p += packed_bytes;
    uint32_t first = 0;
    const unsigned length_bytes = get_uint7(stream.data() + p, stream.size() - p, first);
    REQUIRE(length_bytes);
    const size_t lanes = stream.size() - p - length_bytes;  // both halves' bytes
    REQUIRE(first >= 4 * 32);
    REQUIRE(lanes - first >= 4 * 32);
    auto with_first = [&](uint32_t v) {
        Bytes b(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(p));
        uint8_t buf[kMaxUint7Bytes];
        b.insert(b.end(), buf, buf + put_uint7(buf, v));
        b.insert(b.end(), stream.begin() + static_cast<std::ptrdiff_t>(p + length_bytes), stream.end());
        return b;
    };
    for (int mask : masks) {
        INFO("mask " << mask);
        CHECK(decoded_under(mask, with_first(first), in.size()) == in);
        for (uint64_t bad : {uint64_t{0}, uint64_t{4 * 32 - 1}, uint64_t{lanes - 4 * 32 + 1}, uint64_t{lanes},
                             uint64_t{lanes + 1}, uint64_t{UINT32_MAX}}) {
            INFO("first half " << bad << " of " << lanes << " bytes");
            CHECK(decoded_under(mask, with_first(static_cast<uint32_t>(bad)), in.size()).empty());
        }
    }
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans grouped order-1: the streams kept in tests/data still decode", "[entropy][golden]") {
    rans_init_cpu_once();
    const Bytes plane = channel_walks(kFixtureBytes, 0.9, 12, 7), halves_plane = channel_walks(kHalvesFixtureBytes, 0.9, 12, 8);
    // The encoder still writes the latest: a change of their bytes is a change of the format's
    // writer (new fixtures are then taken, into the folder STATEZIP_RETAKE_FIXTURE names, under
    // the names of the next entries of the lists above; the old ones must still decode, below).
    const Bytes written = stream_under(masks_here()[0], plane), written_halves = stream_under(masks_here()[0], halves_plane);
    if (const char* retake = std::getenv("STATEZIP_RETAKE_FIXTURE")) {
        const std::string dir(retake);
        std::ofstream(dir + "/rans-grouped-order1.next.stream", std::ios::binary)
            .write(reinterpret_cast<const char*>(written.data()), static_cast<std::streamsize>(written.size()));
        std::ofstream(dir + "/rans-halves-order1.next.stream", std::ios::binary)
            .write(reinterpret_cast<const char*>(written_halves.data()), static_cast<std::streamsize>(written_halves.size()));
    }
    Bytes grouped, halves;  // the latest of each
    for (const char* path : kFixtures) {
        INFO(path);
        grouped = read_fixture(path);
        REQUIRE(grouped.size() > 2);
        CHECK((grouped[0] & kRansOrderGrouped) != 0);
        for (int mask : masks_here()) CHECK(decoded_under(mask, grouped, plane.size()) == plane);
    }
    for (const char* path : kHalvesFixtures) {
        INFO(path);
        halves = read_fixture(path);
        REQUIRE(halves.size() > 2);
        CHECK((halves[0] & kRansOrderGrouped) != 0);
        CHECK((halves[form_at(halves)] & order1_form::kTwoHalves) != 0);
        CHECK((halves[form_at(halves)] & order1_form::kContextShiftBits) != 0);
        for (int mask : masks_here()) CHECK(decoded_under(mask, halves, halves_plane.size()) == halves_plane);
    }
    CHECK(written == grouped);
    CHECK(written_halves == halves);
    rans_select_cpu(rans_allowed_cpu_mask());
}
