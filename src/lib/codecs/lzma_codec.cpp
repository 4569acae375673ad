// lzma: raw LZMA2 (no .xz container per chunk), presets 0-9 with optional extreme ("9e").
// The dictionary is capped to the chunk size, and that size is stored, so a decoder never
// allocates more than the chunk needs.
#include <lzma.h>

#include <cstdio>

#include "codec_impls.hpp"

namespace stz {

namespace {

constexpr uint32_t kMaxDict = 64u << 20;
// The largest dictionary whose encoder is kept per thread between blocks (token lists: a few KB;
// bt4 keeps ~1 MB at 64 KB).
constexpr uint32_t kKeptDict = 64u << 10;

struct KeptStream {
    lzma_stream strm = LZMA_STREAM_INIT;
    ~KeptStream() { lzma_end(&strm); }
};

// The dictionary the encoder picks for n bytes: the smallest power of two >= n, within
// [LZMA_DICT_SIZE_MIN, kMaxDict]. A decoder allocates it, so a block may not ask for more.
uint32_t dict_for(size_t n) {
    uint32_t dict = LZMA_DICT_SIZE_MIN;
    while (dict < n && dict < kMaxDict) dict <<= 1;
    return dict;
}

class LzmaCodec final : public Codec {
public:
    uint8_t id() const override { return 5; }
    std::string_view name() const override { return "lzma"; }
    // Arguments: preset "0".."9", optionally followed by "e" (xz --extreme); then optionally
    // the literal model "lcXlpYpbZ" (LZMA's literal context bits, literal and match position
    // bits). Parameters: u8 preset, u8 extreme, and with a literal model u8 lc, u8 lp, u8 pb.
    // Only the encoder uses the model: an LZMA2 chunk carries its own lc/lp/pb, so a decoder
    // reads either form with the same options (checked here, never needed to decode).
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (args.size() > 2) throw Error("lzma takes a preset and a literal model, e.g. 9e or 1:lc0lp1pb1");
        std::string a = args.empty() ? "6" : args[0];
        bool extreme = !a.empty() && a.back() == 'e';
        if (extreme) a.pop_back();
        int preset = parse_int_arg(a, 0, 9, "lzma");
        Bytes p{static_cast<uint8_t>(preset), static_cast<uint8_t>(extreme)};
        if (args.size() == 2) {
            unsigned lc = 0, lp = 0, pb = 0;
            char tail = 0;
            if (std::sscanf(args[1].c_str(), "lc%1ulp%1upb%1u%c", &lc, &lp, &pb, &tail) != 3)
                throw Error("lzma: the literal model is lcXlpYpbZ, e.g. lc0lp1pb1");
            p.insert(p.end(), {static_cast<uint8_t>(lc), static_cast<uint8_t>(lp), static_cast<uint8_t>(pb)});
            check_params(p);
        }
        return p;
    }
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 2 || p.size() == 5, "lzma", "expected 2 or 5 bytes");
        require_params(p[0] <= 9, "lzma", "preset out of range");
        require_params(p[1] <= 1, "lzma", "unknown flags");
        if (p.size() == 5)
            require_params(p[2] <= LZMA_LCLP_MAX && p[3] <= LZMA_LCLP_MAX && p[2] + p[3] <= LZMA_LCLP_MAX &&
                               p[4] <= LZMA_PB_MAX,
                           "lzma", "literal model out of range");
    }
    lzma_options_lzma options(ByteSpan params, uint32_t dict) const {
        check_params(params);
        lzma_options_lzma opt;
        uint32_t preset = params[0];
        if (params[1]) preset |= LZMA_PRESET_EXTREME;
        if (lzma_lzma_preset(&opt, preset)) throw Error("lzma: bad preset");
        opt.dict_size = dict;
        if (params.size() == 5) opt.lc = params[2], opt.lp = params[3], opt.pb = params[4];
        return opt;
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        if (in.empty()) return;  // an empty block is empty
        uint32_t dict = dict_for(in.size());
        lzma_options_lzma opt = options(params, dict);
        lzma_filter filters[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, nullptr}};
        append_le<uint32_t>(out, dict);
        size_t base = out.size();
        out.resize(base + in.size() + in.size() / 2 + 4096);
        const size_t pos = dict <= kKeptDict ? encode_kept(filters, in, out.data() + base, out.size() - base)
                                             : encode_once(filters, in, out.data() + base, out.size() - base);
        out.resize(base + pos);
    }
    static size_t encode_once(const lzma_filter* filters, ByteSpan in, uint8_t* dst, size_t cap) {
        size_t pos = 0;
        lzma_ret r = lzma_raw_buffer_encode(filters, nullptr, in.data(), in.size(), dst, &pos, cap);
        if (r != LZMA_OK) throw Error("lzma: compression failed (" + std::to_string(r) + ")");
        return pos;
    }
    // Small blocks (token lists: a few KB) through an encoder kept per thread: set up anew per
    // block (lzma_raw_buffer_encode), its tables and buffers were allocated, page-faulted and
    // freed each time, which cost more than coding the block. liblzma re-initialises a kept
    // encoder to the same state as a fresh one (the same bytes) and reuses its memory when the
    // dictionary is the same size. Large dictionaries are not kept (their memory would stay).
    static size_t encode_kept(const lzma_filter* filters, ByteSpan in, uint8_t* dst, size_t cap) {
        lzma_ret r;
        const lzma_stream& strm = run_kept<true>(filters, in, dst, cap, r);
        if (r != LZMA_STREAM_END) throw Error("lzma: compression failed (" + std::to_string(r) + ")");
        return cap - strm.avail_out;
    }
    // `in` through the stream kept per thread for this direction, set up anew for `filters`, into
    // dst[0, cap) with LZMA_FINISH until it ends, fails or fills dst; `r` gets what lzma_code said
    // last (a decoder short of input stops with an error: liblzma reports a call that cannot
    // progress).
    template <bool Encoder>
    static const lzma_stream& run_kept(const lzma_filter* filters, ByteSpan in, uint8_t* dst, size_t cap, lzma_ret& r) {
        thread_local KeptStream kept;
        lzma_stream& strm = kept.strm;
        r = Encoder ? lzma_raw_encoder(&strm, filters) : lzma_raw_decoder(&strm, filters);
        if (r != LZMA_OK) throw Error("lzma: setup failed (" + std::to_string(r) + ")");
        strm.next_in = in.data(), strm.avail_in = in.size();
        strm.next_out = dst, strm.avail_out = cap;
        do r = lzma_code(&strm, LZMA_FINISH);
        while (r == LZMA_OK && strm.avail_out);
        return strm;
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        if (out_size == 0) {
            if (!in.empty()) throw Error("lzma: data for an empty block");
            return;
        }
        if (in.size() < 4) throw Error("lzma: truncated block");
        uint32_t dict = load_le<uint32_t>(in.data());
        if (dict < LZMA_DICT_SIZE_MIN || dict > dict_for(out_size)) throw Error("lzma: bad dictionary size");
        lzma_options_lzma opt = options(params, dict);
        lzma_filter filters[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, nullptr}};
        size_t base = out.size();
        out.resize(base + out_size);
        const size_t used = dict <= kKeptDict ? decode_kept(filters, in.subspan(4), out.data() + base, out_size)
                                              : decode_once(filters, in.subspan(4), out.data() + base, out_size);
        if (used != in.size() - 4) throw Error("lzma: trailing bytes after block");
    }
    // The input bytes a whole block of out_size bytes took; throws unless it decoded to exactly that.
    static size_t decode_once(const lzma_filter* filters, ByteSpan in, uint8_t* dst, size_t out_size) {
        size_t in_pos = 0, out_pos = 0;
        lzma_ret r = lzma_raw_buffer_decode(filters, nullptr, in.data(), &in_pos, in.size(), dst, &out_pos, out_size);
        if ((r != LZMA_OK && r != LZMA_STREAM_END) || out_pos != out_size) throw Error("lzma: corrupt block");
        return in_pos;
    }
    // Small blocks (token lists) through a decoder kept per thread, as encode_kept: set up anew per
    // block, its probability tables and dictionary were allocated and freed each time.
    static size_t decode_kept(const lzma_filter* filters, ByteSpan in, uint8_t* dst, size_t out_size) {
        lzma_ret r;
        const lzma_stream& strm = run_kept<false>(filters, in, dst, out_size, r);
        // (Its end mark too: the encoder always writes one, and lzma_raw_buffer_decode asks for it.)
        if (r != LZMA_STREAM_END || strm.avail_out) throw Error("lzma: corrupt block");
        return in.size() - strm.avail_in;
    }
    std::string describe(ByteSpan params) const override {
        if (params.size() != 2 && params.size() != 5) return "lzma";
        char text[48];
        int n = std::snprintf(text, sizeof text, "lzma:%u%s", unsigned{params[0]}, params[1] ? "e" : "");
        if (params.size() == 5)
            std::snprintf(text + n, sizeof text - n, ":lc%ulp%upb%u", unsigned{params[2]}, unsigned{params[3]}, unsigned{params[4]});
        return text;
    }
    size_t max_encoded_size(size_t n) const override { return n + n / 2 + 4096 + 4; }
    // No useful proven bound per input byte (an LZMA2 chunk of a few bytes may hold 2 MiB);
    // decoding long matches runs near memcpy speed.
    std::vector<std::string> sample_specs() const override { return {"lzma:0", "lzma:6", "lzma:9e", "lzma:1:lc0lp1pb1"}; }
};

}  // namespace

std::unique_ptr<Codec> make_lzma_codec() { return std::make_unique<LzmaCodec>(); }

}  // namespace stz
