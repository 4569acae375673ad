// Sets of related state files (`.stzp`, src/lib/related/pack.hpp): round trips, sharing, restoring
// one member, damage detected per member, interrupted appends.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "cells_util.hpp"
#include "related/pack.hpp"
#include "related/pack_records.hpp"

using namespace stz;
using namespace stztest;

namespace {

// Checkpoints of one context: file k holds cells of the ones before it as its first cells
// (copied cell by cell, so every layer of a shared cell is equal), and new cells after them.
std::vector<Bytes> related_set(const std::string& flavour, bool v_trans, int n, uint32_t step) {
    std::vector<Bytes> files;
    for (int k = 0; k < n; ++k) {
        stzsynth::Spec s;
        s.flavour = flavour;
        s.v_trans = v_trans;
        s.cells = step * (k + 1);
        s.seed = 100 + k;
        Bytes f = synth_state(s);
        if (k) {
            const Bytes& prev = files.back();
            MemorySource ps(prev);
            auto pg = find_cell_groups(parse_bytes(prev));
            auto fg = find_cell_groups(parse_bytes(f));
            REQUIRE(pg.size() == 1);
            REQUIRE(fg.size() == 1);
            Bytes cell(pg[0].cell_bytes);
            for (uint64_t c = 0; c < pg[0].n_cells; ++c) {
                read_cells(ps, pg[0], c, 1, cell.data());
                write_cell(f, fg[0], c, cell.data());
            }
        }
        files.push_back(std::move(f));
    }
    return files;
}

struct Packed {
    MemoryFile set;
    std::vector<PackAddResult> added;
};

void pack_into(MemoryFile& set, const std::vector<Bytes>& files, const std::string& prefix, std::vector<PackAddResult>* added,
               bool append = false) {
    PackOptions opt;
    auto w = append ? PackWriter::append(set, opt) : PackWriter::create(set, opt);
    std::vector<std::unique_ptr<MemorySource>> srcs;  // read again at the commit
    for (size_t i = 0; i < files.size(); ++i) {
        srcs.push_back(std::make_unique<MemorySource>(files[i]));
        w->add(*srcs.back(), prefix + std::to_string(i) + ".bin");
    }
    auto r = w->commit();
    if (added) added->insert(added->end(), r.begin(), r.end());
}

Bytes restore_bytes(PackReader& r, size_t i) {
    MemoryFile out;
    r.restore(i, out);
    return out.data;
}

uint64_t compressed_alone(const Bytes& b) { return compress_bytes(b).size(); }

// Records every byte range read.
class CountingSource final : public InputSource {
public:
    explicit CountingSource(InputSource& in) : in_(in) {}
    uint64_t size() const override { return in_.size(); }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        reads.push_back({off, n});
        in_.read_at(off, dst, n);
    }
    std::vector<std::pair<uint64_t, uint64_t>> reads;

private:
    InputSource& in_;
};

}  // namespace

TEST_CASE("pack: related synthetic sets round-trip and store each shared cell once", "[pack]") {
    for (auto [flavour, v_trans] : {std::pair{"session9", true}, std::pair{"seq2", false}, std::pair{"raw", true}}) {
        INFO(flavour << " v_trans " << v_trans);
        auto files = related_set(flavour, v_trans, 4, 60);
        MemoryFile set;
        std::vector<PackAddResult> added;
        pack_into(set, files, "ck/", &added);
        uint64_t alone = 0;
        for (const auto& f : files) alone += compressed_alone(f);
        for (size_t k = 1; k < files.size(); ++k) CHECK(added[k].cells_shared == 60 * k);
        CHECK(set.data.size() < alone * 6 / 10);  // 600 cells stored once instead of 1000
        PackReader r(set);
        REQUIRE(r.members().size() == files.size());
        for (size_t k = 0; k < files.size(); ++k) {
            CHECK(r.members()[k].record->name == "ck/" + std::to_string(k) + ".bin");
            CHECK(restore_bytes(r, k) == files[k]);
        }
    }
}

