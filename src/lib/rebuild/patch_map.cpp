#include "patch_map.hpp"

#include "codecs/varint.hpp"
#include "sections/types.hpp"

namespace stz {

namespace {

uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
int64_t unzigzag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

// The reference-group offset under which g's runs equal prev's (layers matched alike), if any.
std::optional<int64_t> same_runs(const PatchGroup& g, const PatchGroup& prev) {
    if (g.n_cells != prev.n_cells || g.runs.size() != prev.runs.size()) return std::nullopt;
    std::optional<int64_t> delta;
    for (size_t i = 0; i < g.runs.size(); ++i) {
        const PatchRun &a = g.runs[i], &b = prev.runs[i];
        if (a.count != b.count || bool(a.ref_group) != bool(b.ref_group)) return std::nullopt;
        if (!a.ref_group) continue;
        int64_t d = int64_t(*a.ref_group) - int64_t(*b.ref_group);
        if (a.ref_first != b.ref_first || (delta && *delta != d)) return std::nullopt;
        delta = d;
    }
    return delta.value_or(0);
}

// Runs: 0 + zigzag(offset) = the previous group's runs with every reference group shifted by
// offset; else count + 1 runs of {length, reference group + 1 or 0, zigzag(start - expected)}
// where expected is where the previous matched run of the group ended.
void encode_runs(Bytes& out, const PatchGroup& g, const PatchGroup* prev) {
    if (prev)
        if (auto d = same_runs(g, *prev)) {
            put_varint(out, 0);
            put_varint(out, zigzag(*d));
            return;
        }
    put_varint(out, g.runs.size() + 1);
    uint64_t expected = 0;
    for (const auto& r : g.runs) {
        put_varint(out, r.count);
        put_varint(out, r.ref_group ? uint64_t(*r.ref_group) + 1 : 0);
        if (!r.ref_group) continue;
        put_varint(out, zigzag(int64_t(r.ref_first - expected)));
        expected = r.ref_first + r.count;
    }
}

// {meta offset, REF offset, prefix, tail, group, run count, runs {count, first + 1 or 0,
// [zigzag(stride)]}}.
void encode_token_model(Bytes& out, const PatchTokenModel& t) {
    put_varint(out, t.meta_offset);
    put_varint(out, t.ref_offset);
    put_varint(out, t.prefix);
    put_varint(out, t.tail);
    put_varint(out, t.group);
    put_varint(out, t.cells.size());
    for (const TokenCellRun& r : t.cells) {
        put_varint(out, r.count);
        put_varint(out, r.first == kNoTokenCell ? 0 : r.first + 1);
        if (r.first != kNoTokenCell) put_varint(out, zigzag(r.stride));
    }
}

}  // namespace

Bytes encode_patch_map(const PatchMap& m) {
    Bytes out;
    out.push_back(m.tokens ? kPatchMapVersionTokens : kPatchMapVersion);
    put_varint(out, m.original_size);
    append_le<uint64_t>(out, m.original_xxh128.lo);
    append_le<uint64_t>(out, m.original_xxh128.hi);
    put_varint(out, m.meta_raw);
    put_varint(out, m.ref_groups.size());
    for (const auto& g : m.ref_groups) {
        put_varint(out, g.n_cells);
        put_varint(out, g.parts.size());
        for (const auto& p : g.parts) {
            put_varint(out, p.offset);
            put_varint(out, p.row_bytes);
        }
    }
    put_varint(out, m.groups.size());
    for (const auto& g : m.groups) {
        put_varint(out, g.n_cells);
        put_varint(out, g.parts.size());
        for (const auto& p : g.parts) {
            put_varint(out, p.channels);
            put_varint(out, p.piece_bytes);
            out.push_back(uint8_t((p.transposed ? 1 : 0) | (p.in_meta ? 2 : 0)));
            put_varint(out, p.row_tail);
        }
        encode_runs(out, g, &g == &m.groups.front() ? nullptr : &g - 1);
    }
    put_varint(out, m.regions.size());
    for (const auto& r : m.regions) {
        out.push_back(static_cast<uint8_t>(r.kind));
        if (r.kind == RegionKind::Part) {
            put_varint(out, r.group);
            put_varint(out, r.part);
        } else {
            put_varint(out, r.length);
        }
        if (r.kind == RegionKind::Tokens) {
            put_varint(out, r.ref_offset);
            put_varint(out, r.shared);
        }
    }
    if (m.tokens) encode_token_model(out, *m.tokens);
    return out;
}

namespace {

class MapReader {
public:
    MapReader(ByteSpan d, uint64_t base) : d_(d), base_(base) {}
    uint64_t v(const char* what) {
        size_t at = pos_;
        try {
            return get_varint(d_, pos_, "patch map");
        } catch (const DataError&) {
            throw;
        } catch (const Error&) {
            throw DataError(std::string("patch map: bad ") + what, base_ + at);
        }
    }
    // A count of items of at least one byte each: never more than the bytes left.
    uint64_t count(const char* what) {
        uint64_t n = v(what);
        if (n > d_.size() - pos_) throw DataError(std::string("patch map: ") + what + " larger than the map", base_ + pos_);
        return n;
    }
    uint8_t u8(const char* what) {
        if (pos_ >= d_.size()) throw DataError(std::string("patch map: truncated ") + what, base_ + pos_);
        return d_[pos_++];
    }
    uint64_t u64(const char* what) {
        if (d_.size() - pos_ < 8) throw DataError(std::string("patch map: truncated ") + what, base_ + pos_);
        uint64_t x = load_le<uint64_t>(d_.data() + pos_);
        pos_ += 8;
        return x;
    }
    uint64_t at() const { return base_ + pos_; }
    bool done() const { return pos_ == d_.size(); }
    uint64_t left() const { return d_.size() - pos_; }

private:
    ByteSpan d_;
    uint64_t base_;
    size_t pos_ = 0;
};

uint64_t part_bytes(const PatchGroup& g, const PatchPart& p, uint64_t at) {
    uint64_t row = checked_add(checked_mul(g.n_cells, p.piece_bytes, "patch part", at), p.row_tail, "patch part", at);
    return checked_mul(row, p.channels, "patch part", at);
}

void read_group(MapReader& r, PatchMap& m, uint64_t& total_runs) {
    PatchGroup g;
    g.n_cells = r.v("cell count");
    uint64_t n_parts = r.count("part count");
    if (n_parts == 0) throw DataError("patch map: group without parts", r.at());
    for (uint64_t i = 0; i < n_parts; ++i) {
        PatchPart p;
        p.channels = r.v("channels");
        p.piece_bytes = r.v("piece size");
        uint8_t t = r.u8("part flags");
        p.row_tail = r.v("row tail");
        if (t > 3 || p.channels == 0 || p.piece_bytes == 0 || (!(t & 1) && (p.channels != 1 || p.row_tail)))
            throw DataError("patch map: bad part layout", r.at());
        p.transposed = t & 1;
        p.in_meta = t & 2;
        part_bytes(g, p, r.at());
        g.parts.push_back(p);
    }
    uint64_t n_runs = r.v("run count"), covered = 0;
    const bool repeat = n_runs == 0;  // the previous group's runs, reference groups shifted
    if (repeat) {
        if (m.groups.empty() || m.groups.back().n_cells != g.n_cells) throw DataError("patch map: nothing to repeat", r.at());
        n_runs = m.groups.back().runs.size();
    } else if (--n_runs > r.left()) {
        throw DataError("patch map: run count larger than the map", r.at());
    }
    // Repeated groups multiply runs at 2 bytes a group: the runs held (each one covers at
    // least one cell of the original, a real one a whole row of a layer) may take no more
    // memory than the original they rebuild, plus 64 MiB, checked before they are copied.
    const uint64_t room = m.original_size > UINT64_MAX - kMaxPatchMetaBytes ? UINT64_MAX : m.original_size + kMaxPatchMetaBytes;
    const uint64_t max_runs = std::min<uint64_t>(m.original_size, room / sizeof(PatchRun));
    if (n_runs > max_runs - std::min(max_runs, total_runs))
        throw DataError("patch map: more runs than the original can hold", r.at());
    total_runs += n_runs;
    std::vector<PatchRun> copied;
    int64_t shift = 0;
    if (repeat) {
        copied = m.groups.back().runs;
        shift = unzigzag(r.v("run shift"));
    }
    uint64_t expected = 0;
    for (uint64_t i = 0; i < n_runs; ++i) {
        PatchRun run;
        uint64_t ref = 0;
        if (!copied.empty()) {
            run.count = copied[i].count;
            ref = copied[i].ref_group ? uint64_t(int64_t(*copied[i].ref_group) + shift) + 1 : 0;
            run.ref_first = copied[i].ref_first;
        } else {
            run.count = r.v("run length");
            ref = r.v("run reference");
        }
        if (ref) {
            if (ref > m.ref_groups.size()) throw DataError("patch map: run names a missing reference group", r.at());
            run.ref_group = static_cast<uint32_t>(ref - 1);
            if (copied.empty()) run.ref_first = expected + uint64_t(unzigzag(r.v("run start")));
            expected = run.ref_first + run.count;
            const PatchRefGroup& rg = m.ref_groups[ref - 1];
            if (rg.parts.size() != g.parts.size() || run.ref_first > rg.n_cells || run.count > rg.n_cells - run.ref_first)
                throw DataError("patch map: run outside its reference group", r.at());
        }
        if (run.count == 0 || run.count > g.n_cells - covered) throw DataError("patch map: bad run length", r.at());
        covered += run.count;
        g.runs.push_back(run);
    }
    if (covered != g.n_cells) throw DataError("patch map: runs do not cover the group", r.at());
    m.groups.push_back(std::move(g));
}

// A token model (encode_token_model): positions and cells are checked against the map here,
// REF offsets when its keys are read (token_model.cpp).
PatchTokenModel read_token_model(MapReader& r, const PatchMap& m) {
    PatchTokenModel t;
    t.meta_offset = r.v("token meta offset");
    t.ref_offset = r.v("token offset");
    t.prefix = r.v("token prefix");
    t.tail = r.v("token tail");
    const uint64_t group = r.v("token group");
    if (group >= m.groups.size() || t.meta_offset > m.meta_raw || t.prefix > kMaxPatchMetaBytes / 4 ||
        t.tail > kMaxPatchMetaBytes / 4)
        throw DataError("patch map: bad token model", r.at());
    t.group = static_cast<uint32_t>(group);
    const uint64_t n_cells = m.groups[group].n_cells;
    uint64_t n_runs = r.count("token run count"), covered = 0;
    for (uint64_t i = 0; i < n_runs; ++i) {
        TokenCellRun run;
        run.count = r.v("token run length");
        uint64_t first = r.v("token run cell");
        if (run.count == 0 || run.count > t.prefix + t.tail - covered) throw DataError("patch map: bad token run", r.at());
        if (first) {
            run.first = first - 1;
            run.stride = unzigzag(r.v("token run stride"));
            // Every cell of the run inside the group: the first and the last (runs are linear).
            const uint64_t steps = run.count - 1, step = run.stride < 0 ? 0 - uint64_t(run.stride) : uint64_t(run.stride);
            const uint64_t room = run.stride < 0 ? run.first : (run.first < n_cells ? n_cells - 1 - run.first : 0);
            if (run.first >= n_cells || (step && steps > room / step))
                throw DataError("patch map: token run outside its group", r.at());
        }
        covered += run.count;
        t.cells.push_back(run);
    }
    if (covered != t.prefix + t.tail) throw DataError("patch map: token runs do not cover the tokens", r.at());
    return t;
}

}  // namespace

PatchMap decode_patch_map(ByteSpan data, uint64_t base, size_t* used, uint64_t max_original) {
    if (!used && data.size() > kMaxPatchMapBytes) throw DataError("patch map too large", base);
    MapReader r(data, base);
    const uint8_t version = r.u8("version");
    if (version != kPatchMapVersion && version != kPatchMapVersionTokens)
        throw DataError("unknown patch map version (written by a newer statezip?)", base);
    PatchMap m;
    m.original_size = r.v("size");
    if (m.original_size > max_original)
        throw DataError("patch map: the original (" + std::to_string(m.original_size) +
                            " bytes) is larger than its reference and stored bytes can rebuild",
                        r.at());
    m.original_xxh128.lo = r.u64("hash");
    m.original_xxh128.hi = r.u64("hash");
    m.meta_raw = r.v("meta size");
    if (m.meta_raw > kMaxPatchMetaBytes) throw DataError("patch map: meta too large", r.at());
    uint64_t n_ref = r.count("reference group count");
    for (uint64_t i = 0; i < n_ref; ++i) {
        PatchRefGroup g;
        g.n_cells = r.v("cell count");
        uint64_t n_parts = r.count("part count");
        for (uint64_t k = 0; k < n_parts; ++k) {
            PatchRefPart p;
            p.offset = r.v("offset");
            p.row_bytes = r.v("row size");
            g.parts.push_back(p);
        }
        m.ref_groups.push_back(std::move(g));
    }
    uint64_t n_groups = r.count("group count"), total_runs = 0;
    for (uint64_t i = 0; i < n_groups; ++i) read_group(r, m, total_runs);
    uint64_t n_regions = r.count("region count"), covered = 0;
    std::vector<std::vector<bool>> placed(m.groups.size());  // parts already in a region
    for (size_t i = 0; i < m.groups.size(); ++i) placed[i].assign(m.groups[i].parts.size(), false);
    for (uint64_t i = 0; i < n_regions; ++i) {
        PatchRegion g;
        uint8_t kind = r.u8("region kind");
        if (kind > 2) throw DataError("patch map: unknown region kind", r.at());
        g.kind = static_cast<RegionKind>(kind);
        if (g.kind == RegionKind::Part) {
            uint64_t gi = r.v("group"), pi = r.v("part");
            if (gi >= m.groups.size() || pi >= m.groups[gi].parts.size() || placed[gi][pi])
                throw DataError("patch map: bad part region", r.at());
            placed[gi][pi] = true;
            g.group = static_cast<uint32_t>(gi);
            g.part = static_cast<uint32_t>(pi);
            g.length = part_bytes(m.groups[gi], m.groups[gi].parts[pi], r.at());
        } else {
            g.length = r.v("region length");
        }
        if (g.kind == RegionKind::Tokens) {
            g.ref_offset = r.v("token offset");
            g.shared = r.v("shared tokens");
            if (g.shared > g.length) throw DataError("patch map: more shared tokens than tokens", r.at());
        }
        covered = checked_add(covered, g.length, "patch regions", r.at());
        m.regions.push_back(g);
    }
    if (covered != m.original_size) throw DataError("patch map: regions do not tile the original file", r.at());
    if (version == kPatchMapVersionTokens) m.tokens = read_token_model(r, m);
    if (used) *used = static_cast<size_t>(r.at() - base);
    else if (!r.done()) throw DataError("patch map: unexpected bytes", r.at());
    return m;
}

namespace {

// A run's copy stays inside its REF part as a writer lays it out (check_patch_sources).
void check_ref_layout(const PatchPart& p, const PatchRefGroup& rg, const PatchRefPart& rp, uint64_t ref_size) {
    constexpr uint64_t at = 16;  // the header: map offsets are not kept per record
    uint64_t extent = 0;
    if (!p.transposed) {
        if (p.piece_bytes != rp.row_bytes) throw DataError("patch map: a copied row is not a reference row", at);
        extent = checked_mul(rg.n_cells, rp.row_bytes, "patch reference part", at);
    } else {
        if (checked_mul(rg.n_cells, p.piece_bytes, "patch reference part", at) > rp.row_bytes)
            throw DataError("patch map: reference channel rows shorter than their cells", at);
        extent = checked_mul(p.channels, rp.row_bytes, "patch reference part", at);
    }
    if (rp.offset > ref_size || extent > ref_size - rp.offset)
        throw DataError("patch map copies past the end of the reference file", at);
}

}  // namespace

PatchSources check_patch_sources(const PatchMap& m, uint64_t ref_size) {
    constexpr uint64_t at = 16;
    PatchSources t;
    auto add = [&](uint64_t& to, uint64_t n) { to = checked_add(to, n, "patch sources", at); };
    for (const PatchRegion& reg : m.regions) {
        if (reg.kind == RegionKind::Stream) {
            add(t.from_meta, reg.length);
        } else if (reg.kind == RegionKind::Tokens) {
            if (reg.ref_offset > ref_size || reg.shared > ref_size - reg.ref_offset)
                throw DataError("patch map copies tokens past the end of the reference file", at);
            add(t.from_ref, reg.shared);
            add(t.from_meta, reg.length - reg.shared);
        } else {
            const PatchGroup& g = m.groups[reg.group];
            const PatchPart& p = g.parts[reg.part];
            uint64_t& fresh = p.in_meta ? t.from_meta : t.from_stream;
            for (const PatchRun& run : g.runs) {
                // Within the part's size (checked when the map was read): no overflow.
                const uint64_t bytes = run.count * p.piece_bytes * p.channels;
                if (!run.ref_group) {
                    add(fresh, bytes);
                    continue;
                }
                const PatchRefGroup& rg = m.ref_groups[*run.ref_group];
                check_ref_layout(p, rg, rg.parts[reg.part], ref_size);
                add(t.from_ref, bytes);
            }
            add(fresh, p.row_tail * p.channels);
        }
    }
    uint64_t budget = 0;
    if (!__builtin_mul_overflow(ref_size, kMaxRefCopyFactor, &budget) && t.from_ref > budget)
        throw DataError("patch map copies " + std::to_string(t.from_ref) + " bytes from a reference of " +
                            std::to_string(ref_size) + " (more than " + std::to_string(kMaxRefCopyFactor) + "x its size)",
                        at);
    return t;
}

bool PatchWalker::step(PatchSegment& s) {
    if (region_ >= m_.regions.size()) return false;
    const PatchRegion& reg = m_.regions[region_];
    s = {file_pos_, 0, false, 0};
    if (reg.kind == RegionKind::Stream) {
        s.length = reg.length;
        ++region_;
    } else if (reg.kind == RegionKind::Tokens) {
        if (token_phase_ == 0) {
            s.length = reg.shared, s.from_ref = true, s.ref_offset = reg.ref_offset;
            token_phase_ = 1;
        } else {
            s.length = reg.length - reg.shared;
            token_phase_ = 0;
            ++region_;
        }
    } else {
        const PatchGroup& g = m_.groups[reg.group];
        const PatchPart& p = g.parts[reg.part];
        if (g.runs.empty() && !p.row_tail) {  // no cells: nothing in any channel
            ++region_;
            return true;
        }
        if (run_ == g.runs.size()) {  // the end of a transposed channel row after the cells
            s.length = p.row_tail;
            s.part = !p.in_meta;
            run_ = 0;
            if (++channel_ == p.channels) channel_ = 0, ++region_;
            file_pos_ += s.length;
            return true;
        }
        const PatchRun& run = g.runs[run_];
        s.part = !p.in_meta;
        // Row-major: a run is `count` whole rows; transposed: `count` pieces of one channel row.
        s.length = run.count * p.piece_bytes;
        if (run.ref_group) {
            const PatchRefPart& rp = m_.ref_groups[*run.ref_group].parts[reg.part];
            s.from_ref = true;
            // Overflow here only yields an offset the reference bounds check refuses.
            s.ref_offset = rp.offset + channel_ * rp.row_bytes + run.ref_first * (p.transposed ? p.piece_bytes : rp.row_bytes);
        }
        if (++run_ == g.runs.size() && !p.row_tail) {
            run_ = 0;
            if (++channel_ == p.channels) channel_ = 0, ++region_;
        }
    }
    file_pos_ += s.length;
    return true;
}

std::optional<PatchSegment> PatchWalker::next() {
    PatchSegment s;
    while (step(s))
        if (s.length) return s;
    return std::nullopt;
}

}  // namespace stz
