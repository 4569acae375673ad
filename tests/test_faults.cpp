// Faults a user can run into: full disks, size limits, bad paths, an input that shrinks
// while it is read, Ctrl-C. Each must give a message and exit 1 (or die by the signal),
// leave no output and no temporary file, and leave the input untouched.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_util.hpp"

using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;
const std::string kGen = STATEZIP_GEN;
const std::string kSample = std::string(STATEZIP_TEST_DATA) + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin";

}  // namespace

TEST_CASE("faults: a file-size limit (disk full) mid-write", "[faults]") {
    std::string d = temp_dir("fault-fsize");
    sh("cp '" + kSample + "' " + d + "/in.bin");
    CHECK(sh("bash -c 'ulimit -f 40; " + kBin + " -q --codec store -o " + d + "/in.bin.stz " + d + "/in.bin' 2> " + d +
             "/err") == 1);
    CHECK_FALSE(exists(d + "/in.bin.stz"));
    CHECK(leftover_temp_files(d) == 0);
    CHECK(read_file(d + "/in.bin") == read_file(kSample));
    CHECK(read_file(d + "/err").size() > 0);
    // decompression into a limited file
    REQUIRE(sh(kBin + " -q -o " + d + "/x.stz " + d + "/in.bin") == 0);
    CHECK(sh("bash -c 'ulimit -f 40; " + kBin + " -q -d -o " + d + "/x.out " + d + "/x.stz' 2>/dev/null") == 1);
    CHECK_FALSE(exists(d + "/x.out"));
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("faults: writing to a full device or a closed pipe", "[faults]") {
    CHECK(sh(kBin + " -q -c '" + kSample + "' > /dev/full 2>/dev/null") == 1);
    std::string d = temp_dir("fault-pipe");
    REQUIRE(sh(kBin + " -q -c '" + kSample + "' > " + d + "/s.stz") == 0);
    // A reader that stops early: statezip reports the broken pipe and exits 1.
    REQUIRE(sh(kBin + " -q -c --codec store '" + kSample + "' > " + d + "/big.stz") == 0);
    CHECK(sh("bash -o pipefail -c '" + kBin + " -q -d -c " + d + "/big.stz 2>/dev/null | head -c 10 > /dev/null'") == 1);
}

TEST_CASE("faults: unreadable inputs and unwritable outputs", "[faults]") {
    std::string d = temp_dir("fault-paths");
    CHECK(sh(kBin + " -q " + d + " 2>/dev/null") == 1);                 // a directory
    CHECK(sh(kBin + " -q " + d + "/missing.bin 2>/dev/null") == 1);     // no such file
    CHECK(sh(kBin + " -q -d " + d + "/missing.stz 2>/dev/null") == 1);
    sh("cp '" + kSample + "' " + d + "/in.bin");
    CHECK(sh(kBin + " -q -o /proc/statezip-test.stz " + d + "/in.bin 2>/dev/null") == 1);  // not writable
    CHECK(sh(kBin + " -q -o " + d + "/in.bin/x.stz " + d + "/in.bin 2>/dev/null") == 1);   // not a folder
    CHECK(leftover_temp_files(d) == 0);
    CHECK(read_file(d + "/in.bin") == read_file(kSample));
}

TEST_CASE("faults: the input shrinks or vanishes while it is compressed", "[faults]") {
    std::string d = temp_dir("fault-vanish");
    REQUIRE(sh(kGen + " session10 " + d + "/big.bin --size 40000000 --layers 8 --embd 256") == 0);
    // Truncated mid-run: a clear error and no output.
    // --max: slow enough (chanctx) to be still running when the input changes.
    CHECK(sh("(" + kBin + " -q --max -T1 -o " + d + "/big.stz " + d + "/big.bin 2> " + d + "/err & p=$!; sleep 0.4; truncate -s 1000 " +
             d + "/big.bin; wait $p)") == 1);
    CHECK_FALSE(exists(d + "/big.stz"));
    CHECK(leftover_temp_files(d) == 0);
    std::string err;
    for (auto c : read_file(d + "/err")) err += static_cast<char>(c);
    CHECK(err.find("big.bin") != std::string::npos);
    // Unlinked mid-run: the open file is still whole, so the output is complete and correct.
    REQUIRE(sh(kGen + " session10 " + d + "/v.bin --size 20000000 --layers 8 --embd 256 && cp " + d + "/v.bin " + d + "/keep.bin") == 0);
    CHECK(sh("(" + kBin + " -q -T1 -o " + d + "/v.stz " + d + "/v.bin & p=$!; sleep 0.3; rm " + d + "/v.bin; wait $p)") == 0);
    REQUIRE(sh(kBin + " -q -d -o " + d + "/v.out " + d + "/v.stz") == 0);
    CHECK(read_file(d + "/v.out") == read_file(d + "/keep.bin"));
}

TEST_CASE("faults: Ctrl-C leaves no partial output and the input untouched", "[faults]") {
    std::string d = temp_dir("fault-sigint");
    REQUIRE(sh(kGen + " session10 " + d + "/big.bin --size 40000000 --layers 8 --embd 256 && cp " + d + "/big.bin " + d +
               "/copy.bin") == 0);
    int rc = sh("(" + kBin + " -q --max -T1 -o " + d + "/big.stz " + d + "/big.bin 2>/dev/null & p=$!; sleep 0.4; kill -INT $p; wait $p)");
    CHECK(rc == 128 + SIGINT);
    CHECK_FALSE(exists(d + "/big.stz"));
    CHECK(leftover_temp_files(d) == 0);
    CHECK(read_file(d + "/big.bin") == read_file(d + "/copy.bin"));
    // the same during decompression
    REQUIRE(sh(kBin + " -q -o " + d + "/c.stz " + d + "/copy.bin") == 0);
    // The input arrives through a pipe that pauses after its first megabyte, so the signal always lands
    // mid-run: a decoder fast enough to finish first (and rename its output) cannot make this pass or fail.
    REQUIRE(std::filesystem::file_size(d + "/c.stz") > 1000000);  // else the pause would come after the end
    rc = sh("((head -c 1000000 " + d + "/c.stz; sleep 3; tail -c +1000001 " + d + "/c.stz) | " + kBin + " -q -d -T1 -o " +
            d + "/c.out 2>/dev/null & p=$!; sleep 0.5; kill -INT $p; wait $p)");
    CHECK(rc == 128 + SIGINT);
    CHECK_FALSE(exists(d + "/c.out"));
    CHECK(leftover_temp_files(d) == 0);
}