TEST_CASE("pack: non-state files, empty files and repeated files are members too", "[pack]") {
    std::vector<Bytes> files = {random_bytes(100000, 1), {}, Bytes(5000, 0), synth_state({})};
    files.push_back(files[3]);  // the same state twice: every cell shared
    files.push_back(files[0]);  // the same bytes twice: only a member record more
    MemoryFile set;
    std::vector<PackAddResult> added;
    pack_into(set, files, "m", &added);
    CHECK(added[4].cells_shared == added[4].cells);
    CHECK(added[4].cells > 0);
    CHECK(added[5].stored < 300);  // its own record (the 100000 random bytes are stored once)
    PackReader r(set);
    for (size_t k = 0; k < files.size(); ++k) CHECK(restore_bytes(r, k) == files[k]);
    // and across an append: a copy of a committed member
    std::vector<PackAddResult> again;
    pack_into(set, {files[0], files[3]}, "again", &again, true);
    CHECK(again[0].stored < 300);
    CHECK(again[1].stored < 1000);  // a state member's record lists its cell runs
    PackReader r2(set);
    REQUIRE(r2.members().size() == files.size() + 2);
    CHECK(restore_bytes(r2, files.size()) == files[0]);
    CHECK(restore_bytes(r2, files.size() + 1) == files[3]);
}

TEST_CASE("pack: restoring one member reads only the records it needs", "[pack]") {
    auto files = related_set("seq2", false, 3, 80);
    MemoryFile set;
    pack_into(set, files, "c", nullptr);
    CountingSource counted(set);
    PackReader r(counted);
    const uint64_t member0_end = read_record_head(set, r.members()[0].offset).end();
    counted.reads.clear();
    CHECK(restore_bytes(r, 0) == files[0]);
    for (const auto& [off, n] : counted.reads) CHECK(off + n <= member0_end);
    counted.reads.clear();
    CHECK(restore_bytes(r, 2) == files[2]);
    uint64_t read = 0;
    for (const auto& rd : counted.reads) read += rd.second;
    CHECK(read < set.data.size());  // not the members' own literal streams and records of 0 and 1
}

TEST_CASE("pack: a bit flip or a cut is detected and named per member", "[pack]") {
    auto files = related_set("session9", true, 3, 50);
    // Two unrelated members first, so that damage to one leaves the other intact.
    files.insert(files.begin(), random_bytes(3000, 9));
    MemoryFile set;
    pack_into(set, files, "d", nullptr);
    PackReader clean(set);
    std::vector<uint64_t> offs;
    for (const auto& m : clean.members()) offs.push_back(m.offset);
    // Flip one byte inside every record of member 2 (its blocks, literal stream, record):
    // member 0 always survives, member 2 never does; nothing crashes.
    const uint64_t from = read_record_head(set, offs[1]).end(), to = read_record_head(set, offs[2]).end();
    for (uint64_t at = from; at < to; at += std::max<uint64_t>(1, (to - from) / 97)) {
        MemoryFile bad = set;
        bad.data[at] ^= 0x20;
        PackReader r(bad);
        REQUIRE(r.members().size() == files.size());
        CHECK(restore_bytes(r, 0) == files[0]);
        CHECK_THROWS_AS(restore_bytes(r, 2), Error);
    }
    // Cuts: a reader either refuses the set or sees whole members only.
    for (uint64_t cut = 0; cut < set.data.size(); cut += std::max<uint64_t>(1, set.data.size() / 211)) {
        MemoryFile bad;
        bad.data.assign(set.data.begin(), set.data.begin() + cut);
        try {
            PackReader r(bad);
            CHECK(r.members().empty());  // only the empty commit of a new set precedes the members
        } catch (const DataError&) {
        }
    }
}

TEST_CASE("pack: a set cut mid-append keeps its members and takes the next append", "[pack]") {
    auto files = related_set("seq2", false, 4, 40);
    MemoryFile set;
    pack_into(set, {files[0], files[1]}, "a", nullptr);
    const uint64_t committed = set.data.size();
    MemoryFile full = set;
    pack_into(full, {files[2], files[3]}, "b", nullptr, true);
    for (uint64_t cut = committed; cut < full.data.size(); cut += std::max<uint64_t>(1, (full.data.size() - committed) / 53)) {
        MemoryFile part;
        part.data.assign(full.data.begin(), full.data.begin() + cut);
        {
            PackReader r(part);
            REQUIRE(r.members().size() == 2);
            CHECK(r.state().trailing_bytes == cut - committed);
            CHECK(restore_bytes(r, 1) == files[1]);
        }
        pack_into(part, {files[2], files[3]}, "b", nullptr, true);
        PackReader r(part);
        REQUIRE(r.members().size() == 4);
        CHECK(r.state().trailing_bytes == 0);
        for (size_t k = 0; k < 4; ++k) CHECK(restore_bytes(r, k) == files[k]);
    }
}

