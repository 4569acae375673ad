// Transforms that change the layout of the bytes without compressing them: they make the
// data easier for an entropy stage. Each is an exact permutation (trim: exact on zeros).
#include <cstring>

#include "base/limits.hpp"
#include "codec_impls.hpp"

namespace stz {

namespace {

uint64_t param_u64(ByteSpan p, size_t i) {
    if (p.size() < (i + 1) * 8) throw Error("transform parameters truncated");
    return load_le<uint64_t>(p.data() + i * 8);
}

// Row geometry larger than a chunk means "no rows" (the engine never cuts a chunk inside a
// row), and keeps every product of layout parameters far from overflow.
uint64_t row_or_zero(uint64_t row) { return row <= kMaxChunkRaw ? row : 0; }

// trim: drops bytes that are zero. Row mode (rows of `row_bytes`, of which only the first
// `keep_bytes` may be non-zero, e.g. the filled positions of a transposed KV row): every
// dropped byte is checked to be zero first; if any is not, it falls back to tail mode.
// Tail mode drops the zero bytes at the end of the input. Decoding writes the zeros back.
class TrimCodec final : public Codec {
public:
    uint8_t id() const override { return 6; }
    std::string_view name() const override { return "trim"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        if (!args.empty()) throw Error("trim takes no arguments (its geometry comes from the section)");
        Bytes p;
        bool rows = row_or_zero(shape.row_bytes) > 0 && shape.keep_bytes > 0 && shape.keep_bytes < shape.row_bytes;
        append_le<uint64_t>(p, rows ? shape.row_bytes : 0);
        append_le<uint64_t>(p, rows ? shape.keep_bytes : 0);
        return p;
    }
    static bool tails_zero(ByteSpan in, uint64_t row, uint64_t keep) {
        for (size_t r = 0; r < in.size(); r += row)
            for (size_t i = r + keep; i < r + row; ++i)
                if (in[i]) return false;
        return true;
    }
    // Either no rows (0, 0) or rows of at most one chunk with 0 < keep < row.
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 16, "trim", "expected 16 bytes");
        uint64_t row = param_u64(p, 0), keep = param_u64(p, 1);
        require_params((row == 0 && keep == 0) || (row <= kMaxChunkRaw && keep > 0 && keep < row), "trim", "bad row geometry");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        uint64_t row = param_u64(params, 0), keep = param_u64(params, 1);
        // The mode byte goes last so that a following byte-plane stage stays element-aligned.
        if (row && in.size() % row == 0 && tails_zero(in, row, keep)) {
            for (size_t r = 0; r < in.size(); r += row) out.insert(out.end(), in.begin() + r, in.begin() + r + keep);
            out.push_back(1);
            return;
        }
        size_t end = in.size();
        while (end > 0 && in[end - 1] == 0) --end;
        out.insert(out.end(), in.begin(), in.begin() + end);
        out.push_back(0);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        const size_t at = out.size();
        out.resize(at + out_size);
        decode_into(in, params, out_size, out.data() + at);
    }
    // Straight into the caller's memory: a trimmed section (the unfilled positions of
    // transposed V rows) is the first stage of its pipeline, where a buffer of its own cost
    // one more copy of the whole chunk.
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const override {
        check_params(params);
        if (in.empty()) throw Error("trim: empty block");
        uint64_t row = param_u64(params, 0), keep = param_u64(params, 1);
        ByteSpan body = in.first(in.size() - 1);
        uint8_t mode = in.back();
        if (mode == 1) {
            if (row == 0 || keep >= row || out_size % row) throw Error("trim: bad row geometry");
            uint64_t n_rows = out_size / row;
            if (body.size() != n_rows * keep) throw Error("trim: wrong payload size");
            for (uint64_t r = 0; r < n_rows; ++r) {
                std::memcpy(dst + r * row, body.data() + r * keep, keep);
                std::memset(dst + r * row + keep, 0, row - keep);
            }
        } else if (mode == 0) {
            if (body.size() > out_size) throw Error("trim: payload larger than the declared size");
            if (!body.empty()) std::memcpy(dst, body.data(), body.size());
            if (out_size > body.size()) std::memset(dst + body.size(), 0, out_size - body.size());  // (dst may be null when empty)
        } else {
            throw Error("trim: unknown mode");
        }
    }
    bool writes_into() const override { return true; }
    std::string describe(ByteSpan) const override { return "trim"; }
    DataShape output_shape(const DataShape& in) const override {
        DataShape s = in;
        if (in.row_bytes && in.keep_bytes && in.keep_bytes < in.row_bytes) s.row_bytes = in.keep_bytes;
        s.keep_bytes = 0;
        return s;
    }
    size_t max_encoded_size(size_t n) const override { return n + 1; }
    // No bound per input byte (an all-zero chunk trims to one byte); zeros cost a memset.
};

