#include "pack.hpp"

#include <xxhash.h>

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
    if (off + n > data.size()) data.resize(off + n);
    std::copy_n(src, n, data.data() + off);
}

namespace {

Bytes pack_header() {
    Bytes h(kPackMagic, kPackMagic + 8);
    append_le<uint16_t>(h, kPackVersion);
    append_le<uint16_t>(h, 0);
    append_le<uint32_t>(h, 0);
    append_le<uint64_t>(h, hash64(h));
    return h;
}

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

// Reads all of `in` once: its XXH3-128.
Hash128 whole_hash(InputSource& in) {
    XXH3_state_t* st = XXH3_createState();
    if (!st) throw std::bad_alloc();
    XXH3_128bits_reset(st);
    Bytes buf(std::min<uint64_t>(in.size(), 4u << 20));
    try {
        for (uint64_t off = 0; off < in.size();) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), in.size() - off));
            in.read_at(off, buf.data(), n);
            XXH3_128bits_update(st, buf.data(), n);
            off += n;
        }
    } catch (...) {
        XXH3_freeState(st);
        throw;
    }
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    return {h.low64, h.high64};
}

// A view of a file without its K/V sections: the literal stream's input.
class SpliceSource final : public InputSource {
public:
    void add(uint64_t file_offset, uint64_t n) {
        if (!n) return;
        spans_.push_back({size_, file_offset, n});
        size_ += n;
    }
    explicit SpliceSource(InputSource& in) : in_(in) {}
    uint64_t size() const override { return size_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        if (off > size_ || n > size_ - off) throw DataError("read past the end of the input", off);
        auto it = std::upper_bound(spans_.begin(), spans_.end(), off, [](uint64_t o, const Span& s) { return o < s.at; });
        for (--it; n; ++it) {
            const uint64_t skip = off - it->at, take = std::min<uint64_t>(n, it->n - skip);
            in_.read_at(it->file + skip, dst, static_cast<size_t>(take));
            dst += take, off += take, n -= static_cast<size_t>(take);
        }
    }

private:
    struct Span {
        uint64_t at, file, n;
    };
    InputSource& in_;
    std::vector<Span> spans_;
    uint64_t size_ = 0;
};

// Verification target of a member just packed: every byte "written" must equal the input's.
class CompareFile final : public RandomFile {
public:
    explicit CompareFile(InputSource& in) : in_(in) {}
    uint64_t size() const override { return in_.size(); }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override { in_.read_at(off, dst, n); }
    void write_at(uint64_t off, const uint8_t* src, size_t n) override {
        buf_.resize(n);
        in_.read_at(off, buf_.data(), n);
        if (!std::equal(src, src + n, buf_.begin())) mismatch = true;
        written += n;
    }
    void truncate(uint64_t size) override {
        if (size != in_.size()) mismatch = true;
    }
    bool mismatch = false;
    uint64_t written = 0;

private:
    InputSource& in_;
    Bytes buf_;
};

// Groups whose cells can be stored as blocks: every transposed part exactly its cells wide
// (2023 blobs keep V for the whole context: those stay in the literal stream), a cell small
// enough for a block.
std::vector<CellGroup> packable_groups(const ParsedFile& parsed) {
    std::vector<CellGroup> out;
    for (CellGroup& g : find_cell_groups(parsed)) {
        bool ok = g.cell_bytes > 0 && g.cell_bytes <= kMaxBlockRaw && g.parts.size() <= kMaxGroupSections;
        for (const CellPart& p : g.parts)
            ok = ok && (!p.transposed || (p.row_bytes == g.n_cells * p.piece_bytes && p.piece_bytes <= 16));
        if (ok) out.push_back(std::move(g));
    }
    return out;
}

CellLayout layout_of(const CellPart& p) { return {p.cell_bytes(), p.transposed ? p.piece_bytes : 0}; }

