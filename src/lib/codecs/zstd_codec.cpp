// zstd, levels 1-22 (and negative fast levels), optional long-distance matching.
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound
#include <zstd.h>

#include "base/zstd_context.hpp"
#include "codec_impls.hpp"

namespace stz {

namespace {

class ZstdCodec final : public Codec {
    static constexpr int kMinLevel = -7;

public:
    uint8_t id() const override { return 4; }
    std::string_view name() const override { return "zstd"; }
    // Arguments: level (default 3) and optionally "long".
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        int level = 3;
        bool lng = false;
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "long") lng = true;
            else if (i == 0) level = parse_int_arg(args[i], kMinLevel, ZSTD_maxCLevel(), "zstd");
            else throw Error("zstd: unknown argument '" + args[i] + "'");
        }
        return Bytes{static_cast<uint8_t>(static_cast<int8_t>(level)), static_cast<uint8_t>(lng ? 1 : 0)};
    }
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 2, "zstd", "expected 2 bytes");
        int level = static_cast<int8_t>(p[0]);
        require_params(level >= kMinLevel && level <= ZSTD_maxCLevel(), "zstd", "level out of range");
        require_params(p[1] <= 1, "zstd", "unknown flags");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        thread_local ZstdCCtx ctx;
        int level = static_cast<int8_t>(params[0]);
        bool lng = params[1];
        ZSTD_CCtx_reset(ctx.c, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(ctx.c, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(ctx.c, ZSTD_c_checksumFlag, 0);
        ZSTD_CCtx_setParameter(ctx.c, ZSTD_c_contentSizeFlag, 0);  // the container stores sizes
        if (lng) ZSTD_CCtx_setParameter(ctx.c, ZSTD_c_enableLongDistanceMatching, 1);
        size_t base = out.size();
        out.resize(base + ZSTD_compressBound(in.size()));
        size_t n = ZSTD_compress2(ctx.c, out.data() + base, out.size() - base, in.data(), in.size());
        if (ZSTD_isError(n)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(n));
        out.resize(base + n);
    }
    // The block headers bound what the frames can produce: checked before allocating.
    static void check_frame_holds(ByteSpan in, size_t out_size) {
        unsigned long long bound = ZSTD_decompressBound(in.data(), in.size());
        if (bound == ZSTD_CONTENTSIZE_ERROR) throw Error("zstd: corrupt frame");
        if (bound < out_size) throw Error("zstd: the frame cannot hold the declared size");
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        check_frame_holds(in, out_size);
        decode_appending(in, params, out_size, out);
    }
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const override {
        check_params(params);
        check_frame_holds(in, out_size);
        size_t n = ZSTD_decompressDCtx(thread_dctx(), dst, out_size, in.data(), in.size());
        if (ZSTD_isError(n)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(n));
        if (n != out_size) throw Error("zstd: decoded size does not match");
    }
    std::string describe(ByteSpan params) const override {
        std::string s = "zstd";
        if (params.size() >= 1) s += ":" + std::to_string(static_cast<int8_t>(params[0]));
        if (params.size() >= 2 && params[1]) s += ":long";
        return s;
    }
    size_t max_encoded_size(size_t n) const override { return ZSTD_compressBound(n); }
    // A block yields at most 128 KiB and takes at least 4 bytes (an RLE block).
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override {
        return saturating_mul_add(encoded / 4 + 1, ZSTD_BLOCKSIZE_MAX, 0);
    }
    std::vector<std::string> sample_specs() const override { return {"zstd:1", "zstd:3", "zstd:19", "zstd:3:long", "zstd:-3"}; }
};

}  // namespace

std::unique_ptr<Codec> make_zstd_codec() { return std::make_unique<ZstdCodec>(); }

}  // namespace stz
