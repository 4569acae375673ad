// statezip's encoder of htscodecs' order-0 X32 streams (rans_order0_encoder.cpp): up to 64 KB the
// library's bytes on planes of every shape and of sizes around its steps (n mod 32, odd and even
// step counts); above, a table from a sample, within a little of the library's size; the library
// decodes every stream; every step kernel writes the same bytes; a byte the sample misses still
// coded; too little room refused without a write outside it.
#include <catch2/catch.hpp>

#include "codecs/rans_encoder_parts.hpp"
#include "codecs/rans_order0_counts.hpp"
#include "codecs/rans_order0_encoder.hpp"
#include "codecs/uint7.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::plane;

namespace {

// The body of the library's order-0 X32 stream of `in` (its wrapper's flags byte and size cut
// off), or empty where the wrapper stored the plane instead.
Bytes library_body(const Bytes& in) {
    stztest::PaddedInput src(in, stztest::kKernelSlack);
    const auto n = static_cast<unsigned>(in.size());
    unsigned len = rans_compress_bound_4x16(n, RANS_ORDER_X32);
    Bytes out(len + stztest::kKernelSlack);
    REQUIRE(rans_compress_to_4x16(src.data(), n, out.data(), &len, RANS_ORDER_X32) != nullptr);
    if (out[0] != RANS_ORDER_X32) return {};
    uint32_t size = 0;
    const unsigned body_at = 1 + get_uint7(out.data() + 1, len - 1, size);
    REQUIRE(size == n);
    return Bytes(out.begin() + body_at, out.begin() + len);
}

using EncodeFn = unsigned char* (*)(unsigned char*, unsigned int, unsigned char*, unsigned int*);

Bytes own_body(Bytes in, size_t room, EncodeFn encode = rans_order0_encode_x32) {
    Bytes out(room);
    auto size = static_cast<unsigned>(room);
    if (!encode(in.data(), static_cast<unsigned>(in.size()), out.data(), &size)) return {};
    out.resize(size);
    return out;
}

// The encoder's variants this CPU runs, the permute steps' first.
std::vector<EncodeFn> encoders_here() {
    std::vector<EncodeFn> v;
    if (rans_order0_encoder_available()) v.push_back(rans_order0_encode_x32);
#if defined(__x86_64__)
    // (The conditions the kernel set picks them under.)
    if (rans_enc::steps_avx512_available()) v.push_back(rans_order0_encode_x32_avx512);
    if (rans_enc::steps_avx2_available()) v.push_back(rans_order0_encode_x32_avx2);
#endif
    v.push_back(rans_order0_encode_x32_scalar);
    return v;
}

}  // namespace

TEST_CASE("order-0 X32 encoder: the library's bytes up to 64 KB, a sampled table above, which the library decodes") {
    const std::vector<EncodeFn> encoders = encoders_here();
    const size_t sizes[] = {1001, 1023, 1024, 1025, 1055, 1056, 1087, 1088, 2047, 4096, 4127, 5000, 65535, 70001, 262147};
    for (int kind = 0; kind <= 9; ++kind)
        for (size_t n : sizes) {
            INFO("kind " << kind << ", " << n << " bytes");
            const Bytes in = plane(kind, n, 31 * kind + n);
            const Bytes library = library_body(in);
            const Bytes own = own_body(in, 2 * n + 4096, encoders.front());
            REQUIRE(!own.empty());
            if (!library.empty() && n < 65536) CHECK(own == library);
            // A sampled table costs little: within 0.5 % (and the table's few bytes) of the library's.
            if (!library.empty()) CHECK(own.size() <= library.size() + library.size() / 200 + 64);
            for (EncodeFn encode : encoders) CHECK(own_body(in, 2 * n + 4096, encode) == own);
            // The library decodes statezip's body.
            CHECK(stztest::library_decoded(RANS_ORDER_X32, own, n) == in);
        }
}

