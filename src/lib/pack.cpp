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

std::optional<CommitRecord> try_commit(InputSource& f, uint64_t off, RecordHead* head) {
    try {
        RecordHead h;
        Bytes p = read_record(f, off, RecordType::Commit, kMaxMemberRecord, &h);
        CommitRecord c = decode_commit(p, h.payload);
        if (c.self_offset != off) return std::nullopt;
        if (head) *head = h;
        return c;
    } catch (const DataError&) {
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
                st.committed_end = size;
                return st;
            }
    }
    // An interrupted append: walk the records from the start; the last valid commit wins.
    bool found = false;
    for (uint64_t off = kPackHeaderBytes; off < size;) {
        RecordHead h;
        try {
            h = read_record_head(f, off);
        } catch (const DataError&) {
            break;
        }
        if (h.type == RecordType::Commit)
            if (auto c = try_commit(f, off, nullptr)) st.members = std::move(c->members), st.committed_end = h.end(), found = true;
        off = h.end();
    }
    if (!found) throw DataError("no complete commit record: not a finished statezip set", kPackHeaderBytes);
    st.trailing_bytes = size - st.committed_end;
    return st;
}

PackReader::~PackReader() = default;

PackReader::PackReader(InputSource& f, uint64_t cache_bytes)
    : f_(f), state_(read_pack_state(f)), cache_(std::make_unique<BlockCache>(cache_bytes)) {
    for (uint64_t off : state_.members) {
        PackMember pm;
        pm.offset = off;
        try {
            RecordHead h;
            pm.record = decode_member(read_record(f_, off, RecordType::Member, kMaxMemberRecord, &h), h.payload);
        } catch (const Error& e) {
            pm.error = e.what();
        }
        members_.push_back(std::move(pm));
    }
}

void PackReader::restore(size_t i, RandomFile& out, const DecompressOptions& dopt) {
    const PackMember& pm = members_.at(i);
    if (!pm.record) throw Error("member record at offset " + std::to_string(pm.offset) + " is damaged: " + pm.error);
    const MemberRecord& m = *pm.record;
    restore_member(f_, m, out, dopt, cache_.get());
    if (out.size() != m.size) throw Error("restored size differs from the member's");
    if (hash128_of(out) != m.hash) throw Error("whole-member checksum mismatch: the output is not the original");
}

}  // namespace stz
