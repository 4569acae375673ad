// --lossy as a user runs it: the summary line, -t/-d of the lossy .stz, -l and -d -v saying
// it is lossy, --rm refused without --force, bad specs.
#include <catch2/catch.hpp>

#include "../tools/synth.hpp"
#include "test_util.hpp"

using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;

// An f32 flash-attention state (V row-major), written as a file.
void write_f32_state(const std::string& path) {
    stzsynth::Spec s;
    s.flavour = "seq3";
    s.k_type = s.v_type = stz::ElemType::F32;
    s.v_trans = false;
    s.cells = 200;
    stz::MemorySink sink;
    stzsynth::write_state(s, sink);
    write_file(path, sink.out);
}

}  // namespace

TEST_CASE("cli: --lossy compresses the rounded file, and -t, -d, -l and -d -v say so", "[cli][lossy]") {
    std::string d = temp_dir("cli-lossy");
    write_f32_state(d + "/s.bin");
    const stz::Bytes orig = read_file(d + "/s.bin");
    REQUIRE(sh(kBin + " --lossy=f16-exact " + d + "/s.bin 2> " + d + "/c.txt") == 0);
    CHECK(read_file(d + "/s.bin") == orig);  // the input is kept as it was
    CHECK(slurp(d + "/c.txt").find("lossy f16-exact; K: max abs") != std::string::npos);
    CHECK(sh(kBin + " -q -t " + d + "/s.bin.stz") == 0);
    REQUIRE(sh(kBin + " -v -d -o " + d + "/back.bin " + d + "/s.bin.stz 2> " + d + "/d.txt") == 0);
    CHECK(slurp(d + "/d.txt").find("note: lossy file") != std::string::npos);
    const stz::Bytes back = read_file(d + "/back.bin");
    CHECK(back.size() == orig.size());
    CHECK(back != orig);
    REQUIRE(sh(kBin + " -l " + d + "/s.bin.stz > " + d + "/l.txt") == 0);
    CHECK(slurp(d + "/l.txt").find("lossy: f16-exact") != std::string::npos);
    // Without the flag the same file comes back byte for byte, and nothing says lossy.
    REQUIRE(sh(kBin + " -q -f " + d + "/s.bin") == 0);
    REQUIRE(sh(kBin + " -v -d -f -o " + d + "/exact.bin " + d + "/s.bin.stz 2> " + d + "/e.txt") == 0);
    CHECK(read_file(d + "/exact.bin") == orig);
    CHECK(slurp(d + "/e.txt").find("note: lossy") == std::string::npos);
}

TEST_CASE("cli: --lossy with --rm is refused unless --force, and bad specs are usage errors", "[cli][lossy]") {
    std::string d = temp_dir("cli-lossy-rm");
    write_f32_state(d + "/s.bin");
    CHECK(sh(kBin + " -q --rm --lossy=drop:V=6 " + d + "/s.bin 2> " + d + "/err.txt") == 2);
    CHECK(slurp(d + "/err.txt").find("--force") != std::string::npos);
    CHECK(exists(d + "/s.bin"));
    CHECK_FALSE(exists(d + "/s.bin.stz"));
    CHECK(sh(kBin + " -q --rm --force --lossy=drop:V=6 " + d + "/s.bin") == 0);
    CHECK_FALSE(exists(d + "/s.bin"));
    CHECK(sh(kBin + " -q -t " + d + "/s.bin.stz") == 0);
    CHECK(sh(kBin + " -q -d --lossy=f16-exact " + d + "/s.bin.stz 2>/dev/null") == 2);
    CHECK(sh(kBin + " -q --lossy=f8-exact " + d + "/s.bin.stz 2>/dev/null") == 2);
    CHECK(sh(kBin + " -q --lossy=drop:V=30 " + d + "/s.bin.stz 2>/dev/null") == 2);
}

TEST_CASE("cli: bench --lossy adds verified lossy rows of the presets", "[cli][lossy][bench]") {
    std::string d = temp_dir("cli-lossy-bench");
    write_f32_state(d + "/s.bin");
    REQUIRE(sh(kBin + " bench --runs 1 --no-external --json --pipelines default,zstd:3 --lossy f16-exact --lossy drop:V=6 " +
               d + "/s.bin > " + d + "/b.json") == 0);
    CHECK(sh("python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"files\"][0][\"results\"]; "
             "n={x[\"pipeline\"]: x for x in r}; assert len(r) == 4, list(n); "
             "assert all(x[\"verified\"] for x in r); "
             "assert n[\"default --lossy=f16-exact\"][\"compressed_bytes\"] < 0.8 * n[\"default\"][\"compressed_bytes\"]; "
             "assert \"default --lossy=drop:K=0,V=6\" in n' " + d + "/b.json") == 0);
    CHECK(sh(kBin + " bench --runs 1 --no-external --lossy nosuch " + d + "/s.bin 2>/dev/null") != 0);
}
