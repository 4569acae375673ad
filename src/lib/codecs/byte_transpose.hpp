// Byte-matrix transposition for the planes stage: a matrix of `rows` rows of `width` bytes
// (row r at matrix + r * width) and `width` columns that each live contiguously elsewhere
// (column x's byte of row r at column_at(x)[r]). ToColumns moves matrix -> columns, otherwise
// columns -> matrix; the bytes moved are the same either way, only the direction differs.
//
// Why tiles: byte by byte, each byte costs an address computation and a load/store pair on
// both strided sides (~10 instructions per byte). A 16 x 16 tile is 16 loads, 64 byte
// unpacks and 16 stores with SSE2 (under one instruction per byte), and both sides of a tile
// touch whole 16-byte runs. Tiles are visited 64 columns at a time, so the 16 matrix rows a
// tile reads are cache lines that the next three tiles read too. Rows and columns that do
// not fill a tile are moved by overlapping tiles (below).
#pragma once
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stz {

namespace transpose_detail {

// One 16 x 16 tile: `src[i]` are 16 rows of 16 bytes in; `dst[j]` gets byte j of every row.
// Four rounds of "interleave vector i with vector i + 8" rotate the 8-bit (vector, byte)
// index left by one each time; after four, vector and byte index have swapped.
template <bool ToColumns>
inline void tile16(uint8_t* matrix, uint64_t width, uint8_t* const* column, uint64_t r0, uint64_t x0) {
#if defined(__SSE2__)
    __m128i a[16], b[16];
    for (int i = 0; i < 16; ++i)
        a[i] = ToColumns ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(matrix + (r0 + i) * width + x0))
                         : _mm_loadu_si128(reinterpret_cast<const __m128i*>(column[x0 + i] + r0));
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 8; ++i) {
            b[2 * i] = _mm_unpacklo_epi8(a[i], a[i + 8]);
            b[2 * i + 1] = _mm_unpackhi_epi8(a[i], a[i + 8]);
        }
        for (int i = 0; i < 16; ++i) a[i] = b[i];
    }
    for (int j = 0; j < 16; ++j)
        ToColumns ? _mm_storeu_si128(reinterpret_cast<__m128i*>(column[x0 + j] + r0), a[j])
                  : _mm_storeu_si128(reinterpret_cast<__m128i*>(matrix + (r0 + j) * width + x0), a[j]);
#else
    for (uint64_t i = 0; i < 16; ++i)
        for (uint64_t j = 0; j < 16; ++j) {
            uint8_t& m = matrix[(r0 + i) * width + x0 + j];
            uint8_t& c = column[x0 + j][r0 + i];
            ToColumns ? void(c = m) : void(m = c);
        }
#endif
}

template <bool ToColumns>
inline void bytes_one_by_one(uint8_t* matrix, uint64_t width, uint8_t* const* column, uint64_t r0, uint64_t r1,
                             uint64_t x0, uint64_t x1) {
    for (uint64_t x = x0; x < x1; ++x) {
        uint8_t* col = column[x];
        for (uint64_t r = r0; r < r1; ++r) ToColumns ? void(col[r] = matrix[r * width + x]) : void(matrix[r * width + x] = col[r]);
    }
}

}  // namespace transpose_detail

// `column_at(x)` gives column x's start; it is asked once per column (a block's 64 pointers
// live on the stack), so that no table of a pointer per column (8 bytes per byte of a row) is
// ever allocated, however wide the rows.
// Rows and columns that do not fill a tile (a q5_0 block's 22 bytes: 6 of them; 508 cells: 12
// rows) are moved by one more tile that overlaps the tiles before it: the bytes they share are
// moved twice, the same value each time (matrix and columns never overlap), at a tile's cost
// instead of ~10 instructions a byte. Only a matrix narrower or shorter than a tile goes byte
// by byte.
// Always inlined: a caller compiled for a wider instruction set (target_clones) then moves its
// tiles in that set too, not in a shared out-of-line copy built for the baseline.
template <bool ToColumns, class ColumnAt>
[[gnu::always_inline]] inline void transpose_bytes(uint8_t* matrix, uint64_t rows, uint64_t width, ColumnAt&& column_at) {
    using namespace transpose_detail;
    constexpr uint64_t kTile = 16, kBlock = 64;
    if (rows == 0) return;  // (and no matrix to point into)
    uint8_t* col[kBlock];
    if (rows < kTile || width < kTile) {
        for (uint64_t b0 = 0; b0 < width; b0 += kBlock) {
            const uint64_t n = b0 + kBlock < width ? kBlock : width - b0;
            for (uint64_t i = 0; i < n; ++i) col[i] = column_at(b0 + i);
            bytes_one_by_one<ToColumns>(matrix + b0, width, col, 0, rows, 0, n);
        }
        return;
    }
    const uint64_t full_rows = rows / kTile * kTile;
    for (uint64_t b0 = 0; b0 < width; b0 += kBlock) {
        uint64_t n = b0 + kBlock < width ? kBlock : width - b0;
        if (n < kTile) b0 = width - kTile, n = kTile;  // the last columns: a block that overlaps the one before
        const uint64_t full = n / kTile * kTile;
        for (uint64_t i = 0; i < n; ++i) col[i] = column_at(b0 + i);
        uint8_t* const block = matrix + b0;  // the tiles address the block's columns from 0
        auto row_of_tiles = [&](uint64_t r0) {
            for (uint64_t x0 = 0; x0 < full; x0 += kTile) tile16<ToColumns>(block, width, col, r0, x0);
            if (full < n) tile16<ToColumns>(block, width, col, r0, n - kTile);
        };
        for (uint64_t r0 = 0; r0 < full_rows; r0 += kTile) row_of_tiles(r0);
        if (full_rows < rows) row_of_tiles(rows - kTile);
    }
}

}  // namespace stz