TEST_CASE("order-0 X32 encoder: bytes the sample does not see are coded, at the range's ends too") {
    // Above 64 KB the table is counted on 1 KB in every 8 KB: values that occur only between the
    // sampled blocks, as the plane's smallest and largest byte and inside its range, must still
    // have a frequency (without one they would be coded as another symbol, silently). Three
    // planes: a few such values in a narrow range (found by the scan; two values in the range
    // that do not occur get none), the same around 0 as signed bytes (the range wraps), and
    // values far apart (more than the scan takes: every byte counted). Positions 5000, 139300
    // and 200000 lie outside the sample; 299999 is past its last whole block.
    const size_t n = 300000;
    const size_t rare_at[] = {5000, 139300, 200000, n - 1};
    struct Case {
        uint8_t base, spread;
        uint8_t rare[4];
        uint8_t absent[2];  // in the range, nowhere in the plane: no frequency needed
    };
    const Case cases[] = {{100, 8, {98, 110, 109, 98}, {99, 108}},
                          {0xfe, 4, {0xf8, 7, 6, 0xf8}, {0xf9, 4}},
                          {100, 8, {3, 250, 150, 2}, {0, 0}}};
    for (const Case& c : cases) {
        Bytes in = plane(6, n, 77);
        for (uint8_t& b : in) b = static_cast<uint8_t>(c.base + b % c.spread);
        for (int j = 0; j < 4; ++j) in[rare_at[j]] = c.rare[j];
        INFO("base " << int(c.base) << ", rare " << int(c.rare[0]) << " " << int(c.rare[1]));
        uint32_t count[256];
        const uint32_t total = rans_enc::order0_table_counts(in.data(), n, count);
        uint32_t sum = 0;
        for (int v = 0; v < 256; ++v) sum += count[v];
        CHECK(total == sum);
        for (uint8_t v : c.rare) CHECK(count[v] >= 1);
        if (c.absent[0] != c.absent[1]) CHECK((count[c.absent[0]] == 0 && count[c.absent[1]] == 0));
        for (EncodeFn encode : encoders_here()) {
            const Bytes own = own_body(in, 2 * n + 4096, encode);
            REQUIRE(!own.empty());
            CHECK(stztest::library_decoded(RANS_ORDER_X32, own, n) == in);
        }
    }
}

TEST_CASE("order-0 X32 encoder: the scan for values the sample missed, in both its forms") {
    for (size_t n : {size_t(0), size_t(15), size_t(64), size_t(1000), size_t(70001)}) {
        Bytes in = stztest::random_bytes(n, n + 3);
        for (uint8_t& b : in) b = static_cast<uint8_t>(b % 200);  // 200-255 never occur
        if (n > 10) in[n - 1] = 230, in[n / 2] = 240;  // (the last byte: past every whole vector)
        const uint8_t values[16] = {230, 240, 201, 0, 199, 255, 17, 250, 230, 1, 2, 3, 4, 5, 6, 7};
        for (int k : {1, 2, 16}) {
            bool naive[16], portable[16], wide[16];
            for (int j = 0; j < k; ++j) naive[j] = std::find(in.begin(), in.end(), values[j]) != in.end();
            rans_enc::find_byte_values(in.data(), n, values, k, portable, false);
            rans_enc::find_byte_values(in.data(), n, values, k, wide, true);
            INFO(n << " bytes, " << k << " values");
            CHECK(std::equal(naive, naive + k, portable));
            CHECK(std::equal(naive, naive + k, wide));
        }
    }
}

TEST_CASE("order-0 X32 encoder: too little room or no input refused, nothing written past the room") {
    for (EncodeFn encode : encoders_here())
        for (size_t n : {size_t(20000), size_t(100000)}) {
            Bytes in = plane(6, n, 5);
            const Bytes whole = own_body(in, 3 * in.size(), encode);
            REQUIRE(!whole.empty());
            for (size_t room : {size_t(0), size_t(100), size_t(400), whole.size() / 2, whole.size() - 1}) {
                INFO(n << " bytes, room " << room);
                Bytes out(room + 64, 0xa5);
                auto size = static_cast<unsigned>(room);
                CHECK(encode(in.data(), static_cast<unsigned>(in.size()), out.data(), &size) == nullptr);
                CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(room), out.end(), [](uint8_t b) { return b == 0xa5; }));
            }
            // The exact room is enough, whatever steps the room left allows.
            CHECK(own_body(in, whole.size(), encode) == whole);
            unsigned size = 100;
            Bytes out(100);
            CHECK(encode(in.data(), 0, out.data(), &size) == nullptr);
        }
}
