// dedup: rows that repeat an earlier row of the block are replaced by a reference.
// Exact repeats are common where a row depends only on the token (layer-0 V rows of a
// flash-attention cache: 40-45% repeats on real files). Output: the unique rows, then the
// references {varint row-index delta, varint unique-row index}, their length (u32) and a
// mode byte (0 = copied unchanged, 1 = deduplicated) last, so row alignment is kept.
#include "base/hashing.hpp"
#include "base/limits.hpp"
#include "codec_impls.hpp"
#include "dedup_refs.hpp"

namespace stz {

namespace {


class RowDedupCodec final : public Codec {
public:
    uint8_t id() const override { return 11; }
    std::string_view name() const override { return "dedup"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        if (!args.empty()) throw Error("dedup takes no arguments (rows come from the section)");
        Bytes p;
        // Rows larger than a chunk never repeat within one: no rows.
        append_le<uint64_t>(p, shape.transposed || shape.row_bytes > kMaxChunkRaw ? 0 : shape.row_bytes);
        return p;
    }
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 8, "dedup", "expected 8 bytes");
        require_params(load_le<uint64_t>(p.data()) <= kMaxChunkRaw, "dedup", "row larger than a chunk");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        if (!encode_unless_unchanged(in, params, out)) copy_unchanged(in, out);  // decoded in place, no copy
    }
    bool encode_unless_unchanged(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        const uint64_t row = load_le<uint64_t>(params.data());
        if (row == 0 || in.empty() || in.size() % row) return false;
        const size_t n = in.size() / row;
        UniqueIndex seen(n);
        std::vector<size_t> unique_rows;
        ReferenceWriter refs;
        for (size_t r = 0; r < n; ++r) {
            const uint8_t* p = in.data() + r * row;
            const int64_t match = seen.find_or_add(XXH3_64bits(p, row), [&](uint32_t u) {
                return std::memcmp(in.data() + unique_rows[u] * row, p, row) == 0;
            });
            if (match >= 0) refs.add(r, static_cast<uint64_t>(match));
            else unique_rows.push_back(r);
        }
        if (refs.empty()) return false;
        // The unique rows, copied once into an output grown once.
        const size_t at = out.size();
        out.resize(at + unique_rows.size() * row);
        uint8_t* dst = out.data() + at;
        for (size_t r : unique_rows) std::memcpy(dst, in.data() + r * row, row), dst += row;
        refs.finish(out);
        return true;
    }
    bool decode_in_place(Bytes& buf, ByteSpan params, size_t out_size) const override {
        check_params(params);
        return unchanged_in_place(buf, out_size);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        check_params(params);  // before anything is allocated
        decode_appending(in, params, out_size, out);
    }
    // Every row of `o` is written (a block without repeats: copied whole) or it throws.
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* o) const override {
        check_params(params);
        if (in.empty()) throw Error("dedup: bad block");
        const uint64_t row = load_le<uint64_t>(params.data());
        if (in.back() == 0) {
            if (in.size() - 1 != out_size) throw Error("dedup: size mismatch");
            if (out_size) std::memcpy(o, in.data(), out_size);
            return;
        }
        if (in.back() != 1 || row == 0 || out_size % row || in.size() < 5) throw Error("dedup: bad block");
        uint32_t ref_len = load_le<uint32_t>(in.data() + in.size() - 5);
        if (ref_len > in.size() - 5) throw Error("dedup: bad reference length");
        size_t body = in.size() - 5 - ref_len;
        if (body % row) throw Error("dedup: bad unique rows");
        const size_t n = out_size / row, n_unique = body / row;
        ReferenceReader refs(in.subspan(body, ref_len), n, n_unique, "dedup", "row");
        // A run of unique rows lies in the body as it lies in the output: one copy a run, not
        // a copy a row (the 18-byte rows of a q4_0 cache's V, a copy each, were 8 % of its
        // decompression).
        for (size_t r = 0; r < n;) {
            uint64_t u = 0;
            const uint64_t count = refs.next_run(u);  // u + count <= n_unique: in the body
            std::memcpy(o + r * row, in.data() + u * row, count * row);
            r += count;
        }
        refs.finish();
    }
    size_t max_encoded_size(size_t n) const override { return n + 16; }
    // Unique rows come verbatim; each reference (two varints, >= 2 bytes) repeats one row.
    uint64_t max_decoded_size(ByteSpan params, uint64_t encoded) const override {
        return saturating_mul_add(encoded / 2, load_le<uint64_t>(params.data()), encoded);
    }
};

}  // namespace

std::unique_ptr<Codec> make_row_dedup_codec() { return std::make_unique<RowDedupCodec>(); }

}  // namespace stz