TEST_CASE("pack: appending shares cells with the members already stored", "[pack]") {
    auto files = related_set("raw", true, 3, 70);
    MemoryFile set;
    pack_into(set, {files[0], files[1]}, "x", nullptr);
    std::vector<PackAddResult> added;
    pack_into(set, {files[2]}, "y", &added, true);
    CHECK(added[0].cells_shared == 140);
    PackOptions opt;
    auto w = PackWriter::append(set, opt);
    CHECK(w->has_member("x1.bin"));
    MemorySource src(files[0]);
    CHECK_THROWS_AS(w->add(src, "x0.bin"), Error);  // names are unique
}

TEST_CASE("pack: member names are made relative and normalised, or refused", "[pack]") {
    CHECK(normalise_member_name("a/./b//c.bin") == "a/b/c.bin");
    CHECK(normalise_member_name("/abs/x") == "abs/x");
    CHECK(normalise_member_name("./x") == "x");
    CHECK_FALSE(normalise_member_name("../x"));
    CHECK_FALSE(normalise_member_name("a/../x"));
    CHECK_FALSE(normalise_member_name("/"));
    CHECK_FALSE(normalise_member_name("."));
    CHECK_FALSE(normalise_member_name(""));
    CHECK_FALSE(normalise_member_name(std::string("a\0b", 3)));
}

TEST_CASE("pack: related corpus groups round-trip and share their cells", "[pack][corpus]") {
    const std::vector<std::vector<std::string>> groups = {
        {"raw-s260k-conv8-f16-fa1-p1000.bin", "raw-s260k-conv8-f16-fa1-p1200.bin", "raw-s260k-conv8-f16-fa1-p1400.bin",
         "seq-s260k-conv8-f16-fa1-p1000.bin", "seq-s260k-conv8-f16-fa1-p1200.bin", "seq-s260k-conv8-f16-fa1-p1400.bin"},
        {"session-s260k-conv1-f16-fa0-a.bin", "session-s260k-conv1-f16-fa0-b.bin"},
        {"raw-s260k-multi3-kvu-f16-fa0.bin", "seq-s260k-multi3-kvu-f16-fa0-s0.bin", "seq-s260k-multi3-kvu-f16-fa0-s1.bin",
         "seqraw-s260k-multi3-kvu-f16-fa0-s2.bin"},
        {"seq-s260khd32-srv-conv10-q8_0-fa1-a.bin", "seq-s260khd32-srv-conv10-q8_0-fa1-b.bin"}};
    bool any = false;
    for (const auto& names : groups) {
        std::vector<Bytes> files;
        for (const auto& n : names)
            if (auto p = corpus_file(n); !p.empty()) files.push_back(read_file(p));
        if (files.size() != names.size()) continue;
        any = true;
        INFO(names[0]);
        MemoryFile set;
        std::vector<PackAddResult> added;
        pack_into(set, files, "g", &added);
        uint64_t shared = 0, alone = 0;
        for (size_t k = 0; k < files.size(); ++k) shared += added[k].cells_shared, alone += compressed_alone(files[k]);
        CHECK(shared > 0);
        CHECK(set.data.size() < alone);
        PackReader r(set);
        for (size_t k = 0; k < files.size(); ++k) CHECK(restore_bytes(r, k) == files[k]);
    }
    if (!any) skip_test("no related corpus group found (set STATEZIP_CORPUS)");
}

TEST_CASE("pack: every single-byte change of a small set is refused or harmless, never a wrong member", "[pack]") {
    stzsynth::Spec s;
    s.flavour = "seq2";
    s.v_trans = false;
    s.cells = 6;
    s.n_layer = 2;
    s.n_embd = 8;
    std::vector<Bytes> files = {synth_state(s), Bytes(300, 7)};
    MemoryFile set;
    pack_into(set, files, "f", nullptr);
    for (size_t at = 0; at < set.data.size(); ++at) {
        MemoryFile bad = set;
        bad.data[at] ^= 0x41;
        try {
            PackReader r(bad);
            for (size_t k = 0; k < r.members().size(); ++k) {
                try {
                    Bytes got = restore_bytes(r, k);
                    REQUIRE(k < files.size());
                    CHECK(got == files[k]);
                } catch (const Error&) {
                }
            }
        } catch (const Error&) {
        }
    }
}

