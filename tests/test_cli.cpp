// The statezip program, run as a user would: files, pipes, several files, -t, -l, --rm,
// refusals, corrupt input, inspect and bench output.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>

#include "container/container.hpp"
#include "related/pack_format.hpp"
#include "rebuild/patch_map.hpp"
#include "statezip_version.h"
#include "test_util.hpp"

using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;
const std::string kData = STATEZIP_TEST_DATA;

}  // namespace

TEST_CASE("cli: compress and decompress a file, keeping the input", "[cli]") {
    std::string d = temp_dir("cli-file");
    sh("cp '" + kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin' " + d + "/s.bin");
    REQUIRE(sh(kBin + " -q " + d + "/s.bin") == 0);
    CHECK(exists(d + "/s.bin"));
    CHECK(exists(d + "/s.bin.stz"));
    CHECK(sh(kBin + " -q -d " + d + "/s.bin.stz") == 1);  // s.bin exists: refused without -f
    REQUIRE(sh(kBin + " -q -d -o " + d + "/back.bin " + d + "/s.bin.stz") == 0);
    CHECK(read_file(d + "/back.bin") == read_file(d + "/s.bin"));
    CHECK(sh(kBin + " -q " + d + "/s.bin") == 1);  // output exists
    CHECK(sh(kBin + " -q -f " + d + "/s.bin") == 0);
    CHECK(sh(kBin + " -q -d -f " + d + "/s.bin.stz") == 0);
    CHECK(read_file(d + "/back.bin") == read_file(d + "/s.bin"));
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("cli: pipes, stdin and stdout", "[cli]") {
    std::string d = temp_dir("cli-pipe");
    std::string in = kData + "/ggsq3.stories260K-hd32.q8_0.fa1.c1024.t322.bin";
    REQUIRE(sh("cat '" + in + "' | " + kBin + " -q -c > " + d + "/a.stz") == 0);
    REQUIRE(sh("cat " + d + "/a.stz | " + kBin + " -q -d -c > " + d + "/a.out") == 0);
    CHECK(read_file(d + "/a.out") == read_file(in));
    REQUIRE(sh(kBin + " -q - < '" + in + "' > " + d + "/b.stz") == 0);  // "-" means stdin to stdout
    REQUIRE(sh(kBin + " -q -d - < " + d + "/b.stz > " + d + "/b.out") == 0);
    CHECK(read_file(d + "/b.out") == read_file(in));
    CHECK(read_file(d + "/a.stz") == read_file(d + "/b.stz"));  // same bytes from a pipe and a file
    REQUIRE(sh(kBin + " -q -c '" + in + "' | " + kBin + " -q -t") == 0);
}

TEST_CASE("cli: several files, -t, -l and --rm", "[cli]") {
    std::string d = temp_dir("cli-multi");
    sh("cp " + kData + "/*.bin " + d + "/");
    REQUIRE(sh(kBin + " -q " + d + "/*.bin") == 0);
    REQUIRE(sh("ls " + d + "/*.stz | wc -l | grep -qx 3") == 0);
    CHECK(sh(kBin + " -q -t " + d + "/*.stz") == 0);
    REQUIRE(sh(kBin + " -l " + d + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin.stz > " + d + "/list.txt") == 0);
    std::string list = slurp(d + "/list.txt");
    CHECK(list.find("ggsq v3") != std::string::npos);
    CHECK(list.find("kv.k[0]") != std::string::npos);
    CHECK(list.find("kv.v[4]") != std::string::npos);
    sh("cp " + kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin " + d + "/r.bin");
    REQUIRE(sh(kBin + " -q --rm " + d + "/r.bin") == 0);
    CHECK_FALSE(exists(d + "/r.bin"));
    REQUIRE(sh(kBin + " -q -d --rm " + d + "/r.bin.stz") == 0);
    CHECK(exists(d + "/r.bin"));
    CHECK_FALSE(exists(d + "/r.bin.stz"));
    CHECK(read_file(d + "/r.bin") == read_file(kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin"));
}

TEST_CASE("cli: corrupt input fails with exit 1, a message and no output", "[cli][corruption]") {
    std::string d = temp_dir("cli-bad");
    sh("cp '" + kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin' " + d + "/s.bin");
    REQUIRE(sh(kBin + " -q " + d + "/s.bin") == 0);
    sh("mv " + d + "/s.bin " + d + "/orig.bin");
    // one byte inverted in the middle
    copy_with_byte_inverted(d + "/s.bin.stz", d + "/flip.bin.stz", 5000);
    CHECK(sh(kBin + " -d " + d + "/flip.bin.stz 2> " + d + "/err.txt") == 1);
    CHECK_FALSE(exists(d + "/flip.bin"));
    std::string err = slurp(d + "/err.txt");
    CHECK(err.find("flip.bin.stz") != std::string::npos);
    CHECK(err.find("checksum mismatch") != std::string::npos);
    // truncate
    sh("head -c 3000 " + d + "/s.bin.stz > " + d + "/cut.bin.stz");
    CHECK(sh(kBin + " -q -d " + d + "/cut.bin.stz") == 1);
    CHECK_FALSE(exists(d + "/cut.bin"));
    CHECK(sh(kBin + " -q -t " + d + "/cut.bin.stz") == 1);
    // --rm must not remove an input whose output failed
    CHECK(sh(kBin + " -q -d --rm " + d + "/cut.bin.stz") == 1);
    CHECK(exists(d + "/cut.bin.stz"));
    CHECK(leftover_temp_files(d) == 0);
    // a foreign file
    CHECK(sh(kBin + " -q -d -o " + d + "/x " + d + "/orig.bin") == 1);
    CHECK(sh(kBin + " -q -d " + d + "/orig.bin") == 1);  // unknown suffix
}

TEST_CASE("cli: usage errors exit 2, missing files and unwritable folders exit 1", "[cli]") {
    CHECK(sh(kBin + " --no-such-flag 2>/dev/null") == 2);
    CHECK(sh(kBin + " --codec nosuch x 2>/dev/null") == 2);
    CHECK(sh(kBin + " -d -l x 2>/dev/null") == 2);
    CHECK(sh(kBin + " -q /nonexistent/file 2>/dev/null") == 1);
    CHECK(sh(kBin + " -q -o /nonexistent/dir/x.stz " + kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin 2>/dev/null") == 1);
    CHECK(sh(kBin + " --help > /dev/null") == 0);
}

TEST_CASE("cli: levels, presets and forced codecs all round-trip", "[cli]") {
    std::string d = temp_dir("cli-codecs");
    std::string in = kData + "/C-65cdf34.main.prompt-cache.ggsn1.c512.f16.np446.L5-gqa2.bin";
    for (std::string flags : {"-1", "-19", "--fast", "--max", "--codec lz4", "--codec lzma:9e", "--codec rle",
                              "--codec kv=shuffle+lz4hc:9,meta=store", "-T 2", "--chunk-size 1"}) {
        INFO(flags);
        REQUIRE(sh(kBin + " -q -f " + flags + " -o " + d + "/x.stz '" + in + "'") == 0);
        REQUIRE(sh(kBin + " -q -d -f -o " + d + "/x.out " + d + "/x.stz") == 0);
        CHECK(read_file(d + "/x.out") == read_file(in));
    }
}

TEST_CASE("cli: inspect shows the sections, as a table and as JSON", "[cli][inspect]") {
    std::string d = temp_dir("cli-inspect");
    std::string in = kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin";
    REQUIRE(sh(kBin + " inspect --json '" + in + "' > " + d + "/i.json") == 0);
    std::string j = slurp(d + "/i.json");
    CHECK(j.find("\"format\": \"ggsq\"") != std::string::npos);
    CHECK(j.find("\"version\": 3") != std::string::npos);
    CHECK(j.find("\"name\": \"kv.k[0]\"") != std::string::npos);
    CHECK(j.find("\"shape\": [322, 32]") != std::string::npos);
    CHECK(sh("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
             "assert sum(s[\"bytes\"] for s in d[\"sections\"]) == d[\"bytes\"]' " + d + "/i.json") == 0);
    REQUIRE(sh(kBin + " inspect '" + in + "' > " + d + "/i.txt") == 0);
    CHECK(slurp(d + "/i.txt").find("kv.v[4]") != std::string::npos);
    REQUIRE(sh(kBin + " -q -c '" + in + "' > " + d + "/s.stz") == 0);
    REQUIRE(sh(kBin + " inspect " + d + "/s.stz > " + d + "/s.txt") == 0);
    CHECK(slurp(d + "/s.txt").find("kv.k[0]") != std::string::npos);
}

TEST_CASE("cli: bench reports verified rows as JSON and CSV, and plots", "[cli][bench]") {
    std::string d = temp_dir("cli-bench");
    REQUIRE(sh(kBin + " bench --quick --runs 1 --json --plot " + d + "/p.svg > " + d + "/b.json") == 0);
    CHECK(sh("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d[\"files\"][0]; "
             "assert f[\"bytes\"] > 0 and len(f[\"results\"]) >= 7; "
             "assert all(r[\"verified\"] and r[\"compressed_bytes\"] > 0 and r[\"ratio\"] > 0 and r[\"compress_mbps\"] > 0 "
             "and r[\"decompress_mbps\"] > 0 for r in f[\"results\"]); "
             "assert any(r[\"external\"] for r in f[\"results\"]) == bool(__import__(\"shutil\").which(\"zstd\"))' " + d + "/b.json") == 0);
    CHECK(slurp(d + "/p.svg").find("<svg") != std::string::npos);
    REQUIRE(sh(kBin + " bench --pipelines default,zstd:3 --runs 1 --csv --no-external --sections " + kData +
               "/ggsq3.stories260K-hd32.q8_0.fa1.c1024.t322.bin > " + d + "/b.csv") == 0);
    CHECK(sh("test $(wc -l < " + d + "/b.csv) -eq 3") == 0);
    // A run as one call, or as calls repeated to last 5 ms: the same rows either way.
    for (const char* min_time : {"0", "5"}) {
        REQUIRE(sh(kBin + " bench --pipelines default,zstd:3 --runs 1 --csv --no-external --min-time " + min_time + " " +
                   kData + "/ggsq3.stories260K-hd32.q8_0.fa1.c1024.t322.bin > " + d + "/m.csv") == 0);
        CHECK(sh("test $(wc -l < " + d + "/m.csv) -eq 3") == 0);
    }
    CHECK(sh(kBin + " bench --runs 1 --no-external --min-time -1 " + kData +
             "/ggsq3.stories260K.f16.fa1.c1024.t322.bin > /dev/null 2>&1") != 0);
    CHECK(sh(kBin + " bench --pipelines nosuch " + kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin 2>/dev/null") != 0);
}

TEST_CASE("cli: -l and inspect show the header properties of a .stz", "[cli][inspect]") {
    std::string d = temp_dir("cli-props");
    stz::CompressOptions opt;
    opt.properties = {{"lossy", "bits:V=6", false}, {"note-from-test", "x\ny", false}};
    write_file(d + "/p.stz", compress_bytes(random_bytes(3000, 5), opt));
    REQUIRE(sh(kBin + " -l " + d + "/p.stz > " + d + "/l.txt") == 0);
    std::string l = slurp(d + "/l.txt");
    CHECK(l.find("lossy: bits:V=6") != std::string::npos);
    CHECK(l.find("note-from-test: x\\ny") != std::string::npos);  // control bytes escaped
    REQUIRE(sh(kBin + " inspect " + d + "/p.stz > " + d + "/i.txt") == 0);
    CHECK(slurp(d + "/i.txt").find("lossy: bits:V=6") != std::string::npos);
    REQUIRE(sh(kBin + " inspect --json " + d + "/p.stz > " + d + "/i.json") == 0);
    CHECK(sh("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
             "assert d[\"properties\"][\"lossy\"] == {\"value\": \"bits:V=6\", \"required\": False}' " + d + "/i.json") == 0);
}

TEST_CASE("cli: --version names the release and the container versions it writes and reads", "[cli]") {
    const std::string d = temp_dir("cli-version");
    REQUIRE(sh(std::string(STATEZIP_BIN) + " --version > " + d + "/v") == 0);
    const std::string v = slurp(d + "/v");
    CHECK(v.rfind("statezip " STATEZIP_VERSION_STRING " (", 0) == 0);
    // The version the writer writes and every version the readers accept, from the constants they check.
    CHECK(v.find("writes .stz container version " + std::to_string(stz::kStzVersionCompact)) != std::string::npos);
    CHECK(v.find("reads .stz container versions " + std::to_string(stz::kStzVersion) + "-" + std::to_string(stz::kStzMaxVersion)) !=
          std::string::npos);
    CHECK(v.find(".stzp set version " + std::to_string(stz::kPackVersion)) != std::string::npos);
    CHECK(v.find("map versions 1-" + std::to_string(stz::kPatchMapVersionTokens)) != std::string::npos);
}

// -d checks each chunk's record checksum only when the chunk does not decode as written (the
// raw checksum covers every byte it gives back); -t checks every record before decoding it.
// A flipped bit that zstd's frame does not read, in a chunk after the first, shows the two.
TEST_CASE("cli: a damaged byte that decoding does not read: -t names it, -d gives back the file", "[cli][corruption]") {
    using stz::Bytes;
    Bytes in = random_bytes(6000, 5);
    std::fill(in.begin() + 1000, in.begin() + 5000, 0);
    stz::CompressOptions opt;
    opt.chunk_bytes = 2048;
    opt.codec.all = "zstd:3";
    const Bytes c = compress_bytes(in, opt);
    auto decodes_exactly = [&](const Bytes& t) {
        try {
            return decompress_bytes(t, stz::RecordCheck::OnFailure) == in;
        } catch (const stz::Error&) {
            return false;
        }
    };
    Bytes unread;
    for (size_t pos = c.size() / 2; pos < c.size() && unread.empty(); ++pos)
        for (int bit = 0; bit < 8 && unread.empty(); ++bit) {
            Bytes t = c;
            t[pos] ^= static_cast<uint8_t>(1u << bit);
            if (decodes_exactly(t)) unread = t;
        }
    REQUIRE(!unread.empty());
    REQUIRE_THROWS_AS(decompress_bytes(unread, stz::RecordCheck::BeforeDecode), stz::Error);
    const std::string d = temp_dir("cli-unread");
    write_file(d + "/u.bin.stz", unread);
    CHECK(sh(kBin + " -q -t " + d + "/u.bin.stz") == 1);
    REQUIRE(sh(kBin + " -q -d " + d + "/u.bin.stz") == 0);
    CHECK(read_file(d + "/u.bin") == in);
}
