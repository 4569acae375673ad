// qctx's modes 2 and 3: every byte of the chunk in rANS planes (the format is described in
// quant_context_codec.cpp).
#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "byte_transpose.hpp"
#include "quant_context.hpp"
#include "rans_codec.hpp"

namespace stz::qctx {

const Codec& rans() { return *find_codec("rans"); }
const Bytes& rans_order1() {
    static const Bytes p = rans().make_params({"1"}, DataShape{});
    return p;
}

namespace {

constexpr size_t kRowEstimateBlocks = 2048;

// The counts of a plane of `alphabet` symbols on the first blocks, each symbol paired with the
// same one one row up. `symbols(b, s)` writes block b's symbols into s, in the same order for
// every block, and returns how many.
struct PlaneCounts {
    double h0 = 0, h1 = 0;  // bits: order 0; order 1 with the symbol one row up as context
    size_t used = 0, used_pairs = 0, contexts = 0;
    uint64_t total = 0;
    double scale = 1;  // blocks of the chunk per block counted
    double stored = 0;  // bytes of the plane as it is (what rans keeps where coding gains nothing)

    // Whether the same value one row up can tell anything (order-1 of the channel-major quant
    // plane may pay: then the rans stage measures it; else order 0 without that measurement,
    // which cost as much as the coding). Order-1's tables (a frequency per pair seen, ~0.8
    // bytes) against order-0's, on the counted blocks.
    bool row_context_may_pay() const { return total && h1 / 8 + 0.8 * used_pairs < h0 / 8 + 0.8 * used; }