// shuffle: byte-plane split. Element i's byte b goes to plane b; a tail shorter than one
// element is kept verbatim at the end. Width defaults to the element width of the data.
class ShuffleCodec final : public Codec {
public:
    uint8_t id() const override { return 7; }
    std::string_view name() const override { return "shuffle"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        if (args.size() > 1) throw Error("shuffle takes one argument: the element width in bytes");
        int w = args.empty() ? (shape.kind == ElemKind::Block ? 1 : static_cast<int>(shape.elem_bytes))
                             : parse_int_arg(args[0], 1, 16, "shuffle");
        return Bytes{static_cast<uint8_t>(std::max(1, std::min(w, 16)))};
    }
    static size_t width(ByteSpan p) {
        if (p.size() != 1 || p[0] == 0 || p[0] > 16) throw Error("shuffle: bad parameters (width must be 1 to 16)");
        return p[0];
    }
    void check_params(ByteSpan p) const override { (void)width(p); }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        size_t w = width(params), n = in.size() / w, base = out.size();
        out.resize(base + in.size());
        uint8_t* o = out.data() + base;
        if (w == 2) {
            for (size_t i = 0; i < n; ++i) {
                o[i] = in[2 * i];
                o[n + i] = in[2 * i + 1];
            }
        } else {
            for (size_t b = 0; b < w; ++b)
                for (size_t i = 0; i < n; ++i) o[b * n + i] = in[i * w + b];
        }
        std::copy(in.begin() + n * w, in.end(), o + n * w);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        if (in.size() != out_size) throw Error("shuffle: size mismatch");
        size_t w = width(params), n = in.size() / w, base = out.size();
        out.resize(base + in.size());
        uint8_t* o = out.data() + base;
        if (w == 2) {
            for (size_t i = 0; i < n; ++i) {
                o[2 * i] = in[i];
                o[2 * i + 1] = in[n + i];
            }
        } else {
            for (size_t b = 0; b < w; ++b)
                for (size_t i = 0; i < n; ++i) o[i * w + b] = in[b * n + i];
        }
        std::copy(in.begin() + n * w, in.end(), o + n * w);
    }
    std::string describe(ByteSpan p) const override { return "shuffle:" + std::to_string(p.empty() ? 1 : p[0]); }
    size_t max_encoded_size(size_t n) const override { return n; }
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override { return encoded; }
    std::vector<std::string> sample_specs() const override { return {"shuffle", "shuffle:2", "shuffle:4"}; }
};

// transpose: the input is rows of `cols` elements of `w` bytes; the output lists column 0
// of every row, then column 1, ... (token-major to channel-major). Inputs that are not a
// whole number of rows are copied unchanged (flag byte 0).
class TransposeCodec final : public Codec {
public:
    uint8_t id() const override { return 8; }
    std::string_view name() const override { return "transpose"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        if (!args.empty()) throw Error("transpose takes no arguments (its geometry comes from the section)");
        Bytes p;
        uint64_t w = shape.elem_bytes && shape.elem_bytes <= kMaxChunkRaw ? shape.elem_bytes : 1;
        uint64_t row = row_or_zero(shape.row_bytes);
        uint64_t cols = row && row % w == 0 ? row / w : 0;
        append_le<uint64_t>(p, w);
        append_le<uint64_t>(p, cols);
        return p;
    }
    // 1 <= w and w x cols at most one chunk (cols 0: not row-structured, copied unchanged).
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 16, "transpose", "expected 16 bytes");
        uint64_t w = param_u64(p, 0), cols = param_u64(p, 1);
        require_params(w >= 1 && w <= kMaxChunkRaw && cols <= kMaxChunkRaw / w, "transpose", "bad geometry");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        uint64_t w = param_u64(params, 0), cols = param_u64(params, 1);
        if (w == 0 || cols == 0 || in.empty() || in.size() % (w * cols)) {
            append_bytes(out, in);
            out.push_back(0);
            return;
        }
        size_t rows = in.size() / (w * cols), base = out.size();
        out.resize(base + in.size());
        uint8_t* o = out.data() + base;
        for (size_t r = 0; r < rows; ++r)
            for (size_t c = 0; c < cols; ++c) std::memcpy(o + (c * rows + r) * w, in.data() + (r * cols + c) * w, w);
        out.push_back(1);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        if (in.empty() || in.size() != out_size + 1) throw Error("transpose: size mismatch");
        uint64_t w = param_u64(params, 0), cols = param_u64(params, 1);
        ByteSpan body = in.first(out_size);
        if (in.back() == 0) {
            append_bytes(out, body);
            return;
        }
        if (in.back() != 1 || cols == 0 || out_size % (w * cols))
            throw Error("transpose: bad geometry");
        size_t rows = out_size / (w * cols), base = out.size();
        out.resize(base + out_size);
        uint8_t* o = out.data() + base;
        for (size_t r = 0; r < rows; ++r)
            for (size_t c = 0; c < cols; ++c) std::memcpy(o + (r * cols + c) * w, body.data() + (c * rows + r) * w, w);
    }
    size_t max_encoded_size(size_t n) const override { return n + 1; }
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override { return encoded; }
};

