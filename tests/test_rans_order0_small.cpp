// statezip's coder of htscodecs' order-0 4x16 streams (rans_order0_small.cpp): the library's bytes
// on planes of every shape and size, each side decoding the other's, and damaged bodies refused
// or decoded inside the buffers (also under ASan/UBSan).
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "codecs/rans_order0_small.hpp"
#include "rans_order1_util.hpp"
#include "codecs/uint7.hpp"

using namespace stz;
using stztest::plane;

namespace {

// The library's order-0 4x16 stream of `in` (flags 0: its wrapper writes no other form for these
// flags but RANS_ORDER_CAT, stored), and where its body starts (after the flags byte and the size).
Bytes library_stream(const Bytes& in, size_t& body_at) {
    stztest::PaddedInput src(in, stztest::kKernelSlack);
    const auto n = static_cast<unsigned>(in.size());
    unsigned len = rans_compress_bound_4x16(n, 0);
    Bytes out(len + stztest::kKernelSlack);
    REQUIRE(rans_compress_to_4x16(src.data(), n, out.data(), &len, 0) != nullptr);
    out.resize(len);
    uint32_t size = 0;
    body_at = 1 + get_uint7(out.data() + 1, out.size() - 1, size);
    REQUIRE(size == n);
    return out;
}

Bytes own_body(const Bytes& in) {
    Bytes out(3 * in.size() + 1024);
    size_t size = out.size();
    REQUIRE(rans_order0_small_encode(in.data(), in.size(), out.data(), &size));
    out.resize(size);
    return out;
}

// rans_order0_small_decode with every slot fill this CPU runs, which must agree (they fill the
// same table); the scalar fill's result.
bool small_decode(const uint8_t* in, size_t in_size, uint8_t* out, size_t n) {
    std::vector<order1::FillFn> fills{order1::fill_row_scalar};
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) fills.push_back(order1::fill_row_avx2);
    if (__builtin_cpu_supports("avx512f")) fills.push_back(order1::fill_row_avx512);
#endif
    const bool decoded = rans_order0_small_decode(in, in_size, out, n, fills[0]);
    for (size_t f = 1; f < fills.size(); ++f) {
        Bytes other(n);
        CHECK(rans_order0_small_decode(in, in_size, other.data(), n, fills[f]) == decoded);
        if (decoded) CHECK(std::equal(other.begin(), other.end(), out));
    }
    return decoded;
}

}  // namespace

TEST_CASE("small order-0 streams: the library's bytes, and each side decodes the other's") {
    const size_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 100, 128, 177, 482, 508, 999, 1000, 1040, 4096, 5000, 70001};
    for (int kind = 0; kind <= 9; ++kind)
        for (size_t n : sizes) {
            INFO("kind " << kind << ", " << n << " bytes");
            const Bytes in = plane(kind, n, 1000 * kind + n);
            size_t body_at = 0;
            const Bytes library = library_stream(in, body_at);
            const Bytes own = own_body(in);
            if (library[0] == 0) {  // coded (else the library stored a plane it could not shrink)
                CHECK(Bytes(library.begin() + static_cast<std::ptrdiff_t>(body_at), library.end()) == own);
                Bytes back(n);
                REQUIRE(small_decode(library.data() + body_at, library.size() - body_at, back.data(), n));
                CHECK(back == in);
            }
            // The library reads statezip's body.
            CHECK(stztest::library_decoded(0, own, n) == in);
            Bytes back(n);
            REQUIRE(small_decode(own.data(), own.size(), back.data(), n));
            CHECK(back == in);
        }
}

TEST_CASE("small order-0 streams: room too small, empty input, bad tables and states refused") {
    const Bytes in = plane(6, 700, 3);
    const Bytes own = own_body(in);
    Bytes out(own.size());
    for (size_t room : {size_t(0), size_t(10), own.size() - 1}) {
        size_t size = room;
        CHECK_FALSE(rans_order0_small_encode(in.data(), in.size(), out.data(), &size));
    }
    size_t size = out.size();
    CHECK(rans_order0_small_encode(in.data(), in.size(), out.data(), &size));
    CHECK_FALSE(rans_order0_small_encode(in.data(), 0, out.data(), &size));

    Bytes back(in.size());
    // Cut inside the table or the states.
    for (size_t cut = 0; cut < own.size() && cut < 600; ++cut) {
        const bool decoded = small_decode(own.data(), cut, back.data(), back.size());
        if (decoded) CHECK(cut > 16);  // a table and four states at least
    }
    // Counts that do not sum to a power of two: one symbol, count 3.
    const uint8_t three[] = {7, 0, 3, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0};
    CHECK_FALSE(small_decode(three, sizeof three, back.data(), 8));
    // A state below 2^15.
    const uint8_t low_state[] = {7, 0, 4, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0xff, 0x7f, 0, 0};
    CHECK_FALSE(small_decode(low_state, sizeof low_state, back.data(), 8));
    // One symbol: every byte it.
    const uint8_t one[] = {7, 0, 4, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0};
    REQUIRE(small_decode(one, sizeof one, back.data(), 8));
    CHECK(Bytes(back.begin(), back.begin() + 8) == Bytes(8, 7));
}

TEST_CASE("small order-0 streams: damaged bodies decode inside their buffers or are refused") {
    for (int kind : {0, 2, 6, 9}) {
        const Bytes in = plane(kind, 900, 77 + kind);
        const Bytes own = own_body(in);
        stztest::for_each_damaged(own, 0, 300, [&](const Bytes& bad) {
            Bytes back(in.size());
            (void)small_decode(bad.data(), bad.size(), back.data(), back.size());
        });
    }
}
