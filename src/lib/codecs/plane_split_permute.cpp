// The planes codec's transposition: the bytes of a chunk's elements to their planes and back
// (the format is described in plane_split_codec.cpp). Hot: every byte of a planes chunk passes
// through here both ways, so the helpers stay in this file, in an anonymous namespace, where
// the instantiations of permute and permute_records at the end inline them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "byte_transpose.hpp"
#include "plane_split.hpp"
#include "x86_intrinsics.hpp"

namespace stz::planes {

Geometry geometry(const PlanesParams& P, size_t size) {
    Geometry g;
    g.fields = P.fields();
    uint64_t elems = size / P.width;
    g.cols = P.channel_major && P.cols > 1 && elems / P.cols > 0 ? P.cols : 1;
    g.rows = elems / g.cols;
    g.body = g.rows * g.cols * P.width;
    g.offset.reserve(g.fields.size());
    for (const auto& f : g.fields) g.offset.push_back(uint64_t{f.start} * g.rows * g.cols);
    return g;
}

namespace {

// Moves bytes between the element layout and the planes. Channel-major: for each column,
// plane p holds, per field byte k, that column's rows in order. Storage order: element by
// element. `plane[p]` is where plane p starts (each plane_size(p) bytes; on decode a stored
// plane is read where it lies in the payload, not copied first).

// Storage order of scalars (one column): one straight (vectorisable) pass. A template on the
// element width lets the common float cases unroll.
template <bool ToPlanes, unsigned W>
void permute_scalar_in_order(uint8_t* elems, uint8_t* const* plane, uint64_t R) {
    uint8_t* dst[W];
    for (unsigned j = 0; j < W; ++j) dst[j] = plane[j];
    for (uint64_t r = 0; r < R; ++r)
        for (unsigned j = 0; j < W; ++j) ToPlanes ? void(dst[j][r] = elems[r * W + j]) : void(elems[r * W + j] = dst[j][r]);
}

#if defined(__x86_64__)
// The 8x8 byte matrix `rows` (byte k of rows[r] its row r, column k) transposed into `cols`.
inline void transpose_8x8(const uint64_t rows[8], uint64_t cols[8]) {
    const auto row = [&](int r) { return _mm_cvtsi64_si128(static_cast<long long>(rows[r])); };
    const __m128i t0 = _mm_unpacklo_epi8(row(0), row(1)), t1 = _mm_unpacklo_epi8(row(2), row(3));
    const __m128i t2 = _mm_unpacklo_epi8(row(4), row(5)), t3 = _mm_unpacklo_epi8(row(6), row(7));
    const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
    const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(cols), _mm_unpacklo_epi32(u0, u2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(cols + 2), _mm_unpackhi_epi32(u0, u2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(cols + 4), _mm_unpacklo_epi32(u1, u3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(cols + 6), _mm_unpackhi_epi32(u1, u3));
}
#endif

// Quant blocks in storage order: the header bytes one by one, the payload as one copy. Always
// inlined, so that the calls with compile-time sizes (every block type the parsers know) get
// an unrolled header loop and an inlined payload copy instead of a memcpy call for 16-32
// bytes. The plane pointers are held in locals so that the stores through them cannot make
// the compiler reload them (they are uint8_t*, which may alias anything).
template <bool ToPlanes>
[[gnu::always_inline]] inline void permute_blocks(uint8_t* elems, uint8_t* const* plane, uint64_t n, uint64_t W, uint64_t H) {
    const uint64_t body = W - H;
    uint8_t* head[kMaxHead];
    for (uint64_t b = 0; b < H; ++b) head[b] = plane[b];
    uint8_t* const payload = plane[H];
    uint64_t i = 0;
#if defined(__x86_64__)
    // Eight blocks at a time where a head fits in eight bytes and a block is that long: the
    // heads' bytes and the planes' are the two sides of one 8x8 byte transpose. On the way
    // back a head is stored as eight bytes, its last 8 - H then overwritten by the payload's
    // copy. (Byte by byte, a q5_1 block's eight head bytes were 12 % of its decompression.)
    if (H <= 8 && W >= 8)
        for (; i + 8 <= n; i += 8) {
            uint64_t rows[8] = {}, cols[8];
            uint8_t* const e = elems + i * W;
            if (ToPlanes) {
                for (unsigned k = 0; k < 8; ++k) std::memcpy(&rows[k], e + k * W, 8);
            } else {
                for (uint64_t b = 0; b < H; ++b) std::memcpy(&rows[b], head[b] + i, 8);
            }
            transpose_8x8(rows, cols);
            for (unsigned k = 0; k < 8; ++k) {
                uint8_t* const block = e + k * W;
                uint8_t* const body_at = payload + (i + k) * body;
                if (ToPlanes) std::memcpy(body_at, block + H, body);
                else std::memcpy(block, &cols[k], 8), std::memcpy(block + H, body_at, body);
            }
            if (ToPlanes)
                for (uint64_t b = 0; b < H; ++b) std::memcpy(head[b] + i, &cols[b], 8);
        }
#endif
    for (; i < n; ++i) {
        uint8_t* e = elems + i * W;
        for (uint64_t b = 0; b < H; ++b) ToPlanes ? void(head[b][i] = e[b]) : void(e[b] = head[b][i]);
        ToPlanes ? void(std::memcpy(payload + i * body, e + H, body)) : void(std::memcpy(e + H, payload + i * body, body));
    }
}

template <bool ToPlanes>
void permute_blocks_in_order(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g) {
    const uint64_t n = g.rows * g.cols, W = P.width, H = P.head;
    if (H == 2 && W == 18) return permute_blocks<ToPlanes>(elems, plane, n, 18, 2);    // q4_0, iq4_nl
    if (H == 2 && W == 34) return permute_blocks<ToPlanes>(elems, plane, n, 34, 2);    // q8_0
    if (H == 4 && W == 20) return permute_blocks<ToPlanes>(elems, plane, n, 20, 4);    // q4_1
    if (H == 6 && W == 22) return permute_blocks<ToPlanes>(elems, plane, n, 22, 6);    // q5_0
    if (H == 8 && W == 24) return permute_blocks<ToPlanes>(elems, plane, n, 24, 8);    // q5_1
    if (H == 10 && W == 26) return permute_blocks<ToPlanes>(elems, plane, n, 26, 10);  // q6_0
    permute_blocks<ToPlanes>(elems, plane, n, W, H);
}

// Channel-major (and scalars of one column): the rows x (cols * width) byte matrix of the
// elements, each byte column of which is a run of `rows` bytes in a plane: byte k of field p
// of column c at plane[p] + (c * field width + k) * rows.
template <bool ToPlanes>
void permute_columns(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g) {
    const uint64_t W = P.width, R = g.rows;
    // Per byte j of an element (W <= kMaxWidth): its plane, and its run's index within a
    // column's share of that plane (field width, byte k of the field).
    std::vector<uint8_t*> base(W);
    std::vector<uint64_t> field_width(W), byte_in_field(W);
    for (size_t p = 0; p < g.fields.size(); ++p)
        for (uint32_t k = 0; k < g.fields[p].width; ++k) {
            const uint32_t j = g.fields[p].start + k;
            base[j] = plane[p], field_width[j] = g.fields[p].width, byte_in_field[j] = k;
        }
    transpose_bytes<ToPlanes>(elems, R, g.cols * W, [&](uint64_t x) {
        const uint64_t c = x / W, j = x % W;
        return base[j] + (c * field_width[j] + byte_in_field[j]) * R;
    });
}

}  // namespace

template <bool ToPlanes>
void permute(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g) {
    const uint64_t W = P.width;
    const bool scalar = !P.blocks || (P.head == W);
    if (g.body == 0) return;
    if (scalar && W == 1) return ToPlanes ? void(std::copy(elems, elems + g.body, plane[0])) : void(std::copy(plane[0], plane[0] + g.body, elems));
    if (scalar && W == 2 && g.cols == 1) return permute_scalar_in_order<ToPlanes, 2>(elems, plane, g.rows);
    if (scalar && W == 4 && g.cols == 1) return permute_scalar_in_order<ToPlanes, 4>(elems, plane, g.rows);
    // Blocks in storage order (never more than one column: geometry() gives rm one); scalars
    // of one column are the same in both orders.
    if (!scalar && !P.channel_major) return permute_blocks_in_order<ToPlanes>(elems, plane, P, g);
    permute_columns<ToPlanes>(elems, plane, P, g);
}

bool planes_split_by_record(const PlanesParams& P, uint64_t B, uint64_t n) {
    if (B % P.width) return false;
    const Geometry g = geometry(P, B * n);
    if (g.cols != 1) return false;
    if (!P.channel_major) return true;
    return std::all_of(g.fields.begin(), g.fields.end(), [](const Field& f) { return f.width == 1; });
}

template <bool ToPlanes>
void permute_records(uint8_t* records, uint8_t* const* plane, const PlanesParams& P, uint64_t n, uint64_t R, uint64_t H) {
    const Geometry one = geometry(P, R - H);
    std::vector<uint8_t*> share(one.fields.size());
    for (uint64_t i = 0; i < n; ++i) {
        for (size_t p = 0; p < share.size(); ++p) share[p] = plane[p] + i * one.plane_size(p);
        permute<ToPlanes>(records + i * R + H, share.data(), P, one);
    }
}

template void permute<true>(uint8_t*, uint8_t* const*, const PlanesParams&, const Geometry&);
template void permute<false>(uint8_t*, uint8_t* const*, const PlanesParams&, const Geometry&);
template void permute_records<true>(uint8_t*, uint8_t* const*, const PlanesParams&, uint64_t, uint64_t, uint64_t);
template void permute_records<false>(uint8_t*, uint8_t* const*, const PlanesParams&, uint64_t, uint64_t, uint64_t);

}  // namespace stz::planes
