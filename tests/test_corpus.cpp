// Real llama.cpp files (../shared/corpus*), when given through STATEZIP_CORPUS (folders
// separated by ':' or ';'): every file is recognised (no opaque fallback), its sections
// tile it, its facts agree with the folder's MANIFEST.md, and it round-trips byte-exactly.
#include <catch2/catch.hpp>
#include <set>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "test_util.hpp"

using namespace stz;
using namespace stztest;
namespace fs = std::filesystem;

namespace {

using Row = std::map<std::string, std::string>;

std::string trim(std::string s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '`')) s.erase(s.begin());
    while (!s.empty() && (s.back() == ' ' || s.back() == '`')) s.pop_back();
    return s;
}

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> v;
    std::stringstream ss(line);
    std::string c;
    std::getline(ss, c, '|');
    while (std::getline(ss, c, '|')) v.push_back(trim(c));
    if (!v.empty() && v.back().empty()) v.pop_back();
    return v;
}

// file name -> column -> value, from the "| file | ..." tables of a MANIFEST.md.
std::map<std::string, Row> read_manifest(const fs::path& dir) {
    std::map<std::string, Row> m;
    std::ifstream f(dir / "MANIFEST.md");
    std::string line;
    std::vector<std::string> header;
    while (std::getline(f, line)) {
        if (line.rfind("| file |", 0) == 0) header = cells(line);
        else if (line.rfind("| `", 0) == 0 && !header.empty()) {
            auto v = cells(line);
            Row r;
            for (size_t i = 0; i < v.size() && i < header.size(); ++i) r[header[i]] = v[i];
            m[r["file"]] = r;
        } else if (line.empty()) header.clear();
    }
    return m;
}

std::optional<uint64_t> leading_int(const std::string& s) {
    std::smatch mm;
    if (std::regex_search(s, mm, std::regex("^([0-9]+)"))) return std::stoull(mm[1]);
    return std::nullopt;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(c));
    return s;
}

std::set<std::string> kv_types(const ParsedFile& pf, SectionKind k) {
    std::set<std::string> t;
    for (const auto& s : pf.sections)
        if (s.kind == k) t.insert(s.type_string());
    return t;
}

void check_facts(const ParsedFile& pf, const Row& r) {
    auto col = [&](const char* c) -> std::string { auto it = r.find(c); return it == r.end() ? "" : it->second; };
    if (auto n = leading_int(col("n_past (cells)"))) CHECK(pf.n_cells == *n);
    if (auto n = leading_int(col("n_past"))) CHECK(pf.n_cells == *n);
    if (auto n = leading_int(col("tokens"))) {
        CHECK(pf.n_tokens == *n);
        CHECK(pf.n_cells == *n);
    }
    if (auto n = leading_int(col("n_tokens"))) CHECK(pf.n_tokens == *n);
    if (!col("K").empty()) CHECK(kv_types(pf, SectionKind::KvKey) == std::set<std::string>{lower(col("K"))});
    if (!col("V").empty()) CHECK(kv_types(pf, SectionKind::KvValue) == std::set<std::string>{lower(col("V"))});
    if (!col("KV type").empty()) CHECK(kv_types(pf, SectionKind::KvKey) == std::set<std::string>{lower(col("KV type"))});
    if (std::string kv = col("KV type K/V"); !kv.empty()) {
        auto slash = kv.find('/');
        CHECK(kv_types(pf, SectionKind::KvKey) == std::set<std::string>{lower(kv.substr(0, slash))});
        CHECK(kv_types(pf, SectionKind::KvValue) == std::set<std::string>{lower(kv.substr(slash + 1))});
    }
    if (auto n = leading_int(col("n_layer"))) {
        // Compact 2023 dumps do not record the layer count; every other flavour must find it.
        if (pf.format != "legacy-compact") CHECK(pf.n_layer == *n);
        else CHECK((!pf.n_layer || pf.n_layer == *n));
    }
    if (auto n = leading_int(col("n_embd (K/V row)")); n && pf.n_embd) CHECK(pf.n_embd == *n);
}

}  // namespace

TEST_CASE("corpus: every real file is recognised, agrees with its manifest and round-trips", "[corpus]") {
    auto dirs = corpus_folders();
    if (dirs.empty()) {
        stztest::skip_test("no corpus folder (set STATEZIP_CORPUS=../shared/corpus:../shared/corpus-legacy)");
    }
    size_t files = 0;
    uint64_t raw = 0, packed = 0;
    for (const auto& d : dirs)
        for (const auto& e : fs::recursive_directory_iterator(d)) {
            if (!e.is_regular_file() || e.path().extension() != ".bin") continue;
            auto manifest = read_manifest(e.path().parent_path());
            std::string name = e.path().filename().string();
            INFO(e.path().string());
            Bytes b = read_file(e.path().string());
            MemorySource src(b);
            ParsedFile pf = parse_state_file(src, {});
            CHECK(pf.format != "opaque");
            CHECK(pf.note.empty());
            check_tiling(pf.sections, b.size());
            CHECK(std::count_if(pf.sections.begin(), pf.sections.end(),
                                [](const Section& s) { return s.kind == SectionKind::KvKey; }) > 0);
            if (auto it = manifest.find(name); it != manifest.end()) check_facts(pf, it->second);
            else WARN("not in the manifest: " << name);
            // Real files keep their structure (the container-overhead fallback is for hostile ones).
            CHECK(make_plan(pf, CodecChoice{}, CompressOptions{}.chunk_bytes).layout == PlanLayout::AsParsed);
            MemorySink sink;
            CHECK(compress_parsed(src, pf, sink, CompressOptions{}).layout == PlanLayout::AsParsed);
            const Bytes& c = sink.out;
            CHECK(c.size() <= b.size() + expansion_allowance(b.size()));
            REQUIRE(decompress_bytes(c) == b);
            raw += b.size();
            packed += c.size();
            ++files;
        }
    CHECK(files > 0);
    WARN("corpus: " << files << " files, " << raw << " bytes -> " << packed << " (ratio " << double(raw) / packed << ")");
}
