#include "pack_format.hpp"

#include "base/hashing.hpp"

#include <algorithm>

#include "sections/types.hpp"

namespace stz {

const char* record_type_name(RecordType t) {
    switch (t) {
        case RecordType::Block: return "cell block";
        case RecordType::Literal: return "literal stream";
        case RecordType::Member: return "member";
        case RecordType::Commit: return "commit";
    }
    return "unknown";
}

Hash128 hash128(ByteSpan d) {
    XXH128_hash_t h = XXH3_128bits(d.data(), d.size());
    return {h.low64, h.high64};
}

uint64_t BlockHead::raw_bytes() const {
    uint64_t per_cell = 0;
    for (const auto& l : layout) per_cell = checked_add(per_cell, l.cell_bytes, "block cell size", 0);
    return checked_mul(per_cell, n_cells, "block size", 0);
}

namespace {

void put_layout(Bytes& out, const CellLayout& l) {
    append_le<uint64_t>(out, l.cell_bytes);
    append_le<uint64_t>(out, l.elem_bytes);
}

CellLayout get_layout(SpanReader& r) {
    CellLayout l;
    const uint64_t at = r.file_offset();
    l.cell_bytes = r.u64("cell layout");
    l.elem_bytes = r.u64("cell layout");
    if (l.cell_bytes == 0 || l.cell_bytes > kMaxBlockRaw) throw DataError("bad cell size in a cell layout", at);
    if (l.elem_bytes && (l.elem_bytes > 16 || l.cell_bytes % l.elem_bytes))
        throw DataError("bad element size in a cell layout", at);
    return l;
}

// A count that must fit in what is left, each item taking at least `min_item` bytes.
uint64_t get_count(SpanReader& r, uint64_t limit, uint64_t min_item, const char* what) {
    const uint64_t at = r.file_offset();
    const uint64_t n = r.u32(what);
    if (n > limit || n * min_item > r.remaining()) throw DataError(std::string("bad ") + what, at);
    return n;
}

}  // namespace

Bytes encode_block_head(const BlockHead& b) {
    Bytes out;
    append_le<uint64_t>(out, b.signature);
    append_le<uint32_t>(out, static_cast<uint32_t>(b.layout.size()));
    for (const auto& l : b.layout) put_layout(out, l);
    append_le<uint32_t>(out, b.n_cells);
    return out;
}

BlockHead decode_block_head(SpanReader& r) {
    BlockHead b;
    b.signature = r.u64("block signature");
    const uint64_t at = r.file_offset();
    const uint64_t n = get_count(r, kMaxGroupSections, 16, "block section count");
    if (n == 0) throw DataError("cell block without sections", at);
    for (uint64_t i = 0; i < n; ++i) b.layout.push_back(get_layout(r));
    b.n_cells = r.u32("block cell count");
    if (b.n_cells == 0) throw DataError("empty cell block", at);
    uint64_t per_cell = 0;
    for (const auto& l : b.layout) per_cell += l.cell_bytes;  // each <= kMaxBlockRaw, n <= 2^16: no overflow
    if (per_cell > kMaxBlockRaw / b.n_cells) throw DataError("cell block larger than a reader accepts", at);
    return b;
}

Bytes encode_member(const MemberRecord& m) {
    Bytes out;
    out.reserve(128 + m.name.size() + m.format.size());
    append_string(out, m.name);
    append_le<uint64_t>(out, m.size);
    append_le<uint64_t>(out, m.hash.lo);
    append_le<uint64_t>(out, m.hash.hi);
    append_string(out, m.format);
    for (uint64_t v : {m.literal_offset, m.literal_bytes, m.stored_bytes, m.cells, m.cells_shared}) append_le<uint64_t>(out, v);
    append_le<uint32_t>(out, static_cast<uint32_t>(m.groups.size()));
    for (const auto& g : m.groups) {
        append_le<uint32_t>(out, static_cast<uint32_t>(g.layout.size()));
        for (size_t i = 0; i < g.layout.size(); ++i) {
            append_le<uint64_t>(out, g.offsets[i]);
            put_layout(out, g.layout[i]);
        }
        append_le<uint64_t>(out, g.n_cells);
        append_le<uint32_t>(out, static_cast<uint32_t>(g.runs.size()));
        for (const auto& r : g.runs) {
            append_le<uint64_t>(out, r.block_offset);
            append_le<uint32_t>(out, r.first);
            append_le<uint32_t>(out, r.count);
        }
    }
    return out;
}

namespace {

MemberGroup decode_group(SpanReader& r, uint64_t member_size, std::vector<std::pair<uint64_t, uint64_t>>& extents) {
    MemberGroup g;
    const uint64_t at = r.file_offset();
    const uint64_t n = get_count(r, kMaxGroupSections, 24, "group section count");
    if (n == 0) throw DataError("K/V group without sections", at);
    for (uint64_t i = 0; i < n; ++i) {
        g.offsets.push_back(r.u64("section offset"));
        g.layout.push_back(get_layout(r));
    }
    g.n_cells = r.u64("group cell count");
    if (g.n_cells == 0) throw DataError("K/V group without cells", at);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t bytes = checked_mul(g.n_cells, g.layout[i].cell_bytes, "section size", at);
        if (g.offsets[i] > member_size || bytes > member_size - g.offsets[i])
            throw DataError("K/V section outside the member", at);
        if (bytes) extents.push_back({g.offsets[i], bytes});
    }
    const uint64_t n_runs = get_count(r, UINT32_MAX, 16, "run count");
    uint64_t cells = 0;
    for (uint64_t i = 0; i < n_runs; ++i) {
        PackRun run;
        run.block_offset = r.u64("run");
        run.first = r.u32("run");
        run.count = r.u32("run");
        if (run.count == 0) throw DataError("empty cell run", r.file_offset());
        cells += run.count;  // at most 2^32 runs of < 2^32: no overflow
        g.runs.push_back(run);
    }
    if (cells != g.n_cells) throw DataError("cell runs do not add up to the group's cells", at);
    return g;
}

}  // namespace

