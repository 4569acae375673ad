// bitpack: keeps only the bits of each byte that vary across the input. Made for the low
// mantissa planes of floats that `planes` would otherwise store: when the values were
// rounded (lossy modes) their low bits are constant, and every constant bit is a saved bit,
// whatever follows. On near-random bytes every bit varies and it costs 2 bytes (planes then
// stores the plane as before).
//
// Payload: u8 `vary` (the bits that vary), u8 `fixed` (the value of the others), then the
// varying bits of every byte, popcount(vary) bits per byte, packed LSB first. No parameters.
#include <algorithm>
#include <array>
#include <bit>
#include <utility>

#include "codec_impls.hpp"

namespace stz {

namespace {

constexpr uint8_t kBitpackId = 14;

// Bits of `b` selected by `mask`, moved down to the low end (pext), and back (pdep).
uint8_t gather_bits(uint8_t b, uint8_t mask) {
    uint8_t out = 0;
    for (unsigned i = 0, k = 0; i < 8; ++i)
        if (mask >> i & 1) out |= static_cast<uint8_t>((b >> i & 1) << k++);
    return out;
}
uint8_t scatter_bits(uint8_t v, uint8_t mask) {
    uint8_t out = 0;
    for (unsigned i = 0, k = 0; i < 8; ++i)
        if (mask >> i & 1) out |= static_cast<uint8_t>((v >> k++ & 1) << i);
    return out;
}

uint64_t packed_bytes(uint64_t n, unsigned k) { return (n * k + 7) / 8; }

// {the bits that vary across `in`, the AND of all bytes}. By blocks, stopping once every bit
// varies (near-random planes: after a few bytes).
std::pair<uint8_t, uint8_t> varying_bits(ByteSpan in) {
    if (in.empty()) return {0, 0};
    uint8_t all_or = in[0], all_and = all_or;
    for (size_t i = 0; i < in.size() && (all_or ^ all_and) != 0xff; i += 256)
        for (size_t j = i, end = std::min(in.size(), i + 256); j < end; ++j) all_or |= in[j], all_and &= in[j];
    return {static_cast<uint8_t>(all_or ^ all_and), all_and};
}

class BitpackCodec final : public Codec {
public:
    uint8_t id() const override { return kBitpackId; }
    std::string_view name() const override { return "bitpack"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (!args.empty()) throw Error("bitpack takes no arguments");
        return {};
    }
    // Near-random planes (exact mantissa bytes): every bit varies within a few bytes.
    bool may_shrink(ByteSpan in, ByteSpan) const override { return std::popcount(varying_bits(in).first) < 8; }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        const auto [vary, all_and] = varying_bits(in);
        out.push_back(vary);
        out.push_back(all_and & static_cast<uint8_t>(~vary));
        const unsigned k = std::popcount(vary);
        if (k == 8) return append_bytes(out, in);
        if (k == 0) return;
        std::array<uint8_t, 256> gathered;
        for (unsigned b = 0; b < 256; ++b) gathered[b] = gather_bits(static_cast<uint8_t>(b), vary);
        const size_t base = out.size();
        out.resize(base + packed_bytes(in.size(), k));
        uint8_t* o = out.data() + base;
        uint64_t acc = 0;
        unsigned have = 0;
        for (uint8_t b : in) {
            acc |= uint64_t{gathered[b]} << have;
            if ((have += k) >= 32) {
                store_le<uint32_t>(o, static_cast<uint32_t>(acc));
                o += 4, acc >>= 32, have -= 32;
            }
        }
        for (; have > 0; have = have > 8 ? have - 8 : 0, acc >>= 8) *o++ = static_cast<uint8_t>(acc);
    }
    static void check_sizes(ByteSpan in, size_t out_size) {
        if (in.size() < 2) throw Error("bitpack: truncated header");
        if (in[1] & in[0]) throw Error("bitpack: fixed bits overlap the varying ones");
        if (in.size() - 2 != packed_bytes(out_size, std::popcount(in[0]))) throw Error("bitpack: payload size does not match");
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        check_sizes(in, out_size);  // before allocating
        decode_appending(in, params, out_size, out);
    }
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* o) const override {
        check_params(params);
        check_sizes(in, out_size);
        if (out_size == 0) return;
        const uint8_t vary = in[0], fixed = in[1];
        const unsigned k = std::popcount(vary);
        const uint8_t* p = in.data() + 2;
        if (k == 8) return void(std::memcpy(o, p, out_size));
        if (k == 0) return void(std::memset(o, fixed, out_size));
        std::array<uint8_t, 256> scattered;
        for (unsigned v = 0; v < 256; ++v) scattered[v] = fixed | scatter_bits(static_cast<uint8_t>(v), vary);
        const uint8_t* end = in.data() + in.size();
        const uint64_t mask = (1u << k) - 1;
        uint64_t acc = 0;
        unsigned have = 0;
        for (size_t i = 0; i < out_size; ++i) {
            while (have < k) acc |= uint64_t{*p++} << have, have += 8;  // the size check above keeps p < end
            o[i] = scattered[acc & mask];
            acc >>= k, have -= k;
        }
        if (p != end) throw Error("bitpack: bytes left after the last value");
    }
    size_t max_encoded_size(size_t n) const override { return n + 2; }
    // One varying bit per byte packs 8 bytes into one; no varying bit is a fill (memset speed).
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override {
        return encoded < 2 ? 0 : encoded == 2 ? UINT64_MAX : 8 * (encoded - 2);
    }
};

}  // namespace

std::unique_ptr<Codec> make_bitpack_codec() { return std::make_unique<BitpackCodec>(); }

}  // namespace stz
