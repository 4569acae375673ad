// statezip pack / unpack / -l / -t as a user runs them: round trip of a folder of related
// files, one member, refusals of unsafe names and symbolic links, damage named per member,
// appending to a set cut mid-append.
#include <catch2/catch.hpp>

#include "cells_util.hpp"
#include "related/pack.hpp"

using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;

// A folder of 4 related synthetic checkpoints (each holds the cells of the one before).
std::string make_folder(const std::string& d) {
    sh("mkdir -p " + d + "/ck");
    stz::Bytes prev;
    for (int k = 0; k < 4; ++k) {
        stzsynth::Spec s;
        s.flavour = "session9";
        s.cells = 50 * (k + 1);
        s.seed = 7 + k;
        stz::Bytes f = synth_state(s);
        if (k) {
            stz::MemorySource ps(prev);
            auto pg = stz::find_cell_groups(parse_bytes(prev));
            auto fg = stz::find_cell_groups(parse_bytes(f));
            stz::Bytes cell(pg[0].cell_bytes);
            for (uint64_t c = 0; c < pg[0].n_cells; ++c) {
                stz::read_cells(ps, pg[0], c, 1, cell.data());
                write_cell(f, fg[0], c, cell.data());
            }
        }
        write_file(d + "/ck/c" + std::to_string(k) + ".bin", f);
        prev = f;
    }
    write_file(d + "/ck/notes.txt", stz::Bytes(1000, 'x'));
    return d + "/ck";
}

// A set holding one member under `name` exactly as given (the library does not check names;
// the CLI refuses unsafe ones when packing, and unpack must refuse them in a crafted set).
void craft_set(const std::string& path, const std::string& name) {
    stz::MemoryFile set;
    auto w = stz::PackWriter::create(set, {});
    stz::Bytes data(100, 'e');
    stz::MemorySource src(data);
    w->add(src, name);
    w->commit();
    write_file(path, set.data);
}

}  // namespace

TEST_CASE("pack cli: a folder round-trips, one member restores alone, -l and -t report", "[pack][cli]") {
    std::string d = temp_dir("pack-cli");
    make_folder(d);
    REQUIRE(sh("cd " + d + " && " + kBin + " pack -q -o set.stzp ck/c0.bin ck/c1.bin ck/c2.bin ck/c3.bin ./ck/notes.txt") == 0);
    CHECK(sh("cd " + d + " && " + kBin + " pack -q -o set.stzp ck/c0.bin 2>/dev/null") == 1);  // exists: refused without -f
    CHECK(sh("cd " + d + " && " + kBin + " pack -q -f -o set.stzp set.stzp 2>/dev/null") == 1);  // the set as its own input
    CHECK(sh("cd " + d + " && " + kBin + " pack -q --append set.stzp set.stzp 2>/dev/null") == 1);
    REQUIRE(sh(kBin + " -l " + d + "/set.stzp > " + d + "/list.txt") == 0);
    std::string list = slurp(d + "/list.txt");
    CHECK(list.find("set of 5 members") != std::string::npos);
    CHECK(list.find("ck/notes.txt") != std::string::npos);
    CHECK(list.find("ck/c3.bin") != std::string::npos);
    CHECK(sh(kBin + " -q -t " + d + "/set.stzp") == 0);
    sh("mkdir " + d + "/out " + d + "/one");
    REQUIRE(sh(kBin + " unpack -q " + d + "/set.stzp -C " + d + "/out") == 0);
    for (const char* f : {"c0.bin", "c1.bin", "c2.bin", "c3.bin", "notes.txt"})
        CHECK(read_file(d + "/out/ck/" + f) == read_file(d + "/ck/" + f));
    CHECK(sh(kBin + " unpack -q " + d + "/set.stzp -C " + d + "/out") == 1);  // files exist
    CHECK(sh(kBin + " unpack -q -f " + d + "/set.stzp -C " + d + "/out") == 0);
    REQUIRE(sh(kBin + " unpack -q " + d + "/set.stzp -C " + d + "/one ck/c2.bin") == 0);
    CHECK(read_file(d + "/one/ck/c2.bin") == read_file(d + "/ck/c2.bin"));
    CHECK_FALSE(exists(d + "/one/ck/c3.bin"));
    CHECK(sh(kBin + " unpack -q " + d + "/set.stzp -C " + d + "/one ck/missing.bin 2>/dev/null") == 1);
    CHECK(leftover_temp_files(d + "/out/ck") == 0);
}

