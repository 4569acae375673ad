// celldedup: in channel-major (transposed) data, columns that repeat an earlier column of the
// block are replaced by a reference. A column is one cell's values across the block's channel
// rows; a transposed V cell depends only on its token in layer 0, and cells of sequences that
// share a prompt repeat in every layer (14 % of the corpus's transposed V bytes). The row
// dedup cannot see these: each repeat is spread over every channel row, 2-4 bytes at a time.
// Output: the unique columns in the input's layout (channel rows, now shorter), then the
// references {varint column-index delta, varint unique-column index}, their length (u32) and
// a mode byte (0 = copied unchanged, 1 = deduplicated) last.

#include "base/limits.hpp"
#include "codec_impls.hpp"
#include "dedup_refs.hpp"

namespace stz {

namespace {

struct Layout {
    uint64_t cols = 0;  // cells per channel row; 0 = no column structure (copied)
    uint32_t elem = 0;  // bytes per value
};

Layout read_layout(ByteSpan p) {
    require_params(p.size() == 9, "celldedup", "expected 9 bytes");
    Layout l{load_le<uint64_t>(p.data()), p[8]};
    require_params(l.elem == 0 ? l.cols == 0 : l.elem <= 64, "celldedup", "bad value size");
    require_params(l.cols <= kMaxChunkRaw && l.cols * l.elem <= kMaxChunkRaw, "celldedup", "row larger than a chunk");
    return l;
}

// Copies one value; compile-time sizes for the float types so the copy is one move.
inline void copy_value(uint8_t* dst, const uint8_t* src, uint32_t elem) {
    switch (elem) {
        case 2: std::memcpy(dst, src, 2); break;
        case 4: std::memcpy(dst, src, 4); break;
        default: std::memcpy(dst, src, elem);
    }
}

// One hash per column over its first rows, in a row-major pass (cache friendly; no transposed
// copy). Equal hashes only make two columns candidates: columns_equal compares every row, so
// hashing a few rows finds the same repeats at a fraction of the cost.
constexpr uint64_t kHashedRows = 8;
constexpr int kMaxCandidates = 8;
std::vector<uint64_t> column_hashes(ByteSpan in, const Layout& l, uint64_t rows) {
    std::vector<uint64_t> h(l.cols, 0x9E3779B97F4A7C15ull);
    rows = std::min(rows, kHashedRows);
    constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
    const uint8_t* p = in.data();
    if (l.elem == 2) {  // f16/bf16: one load per value
        for (uint64_t r = 0; r < rows; ++r, p += 2 * l.cols)
            for (uint64_t c = 0; c < l.cols; ++c) h[c] = (h[c] ^ load_le<uint16_t>(p + 2 * c)) * kMul;
        return h;
    }
    if (l.elem == 4) {
        for (uint64_t r = 0; r < rows; ++r, p += 4 * l.cols)
            for (uint64_t c = 0; c < l.cols; ++c) h[c] = (h[c] ^ load_le<uint32_t>(p + 4 * c)) * kMul;
        return h;
    }
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < l.cols; ++c) {
            uint64_t v = 0;
            for (uint32_t k = 0; k < l.elem; ++k, ++p) v = v << 8 | *p;
            h[c] = (h[c] ^ v) * kMul;
        }
    return h;
}

bool columns_equal(ByteSpan in, const Layout& l, uint64_t rows, uint64_t a, uint64_t b) {
    const uint64_t row = l.cols * l.elem;
    if (l.elem == 2) {
        for (const uint8_t *p = in.data() + a * 2, *q = in.data() + b * 2, *end = p + rows * row; p < end; p += row, q += row)
            if (load_le<uint16_t>(p) != load_le<uint16_t>(q)) return false;
        return true;
    }
    for (uint64_t r = 0; r < rows; ++r)
        if (std::memcmp(in.data() + r * row + a * l.elem, in.data() + r * row + b * l.elem, l.elem) != 0) return false;
    return true;
}

class CellDedupCodec final : public Codec {
public:
    uint8_t id() const override { return 16; }
    std::string_view name() const override { return "celldedup"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        if (!args.empty()) throw Error("celldedup takes no arguments (cells come from the section)");
        const bool usable = shape.transposed && shape.elem_bytes > 0 && shape.elem_bytes <= 64 && shape.row_bytes > 0 &&
                            shape.row_bytes % shape.elem_bytes == 0 && shape.row_bytes <= kMaxChunkRaw &&
                            shape.kind != ElemKind::Block && shape.keep_bytes == 0;
        Bytes p;
        append_le<uint64_t>(p, usable ? shape.row_bytes / shape.elem_bytes : 0);
        p.push_back(static_cast<uint8_t>(usable ? shape.elem_bytes : 0));
        return p;
    }
    void check_params(ByteSpan p) const override { (void)read_layout(p); }
    // The unique columns are shorter rows: the next stage sees no row structure.
    DataShape output_shape(const DataShape& in) const override {
        DataShape s = in;
        s.row_bytes = 0, s.transposed = false, s.keep_bytes = 0;
        return s;
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        const Layout l = read_layout(params);
        const uint64_t row = l.cols * l.elem;
        if (row == 0 || in.empty() || in.size() % row) return copy_unchanged(in, out);
        const uint64_t rows = in.size() / row;
        const std::vector<uint64_t> hashes = column_hashes(in, l, rows);
        UniqueIndex seen(l.cols);
        std::vector<uint64_t> unique_cols;
        ReferenceWriter refs;
        for (uint64_t c = 0; c < l.cols; ++c) {
            // At most kMaxCandidates comparisons per column: columns crafted to agree on their
            // hashed rows and differ later cannot make encoding quadratic (a missed repeat only
            // costs size).
            const int64_t match = seen.find_or_add(
                hashes[c], [&](uint32_t u) { return columns_equal(in, l, rows, unique_cols[u], c); }, kMaxCandidates);
            if (match >= 0) refs.add(c, static_cast<uint64_t>(match));
            else unique_cols.push_back(c);
        }
        if (refs.empty()) return copy_unchanged(in, out);
        const size_t at = out.size();
        out.resize(at + rows * unique_cols.size() * l.elem);
        uint8_t* dst = out.data() + at;
        for (uint64_t r = 0; r < rows; ++r)
            for (uint64_t c : unique_cols) copy_value(dst, in.data() + (r * l.cols + c) * l.elem, l.elem), dst += l.elem;
        refs.finish(out);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        const Layout l = read_layout(params);
        if (in.empty()) throw Error("celldedup: bad block");
        if (in.back() == 0) {
            if (in.size() - 1 != out_size) throw Error("celldedup: size mismatch");
            append_bytes(out, in.first(in.size() - 1));
            return;
        }
        const uint64_t row = l.cols * l.elem;
        if (in.back() != 1 || row == 0 || out_size % row || out_size == 0 || in.size() < 5) throw Error("celldedup: bad block");
        const uint32_t ref_len = load_le<uint32_t>(in.data() + in.size() - 5);
        if (ref_len > in.size() - 5) throw Error("celldedup: bad reference length");
        const uint64_t rows = out_size / row, body = in.size() - 5 - ref_len;
        if (body % (rows * l.elem)) throw Error("celldedup: bad unique columns");
        const uint64_t n_unique = body / (rows * l.elem);
        ReferenceReader refs(in.subspan(body, ref_len), l.cols, n_unique, "celldedup", "column");
        // Unique column u of row r sits at (r * n_unique + u) * elem of the body. Columns go in
        // tiles: their sources are read once per tile, then copied row by row.
        const size_t base = out.size();
        out.resize(base + out_size);
        constexpr uint64_t kTile = 256;
        uint64_t source[kTile];
        for (uint64_t c0 = 0; c0 < l.cols; c0 += kTile) {
            const uint64_t n = std::min(kTile, l.cols - c0);
            for (uint64_t k = 0; k < n; ++k) source[k] = refs.next();
            for (uint64_t r = 0; r < rows; ++r) {
                const uint8_t* src_row = in.data() + r * n_unique * l.elem;
                uint8_t* dst = out.data() + base + (r * l.cols + c0) * l.elem;
                for (uint64_t k = 0; k < n; ++k, dst += l.elem) copy_value(dst, src_row + source[k] * l.elem, l.elem);
            }
        }
        refs.finish();
    }
    size_t max_encoded_size(size_t n) const override { return n + 16; }
    // Each reference (two varints, >= 2 bytes) repeats one column, which is at most the unique body.
    uint64_t max_decoded_size(ByteSpan params, uint64_t encoded) const override {
        (void)read_layout(params);  // valid parameters; the bound does not depend on them
        return saturating_mul_add(encoded / 2, encoded, encoded);
    }

};

}  // namespace

std::unique_ptr<Codec> make_cell_dedup_codec() { return std::make_unique<CellDedupCodec>(); }

}  // namespace stz
