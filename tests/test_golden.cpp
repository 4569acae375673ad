// Golden .stz files: written once by a past release and never regenerated, so any change to a
// codec's decoder or the container reader that would break old files fails here. Each folder
// tests/data/golden-<release>/ holds the files and a MANIFEST.tsv (file, decoded size, XXH3-64 of
// the decoded bytes); tools/make_golden.sh wrote them.
#include <catch2/catch.hpp>

#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>

#include "test_util.hpp"

namespace {

struct GoldenEntry {
    std::string file;
    uint64_t size = 0;
    uint64_t hash = 0;
};

std::vector<GoldenEntry> read_manifest(const std::string& dir) {
    std::ifstream m(dir + "/MANIFEST.tsv");
    std::vector<GoldenEntry> out;
    std::string line;
    while (std::getline(m, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        GoldenEntry e;
        std::string hex;
        fields >> e.file >> e.size >> hex;
        e.hash = std::stoull(hex, nullptr, 16);
        out.push_back(e);
    }
    return out;
}

// Every codec id used by any chunk of the file.
std::set<uint8_t> codec_ids_used(const stz::Bytes& stz_bytes) {
    stz::MemoryStream s(stz_bytes);
    stz::ContainerReader r(s);
    std::set<uint8_t> ids;
    while (auto c = r.next())
        for (const auto& st : c->pipeline.stages) ids.insert(st.codec->id());
    return ids;
}

}  // namespace

TEST_CASE("golden: every .stz written by 0.1.0 still decodes to the same bytes", "[golden]") {
    const std::string dir = std::string(STATEZIP_TEST_DATA) + "/golden-0.1.0";
    const auto entries = read_manifest(dir);
    REQUIRE(entries.size() >= 30);
    std::set<uint8_t> ids;
    for (const auto& e : entries) {
        INFO(e.file);
        const stz::Bytes packed = stztest::read_file(dir + "/" + e.file);
        REQUIRE(!packed.empty());
        const stz::Bytes raw = stztest::decompress_bytes(packed);
        CHECK(raw.size() == e.size);
        CHECK(stz::hash64(raw) == e.hash);
        for (uint8_t id : codec_ids_used(packed)) ids.insert(id);
    }
    // 0.1.0 had codec ids 0..11; each must appear in some golden file.
    for (uint8_t id = 0; id <= 11; ++id) {
        INFO("codec id " << int(id));
        CHECK(ids.count(id) == 1);
    }
}
