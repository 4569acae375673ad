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
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::library_stream;
using stztest::plane;

namespace {

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