TEST_CASE("pack: more members than are kept pending are settled on the way and still share", "[pack]") {
    const int n = static_cast<int>(PackWriter::kMaxPendingMembers) + 6;
    auto files = related_set("seq2", false, n, 3);
    MemoryFile set;
    PackOptions opt;
    auto w = PackWriter::create(set, opt);
    std::vector<std::unique_ptr<MemorySource>> srcs;
    std::vector<PackAddResult> added;
    for (int k = 0; k < n; ++k) {
        srcs.push_back(std::make_unique<MemorySource>(files[k]));
        added.push_back(w->add(*srcs.back(), "m" + std::to_string(k)));
        CHECK(w->pending() <= PackWriter::kMaxPendingMembers);
        for (size_t j = 0; j + w->pending() < srcs.size(); ++j) srcs[j].reset();  // settled: never read again
    }
    CHECK(w->commit().size() == size_t(n));
    for (int k = 1; k < n; ++k) CHECK(added[k].cells_shared == 3u * k);
    PackReader r(set);
    REQUIRE(r.members().size() == size_t(n));
    for (int k = 0; k < n; ++k) CHECK(restore_bytes(r, k) == files[k]);
}

TEST_CASE("pack: -t's in-order rebuild hashes every member, window by window, and names damage", "[pack]") {
    for (auto [flavour, v_trans] : {std::pair{"session9", true}, std::pair{"seq2", false}, std::pair{"raw", true}}) {
        INFO(flavour);
        auto files = related_set(flavour, v_trans, 3, 300);
        files.push_back(random_bytes(5000, 3));
        MemoryFile set;
        pack_into(set, files, "w", nullptr);
        PackReader r(set, 1 << 20);  // a cache smaller than the blocks: they are read again
        for (size_t i = 0; i < files.size(); ++i)
            for (uint64_t window : {uint64_t(1) << 16, uint64_t(1) << 30}) CHECK_NOTHROW(r.test(i, {}, window));
        // One flipped byte in the last block: the members whose cells are there fail.
        const uint64_t last_member = r.members().back().offset;
        MemoryFile bad = set;
        bad.data[last_member - 40] ^= 0x10;
        PackReader rb(bad);
        int failed = 0;
        for (size_t i = 0; i < files.size(); ++i) {
            try {
                rb.test(i, {}, 1 << 16);
            } catch (const Error&) {
                ++failed;
            }
        }
        CHECK(failed >= 1);
    }
}

TEST_CASE("pack: a commit with a valid header and a bad payload is damage, a cut or zero header is an interrupted append",
          "[pack]") {
    auto files = related_set("seq2", false, 3, 40);
    MemoryFile set;
    pack_into(set, {files[0]}, "a", nullptr);
    const uint64_t committed = set.data.size();
    pack_into(set, {files[1], files[2]}, "b", nullptr, true);
    CHECK(read_pack_state(set).damaged_commit.empty());
    MemoryFile bad = set;
    bad.data[bad.data.size() - 30] ^= 1;  // inside the last commit's payload
    const PackState st = read_pack_state(bad);
    CHECK(st.members.size() == 1);
    CHECK(st.damaged_commit.find("is damaged") != std::string::npos);
    CHECK_THROWS_WITH(PackWriter::append(bad, PackOptions{}), Catch::Contains("is damaged"));
    CHECK(bad.data.size() == set.data.size());  // refused before cutting anything
    // The last commit's header zeroed: what an append leaves before it writes the header.
    MemoryFile cut = set;
    const uint64_t last = read_pack_state(set).commit_offset;
    std::fill_n(cut.data.begin() + static_cast<std::ptrdiff_t>(last), kRecordHeaderBytes, 0);
    CHECK(read_pack_state(cut).damaged_commit.empty());
    CHECK(read_pack_state(cut).committed_end == committed);
    // -f: the append continues from the commit before the damaged one.
    MemoryFile again = set;
    again.data[again.data.size() - 30] ^= 1;
    auto w = PackWriter::append(again, PackOptions{}, true);
    MemorySource src(files[1]);
    w->add(src, "b0.bin");
    w->commit();
    PackReader r(again);
    CHECK(r.members().size() == 2);
    CHECK(restore_bytes(r, 1) == files[1]);
}

TEST_CASE("pack: commits with repeated offsets and runs naming blocks outside the set are refused", "[pack]") {
    CommitRecord c;
    c.members = {100, 100};
    c.self_offset = 500;
    CHECK_THROWS_WITH(decode_commit(encode_commit(c), 0), Catch::Contains("repeated or out of order"));
    c.members = {200, 100};
    CHECK_THROWS_AS(decode_commit(encode_commit(c), 0), DataError);
    c.members = {100, 600};
    CHECK_THROWS_WITH(decode_commit(encode_commit(c), 0), Catch::Contains("after the commit"));
    c.members = {100, 200};
    CHECK(decode_commit(encode_commit(c), 0).members.size() == 2);
}
