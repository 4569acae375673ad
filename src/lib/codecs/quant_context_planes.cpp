// qctx's mode 2: every byte of the chunk in rANS planes (the format is described in
// quant_context_codec.cpp).
#include <algorithm>
#include <vector>

#include "byte_transpose.hpp"
#include "quant_context.hpp"

namespace stz::qctx {

const Codec& rans() { return *find_codec("rans"); }
const Bytes& rans_order1() {
    static const Bytes p = rans().make_params({"1"}, DataShape{});
    return p;
}

namespace {

// Whether the same value one row up can tell anything (order-1 of the channel-major quant
// plane may pay: then the rans stage measures it; else order 0 without that measurement,
// which cost as much as the coding). Order-1's tables (a frequency per pair seen, ~0.8
// bytes) against order-0's, on the first blocks.
constexpr size_t kRowEstimateBlocks = 2048;
template <typename BlockAt>
bool row_context_may_pay(const BlockLayout& L, BlockAt&& block, size_t n, unsigned cols) {
    n = std::min(n, kRowEstimateBlocks + cols);
    const unsigned A = 1u << L.bits;
    thread_local std::vector<uint32_t> pairs;
    pairs.assign(size_t(A) * A, 0);
    std::vector<uint32_t> single(A, 0), context(A, 0);
    uint8_t v[kElems], up[kElems];
    for (size_t i = cols; i < n; ++i) {
        unpack(L, block(i), v), unpack(L, block(i - cols), up);
        for (unsigned j = 0; j < kElems; ++j) ++pairs[size_t(up[j]) * A + v[j]];
    }
    const double* const table = klogk_table();
    uint64_t total = 0;
    double h1 = 0;
    size_t used_pairs = 0, used = 0;
    for (size_t p = 0; p < pairs.size(); ++p)
        if (pairs[p]) h1 -= klogk(table, pairs[p]), ++used_pairs, single[p % A] += pairs[p], context[p / A] += pairs[p];
    for (unsigned s = 0; s < A; ++s) {
        total += single[s];
        h1 += klogk(table, context[s]);
        used += single[s] != 0;
    }
    double h0 = klogk(table, total);
    for (unsigned s = 0; s < A; ++s) h0 -= klogk(table, single[s]);
    return total && h1 / 8 + 0.8 * used_pairs < h0 / 8 + 0.8 * used;
}

// Mode 2: every byte of the chunk in byte planes through rANS, no binary decision anywhere
// (rANS's speed both ways). The planes are channel-major like mode 0's quant plane, so that
// order-1's context, the byte before, is the same byte one row up: the context mode 0's
// scale model uses for the high byte. Planes: the record heads (each byte XOR the same byte
// of the head before), each scale byte k < skip (d low, d high, m low, m high) and the bytes
// after the scales, exactly mode 0's plane.
// The planes live per thread and are reused chunk after chunk: fresh ones cost a page fault
// per 4 KiB of every chunk.
struct BlockPlanes {
    PayloadPlane pp;
    size_t blocks, scale_bytes;
    std::vector<Bytes>& scale;  // [k < skip]: one byte per block
    Bytes& payload;
    BlockPlanes(const QParams& q, size_t n) : pp(q, n), blocks(n), scale_bytes(n), scale(scale_buffers()), payload(payload_buffer()) {
        scale.resize(pp.skip);
    }
    static std::vector<Bytes>& scale_buffers() {
        thread_local std::vector<Bytes> buffers;
        return buffers;
    }
    static Bytes& payload_buffer() {
        thread_local Bytes buffer;
        return buffer;
    }
    void allocate() {
        for (Bytes& plane : scale) plane.resize(scale_bytes);
        payload.resize(pp.size());
    }
    uint8_t* column(size_t x, size_t r0) {  // byte x % W of the blocks of column x / W, from row r0
        const size_t c = x / (pp.skip + pp.per), k = x % (pp.skip + pp.per);
        return k < pp.skip ? scale[k].data() + c * pp.rows + r0 : payload.data() + (c * pp.per + k - pp.skip) * pp.rows + r0;
    }
    // Moves the blocks into the planes (ToPlanes) or back. A run of whole rows that lie back to
    // back (every record's body, when it is whole rows) is one matrix for the tiled transpose.
    template <bool ToPlanes, typename T>
    void move(const Geometry& g, T* base) {
        const size_t W = pp.skip + pp.per, run = g.record ? g.per_record : blocks;
        uint8_t* b0 = const_cast<uint8_t*>(base);
        if (run % pp.cols == 0) {
            for (size_t i0 = 0; i0 < blocks; i0 += run)
                transpose_bytes<ToPlanes>(g.block(b0, i0), run / pp.cols, pp.cols * W,
                                          [&](uint64_t x) { return column(x, i0 / pp.cols); });
            return;
        }
        for (size_t i = 0; i < blocks; ++i) {
            uint8_t* b = g.block(b0, i);
            const size_t c = i % pp.cols, r = i / pp.cols;
            for (size_t k = 0; k < W; ++k) {
                uint8_t& p = column(c * W + k, r)[0];
                ToPlanes ? void(p = b[k]) : void(b[k] = p);
            }
        }
    }
};

const Bytes& rans_order0() {
    static const Bytes p = rans().make_params({"0"}, DataShape{});
    return p;
}

// A rans stage's output of `plane`, after its u32 length unless it is the last of the payload.
void put_plane(ByteSpan plane, Bytes& out, bool sized, bool order1 = true) {
    const size_t at = out.size();
    if (sized) append_le<uint32_t>(out, 0);
    rans().encode(plane, order1 ? rans_order1() : rans_order0(), out);
    if (!sized) return;
    const size_t len = out.size() - at - 4;
    if (len > UINT32_MAX) throw Error("qctx: chunk too large");
    store_le<uint32_t>(out.data() + at, static_cast<uint32_t>(len));
}
ByteSpan take_plane(ByteSpan& body) {
    if (body.size() < 4 || load_le<uint32_t>(body.data()) > body.size() - 4) throw Error("qctx: bad plane length");
    const size_t len = load_le<uint32_t>(body.data());
    const ByteSpan plane = body.subspan(4, len);
    body = body.subspan(4 + len);
    return plane;
}
void get_plane(ByteSpan coded, size_t size, Bytes& plane) {
    plane.clear();
    rans().decode(coded, rans_order1(), size, plane);
    if (plane.size() != size) throw Error("qctx: bad plane");
}

}  // namespace

void encode_planes(ByteSpan in, const QParams& q, const Geometry& g, Bytes& out) {
    if (q.record && q.head) {
        const size_t records = in.size() / q.record;
        Bytes heads(records * q.head);
        for (size_t r = 0; r < records; ++r)
            for (uint64_t k = 0; k < q.head; ++k)
                heads[r * q.head + k] = in[r * q.record + k] ^ (r ? in[(r - 1) * q.record + k] : 0);
        put_plane(heads, out, true);
    }
    BlockPlanes bp(q, g.blocks);
    bp.allocate();
    bp.move<true>(g, in.data());
    for (const Bytes& plane : bp.scale) put_plane(plane, out, true);
    const bool row_context = row_context_may_pay(q.layout, [&](size_t i) { return g.block(in.data(), i); }, g.blocks, bp.pp.cols);
    put_plane(bp.payload, out, false, row_context);
}

void decode_planes(ByteSpan body, const QParams& q, const Geometry& g, size_t out_size, uint8_t* o) {
    if (q.record && q.head) {
        const size_t records = out_size / q.record;
        Bytes heads;
        get_plane(take_plane(body), records * q.head, heads);
        for (size_t r = 0; r < records; ++r)
            for (uint64_t k = 0; k < q.head; ++k)
                o[r * q.record + k] = heads[r * q.head + k] ^ (r ? o[(r - 1) * q.record + k] : 0);
    }
    BlockPlanes bp(q, g.blocks);
    for (Bytes& plane : bp.scale) get_plane(take_plane(body), bp.scale_bytes, plane);
    get_plane(body, bp.pp.size(), bp.payload);
    bp.move<false>(g, o);
}

}  // namespace stz::qctx
