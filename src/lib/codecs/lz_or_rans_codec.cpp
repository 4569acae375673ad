// lzrans: zstd where a block's repeats pay, order-0 rANS where they do not. The choice is made
// per block from a cheap count of repeated 16-byte probes (no trial encoding), and the block's
// first byte says which coder wrote the rest, so the decoder needs no estimate of its own.
//
// Why: order-0 rANS (statezip's two-half kernel) decodes a near-random byte plane faster than
// zstd's Huffman literals, at about the same size, but it cannot see repeats; zstd finds them
// where they exist (the quantised V of a trained model in a conversation: up to 32 % smaller
// with zstd -1). Trying both per block would cost a second encoder's time.
#include <algorithm>

#include "codec_impls.hpp"

namespace stz {

namespace {

constexpr uint8_t kTagRans = 0, kTagZstd = 1;

// The share of probes, in thousandths, that must repeat an earlier probe for zstd to be chosen.
// On the corpus's quantised V planes (451 planes in 22 files), compressed both ways: planes with
// no repeated probe were up to 7 % smaller by zstd -1 where small (5-7 KB; rANS's table of 256
// symbols costs ~270 bytes more than zstd's Huffman weights), at most 0.4 % from 100 KB, and up
// to 19 % larger where they hold few values (a scale's high byte); planes from 2 per mille on
// were 0.3-32 % smaller by zstd (a conversation's repeated turns). Chosen this way the planes
// took 7,907,298 bytes (zstd -1 on every plane 7,896,581, order-0 rANS 7,935,577; the smaller
// of the two for each plane 7,882,195).
constexpr uint64_t kMinRepeatPermille = 2;
// Probes start at every kProbeStride-th byte from the block's start: only repeats at a distance
// that is a multiple of the stride are seen, which is where the rows of block and byte planes
// (16, 32 bytes ...) repeat. The table (32 KB, on the stack) keeps one probe per slot: in a plane
// of more probes than slots a repeat from far back is often missed, which the low threshold
// above absorbs (a plane that pays has repeats everywhere).
constexpr size_t kProbeStride = 16;
constexpr int kTableBits = 12;

// The thousandths of `in`'s probes that repeat an earlier probe: a probe is the 16 bytes at every
// kProbeStride-th byte, kept as a 64-bit mix of its two words in a table by the mix's top bits
// (a repeat is an equal mix in its slot: the plane is not read again, and a false match among
// 2^64 mixes does not matter to an estimate). 16 bytes, not 8: a plane of few values (a
// scale's high byte) repeats 8-byte words by chance where zstd has nothing to gain over the
// entropy coder.
uint64_t repeated_probe_permille(ByteSpan in) {
    if (in.size() < 16) return 0;
    uint64_t seen[1u << kTableBits] = {};
    uint64_t probes = 0, repeats = 0;
    for (size_t i = 0; i + 16 <= in.size(); i += kProbeStride, ++probes) {
        const uint64_t a = load_le<uint64_t>(in.data() + i), b = load_le<uint64_t>(in.data() + i + 8);
        const uint64_t mix = (a * 0x9E3779B97F4A7C15ull) ^ ((b ^ (b >> 29)) * 0xC2B2AE3D27D4EB4Full);
        uint64_t& slot = seen[mix >> (64 - kTableBits)];
        repeats += slot == mix;
        slot = mix;
    }
    return repeats * 1000 / probes;
}

class LzOrRansCodec final : public Codec {
public:
    LzOrRansCodec() : zstd_(make_zstd_codec()), rans_(make_rans_codec()), rans_params_(rans_->make_params({"0"}, {})) {}
    uint8_t id() const override { return 20; }
    std::string_view name() const override { return "lzrans"; }
    // Argument: zstd's level (default 1). Parameters: those of the zstd stage (level, no long).
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        if (args.size() > 1) throw Error("lzrans takes one argument: zstd's level");
        return zstd_->make_params(args.empty() ? std::vector<std::string>{"1"} : args, shape);
    }
    void check_params(ByteSpan params) const override {
        zstd_->check_params(params);
        require_params(params[1] == 0, "lzrans", "zstd's long mode is not used here");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override { encode_from(in, params, out, false); }
    void encode_in_slack(ByteSpan in, ByteSpan params, Bytes& out) const override { encode_from(in, params, out, true); }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        const uint8_t tag = tag_of(in);
        if (tag == kTagZstd) return zstd_->decode(in.subspan(1), params, out_size, out);
        rans_->decode(in.subspan(1), rans_params_, out_size, out);
    }
    // (Not through decode_into_slack: rANS's there writes into the slack after `dst`, which a
    // caller of decode_into does not have.)
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const override {
        check_params(params);
        const uint8_t tag = tag_of(in);
        if (tag == kTagZstd) return zstd_->decode_into(in.subspan(1), params, out_size, dst);
        rans_->decode_into(in.subspan(1), rans_params_, out_size, dst);
    }
    // The tag's coder straight into the caller's memory (zstd writes there; rANS uses the slack).
    void decode_into_slack(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst, bool in_slack) const override {
        check_params(params);
        const uint8_t tag = tag_of(in);
        if (tag == kTagZstd) return zstd_->decode_into(in.subspan(1), params, out_size, dst);
        rans_->decode_into_slack(in.subspan(1), rans_params_, out_size, dst, in_slack);
    }
    // Blocks that rANS wrote are rans payloads after their tag: two of them decode as rans decodes
    // two (a quantised V's scale planes).
    bool decodes_in_pairs(ByteSpan in, ByteSpan params, size_t out_size) const override {
        check_params(params);
        return in.size() > 1 && in[0] == kTagRans && rans_->decodes_in_pairs(in.subspan(1), rans_params_, out_size);
    }
    void decode_pair_together(ByteSpan a, ByteSpan, size_t a_size, uint8_t* a_dst, ByteSpan b, ByteSpan, size_t b_size,
                              uint8_t* b_dst) const override {
        rans_->decode_pair_together(a.subspan(1), rans_params_, a_size, a_dst, b.subspan(1), rans_params_, b_size, b_dst);
    }
    std::string describe(ByteSpan params) const override {
        return params.size() == 2 ? "lzrans:" + std::to_string(static_cast<int8_t>(params[0])) : "lzrans";
    }
    size_t max_encoded_size(size_t n) const override {
        return 1 + std::max(zstd_->max_encoded_size(n), rans_->max_encoded_size(n));
    }
    std::vector<std::string> sample_specs() const override { return {"lzrans:1", "lzrans:3"}; }

private:
    void encode_from(ByteSpan in, ByteSpan params, Bytes& out, bool in_slack) const {
        check_params(params);
        if (repeated_probe_permille(in) >= kMinRepeatPermille) {
            out.push_back(kTagZstd);
            return zstd_->encode(in, params, out);
        }
        out.push_back(kTagRans);
        if (in_slack) rans_->encode_in_slack(in, rans_params_, out);
        else rans_->encode(in, rans_params_, out);
    }
    static uint8_t tag_of(ByteSpan in) {
        if (in.empty()) throw Error("lzrans: empty block");
        if (in[0] != kTagRans && in[0] != kTagZstd) throw Error("lzrans: unknown coder tag");
        return in[0];
    }
    std::unique_ptr<Codec> zstd_, rans_;
    Bytes rans_params_;
};

}  // namespace

std::unique_ptr<Codec> make_lz_or_rans_codec() { return std::make_unique<LzOrRansCodec>(); }

}  // namespace stz