    // Estimated bytes of the whole plane by order 0 and by order 1, tables included. The
    // entropy of counts underestimates that of the source by about (symbols used - 1) / (2 ln 2)
    // bits per context (Miller-Madow), which matters where the sample spreads over many contexts
    // (order 1 of bytes: 65536 pairs; without the correction the bytes of the random-weight
    // model's q5_1 K looked 6 % smaller than its whole values, which are 1.2 % smaller coded).
    double order0() const { return scale * (h0 + kMillerMadowBits * double(used ? used - 1 : 0)) / 8 + 0.8 * used; }
    double order1() const { return scale * (h1 + kMillerMadowBits * double(used_pairs - contexts)) / 8 + 0.8 * used_pairs; }
    double best() const { return std::min({order0(), order1(), stored}); }
};

constexpr size_t kDenseCells = 1024;  // 5-bit values' pairs
constexpr unsigned kDenseTables = 4;

// The byte pairs' counts are 16-bit: half the table (128 KB) to bring into the cache, once per
// chunk, and 2 % of the trained and random quantised files' compression (duel, warm and cold). A
// sample has at most 65,536 pairs, so a count wraps (to 0) only where every pair is that one
// cell, the only cell used: its count is then all the pairs.
static_assert(kRowEstimateBlocks * kElems <= 65536);

// count_plane's buffers, one set per thread for every instantiation (the calls never overlap).
struct CountScratch {
    struct BytePairTable {
        uint16_t cells[256 * 256];  // zero between calls
    };
    Bytes syms;
    std::vector<uint32_t, DefaultInitAllocator<uint32_t>> used;  // (written before read)
    std::unique_ptr<BytePairTable, LargeTableDeleter> byte_pairs;  // made at the first plane of bytes
};
CountScratch& count_scratch() {
    thread_local CountScratch scratch;
    return scratch;
}

template <typename BlockAt, typename Symbols>
PlaneCounts count_plane(unsigned alphabet, BlockAt&& block, Symbols&& symbols, size_t n, unsigned cols) {
    const size_t sampled = std::min(n, kRowEstimateBlocks + cols);
    // Each block's symbols once. The pairs of a small alphabet in a table read whole; of bytes
    // (65536 cells, 8x a small chunk's sampled pairs) in one that only the cells used are read
    // from and cleared in. (A reference to the per-thread buffers: each access of a
    // thread_local in a shared library's loop can cost a call.)
    CountScratch& scratch = count_scratch();
    Bytes& syms = scratch.syms;
    auto& used_cells = scratch.used;
    const size_t cells = size_t(alphabet) * alphabet;
    const bool dense = cells <= kDenseCells;
    // A small alphabet's pairs in kDenseTables tables, the j-th symbol's pair into table
    // j % kDenseTables: the increments of neighbouring symbols, often of one cell, then do not
    // wait for each other (in one table that wait was 40 % of the count of a q5 plane's values).
    uint32_t dense_pairs[kDenseTables * kDenseCells];
    syms.resize(sampled * kElems);
    if (dense) std::fill(dense_pairs, dense_pairs + kDenseTables * cells, 0u);
    else if (!scratch.byte_pairs) scratch.byte_pairs = make_large_table<CountScratch::BytePairTable>();
    if (used_cells.size() < std::max(sampled * kElems, cells)) used_cells.resize(std::max(sampled * kElems, cells));
    uint32_t* const used = used_cells.data();
    size_t n_used = 0;
    unsigned k = 0;
    for (size_t i = 0; i < sampled; ++i) k = symbols(block(i), &syms[i * kElems]);
    uint16_t* const byte_pairs = dense ? nullptr : scratch.byte_pairs->cells;
    const size_t n_pairs = (sampled - std::min(sampled, size_t{cols})) * k;
    // A cell is the symbol one row up, shifted, or'd with the symbol (alphabets are powers of
    // two); the small alphabet's tables taken four symbols at a time, each from its own pointer.
    // (With each symbol's table offset and cell worked out by two multiplications, the count
    // of a trained q4_1 cache's values took about a fifth longer, perf.)
    assert(std::has_single_bit(alphabet));
    const unsigned bits = static_cast<unsigned>(std::countr_zero(alphabet));
    const size_t stride = dense ? cells : 0;  // (the byte pairs' cells would lie past the tables)
    uint32_t* const by_lane[kDenseTables] = {dense_pairs, dense_pairs + stride, dense_pairs + 2 * stride, dense_pairs + 3 * stride};
    static_assert(kDenseTables == 4 && kElems % kDenseTables == 0);
    for (size_t i = cols; i < sampled; ++i) {
        const uint8_t* const s = &syms[i * kElems];
        const uint8_t* const up = s - cols * kElems;
        if (dense) {
            unsigned j = 0;
            for (; j + kDenseTables <= k; j += kDenseTables)
                for (unsigned t = 0; t < kDenseTables; ++t) ++by_lane[t][uint32_t(up[j + t]) << bits | s[j + t]];
            for (; j < k; ++j) ++by_lane[j % kDenseTables][uint32_t(up[j]) << bits | s[j]];
            continue;
        }
        for (unsigned j = 0; j < k; ++j) {  // (no branch: whether a cell is new is a coin toss)
            const uint32_t cell = uint32_t(up[j]) << bits | s[j];
            used[n_used] = cell;
            n_used += byte_pairs[cell]++ == 0;
        }
    }
    if (dense)
        for (uint32_t cell = 0; cell < cells; ++cell) {
            for (unsigned t = 1; t < kDenseTables; ++t) dense_pairs[cell] += dense_pairs[t * cells + cell];
            used[n_used] = cell, n_used += dense_pairs[cell] != 0;
        }
    PlaneCounts c;
    std::vector<uint32_t> single(alphabet, 0), context(alphabet, 0);
    const double* const table = klogk_table();
    for (size_t u = 0; u < n_used; ++u) {
        const uint32_t p = used[u];
        // (A byte pair's count that wrapped is the only cell's: all the pairs.)
        const uint32_t count = dense ? std::exchange(dense_pairs[p], 0u)
                                     : std::max<uint32_t>(std::exchange(byte_pairs[p], uint16_t{0}), n_used == 1 ? n_pairs : 0);
        c.h1 -= klogk(table, count), ++c.used_pairs, single[p % alphabet] += count, context[p / alphabet] += count;
    }
    for (unsigned a = 0; a < alphabet; ++a)
        c.total += single[a], c.h1 += klogk(table, context[a]), c.used += single[a] != 0, c.contexts += context[a] != 0;
    c.h0 = klogk(table, c.total);
    for (unsigned a = 0; a < alphabet; ++a) c.h0 -= klogk(table, single[a]);
    if (sampled > cols) c.scale = double(n) / double(sampled - cols);
    c.stored = double(n) * k;
    return c;
}

}  // namespace

// Whole values are a byte each, 32 a block, where the bytes after the scales are 16 or 20:
// more symbols to decode, and bytes that near-random quants leave stored (a copy) become
// values that rANS codes. They must save this much (the random-weight model's q5_1 K: 1.2 %
// smaller, decoded at 0.7x the speed).
constexpr double kValuesMargin = 0.02;

PlanesChoice choose_planes(const QParams& q, const Geometry& g, ByteSpan in) {
    const BlockLayout& L = q.layout;
    const PayloadPlane pp(q, g.blocks);
    // q8_0's values are its bytes: nothing to choose but the order, which rans:1 takes from
    // every pair of a plane up to kRansExactOrderBytes that its order-1 encoder counts anyway
    // (a sample counted here first was 10 % of a trained q8_0 cache's compression); larger
    // planes by the sample below, which costs less than rans:1's own.
    if (L.bits == 8 && pp.size() <= kRansExactOrderBytes) return {false, std::nullopt};
    const unsigned cols = static_cast<unsigned>(pp.cols);
    auto block = [&](size_t i) { return g.block(in.data(), i); };
    const PlaneCounts values = count_plane(1u << L.bits, block, [&](const uint8_t* b, uint8_t* s) {
        unpack(L, b, s);
        return kElems;
    }, g.blocks, cols);
    if (L.bits < 8) {  // (q8_0's values are its bytes)
        const PlaneCounts bytes = count_plane(256, block, [&](const uint8_t* b, uint8_t* s) {
            std::memcpy(s, b + pp.skip, pp.per);
            return static_cast<unsigned>(pp.per);
        }, g.blocks, cols);
        if (values.best() < (1 - kValuesMargin) * bytes.best()) return {true, values.order1() < values.order0()};
    }
    // The bytes: order 1 as the values' counts suggest (what this plane had before mode 3).
    return {false, values.row_context_may_pay()};
}

namespace {

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
    [[gnu::always_inline]] void move(const Geometry& g, T* base) {
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

// Mode 4's moves: the scale bytes into (ToPlanes) or out of their channel-major planes, as in
// mode 2, and the bytes after the scales of each block into or out of one plane in storage
// order, a fixed-size copy a block (16, 20 or 32 bytes): no transposition of the bulk of the
// block. (The random-weight q8_0 caches' K: the tiled transpose back was 6.5 % of their
// decompression.)
// The scale bytes go through a strip of rows of blocks at a time, each row its blocks' scale
// bytes side by side (`heads`): the tiled transpose moves the strip to or from the channel-major
// planes, and the blocks take their scale bytes from the strip in order. (Byte by byte from the
// planes, Skip strided loads and stores a block, the moves were 17 % of the random-weight q5_1
// cache's decompression, perf.) A strip is 16-64 rows, about 16 KB where rows are wide, never
// more rows than the chunk has: at most the chunk's scale bytes, kept per thread.
// (`payload`: the plane of the bytes after the scales, bp.payload's or, decoding a stored
// plane, where it lies in the chunk's payload.)
constexpr size_t kHeadStripRows = 64, kHeadStripBytes = 16 << 10;

template <bool ToPlanes, size_t Per, size_t Skip, typename T, typename P>
void move_in_storage_order(BlockPlanes& bp, const Geometry& g, T* base, P* payload) {
    const size_t cols = bp.pp.cols, rows = bp.pp.rows, W = g.W, width = cols * Skip;
    if (rows == 0) return;
    const size_t run = g.record ? g.per_record : bp.blocks;
    const size_t strip_rows = std::min(rows, std::clamp<size_t>(kHeadStripBytes / width, 16, kHeadStripRows));
    uint8_t* const b0 = const_cast<uint8_t*>(base);
    thread_local Bytes strip_buffer;
    strip_buffer.resize(strip_rows * width);
    uint8_t* const heads = strip_buffer.data();
    uint8_t* b = nullptr;
    size_t left_in_run = 0;  // a run's blocks lie back to back
    for (size_t r0 = 0; r0 < rows; r0 += strip_rows) {
        const size_t n_rows = std::min(strip_rows, rows - r0);
        // Column x of the strip: byte x % Skip of the blocks of column x / Skip, from row r0.
        auto column_at = [&](uint64_t x) { return bp.scale[x % Skip].data() + x / Skip * rows + r0; };
        if constexpr (!ToPlanes) transpose_bytes<false>(heads, n_rows, width, column_at);
        uint8_t* h = heads;
        for (size_t i = 0, n = n_rows * cols; i < n; ++i, h += Skip, payload += Per) {
            if (left_in_run == 0) b = g.block(b0, r0 * cols + i), left_in_run = run;
            if constexpr (ToPlanes) {
                std::memcpy(h, b, Skip);
                std::memcpy(payload, b + Skip, Per);
            } else {
                std::memcpy(b, h, Skip);
                std::memcpy(b + Skip, payload, Per);
            }
            b += W, --left_in_run;
        }
        if constexpr (ToPlanes) transpose_bytes<true>(heads, n_rows, width, column_at);
    }
}
template <bool ToPlanes, typename T, typename P>
void move_in_storage_order(BlockPlanes& bp, const Geometry& g, T* base, P* payload) {
    const bool min = bp.pp.skip == 4;  // the _1 types: d and m
    switch (bp.pp.per) {
        case 16:
            return min ? move_in_storage_order<ToPlanes, 16, 4>(bp, g, base, payload)
                       : move_in_storage_order<ToPlanes, 16, 2>(bp, g, base, payload);
        case 20:
            return min ? move_in_storage_order<ToPlanes, 20, 4>(bp, g, base, payload)
                       : move_in_storage_order<ToPlanes, 20, 2>(bp, g, base, payload);
        case 32: return move_in_storage_order<ToPlanes, 32, 2>(bp, g, base, payload);
        default: throw Error("qctx: no such block layout");
    }
}

// A rans stage's output of `plane`, after its u32 length unless it is the last of the payload:
// at the order choose_planes decided (`decided_order1`), else as rans:1 estimates it.
void put_plane(ByteSpan plane, Bytes& out, bool sized, std::optional<bool> decided_order1 = std::nullopt) {
    const size_t at = out.size();
    if (sized) append_le<uint32_t>(out, 0);
    if (decided_order1) rans_encode_decided(plane, *decided_order1, out);
    else rans().encode(plane, rans_order1(), out);
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

// The scale planes (each after its length), two at a time where rans decodes them together
// (a q5_1 chunk's four planes of its d and m bytes, a few KB each: one stream alone waits on its
// lanes' table lookups).
void get_scale_planes(ByteSpan& body, BlockPlanes& bp) {
    std::vector<ByteSpan> coded(bp.scale.size());
    for (ByteSpan& c : coded) c = take_plane(body);
    const size_t size = bp.scale_bytes;
    decode_planes_in_pairs(
        coded.size(), [&](size_t p) { return rans().decodes_in_pairs(coded[p], rans_order1(), size); },
        [&](size_t a, size_t b) {
            bp.scale[a].resize(size), bp.scale[b].resize(size);
            rans().decode_pair_together(coded[a], rans_order1(), size, bp.scale[a].data(), coded[b], rans_order1(),
                                        size, bp.scale[b].data());
        },
        [&](size_t p, bool) { get_plane(coded[p], size, bp.scale[p]); });
}

// Mode 3's last plane: the 32 values of every block whole, one byte each, channel-major (for
// each column c, each value j, the rows in order), made from mode 2's plane of the bytes after
// the scales and back. Whole, a q5 value's high bit (in qh, apart from its nibble) and its
// nibble are one symbol, and a 4-bit value is not paired with the value 16 channels away:
// order-1's context is then the same value one row up, what a model per channel learns from.
// (q5_0 of the corpus's hd32 K: order-1 entropy of the values 33.1 KB against the adaptive
// model per channel's 32.5 KB and mode 2's 41 KB and more.)
struct ValuePlane {
    const PayloadPlane& pp;
    const BlockLayout& layout;
    size_t size() const { return pp.rows * pp.cols * kElems; }
    // The planes are channel-major on both sides, so value j of every row comes from two planes
    // (the nibble's byte j mod 16 and, for q5, qh's byte j / 8) element by element: loops over
    // the rows that the compiler vectorises (a block at a time cost 4x rANS's decoding).
    template <bool ToValues>
    void convert(uint8_t* payload, uint8_t* values) const {
        const size_t R = pp.rows, quants = layout.has_high ? 4 : 0;  // qh's 4 bytes come first
        for (size_t c = 0; c < pp.cols; ++c) {
            uint8_t* const packed = payload + c * pp.per * R;
            uint8_t* const whole = values + c * kElems * R;
            if (ToValues) to_values(packed, whole, quants, R);
            else from_values(packed, whole, quants, R);
        }
    }
    // One pass per value: its nibble and (q5) its high bit together, each value written once.
    void to_values(const uint8_t* packed, uint8_t* whole, size_t quants, size_t R) const {
        for (unsigned j = 0; j < 16; ++j) {
            const uint8_t* const q = packed + (quants + j) * R;
            uint8_t* const lo = whole + j * R;
            uint8_t* const hi = whole + (j + 16) * R;
            if (!layout.has_high) {
                for (size_t r = 0; r < R; ++r) lo[r] = q[r] & 15, hi[r] = q[r] >> 4;
                continue;
            }
            // qh byte m holds bit 4 of values 8m..8m+7.
            const uint8_t* const h_lo = packed + (j / 8) * R;
            const uint8_t* const h_hi = packed + ((j + 16) / 8) * R;
            const unsigned b_lo = j % 8, b_hi = (j + 16) % 8;
            for (size_t r = 0; r < R; ++r) {
                lo[r] = static_cast<uint8_t>((q[r] & 15) | ((h_lo[r] >> b_lo) & 1) << 4);
                hi[r] = static_cast<uint8_t>((q[r] >> 4) | ((h_hi[r] >> b_hi) & 1) << 4);
            }
        }
    }
    // The nibbles a byte at a time, then each qh byte from its eight values in one pass
    // (not eight read-modify-write passes over it).
    void from_values(uint8_t* packed, const uint8_t* whole, size_t quants, size_t R) const {
        for (unsigned j = 0; j < 16; ++j) {
            uint8_t* const q = packed + (quants + j) * R;
            const uint8_t* const lo = whole + j * R;
            const uint8_t* const hi = whole + (j + 16) * R;
            for (size_t r = 0; r < R; ++r) q[r] = static_cast<uint8_t>((lo[r] & 15) | (hi[r] & 15) << 4);
        }
        if (!layout.has_high) return;
        for (unsigned m = 0; m < 4; ++m) {
            uint8_t* const h = packed + m * R;
            const uint8_t* const v = whole + 8 * m * R;
            for (size_t r = 0; r < R; ++r) {
                unsigned x = 0;
                for (unsigned bit = 0; bit < 8; ++bit) x |= ((v[bit * R + r] >> 4) & 1u) << bit;
                h[r] = static_cast<uint8_t>(x);
            }
        }
    }
};

thread_local Bytes value_buffer;  // (reused chunk after chunk, as the planes are)

}  // namespace

void encode_planes(ByteSpan in, const QParams& q, const Geometry& g, Bytes& out, const PlanesChoice& choice) {
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
    if (choice.storage_order()) {
        move_in_storage_order<true>(bp, g, in.data(), bp.payload.data());
        for (const Bytes& plane : bp.scale) put_plane(plane, out, true);
        return put_plane(bp.payload, out, false, false);
    }
    bp.move<true>(g, in.data());
    for (const Bytes& plane : bp.scale) put_plane(plane, out, true);
    if (!choice.whole_values) return put_plane(bp.payload, out, false, choice.row_context);
    const ValuePlane vp{bp.pp, q.layout};
    value_buffer.resize(vp.size());
    vp.convert<true>(bp.payload.data(), value_buffer.data());
    put_plane(value_buffer, out, false, choice.row_context);
}

// Cloned for AVX2 (chosen at load time where the CPU has it): the loops after the rANS planes,
// the q5 high bits packed back into qh and the planes moved back into blocks, run 16 bytes at a
// time with two-operand SSE2 otherwise, and were 15 % of a trained hd32 q5_0 cache's
// decompression (perf); in the AVX2 clone 4.5 %, and that file decompresses 1.17x as fast.
// The bytes are the same either way.
__attribute__((target_clones("avx2", "default"))) void decode_planes(ByteSpan body, const QParams& q, const Geometry& g,
                                                                      size_t out_size, uint8_t* o, LastPlane last) {
    if (q.record && q.head) {
        const size_t records = out_size / q.record;
        Bytes heads;
        get_plane(take_plane(body), records * q.head, heads);
        for (size_t r = 0; r < records; ++r)
            for (uint64_t k = 0; k < q.head; ++k)
                o[r * q.record + k] = heads[r * q.head + k] ^ (r ? o[(r - 1) * q.record + k] : 0);
    }
    BlockPlanes bp(q, g.blocks);
    get_scale_planes(body, bp);
    if (last == LastPlane::StorageOrder) {
        // A plane its rans stage stored (a random-weight cache's quants) goes into the blocks
        // from where it lies: copied once, not twice (the copy into bp.payload first was 5 % of
        // a random-weight q5_1 cache's decompression).
        if (const std::optional<ByteSpan> stored = rans_stored_bytes(body, bp.pp.size()))
            return move_in_storage_order<false>(bp, g, o, stored->data());
        get_plane(body, bp.pp.size(), bp.payload);
        return move_in_storage_order<false>(bp, g, o, bp.payload.data());
    }
    if (last == LastPlane::Bytes) {
        get_plane(body, bp.pp.size(), bp.payload);
    } else {
        const ValuePlane vp{bp.pp, q.layout};
        get_plane(body, vp.size(), value_buffer);
        bp.payload.resize(bp.pp.size());
        vp.convert<false>(bp.payload.data(), value_buffer.data());
    }
    bp.move<false>(g, o);
}

}  // namespace stz::qctx
