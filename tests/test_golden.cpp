// Golden files: written once by a past release and never regenerated, so any change to a
// codec's decoder, the container reader, the patch decoder or the set reader that would break
// old files fails here. Each folder tests/data/golden-<release>/ holds the files and a
// MANIFEST.tsv that tools/make_golden.sh wrote. Every folder is read, so a new release's
// folder is tested without an edit here. Two manifest layouts:
//   0.1.0: file, decoded size, XXH3-64 of the decoded bytes (each file a plain .stz);
//   later: kind, file, what it needs, its size and XXH3-64, the decoded size and XXH3-64, where
//          kind is stz (decodes alone), patch (a --patch-from file; needs its REF, a file of the
//          folder), ref (a REF, checked as stored), member (needs = a member of the .stzp set);
//          a "# codec ids: ..." line lists the registry of the release that wrote them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "codecs/pipeline.hpp"
#include "container/container.hpp"
#include "test_util.hpp"

namespace {

struct GoldenEntry {
    std::string kind = "stz", file, needs = "-";
    bool has_stored = false;
    uint64_t stored_size = 0, stored_hash = 0;
    uint64_t size = 0, hash = 0;
};

struct GoldenManifest {
    std::vector<GoldenEntry> entries;
    std::set<unsigned> codec_ids;  // the "# codec ids:" line
    std::vector<std::string> errors;
};

uint64_t hex64(const std::string& s) { return std::stoull(s, nullptr, 16); }

GoldenManifest read_manifest(const std::string& dir) {
    GoldenManifest m;
    std::ifstream in(dir + "/MANIFEST.tsv");
    if (!in) m.errors.push_back("no MANIFEST.tsv");
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.rfind("# codec ids:", 0) == 0) {
            std::istringstream ids(line.substr(12));
            for (unsigned id; ids >> id;) m.codec_ids.insert(id);
            continue;
        }
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
        GoldenEntry e;
        try {
            if (f.size() == 3) {
                e.file = f[0], e.size = std::stoull(f[1]), e.hash = hex64(f[2]);
            } else if (f.size() == 7) {
                e.kind = f[0], e.file = f[1], e.needs = f[2];
                e.has_stored = true, e.stored_size = std::stoull(f[3]), e.stored_hash = hex64(f[4]);
                e.size = std::stoull(f[5]), e.hash = hex64(f[6]);
            } else {
                m.errors.push_back("line " + std::to_string(n) + ": " + std::to_string(f.size()) + " fields");
                continue;
            }
        } catch (const std::exception&) {
            m.errors.push_back("line " + std::to_string(n) + ": bad number");
            continue;
        }
        m.entries.push_back(e);
    }
    return m;
}

std::vector<std::string> golden_folders() {
    std::vector<std::string> out;
    const std::string data = STATEZIP_TEST_DATA;
    if (DIR* d = opendir(data.c_str())) {
        while (dirent* e = readdir(d))
            if (std::string(e->d_name).rfind("golden-", 0) == 0) out.push_back(e->d_name);
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::set<std::string> files_in(const std::string& dir) {
    std::set<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n != "." && n != ".." && n != "MANIFEST.tsv" && n != "README.md") out.insert(n);
        }
        closedir(d);
    }
    return out;
}

// The codec ids a recipe names, nested ones too: a stage's "(key=recipe,...)" body (planes
// writes its sub-pipelines so in describe()) is walked like the recipe itself.
void collect_recipe_ids(std::string_view recipe, std::set<unsigned>& ids) {
    for (const std::string& stage : stz::split_top_level(recipe, '+')) {
        const size_t open = stage.find('(');
        const std::string head = stage.substr(0, open);
        const std::string name = head.substr(0, head.find(':'));
        const stz::Codec* c = stz::find_codec(name);
        INFO("stage '" << stage << "' of recipe '" << recipe << "'");
        REQUIRE(c != nullptr);
        ids.insert(c->id());
        if (open == std::string::npos) continue;
        REQUIRE(stage.back() == ')');
        for (const std::string& item : stz::split_top_level(stage.substr(open + 1, stage.size() - open - 2), ',')) {
            const size_t eq = item.find('=');
            REQUIRE(eq != std::string::npos);
            collect_recipe_ids(std::string_view(item).substr(eq + 1), ids);
        }
    }
}

struct IdsUsed {
    std::set<unsigned> top, all;  // the chunks' own stages; those and every nested stage
};

