// The planes' byte-matrix transposition (codecs/byte_transpose.hpp) against the definition,
// byte by byte, both ways, at every shape around its tiles: under a tile, whole tiles, rows and
// columns left over (moved by tiles that overlap), blocks of 64 columns and what follows them.
// Bytes of a column outside its `rows` and of the matrix's neighbours must stay as they were.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "codecs/byte_transpose.hpp"

using namespace stz;

namespace {

constexpr uint8_t kGuard = 0xA5;
constexpr uint64_t kPad = 16;  // guard bytes before and after every buffer

uint8_t byte_at(uint64_t r, uint64_t x) { return static_cast<uint8_t>(r * 131 + x * 29 + (r * x) % 7 + 1); }

// Columns live in one buffer, column x at its own offset (further apart than `rows`, in reverse
// order), so that a byte written to the wrong column or row shows.
struct Columns {
    uint64_t rows, stride;
    std::vector<uint8_t> bytes;
    Columns(uint64_t r, uint64_t width) : rows(r), stride(r + 3), bytes(kPad * 2 + width * (r + 3), kGuard) {}
    uint8_t* at(uint64_t x, uint64_t width) { return bytes.data() + kPad + (width - 1 - x) * stride; }
};

size_t wrong_matrix(const std::vector<uint8_t>& m, uint64_t rows, uint64_t width) {
    size_t wrong = 0;
    for (uint64_t i = 0; i < kPad; ++i) wrong += (m[i] != kGuard) + (m[kPad + rows * width + i] != kGuard);
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t x = 0; x < width; ++x) wrong += m[kPad + r * width + x] != byte_at(r, x);
    return wrong;
}

size_t wrong_columns(Columns& c, uint64_t width) {
    size_t wrong = 0;
    for (uint64_t i = 0; i < kPad; ++i) wrong += (c.bytes[i] != kGuard) + (c.bytes[c.bytes.size() - 1 - i] != kGuard);
    for (uint64_t x = 0; x < width; ++x) {
        const uint8_t* col = c.at(x, width);
        for (uint64_t r = 0; r < c.rows; ++r) wrong += col[r] != byte_at(r, x);
        for (uint64_t r = c.rows; r < c.stride; ++r) wrong += col[r] != kGuard;
    }
    return wrong;
}

}  // namespace

TEST_CASE("byte transpose: every shape around the tiles, both ways, the definition's bytes", "[codecs][planes]") {
    const uint64_t row_counts[] = {0, 1, 5, 15, 16, 17, 31, 32, 33, 47, 508};
    const uint64_t widths[] = {1, 2, 6, 15, 16, 17, 18, 22, 34, 63, 64, 65, 70, 79, 80, 81, 127, 128, 130, 200, 576};
    // Every form of the tiles this CPU runs: 16 x 16 everywhere; strips of 32 columns; blocks of 64.
    std::vector<TileForm> forms;
    for (TileForm form : {TileForm::Narrow, TileForm::Avx2, TileForm::Avx512})
        if (static_cast<int>(form) <= static_cast<int>(widest_tile_form())) forms.push_back(form);
    for (TileForm form : forms)
        for (uint64_t rows : row_counts)
            for (uint64_t width : widths) {
                CAPTURE(static_cast<int>(form), rows, width);
                std::vector<uint8_t> matrix(kPad * 2 + rows * width, kGuard);
                for (uint64_t r = 0; r < rows; ++r)
                    for (uint64_t x = 0; x < width; ++x) matrix[kPad + r * width + x] = byte_at(r, x);
                Columns columns(rows, width);
                transpose_bytes<true>(matrix.data() + kPad, rows, width, [&](uint64_t x) { return columns.at(x, width); }, form);
                CHECK(wrong_columns(columns, width) == 0);

                std::vector<uint8_t> back(kPad * 2 + rows * width, kGuard);
                transpose_bytes<false>(back.data() + kPad, rows, width, [&](uint64_t x) { return columns.at(x, width); }, form);
                CHECK(wrong_matrix(back, rows, width) == 0);
            }
}