// The cells of a decoded block described as a group over the block's bytes, so that the cell
// core hashes them exactly as it hashed them in their member.
CellGroup block_group(const BlockHead& bh) {
    CellGroup g;
    g.n_cells = bh.n_cells;
    g.signature = bh.signature;
    uint64_t base = 0;
    for (const CellLayout& l : bh.layout) {
        CellPart p;
        p.offset = base;
        p.transposed = l.elem_bytes != 0;
        p.piece_bytes = p.transposed ? l.elem_bytes : l.cell_bytes;
        p.channels = p.transposed ? l.cell_bytes / l.elem_bytes : 1;
        p.row_bytes = p.transposed ? bh.n_cells * l.elem_bytes : l.cell_bytes;
        g.parts.push_back(p);
        g.cell_bytes += l.cell_bytes;
        base += bh.n_cells * l.cell_bytes;
    }
    return g;
}

DecompressOptions decode_options(const CompressOptions& c) {
    DecompressOptions d;
    d.threads = c.threads;
    d.memory_budget = c.memory_budget;
    return d;
}

}  // namespace

PackWriter::PackWriter(RandomFile& f, const PackOptions& opt)
    : f_(f), opt_(opt), cache_(std::make_unique<BlockCache>(std::min<uint64_t>(opt.compress.memory_budget / 2, 256ull << 20))) {}
PackWriter::~PackWriter() = default;

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

std::unique_ptr<PackWriter> PackWriter::create(RandomFile& f, const PackOptions& opt) {
    std::unique_ptr<PackWriter> w(new PackWriter(f, opt));
    f.truncate(0);
    Bytes h = pack_header();
    f.write_at(0, h.data(), h.size());
    w->end_ = h.size();
    w->commit();
    return w;
}

std::unique_ptr<PackWriter> PackWriter::append(RandomFile& f, const PackOptions& opt) {
    std::unique_ptr<PackWriter> w(new PackWriter(f, opt));
    PackState st = read_pack_state(f);
    std::set<uint64_t> blocks;
    for (uint64_t off : st.members) {
        RecordHead h;
        MemberRecord m = decode_member(read_record(f, off, RecordType::Member, kMaxMemberRecord, &h), h.payload);
        w->names_[m.name] = off;
        for (const auto& g : m.groups)
            for (const auto& r : g.runs) blocks.insert(r.block_offset);
    }
    for (uint64_t b : blocks) w->index_block(b);
    w->members_ = st.members;
    if (st.trailing_bytes) f.truncate(st.committed_end);  // the rest of an interrupted append
    w->end_ = st.committed_end;
    return w;
}

void PackWriter::index_block(uint64_t offset) {
    BlockHead bh;
    Bytes raw = load_block(f_, offset, bh, decode_options(opt_.compress));
    MemorySource src(raw);
    const CellGroup g = block_group(bh);
    const std::vector<CellHash> hashes = hash_cells(src, g);
    const uint32_t id = static_cast<uint32_t>(block_offsets_.size());
    block_offsets_.push_back(offset);
    for (uint32_t i = 0; i < hashes.size(); ++i) cells_.emplace(hashes[i], CellLoc{id, i});
}

