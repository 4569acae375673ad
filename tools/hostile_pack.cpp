#include "hostile_pack.hpp"

#include <algorithm>
#include <memory>

#include "base/hashing.hpp"
#include "related/pack.hpp"
#include "related/pack_records.hpp"
#include "synth.hpp"

namespace stzhostile {

using namespace stz;

namespace {

Bytes stz_of(const Bytes& raw) {
    MemorySource src(raw);
    MemorySink sink;
    compress_stream(src, sink, CompressOptions{});
    return sink.out;
}

MemoryFile as_file(const Bytes& b) {
    MemoryFile f;
    f.data = b;
    return f;
}

// Appends a member record for `m` and a commit listing it after the others of the set.
Bytes with_member(Bytes set, const MemberRecord& m, bool keep_others) {
    std::vector<uint64_t> members = keep_others ? committed_members(set) : std::vector<uint64_t>{};
    members.push_back(append_record(set, RecordType::Member, encode_member(m)));
    append_commit(set, members);
    return set;
}

// A set holding one cell block of `cells` cells of `cell_bytes` zero bytes (a row part) and
// one member made of `reuse` runs over all of them; the member's hash is that of its zeros.
Bytes zero_cell_set(uint64_t cell_bytes, uint64_t cells_per_block, uint32_t blocks, uint32_t reuse) {
    Bytes set = pack_set({});
    std::vector<uint64_t> block_offsets;
    const Bytes raw(cell_bytes * cells_per_block, 0);
    BlockHead bh;
    bh.signature = 0x5eed;
    bh.layout = {{cell_bytes, 0}};
    bh.n_cells = static_cast<uint32_t>(cells_per_block);
    Bytes payload = encode_block_head(bh);
    append_bytes(payload, stz_of(raw));
    for (uint32_t b = 0; b < blocks; ++b) block_offsets.push_back(append_record(set, RecordType::Block, payload));
    MemberRecord m;
    m.name = "zeros.bin";
    m.format = "raw";
    m.literal_offset = append_record(set, RecordType::Literal, stz_of({}));
    MemberGroup g;
    g.offsets = {0};
    g.layout = bh.layout;
    for (uint32_t k = 0; k < reuse; ++k)
        for (uint64_t off : block_offsets) g.runs.push_back({off, 0, bh.n_cells});
    g.n_cells = cells_per_block * blocks * reuse;
    m.size = g.n_cells * cell_bytes;
    m.cells = g.n_cells;
    m.groups.push_back(std::move(g));
    Hasher128 h;
    const Bytes zeros(1 << 20, 0);
    for (uint64_t left = m.size; left;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left, zeros.size()));
        h.update(zeros.data(), n);
        left -= n;
    }
    m.hash = h.digest();
    return with_member(std::move(set), m, false);
}

}  // namespace

Bytes small_state(uint32_t cells, uint64_t seed) {
    stzsynth::Spec s;
    s.flavour = "session9";
    s.cells = cells;
    s.seed = seed;
    MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

Bytes pack_set(const std::vector<std::pair<std::string, Bytes>>& members) {
    MemoryFile f;
    auto w = PackWriter::create(f, PackOptions{});
    std::vector<std::unique_ptr<MemorySource>> srcs;
    for (const auto& [name, bytes] : members) {
        srcs.push_back(std::make_unique<MemorySource>(bytes));
        w->add(*srcs.back(), name);
    }
    w->commit();
    return f.data;
}

uint64_t append_record(Bytes& set, RecordType type, const Bytes& payload) {
    MemoryFile f = as_file(set);
    const uint64_t at = f.size();
    RecordSink s(f, at, type);
    s.write(payload.data(), payload.size());
    s.finish();
    set = std::move(f.data);
    return at;
}

void append_commit(Bytes& set, const std::vector<uint64_t>& members) {
    CommitRecord c;
    c.members = members;
    c.self_offset = set.size();
    append_record(set, RecordType::Commit, encode_commit(c));
}

std::vector<uint64_t> committed_members(const Bytes& set) {
    MemoryFile f = as_file(set);
    return read_pack_state(f).members;
}

Bytes repeated_member_set(uint32_t times) {
    Bytes set = pack_set({{"a.bin", small_state(2000, 1)}, {"b.bin", small_state(40, 2)}});
    // The record of a.bin again with a run per cell (as a member whose cells alternate between
    // new and shared ones has): 16 bytes per cell, each decoded copy holds them all.
    MemoryFile f = as_file(set);
    RecordHead h;
    MemberRecord m = decode_member(read_record(f, committed_members(set).at(0), RecordType::Member, kMaxMemberRecord, &h), h.payload);
    for (MemberGroup& g : m.groups) {
        std::vector<PackRun> cells;
        for (const PackRun& r : g.runs)
            for (uint32_t k = 0; k < r.count; ++k) cells.push_back({r.block_offset, r.first + k, 1});
        g.runs = std::move(cells);
    }
    const uint64_t record = append_record(set, RecordType::Member, encode_member(m));
    append_commit(set, std::vector<uint64_t>(std::min<uint32_t>(times, kMaxPackMembers), record));
    return set;
}

Bytes nested_member_set() {
    Bytes set = pack_set({{"a.bin", small_state(40, 1)}});
    const uint64_t inner_at = committed_members(set).at(0);
    MemoryFile f = as_file(set);
    const RecordHead h = read_record_head(f, inner_at);
    const Bytes inner(set.begin() + static_cast<std::ptrdiff_t>(inner_at), set.begin() + static_cast<std::ptrdiff_t>(h.end()));
    RecordHead ih;
    MemberRecord outer = decode_member(read_record(f, inner_at, RecordType::Member, kMaxMemberRecord, &ih), ih.payload);
    // The outer record's name holds the inner record whole: its payload starts after the
    // record header, the name's u16 length and one byte.
    outer.name = "x" + std::string(inner.begin(), inner.end());
    const uint64_t outer_at = append_record(set, RecordType::Member, encode_member(outer));
    append_commit(set, {outer_at, outer_at + kRecordHeaderBytes + 2 + 1});
    return set;
}

Bytes damaged_last_commit_set() {
    Bytes set = pack_set({{"a.bin", small_state(40, 1)}, {"b.bin", small_state(60, 2)}, {"c.bin", small_state(80, 3)}});
    set[set.size() - kRecordTrailerBytes - 24] ^= 0x04;  // a member offset of the last commit
    return set;
}

Bytes sentinel_block_offset_set() {
    Bytes set = pack_set({{"a.bin", small_state(40, 1)}});
    MemoryFile f = as_file(set);
    RecordHead h;
    MemberRecord m = decode_member(read_record(f, committed_members(set).at(0), RecordType::Member, kMaxMemberRecord, &h), h.payload);
    m.name = "sentinel.bin";
    m.groups.at(0).runs.at(0).block_offset = UINT64_MAX;
    return with_member(std::move(set), m, false);
}

Bytes reuse_bomb_set(uint64_t block_bytes, uint32_t reuse) {
    const uint64_t cell = 64 << 10;
    return zero_cell_set(cell, std::max<uint64_t>(1, block_bytes / cell), 1, std::max<uint32_t>(reuse, 1));
}

Bytes one_byte_cells_set(uint64_t cells) {
    const uint64_t per_block = std::min<uint64_t>(cells, kMaxBlockRaw);
    return zero_cell_set(1, per_block, static_cast<uint32_t>((cells + per_block - 1) / per_block), 1);
}

}  // namespace stzhostile