// fields: splits fixed-size blocks into their header (e.g. the f16 scale of a q8_0 block)
// and their payload (the quants): all headers first, then all payloads, then a verbatim tail.
class FieldsCodec final : public Codec {
public:
    uint8_t id() const override { return 9; }
    std::string_view name() const override { return "fields"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        uint64_t block = shape.kind == ElemKind::Block ? shape.elem_bytes : 0, head = shape.block_head;
        if (args.size() == 2) {
            block = parse_int_arg(args[0], 1, 65536, "fields");
            head = parse_int_arg(args[1], 0, static_cast<int>(block), "fields");
        } else if (!args.empty()) {
            throw Error("fields takes two arguments: block bytes and header bytes");
        }
        Bytes p;
        append_le<uint64_t>(p, block);
        append_le<uint64_t>(p, head);
        return p;
    }
    // Block and header sizes of at most one chunk; a header >= its block means "copy".
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 16, "fields", "expected 16 bytes");
        require_params(param_u64(p, 0) <= kMaxChunkRaw && param_u64(p, 1) <= kMaxChunkRaw, "fields", "bad block geometry");
    }
    static void permute(ByteSpan in, ByteSpan params, uint8_t* o, bool forward) {
        uint64_t block = param_u64(params, 0), head = param_u64(params, 1);
        if (in.empty()) return;
        if (block == 0 || head == 0 || head >= block) {
            std::memcpy(o, in.data(), in.size());
            return;
        }
        size_t n = in.size() / block, body = block - head;
        uint8_t* heads = o;
        uint8_t* bodies = o + n * head;
        const uint8_t* src_heads = in.data();
        const uint8_t* src_bodies = in.data() + n * head;
        for (size_t i = 0; i < n; ++i) {
            if (forward) {
                std::memcpy(heads + i * head, in.data() + i * block, head);
                std::memcpy(bodies + i * body, in.data() + i * block + head, body);
            } else {
                std::memcpy(o + i * block, src_heads + i * head, head);
                std::memcpy(o + i * block + head, src_bodies + i * body, body);
            }
        }
        std::memcpy(o + n * block, in.data() + n * block, in.size() - n * block);
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        size_t base = out.size();
        out.resize(base + in.size());
        permute(in, params, out.data() + base, true);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);
        if (in.size() != out_size) throw Error("fields: size mismatch");
        size_t base = out.size();
        out.resize(base + in.size());
        permute(in, params, out.data() + base, false);
    }
    std::string describe(ByteSpan p) const override {
        return p.size() == 16 ? "fields:" + std::to_string(param_u64(p, 0)) + ":" + std::to_string(param_u64(p, 1)) : "fields";
    }
    size_t max_encoded_size(size_t n) const override { return n; }
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override { return encoded; }
    std::vector<std::string> sample_specs() const override { return {"fields", "fields:34:2"}; }
};

}  // namespace

std::unique_ptr<Codec> make_trim_codec() { return std::make_unique<TrimCodec>(); }
std::unique_ptr<Codec> make_shuffle_codec() { return std::make_unique<ShuffleCodec>(); }
std::unique_ptr<Codec> make_transpose_codec() { return std::make_unique<TransposeCodec>(); }
std::unique_ptr<Codec> make_fields_codec() { return std::make_unique<FieldsCodec>(); }

}  // namespace stz
