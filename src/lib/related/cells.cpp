#include "cells.hpp"

#include "base/hashing.hpp"

#include <cstring>

namespace stz {

namespace {

// The part of a section's name before "kv." ("" for "kv.k[0]", "s1." for "s1.kv.v[3]").
std::optional<std::string> group_prefix(const std::string& name) {
    size_t at = name.find("kv.");
    if (at == std::string::npos) return std::nullopt;
    return name.substr(0, at);
}

// The cell count and part layout of one K/V section, or nullopt when it has no usable
// row structure (rows that do not divide its size, a transposed row that is not whole cells).
std::optional<std::pair<uint64_t, CellPart>> part_of(const Section& s, uint32_t index) {
    if (s.rows == 0 || s.size == 0 || s.size % s.rows != 0) return std::nullopt;
    CellPart p;
    p.section = index;
    p.offset = s.offset;
    p.row_bytes = s.size / s.rows;
    p.transposed = s.transposed;
    if (!s.transposed) {
        p.piece_bytes = p.row_bytes;
        return std::make_pair(s.rows, p);
    }
    if (s.row_elems == 0 || p.row_bytes % s.row_elems != 0) return std::nullopt;
    p.channels = s.rows;
    p.piece_bytes = p.row_bytes / s.row_elems;
    return std::make_pair(s.row_elems, p);
}

uint64_t layout_signature(const CellGroup& g) {
    std::vector<uint64_t> words;
    words.push_back(g.parts.size());
    for (const CellPart& p : g.parts) {
        words.push_back(p.piece_bytes);
        words.push_back(p.channels);
        words.push_back(p.transposed ? 1 : 0);
    }
    return XXH3_64bits(words.data(), words.size() * sizeof(uint64_t));
}

void push_run(std::vector<CellRun>& runs, uint64_t cell, uint32_t ref_group, uint64_t ref_cell) {
    if (!runs.empty()) {
        CellRun& last = runs.back();
        bool next = last.first + last.count == cell && last.ref_group == ref_group;
        if (next && (ref_group == kNoRef || last.ref_first + last.count == ref_cell)) {
            ++last.count;
            return;
        }
    }
    runs.push_back({cell, 1, ref_group, ref_group == kNoRef ? 0 : ref_cell});
}

}  // namespace

std::vector<CellGroup> find_cell_groups(const ParsedFile& f) {
    // Row-major parts must agree on the cell count; a transposed part may have more columns
    // than the group has cells (2023 files keep V for the whole context, K only for n_past):
    // the columns past the cells are not cells (callers keep them as they are).
    struct Pending {
        CellGroup g;
        std::vector<uint64_t> counts;
        std::optional<uint64_t> row_major_cells;
        bool bad = false;
    };
    std::vector<Pending> groups;
    for (uint32_t i = 0; i < f.sections.size(); ++i) {
        const Section& s = f.sections[i];
        if (s.kind != SectionKind::KvKey && s.kind != SectionKind::KvValue) continue;
        auto prefix = group_prefix(s.name);
        if (!prefix) continue;
        size_t g = 0;
        while (g < groups.size() && groups[g].g.prefix != *prefix) ++g;
        if (g == groups.size()) groups.push_back({CellGroup{*prefix, 0, {}, 0, 0}, {}, std::nullopt, false});
        Pending& pg = groups[g];
        auto part = part_of(s, i);
        if (!part) {
            pg.bad = true;
            continue;
        }
        if (!part->second.transposed) {
            if (pg.row_major_cells && *pg.row_major_cells != part->first) pg.bad = true;
            pg.row_major_cells = part->first;
        }
        pg.counts.push_back(part->first);
        pg.g.parts.push_back(part->second);
    }
    std::vector<CellGroup> good;
    for (Pending& pg : groups) {
        if (pg.bad || pg.g.parts.empty()) continue;
        uint64_t n = pg.row_major_cells ? *pg.row_major_cells : pg.counts[0];
        bool ok = n > 0;
        for (size_t k = 0; k < pg.counts.size(); ++k)
            ok = ok && (pg.g.parts[k].transposed ? pg.counts[k] >= n : pg.counts[k] == n);
        if (!ok) continue;
        CellGroup& g = pg.g;
        g.n_cells = n;
        for (const CellPart& p : g.parts) g.cell_bytes += p.cell_bytes();
        g.signature = layout_signature(g);
        good.push_back(std::move(g));
    }
    return good;
}

uint64_t cells_per_tile(const CellGroup& g) {
    if (g.cell_bytes == 0) return 1;
    return std::max<uint64_t>(1, kCellTileBytes / g.cell_bytes);
}

void read_cells(InputSource& in, const CellGroup& g, uint64_t first, uint64_t count, uint8_t* dst) {
    if (first > g.n_cells || count > g.n_cells - first) throw Error("cell range outside its group");
    Bytes tmp;
    uint64_t part_at = 0;  // offset of the part's bytes inside a cell
    for (const CellPart& p : g.parts) {
        if (!p.transposed) {
            tmp.resize(count * p.row_bytes);
            in.read_at(p.piece_offset(first, 0), tmp.data(), tmp.size());
            for (uint64_t i = 0; i < count; ++i)
                std::memcpy(dst + i * g.cell_bytes + part_at, tmp.data() + i * p.row_bytes, p.row_bytes);
        } else {
            tmp.resize(count * p.piece_bytes);
            const uint64_t w = p.piece_bytes;
            for (uint64_t ch = 0; ch < p.channels; ++ch) {
                in.read_at(p.piece_offset(first, ch), tmp.data(), tmp.size());
                uint8_t* out = dst + part_at + ch * w;
                if (w == 2) {
                    for (uint64_t i = 0; i < count; ++i) std::memcpy(out + i * g.cell_bytes, tmp.data() + i * 2, 2);
                } else if (w == 4) {
                    for (uint64_t i = 0; i < count; ++i) std::memcpy(out + i * g.cell_bytes, tmp.data() + i * 4, 4);
                } else {
                    for (uint64_t i = 0; i < count; ++i) std::memcpy(out + i * g.cell_bytes, tmp.data() + i * w, w);
                }
            }
        }
        part_at += p.cell_bytes();
    }
}

namespace {

// acc := XXH3-128(acc || piece hash), seeded with the part's index: a cell's hash is a fold
// over its parts, so each part can be hashed on its own pass over the section.
inline void fold(CellHash& acc, XXH128_hash_t piece, uint64_t part) {
    uint64_t w[4] = {acc.lo, acc.hi, piece.low64, piece.high64};
    XXH128_hash_t h = XXH3_128bits_withSeed(w, sizeof w, part);
    acc = {h.low64, h.high64};
}

// Columns of a band of channel rows: src holds `channels` rows of `count` elements of W
// bytes; dst gets `count` columns of `channels` elements. Blocks of 32 columns keep the
// destination lines being written in L1 (a plain loop is 5x slower at 1024 channels).
template <size_t W>
void transpose_fixed(const uint8_t* src, uint8_t* dst, uint64_t channels, uint64_t count) {
    constexpr uint64_t kBlock = 32;
    for (uint64_t c0 = 0; c0 < count; c0 += kBlock) {
        const uint64_t c1 = std::min(count, c0 + kBlock);
        for (uint64_t ch = 0; ch < channels; ++ch) {
            const uint8_t* row = src + (ch * count) * W;
            for (uint64_t c = c0; c < c1; ++c) std::memcpy(dst + (c * channels + ch) * W, row + c * W, W);
        }
    }
}

void transpose_band(const uint8_t* src, uint8_t* dst, uint64_t channels, uint64_t count, uint64_t w) {
    if (w == 2) return transpose_fixed<2>(src, dst, channels, count);
    if (w == 4) return transpose_fixed<4>(src, dst, channels, count);
    if (w == 1) return transpose_fixed<1>(src, dst, channels, count);
    for (uint64_t ch = 0; ch < channels; ++ch)
        for (uint64_t c = 0; c < count; ++c) std::memcpy(dst + (c * channels + ch) * w, src + (ch * count + c) * w, w);
}

// A transposed part's column is hashed in blocks of this many channels (fold of the blocks'
// XXH3-128), so that the section is read a block of whole channel rows at a time, nearly
// sequentially: reading all channels of a band of columns was memory-latency bound (0.35 GB/s
// at 1024 channels).
constexpr uint64_t kChannelBlock = 64;

XXH128_hash_t as_xxh(const CellHash& h) { return {h.lo, h.hi}; }

// The hash of one part's bytes of a cell (the piece hash folded into the cell's hash).
CellHash piece_hash(const CellPart& p, const uint8_t* bytes) {
    if (!p.transposed || p.channels <= kChannelBlock) {
        XXH128_hash_t h = XXH3_128bits(bytes, p.cell_bytes());
        return {h.low64, h.high64};
    }
    CellHash acc{0, 0};
    for (uint64_t ch = 0, b = 0; ch < p.channels; ch += kChannelBlock, ++b)
        fold(acc, XXH3_128bits(bytes + ch * p.piece_bytes, std::min(kChannelBlock, p.channels - ch) * p.piece_bytes), b);
    return acc;
}

// Piece hashes of part p for all cells: row-major in bands of rows; transposed in blocks of
// channels x bands of columns, each block's columns hashed and folded per cell.
std::vector<CellHash> piece_hashes(InputSource& in, const CellGroup& g, const CellPart& p, Bytes& band, Bytes& cols) {
    std::vector<CellHash> out(g.n_cells);
    if (!p.transposed || p.channels <= kChannelBlock) {
        const uint64_t per_cell = p.cell_bytes();
        const uint64_t width = std::max<uint64_t>(1, (p.transposed ? kCellTileBytes / 16 : kCellTileBytes) / per_cell);
        for (uint64_t c0 = 0; c0 < g.n_cells; c0 += width) {
            const uint64_t n = std::min(width, g.n_cells - c0);
            band.resize(n * per_cell);
            const uint8_t* cells = band.data();
            if (!p.transposed) {
                in.read_at(p.piece_offset(c0, 0), band.data(), band.size());
            } else {
                for (uint64_t ch = 0; ch < p.channels; ++ch)
                    in.read_at(p.piece_offset(c0, ch), band.data() + ch * n * p.piece_bytes, n * p.piece_bytes);
                cols.resize(band.size());
                transpose_band(band.data(), cols.data(), p.channels, n, p.piece_bytes);
                cells = cols.data();
            }
            for (uint64_t i = 0; i < n; ++i) out[c0 + i] = piece_hash(p, cells + i * per_cell);
        }
        return out;
    }
    const uint64_t width = std::max<uint64_t>(1, (kCellTileBytes / 4) / (kChannelBlock * p.piece_bytes));
    for (uint64_t ch0 = 0, b = 0; ch0 < p.channels; ch0 += kChannelBlock, ++b) {
        const uint64_t chans = std::min(kChannelBlock, p.channels - ch0), seg = chans * p.piece_bytes;
        for (uint64_t c0 = 0; c0 < g.n_cells; c0 += width) {
            const uint64_t n = std::min(width, g.n_cells - c0);
            band.resize(n * seg);
            for (uint64_t ch = 0; ch < chans; ++ch)
                in.read_at(p.piece_offset(c0, ch0 + ch), band.data() + ch * n * p.piece_bytes, n * p.piece_bytes);
            cols.resize(band.size());
            transpose_band(band.data(), cols.data(), chans, n, p.piece_bytes);
            for (uint64_t i = 0; i < n; ++i) fold(out[c0 + i], XXH3_128bits(cols.data() + i * seg, seg), b);
        }
    }
    return out;
}

}  // namespace

CellHash hash_cell(const CellGroup& g, const uint8_t* cell) {
    CellHash acc{g.signature, 0};
    for (size_t k = 0; k < g.parts.size(); ++k) {
        fold(acc, as_xxh(piece_hash(g.parts[k], cell)), k);
        cell += g.parts[k].cell_bytes();
    }
    return acc;
}

std::vector<CellHash> hash_cells(InputSource& in, const CellGroup& g) {
    std::vector<CellHash> acc(g.n_cells, CellHash{g.signature, 0});
    Bytes band, cols;
    for (size_t k = 0; k < g.parts.size(); ++k) {
        const std::vector<CellHash> pieces = piece_hashes(in, g, g.parts[k], band, cols);
        for (uint64_t c = 0; c < g.n_cells; ++c) fold(acc[c], as_xxh(pieces[c]), k);
    }
    return acc;
}

std::vector<CellGroup> split_parts(const std::vector<CellGroup>& groups, std::vector<uint32_t>* origin) {
    std::vector<CellGroup> out;
    for (uint32_t g = 0; g < groups.size(); ++g)
        for (const CellPart& p : groups[g].parts) {
            CellGroup one{groups[g].prefix, groups[g].n_cells, {p}, 0, p.cell_bytes()};
            one.signature = layout_signature(one);
            out.push_back(std::move(one));
            if (origin) origin->push_back(g);
        }
    return out;
}

CellIndex::CellIndex(InputSource& in, const ParsedFile& parsed) : CellIndex(in, find_cell_groups(parsed)) {}

CellIndex::CellIndex(InputSource& in, std::vector<CellGroup> groups) : groups_(std::move(groups)) {
    for (uint32_t g = 0; g < groups_.size(); ++g) {
        hashes_.push_back(hash_cells(in, groups_[g]));
        const auto& hs = hashes_.back();
        for (uint64_t c = 0; c < hs.size(); ++c) map_.emplace(hs[c], CellRef{g, c});
    }
}

std::optional<CellRef> CellIndex::find(const CellHash& h) const {
    auto it = map_.find(h);
    if (it == map_.end()) return std::nullopt;
    return it->second;
}

std::vector<CellRun> match_cells(const CellGroup& fg, const std::vector<CellHash>& fh, const CellIndex& ref) {
    std::vector<CellRun> runs;
    for (uint64_t c = 0; c < fg.n_cells && c < fh.size(); ++c) {
        // Prefer continuing the current run (keeps runs long when a cell occurs twice in REF).
        if (!runs.empty() && runs.back().ref_group != kNoRef) {
            const CellRun& last = runs.back();
            const auto& rh = ref.hashes(last.ref_group);
            uint64_t next = last.ref_first + last.count;
            if (next < rh.size() && rh[next] == fh[c]) {
                push_run(runs, c, last.ref_group, next);
                continue;
            }
        }
        auto hit = ref.find(fh[c]);
        if (hit && ref.groups()[hit->group].signature == fg.signature) push_run(runs, c, hit->group, hit->cell);
        else push_run(runs, c, kNoRef, 0);
    }
    for (uint64_t c = fh.size(); c < fg.n_cells; ++c) push_run(runs, c, kNoRef, 0);
    return runs;
}

namespace {

// Compares a run tile by tile, calling on_cell(i, equal) for each cell of the run.
template <class F>
void compare_run(InputSource& file, const CellGroup& fg, InputSource& ref, const CellGroup& rg, const CellRun& run,
                 F&& on_cell) {
    if (fg.cell_bytes != rg.cell_bytes) {
        for (uint64_t i = 0; i < run.count; ++i) on_cell(i, false);
        return;
    }
    const uint64_t tile = cells_per_tile(fg);
    Bytes a(std::min(tile, run.count) * fg.cell_bytes), b(a.size());
    for (uint64_t i = 0; i < run.count; i += tile) {
        uint64_t n = std::min(tile, run.count - i);
        read_cells(file, fg, run.first + i, n, a.data());
        read_cells(ref, rg, run.ref_first + i, n, b.data());
        if (std::memcmp(a.data(), b.data(), n * fg.cell_bytes) == 0) {
            for (uint64_t k = 0; k < n; ++k) on_cell(i + k, true);
            continue;
        }
        for (uint64_t k = 0; k < n; ++k)
            on_cell(i + k, std::memcmp(a.data() + k * fg.cell_bytes, b.data() + k * fg.cell_bytes, fg.cell_bytes) == 0);
    }
}

}  // namespace

bool verify_run(InputSource& file, const CellGroup& fg, InputSource& ref, const CellGroup& rg, const CellRun& run) {
    if (run.ref_group == kNoRef) return false;
    bool all = true;
    compare_run(file, fg, ref, rg, run, [&](uint64_t, bool eq) { all = all && eq; });
    return all;
}

std::vector<CellRun> verified_runs(InputSource& file, const CellGroup& fg, InputSource& ref, const CellIndex& ri,
                                   const std::vector<CellRun>& runs) {
    std::vector<CellRun> out;
    for (const CellRun& r : runs) {
        if (r.ref_group == kNoRef || r.ref_group >= ri.groups().size()) {
            for (uint64_t i = 0; i < r.count; ++i) push_run(out, r.first + i, kNoRef, 0);
            continue;
        }
        const CellGroup& rg = ri.groups()[r.ref_group];
        if (r.ref_first > rg.n_cells || r.count > rg.n_cells - r.ref_first) {
            for (uint64_t i = 0; i < r.count; ++i) push_run(out, r.first + i, kNoRef, 0);
            continue;
        }
        compare_run(file, fg, ref, rg, r, [&](uint64_t i, bool eq) {
            if (eq) push_run(out, r.first + i, r.ref_group, r.ref_first + i);
            else push_run(out, r.first + i, kNoRef, 0);
        });
    }
    return out;
}

}  // namespace stz
