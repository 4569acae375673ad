// Replays every input the fuzzers once found to crash (tests/fuzz/regressions/<target>/*),
// plus a sample of random inputs, through the same entry points as the libFuzzer targets.
#include <catch2/catch.hpp>

#include <filesystem>

#include "fuzz/fuzz_entry.hpp"
#include "related/patch.hpp"
#include "rebuild/patch_map.hpp"
#include <unistd.h>
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace stztest;

TEST_CASE("fuzz regressions and random inputs stay harmless", "[fuzz]") {
    const std::pair<std::string, void (*)(const uint8_t*, size_t)> targets[] = {
        {"parse", stzfuzz::parse}, {"container", stzfuzz::container}, {"codecs", stzfuzz::codecs}, {"patch", stzfuzz::patch}};
    size_t replayed = 0;
    for (const auto& [name, fn] : targets) {
        fs::path dir = fs::path(STATEZIP_FUZZ_REGRESSIONS) / name;
        if (fs::is_directory(dir))
            for (const auto& e : fs::directory_iterator(dir)) {
                INFO(e.path().string());
                stz::Bytes b = read_file(e.path().string());
                fn(b.data(), b.size());
                ++replayed;
            }
        for (uint64_t seed = 0; seed < 200; ++seed) {
            stz::Bytes b = random_bytes(seed * 37 % 3000, seed);
            fn(b.data(), b.size());
        }
    }
    WARN(replayed << " regression inputs replayed");
    SUCCEED();
}

TEST_CASE("fuzz: the patch target's seeds are maps its decoder accepts", "[fuzz][patch]") {
    const fs::path dir = fs::temp_directory_path() / ("stz-patch-seeds-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    stzfuzz::write_patch_seeds(dir.string().c_str());
    stz::MemorySource ref(stzfuzz::patch_reference());
    int seeds = 0, with_tokens = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        INFO(e.path().string());
        if (e.path().filename().string().rfind("map", 0) != 0) continue;  // hostile*: seeds the decoder must refuse
        stz::Bytes b = read_file(e.path().string()), meta;
        const stz::PatchMap m = stz::decode_patch_content(b, ref, meta, 0);
        with_tokens += m.tokens.has_value();
        ++seeds;
    }
    fs::remove_all(dir);
    CHECK(seeds == 8);
    CHECK(with_tokens == 4);
}
