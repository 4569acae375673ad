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

// Copies a tile of columns between row-major blocks: destination column k of every row from
// source column from[k] of the same row. Consecutive columns with consecutive sources (the
// unique columns between two repeats in encode, a stretch of unique columns in decode) are one
// memcpy per row when at least kMinRun long; the others go value by value (a repeat's source
// is anywhere: in layer 0, where a cell depends only on its token, most columns repeat an
// earlier token's, in runs of 1 or 2). The spans are found once per tile, not per row.
class TileCopier {
public:
    static constexpr uint64_t kTile = 1024;  // columns; bounds the span list (no table per column)
    void copy(const uint8_t* src, uint64_t src_row, uint8_t* dst, uint64_t dst_row, uint64_t rows, const uint64_t* from,
              uint64_t n, uint32_t elem) {
        find_spans(from, n);
        switch (elem) {
            case 2: return copy_of<2>(src, src_row, dst, dst_row, rows, from, elem);
            case 4: return copy_of<4>(src, src_row, dst, dst_row, rows, from, elem);
            default: return copy_of<0>(src, src_row, dst, dst_row, rows, from, elem);
        }
    }

private:
    static constexpr uint32_t kMinRun = 8;  // shorter runs: a memcpy call costs more than the values
    struct Span {
        uint32_t begin, end;  // columns [begin, end) of the tile
        bool run;             // sources consecutive: one memcpy
    };
    std::vector<Span> spans_;

    void find_spans(const uint64_t* from, uint64_t n) {
        spans_.clear();
        for (uint32_t k = 0, j; k < n; k = j) {
            for (j = k + 1; j < n && from[j] == from[j - 1] + 1;) ++j;
            if (j - k >= kMinRun) spans_.push_back({k, j, true});
            else if (!spans_.empty() && !spans_.back().run) spans_.back().end = j;
            else spans_.push_back({k, j, false});
        }
    }
    // E = the value size when known at compile time (0: elem): a value is then one move, four
    // per loop step.
    template <uint32_t E>
    void copy_of(const uint8_t* src, uint64_t src_row, uint8_t* dst, uint64_t dst_row, uint64_t rows,
                 const uint64_t* from, uint32_t elem) const {
        const uint64_t e = E != 0 ? E : elem;
        const auto value = [&](const uint8_t* s, uint8_t* d, uint64_t k) {
            std::memcpy(d + k * e, s + from[k] * e, E != 0 ? E : elem);
        };
        for (uint64_t r = 0; r < rows; ++r, src += src_row, dst += dst_row)
            for (const Span& s : spans_) {
                const uint64_t end = s.end;
                uint64_t k = s.begin;
                if (s.run) {
                    std::memcpy(dst + k * e, src + from[k] * e, (end - k) * e);
                    continue;
                }
                for (; k + 4 <= end; k += 4)
                    value(src, dst, k), value(src, dst, k + 1), value(src, dst, k + 2), value(src, dst, k + 3);
                for (; k < end; ++k) value(src, dst, k);
            }
    }
};

// One hash per column over its first rows (a few rows find the same repeats at a fraction of
// the cost: equal hashes only make two columns candidates, columns_equal compares every row).
// Column by column, the hash stays in a register; the rows are read as parallel forward
// streams (no transposed copy). N = the row count when known at compile time (0: rows).
constexpr uint64_t kHashedRows = 8;
constexpr int kMaxCandidates = 8;
constexpr uint64_t kHashSeed = 0x9E3779B97F4A7C15ull, kHashMul = 0xff51afd7ed558ccdull;
template <class T, uint64_t N>
void hash_columns_of(const uint8_t* p, uint64_t cols, uint64_t rows, uint64_t* h) {
    const uint64_t row = cols * sizeof(T);
    if (N != 0) rows = N;
    for (uint64_t c = 0; c < cols; ++c, p += sizeof(T)) {
        uint64_t x = kHashSeed;
        for (uint64_t r = 0; r < rows; ++r) x = (x ^ load_le<T>(p + r * row)) * kHashMul;
        h[c] = x;
    }
}

template <class T>
void hash_columns(const uint8_t* p, uint64_t cols, uint64_t rows, uint64_t* h) {
    if (rows == kHashedRows) hash_columns_of<T, kHashedRows>(p, cols, rows, h);
    else hash_columns_of<T, 0>(p, cols, rows, h);
}

