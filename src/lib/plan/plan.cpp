#include "plan.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace stz {

namespace {

// Container bytes per element of the layout (docs/FORMAT.md), used for an upper bound of
// the overhead: the header is counted uncompressed (the writer compresses it only when
// that is smaller), every chunk with its record, its checksums and its index entry.
constexpr uint64_t kHeaderFixedBytes = 8 + 2 + 2 + 4 + 8 /* hash */ + 8 + 2 + 8 + 2 + 2 + 4;
constexpr uint64_t kEndBytes = 1 + 4 + 8 + 8 + 8 /* record */ + 8 + 8 /* trailer */;
constexpr uint64_t kChunkRecordBytes = 1 + 4 + 8 + 4 + 4 + 1 + 8 + 8 /* record */ + 20 /* index entry */;
constexpr uint64_t kStageBytes = 1 + 4 + 1;  // + parameters
constexpr uint64_t kExpansionConstant = 1024;
constexpr uint64_t kExpansionDivisor = 1024;  // 0.1 %

uint64_t entry_bytes(const Section& s) { return 2 + s.name.size() + 3 + 5 * 8; }

// A section as written, and what it is coded as: itself, or for a gathered run of K (or V)
// layers [head, body] x n, the body's pipeline over records of head + body bytes, or for a
// run [body, zero gap] x n, trim (which drops the gaps) and then the body's pipeline over
// the bodies back to back.
// (One Section per written section: a hostile file may have a million.)
struct Written {
    Section section;              // the header entry
    std::optional<Section> body;  // gathered: the layer whose pipeline and row shape apply
    uint64_t record_bytes = 0;
    uint32_t record_head = 0;
    uint64_t gap_bytes = 0;  // [body, gap] x n: the zero bytes after each body (record_bytes is 0)
    const Section& coded_as() const { return body ? *body : section; }
};

std::vector<Written> as_written(std::vector<Section> sections) {
    std::vector<Written> out;
    out.reserve(sections.size());
    for (Section& s : sections) out.push_back(Written{std::move(s), std::nullopt, 0, 0, 0});
    return out;
}

DataShape coded_shape(const Written& w) {
    DataShape sh = w.coded_as().shape();
    sh.record_bytes = w.record_bytes;
    sh.record_head = w.record_head;
    return sh;
}

// The largest record any chunk of the section can get (alternatives, or store).
uint64_t record_bytes(const SectionPlan& sp) {
    uint64_t worst = kStageBytes;  // store: one stage, no parameters
    for (const Pipeline& p : sp.alternatives) {
        uint64_t n = 0;
        for (const Stage& st : p.stages) n += kStageBytes + st.params.size();
        worst = std::max(worst, n);
    }
    return kChunkRecordBytes + worst;
}

// Pipeline and chunk step of one section; rows too large for a chunk make it plain bytes.
SectionPlan plan_section(const Written& w, const CodecChoice& codec, uint64_t target, uint64_t& step) {
    SectionPlan sp;
    sp.spec = choose_pipeline(w.coded_as(), codec);
    sp.shape = coded_shape(w);
    step = target;
    if (w.gap_bytes) {  // [body, zero gap] records: trim, then the body's pipeline on the bodies' rows
        const uint64_t body = w.coded_as().size, record = body + w.gap_bytes;
        step = std::max<uint64_t>(1, target / record) * record;
        DataShape records = sp.shape;
        records.row_bytes = record;
        records.keep_bytes = body;
        const Pipeline trim = parse_pipeline("trim", records);
        for (Pipeline& p : parse_alternatives(sp.spec, sp.shape)) {
            p.stages.insert(p.stages.begin(), trim.stages.begin(), trim.stages.end());
            sp.alternatives.push_back(std::move(p));
        }
        sp.spec = "trim+" + sp.spec;
        sp.shape = records;
        return sp;
    }
    if (sp.shape.record_bytes) {  // gathered runs are at most one target long: whole records per chunk
        step = std::max<uint64_t>(1, target / sp.shape.record_bytes) * sp.shape.record_bytes;
    } else if (sp.shape.row_bytes && sp.shape.row_bytes <= kMaxChunkRaw) {
        step = std::max<uint64_t>(1, target / sp.shape.row_bytes) * sp.shape.row_bytes;  // whole rows per chunk
    } else if (sp.shape.row_bytes) {
        sp.shape.row_bytes = sp.shape.keep_bytes = 0;
        sp.rows_as_bytes = true;
    }
    sp.alternatives = parse_alternatives(sp.spec, sp.shape);
    return sp;
}

// A plan for the given written sections (which tile the file).
Plan plan_sections(const ParsedFile& parsed, std::vector<Written> written, const CodecChoice& codec, uint64_t target,
                   const std::string& note) {
    Plan plan;
    plan.chunk_bytes = static_cast<uint32_t>(target);
    ContainerHeader& h = plan.header;
    h.format = parsed.format;
    h.format_version = parsed.version ? *parsed.version : -1;
    h.detail = parsed.detail;
    h.note = note;
    for (const Written& w : written) h.original_size += w.section.size;
    plan.header_bound = kHeaderFixedBytes + h.format.size() + h.detail.size() + h.note.size();
    plan.overhead_bound = plan.header_bound + kEndBytes;
    h.sections.reserve(written.size());
    for (uint32_t si = 0; si < written.size(); ++si) {
        uint64_t step = 0;
        plan.sections.push_back(plan_section(written[si], codec, target, step));
        h.sections.push_back(std::move(written[si].section));
        const Section& s = h.sections.back();
        const uint64_t per_chunk = record_bytes(plan.sections.back());
        plan.header_bound += entry_bytes(s);
        plan.overhead_bound += entry_bytes(s);
        for (uint64_t off = 0; off < s.size; off += step) {
            plan.chunks.push_back({si, s.offset + off, static_cast<uint32_t>(std::min(step, s.size - off))});
            plan.overhead_bound += per_chunk;
        }
    }
    return plan;
}

// Runs of two or more adjacent sections smaller than kTinySectionBytes become one bytes section.
std::vector<Section> merge_tiny_runs(const std::vector<Section>& in, std::vector<uint32_t>& written_of) {
    std::vector<Section> out;
    written_of.clear();
    for (size_t i = 0; i < in.size();) {
        size_t j = i;
        while (j < in.size() && in[j].size < kTinySectionBytes) ++j;
        if (j - i >= 2) {
            Section m;
            m.name = in[i].name + "..+" + std::to_string(j - i - 1);
            m.kind = SectionKind::Meta;
            m.offset = in[i].offset;
            m.size = in[j - 1].offset + in[j - 1].size - in[i].offset;
            for (size_t k = i; k < j; ++k) written_of.push_back(static_cast<uint32_t>(out.size()));
            out.push_back(std::move(m));
            i = j;
        } else {
            written_of.push_back(static_cast<uint32_t>(out.size()));
            out.push_back(in[i]);
            ++i;
        }
    }
    return out;
}

// Gathering: K layers are small on small models (16-512 KB here) and each is
// its own coding unit, paying the entropy tables and the coder's fixed cost per layer. In the
// files they alternate with small per-layer headers: [hdr, K] x n_layer. A run of such pairs
// with equal head sizes and equal body layouts is written as one section of records (the
// heads ride along in planes' record heads), at most kMaxGatherBytes long. Only sections
// whose alternatives all start with a `planes` graph (or qctx, for quant K) are gathered: the
// other codecs know no records.
constexpr uint64_t kMinGatherBlockBody = 16u << 10;

bool gatherable(const Section& body, const CodecChoice& codec, std::map<std::string, bool>& by_spec) {
    if ((body.kind != SectionKind::KvKey && body.kind != SectionKind::KvValue) || !body.size ||
        elem_type_info(body.type).kind == ElemKind::Bytes)
        return false;
    // Quant blocks whose quants go through zstd (fast): zstd codes an input under 16 KiB with
    // stronger parameters than a larger one, so gathering small quant layers made them larger
    // (corpus: q4_1 K of 10 KB layers +10 %, iq4_nl +4 %): only layers of 16 KiB and more.
    // qctx's adaptive models gain from the run instead (corpus hd32 files: 1.1 KB each).
    const std::string spec = choose_pipeline(body, codec);
    if (elem_type_info(body.type).kind == ElemKind::Block && body.size < kMinGatherBlockBody && spec.rfind("qctx", 0) != 0)
        return false;
    auto it = by_spec.find(spec);
    if (it == by_spec.end()) {
        const std::vector<Pipeline> alts = parse_alternatives(spec, body.shape());
        // headdup before planes keeps rows (gathered bodies back to back), not records:
        // gather_runs pairs no head with a body that has repeats.
        const bool all_planes = !alts.empty() && std::all_of(alts.begin(), alts.end(), [](const Pipeline& p) {
            const size_t first = !p.stages.empty() && p.stages[0].codec->name() == "headdup" ? 1 : 0;
            return p.stages.size() > first && (p.stages[first].codec->name() == "planes" || p.stages[first].codec->name() == "qctx");
        });
        it = by_spec.emplace(spec, all_planes).first;
    }
    return it->second;
}

bool same_layout(const Section& a, const Section& b) {
    return a.kind == b.kind && a.type == b.type && a.size == b.size && a.rows == b.rows &&
           a.row_elems == b.row_elems && a.transposed == b.transposed && a.filled_elems == b.filled_elems &&
           a.repeat_seg == b.repeat_seg && a.repeat_group == b.repeat_group;
}

constexpr uint64_t kMaxGatherHead = 64;
// A gathered run stops at 1 MiB (or the chunk target if smaller): larger units were no
// smaller (corpus total +0.003 % at 1 MiB vs 4 MiB) but decoded slower (planes and zstd
// windows out of cache; corpus decode 0.65x -> 0.77x in-process zstd:3 at 1 MiB), and keep
// chunks for the other threads.
constexpr uint64_t kMaxGatherBytes = 1u << 20;

// Layers between zero gaps: the full KV buffer of a 2023 file holds each K layer's n_past
// rows, then zeros up to n_ctx ([K, zeros] x n_layer; np20 of a 512 context: 2.5 KB of K,
// then 62 KB of zeros, 32 times). Each K layer coded alone paid its own order-1 tables.
// Such a run is one section: trim drops the gaps (every dropped byte checked to be zero, else
// it keeps them and the file only codes worse), the body's pipeline codes the bodies back to
// back. The bodies of a run are at most kMaxGatherBytes, the run at most one chunk target.
size_t gapped_run(const std::vector<Section>& in, size_t i, const CodecChoice& codec, uint64_t target,
                  std::map<std::string, bool>& by_spec) {
    if (i + 1 >= in.size()) return 0;
    const Section &body = in[i], &gap = in[i + 1];
    if (gap.kind != SectionKind::Slack || !gap.size || body.repeat_group || body.shape().keep_bytes) return 0;
    // The bodies need no records: the max preset's alternatives (chanctx, lzma) take them too
    // (corpus-legacy A files 0.5-6.7 % smaller with max).
    const bool max_kv = codec.preset == Preset::Max && codec.all.empty() && !codec.groups.count("kv") &&
                        (body.kind == SectionKind::KvKey || body.kind == SectionKind::KvValue) &&
                        elem_type_info(body.type).kind != ElemKind::Bytes;
    if (!max_kv && !gatherable(body, codec, by_spec)) return 0;
    const uint64_t record = body.size + gap.size;
    if (record > kMaxChunkRaw || record > target) return 0;  // trim's rows are at most a chunk
    size_t n = 0;
    for (size_t j = i; j + 1 < in.size() && (n + 1) * body.size <= kMaxGatherBytes && (n + 1) * record <= target;
         j += 2, ++n)
        if (!same_layout(in[j], body) || in[j + 1].kind != SectionKind::Slack || in[j + 1].size != gap.size) break;
    return n;
}

std::vector<Written> gather_runs(const std::vector<Section>& in, const CodecChoice& codec, uint64_t target,
                                 std::vector<uint32_t>& written_of) {
    std::vector<Written> out;
    std::map<std::string, bool> by_spec;
    const uint64_t limit = std::min(target, kMaxGatherBytes);
    written_of.clear();
    written_of.reserve(in.size());
    for (size_t i = 0; i < in.size();) {
        if (const size_t n = gapped_run(in, i, codec, target, by_spec); n >= 2) {
            const Section &body = in[i], &last_gap = in[i + 2 * n - 1];
            Written w{body, body, 0, 0, last_gap.size};
            w.section.name = body.name + ".." + last_gap.name;  // "kv.k[0]..kv.k[31].unused"
            w.section.offset = body.offset;
            w.section.size = last_gap.offset + last_gap.size - body.offset;
            // The header entry: n rows (layers) of body + gap, of which the body's bytes are filled.
            const uint64_t elem = elem_type_info(body.type).block_bytes;
            const bool whole_elems = elem && body.size % elem == 0 && last_gap.size % elem == 0;
            w.section.rows = whole_elems ? n : 0;
            w.section.row_elems = whole_elems ? (body.size + last_gap.size) / elem : 0;
            w.section.filled_elems = whole_elems ? body.size / elem : 0;
            w.section.transposed = false;
            for (size_t k = 0; k < 2 * n; ++k) written_of.push_back(static_cast<uint32_t>(out.size()));
            out.push_back(std::move(w));
            i += 2 * n;
            continue;
        }
        // [head, body] pairs from i (head = 0: bodies back to back from i).
        uint64_t head = 0;
        if (i + 1 < in.size() && in[i].size <= kMaxGatherHead && !in[i + 1].repeat_group &&
            !gatherable(in[i], codec, by_spec) && gatherable(in[i + 1], codec, by_spec))
            head = in[i].size;
        const size_t stride = head ? 2 : 1;
        const Section& body = in[i + stride - 1];
        size_t n = 0;
        if (head || gatherable(body, codec, by_spec)) {
            const uint64_t record = head + body.size;
            for (size_t j = i; j + stride - 1 < in.size() && (n + 1) * record <= limit; j += stride, ++n)
                if ((head && in[j].size != head) || !same_layout(in[j + stride - 1], body)) break;
        }
        if (n < 2) {
            written_of.push_back(static_cast<uint32_t>(out.size()));
            out.push_back(Written{in[i], std::nullopt, 0, 0, 0});
            ++i;
            continue;
        }
        const Section& last = in[i + n * stride - 1];
        Written w{body, body};  // body: the header entry's fields, then its range
        w.section.name = body.name + ".." + last.name;  // "kv.k[0]..kv.k[4]"
        w.section.offset = in[i].offset;
        w.section.size = last.offset + last.size - in[i].offset;
        if (head) {  // the header entry has no row structure: the heads interrupt the rows
            w.section.rows = w.section.row_elems = w.section.filled_elems = 0;
            w.record_bytes = head + body.size;
            w.record_head = static_cast<uint32_t>(head);
        } else {  // bodies back to back: one section of all their rows
            w.section.rows = body.rows * n;
            w.body.reset();
        }
        for (size_t k = 0; k < n * stride; ++k) written_of.push_back(static_cast<uint32_t>(out.size()));
        out.push_back(std::move(w));
        i += n * stride;
    }
    return out;
}

struct Cost {
    uint64_t overhead = 0, header = 0, chunks = 0;
};

// The overhead bound of writing `sections` as they are, without building the plan (a
// hostile file may have millions of sections: pipelines are parsed once per distinct
// spec and shape, not per section).
Cost estimate(const ParsedFile& parsed, const std::vector<Written>& sections, const CodecChoice& codec, uint64_t target,
              size_t note_bytes) {
    Cost c;
    c.header = kHeaderFixedBytes + parsed.format.size() + parsed.detail.size() + note_bytes;
    std::map<std::string, std::pair<uint64_t, uint64_t>> seen;  // spec + shape -> (record bytes, step)
    for (const Written& w : sections) {
        const Section& s = w.section;
        c.header += entry_bytes(s);
        if (!s.size) continue;
        const DataShape sh = coded_shape(w);
        std::string key = choose_pipeline(w.coded_as(), codec) + "\n" + std::to_string(int(sh.kind)) + "," +
                          std::to_string(sh.elem_bytes) + "," + std::to_string(sh.block_head) + "," +
                          std::to_string(sh.row_bytes) + "," + std::to_string(sh.keep_bytes) + "," +
                          std::to_string(sh.transposed) + "," + std::to_string(sh.record_bytes) + "," +
                          std::to_string(sh.record_head) + "," + std::to_string(w.gap_bytes) + "," +
                          std::to_string(w.gap_bytes ? w.coded_as().size : 0);
        auto it = seen.find(key);
        if (it == seen.end()) {
            uint64_t step = 0;
            SectionPlan sp = plan_section(w, codec, target, step);
            it = seen.emplace(std::move(key), std::make_pair(record_bytes(sp), step)).first;
        }
        const auto [record, step] = it->second;
        const uint64_t n = (s.size - 1) / step + 1;
        c.chunks += n;
        c.overhead += n * record;
    }
    c.overhead += c.header + kEndBytes;
    return c;
}

bool fits(const Cost& c, uint64_t allowance) {
    return c.overhead <= allowance && c.header <= kMaxHeaderBytes && c.chunks < UINT32_MAX;
}

std::string fallback_note(const std::string& note, const std::string& what, size_t parsed_sections, uint64_t overhead) {
    std::string n = "container overhead of " + std::to_string(parsed_sections) + " sections (up to " +
                    std::to_string(overhead) + " B) not worth it: " + what;
    return note.empty() ? n : note + "; " + n;
}

}  // namespace

