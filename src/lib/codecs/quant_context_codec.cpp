// qctx: quantised blocks (q8_0, q4_0, iq4_nl, q4_1, q5_0, q5_1) split into their fields and
// coded by adaptive binary models: the f16 scale d (and the min m of the _1 types) with the
// same field of the block one row up as context (the high byte; the low byte with the high
// byte as context), and every quant as one value (q5: the nibble with its high bit from qh),
// in a model per channel (channel = the value's position in the row) where the chunk's
// order-0 counts say that a model per channel pays for its learning, else in one shared
// model. K of a trained model depends on the channel: the corpus's hd32 q8_0 K quants have
// 7.16 bits of order-0 entropy overall and 6.25 per channel position.
// Parameters: u8 layout (0 q8_0, 1 q4_0 / iq4_nl, 2 q4_1, 3 q5_0, 4 q5_1; 5 = data that are
// not such blocks, copied unchanged, so that one spec serves every section), u16 blocks per
// row (1..kMaxCols; the channel of value j of block i is (i mod cols) * 32 + j), u8 rate
// (of the models per channel), [u8 flags, 1 = `qctx:planes`: the encoder never writes mode 1,
// whose binary decision per bit costs 5-7x rANS's time both ways for 2-5 % fewer bytes].
// Records (a gathered run of K layers, each after its small header): u64 record bytes and u8
// head bytes follow; every head is coded (XOR the head before) ahead of its record's blocks.
// Payload: a mode byte; mode 1 (a model per channel): the range coder's bytes; mode 0: u32
// length of the range coder's bytes (heads, scales), those bytes, then a rans:1 stage's
// output of the bytes after the scales of every block, channel-major; mode 2 (what the
// encoder writes where a model per channel does not pay, at rANS's speed both ways: no
// binary decision): rans stages only, each after its u32 length but the last: the record
// heads (each XOR the head before; with records only), each scale byte as a plane
// (channel-major, so that order-1's context is the same byte one row up, as mode 0's model
// has it), then mode 0's plane of the bytes after the scales; mode 3 (where values narrower
// than a byte are expected smaller whole): mode 2 with, as the last plane, the 32 values of
// every block one byte each, channel-major (quant_context_planes.cpp); mode 4 (where the chunk's
// counts say that the same byte one row up tells nothing, so the last plane is coded at order 0,
// whose size does not depend on the bytes' order): mode 2 with, as the last plane, the bytes after
// the scales in storage order, block after block (no transposition either way; newer than
// modes 2 and 3: a reader without it refuses the chunk). Mode 0 is still written for
// degenerate chunks whose rANS planes would be smaller than the decoder's size bound
// allows. Then the input's partial last block verbatim (its length follows from the output
// size).
#include <cmath>
#include <iterator>
#include <type_traits>
#include <vector>

#include "base/limits.hpp"
#include "codec_impls.hpp"
#include "quant_context.hpp"
#include "range_coder.hpp"