TEST_CASE("pack cli: unsafe names and symbolic links never lead out of DIR", "[pack][cli]") {
    std::string d = temp_dir("pack-unsafe");
    make_folder(d);
    CHECK(sh("cd " + d + "/ck && " + kBin + " pack -q -o ../bad.stzp ../ck/c0.bin 2>/dev/null") == 1);  // '..' refused
    CHECK_FALSE(exists(d + "/bad.stzp"));
    sh("mkdir -p " + d + "/dir " + d + "/outside");
    for (const std::string name : {"../escape.bin", "/tmp/statezip-abs-escape.bin", "a/../../escape.bin"}) {
        craft_set(d + "/crafted.stzp", name);
        CHECK(sh(kBin + " unpack -q " + d + "/crafted.stzp -C " + d + "/dir 2>/dev/null") == 1);
    }
    CHECK_FALSE(exists(d + "/escape.bin"));
    CHECK_FALSE(exists("/tmp/statezip-abs-escape.bin"));
    // A folder of a member name that is a symbolic link out of DIR is refused.
    sh("ln -s " + d + "/outside " + d + "/dir/link");
    craft_set(d + "/crafted.stzp", "link/file.bin");
    CHECK(sh(kBin + " unpack -q " + d + "/crafted.stzp -C " + d + "/dir 2>/dev/null") == 1);
    CHECK_FALSE(exists(d + "/outside/file.bin"));
    // A member whose final name is a symbolic link: with -f the link itself is replaced.
    sh("ln -s " + d + "/outside/target " + d + "/dir/leaf.bin");
    craft_set(d + "/crafted.stzp", "leaf.bin");
    CHECK(sh(kBin + " unpack -q " + d + "/crafted.stzp -C " + d + "/dir 2>/dev/null") == 1);
    CHECK(sh(kBin + " unpack -q -f " + d + "/crafted.stzp -C " + d + "/dir") == 0);
    CHECK_FALSE(exists(d + "/outside/target"));
    CHECK(read_file(d + "/dir/leaf.bin") == stz::Bytes(100, 'e'));
}

TEST_CASE("pack cli: -t names the damaged member, a cut append is ignored and then replaced", "[pack][cli]") {
    std::string d = temp_dir("pack-damage");
    make_folder(d);
    REQUIRE(sh("cd " + d + " && " + kBin + " pack -q -o set.stzp ck/notes.txt ck/c0.bin") == 0);
    const uint64_t committed = read_file(d + "/set.stzp").size();
    REQUIRE(sh("cd " + d + " && " + kBin + " pack -q --append set.stzp ck/c1.bin ck/c2.bin") == 0);
    stz::Bytes full = read_file(d + "/set.stzp");
    // Cut inside the append: the first two members remain, -t says so; the next append works.
    stz::Bytes cut(full.begin(), full.begin() + (committed + full.size()) / 2);
    write_file(d + "/set.stzp", cut);
    REQUIRE(sh(kBin + " -l " + d + "/set.stzp > " + d + "/l.txt") == 0);
    CHECK(slurp(d + "/l.txt").find("set of 2 members") != std::string::npos);
    CHECK(sh(kBin + " -q -t " + d + "/set.stzp") == 0);
    REQUIRE(sh("cd " + d + " && " + kBin + " pack -q --append set.stzp ck/c1.bin ck/c2.bin ck/c3.bin") == 0);
    CHECK(sh(kBin + " -q -t " + d + "/set.stzp") == 0);
    CHECK(sh("cd " + d + " && " + kBin + " pack -q --append set.stzp ck/c3.bin 2>/dev/null") == 1);  // already a member
    // A flipped byte inside c0's cells: -t fails and names c0; notes.txt still tests OK. A
    // flipped byte in c0's own record: -t names it by its number (its name is not trusted).
    full = read_file(d + "/set.stzp");
    stz::MemoryFile mf;
    mf.data = full;
    stz::PackReader pr(mf);
    REQUIRE(pr.members()[1].record->name == "ck/c0.bin");
    const uint64_t c0_block = pr.members()[1].record->groups.at(0).runs.at(0).block_offset + 300;
    full[c0_block] ^= 0x10;
    write_file(d + "/bad.stzp", full);
    CHECK(sh(kBin + " -t " + d + "/bad.stzp 2> " + d + "/t.txt") == 1);
    std::string t = slurp(d + "/t.txt");
    CHECK(t.find("ck/notes.txt : OK") != std::string::npos);
    CHECK(t.find("bad.stzp: ck/c0.bin: ") != std::string::npos);
    CHECK(t.find("ck/c1.bin : OK") == std::string::npos);  // c1 holds c0's cells too
    full[c0_block] ^= 0x10;
    full[committed - 100] ^= 0x10;
    write_file(d + "/bad.stzp", full);
    CHECK(sh(kBin + " -t " + d + "/bad.stzp 2> " + d + "/t.txt") == 1);
    t = slurp(d + "/t.txt");
    CHECK(t.find("member #2: damaged member record") != std::string::npos);
    CHECK(t.find("ck/c3.bin : OK") != std::string::npos);  // its cells are intact
}

TEST_CASE("pack cli: --lossy is refused (a set restores members exactly), nothing is written", "[pack][cli]") {
    std::string d = temp_dir("pack-lossy");
    make_folder(d);
    CHECK(sh("cd " + d + " && " + kBin + " pack -q --lossy=drop:V=6 -o set.stzp ck/c0.bin ck/c1.bin 2> err.txt") == 2);
    CHECK(slurp(d + "/err.txt").find("--lossy cannot be combined with pack") != std::string::npos);
    CHECK_FALSE(exists(d + "/set.stzp"));
    stz::PackOptions opt;
    opt.compress.lossy = stz::parse_lossy_spec("drop:V=6");
    stz::MemoryFile set;
    CHECK_THROWS_WITH(stz::PackWriter::create(set, opt), Catch::Contains("lossy"));
}
