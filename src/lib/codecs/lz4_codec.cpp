// lz4 (fast, with acceleration) and lz4hc (levels 1-12). Both decode with LZ4_decompress_safe.
#include <lz4.h>
#include <lz4hc.h>

#include <climits>

#include "codec_impls.hpp"

namespace stz {

namespace {

void lz4_decode(ByteSpan in, size_t out_size, Bytes& out, const char* name) {
    if (out_size == 0) {  // empty input encodes to an empty block (lz4 has no empty-block form)
        if (!in.empty()) throw Error(std::string(name) + ": data for an empty block");
        return;
    }
    if (in.size() > INT_MAX || out_size > INT_MAX) throw Error(std::string(name) + ": block too large");
    size_t base = out.size();
    out.resize(base + out_size);
    int r = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data() + base),
                                static_cast<int>(in.size()), static_cast<int>(out_size));
    if (r < 0 || static_cast<size_t>(r) != out_size) throw Error(std::string(name) + ": corrupt block");
}

// An lz4 block yields at most 255 bytes per input byte (a match length grows by 255 per
// extension byte) plus one sequence's worth.
uint64_t lz4_max_decoded(uint64_t encoded) { return saturating_mul_add(encoded, 255, 64); }

class Lz4Codec final : public Codec {
public:
    uint8_t id() const override { return 2; }
    std::string_view name() const override { return "lz4"; }
    // Argument: acceleration 1 (default, best ratio of the fast mode) .. 65537.
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (args.size() > 1) throw Error("lz4 takes one argument: the acceleration");
        int accel = args.empty() ? 1 : parse_int_arg(args[0], 1, 65537, "lz4");
        Bytes p;
        append_le<uint32_t>(p, static_cast<uint32_t>(accel));
        return p;
    }
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 4, "lz4", "expected 4 bytes");
        uint32_t accel = load_le<uint32_t>(p.data());
        require_params(accel >= 1 && accel <= 65537, "lz4", "acceleration out of range");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        if (in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) throw Error("lz4: input too large");
        if (in.empty()) return;
        int accel = static_cast<int>(load_le<uint32_t>(params.data()));
        size_t base = out.size();
        out.resize(base + LZ4_compressBound(static_cast<int>(in.size())));
        int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data() + base),
                                  static_cast<int>(in.size()), LZ4_compressBound(static_cast<int>(in.size())), accel);
        if (n <= 0 && !in.empty()) throw Error("lz4: compression failed");
        out.resize(base + n);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        lz4_decode(in, out_size, out, "lz4");
    }
    std::string describe(ByteSpan params) const override {
        return params.size() == 4 ? "lz4:" + std::to_string(load_le<uint32_t>(params.data())) : "lz4";
    }
    size_t max_encoded_size(size_t n) const override { return n + n / 255 + 64; }
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override { return lz4_max_decoded(encoded); }
    std::vector<std::string> sample_specs() const override { return {"lz4", "lz4:8"}; }
};

class Lz4HcCodec final : public Codec {
public:
    uint8_t id() const override { return 3; }
    std::string_view name() const override { return "lz4hc"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (args.size() > 1) throw Error("lz4hc takes one argument: the level");
        int level = args.empty() ? 9 : parse_int_arg(args[0], 1, LZ4HC_CLEVEL_MAX, "lz4hc");
        return Bytes{static_cast<uint8_t>(level)};
    }
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 1, "lz4hc", "expected 1 byte");
        require_params(p[0] >= 1 && p[0] <= LZ4HC_CLEVEL_MAX, "lz4hc", "level out of range");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        if (in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) throw Error("lz4hc: input too large");
        if (in.empty()) return;
        int level = params[0];
        int bound = LZ4_compressBound(static_cast<int>(in.size()));
        size_t base = out.size();
        out.resize(base + bound);
        int n = LZ4_compress_HC(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data() + base),
                                static_cast<int>(in.size()), bound, level);
        if (n <= 0 && !in.empty()) throw Error("lz4hc: compression failed");
        out.resize(base + n);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        lz4_decode(in, out_size, out, "lz4hc");
    }
    std::string describe(ByteSpan params) const override {
        return params.size() == 1 ? "lz4hc:" + std::to_string(params[0]) : "lz4hc";
    }
    size_t max_encoded_size(size_t n) const override { return n + n / 255 + 64; }
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override { return lz4_max_decoded(encoded); }
    std::vector<std::string> sample_specs() const override { return {"lz4hc", "lz4hc:12"}; }
};

}  // namespace

std::unique_ptr<Codec> make_lz4_codec() { return std::make_unique<Lz4Codec>(); }
std::unique_ptr<Codec> make_lz4hc_codec() { return std::make_unique<Lz4HcCodec>(); }

}  // namespace stz
