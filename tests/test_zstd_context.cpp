// The zstd compression context kept per thread: it codes frames of many sizes at several levels,
// and the workspace zstd frees on the way is handed back to it (zstd_context.hpp). Whatever it
// was handed, each frame must be the one a fresh context writes, and decode to its input.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "base/zstd_context.hpp"

namespace {

std::vector<unsigned char> frame(ZSTD_CCtx* c, int level, const std::vector<unsigned char>& src, size_t n) {
    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    std::vector<unsigned char> out(ZSTD_compressBound(n));
    const size_t k = ZSTD_compress2(c, out.data(), out.size(), src.data(), n);
    REQUIRE_FALSE(ZSTD_isError(k));
    out.resize(k);
    return out;
}

}  // namespace

TEST_CASE("zstd context: frames of many sizes and levels in turn are a fresh context's, and decode", "[base][zstd]") {
    std::mt19937 rng(7);
    std::vector<unsigned char> src(3u << 20);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(rng() % 23 + (i / 4096) % 7);
    // Large frames make zstd grow its workspace; a long run of small ones after them makes it
    // shrink it (after 128 frames that needed far less); the large ones then take a kept block.
    std::vector<std::pair<int, size_t>> frames = {{3, 3u << 20}, {19, 20000}, {1, 600000}, {9, 3000}};
    for (int i = 0; i < 140; ++i) frames.push_back({i % 2 ? 1 : 3, 2000 + size_t(i) * 37});
    frames.push_back({3, 3u << 20});
    frames.push_back({19, 1u << 20});
    frames.push_back({3, 2u << 20});
    stz::ZstdCCtx kept;
    std::vector<unsigned char> back(src.size());
    for (const auto& [level, n] : frames) {
        const auto got = frame(kept.c, level, src, n);
        stz::ZstdCCtx fresh;
        CHECK(got == frame(fresh.c, level, src, n));
        REQUIRE(ZSTD_decompress(back.data(), n, got.data(), got.size()) == n);
        CHECK(std::equal(back.begin(), back.begin() + long(n), src.begin()));
    }
    CHECK(kept.workspace.handed_back() > 0);  // the sequence did make zstd free and ask again
}
