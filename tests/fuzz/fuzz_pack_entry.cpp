#include "fuzz_pack_entry.hpp"

#include <cstdlib>

#include "base/hashing.hpp"
#include "related/pack.hpp"
#include "related/pack_records.hpp"

namespace stzfuzz {

using namespace stz;

namespace {

// Recomputes the checksums a mutation broke: the set header's, then record by record (while
// the bytes there still start like a record) the header and the payload checks.
void recompute_checksums(Bytes& b) {
    if (b.size() < kPackHeaderBytes) return;
    store_le<uint64_t>(b.data() + 16, hash64(ByteSpan(b.data(), 16)));
    for (uint64_t off = kPackHeaderBytes; b.size() - off >= kRecordHeaderBytes + kRecordTrailerBytes;) {
        uint8_t* h = b.data() + off;
        if (!std::equal(h, h + 4, kRecordMagic) || h[4] < 1 || h[4] > 4) return;
        const uint64_t len = load_le<uint64_t>(h + 5);
        if (len > b.size() - off - kRecordHeaderBytes - kRecordTrailerBytes) return;
        store_le<uint64_t>(h + 13, hash64(ByteSpan(h, 13)));
        const uint64_t payload = off + kRecordHeaderBytes;
        store_le<uint64_t>(b.data() + payload + len, hash64(ByteSpan(b.data() + payload, len)));
        off = payload + len + kRecordTrailerBytes;
    }
}

constexpr uint64_t kMaxRestore = 8ull << 20;  // members rebuilt in memory at most this large

void read_set(MemoryFile& f) {
    PackReader r(f, 16ull << 20);
    (void)pack_cell_bytes_claimed(r.members());
    for (size_t i = 0; i < r.members().size(); ++i) {
        const PackMember& pm = r.members()[i];
        if (!pm.record || pm.record->size > kMaxRestore) continue;
        try {
            r.test(i, {}, 1 << 16);  // several windows for most members
        } catch (const Error&) {
        }
        try {
            MemoryFile out;
            r.restore(i, out);
            if (out.size() != pm.record->size || hash128_of(out) != pm.record->hash) std::abort();  // restore checked it
        } catch (const Error&) {
        }
    }
}

// An append of one small member; what was committed must read back and hold it.
void append_one(const MemoryFile& f) {
    MemoryFile g = f;
    PackOptions opt;
    opt.compress.memory_budget = 64ull << 20;
    const Bytes member(300, 7);
    try {
        auto w = PackWriter::append(g, opt, true);
        if (w->has_member("fuzz.bin")) return;
        MemorySource src(member);
        w->add(src, "fuzz.bin");
        w->commit();
    } catch (const Error&) {
        return;
    }
    PackReader r(g);  // a set the writer committed must be readable
    const auto& ms = r.members();
    if (ms.empty() || !ms.back().record || ms.back().record->name != "fuzz.bin") std::abort();
    MemoryFile out;
    r.restore(ms.size() - 1, out);
    if (out.data != member) std::abort();
}

}  // namespace

void pack(const uint8_t* data, size_t size) {
    if (size > (4u << 20)) return;
    MemoryFile f;
    f.data.assign(data, data + size);
    recompute_checksums(f.data);
    try {
        read_set(f);
    } catch (const Error&) {
        return;
    }
    if (size <= (1u << 20)) append_one(f);
}

}  // namespace stzfuzz
