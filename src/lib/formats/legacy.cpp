// 2023-era files (STATE-FORMATS.md §3-§5.9, §10-§11): raw state blobs that start with the mt19937 text
// (full-buffer flavour A, compact flavour B, padded save-load-state dumps, the seed's
// wrapper) and session files v0-v7 with their raw llama_hparams block.
// Nothing here records the model geometry except the hparams; where it is missing it is
// inferred from the zero pattern and verified, else the K/V bytes stay unsplit.
#include "legacy_geometry.hpp"
#include "parsers.hpp"

namespace stz {

namespace {

constexpr uint64_t kRngBuf = 65536;
constexpr uint64_t kHeadroom = 2u << 20;  // the 2 MiB the 2023 arena reserved beyond K and V

struct Hparams {
    uint32_t size = 0;
    uint64_t n_ctx = 0, n_embd = 0, n_head = 0, n_head_kv = 0, n_layer = 0;
};

bool digits_at(InputSource& in, uint64_t off) {
    if (off + 8 > in.size()) return false;
    uint8_t b[8];
    in.read_at(off, b, 8);
    for (uint8_t c : b)
        if (!((c >= '0' && c <= '9') || c == ' ')) return false;
    return true;
}

// Candidate hparams layouts per session version (STATE-FORMATS.md §5.3); offsets of the fields we use.
struct Layout { uint32_t size, ctx, embd, head, head_kv, layer; };
std::vector<Layout> layouts_for(uint32_t version) {
    const Layout l32{32, 4, 8, 16, 0, 20}, l40{40, 4, 8, 16, 0, 20}, l48a{48, 4, 8, 16, 20, 24}, l52a{52, 4, 8, 16, 20, 24},
        l48g{48, 8, 12, 16, 20, 24}, l52g{52, 8, 12, 16, 20, 24}, l52n{52, 0, 12, 16, 20, 24};
    switch (version) {
        case 0: return {l32};
        case 1: return {l32, l40, l48a, l52a, l48g, l52g, l52n};
        case 2: return {l52n, {60, 0, 12, 16, 20, 24}, {64, 0, 12, 16, 20, 24}};
        case 3: return {{64, 0, 12, 16, 20, 24}, {72, 0, 12, 16, 20, 24}, {80, 0, 12, 16, 20, 24}};
        case 4: {
            std::vector<Layout> v;
            for (uint32_t h : {80, 84, 92, 96, 100, 116, 120}) v.push_back({h, 0, 12, 16, 20, 24});
            return v;
        }
        case 5: return {{120, 0, 12, 16, 20, 24}};
        case 6: {
            std::vector<Layout> v;
            for (uint32_t h : {120, 124, 152, 156, 164, 168, 176}) v.push_back({h, 0, 12, 16, 20, 24});
            v.push_back({3236, 0, 12, 52, 1076, 16});
            return v;
        }
        case 7: return {{6308, 0, 12, 52, 2100, 16}};
        default: return {};
    }
}

bool plausible(const Hparams& h) {
    return h.n_layer && h.n_layer <= 512 && h.n_embd && h.n_embd <= (1u << 20) && h.n_head && h.n_head <= 4096 &&
           h.n_embd % h.n_head == 0 && h.n_head_kv && h.n_head % h.n_head_kv == 0;
}

// The common start of a state blob of the padded-rng era: rng, logits, embedding.
void padded_prefix(SourceReader& r, SectionList& out) {
    uint64_t at = r.pos();
    uint64_t rng = r.u64("rng length");
    if (rng < 1000 || rng > kRngBuf) throw DataError("bad rng length", at);
    r.skip(kRngBuf, "rng buffer");
    out.add("rng", SectionKind::Rng, 8 + rng);
    out.add("rng.pad", SectionKind::Slack, kRngBuf - rng);
    const uint64_t logits_cap = r.u64("logits capacity");
    const uint64_t logits_size = r.u64("logits size");
    if (logits_size > logits_cap || logits_cap > r.remaining() / 4) throw DataError("bad logits size", at);
    out.add("logits.hdr", SectionKind::Meta, 16);
    if (logits_cap) {
        Section& s = out.add_rows("logits", SectionKind::Logits, ElemType::F32, 1, logits_cap);
        if (logits_size < logits_cap) s.filled_elems = logits_size;
    }
    r.skip(logits_cap * 4, "logits");
    const uint64_t embd = r.u64("embedding size");
    if (embd > r.remaining() / 4) throw DataError("bad embedding size", r.pos() - 8);
    out.add("embeddings.size", SectionKind::Meta, 8);
    if (embd) out.add_rows("embeddings", SectionKind::Embeddings, ElemType::F32, 1, embd);
    r.skip(embd * 4, "embedding");
}

// K and V of a known geometry: per-layer sections; K rows beyond n_past and V columns
// beyond n_past are expected to be zero (trim verifies that, byte for byte).
void kv_layers(SectionList& out, const LegacyGeometry& g, ElemType t, bool full_buffer, uint64_t rows_k) {
    const uint64_t elt = elem_type_info(t).block_bytes;
    for (uint64_t l = 0; l < g.n_layer; ++l) {
        std::string n = "kv.k[" + std::to_string(l) + "]";
        if (g.n_past) out.add_rows(n, SectionKind::KvKey, t, g.n_past, g.n_embd);
        if (full_buffer && rows_k > g.n_past) out.add(n + ".unused", SectionKind::Slack, (rows_k - g.n_past) * g.n_embd * elt);
    }
}
void v_layers(SectionList& out, const LegacyGeometry& g, ElemType t, uint64_t cols) {
    for (uint64_t l = 0; l < g.n_layer; ++l) {
        Section& s = out.add_rows("kv.v[" + std::to_string(l) + "]", SectionKind::KvValue, t, g.n_embd, cols, true);
        if (g.n_past < cols) s.filled_elems = g.n_past;
    }
}

// Flavour A arena (STATE-FORMATS.md §3.5): object+tensor headers, K, headers, V, untouched headroom.
void full_arena(SourceReader& r, SectionList& out, ParsedFile& pf, uint64_t kv_size, std::optional<Hparams> hp,
                std::optional<uint64_t> n_past_hint, const ParseHints& hints) {
    uint64_t a = r.pos();
    if (kv_size > r.remaining() || kv_size < kHeadroom) throw DataError("KV arena larger than the file", a - 12);
    uint64_t offs = r.u64("K object"), obj_size = r.u64("K object");
    r.seek(a + 32);
    int32_t type_id = r.i32("K tensor");
    r.u32("K tensor");
    uint64_t n_elements = r.u64("K tensor");
    if (offs != 32 || (type_id != 0 && type_id != 1)) throw DataError("not a full-buffer KV arena", a);
    ElemType t = type_id == 1 ? ElemType::F16 : ElemType::F32;
    uint64_t elt = type_id == 1 ? 2 : 4;
    uint64_t kb = n_elements * elt;
    if (n_elements == 0 || n_elements > kv_size / elt) throw DataError("bad K element count", a + 40);
    uint64_t T = obj_size - kb;
    if (T != 176 && T != 208) throw DataError("unknown ggml_tensor size", a + 8);
    if (64 + 2 * T + 2 * kb > kv_size) throw DataError("K and V do not fit the arena", a);
    pf.format = pf.format == "ggsn" ? pf.format : "legacy-full";
    pf.detail += "full-buffer blob (ggml_tensor " + std::to_string(T) + " B)";
    LegacyGeometry g;
    bool known = false;
    if (hints.n_layer && hints.n_ctx && hints.n_embd) {
        g = {*hints.n_layer, *hints.n_ctx, *hints.n_embd, 0};
        known = true;
    } else if (hp && hp->n_ctx) {
        g = {hp->n_layer, hp->n_ctx, hp->n_embd, 0};
        known = true;
    }
    uint64_t k_start = a + 32 + T, v_start = k_start + kb + 32 + T;
    if (known) {
        if (product_if_fits(g.n_layer, g.n_ctx, g.n_embd) != n_elements) known = false;  // hint/hparams do not match the tensor
        else g.n_past = find_full_buffer_n_past(r.source(), v_start, elt, g, n_past_hint);
    }
    if (!known) known = guess_full_buffer_geometry(r.source(), k_start, v_start, n_elements, elt, g);
    if (known) known = verify_full_buffer(r.source(), k_start, v_start, elt, g);
    out.add("kv.k.hdr", SectionKind::Meta, 32 + T);
    if (known) {
        kv_layers(out, g, t, true, g.n_ctx);
    } else {
        out.add("kv.k", SectionKind::KvKey, kb, t);
        pf.note = "KV geometry unknown (pass --n-layer --n-ctx --n-embd): K and V kept unsplit";
    }
    out.add("kv.v.hdr", SectionKind::Meta, 32 + T);
    if (known) v_layers(out, g, t, g.n_ctx);
    else out.add("kv.v", SectionKind::KvValue, kb, t);
    out.add("kv.slack", SectionKind::Slack, kv_size - 64 - 2 * T - 2 * kb);
    r.seek(a + kv_size);
    if (known) {
        pf.n_layer = g.n_layer;
        pf.n_ctx = g.n_ctx;
        pf.n_embd = g.n_embd;
        pf.n_cells = g.n_past;
    }
}

// Flavour B (STATE-FORMATS.md §4): K[n_layer][ntok][n_embd], V[n_layer][n_embd][ntok], then (dumps) zeros.
void compact_kv(SourceReader& r, SectionList& out, ParsedFile& pf, uint64_t kv_size, uint64_t ntok,
                std::optional<Hparams> hp, const ParseHints& hints, bool exact_end) {
    pf.format = pf.format == "ggsn" ? pf.format : "legacy-compact";
    pf.detail += "compact blob";
    pf.n_cells = ntok;
    if (kv_size == 0 || ntok == 0) {
        if (!r.at_end()) out.add("kv.tail", SectionKind::Slack, r.remaining());
        return;
    }
    uint64_t rem = r.remaining();
    uint64_t payload = 0, y = 0;  // y = n_layer * n_embd_gqa * elt
    std::optional<uint64_t> layers, width;
    if (hints.n_layer && hints.n_embd) {
        layers = hints.n_layer;
        width = hints.n_embd;
    } else if (hp) {
        layers = hp->n_layer;
        width = hp->n_embd * hp->n_head_kv / hp->n_head;  // n_embd_gqa
    }
    if (exact_end) {
        if (rem % (2 * ntok)) throw DataError("compact KV payload does not split into K and V", r.pos());
        payload = rem;
        y = rem / (2 * ntok);
    } else {
        if (kv_size < kHeadroom) throw DataError("KV size smaller than the arena headroom", r.pos());
        y = guess_compact_row_bytes(r.source(), r.pos(), kv_size - kHeadroom, ntok, hints.n_ctx);
        payload = 2 * ntok * y;
        if (!y || payload > rem) throw DataError("compact KV payload not found", r.pos());
    }
    uint64_t kb = payload / 2;
    ElemType t = guess_half_or_float(r.source(), r.pos(), kb);
    uint64_t elt = elem_type_info(t).block_bytes;
    // Checked products: hints are user numbers (2^63+1 layers must not wrap into a match).
    if (layers && width && product_if_fits(*layers, *width, 2) == y) t = ElemType::F16, elt = 2;
    else if (layers && width && product_if_fits(*layers, *width, 4) == y) t = ElemType::F32, elt = 4;
    else layers.reset();
    if (y % elt) throw DataError("compact KV row size does not fit the element type", r.pos());
    if (layers) {
        LegacyGeometry g{*layers, 0, *width, ntok};
        kv_layers(out, g, t, false, ntok);
        v_layers(out, g, t, ntok);
        pf.n_layer = *layers;
        pf.n_embd = *width;
    } else {
        out.add("kv.k", SectionKind::KvKey, kb, t);
        out.add_rows("kv.v", SectionKind::KvValue, t, y / elt, ntok, true);
    }
    r.skip(payload, "KV payload");
    if (!r.at_end()) out.add("kv.tail", SectionKind::Slack, r.remaining());
    r.seek(r.size());
}

std::optional<ParsedFile> parse_blob(InputSource& in, uint64_t start, ParsedFile pf, SectionList out,
                                     std::optional<Hparams> hp, std::optional<uint64_t> n_past_hint, uint32_t session_version,
                                     const ParseHints& hints, uint64_t end) {
    SourceReader r(in, start);
    try {
        padded_prefix(r, out);
        uint64_t kv_size = r.u64("KV size");
        int32_t ntok = r.i32("KV token count");
        out.add("kv.hdr", SectionKind::Meta, 12);
        bool full = false;
        if (session_version == 0) full = true;
        else if (session_version == 1) full = false;
        else {  // raw blob: A if an arena with a K object header follows
            uint64_t p = r.pos();
            full = kv_size <= r.remaining() && kv_size >= 64 && r.u64("") == 32;
            r.seek(p);
        }
        if (full) full_arena(r, out, pf, kv_size, hp, n_past_hint, hints);
        else {
            if (ntok < 0) throw DataError("negative KV token count", r.pos() - 4);
            compact_kv(r, out, pf, kv_size, static_cast<uint64_t>(ntok), hp, hints, session_version == 1);
        }
        if (r.pos() != end) throw DataError("unexpected bytes after the state", r.pos());
    } catch (const DataError&) {
        return std::nullopt;
    }
    pf.sections = std::move(out.sections());
    return pf;
}

// A session file of 2023 ("ggsn", `version`): the hparams of whichever layout of that version
// fits, the tokens, then the state (split where the version's layout is known).
std::optional<ParsedFile> parse_ggsn(InputSource& in, uint32_t version, const ParseHints& hints) {
    for (const Layout& L : layouts_for(version)) {
        SourceReader r(in, 8);
        ParsedFile pf;
        pf.format = "ggsn";
        pf.version = version;
        try {
            Bytes h = r.bytes(L.size, "hparams");
            Hparams hp;
            hp.size = L.size;
            auto f = [&](uint32_t off) -> uint64_t { return off + 4 <= h.size() ? load_le<uint32_t>(h.data() + off) : 0; };
            hp.n_ctx = L.ctx ? f(L.ctx) : 0;
            hp.n_embd = f(L.embd);
            hp.n_head = f(L.head);
            hp.n_head_kv = L.head_kv ? f(L.head_kv) : hp.n_head;
            hp.n_layer = f(L.layer);
            if (!plausible(hp)) continue;
            uint32_t n_tok = r.u32("token count");
            if (n_tok > r.remaining() / 4) continue;
            SectionList out;
            out.add("header", SectionKind::Header, 8);
            out.add("hparams", SectionKind::Meta, L.size);
            out.add("token_count", SectionKind::Header, 4);
            if (n_tok) out.add_rows("tokens", SectionKind::Tokens, ElemType::I32, 1, n_tok);
            r.skip(uint64_t(n_tok) * 4, "tokens");
            pf.n_tokens = n_tok;
            pf.n_layer = hp.n_layer;
            if (!digits_at(in, r.pos() + 8)) continue;
            pf.detail = "session v" + std::to_string(version) + ", hparams " + std::to_string(L.size) + " B, ";
            if (version <= 1) {
                auto res = parse_blob(in, r.pos(), pf, out, hp, n_tok, version, hints, in.size());
                if (res) return res;
                continue;
            }
            // v2-v7: per-layer K/V whose types and widths the file does not record
            // (STATE-FORMATS.md §5.6-§5.9); the state is kept as one section after the rng text.
            uint64_t at = r.pos();
            uint64_t rng = r.u64("rng length");
            if (rng < 1000 || rng > kRngBuf || rng > r.remaining()) continue;
            out.add("rng", SectionKind::Rng, 8 + rng);
            if (at + 8 + rng < in.size()) out.add("state", SectionKind::Opaque, in.size() - at - 8 - rng);
            pf.detail += "state after the rng kept as one section";
            pf.note = "session v" + std::to_string(version) + ": KV layout not split (types not recorded)";
            pf.sections = std::move(out.sections());
            return pf;
        } catch (const DataError&) {
            continue;
        }
    }
    return std::nullopt;
}

// A raw blob with the rng first (flavours A, B, and v2+ dumps), whose rng text is `rng` bytes.
ParsedFile parse_rng_first(InputSource& in, uint64_t rng, const ParseHints& hints) {
    ParsedFile pf;
    pf.format = "legacy-raw";
    auto res = parse_blob(in, 0, pf, SectionList(0), std::nullopt, std::nullopt, 99, hints, in.size());
    if (res) return *res;
    // A later (v2-v7) blob: keep the rng apart, the rest as one section.
    SectionList out;
    out.add("rng", SectionKind::Rng, 8 + rng);
    if (8 + rng < in.size()) out.add("state", SectionKind::Opaque, in.size() - 8 - rng);
    pf.sections = std::move(out.sections());
    pf.detail = "raw state blob of 2023-2024 (rng first)";
    pf.note = "state blob after the rng not split (layout not recognised)";
    return pf;
}

// The seed's wrapper (PR #1247): u64 state_size, blob, u64 n_past, u64 n, i32 tokens[n];
// `state_size` is the first u64.
std::optional<ParsedFile> parse_seed_wrapper(InputSource& in, uint64_t state_size, const ParseHints& hints) {
    uint64_t tail_at = 8 + state_size;
    if (in.size() - tail_at < 16) return std::nullopt;
    uint8_t t[16];
    in.read_at(tail_at, t, 16);
    uint64_t n = load_le<uint64_t>(t + 8);
    if (n > (in.size() - tail_at - 16) / 4 || tail_at + 16 + 4 * n != in.size()) return std::nullopt;
    ParsedFile pf;
    pf.format = "legacy-wrapper";
    pf.detail = "seed State wrapper around a ";
    SectionList out;
    out.add("wrapper.size", SectionKind::Header, 8);
    auto res = parse_blob(in, 8, pf, out, std::nullopt, load_le<uint64_t>(t), 99, hints, tail_at);
    if (!res) return std::nullopt;
    SectionList tail(tail_at);
    tail.add("wrapper.n_past", SectionKind::Meta, 16);
    if (n) tail.add_rows("wrapper.tokens", SectionKind::Tokens, ElemType::I32, 1, n);
    for (auto& s : tail.sections()) res->sections.push_back(s);
    return res;
}

}  // namespace

std::optional<ParsedFile> parse_legacy(InputSource& in, const ParseHints& hints) {
    if (in.size() < 16) return std::nullopt;
    uint8_t b[16];
    in.read_at(0, b, 16);
    if (load_le<uint32_t>(b) == 0x6767736E) return parse_ggsn(in, load_le<uint32_t>(b + 4), hints);
    const uint64_t first = load_le<uint64_t>(b), second = load_le<uint64_t>(b + 8);
    if (first >= 1000 && first <= kRngBuf && 8 + first <= in.size() && digits_at(in, 8)) return parse_rng_first(in, first, hints);
    if (first > 0 && first <= in.size() - 8 && second >= 1000 && second <= kRngBuf && digits_at(in, 16))
        return parse_seed_wrapper(in, first, hints);
    return std::nullopt;
}

}  // namespace stz
