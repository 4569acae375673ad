// `statezip --patch-from=REF` as a user runs it: files, -o, -c, stdin, several inputs with one
// REF, -t, -l; a missing or wrong REF fails with one line naming it, exit 1, no output.
#include <catch2/catch.hpp>

#include "cells_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;

// REF and two later saves that share most of its cells (synthetic: runs without ../shared).
void write_related(const std::string& d) {
    stzsynth::Spec s;
    s.cells = 200;
    Bytes b = synth_state(s);
    const CellGroup g = find_cell_groups(parse_bytes(b)).at(0);
    MemorySource src(b);
    Bytes cell(g.cell_bytes);
    Bytes a = b, c = b;
    for (uint64_t i = 150; i < 200; ++i) {  // a: the last 50 cells differ; c: the first 20
        read_cells(src, g, i, 1, cell.data());
        for (auto& x : cell) x ^= 0x33;
        write_cell(a, g, i, cell.data());
        if (i < 170) write_cell(c, g, i - 150, cell.data());
    }
    write_file(d + "/ref.bin", a);
    write_file(d + "/b.bin", b);
    write_file(d + "/c.bin", c);
}

}  // namespace

TEST_CASE("cli patch-from: files, -o, -c, stdin and several inputs round-trip", "[cli][patch]") {
    std::string d = temp_dir("patch-cli");
    write_related(d);
    REQUIRE(sh(kBin + " -q --patch-from=" + d + "/ref.bin " + d + "/b.bin " + d + "/c.bin") == 0);
    REQUIRE(sh(kBin + " -q -d --patch-from " + d + "/ref.bin -o " + d + "/b.out " + d + "/b.bin.stz") == 0);
    CHECK(read_file(d + "/b.out") == read_file(d + "/b.bin"));
    REQUIRE(sh(kBin + " -q -d -c --patch-from=" + d + "/ref.bin " + d + "/c.bin.stz > " + d + "/c.out") == 0);
    CHECK(read_file(d + "/c.out") == read_file(d + "/c.bin"));
    CHECK(sh(kBin + " -q -t --patch-from=" + d + "/ref.bin " + d + "/b.bin.stz " + d + "/c.bin.stz") == 0);
    REQUIRE(sh(kBin + " -q -c --patch-from=" + d + "/ref.bin < " + d + "/b.bin > " + d + "/p.stz") == 0);
    REQUIRE(sh("cat " + d + "/p.stz | " + kBin + " -q -d -c --patch-from=" + d + "/ref.bin > " + d + "/p.out") == 0);
    CHECK(read_file(d + "/p.out") == read_file(d + "/b.bin"));
    CHECK(read_file(d + "/b.bin.stz").size() * 3 < read_file(d + "/b.bin").size());
    // -l shows that the file needs a reference, and which.
    REQUIRE(sh(kBin + " -l " + d + "/b.bin.stz > " + d + "/list.txt") == 0);
    std::string list = slurp(d + "/list.txt");
    CHECK(list.find("reference: name=" + d + "/ref.bin;size=") != std::string::npos);
    CHECK(list.find("needed to decode") != std::string::npos);
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("cli patch-from: a missing, other or modified REF fails with one line and no output", "[cli][patch]") {
    std::string d = temp_dir("patch-cli-bad");
    write_related(d);
    REQUIRE(sh(kBin + " -q --patch-from=" + d + "/ref.bin " + d + "/b.bin") == 0);
    copy_with_byte_inverted(d + "/ref.bin", d + "/flipped.bin", 5000);
    for (const std::string ref : {std::string(""), " --patch-from=" + d + "/c.bin", " --patch-from=" + d + "/flipped.bin"}) {
        INFO("ref option: " << ref);
        CHECK(sh(kBin + " -d" + ref + " -o " + d + "/out.bin " + d + "/b.bin.stz 2> " + d + "/err.txt") == 1);
        CHECK_FALSE(exists(d + "/out.bin"));
        std::string err = slurp(d + "/err.txt");
        CHECK(err.find(d + "/ref.bin\" (") != std::string::npos);
        CHECK(err.find(" bytes, xxh128 ") != std::string::npos);
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK(sh(kBin + " -d -c" + ref + " " + d + "/b.bin.stz > " + d + "/out.txt 2>/dev/null") == 1);
        CHECK(read_file(d + "/out.txt").empty());
    }
    CHECK(sh(kBin + " -q --patch-from=- " + d + "/b.bin -o " + d + "/x.stz 2>/dev/null") == 1);
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("cli patch-from: --lossy with --patch-from is a usage error, before any output", "[cli][patch]") {
    const std::string d = temp_dir("patch-lossy");
    write_related(d);
    CHECK(sh(kBin + " -q --lossy=drop:V=6 --patch-from=" + d + "/ref.bin " + d + "/b.bin 2> " + d + "/err.txt") == 2);
    CHECK(slurp(d + "/err.txt").find("--lossy cannot be combined with --patch-from") != std::string::npos);
    CHECK_FALSE(exists(d + "/b.bin.stz"));
}
