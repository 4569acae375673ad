// statezip's own decoder of htscodecs' order-1 32-way rANS streams (rans_order1_decoder.cpp), in each
// form this CPU runs (AVX-512, AVX2), against the library's: the same bytes for every stream the
// library writes (both table precisions, packed and plain frequency tables), and damaged streams
// refused or decoded to garbage inside the output, never read or written outside their buffers.
#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <set>

#include "codecs/rans_codec.hpp"
#include "codecs/rans_order1_decoder.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

// Planes of the shapes order 1 meets: few and many symbols, flat and skewed, chained values, a
// context followed by one symbol only (its frequency is the whole table), quants.
Bytes plane(int kind, size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    Bytes b(n);
    const int alphabet = 2 + static_cast<int>(g() % 255);
    std::normal_distribution<double> quant(0, kind == 6 ? 3 : 30);
    uint8_t prev = 0;
    for (size_t i = 0; i < n; ++i) {
        uint8_t v = 0;
        switch (kind) {
            case 0:
                v = static_cast<uint8_t>(g() % alphabet);
                break;
            case 1:
                v = static_cast<uint8_t>(prev + static_cast<int>(g() % 5) - 2);
                break;
            case 2:
                v = g() % 100 < 97 ? 7 : static_cast<uint8_t>(g() % alphabet);
                break;
            case 3:
                v = 42;
                break;
            case 4:
                v = i % 2 ? 3 : 9;
                break;
            case 5:
                v = static_cast<uint8_t>(prev * 7 + (g() % 100 < 90 ? 1 : g() % 256));
                break;
            default:
                v = static_cast<uint8_t>(static_cast<int>(std::clamp(quant(g), -127.0, 127.0)));
                break;
        }
        b[i] = prev = v;
    }
    return b;
}

// The library's stream of `in` (flags RANS_ORDER_X32 | 1), and where its kernel part starts (after
// the flag byte and the size in 7-bit groups; the stream's end if the library wrote another form).
Bytes library_stream(const Bytes& in, size_t& kernel_at) {
    constexpr size_t pad = 64;
    Bytes src(in.size() + 2 * pad);
    std::copy(in.begin(), in.end(), src.begin() + pad);
    const auto n = static_cast<unsigned>(in.size());
    unsigned len = rans_compress_bound_4x16(n, RANS_ORDER_X32 | 1);
    Bytes out(len + pad);
    REQUIRE(rans_compress_to_4x16(src.data() + pad, n, out.data(), &len, RANS_ORDER_X32 | 1) != nullptr);
    out.resize(len);
    kernel_at = out.size();  // another form (stored: RANS_ORDER_CAT): no kernel part
    if (out[0] != (RANS_ORDER_X32 | 1)) return out;
    kernel_at = 1;
    while (kernel_at < out.size() && (out[kernel_at] & 0x80)) ++kernel_at;
    ++kernel_at;
    return out;
}

using Decoder = unsigned char* (*)(unsigned char*, unsigned int, unsigned char*, unsigned int);
struct Form {
    const char* name;
    Decoder decode;
};
// The forms of the decoder this CPU runs (the test is skipped where it runs none).
std::vector<Form> forms_here() {
    std::vector<Form> forms;
    if (rans_order1_avx512_available()) forms.push_back({"avx512", rans_order1_decode_avx512});
    if (rans_order1_avx2_available()) forms.push_back({"avx2", rans_order1_decode_avx2});
    if (forms.empty()) stztest::skip_test("no AVX2 here: statezip's order-1 decoder is not used");
    return forms;
}

// Decodes the kernel part into a buffer of exactly `n` bytes (so that AddressSanitizer sees a write
// past it); empty if the decoder refused the stream.
std::vector<uint8_t> ours(Decoder decode, const Bytes& stream, size_t at, size_t n) {
    std::vector<uint8_t> kernel(stream.begin() + static_cast<std::ptrdiff_t>(at), stream.end());
    std::vector<uint8_t> out(n);
    if (!decode(kernel.data(), static_cast<unsigned>(kernel.size()), out.data(), static_cast<unsigned>(n))) return {};
    return out;
}

}  // namespace

TEST_CASE(
    "rans order-1: statezip's decoder reads every stream htscodecs "
    "writes, byte for byte",
    "[entropy]") {
    const std::vector<Form> decoders = forms_here();
    rans_init_cpu_once();
    std::set<int> forms;  // table shift << 1 | packed
    uint64_t seed = 1;
    for (size_t n : {1001, 4097, 65543, 300001, 1100000})
        for (int kind = 0; kind < 8; ++kind, ++seed) {
            const Bytes in = plane(kind, n, seed);
            size_t at = 0;
            const Bytes stream = library_stream(in, at);
            if (at + 1 >= stream.size() || (stream[at] >> 4 != 10 && stream[at] >> 4 != 12))
                continue;  // stored, not order 1
            forms.insert((stream[at] >> 4) << 1 | (stream[at] & 1));
            INFO("kind " << kind << ", " << n << " bytes, table shift " << (stream[at] >> 4) << ", packed "
                         << (stream[at] & 1));
            Bytes reference(n);
            unsigned got = static_cast<unsigned>(n);
            REQUIRE(rans_uncompress_to_4x16(const_cast<uint8_t*>(stream.data()), static_cast<unsigned>(stream.size()),
                                            reference.data(), &got) != nullptr);
            REQUIRE(reference == in);
            for (const Form& d : decoders) {
                INFO(d.name);
                const std::vector<uint8_t> out = ours(d.decode, stream, at, n);
                REQUIRE(out.size() == n);
                CHECK(std::equal(out.begin(), out.end(), in.begin()));
            }
        }
    // Both table precisions and both table forms were met (else the planes above need changing).
    CHECK(forms == std::set<int>{20, 21, 24, 25});
}

TEST_CASE("rans order-1: statezip's decoder refuses or contains damaged streams", "[entropy]") {
    const std::vector<Form> decoders = forms_here();
    rans_init_cpu_once();
    std::mt19937_64 g(5);
    for (int kind : {1, 2, 6}) {
        const Bytes in = plane(kind, 20001, 100 + kind);
        size_t at = 0;
        const Bytes stream = library_stream(in, at);
        REQUIRE(at + 1 < stream.size());
        for (int round = 0; round < 400; ++round) {
            Bytes bad = stream;
            for (int flips = 1 + static_cast<int>(g() % 4); flips > 0; --flips)
                bad[at + g() % (bad.size() - at)] ^= static_cast<uint8_t>(1u << (g() % 8));
            if (round % 3 == 0) bad.resize(at + g() % (bad.size() - at));
            const size_t other_size = g() % 3000;
            for (const Form& d : decoders) {
                (void)ours(d.decode, bad, at, in.size());  // refused or garbage; AddressSanitizer checks the bounds
                (void)ours(d.decode, bad, at, other_size);  // and a size the stream does not hold
            }
        }
        // Nothing of a damaged stream's tables reaches the next stream's bytes.
        for (const Form& d : decoders) {
            INFO(d.name);
            const std::vector<uint8_t> out = ours(d.decode, stream, at, in.size());
            REQUIRE(out.size() == in.size());
            CHECK(std::equal(out.begin(), out.end(), in.begin()));
        }
    }
}