const char* plan_layout_name(PlanLayout l) {
    return l == PlanLayout::AsParsed ? "as parsed" : l == PlanLayout::TinyMerged ? "tiny sections merged" : "opaque";
}

uint64_t expansion_allowance(uint64_t input_bytes) { return kExpansionConstant + input_bytes / kExpansionDivisor; }
uint64_t structure_allowance(uint64_t input_bytes) {
    return 4 * kExpansionConstant + std::min(input_bytes / 8, (64u << 10) + input_bytes / 256);
}

Plan make_plan(const ParsedFile& parsed, const CodecChoice& codec, uint32_t chunk_bytes, PlanLimit limit) {
    uint64_t total = 0;
    for (const Section& s : parsed.sections) total += s.size;
    check_tiling(parsed.sections, total);
    // The reader rejects chunks over kMaxChunkRaw: the target never exceeds it.
    const uint64_t target = std::clamp<uint64_t>(chunk_bytes, 4096, kMaxChunkRaw);
    const uint64_t allowance = limit == PlanLimit::Strict ? expansion_allowance(total) : structure_allowance(total);

    // The fallback notes are at most this long (counted in the estimates before they are written).
    const size_t note_bytes = parsed.note.size() + 160;
    std::vector<uint32_t> gathered_of;
    std::vector<Written> gathered = gather_runs(parsed.sections, codec, target, gathered_of);
    const Cost as_parsed = estimate(parsed, gathered, codec, target, note_bytes);
    if (fits(as_parsed, allowance)) {
        Plan plan = plan_sections(parsed, std::move(gathered), codec, target, parsed.note);
        plan.written_of = std::move(gathered_of);
        return plan;
    }
    std::vector<Written>().swap(gathered);  // the fallbacks build their own list

    std::vector<uint32_t> written_of;
    std::vector<Section> merged = merge_tiny_runs(parsed.sections, written_of);
    if (merged.size() < parsed.sections.size() &&
        fits(estimate(parsed, as_written(merged), codec, target, note_bytes), allowance)) {
        std::string note = fallback_note(parsed.note, "tiny sections merged into " + std::to_string(merged.size()),
                                         parsed.sections.size(), as_parsed.overhead);
        Plan plan = plan_sections(parsed, as_written(std::move(merged)), codec, target, note);
        plan.written_of = std::move(written_of);
        plan.layout = PlanLayout::TinyMerged;
        return plan;
    }

    // One opaque section, in chunks large enough that their records stay within the allowance.
    SectionList one;
    if (total) one.add("data", SectionKind::Opaque, total);
    const uint64_t min_step = (kChunkRecordBytes + 64) * kExpansionDivisor;
    std::string note = fallback_note(parsed.note, "stored as one opaque section", parsed.sections.size(), as_parsed.overhead);
    Plan plan = plan_sections(parsed, as_written(std::move(one.sections())), codec,
                              std::clamp<uint64_t>(target, min_step, kMaxChunkRaw), note);
    plan.written_of.assign(parsed.sections.size(), 0);
    plan.layout = PlanLayout::Opaque;
    return plan;
}

}  // namespace stz