std::vector<uint64_t> column_hashes(ByteSpan in, const Layout& l, uint64_t rows) {
    std::vector<uint64_t> h(l.cols, kHashSeed);
    rows = std::min(rows, kHashedRows);
    if (l.elem == 2) {  // f16/bf16: one load per value
        hash_columns<uint16_t>(in.data(), l.cols, rows, h.data());
        return h;
    }
    if (l.elem == 4) {
        hash_columns<uint32_t>(in.data(), l.cols, rows, h.data());
        return h;
    }
    const uint8_t* p = in.data();
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < l.cols; ++c) {
            uint64_t v = 0;
            for (uint32_t k = 0; k < l.elem; ++k, ++p) v = v << 8 | *p;
            h[c] = (h[c] ^ v) * kHashMul;
        }
    return h;
}

// Columns a and b of `rows` rows of `row` bytes: 4 rows per test (equal columns, the usual
// case after equal hashes, are read to the end anyway).
template <class T>
bool columns_equal_of(const uint8_t* p, const uint8_t* q, uint64_t rows, uint64_t row) {
    uint64_t r = 0;
    for (; r + 4 <= rows; r += 4, p += 4 * row, q += 4 * row) {
        const T d0 = load_le<T>(p) ^ load_le<T>(q), d1 = load_le<T>(p + row) ^ load_le<T>(q + row);
        const T d2 = load_le<T>(p + 2 * row) ^ load_le<T>(q + 2 * row), d3 = load_le<T>(p + 3 * row) ^ load_le<T>(q + 3 * row);
        if ((d0 | d1 | d2 | d3) != 0) return false;
    }
    for (; r < rows; ++r, p += row, q += row)
        if (load_le<T>(p) != load_le<T>(q)) return false;
    return true;
}

bool columns_equal(ByteSpan in, const Layout& l, uint64_t rows, uint64_t a, uint64_t b) {
    const uint64_t row = l.cols * l.elem;
    const uint8_t *p = in.data() + a * l.elem, *q = in.data() + b * l.elem;
    if (l.elem == 2) return columns_equal_of<uint16_t>(p, q, rows, row);
    if (l.elem == 4) return columns_equal_of<uint32_t>(p, q, rows, row);
    for (uint64_t r = 0; r < rows; ++r, p += row, q += row)
        if (std::memcmp(p, q, l.elem) != 0) return false;
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
        if (!encode_unless_unchanged(in, params, out)) copy_unchanged(in, out);
    }
    bool encode_unless_unchanged(ByteSpan in, ByteSpan params, Bytes& out) const override {
        const Layout l = read_layout(params);
        const uint64_t row = l.cols * l.elem;
        if (row == 0 || in.empty() || in.size() % row) return false;
        const uint64_t rows = in.size() / row;
        const std::vector<uint64_t> hashes = column_hashes(in, l, rows);
        UniqueIndex seen(l.cols);
        std::vector<uint64_t> unique_cols;
        unique_cols.reserve(l.cols);  // most columns are unique
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
        if (refs.empty()) return false;
        const size_t at = out.size();
        const uint64_t n_unique = unique_cols.size(), unique_row = n_unique * l.elem;
        out.resize(at + rows * unique_row);
        TileCopier tiles;
        for (uint64_t u0 = 0; u0 < n_unique; u0 += TileCopier::kTile)
            tiles.copy(in.data(), row, out.data() + at + u0 * l.elem, unique_row, rows, unique_cols.data() + u0,
                       std::min(TileCopier::kTile, n_unique - u0), l.elem);
        refs.finish(out);
        return true;
    }
    bool decode_in_place(Bytes& buf, ByteSpan params, size_t out_size) const override {
        (void)read_layout(params);
        return unchanged_in_place(buf, out_size);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        (void)read_layout(params);  // before anything is allocated
        decode_appending(in, params, out_size, out);
    }
    // Every column of `o` is written (a block without repeats: copied whole) or it throws.
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* o) const override {
        const Layout l = read_layout(params);
        if (in.empty()) throw Error("celldedup: bad block");
        if (in.back() == 0) {
            if (in.size() - 1 != out_size) throw Error("celldedup: size mismatch");
            if (out_size) std::memcpy(o, in.data(), out_size);
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
        // tiles: their sources are read once per tile (the reader checks each < n_unique, so
        // every copy stays inside its body row), then copied row by row.
        uint64_t source[TileCopier::kTile];
        TileCopier tiles;
        for (uint64_t c0 = 0; c0 < l.cols; c0 += TileCopier::kTile) {
            const uint64_t n = std::min(TileCopier::kTile, l.cols - c0);
            for (uint64_t k = 0; k < n; ++k) source[k] = refs.next();
            tiles.copy(in.data(), n_unique * l.elem, o + c0 * l.elem, row, rows, source, n, l.elem);
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