MemberRecord decode_member(ByteSpan payload, uint64_t base) {
    SpanReader r(payload, base);
    MemberRecord m;
    m.name = r.str16("member name");
    m.size = r.u64("member size");
    m.hash.lo = r.u64("member hash");
    m.hash.hi = r.u64("member hash");
    m.format = r.str16("member format");
    m.literal_offset = r.u64("literal offset");
    m.literal_bytes = r.u64("literal size");
    m.stored_bytes = r.u64("stored size");
    m.cells = r.u64("cell count");
    m.cells_shared = r.u64("shared cell count");
    const uint64_t at = r.file_offset();
    const uint64_t n = get_count(r, UINT32_MAX, 16, "group count");
    std::vector<std::pair<uint64_t, uint64_t>> extents;
    for (uint64_t i = 0; i < n; ++i) m.groups.push_back(decode_group(r, m.size, extents));
    if (r.remaining()) throw DataError("bytes after the member record's groups", r.file_offset());
    std::sort(extents.begin(), extents.end());
    uint64_t covered = 0;
    for (size_t i = 0; i < extents.size(); ++i) {
        if (i && extents[i].first < extents[i - 1].first + extents[i - 1].second)
            throw DataError("K/V sections of the member overlap", at);
        covered += extents[i].second;
    }
    if (covered > m.size || m.literal_bytes != m.size - covered)
        throw DataError("literal size does not match the member's size and sections", at);
    return m;
}

Bytes encode_commit(const CommitRecord& c) {
    Bytes out;
    append_le<uint32_t>(out, static_cast<uint32_t>(c.members.size()));
    for (uint64_t m : c.members) append_le<uint64_t>(out, m);
    append_le<uint64_t>(out, c.self_offset);
    for (uint8_t b : kCommitMagic) out.push_back(b);
    return out;
}

CommitRecord decode_commit(ByteSpan payload, uint64_t base) {
    SpanReader r(payload, base);
    CommitRecord c;
    const uint64_t n = get_count(r, kMaxPackMembers, 8, "member count");
    // Records are appended, so the members of a set lie in increasing order before their
    // commit: a repeated or out-of-order offset is refused (a record listed N times would cost
    // N decodings and N copies of its metadata).
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t at = r.file_offset();
        const uint64_t off = r.u64("member offset");
        if (off < kPackHeaderBytes || (i && off <= c.members.back()))
            throw DataError("member offsets of the commit are repeated or out of order", at);
        c.members.push_back(off);
    }
    c.self_offset = r.u64("commit offset");
    if (!c.members.empty() && c.members.back() >= c.self_offset)
        throw DataError("a member record of the commit lies after the commit", r.file_offset() - 8);
    ByteSpan magic = r.bytes(8, "commit magic");
    if (!std::equal(magic.begin(), magic.end(), kCommitMagic)) throw DataError("bad commit magic", r.file_offset() - 8);
    if (r.remaining()) throw DataError("bytes after the commit record", r.file_offset());
    return c;
}

std::optional<std::string> normalise_member_name(const std::string& path) {
    if (path.empty() || path.size() > kMaxMemberName || path.find('\0') != std::string::npos) return std::nullopt;
    std::string out;
    size_t i = 0;
    while (i <= path.size()) {
        size_t j = path.find('/', i);
        if (j == std::string::npos) j = path.size();
        std::string part = path.substr(i, j - i);
        i = j + 1;
        if (part.empty() || part == ".") continue;  // leading '/' (made relative), "//", "./"
        if (part == "..") return std::nullopt;
        if (!out.empty()) out += '/';
        out += part;
    }
    if (out.empty()) return std::nullopt;
    return out;
}

}  // namespace stz
