// statezip's own encoder of htscodecs' order-1 32-way rANS streams (rans_order1_encoder.cpp), in
// each form this CPU runs (AVX-512, AVX2, scalar), against the library's encoders: the same bytes for
// every plane (both table precisions, packed and plain frequency tables, the lanes' remainders,
// contexts of one symbol, a context that only ends the input), never a byte written outside the
// buffer it was given. (The reference is the htscodecs the build links, Debian 12's 1.3.0: a
// later release that chose its table precision or normalised differently would fail these tests
// without any stream being wrong; both decode.)
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "codecs/rans_codec.hpp"
#include "codecs/rans_order1_encoder.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::kKernelSlack;
using stztest::PaddedInput;
using stztest::plane;

extern "C" {
// The library's kernels (not in its public header; weak, as rans_kernels.cpp takes them).
__attribute__((weak)) unsigned char* rans_compress_O1_32x16(unsigned char*, unsigned int, unsigned char*, unsigned int*);
__attribute__((weak)) unsigned char* rans_compress_O1_32x16_avx512(unsigned char*, unsigned int, unsigned char*,
                                                                   unsigned int*);
}

namespace {

using Encoder = unsigned char* (*)(unsigned char*, unsigned int, unsigned char*, unsigned int*);
struct Form {
    const char* name;
    Encoder encode;
};
// The scalar form (any CPU) as htscodecs' stream only: no test, no grouping.
unsigned char* encode_scalar(unsigned char* in, unsigned int n, unsigned char* out, unsigned int* out_size) {
    return rans_order1_encode_if_scalar(in, n, out, out_size, nullptr, nullptr, nullptr);
}
// The forms of the encoder this CPU runs (the test is skipped where it runs none).
std::vector<Form> forms_here() {
    std::vector<Form> forms;
    if (rans_order1_encoder_avx512_available()) {
        forms.push_back({"avx512", rans_order1_encode_avx512});
        forms.push_back({"avx512, quotients by division", rans_order1_encode_avx512_divide});
    }
    if (rans_order1_encoder_avx2_available()) forms.push_back({"avx2", rans_order1_encode_avx2});
    forms.push_back({"scalar", encode_scalar});
    if (forms.empty()) stztest::skip_test("no order-0 coder in this htscodecs: statezip's order-1 encoder is not used");
    return forms;
}

// `encode`'s output for `in`, given `room` bytes for it; empty if it refused. The input and the
// output lie in buffers of exactly their size (AddressSanitizer sees any access outside them),
// except for the library's kernels, which read a little around their input (rans_codec.cpp).
Bytes encoded(Encoder encode, const Bytes& in, unsigned room) {
    const size_t pad =
        encode == rans_order1_encode_avx512 || encode == rans_order1_encode_avx512_divide || encode == rans_order1_encode_avx2 ||
                encode == encode_scalar
            ? 0
            : kKernelSlack;
    PaddedInput src(in, pad);
    std::vector<uint8_t> out(room + pad);
    unsigned size = room;
    if (!encode(src.data(), static_cast<unsigned>(in.size()), out.data(), &size)) return {};
    REQUIRE(size <= room);
    return Bytes(out.begin(), out.begin() + size);
}

// The least room the library's encoders accept for n bytes.
unsigned least_room(size_t n) { return rans_compress_bound_4x16(static_cast<unsigned>(n), 1) - 20; }

}  // namespace

TEST_CASE("rans order-1: statezip's encoder writes the bytes htscodecs' encoders write", "[entropy]") {
    const std::vector<Form> encoders = forms_here();
    REQUIRE(rans_compress_O1_32x16 != nullptr);
    rans_init_cpu_once();
    __builtin_cpu_init();
    const bool library_avx512 = rans_compress_O1_32x16_avx512 && __builtin_cpu_supports("avx512f");
    std::set<int> forms;  // table shift << 1 | packed
    uint64_t seed = 1;
    for (size_t n : {32, 33, 63, 100, 1001, 4097, 65543, 300001, 1100000})
        for (int kind : {0, 1, 2, 3, 4, 5, 6, 7, 8, 10}) {
            const Bytes in = plane(kind, n, ++seed);
            INFO("kind " << kind << ", " << n << " bytes");
            const Bytes reference = encoded(rans_compress_O1_32x16, in, least_room(n));
            REQUIRE(!reference.empty());
            forms.insert((reference[0] >> 4) << 1 | (reference[0] & 1));
            INFO("table shift " << (reference[0] >> 4) << ", packed " << (reference[0] & 1));
            if (library_avx512) CHECK(encoded(rans_compress_O1_32x16_avx512, in, least_room(n)) == reference);
            for (const Form& e : encoders) {
                INFO(e.name);
                CHECK(encoded(e.encode, in, least_room(n)) == reference);
                // Room the library would refuse is refused, before anything is written.
                CHECK(encoded(e.encode, in, least_room(n) - 1).empty());
            }
        }
    // Both table precisions and both table forms were met (else the planes above need changing).
    CHECK(forms == std::set<int>{20, 21, 24, 25});
    // Many small planes of many rare symbols: normalising's second pass and its last resort, and
    // choices of precision near the library's threshold.
    std::mt19937_64 g(12);
    for (int round = 0; round < 400; ++round) {
        const size_t n = 32 + g() % (round % 2 ? 3000 : 60000);
        const Bytes in = plane(9, n, 1000 + round);
        INFO("Zipf plane " << round << ", " << n << " bytes");
        const Bytes reference = encoded(rans_compress_O1_32x16, in, least_room(n));
        for (const Form& e : encoders) {
            INFO(e.name);
            CHECK(encoded(e.encode, in, least_room(n)) == reference);
        }
    }
}

TEST_CASE("rans order-1: statezip's encoder takes what the library's does and nothing else", "[entropy]") {
    const std::vector<Form> encoders = forms_here();
    rans_init_cpu_once();
    for (const Form& e : encoders) {
        INFO(e.name);
        // Fewer than one byte a lane: the library writes no order-1 stream, nor does statezip.
        for (size_t n : {0, 1, 31}) CHECK(encoded(e.encode, plane(0, n, 3), 4096).empty());
        // The same input twice, and after a very different one: nothing of one call leaks into the next.
        const Bytes a = plane(6, 70001, 8), b = plane(3, 5001, 9);
        const Bytes first = encoded(e.encode, a, least_room(a.size()));
        (void)encoded(e.encode, b, least_room(b.size()));
        CHECK(encoded(e.encode, a, least_room(a.size())) == first);
        CHECK(encoded(rans_compress_O1_32x16, a, least_room(a.size())) == first);
    }
}
