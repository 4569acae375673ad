#include "pack.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "pack_records.hpp"

namespace stz {

void MemoryFile::read_at(uint64_t off, uint8_t* dst, size_t n) {
    if (off > data.size() || n > data.size() - off) throw DataError("read past the end of the input", off);
    std::copy_n(data.data() + off, n, dst);
}

void MemoryFile::write_at(uint64_t off, const uint8_t* src, size_t n) {
    if (off + n > data.size()) data.resize(off + n, 0);  // a write past the end leaves zeros between, as a file does
    std::copy_n(src, n, data.data() + off);
}

namespace {

void check_pack_header(InputSource& f) {
    uint8_t h[kPackHeaderBytes];
    if (f.size() < kPackHeaderBytes) throw DataError("truncated set header", 0);
    f.read_at(0, h, sizeof h);
    if (!std::equal(h, h + 8, kPackMagic)) throw DataError("not a statezip set (bad magic)", 0);
    if (load_le<uint64_t>(h + 16) != hash64(ByteSpan(h, 16))) throw DataError("set header checksum mismatch", 16);
    if (load_le<uint16_t>(h + 8) != kPackVersion)
        throw DataError("set format version " + std::to_string(load_le<uint16_t>(h + 8)) + " is not supported", 8);
    if (load_le<uint16_t>(h + 10) != 0 || load_le<uint32_t>(h + 12) != 0) throw DataError("unknown set header flags", 10);
}

// The commit at `off` with its checks passed, or nullopt and why not.
std::optional<CommitRecord> try_commit(InputSource& f, uint64_t off, RecordHead* head, std::string* why = nullptr) {
    try {
        RecordHead h;
        Bytes p = read_record(f, off, RecordType::Commit, kMaxMemberRecord, &h);
        CommitRecord c = decode_commit(p, h.payload);
        if (c.self_offset != off) throw DataError("the commit names another offset as its own", h.payload + p.size() - 16);
        if (head) *head = h;
        return c;
    } catch (const DataError& e) {
        if (why) *why = e.what();
        return std::nullopt;
    }
}

}  // namespace

PackState read_pack_state(InputSource& f) {
    check_pack_header(f);
    PackState st;
    const uint64_t size = f.size();
    // Fast path: the file ends with a commit (its last 24 bytes: own offset, magic, checksum).
    if (size >= kPackHeaderBytes + kRecordHeaderBytes + 24) {
        uint8_t tail[24];
        f.read_at(size - 24, tail, sizeof tail);
        RecordHead h;
        if (std::equal(tail + 8, tail + 16, kCommitMagic))
            if (auto c = try_commit(f, load_le<uint64_t>(tail), &h); c && h.end() == size) {
                st.members = std::move(c->members);
                st.commit_offset = h.offset;
                st.committed_end = size;
                return st;
            }
    }
    // Otherwise walk the records from the start; the last valid commit wins. A writer leaves
    // a record's header zero until its payload and payload check are written (and, for a
    // commit, synced), so an interrupted append ends at a record without a valid header; a
    // commit whose header is valid but whose payload is not was damaged after it was written.
    bool found = false;
    for (uint64_t off = kPackHeaderBytes; off < size;) {
        RecordHead h;
        try {
            h = read_record_head(f, off);
        } catch (const DataError&) {
            break;
        }
        if (h.type == RecordType::Commit) {
            std::string why;
            if (auto c = try_commit(f, off, nullptr, &why)) {
                st.members = std::move(c->members), st.commit_offset = off, st.committed_end = h.end(), found = true;
                st.damaged_commit.clear();
            } else {
                st.damaged_commit = "the commit record at offset " + std::to_string(off) + " is damaged (" + why + ")";
            }
        }
        off = h.end();
    }
    if (!found) {
        if (!st.damaged_commit.empty()) throw DataError(st.damaged_commit + " and no earlier commit is valid", kPackHeaderBytes);
        throw DataError("no complete commit record: not a finished statezip set", kPackHeaderBytes);
    }
    st.trailing_bytes = size - st.committed_end;
    return st;
}

std::vector<PackMember> read_pack_members(InputSource& f, const PackState& st) {
    std::vector<PackMember> out;
    out.reserve(st.members.size());  // at most kMaxPackMembers (decode_commit)
    uint64_t free_from = kPackHeaderBytes;  // where the next member record may start
    for (uint64_t off : st.members) {
        if (off < free_from) throw DataError("member records listed by the commit overlap", off);
        PackMember pm;
        pm.offset = off;
        free_from = off + kRecordHeaderBytes + kRecordTrailerBytes;
        try {
            const RecordHead h = read_record_head(f, off);
            if (h.end() > st.commit_offset) throw DataError("a member record reaches into its commit", off);
            free_from = h.end();
            if (h.type != RecordType::Member)
                throw DataError(std::string("expected a member record, found a ") + record_type_name(h.type), off);
            MemberRecord m = decode_member(read_record_payload(f, h, kMaxMemberRecord), h.payload);
            // Blocks and literal streams are written before the member records naming them.
            if (m.literal_offset < kPackHeaderBytes || m.literal_offset >= off)
                throw DataError("the member's literal stream offset " + std::to_string(m.literal_offset) + " is outside the set", off);
            for (const MemberGroup& g : m.groups)
                for (const PackRun& r : g.runs)
                    if (r.block_offset < kPackHeaderBytes || r.block_offset >= off)
                        throw DataError("a cell run names block offset " + std::to_string(r.block_offset) + ", outside the set", off);
            pm.record = std::move(m);
        } catch (const Error& e) {
            pm.error = e.what();
        }
        out.push_back(std::move(pm));
    }
    return out;
}

uint64_t pack_cell_bytes_claimed(const std::vector<PackMember>& members) {
    uint64_t total = 0;
    auto add = [&](uint64_t v) { total = v > UINT64_MAX - total ? UINT64_MAX : total + v; };
    for (const PackMember& pm : members)
        if (pm.record)
            for (const MemberGroup& g : pm.record->groups)
                for (const CellLayout& l : g.layout)
                    add(l.cell_bytes && g.n_cells > UINT64_MAX / l.cell_bytes ? UINT64_MAX : g.n_cells * l.cell_bytes);
    return total;
}

PackReader::~PackReader() = default;

PackReader::PackReader(InputSource& f, uint64_t cache_bytes)
    : f_(f), state_(read_pack_state(f)), cache_(std::make_unique<BlockCache>(cache_bytes)) {
    members_ = read_pack_members(f_, state_);
}

namespace {
const MemberRecord& usable_record(const PackMember& pm) {
    if (!pm.record) throw Error("member record at offset " + std::to_string(pm.offset) + " is damaged: " + pm.error);
    return *pm.record;
}

// The XXH3-128 and size of the bytes written to it.
class HashSink final : public OutputSink {
public:
    void write(const uint8_t* d, size_t n) override { h.update(d, n), bytes += n; }
    Hasher128 h;
    uint64_t bytes = 0;
};
}  // namespace

void PackReader::restore(size_t i, RandomFile& out, const DecompressOptions& dopt) {
    const MemberRecord& m = usable_record(members_.at(i));
    restore_member(f_, m, out, dopt, cache_.get());
    if (out.size() != m.size) throw Error("restored size differs from the member's");
    if (hash128_of(out) != m.hash) throw Error("whole-member checksum mismatch: the output is not the original");
}

void PackReader::test(size_t i, const DecompressOptions& dopt, uint64_t window_bytes) {
    const MemberRecord& m = usable_record(members_.at(i));
    HashSink sink;
    rebuild_member_in_order(f_, m, sink, dopt, *cache_, window_bytes);
    if (sink.bytes != m.size) throw Error("restored size differs from the member's");
    if (sink.h.digest() != m.hash) throw Error("whole-member checksum mismatch: the rebuilt member is not the original");
}

}  // namespace stz