// Writes the listed cells of `g` (ascending) as one block record; returns its id.
uint32_t PackWriter::flush_block(InputSource& in, const CellGroup& g, const std::vector<uint64_t>& cells, uint64_t& stored) {
    BlockHead bh;
    bh.signature = g.signature;
    bh.n_cells = static_cast<uint32_t>(cells.size());
    for (const CellPart& p : g.parts) bh.layout.push_back(layout_of(p));
    const uint64_t k = cells.size();
    Bytes raw(bh.raw_bytes()), tile;
    std::vector<uint64_t> base;  // offset of each part in the block
    for (uint64_t b = 0; const CellPart& p : g.parts) base.push_back(b), b += k * p.cell_bytes();
    for (size_t i = 0; i < k;) {  // consecutive cells are read together
        size_t j = i + 1;
        while (j < k && cells[j] == cells[j - 1] + 1 && j - i < cells_per_tile(g)) ++j;
        tile.resize((j - i) * g.cell_bytes);
        read_cells(in, g, cells[i], j - i, tile.data());
        for (size_t c = i; c < j; ++c) {
            const uint8_t* cell = tile.data() + (c - i) * g.cell_bytes;
            for (size_t pi = 0; pi < g.parts.size(); ++pi) {
                const CellPart& p = g.parts[pi];
                for (uint64_t ch = 0; ch < p.channels; ++ch, cell += p.piece_bytes)
                    std::copy_n(cell, p.piece_bytes, raw.data() + base[pi] + (ch * k + c) * p.piece_bytes);
            }
        }
        i = j;
    }
    // The block as a small state file of its own: the preset picks each part's pipelines.
    ParsedFile pf;
    pf.format = "pack-block";
    SectionList sl;
    for (const CellPart& p : g.parts) {
        const Section& s = parsed_->sections[p.section];
        if (p.transposed) sl.add_rows(s.name, s.kind, s.type, p.channels, k, true);
        else sl.add_rows(s.name, s.kind, s.type, k, s.row_elems);
    }
    pf.sections = std::move(sl.sections());
    RecordSink sink(f_, end_, RecordType::Block);
    Bytes head = encode_block_head(bh);
    sink.write(head.data(), head.size());
    MemorySource src(raw);
    compress_parsed(src, pf, sink, opt_.compress);
    const uint64_t start = end_;
    end_ = sink.finish();
    stored += end_ - start;
    block_offsets_.push_back(start);
    cache_->put(start, bh, std::move(raw));
    return static_cast<uint32_t>(block_offsets_.size() - 1);
}

MemberGroup PackWriter::add_group(InputSource& in, const CellGroup& g, PackAddResult& res, uint64_t& stored) {
    MemberGroup mg;
    mg.n_cells = g.n_cells;
    for (const CellPart& p : g.parts) mg.offsets.push_back(p.offset), mg.layout.push_back(layout_of(p));
    const std::vector<CellHash> hashes = hash_cells(in, g);
    const uint64_t cap = std::clamp<uint64_t>(std::min(opt_.block_bytes, kMaxBlockRaw) / g.cell_bytes, 1, UINT32_MAX);
    std::vector<uint64_t> pending;
    std::vector<std::pair<uint32_t, PackRun>> runs;  // block id, run (offset filled at the end)
    for (uint64_t c = 0; c < g.n_cells; ++c) {
        CellLoc loc;
        if (auto it = cells_.find(hashes[c]); !no_dedup_ && it != cells_.end()) {
            loc = it->second;
            ++res.cells_shared;
        } else {
            loc = {static_cast<uint32_t>(block_offsets_.size()), static_cast<uint32_t>(pending.size())};
            pending.push_back(c);
            if (!no_dedup_) added_.push_back(cells_.emplace(hashes[c], loc).first->first);
        }
        if (!runs.empty() && runs.back().first == loc.block && runs.back().second.first + runs.back().second.count == loc.index)
            ++runs.back().second.count;
        else runs.push_back({loc.block, {0, loc.index, 1}});
        if (pending.size() == cap) flush_block(in, g, pending, stored), pending.clear();
    }
    if (!pending.empty()) flush_block(in, g, pending, stored);
    for (auto& [id, r] : runs) r.block_offset = block_offsets_[id], mg.runs.push_back(r);
    res.cells += g.n_cells;
    return mg;
}

