// The writer of .stzp sets (pack.hpp): members added, their new cells gathered into blocks
// shared by the members of one commit, every member checked against its input before the commit.
#include <algorithm>
#include <set>

#include "pack.hpp"
#include "pack_records.hpp"

namespace stz {

namespace {

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


// Open blocks gather cells of one layout and element types (the block is described by them).
std::string block_key(const ParsedFile& parsed, const CellGroup& g) {
    std::string k = std::to_string(g.signature);
    for (const CellPart& p : g.parts) k.append(1, '/').append(std::to_string(int(parsed.sections[p.section].type)));
    return k;
}

}  // namespace

PackWriter::PackWriter(RandomFile& f, const PackOptions& opt)
    : f_(f), opt_(opt), cache_(std::make_unique<BlockCache>(std::min<uint64_t>(opt.compress.memory_budget / 2, 256ull << 20))) {
    // Members are restored byte for byte; the content check before a commit reads blocks from
    // the cache of what was written, so a rounding of the blocks would go unnoticed there.
    if (opt.compress.lossy.active()) throw Error("a set stores its members exactly: lossy modes cannot be used with pack");
}
PackWriter::~PackWriter() = default;

std::unique_ptr<PackWriter> PackWriter::create(RandomFile& f, const PackOptions& opt) {
    std::unique_ptr<PackWriter> w(new PackWriter(f, opt));
    f.truncate(0);
    Bytes h = pack_header();
    f.write_at(0, h.data(), h.size());
    w->end_ = h.size();
    w->commit();
    return w;
}

std::unique_ptr<PackWriter> PackWriter::append(RandomFile& f, const PackOptions& opt, bool cut_damaged_commit) {
    std::unique_ptr<PackWriter> w(new PackWriter(f, opt));
    PackState st = read_pack_state(f);
    if (!st.damaged_commit.empty() && !cut_damaged_commit)
        throw Error(st.damaged_commit + ": appending would cut it and the members it lists; nothing was changed "
                    "(-f appends to the commit before it)");
    std::set<uint64_t> blocks;
    for (PackMember& pm : read_pack_members(f, st)) {
        if (!pm.record) throw Error("member record at offset " + std::to_string(pm.offset) + " is damaged: " + pm.error);
        const MemberRecord& m = *pm.record;
        w->names_[m.name] = pm.offset;
        w->whole_.emplace(WholeKey{m.size, m.hash}, pm.offset);
        for (const auto& g : m.groups)
            for (const auto& r : g.runs) blocks.insert(r.block_offset);
    }
    w->reserve_index(blocks);
    for (uint64_t b : blocks) w->index_block(b);
    w->members_ = st.members;
    if (st.trailing_bytes) f.truncate(st.committed_end);  // the rest of an interrupted append (or a damaged commit)
    w->end_ = st.committed_end;
    return w;
}

// The cell index of an existing set is its cells' hashes: counted from the block heads before
// any block is decoded, and refused when it would not fit in the memory budget (a block of
// 64 MiB may claim 64 Mi one-byte cells).
void PackWriter::reserve_index(const std::set<uint64_t>& blocks) {
    uint64_t cells = 0;
    for (uint64_t off : blocks) {
        const RecordHead h = read_record_head(f_, off);
        if (h.type != RecordType::Block) throw DataError("a member's cell run names a record that is not a cell block", off);
        uint8_t fixed[12];  // signature, n_parts: then the head's real size is known
        if (h.length < sizeof fixed) throw DataError("truncated cell block head", h.payload);
        f_.read_at(h.payload, fixed, sizeof fixed);
        const uint64_t parts = std::min<uint64_t>(load_le<uint32_t>(fixed + 8), kMaxGroupSections);
        Bytes head(static_cast<size_t>(std::min<uint64_t>(h.length, sizeof fixed + 16 * parts + 4)));
        f_.read_at(h.payload, head.data(), head.size());
        SpanReader r(head, h.payload);
        cells += decode_block_head(r).n_cells;
    }
    const uint64_t budget = opt_.compress.memory_budget / 2;
    if (cells > budget / kIndexBytesPerCell)
        throw Error("the set's " + std::to_string(cells) + " stored cells need an index of about " +
                    std::to_string(cells * kIndexBytesPerCell >> 20) + " MiB to append to, more than half the memory budget (-M)");
    cells_.reserve(static_cast<size_t>(cells));
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

// Writes an open block: its cells read from their members, part after part (rows, or
// channel runs over the block's cells), as a .stz with the preset's pipelines.
void PackWriter::flush_block(PendingBlock& b) {
    const uint64_t k = b.cells.size();
    b.head.n_cells = static_cast<uint32_t>(k);
    Bytes raw(b.head.raw_bytes()), tile;
    for (size_t i = 0; i < k;) {  // consecutive cells of one member group are read together
        const PendingCell& c0 = b.cells[i];
        const CellGroup& g = pending_[c0.member].groups[c0.group];
        size_t j = i + 1;
        while (j < k && b.cells[j].member == c0.member && b.cells[j].group == c0.group &&
               b.cells[j].cell == c0.cell + (j - i) && j - i < cells_per_tile(g))
            ++j;
        tile.resize((j - i) * g.cell_bytes);
        read_cells(*pending_[c0.member].in, g, c0.cell, j - i, tile.data());
        for (size_t c = i; c < j; ++c) {
            const uint8_t* cell = tile.data() + (c - i) * g.cell_bytes;
            uint64_t base = 0;
            for (const CellPart& p : g.parts) {
                for (uint64_t ch = 0; ch < p.channels; ++ch, cell += p.piece_bytes)
                    std::copy_n(cell, p.piece_bytes, raw.data() + base + (ch * k + c) * p.piece_bytes);
                base += k * p.cell_bytes();
            }
        }
        i = j;
    }
    ParsedFile pf;
    pf.format = "pack-block";
    SectionList sl;
    for (size_t j = 0; j < b.templates.size(); ++j) {
        const Section& s = b.templates[j];
        const CellLayout& l = b.head.layout[j];
        if (l.elem_bytes) sl.add_rows(s.name, s.kind, s.type, l.cell_bytes / l.elem_bytes, k, true);
        else sl.add_rows(s.name, s.kind, s.type, k, s.row_elems);
    }
    pf.sections = std::move(sl.sections());
    const uint64_t start = end_;
    RecordSink sink(f_, end_, RecordType::Block);
    Bytes head = encode_block_head(b.head);
    sink.write(head.data(), head.size());
    MemorySource src(raw);
    compress_parsed(src, pf, sink, opt_.compress);
    end_ = sink.finish();
    block_offsets_[b.id] = start;
    for (const PendingCell& c : b.cells) pending_[c.member].block_share += double(end_ - start) / k;
    cache_->put(start, b.head, std::move(raw));
    b.cells.clear();
}

MemberGroup PackWriter::add_group(uint32_t member, const ParsedFile& parsed, uint32_t group) {
    PendingMember& pm = pending_[member];
    const CellGroup& g = pm.groups[group];
    MemberGroup mg;
    mg.n_cells = g.n_cells;
    for (const CellPart& p : g.parts) mg.offsets.push_back(p.offset), mg.layout.push_back(layout_of(p));
    const std::vector<CellHash> hashes = hash_cells(*pm.in, g);
    const std::string key = block_key(parsed, g);
    const uint64_t cap = std::clamp<uint64_t>(std::min(opt_.block_bytes, kMaxBlockRaw) / g.cell_bytes, 1, UINT32_MAX);
    for (uint64_t c = 0; c < g.n_cells; ++c) {
        CellLoc loc;
        if (auto it = cells_.find(hashes[c]); it != cells_.end()) {
            loc = it->second;
            ++pm.result.cells_shared;
        } else {
            auto ob = open_blocks_.find(key);
            if (ob == open_blocks_.end()) {
                PendingBlock nb;
                nb.id = static_cast<uint32_t>(block_offsets_.size());
                block_offsets_.push_back(UINT64_MAX);  // set when written
                nb.head.signature = g.signature;
                nb.head.layout = mg.layout;
                for (const CellPart& p : g.parts) nb.templates.push_back(parsed.sections[p.section]);
                ob = open_blocks_.emplace(key, std::move(nb)).first;
            }
            loc = {ob->second.id, static_cast<uint32_t>(ob->second.cells.size())};
            ob->second.cells.push_back({member, group, c});
            cells_.emplace(hashes[c], loc);
            if (ob->second.cells.size() == cap) flush_block(ob->second), open_blocks_.erase(ob);
        }
        if (!mg.runs.empty() && mg.runs.back().block_offset == loc.block && mg.runs.back().first + mg.runs.back().count == loc.index)
            ++mg.runs.back().count;
        else mg.runs.push_back({loc.block, loc.index, 1});  // block id until commit()
    }
    pm.result.cells += g.n_cells;
    return mg;
}

// The literal stream: every section outside the member's groups, in file order, kinds kept.
void PackWriter::write_literal(PendingMember& pm, const ParsedFile& parsed, const std::vector<CellGroup>& groups) {
    std::set<uint32_t> in_groups;
    for (const CellGroup& g : groups)
        for (const CellPart& p : g.parts) in_groups.insert(p.section);
    SpliceSource lit(*pm.in);
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
    pm.record.literal_bytes = lit.size();
    pm.record.literal_offset = end_;
    const uint64_t start = end_;
    RecordSink ls(f_, end_, RecordType::Literal);
    compress_parsed(lit, lp, ls, opt_.compress);
    end_ = ls.finish();
    pm.result.stored += end_ - start;
}

PackAddResult PackWriter::add(InputSource& in, const std::string& name) {
    if (names_.count(name)) throw Error(name + ": a member of that name is already in the set");
    if (pending_.size() >= kMaxPendingMembers) settle();
    const uint32_t mi = static_cast<uint32_t>(pending_.size());
    const Hash128 whole = hash128_of(in);
    bool resolved = false;
    if (auto same = same_content(in.size(), whole, resolved)) {  // a copy: only its own record is new
        pending_.push_back({});
        PendingMember& pm = pending_.back();
        pm.in = &in;
        pm.record = std::move(*same);
        pm.record.name = name;
        pm.record.cells_shared = pm.record.cells;
        pm.resolved = resolved;
        pm.result = {in.size(), 0, pm.record.cells, pm.record.cells, pm.record.format};
        names_[name] = 0;
        return pm.result;
    }
    whole_.emplace(WholeKey{in.size(), whole}, ~uint64_t(mi));
    pending_.push_back({});
    pending_[mi].in = &in;
    ParsedFile parsed = parse_state_file(in, opt_.compress.hints);
    pending_[mi].groups = packable_groups(parsed);
    MemberRecord& m = pending_[mi].record;
    m.name = name;
    m.size = in.size();
    m.format = parsed.format;
    pending_[mi].result.format = parsed.format;
    pending_[mi].result.size = m.size;
    for (uint32_t gi = 0; gi < pending_[mi].groups.size(); ++gi) {
        MemberGroup mg = add_group(mi, parsed, gi);
        pending_[mi].record.groups.push_back(std::move(mg));
    }
    write_literal(pending_[mi], parsed, pending_[mi].groups);
    pending_[mi].record.hash = whole;
    pending_[mi].record.cells = pending_[mi].result.cells;
    pending_[mi].record.cells_shared = pending_[mi].result.cells_shared;
    names_[name] = 0;  // its record offset once written
    return pending_[mi].result;
}

void PackWriter::settle() {
    for (auto& [key, b] : open_blocks_) flush_block(b);
    open_blocks_.clear();
    std::vector<PackAddResult>& results = settled_;
    const size_t first_new = members_.size();
    for (PendingMember& pm : pending_) {
        MemberRecord& m = pm.record;
        if (!pm.resolved)
            for (MemberGroup& g : m.groups)
                for (PackRun& r : g.runs) r.block_offset = block_offsets_.at(r.block_offset);
        // The member states its own stored bytes: its literal stream, its share of the blocks
        // that hold the cells it brought, and its record.
        m.stored_bytes = pm.result.stored + static_cast<uint64_t>(pm.block_share + 0.5);
        Bytes rec = encode_member(m);
        m.stored_bytes += kRecordHeaderBytes + kRecordTrailerBytes + rec.size();
        rec = encode_member(m);
        if (rec.size() > kMaxMemberRecord) throw Error(m.name + ": too many K/V runs for one member record");
        RecordSink ms(f_, end_, RecordType::Member);
        ms.write(rec.data(), rec.size());
        members_.push_back(end_);
        names_[m.name] = end_;
        if (auto w = whole_.find(WholeKey{m.size, m.hash}); w != whole_.end() && w->second >= (~uint64_t(0) >> 1))
            w->second = end_;  // was pending: now its record offset
        end_ = ms.finish();
        pm.result.stored = m.stored_bytes;
        results.push_back(pm.result);
    }
    // Content check: each member rebuilt from the set must be its input, byte for byte.
    for (size_t i = 0; i < pending_.size(); ++i) {
        RecordHead h;
        MemberRecord m =
            decode_member(read_record(f_, members_[first_new + i], RecordType::Member, kMaxMemberRecord, &h), h.payload);
        CompareFile cmp(*pending_[i].in);
        restore_member(f_, m, cmp, decode_options(opt_.compress), cache_.get());
        // The record holds the hash of the input as add() read it, its cells were read when
        // their blocks were written, and the comparison reads it once more: an input changed
        // in between hashes differently now (and the reader would refuse the member).
        const bool same_bytes = !cmp.mismatch && cmp.written == pending_[i].in->size();
        if (hash128_of(*pending_[i].in) != m.hash)
            throw Error(m.name + ": input changed while it was being packed; nothing was committed");
        if (!same_bytes)
            throw Error(m.name + ": the member rebuilt from the set differs from the input (two different cells with one "
                                 "hash?); nothing was committed");
    }
    pending_.clear();
}

std::optional<MemberRecord> PackWriter::same_content(uint64_t size, const Hash128& h, bool& resolved) {
    auto it = whole_.find(WholeKey{size, h});
    if (it == whole_.end()) return std::nullopt;
    if (it->second >= (~uint64_t(0) >> 1)) {  // pending: its runs still name block ids
        resolved = false;
        return pending_.at(~it->second).record;
    }
    resolved = true;
    RecordHead rh;
    return decode_member(read_record(f_, it->second, RecordType::Member, kMaxMemberRecord, &rh), rh.payload);
}

std::vector<PackAddResult> PackWriter::commit() {
    settle();
    std::vector<PackAddResult> results = std::move(settled_);
    settled_.clear();
    if (members_.size() > kMaxPackMembers) throw Error("a set holds at most " + std::to_string(kMaxPackMembers) + " members");
    CommitRecord c;
    c.members = members_;
    c.self_offset = end_;
    Bytes p = encode_commit(c);
    f_.sync();  // the records first, then the commit that makes them visible
    RecordSink s(f_, end_, RecordType::Commit);
    s.write(p.data(), p.size());
    end_ = s.finish(true);
    f_.sync();
    return results;
}

}  // namespace stz
