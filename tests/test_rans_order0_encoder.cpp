// statezip's encoder of htscodecs' order-0 X32 streams (rans_order0_encoder.cpp): the library's
// bytes on planes of every shape and of sizes around its steps (n mod 32, odd and even step
// counts), which the library decodes; too little room refused without a write outside it.
#include <catch2/catch.hpp>

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

Bytes own_body(Bytes in, size_t room) {
    Bytes out(room);
    auto size = static_cast<unsigned>(room);
    if (!rans_order0_encode_x32(in.data(), static_cast<unsigned>(in.size()), out.data(), &size)) return {};
    out.resize(size);
    return out;
}

}  // namespace

TEST_CASE("order-0 X32 encoder: the library's bytes, which the library decodes") {
    if (!rans_order0_encoder_available()) stztest::skip_test("this CPU lacks AVX-512 VBMI: the library's encoder runs");
    const size_t sizes[] = {1001, 1023, 1024, 1025, 1055, 1056, 1087, 1088, 2047, 4096, 4127, 5000, 65535, 70001, 262147};
    for (int kind = 0; kind <= 9; ++kind)
        for (size_t n : sizes) {
            INFO("kind " << kind << ", " << n << " bytes");
            const Bytes in = plane(kind, n, 31 * kind + n);
            const Bytes library = library_body(in);
            const Bytes own = own_body(in, 2 * n + 4096);
            REQUIRE(!own.empty());
            if (!library.empty()) CHECK(own == library);
            // The library decodes statezip's body.
            CHECK(stztest::library_decoded(RANS_ORDER_X32, own, n) == in);
        }
}

TEST_CASE("order-0 X32 encoder: too little room or no input refused, nothing written past the room") {
    if (!rans_order0_encoder_available()) stztest::skip_test("this CPU lacks AVX-512 VBMI: the library's encoder runs");
    Bytes in = plane(6, 20000, 5);
    const Bytes whole = own_body(in, 3 * in.size());
    REQUIRE(!whole.empty());
    for (size_t room : {size_t(0), size_t(100), size_t(400), whole.size() / 2, whole.size() - 1}) {
        INFO("room " << room);
        Bytes out(room + 64, 0xa5);
        auto size = static_cast<unsigned>(room);
        CHECK(rans_order0_encode_x32(in.data(), static_cast<unsigned>(in.size()), out.data(), &size) == nullptr);
        CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(room), out.end(), [](uint8_t b) { return b == 0xa5; }));
    }
    CHECK(own_body(in, whole.size()) == whole);
    unsigned size = 100;
    Bytes out(100);
    CHECK(rans_order0_encode_x32(in.data(), 0, out.data(), &size) == nullptr);
}
