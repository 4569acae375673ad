// 2024+ files: session 'ggsn' v8-v10, sequence 'ggsq' v1-v4, raw llama_state_get_data blobs
// (architecture name first) and in-memory sequence blobs (D8 3C 14 AF), mainline and
// ik_llama.cpp (STATE-FORMATS.md §5.10-§8, recognition §10.1). Versions reuse numbers across projects
// and sub-variants share a version, so each candidate grammar is tried and the first one
// that accounts for every byte up to EOF wins.
#include <functional>

#include "parsers.hpp"
#include "records.hpp"

namespace stz {

namespace {

struct Grammar {
    const char* detail;
    std::function<void(SourceReader&, SectionList&, ParsedFile&, RecordFacts&)> body;
};

void rng_string(SourceReader& r, SectionList& out) {
    uint64_t at = r.pos();
    uint32_t len = r.u32("rng length");
    if (len < 1000 || len > 65536) throw DataError("bad rng text length", at);
    uint8_t c = r.u8("rng text");
    if (c < '0' || c > '9') throw DataError("rng text is not decimal digits", at + 4);
    r.seek(at + 4);
    r.skip(len, "rng text");
    out.add("rng", SectionKind::Rng, 4 + uint64_t(len));
}

// Peeks whether an ik rng string (u32 length ~6.7k + digits) follows the arch name.
bool ik_rng_follows(SourceReader& r) {
    uint64_t at = r.pos();
    try {
        uint32_t len = r.u32("");
        uint8_t c = r.u8("");
        r.seek(at);
        return len >= 4000 && len <= 65536 && c >= '0' && c <= '9';
    } catch (const DataError&) {
        r.seek(at);
        return false;
    }
}

KvGrammar mainline(bool n_stream, uint32_t ext) { return KvGrammar{n_stream, ext, false, 0}; }
KvGrammar ik(int version) { return KvGrammar{false, 0, true, version}; }

Grammar whole_state(const char* detail, bool rng, bool outputs, KvGrammar g) {
    return {detail, [=](SourceReader& r, SectionList& out, ParsedFile& pf, RecordFacts& f) {
                pf.arch = parse_arch(r, out);
                if (rng) rng_string(r, out);
                if (outputs) parse_outputs_block(r, out);
                if (r.at_end()) return;  // no memory module
                if (g.ik) {
                    parse_kv_record(r, out, g, "", f);
                    if (!r.at_end()) throw DataError("unexpected bytes after the KV record", r.pos());
                } else {
                    parse_memory_records(r, out, g, f);
                }
            }};
}

Grammar seq_state(const char* detail, KvGrammar g) {
    return {detail, [=](SourceReader& r, SectionList& out, ParsedFile&, RecordFacts& f) {
                if (r.at_end()) throw DataError("sequence state missing", r.pos());
                if (g.ik) {
                    parse_kv_record(r, out, g, "", f);
                    if (!r.at_end()) throw DataError("unexpected bytes after the KV record", r.pos());
                } else {
                    parse_memory_records(r, out, g, f);
                }
            }};
}

// Sequence files v1 (2024-04 .. 2024-07, STATE-FORMATS.md §6.3).
Grammar seq_v1() {
    return {"seq v1", [](SourceReader& r, SectionList& out, ParsedFile&, RecordFacts& f) {
                uint64_t start = r.pos();
                if (r.u32("size_t size") != 8) throw DataError("size_t size is not 8", start);
                uint32_t cells = r.u32("cell count"), n_layer = r.u32("n_layer"), n_embd_v = r.u32("n_embd_v_gqa");
                if (n_layer == 0 || n_layer > 512 || cells > r.remaining() / 4) throw DataError("bad seq v1 header", start);
                r.skip(uint64_t(cells) * 4, "positions");
                out.add("cells", SectionKind::Cells, r.pos() - start);
                f.cells = cells;
                f.n_layer = n_layer;
                for (uint32_t il = 0; il < n_layer; ++il) {
                    uint64_t at = r.pos();
                    int32_t t = r.i32("K header");
                    uint64_t row = r.u64("K header");
                    auto et = ggml_type_checked(t, at);
                    uint64_t elems = row_elems_checked(et, row, at);
                    if (row && cells > r.remaining() / row) throw DataError("K rows past the end", at);
                    out.add("kv.k[" + std::to_string(il) + "].hdr", SectionKind::Meta, 12);
                    if (cells) out.add_rows("kv.k[" + std::to_string(il) + "]", SectionKind::KvKey, et, cells, elems);
                    r.skip(uint64_t(cells) * row, "K rows");
                    if (!f.k_type) f.k_type = et;
                }
                for (uint32_t il = 0; il < n_layer; ++il) {
                    uint64_t at = r.pos();
                    int32_t t = r.i32("V header");
                    uint64_t x = r.u64("V header");
                    auto et = ggml_type_checked(t, at);
                    const auto& info = elem_type_info(et);
                    out.add("kv.v[" + std::to_string(il) + "].hdr", SectionKind::Meta, 12);
                    if (info.block_elems == 1 && x == info.block_bytes && n_embd_v > 1) {
                        uint64_t bytes = checked_mul(uint64_t(n_embd_v) * cells, x, "V size", at);
                        if (bytes > r.remaining()) throw DataError("V past the end", at);
                        if (bytes) out.add_rows("kv.v[" + std::to_string(il) + "]", SectionKind::KvValue, et, n_embd_v, cells, true);
                        r.skip(bytes, "V");
                    } else {
                        uint64_t elems = row_elems_checked(et, x, at);
                        if (x && cells > r.remaining() / x) throw DataError("V rows past the end", at);
                        if (cells) out.add_rows("kv.v[" + std::to_string(il) + "]", SectionKind::KvValue, et, cells, elems);
                        r.skip(uint64_t(cells) * x, "V rows");
                    }
                }
            }};
}

std::optional<ParsedFile> try_grammars(InputSource& in, const std::vector<Grammar>& gs, const ParsedFile& base,
                                       const SectionList& head, uint64_t body_start) {
    std::string errors;
    for (const auto& g : gs) {
        ParsedFile pf = base;
        SectionList out = head;
        RecordFacts f;
        SourceReader r(in, body_start);
        try {
            g.body(r, out, pf, f);
            if (!r.at_end()) throw DataError("unexpected bytes after the state", r.pos());
        } catch (const DataError&) {
            continue;
        }
        pf.detail = g.detail;
        pf.sections = std::move(out.sections());
        if (f.cells || f.n_layer) pf.n_cells = f.cells;
        if (f.n_layer) pf.n_layer = f.n_layer;
        return pf;
    }
    return std::nullopt;
}

}  // namespace

std::optional<ParsedFile> parse_mainline(InputSource& in, const ParseHints&) {
    if (in.size() < 8) return std::nullopt;
    SourceReader r(in);
    uint32_t magic = r.u32("magic");
    ParsedFile base;
    SectionList head;
    std::vector<Grammar> gs;
    const bool session = magic == 0x6767736E, seq = magic == 0x67677371;
    if (session || seq) {
        uint32_t version = r.u32("version");
        base.format = session ? "ggsn" : "ggsq";
        base.version = version;
        if (session && version < 8) return std::nullopt;  // hparams-era files: legacy parser
        uint32_t n_tok = r.u32("token count");
        if (n_tok > r.remaining() / 4) return std::nullopt;
        head.add("header", SectionKind::Header, 12);
        if (n_tok) head.add_rows("tokens", SectionKind::Tokens, ElemType::I32, 1, n_tok);
        base.n_tokens = n_tok;
        r.skip(uint64_t(n_tok) * 4, "tokens");
        if (session) {
            bool ik_like = false;
            if (version >= 9) {  // look behind the arch name for an rng string (ik)
                SourceReader p(in, r.pos());
                SectionList tmp;
                try { parse_arch(p, tmp); ik_like = ik_rng_follows(p); } catch (const DataError&) {}
            }
            if (version == 8) gs = {whole_state("session v8", true, true, mainline(false, 0)),
                                    whole_state("ik session v8", true, true, ik(8))};
            else if (version == 9 && ik_like) gs = {whole_state("ik session v9", true, true, ik(9))};
            else if (version == 9) gs = {whole_state("session v9c", false, false, mainline(true, 0)),
                                         whole_state("session v9c, M-RoPE cells", false, false, mainline(true, 8)),
                                         whole_state("session v9b", false, true, mainline(true, 0)),
                                         whole_state("session v9a", false, true, mainline(false, 0))};
            else if (version == 10 && ik_like) gs = {whole_state("ik session v10", true, true, ik(10))};
            else if (version == 10) gs = {whole_state("session v10", false, false, mainline(true, 0)),
                                          whole_state("session v10, cell ext", false, false, mainline(true, 12))};
        } else {
            if (version == 1) gs = {seq_v1()};
            else if (version == 2) gs = {seq_state("seq v2", mainline(true, 0)), seq_state("seq v2, M-RoPE cells", mainline(true, 8)),
                                         seq_state("seq v2 (2024-25, no streams)", mainline(false, 0)),
                                         seq_state("ik seq v2", ik(8))};
            else if (version == 3) gs = {seq_state("seq v3", mainline(true, 0)), seq_state("seq v3, cell ext", mainline(true, 12)),
                                         seq_state("ik seq v3", ik(9))};
            else if (version == 4) gs = {seq_state("ik seq v4", ik(10))};
        }
        if (gs.empty()) return std::nullopt;
        return try_grammars(in, gs, base, head, r.pos());
    }
    if (magic == 0xAF143CD8) {  // in-memory sequence blob: magic + i32 seq id
        base.format = "seqraw";
        head.add("header", SectionKind::Header, 8);
        gs = {seq_state("sequence blob", mainline(true, 0)), seq_state("sequence blob, M-RoPE cells", mainline(true, 8)),
              seq_state("sequence blob, cell ext", mainline(true, 12))};
        return try_grammars(in, gs, base, head, 8);
    }
    // Raw whole-state blob: architecture name first (v8+).
    SourceReader p(in, 0);
    SectionList tmp;
    bool ik_like = false;
    try {
        parse_arch(p, tmp);
        ik_like = ik_rng_follows(p);
    } catch (const DataError&) {
        return std::nullopt;
    }
    base.format = "raw";
    if (ik_like) gs = {whole_state("raw blob, v8 (rng)", true, true, mainline(false, 0)), whole_state("raw ik blob v10", true, true, ik(10)),
                       whole_state("raw ik blob v9", true, true, ik(9)), whole_state("raw ik blob v8", true, true, ik(8))};
    else gs = {whole_state("raw blob, v9c/v10", false, false, mainline(true, 0)),
               whole_state("raw blob, v9c M-RoPE cells", false, false, mainline(true, 8)),
               whole_state("raw blob, v10 cell ext", false, false, mainline(true, 12)),
               whole_state("raw blob, v9b", false, true, mainline(true, 0)),
               whole_state("raw blob, v9a", false, true, mainline(false, 0))};
    return try_grammars(in, gs, base, head, 0);
}

}  // namespace stz
