#include "patch.hpp"

#include "base/hashing.hpp"
#include <zstd.h>

#include <map>

#include "cells.hpp"
#include "codecs/varint.hpp"
#include "rebuild/patch_io.hpp"
#include "rebuild/patch_map.hpp"
#include "rebuild/token_model.hpp"
#include "base/zstd_context.hpp"

namespace stz {

namespace {

struct TokenShare {
    std::optional<uint32_t> section;  // the file's token section
    uint64_t ref_offset = 0, shared = 0;
};

// The longest common prefix (whole i32 tokens) of the first token sections of both files.
TokenShare share_tokens(InputSource& file, const ParsedFile& fp, InputSource& ref, const ParsedFile& rp) {
    auto first_tokens = [](const ParsedFile& p) -> std::optional<uint32_t> {
        for (uint32_t i = 0; i < p.sections.size(); ++i)
            if (p.sections[i].kind == SectionKind::Tokens && p.sections[i].type == ElemType::I32) return i;
        return std::nullopt;
    };
    TokenShare t;
    auto fi = first_tokens(fp), ri = first_tokens(rp);
    t.section = fi;
    if (!fi || !ri) return t;
    const Section &fs = fp.sections[*fi], &rs = rp.sections[*ri];
    uint64_t n = std::min(fs.size, rs.size) / 4 * 4;
    Bytes a(std::min<uint64_t>(n, 1u << 20)), b(a.size());
    uint64_t same = 0;
    while (same < n) {
        size_t k = static_cast<size_t>(std::min<uint64_t>(a.size(), n - same));
        file.read_at(fs.offset + same, a.data(), k);
        ref.read_at(rs.offset + same, b.data(), k);
        size_t i = 0;
        while (i < k && a[i] == b[i]) ++i;
        same += i;
        if (i < k) break;
    }
    t.section = *fi;
    t.ref_offset = rs.offset;
    t.shared = same / 4 * 4;
    return t;
}

struct Matching {
    std::vector<CellGroup> groups;
    std::vector<std::vector<CellRun>> runs;
    std::vector<uint32_t> origin;        // each group's whole group (find_cell_groups)
    std::vector<uint64_t> whole_cells;   // cells of each whole group
    uint64_t file_cells = 0, shared_cells = 0;
    void count_shared();  // file_cells, shared_cells: a cell is shared when all its parts are
};

void Matching::count_shared() {
    std::vector<std::vector<bool>> new_cell(whole_cells.size());
    for (size_t g = 0; g < whole_cells.size(); ++g) new_cell[g].assign(whole_cells[g], false);
    for (size_t g = 0; g < groups.size(); ++g)
        for (const CellRun& r : runs[g])
            if (r.ref_group == kNoRef)
                for (uint64_t c = r.first; c < r.first + r.count; ++c) new_cell[origin[g]][c] = true;
    file_cells = shared_cells = 0;
    for (const auto& cells : new_cell) {
        file_cells += cells.size();
        shared_cells += std::count(cells.begin(), cells.end(), false);
    }
}

bool quantised(const Section& s) { return s.type == ElemType::Bytes || elem_type_info(s.type).block_elems > 1; }
bool quantised_v(const Section& s) { return s.kind == SectionKind::KvValue && quantised(s); }

// Rows are matched one layer at a time (split_parts): a cell is shared when all its rows are.
Matching match_file(InputSource& file, const ParsedFile& fp, InputSource& ref, const CellIndex& index) {
    Matching m;
    const std::vector<CellGroup> whole = find_cell_groups(fp);
    m.groups = split_parts(whole, &m.origin);
    for (const CellGroup& g : whole) m.whole_cells.push_back(g.n_cells);
    for (const CellGroup& cg : m.groups)
        m.runs.push_back(verified_runs(file, cg, ref, index, match_cells(cg, hash_cells(file, cg), index)));
    m.count_shared();
    return m;
}

// A reader copies at most kMaxRefCopyFactor x REF's size from REF (patch_map.hpp). When the
// matched cells would copy more (cells matched many times over, as in files whose sequences
// all repeat one prompt), each group keeps its share of `budget` (by its cell size, so that
// the same first cells stay matched in every layer) and its later matched runs become new
// cells, stored.
void cap_ref_copies(Matching& mt, uint64_t budget) {
    uint64_t copied = 0, all_cells = 0;
    for (size_t g = 0; g < mt.groups.size(); ++g) {
        all_cells += mt.groups[g].cell_bytes;
        for (const CellRun& r : mt.runs[g])
            if (r.ref_group != kNoRef) copied += r.count * mt.groups[g].cell_bytes;
    }
    if (copied <= budget) return;
    for (size_t g = 0; g < mt.groups.size(); ++g) {
        const uint64_t cell = mt.groups[g].cell_bytes;
        uint64_t left = static_cast<uint64_t>(static_cast<long double>(budget) * cell / all_cells), used = 0;
        std::vector<CellRun> kept;
        for (CellRun r : mt.runs[g]) {
            if (r.ref_group != kNoRef && r.count * cell > left - used) r.ref_group = kNoRef, r.ref_first = 0;
            else if (r.ref_group != kNoRef) used += r.count * cell;
            if (!kept.empty() && kept.back().ref_group == kNoRef && r.ref_group == kNoRef) kept.back().count += r.count;
            else kept.push_back(r);
        }
        mt.runs[g] = std::move(kept);
    }
    mt.count_shared();
}

// The map's groups and the reference groups they use (renumbered in order of first use).
uint64_t new_cells(const std::vector<CellRun>& runs) {
    uint64_t n = 0;
    for (const CellRun& r : runs)
        if (r.ref_group == kNoRef) n += r.count;
    return n;
}

// New rows of quantised V layers go into the meta frame, zstd primed with REF's quantised V
// rows (low layers' V follows the token, so new rows often resemble REF's: conv10 q8_0 97.3 ->
// 94.6 KB), while that frame stays small. Quantised K rows carry the rotary position and
// float rows are better served by their typed pipelines.
constexpr uint64_t kMaxQuantisedMetaBytes = 32ull << 20;

void map_groups(const Matching& mt, const CellIndex& index, const ParsedFile& fp, PatchMap& map) {
    std::map<uint32_t, uint32_t> ref_ids;
    uint64_t quantised_new = 0;
    for (size_t gi = 0; gi < mt.groups.size(); ++gi)
        if (quantised_v(fp.sections[mt.groups[gi].parts[0].section]))
            quantised_new += new_cells(mt.runs[gi]) * mt.groups[gi].cell_bytes;
    const bool quantised_in_meta = quantised_new <= kMaxQuantisedMetaBytes;
    for (size_t gi = 0; gi < mt.groups.size(); ++gi) {
        const CellGroup& g = mt.groups[gi];
        PatchGroup pg;
        pg.n_cells = g.n_cells;
        for (const CellPart& p : g.parts)
            pg.parts.push_back({p.channels, p.piece_bytes, p.transposed, p.transposed ? p.row_bytes - g.n_cells * p.piece_bytes : 0,
                                quantised_in_meta && quantised_v(fp.sections[p.section])});
        for (const CellRun& r : mt.runs[gi]) {
            PatchRun pr{r.count, std::nullopt, r.ref_first};
            if (r.ref_group != kNoRef) {
                auto [it, fresh] = ref_ids.emplace(r.ref_group, static_cast<uint32_t>(map.ref_groups.size()));
                if (fresh) {
                    const CellGroup& rg = index.groups()[r.ref_group];
                    PatchRefGroup prg{rg.n_cells, {}};
                    for (const CellPart& p : rg.parts) prg.parts.push_back({p.offset, p.row_bytes});
                    map.ref_groups.push_back(std::move(prg));
                }
                pr.ref_group = it->second;
            }
            pg.runs.push_back(pr);
        }
        map.groups.push_back(std::move(pg));
    }
}

// Regions of the map and sections of the stored stream, from the file's sections.
// Consecutive stored layers of one kind and shape are declared as one section (rows added
// up), so the planner codes all new K rows (and all new V rows) as one matrix: 0.5-1 % smaller
// than layer by layer on the f16 pairs, 3 % on q8_0 K.
void merge_layers(ParsedFile& sp) {
    std::vector<Section> out;
    for (Section& s : sp.sections) {
        if (out.size() > 1) {  // never into the head (section 0)
            Section& b = out.back();
            if ((s.kind == SectionKind::KvKey || s.kind == SectionKind::KvValue) && b.kind == s.kind && b.type == s.type &&
                b.transposed == s.transposed && b.row_elems == s.row_elems && b.filled_elems == s.filled_elems && b.rows &&
                s.rows && b.offset + b.size == s.offset) {
                b.rows += s.rows;
                b.size += s.size;
                if (b.name.back() != '+') b.name += "+";
                continue;
            }
        }
        out.push_back(std::move(s));
    }
    sp.sections = std::move(out);
}

ParsedFile plan_stream(const ParsedFile& fp, const Matching& mt, const TokenShare& tok, uint64_t head_bytes,
                       PatchMap& map) {
    std::map<uint32_t, std::pair<uint32_t, uint32_t>> part_of;  // section -> (group, part)
    for (uint32_t g = 0; g < mt.groups.size(); ++g)
        for (uint32_t k = 0; k < mt.groups[g].parts.size(); ++k) part_of[mt.groups[g].parts[k].section] = {g, k};
    ParsedFile sp = fp;
    sp.sections.clear();
    Section ms;
    ms.name = kPatchMapSection;
    ms.kind = SectionKind::Meta;
    ms.size = head_bytes;  // the map and the meta bytes (encode_head)
    sp.sections.push_back(ms);
    uint64_t at = head_bytes;
    for (uint32_t i = 0; i < fp.sections.size(); ++i) {
        Section s = fp.sections[i];
        PatchRegion reg;
        reg.length = s.size;
        if (auto it = part_of.find(i); it != part_of.end()) {
            reg.kind = RegionKind::Part, reg.group = it->second.first, reg.part = it->second.second;
            const CellPart& p = mt.groups[reg.group].parts[reg.part];
            const uint64_t m = new_cells(mt.runs[reg.group]), cells = mt.groups[reg.group].n_cells;
            if (p.transposed) {  // each channel row keeps its new cells and its columns past the cells
                s.row_elems -= cells - m;
                if (s.filled_elems) s.filled_elems = s.filled_elems > cells - m ? s.filled_elems - (cells - m) : 0;
                s.size = p.channels * (p.row_bytes - (cells - m) * p.piece_bytes);
            } else {
                s.rows = m;
                s.size = m * p.row_bytes;
            }
            if (map.groups[reg.group].parts[0].in_meta) s.size = 0;  // its new rows are in the meta frame
        } else if (tok.section && *tok.section == i && tok.shared > 0) {
            reg.kind = RegionKind::Tokens, reg.ref_offset = tok.ref_offset, reg.shared = tok.shared;
            s.size -= tok.shared;
            s.rows = s.size ? 1 : 0;
            s.row_elems = s.size / 4;
        }
        if (reg.kind == RegionKind::Stream && !map.regions.empty() && map.regions.back().kind == RegionKind::Stream)
            map.regions.back().length += reg.length;
        else
            map.regions.push_back(reg);
        if (s.size == 0 || reg.kind != RegionKind::Part) continue;  // in the meta frame
        s.offset = at;
        at += s.size;
        sp.sections.push_back(std::move(s));
    }
    merge_layers(sp);
    return sp;
}

// REF's bytes outside its K/V parts (headers, tokens, cell metadata, ...), at most
// kMaxPatchMetaBytes: the dictionary of the meta frame.
std::vector<PatchExtent> dictionary_extents(const ParsedFile& rp, const std::vector<CellGroup>& groups, bool with_quantised) {
    std::vector<bool> is_part(rp.sections.size(), false);
    for (const CellGroup& g : groups)
        for (const CellPart& p : g.parts) is_part[p.section] = !(with_quantised && quantised_v(rp.sections[p.section]));
    std::vector<PatchExtent> out;
    uint64_t total = 0;
    for (size_t i = 0; i < rp.sections.size() && total < kMaxPatchMetaBytes; ++i) {
        const Section& s = rp.sections[i];
        if (is_part[i] || s.size == 0) continue;
        uint64_t n = std::min(s.size, kMaxPatchMetaBytes - total);
        if (!out.empty() && out.back().offset + out.back().length == s.offset) out.back().length += n;
        else out.push_back({s.offset, n});
        total += n;
    }
    return out;
}

// The token model of a file (token_model.hpp), where it pays: the file has a token list, a
// `cells` section that gives each position its cell, and a first V layer whose cells REF has.
struct TokenPlan {
    uint64_t file_offset = 0;  // the tail's first token in the file
    PatchTokenModel model;
    Bytes stored;  // the tail in its stored form
    uint64_t predicted = 0;
};

std::optional<TokenPlan> plan_tokens(InputSource& file, const ParsedFile& fp, const Matching& mt, const TokenShare& tok,
                                     const PatchMap& map, InputSource& ref) {
    if (!tok.section) return std::nullopt;
    const Section& ts = fp.sections[*tok.section];
    const uint64_t n = ts.size / 4, prefix = tok.shared / 4;
    auto v = std::find_if(mt.groups.begin(), mt.groups.end(),
                          [&](const CellGroup& g) { return fp.sections[g.parts[0].section].kind == SectionKind::KvValue; });
    auto cs = std::find_if(fp.sections.begin(), fp.sections.end(), [&](const Section& s) {
        return v != mt.groups.end() && s.kind == SectionKind::Cells && s.name == v->prefix + "cells";
    });
    if (ts.size % 4 || n <= prefix || n > kMaxPatchMetaBytes / 4 || cs == fp.sections.end() || cs->size > kMaxPatchMetaBytes)
        return std::nullopt;
    Bytes cells(cs->size), token_bytes(ts.size);
    file.read_at(cs->offset, cells.data(), cells.size());
    const std::vector<uint64_t> cell_of = token_cells(cells, n);
    if (cell_of.empty()) return std::nullopt;
    TokenPlan plan;
    plan.file_offset = ts.offset + prefix * 4;
    plan.model = {0, tok.ref_offset, prefix, n - prefix, static_cast<uint32_t>(v - mt.groups.begin()), token_cell_runs(cell_of)};
    file.read_at(ts.offset, token_bytes.data(), token_bytes.size());
    std::vector<uint32_t> tokens(n);
    for (uint64_t i = 0; i < n; ++i) tokens[i] = load_le<uint32_t>(token_bytes.data() + 4 * i);
    try {
        TokenKeys keys(map, plan.model, ref);
        plan.stored = predict_tokens(tokens, prefix, std::ref(keys), &plan.predicted);
    } catch (const DataError&) {  // keys that would cost more than a reader allows: no model
        return std::nullopt;
    }
    if (plan.predicted == 0) return std::nullopt;
    return plan;
}

// window large enough to reach back over the dictionary (capped: 2^27, as zstd --long=27).
int window_log(uint64_t bytes) {
    int w = 10;
    while (w < 27 && (uint64_t(1) << w) < bytes) ++w;
    return w;
}

// The head of the stored stream (its first section): varint n, n extents {varint offset,
// varint length} of REF, then one zstd frame (with content size) primed with those REF
// bytes, holding the map and then the meta bytes: every byte of the original outside the
// K/V rows that the stored stream holds.
Bytes encode_head(InputSource& file, InputSource& ref, PatchMap& map, const TokenPlan* tokens) {
    Bytes raw;
    PatchWalker w(map);
    while (auto s = w.next()) {
        if (s->from_ref || s->part) continue;
        if (s->length > kMaxPatchMetaBytes - raw.size())
            throw Error("--patch-from: more than 64 MiB outside the KV cache (not supported)");
        size_t at = raw.size();
        if (tokens && tokens->file_offset >= s->file_offset && tokens->file_offset - s->file_offset < s->length &&
            tokens->model.tail * 4 <= s->length - (tokens->file_offset - s->file_offset)) {
            map.tokens = tokens->model;  // the tail's tokens are in this segment: stored predicted
            map.tokens->meta_offset = at + (tokens->file_offset - s->file_offset);
        }
        raw.resize(at + s->length);
        file.read_at(s->file_offset, raw.data() + at, s->length);
    }
    if (map.tokens) {
        const auto tail = raw.begin() + static_cast<ptrdiff_t>(map.tokens->meta_offset);
        raw.erase(tail, tail + static_cast<ptrdiff_t>(map.tokens->tail * 4));
        raw.insert(raw.begin() + static_cast<ptrdiff_t>(map.tokens->meta_offset), tokens->stored.begin(), tokens->stored.end());
    }
    map.meta_raw = raw.size();
    Bytes content = encode_patch_map(map);
    append_bytes(content, raw);
    const Bytes dict = read_dictionary(ref, map.dictionary);
    Bytes head;
    put_varint(head, map.dictionary.size());
    for (const PatchExtent& e : map.dictionary) {
        put_varint(head, e.offset);
        put_varint(head, e.length);
    }
    const size_t at = head.size();
    head.resize(at + ZSTD_compressBound(content.size()));
    ZstdCCtx ctx;
    ZSTD_CCtx* c = ctx.c;
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 19);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, window_log(dict.size() + content.size()));
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
    if (!dict.empty()) ZSTD_CCtx_refPrefix(c, dict.data(), dict.size());
    size_t n = ZSTD_compress2(c, head.data() + at, head.size() - at, content.data(), content.size());
    if (ZSTD_isError(n)) throw Error(std::string("--patch-from: zstd: ") + ZSTD_getErrorName(n));
    head.resize(at + n);
    return head;
}

}  // namespace