namespace stz::qctx {

namespace {

constexpr unsigned kScaleRate = 4;  // adaptation rate of the scale and record head models

constexpr uint8_t kCopyLayout = std::size(kLayouts);

constexpr uint64_t kMaxRecordHead = 64, kMaxRecordBytes = uint64_t{1} << 40;

constexpr uint8_t kPlanesOnly = 1;

QParams read_qparams(ByteSpan p) {
    // The flags byte, when present, is last and not 0 (one spelling per meaning).
    const bool flagged = p.size() == 5 || p.size() == 14;
    require_params(p.size() == 4 || p.size() == 13 || flagged, "qctx", "expected 4, 5, 13 or 14 bytes");
    if (flagged) {
        require_params(p.back() == kPlanesOnly, "qctx", "unknown flags");
        p = p.first(p.size() - 1);
    }
    require_params(p[0] <= std::size(kLayouts), "qctx", "unknown block layout");
    QParams q{p[0] < std::size(kLayouts) ? kLayouts[p[0]] : BlockLayout{0, 0, false, false}, load_le<uint16_t>(p.data() + 1), p[3]};
    require_params(q.cols >= 1 && q.cols <= kMaxCols, "qctx", "blocks per row out of range");
    require_params(q.rate >= kMinRate && q.rate <= kMaxRate, "qctx", "adaptation rate out of range");
    if (p.size() == 13) {
        q.record = load_le<uint64_t>(p.data() + 4), q.head = p[12];
        require_params(q.layout.bytes && q.head <= kMaxRecordHead && q.record > q.head && q.record <= kMaxRecordBytes &&
                           (q.record - q.head) % q.layout.bytes == 0,
                       "qctx", "bad record geometry");
    }
    q.planes_only = flagged;
    return q;
}

// A model per channel pays when the order-0 cost per channel plus each channel's learning
// (about half a log2(n) bits per symbol it uses) is below the shared model's. `block(i)` is
// block i of the chunk. (A heavier learning term, with which symbols are used, chose the
// shared model for the corpus's hd32 q8_0 K, where a model per channel is 7 % smaller.)
// (On the first blocks at most: the channels' statistics show early and the count stays cheap.)
constexpr size_t kEstimateBlocks = 8192;
// First on kFirstEstimateBlocks: where the two differ by more than kClearMargin there (the
// corpus's K: 3 % and more at 8192 blocks, the learning term only larger on fewer) the rest
// is not counted.
constexpr size_t kFirstEstimateBlocks = 2048;
constexpr double kClearMargin = 0.05;
template <typename BlockAt>
bool per_channel_pays(const BlockLayout& L, BlockAt&& block, size_t n, unsigned cols) {
    n = std::min(n, kEstimateBlocks);
    const unsigned A = 1u << L.bits, lanes = cols * kElems;
    thread_local std::vector<uint32_t> count;  // (reused: a fresh one per chunk page-faults)
    count.assign(size_t(lanes) * A, 0);
    uint8_t v[kElems];
    auto count_blocks = [&](size_t from, size_t to) {
        for (size_t i = from, col = from % cols; i < to; ++i, col = col + 1 == cols ? 0 : col + 1) {
            const uint8_t* values = v;
            if (L.bits == 8) values = block(i) + L.quants_at();  // (q8_0's quants are its bytes)
            else unpack(L, block(i), v);
            uint32_t* c = &count[col * kElems * A];
            for (unsigned j = 0; j < kElems; ++j) ++c[j * A + values[j]];
        }
    };
    // Bits of order 0: sum c log2(total / c) = total log2 total - sum c log2 c.
    const double* const table = klogk_table();
    auto cost = [A, table](const uint32_t* c) {
        uint64_t total = 0;
        double sum = 0;
        unsigned used = 0;
        for (unsigned s = 0; s < A; ++s)
            if (c[s]) total += c[s], sum += klogk(table, c[s]), ++used;
        return total ? klogk(table, total) - sum + 0.5 * used * std::log2(double(total)) : 0.0;
    };
    auto lanes_minus_shared = [&] {  // relative to the shared model's bits
        std::vector<uint32_t> all(A, 0);  // the shared counts: the lanes' summed
        double lanes_bits = 0;
        for (unsigned l = 0; l < lanes; ++l) {
            lanes_bits += cost(&count[size_t(l) * A]);
            for (unsigned s = 0; s < A; ++s) all[s] += count[size_t(l) * A + s];
        }
        const double shared = cost(all.data());
        return shared > 0 ? (lanes_bits - shared) / shared : lanes_bits - shared;
    };
    const size_t first = std::min(n, kFirstEstimateBlocks);
    count_blocks(0, first);
    if (first < n) {
        const double d = lanes_minus_shared();
        if (d < -kClearMargin || d > kClearMargin) return d < 0;
        count_blocks(first, n);
    }
    return lanes_minus_shared() < 0;
}

struct Models {
    unsigned A, lanes;
    std::vector<uint16_t> values;  // [lane][tree of A]
    std::vector<uint16_t> scales;  // [field d, m][hi: ctx 257 | lo: ctx 256][tree 256]
    uint16_t heads[256];           // record heads: each byte XOR the one of the record before
    Models(const QParams& q, bool per_channel)
        : A(1u << q.layout.bits), lanes(per_channel ? q.cols * kElems : 1),
          values(size_t(lanes) * A, kProbInit), scales(size_t(2) * (257 + 256) * 256, kProbInit) {
        std::fill(std::begin(heads), std::end(heads), kProbInit);
    }
    uint16_t* hi_tree(unsigned field, unsigned ctx) { return &scales[(size_t(field) * 513 + ctx) * 256]; }
    uint16_t* lo_tree(unsigned field, unsigned hi) { return &scales[(size_t(field) * 513 + 257 + hi) * 256]; }
    // The trees of block i's 32 channels, one after another (A entries each).
    uint16_t* value_trees(size_t i, unsigned cols) { return &values[size_t(i % cols) * kElems * A]; }
};

template <typename Coder>
[[gnu::always_inline]] inline void code_tree(Coder& rc, uint16_t* tree, unsigned bits, unsigned& sym, unsigned rate) {
    unsigned node = 1;
    for (int k = static_cast<int>(bits) - 1; k >= 0; --k) {
        unsigned b;
        if constexpr (std::is_same_v<Coder, RangeEncoder>) b = (sym >> k) & 1, rc.bit(tree[node], b, rate);
        else b = rc.bit(tree[node], rate);
        node = (node << 1) | b;
    }
    sym = node & ((1u << bits) - 1);
}

// The 32 values of a block, each through its channel's tree; the value width a constant, so
// the tree walk unrolls.
template <unsigned Bits, typename Coder>
void code_values(Coder& rc, uint16_t* trees, uint8_t* v, unsigned rate) {
    for (unsigned j = 0; j < kElems; ++j, trees += 1u << Bits) {
        unsigned s = v[j];
        code_tree(rc, trees, Bits, s, rate);
        v[j] = static_cast<uint8_t>(s);
    }
}

// Codes (or decodes into) block i: scales, then the values. `prev` is the block one row up.
// Mode 0 codes the scales only (the rest of the block goes through rANS).
template <typename Coder>
void code_block(Coder& rc, Models& m, const QParams& q, size_t i, uint8_t* b, const uint8_t* prev) {
    constexpr bool enc = std::is_same_v<Coder, RangeEncoder>;
    const BlockLayout& L = q.layout;
    for (unsigned f = 0; f < (L.has_min ? 2u : 1u); ++f) {
        unsigned hi = b[2 * f + 1], lo = b[2 * f];
        code_tree(rc, m.hi_tree(f, prev ? prev[2 * f + 1] : 256), 8, hi, kScaleRate);
        code_tree(rc, m.lo_tree(f, hi), 8, lo, kScaleRate);
        if (!enc) b[2 * f + 1] = static_cast<uint8_t>(hi), b[2 * f] = static_cast<uint8_t>(lo);
    }
    if (m.lanes == 1) return;
    uint8_t v[kElems];
    if (enc) unpack(L, b, v);
    uint16_t* trees = m.value_trees(i, q.cols);
    if (L.bits == 4) code_values<4>(rc, trees, v, q.rate);
    else if (L.bits == 5) code_values<5>(rc, trees, v, q.rate);
    else code_values<8>(rc, trees, v, q.rate);
    if (!enc) pack(L, v, b);
}

// The head of record r, each byte XOR the same byte of the head before (equal heads: zeros).
template <typename Coder>
void code_head(Coder& rc, Models& m, const QParams& q, const uint8_t* src, uint8_t* dst, size_t r) {
    const uint8_t* h = src + r * q.record;
    const uint8_t* before = r ? h - q.record : nullptr;
    for (uint64_t k = 0; k < q.head; ++k) {
        unsigned d = before ? h[k] ^ before[k] : h[k];
        code_tree(rc, m.heads, 8, d, kScaleRate);
        if constexpr (!std::is_same_v<Coder, RangeEncoder>) dst[r * q.record + k] = static_cast<uint8_t>(before ? d ^ before[k] : d);
    }
}

constexpr uint8_t kModeShared = 0, kModePerChannel = 1, kModePlanes = 2, kModeValuePlanes = 3, kModeStoragePlanes = 4;

class QuantContextCodec final : public Codec {
public:
    uint8_t id() const override { return 19; }
    std::string_view name() const override { return "qctx"; }
    // qctx[:RATE]; the layout and the row come from the shape (blocks per row capped: a
    // longer row's channels share models modulo the cap).
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override {
        // qctx[:RATE] or qctx:planes (no binary model: rANS planes at rANS's speed).
        if (args.size() > 1) throw Error("qctx takes one argument: the adaptation rate (3-7) or 'planes'");
        const bool planes_only = args.size() == 1 && args[0] == "planes";
        const unsigned rate =
            args.empty() || planes_only ? kDefaultRate : parse_int_arg(args[0], kMinRate, kMaxRate, "qctx");
        uint8_t layout = kCopyLayout;
        for (uint8_t l = 0; l < std::size(kLayouts); ++l)
            if (shape.kind == ElemKind::Block && shape.elem_bytes == kLayouts[l].bytes &&
                shape.block_head == kLayouts[l].quants_at())
                layout = l;
        uint64_t cols = !shape.transposed && shape.row_bytes && shape.row_bytes % shape.elem_bytes == 0
                            ? shape.row_bytes / shape.elem_bytes : 1;
        if (cols > kMaxCols) cols = 1;
        Bytes p{layout};
        append_le<uint16_t>(p, static_cast<uint16_t>(cols));
        p.push_back(static_cast<uint8_t>(rate));
        if (shape.record_bytes && layout != kCopyLayout) {
            append_le<uint64_t>(p, shape.record_bytes);
            if (shape.record_head > kMaxRecordHead) throw Error("qctx: record heads over 64 bytes are not supported");
            p.push_back(static_cast<uint8_t>(shape.record_head));
        }
        if (planes_only && layout != kCopyLayout) p.push_back(kPlanesOnly);
        check_params(p);  // a record body that is not whole blocks is refused here
        return p;
    }
    void check_params(ByteSpan p) const override { (void)read_qparams(p); }
    std::vector<std::string> sample_specs() const override { return {"qctx", "qctx:planes"}; }
    std::string describe(ByteSpan p) const override {
        if (read_qparams(p).planes_only) return "qctx:planes";
        return p.size() == 4 && p[3] != kDefaultRate ? "qctx:" + std::to_string(p[3]) : "qctx";
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        const QParams q = read_qparams(params);
        if (!q.layout.bytes) return append_bytes(out, in);
        if (q.record && in.size() % q.record) throw Error("qctx: the input is not a whole number of records");
        const Geometry g(q, in.size());
        const bool per_channel = !q.planes_only && g.blocks &&
            per_channel_pays(q.layout, [&](size_t i) { return g.block(in.data(), i); }, g.blocks, q.cols);
        const size_t start = out.size();
        if (!per_channel && g.blocks) {
            const PlanesChoice choice = choose_planes(q, g, in);
            out.push_back(choice.whole_values ? kModeValuePlanes : choice.storage_order() ? kModeStoragePlanes : kModePlanes);
            encode_planes(in, q, g, out, choice);
            out.insert(out.end(), in.begin() + (in.size() - g.tail), in.end());
            // The decoder's size bound holds for every stream mode 0 writes, not for rANS
            // planes of degenerate data (all-equal blocks): there, mode 0.
            if (in.size() <= max_decoded_size(params, out.size() - start)) return;
            out.resize(start);
        }
        Models m(q, per_channel);
        out.push_back(per_channel ? kModePerChannel : kModeShared);
        const size_t len_at = out.size();
        if (!per_channel) append_le<uint32_t>(out, 0);  // the range coder's length, set below
        Bytes block(q.layout.bytes);
        {
            RangeEncoder rc(out);
            for (size_t i = 0; i < g.blocks; ++i) {
                if (q.record && i % g.per_record == 0) code_head(rc, m, q, in.data(), const_cast<uint8_t*>(in.data()), i / g.per_record);
                std::memcpy(block.data(), g.block(in.data(), i), block.size());
                code_block(rc, m, q, i, block.data(), i >= q.cols ? g.block(in.data(), i - q.cols) : nullptr);
            }
            rc.finish();
        }
        if (!per_channel) {
            const size_t rc_len = out.size() - len_at - 4;
            if (rc_len > UINT32_MAX) throw Error("qctx: chunk too large");
            store_le<uint32_t>(out.data() + len_at, static_cast<uint32_t>(rc_len));
            const PayloadPlane pp(q, g.blocks);
            Bytes plane(pp.size());
            for (size_t i = 0; i < g.blocks; ++i) {
                const uint8_t* b = g.block(in.data(), i) + pp.skip;
                for (size_t k = 0; k < pp.per; ++k) plane[pp.at(i, k)] = b[k];
            }
            if (!plane.empty()) rans().encode(plane, rans_order1(), out);
        }
        out.insert(out.end(), in.begin() + (in.size() - g.tail), in.end());
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        (void)read_qparams(params);  // before anything is allocated
        decode_appending(in, params, out_size, out);
    }
    // Every byte of `o` is written (the blocks, the payload planes, the tail) or it throws.
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* o) const override {
        const QParams q = read_qparams(params);
        if (!q.layout.bytes) {
            if (in.size() != out_size) throw Error("qctx: size mismatch");
            if (out_size) std::memcpy(o, in.data(), out_size);
            return;
        }
        if (q.record && out_size % q.record) throw Error("qctx: the output is not a whole number of records");
        const Geometry g(q, out_size);
        // (Mode 3 only where values are narrower than a byte: q8_0's are its bytes, mode 2.)
        if (in.size() < 1 + g.tail || in[0] > kModeStoragePlanes || (in[0] == kModeValuePlanes && q.layout.bits == 8))
            throw Error("qctx: bad block");
        const bool per_channel = in[0] == kModePerChannel;
        ByteSpan body = in.subspan(1, in.size() - 1 - g.tail), coded = body, plane_payload;
        if (in[0] >= kModePlanes) {
            if (out_size > max_decoded_size(params, in.size())) throw Error("qctx: declared size over the bound");
            const LastPlane last = in[0] == kModeValuePlanes   ? LastPlane::WholeValues
                                   : in[0] == kModeStoragePlanes ? LastPlane::StorageOrder
                                                                 : LastPlane::Bytes;
            decode_planes(body, q, g, out_size, o, last);
            if (g.tail) std::memcpy(o + out_size - g.tail, in.data() + in.size() - g.tail, g.tail);
            return;
        }
        if (!per_channel) {
            if (body.size() < 4 || load_le<uint32_t>(body.data()) > body.size() - 4) throw Error("qctx: bad block");
            const uint32_t rc_len = load_le<uint32_t>(body.data());
            coded = body.subspan(4, rc_len);
            plane_payload = body.subspan(4 + size_t(rc_len));
        }
        Models m(q, per_channel);
        RangeDecoder rc(coded);
        for (size_t i = 0; i < g.blocks; ++i) {
            if (q.record && i % g.per_record == 0) code_head(rc, m, q, o, o, i / g.per_record);
            code_block(rc, m, q, i, g.block(o, i), i >= q.cols ? g.block(o, i - q.cols) : nullptr);
        }
        if (rc.overran()) throw Error("qctx: corrupt stream");
        if (!per_channel) {
            const PayloadPlane pp(q, g.blocks);
            Bytes plane;
            if (pp.size()) rans().decode(plane_payload, rans_order1(), pp.size(), plane);
            else if (!plane_payload.empty()) throw Error("qctx: bad block");
            if (plane.size() != pp.size()) throw Error("qctx: bad quant plane");
            for (size_t i = 0; i < g.blocks; ++i) {
                uint8_t* b = g.block(o, i) + pp.skip;
                for (size_t k = 0; k < pp.per; ++k) b[k] = plane[pp.at(i, k)];
            }
        }
        if (g.tail) std::memcpy(o + out_size - g.tail, in.data() + in.size() - g.tail, g.tail);
    }
    DataShape output_shape(const DataShape& in) const override {
        DataShape s = in;
        s.record_bytes = s.record_head = 0;
        return s;
    }
    // Mode 1: one binary decision per input bit (scales: 8 per byte; values: `bits` each,
    // which the block holds exactly), each at most 8.1 bits: under 1.02 bytes per input byte.
    // Mode 0: the scales so, the rest through rANS (at most its input + 1). + the mode byte,
    // the length, the coder's flush and the tail. Mode 2: at most 5 planes, each at most its
    // input + 5 bytes (a length, a mode byte); mode 3 the same with a last plane of 32 bytes a
    // block of 18 or more (q4_0 stored: 1.9 bytes per input byte).
    size_t max_encoded_size(size_t n) const override { return n > SIZE_MAX / 4 ? SIZE_MAX : 2 * n + 64; }
    // Each decision shrinks the range by at least 0.0049 bits: fewer than 2048 decisions per
    // coded byte, and a block takes at least 16 (its scale): at most 128 blocks per coded byte.
    // Mode 2 (rANS, which can shrink degenerate planes further) is held to the same bound: its
    // encoder writes mode 0 instead and its decoder refuses more.
    uint64_t max_decoded_size(ByteSpan params, uint64_t encoded) const override {
        const QParams q = read_qparams(params);
        return q.layout.bytes ? saturating_mul_add(encoded, 128 * uint64_t(q.layout.bytes), 64) : encoded;
    }
};

}  // namespace

}  // namespace stz::qctx

namespace stz {

std::unique_ptr<Codec> make_quant_context_codec() { return std::make_unique<qctx::QuantContextCodec>(); }

}  // namespace stz
