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
// not fill a tile are moved by overlapping tiles (below). Where the CPU has them, wider
// registers move two or four tiles at once (strips of 32 columns, whole blocks of 64): the
// transposes were 14-15 % of a 1 GB f16 or q4_0 session's decompression with SSE2 tiles.
#pragma once
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cpu_features.hpp"

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

#if defined(__x86_64__)
// (GCC 12's _mm512_extracti32x4_epi32 passes an undefined vector it then warns about.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// 16 rows of a block of 64 columns in 512-bit registers: four 16 x 16 tiles side by side, one per
// 128-bit lane; the byte interleaves work within lanes, so the same four rounds transpose all
// four at once (16 loads, 64 interleaves and 64 16-byte stores where SSE2 tiles take 64, 256 and
// 64).
template <bool ToColumns>
[[gnu::target("avx512f,avx512bw")]] inline void tile16x64(uint8_t* block, uint64_t width, uint8_t* const* column,
                                                         uint64_t r0) {
    __m512i a[16], b[16];
    for (int i = 0; i < 16; ++i) {
        if (ToColumns) {
            a[i] = _mm512_loadu_si512(block + (r0 + i) * width);
            continue;
        }
        __m512i v = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(column[i] + r0)));
        v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(column[16 + i] + r0)), 1);
        v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(column[32 + i] + r0)), 2);
        a[i] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(column[48 + i] + r0)), 3);
    }
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 8; ++i) {
            b[2 * i] = _mm512_unpacklo_epi8(a[i], a[i + 8]);
            b[2 * i + 1] = _mm512_unpackhi_epi8(a[i], a[i + 8]);
        }
        for (int i = 0; i < 16; ++i) a[i] = b[i];
    }
    for (int j = 0; j < 16; ++j) {
        if (!ToColumns) {
            _mm512_storeu_si512(block + (r0 + j) * width, a[j]);
            continue;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(column[j] + r0), _mm512_castsi512_si128(a[j]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(column[16 + j] + r0), _mm512_extracti32x4_epi32(a[j], 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(column[32 + j] + r0), _mm512_extracti32x4_epi32(a[j], 2));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(column[48 + j] + r0), _mm512_extracti32x4_epi32(a[j], 3));
    }
}

// A whole block of 64 columns, every row (rows >= 16), by tile16x64; the last rows by tiles that
// overlap the ones before. On Zen 5 a 4432 x 576 matrix moved at 7.3-7.8 GB/s both ways against
// 4.5-4.8 for the SSE2 tiles. Not inlined into its callers, which are built for the baseline: one
// call per block of 64 columns.
template <bool ToColumns>
[[gnu::target("avx512f,avx512bw")]] inline void block64_avx512(uint8_t* block, uint64_t width, uint8_t* const* column,
                                                              uint64_t rows) {
    uint64_t r0 = 0;
    for (; r0 + 16 <= rows; r0 += 16) tile16x64<ToColumns>(block, width, column, r0);
    if (r0 < rows) tile16x64<ToColumns>(block, width, column, rows - 16);
}
#pragma GCC diagnostic pop

// 16 rows of 32 columns in 256-bit registers: two 16 x 16 tiles side by side, as tile16x64 does
// four.
template <bool ToColumns>
[[gnu::target("avx2")]] inline void tile16x32(uint8_t* strip, uint64_t width, uint8_t* const* column, uint64_t r0) {
    __m256i a[16], b[16];
    for (int i = 0; i < 16; ++i)
        a[i] = ToColumns ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(strip + (r0 + i) * width))
                         : _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(column[16 + i] + r0),
                                               reinterpret_cast<const __m128i*>(column[i] + r0));
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 8; ++i) {
            b[2 * i] = _mm256_unpacklo_epi8(a[i], a[i + 8]);
            b[2 * i + 1] = _mm256_unpackhi_epi8(a[i], a[i + 8]);
        }
        for (int i = 0; i < 16; ++i) a[i] = b[i];
    }
    for (int j = 0; j < 16; ++j)
        ToColumns ? _mm256_storeu2_m128i(reinterpret_cast<__m128i*>(column[16 + j] + r0),
                                         reinterpret_cast<__m128i*>(column[j] + r0), a[j])
                  : _mm256_storeu_si256(reinterpret_cast<__m256i*>(strip + (r0 + j) * width), a[j]);
}

// A strip of 32 columns, every row (rows >= 16), as block64_avx512 does 64 (on Zen 5, 4432 x 576:
// 5.5-6.1 GB/s against the SSE2 tiles' 4.8-4.9).
template <bool ToColumns>
[[gnu::target("avx2")]] inline void strip32_avx2(uint8_t* strip, uint64_t width, uint8_t* const* column, uint64_t rows) {
    uint64_t r0 = 0;
    for (; r0 + 16 <= rows; r0 += 16) tile16x32<ToColumns>(strip, width, column, r0);
    if (r0 < rows) tile16x32<ToColumns>(strip, width, column, rows - 16);
}
#endif

}  // namespace transpose_detail

// How transpose_bytes moves a block of 64 columns: 16 x 16 tiles (SSE2, or byte by byte without
// it), strips of 32 columns in 256-bit registers, or the whole block in 512-bit ones.
enum class TileForm { Narrow, Avx2, Avx512 };
// The widest this CPU runs.
inline TileForm widest_tile_form() {
    return cpu::avx512_bw_vl() ? TileForm::Avx512 : cpu::avx2() ? TileForm::Avx2 : TileForm::Narrow;
}

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
// `form`: the tiles' width (tests ask for each form this CPU runs).
template <bool ToColumns, class ColumnAt>
[[gnu::always_inline]] inline void transpose_bytes(uint8_t* matrix, uint64_t rows, uint64_t width, ColumnAt&& column_at,
                                                   TileForm form = widest_tile_form()) {
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
        for (uint64_t i = 0; i < n; ++i) col[i] = column_at(b0 + i);
        uint8_t* const block = matrix + b0;  // the tiles address the block's columns from 0
        uint64_t first = 0;  // the block's columns moved by wider tiles
#if defined(__x86_64__)
        if (form == TileForm::Avx512 && n == kBlock) {
            block64_avx512<ToColumns>(block, width, col, rows);
            continue;
        }
        if (form != TileForm::Narrow)
            for (; first + 32 <= n; first += 32) strip32_avx2<ToColumns>(block + first, width, col + first, rows);
        if (first == n) continue;
#endif
        auto row_of_tiles = [&](uint64_t r0) {
            uint64_t x0 = first;
            for (; x0 + kTile <= n; x0 += kTile) tile16<ToColumns>(block, width, col, r0, x0);
            if (x0 < n) tile16<ToColumns>(block, width, col, r0, n - kTile);
        };
        for (uint64_t r0 = 0; r0 < full_rows; r0 += kTile) row_of_tiles(r0);
        if (full_rows < rows) row_of_tiles(rows - kTile);
    }
}

}  // namespace stz