PatchResult compress_patch(InputSource& file_in, InputSource& ref_in, const std::string& ref_name, OutputSink& out,
                           const CompressOptions& opt) {
    CachedSource file(file_in), ref(ref_in);  // scattered pieces of transposed layers are read in many small reads
    const ParsedFile fp = parse_state_file(file, opt.hints);
    const ParsedFile rp = parse_state_file(ref, opt.hints);
    const std::vector<CellGroup> ref_groups = find_cell_groups(rp);
    const CellIndex index(ref, split_parts(ref_groups));
    Matching mt = match_file(file, fp, ref, index);
    const TokenShare tok = share_tokens(file, fp, ref, rp);
    cap_ref_copies(mt, ref.size() * kMaxRefCopyFactor - tok.shared);  // a state's size is far below 2^62

    PatchMap map;
    map.original_size = file.size();
    map.original_xxh128 = hash128_of(file);
    map_groups(mt, index, fp, map);
    plan_stream(fp, mt, tok, 0, map);  // the regions
    bool any_in_meta = false;
    for (const PatchGroup& g : map.groups) any_in_meta |= g.parts[0].in_meta;
    map.dictionary = dictionary_extents(rp, ref_groups, any_in_meta);
    const std::optional<TokenPlan> tokens = plan_tokens(file, fp, mt, tok, map, ref);
    Bytes head = encode_head(file, ref, map, tokens ? &*tokens : nullptr);
    const uint64_t head_bytes = head.size();
    PatchMap layout = map;
    layout.regions.clear();
    ParsedFile sp = plan_stream(fp, mt, tok, head_bytes, layout);

    StreamSource stream(file, std::move(head), map);
    CompressOptions so = opt;
    so.codec.patch_rows = true;
    so.properties.push_back({kReferenceProperty, identify_reference(ref, ref_name).value(), true});
    so.properties.push_back({kPatchedSizeProperty, std::to_string(file.size()), false});
    PatchResult res;
    res.map_bytes = head_bytes;
    res.stored = compress_parsed(stream, sp, out, so);
    res.original_bytes = file.size();
    res.compressed_bytes = res.stored.compressed_bytes;
    res.file_cells = mt.file_cells;
    res.shared_cells = mt.shared_cells;
    res.shared_token_bytes = tok.shared;
    res.predicted_tokens = map.tokens ? tokens->predicted : 0;
    return res;
}

}  // namespace stz
