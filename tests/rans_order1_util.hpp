// Planes and htscodecs streams for the tests of statezip's order-1 rANS decoder and encoder.
#pragma once

#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "base/bytes.hpp"
#include "codecs/uint7.hpp"

namespace stztest {

using stz::Bytes;

// A copy of `in` with `pad` bytes of slack on each side, for htscodecs' kernels, which read a
// little around their input (its AVX-512 order-1 encoder a byte before it, rans_codec.cpp): a
// plane-sized Bytes may start a mapping of its own, where that read would fault. data() is the
// input's first byte.
struct PaddedInput {
    PaddedInput(const Bytes& in, size_t pad) : pad_(pad), bytes_(in.size() + 2 * pad) {
        std::copy(in.begin(), in.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(pad));
    }
    uint8_t* data() { return bytes_.data() + pad_; }

private:
    size_t pad_;
    std::vector<uint8_t> bytes_;
};
inline constexpr size_t kKernelSlack = 64;

// Planes of the shapes order 1 meets: few and many symbols, flat and skewed, chained values, a
// context followed by one symbol only (its frequency is the whole table), quants (6, 7), a
// last byte of a value found nowhere else (8), Zipf-distributed values (9), 5-bit values (10).
inline Bytes plane(int kind, size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    Bytes b(n);
    const int alphabet = 2 + static_cast<int>(g() % 255);
    std::normal_distribution<double> quant(0, kind == 6 ? 3 : 30);
    std::vector<double> zipf_weights(static_cast<size_t>(alphabet));
    const double zipf_exponent = 0.5 + static_cast<double>(g() % 200) / 100;
    for (size_t i = 0; i < zipf_weights.size(); ++i) zipf_weights[i] = 1 / std::pow(double(i + 1), zipf_exponent);
    std::discrete_distribution<int> zipf(zipf_weights.begin(), zipf_weights.end());
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
            case 8:  // the last byte's value nowhere else: a context with no pair of its own
                v = i + 1 == n ? 255 : static_cast<uint8_t>(g() % 3);
                break;
            case 9:  // many rare symbols (Zipf): counts that normalising rounds up, the fallbacks
                v = static_cast<uint8_t>(zipf(g) * 37 + (g() % 4 == 0 ? prev : 0));
                break;
            case 5:
                v = static_cast<uint8_t>(prev * 7 + (g() % 100 < 90 ? 1 : g() % 256));
                break;
            case 10:  // whole values of 5-bit quants (0..31, the middle ones most often): few values
                v = static_cast<uint8_t>(std::clamp(16.0 + quant(g) / 6, 0.0, 31.0));
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
inline Bytes library_stream(const Bytes& in, size_t& kernel_at) {
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

// `rounds` damaged copies of `stream`, each handed to `decode` (which must refuse it or decode
// garbage inside its buffers): one to four bit flips at or after byte `from`, and every third copy
// cut short there too. The same copies for the same seed.
template <class Decode>
void for_each_damaged(const Bytes& stream, size_t from, int rounds, Decode&& decode, uint64_t seed = 5) {
    std::mt19937_64 g(seed);
    for (int round = 0; round < rounds; ++round) {
        Bytes bad = stream;
        for (int flips = 1 + static_cast<int>(g() % 4); flips > 0; --flips)
            bad[from + g() % (bad.size() - from)] ^= static_cast<uint8_t>(1u << (g() % 8));
        if (round % 3 == 0) bad.resize(from + g() % (bad.size() - from));
        decode(bad);
    }
}

// A stream body (what follows the flags byte and the size) framed as htscodecs' wrapper frames
// it, with `flags`, and decoded by the library into n bytes.
inline Bytes library_decoded(uint8_t flags, const Bytes& body, size_t n) {
    Bytes framed(1 + stz::kMaxUint7Bytes);
    framed[0] = flags;
    framed.resize(1 + stz::put_uint7(framed.data() + 1, static_cast<uint32_t>(n)));
    framed.insert(framed.end(), body.begin(), body.end());
    Bytes back(n + kKernelSlack);
    auto got = static_cast<unsigned>(n);
    REQUIRE(rans_uncompress_to_4x16(framed.data(), static_cast<unsigned>(framed.size()), back.data(), &got));
    CHECK(got == n);
    back.resize(n);
    return back;
}

}  // namespace stztest