PackAddResult PackWriter::add(InputSource& in, const std::string& name) {
    if (names_.count(name)) throw Error(name + ": a member of that name is already in the set");
    const uint64_t start = end_;
    const size_t blocks_before = block_offsets_.size();
    added_.clear();
    PackAddResult res = add_member(in, name);
    // Content check: the member rebuilt from the set must be the input, byte for byte (a
    // hash match is not trusted alone). Should it differ, the member is stored again
    // without sharing any cell.
    CompareFile cmp(in);
    RecordHead h;
    MemberRecord m = decode_member(read_record(f_, members_.back(), RecordType::Member, kMaxMemberRecord, &h), h.payload);
    restore_member(f_, m, cmp, decode_options(opt_.compress), cache_.get());
    if (!cmp.mismatch && cmp.written == in.size()) return res;
    members_.pop_back();
    names_.erase(name);
    for (const CellHash& k : added_) cells_.erase(k);
    block_offsets_.resize(blocks_before);
    cache_->clear();  // the offsets of the blocks cut away will be reused
    f_.truncate(start);
    end_ = start;
    no_dedup_ = true;
    try {
        res = add_member(in, name);
    } catch (...) {
        no_dedup_ = false;
        throw;
    }
    no_dedup_ = false;
    return res;
}

PackAddResult PackWriter::add_member(InputSource& in, const std::string& name) {
    const uint64_t start = end_;
    PackAddResult res;
    ParsedFile parsed = parse_state_file(in, opt_.compress.hints);
    parsed_ = &parsed;
    MemberRecord m;
    m.name = name;
    m.size = in.size();
    m.format = parsed.format;
    res.format = parsed.format;
    res.size = m.size;
    uint64_t stored = 0;
    std::set<uint32_t> in_groups;
    for (const CellGroup& g : packable_groups(parsed)) {
        m.groups.push_back(add_group(in, g, res, stored));
        for (const CellPart& p : g.parts) in_groups.insert(p.section);
    }
    // The literal stream: every other section, in file order, with its kind kept.
    SpliceSource lit(in);
    ParsedFile lp = parsed;
    lp.sections.clear();
    SectionList sl;
    for (uint32_t i = 0; i < parsed.sections.size(); ++i) {
        if (in_groups.count(i)) continue;
        const Section& s = parsed.sections[i];
        lit.add(s.offset, s.size);
        Section c = s;
        c.offset = sl.cursor();
        sl.add(s.name, s.kind, s.size, s.type) = c;
    }
    lp.sections = std::move(sl.sections());
    m.literal_bytes = lit.size();
    RecordSink ls(f_, end_, RecordType::Literal);
    m.literal_offset = end_;
    compress_parsed(lit, lp, ls, opt_.compress);
    end_ = ls.finish();
    parsed_ = nullptr;
    m.hash = whole_hash(in);
    m.cells = res.cells;
    m.cells_shared = res.cells_shared;
    // The member record states its own stored bytes: all it added, itself included.
    m.stored_bytes = end_ - start;
    Bytes rec = encode_member(m);
    m.stored_bytes += kRecordHeaderBytes + kRecordTrailerBytes + rec.size();
    rec = encode_member(m);
    if (rec.size() > kMaxMemberRecord) throw Error(name + ": too many K/V runs for one member record");
    RecordSink ms(f_, end_, RecordType::Member);
    ms.write(rec.data(), rec.size());
    members_.push_back(end_);
    names_[name] = end_;
    end_ = ms.finish();
    res.stored = m.stored_bytes;
    return res;
}

void PackWriter::commit() {
    if (members_.size() > kMaxPackMembers) throw Error("a set holds at most " + std::to_string(kMaxPackMembers) + " members");
    CommitRecord c;
    c.members = members_;
    c.self_offset = end_;
    Bytes p = encode_commit(c);
    f_.sync();  // the records first, then the commit that makes them visible
    RecordSink s(f_, end_, RecordType::Commit);
    s.write(p.data(), p.size());
    end_ = s.finish();
    f_.sync();
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
    if (whole_hash(out) != m.hash) throw Error("whole-member checksum mismatch: the output is not the original");
}

}  // namespace stz