// Every codec id used by any chunk of the file, at the top of its recipe and nested in it.
IdsUsed codec_ids_used(const stz::Bytes& stz_bytes) {
    stz::MemoryStream s(stz_bytes);
    stz::ContainerReader r(s);
    IdsUsed ids;
    while (auto c = r.next()) {
        for (const auto& st : c->pipeline.stages) ids.top.insert(st.codec->id());
        if (!c->pipeline.stages.empty()) collect_recipe_ids(c->pipeline.describe(), ids.all);  // else "store"
    }
    return ids;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// What the entry decodes to, by the library (stz) or the program (patch, member).
stz::Bytes decode_entry(const std::string& dir, const GoldenEntry& e, const stz::Bytes& stored, const std::string& tmp) {
    if (e.kind == "stz") return stztest::decompress_bytes(stored);
    if (e.kind == "ref") return stored;
    const std::string out = tmp + "/decoded";
    std::remove(out.c_str());
    if (e.kind == "patch") {
        const int rc = stztest::sh(std::string(STATEZIP_BIN) + " -q -d -c --patch-from=" + quoted(dir + "/" + e.needs) +
                                   " " + quoted(dir + "/" + e.file) + " > " + quoted(out));
        REQUIRE(rc == 0);
        return stztest::read_file(out);
    }
    REQUIRE(e.kind == "member");
    stztest::sh("rm -rf " + quoted(tmp + "/unpacked") + " && mkdir " + quoted(tmp + "/unpacked"));
    const int rc = stztest::sh(std::string(STATEZIP_BIN) + " unpack -q " + quoted(dir + "/" + e.file) + " " +
                               quoted(e.needs) + " -C " + quoted(tmp + "/unpacked"));
    REQUIRE(rc == 0);
    return stztest::read_file(tmp + "/unpacked/" + e.needs);
}

}  // namespace

TEST_CASE("golden: every file of every release's golden folder still decodes to the same bytes", "[golden]") {
    const auto folders = golden_folders();
    REQUIRE(folders.size() >= 2);  // 0.1.0 and 0.2.0 at least
    // 0.1.0's manifest has no codec line: it had codec ids 0..11.
    const std::map<std::string, std::set<unsigned>> known_ids = {{"golden-0.1.0", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}};
    const std::string tmp = stztest::temp_dir("golden");
    for (const auto& folder : folders) {
        INFO(folder);
        const std::string dir = std::string(STATEZIP_TEST_DATA) + "/" + folder;
        const GoldenManifest m = read_manifest(dir);
        for (const auto& err : m.errors) FAIL_CHECK("MANIFEST.tsv: " << err);
        REQUIRE(!m.entries.empty());
        // The folder holds exactly the files its manifest lists (members: the set, once).
        std::set<std::string> listed;
        for (const auto& e : m.entries) listed.insert(e.file);
        const auto present = files_in(dir);
        for (const auto& f : present)
            if (!listed.count(f)) FAIL_CHECK(f << " is in the folder but not in MANIFEST.tsv");
        std::set<unsigned> ids;
        size_t files_with_nested_ids = 0;  // files whose nested stages use an id their top stages do not
        for (const auto& e : m.entries) {
            INFO(e.kind << " " << e.file << " " << e.needs);
            if (!present.count(e.file)) {
                FAIL_CHECK("listed in MANIFEST.tsv but missing");
                continue;
            }
            if (e.needs != "-" && e.kind == "patch") CHECK(present.count(e.needs) == 1);
            const stz::Bytes stored = stztest::read_file(dir + "/" + e.file);
            REQUIRE(!stored.empty());
            if (e.has_stored) {  // the file itself is the one the release wrote
                CHECK(stored.size() == e.stored_size);
                CHECK(stz::hash64(stored) == e.stored_hash);
            }
            const stz::Bytes raw = decode_entry(dir, e, stored, tmp);
            CHECK(raw.size() == e.size);
            CHECK(stz::hash64(raw) == e.hash);
            if (e.kind == "stz" || e.kind == "patch") {
                const IdsUsed used = codec_ids_used(stored);
                CHECK(std::includes(used.all.begin(), used.all.end(), used.top.begin(), used.top.end()));
                files_with_nested_ids += used.all.size() > used.top.size();
                ids.insert(used.all.begin(), used.all.end());
            }
        }
        // The codec ids the release's registry had (its manifest's codec line; 0.1.0: known).
        std::set<unsigned> want = m.codec_ids;
        if (auto k = known_ids.find(folder); want.empty() && k != known_ids.end()) want = k->second;
        for (unsigned id : want) {
            INFO("codec id " << id);
            CHECK(ids.count(id) == 1);
        }
        // ...and no file uses an id the release did not have.
        if (!want.empty())
            for (unsigned id : ids) {
                INFO("codec id " << id << " used but not in the release's registry");
                CHECK(want.count(id) == 1);
            }
        // Releases with a codec line wrote planes with sub-pipelines: the nested walk must see them.
        if (!m.codec_ids.empty()) CHECK(files_with_nested_ids > 0);
    }
}

TEST_CASE("golden: 0.2.0 pins every kind of file", "[golden]") {
    const std::string dir = std::string(STATEZIP_TEST_DATA) + "/golden-0.2.0";
    const GoldenManifest m = read_manifest(dir);
    std::map<std::string, int> kinds;
    int lossy = 0, planes_nested = 0;
    for (const auto& e : m.entries) {
        ++kinds[e.kind];
        if (e.file.rfind("lossy-", 0) == 0) ++lossy;
        if (e.file.find("-planes-") != std::string::npos) ++planes_nested;
    }
    CHECK(m.entries.size() >= 80);
    CHECK(kinds["stz"] >= 60);
    CHECK(kinds["patch"] >= 2);
    CHECK(kinds["ref"] >= 1);
    CHECK(kinds["member"] >= 3);
    CHECK(lossy >= 3);
    CHECK(planes_nested >= 10);
    // 0.2.0's registry: ids 0-14 and 16 at least (later ones are the release's own).
    for (unsigned id : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 16u}) {
        INFO("codec id " << id);
        CHECK(m.codec_ids.count(id) == 1);
    }
}
