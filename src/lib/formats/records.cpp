#include "records.hpp"

#include "ggml_types.hpp"

namespace stz {

namespace {

constexpr uint32_t kMaxLayers = 512;
constexpr uint32_t kMaxSeq = 256;

void check_rows_fit(SourceReader& r, uint64_t rows, uint64_t row_bytes, uint64_t at) {
    if (row_bytes && rows > r.remaining() / row_bytes) throw DataError("KV rows run past the end of the file", at);
}

std::string layer_name(const std::string& prefix, const char* what, uint32_t il) {
    return prefix + "kv." + what + "[" + std::to_string(il) + "]";
}

// {i32 type; u64 row_size; rows[n_rows]} as a header section plus a data section.
void row_entry(SourceReader& r, SectionList& out, const std::string& prefix, const char* what, uint32_t il,
               uint64_t n_rows, SectionKind kind, bool allow_absent, std::optional<ElemType>* type_out) {
    uint64_t at = r.pos();
    int32_t type_id = r.i32("layer header");
    uint64_t row = r.u64("layer header");
    out.add(layer_name(prefix, what, il) + ".hdr", SectionKind::Meta, 12);
    if (allow_absent && type_id == -1) {
        if (row != 0) throw DataError("absent layer with a row size", at);
        return;
    }
    ElemType t = ggml_type_checked(type_id, at);
    uint64_t elems = row_elems_checked(t, row, at);
    check_rows_fit(r, n_rows, row, at);
    if (t == ElemType::Q8_KV) t = ElemType::Bytes;
    if (n_rows) out.add_rows(layer_name(prefix, what, il), kind, t, n_rows, elems);
    r.skip(n_rows * row, "KV rows");
    if (type_out && !*type_out) *type_out = t;
}

// Cell metadata: u32 count (already read), cells. Returns the number of cells.
void cells_block(SourceReader& r, uint32_t cell_count, uint32_t ext_bytes) {
    if (cell_count > r.remaining() / (8 + ext_bytes)) throw DataError("cell count larger than the file", r.pos());
    for (uint32_t i = 0; i < cell_count; ++i) {
        r.i32("cell");
        uint32_t n_seq = r.u32("cell");
        if (n_seq > kMaxSeq) throw DataError("cell with " + std::to_string(n_seq) + " sequence ids", r.pos() - 4);
        r.skip(ext_bytes, "cell");
        int32_t prev = -1;
        for (uint32_t k = 0; k < n_seq; ++k) {
            int32_t id = r.i32("cell seq id");
            if (id < 0 || id >= static_cast<int32_t>(kMaxSeq) || id <= prev) throw DataError("bad sequence id", r.pos() - 4);
            prev = id;
        }
    }
}

// ik session 9+/seq 3+: recurrent states (qnext) and, from 10/4, DSA indexer keys (STATE-FORMATS.md §8.3).
void ik_tail(SourceReader& r, SectionList& out, const KvGrammar& g, const std::string& prefix, uint32_t n_layer,
             uint32_t cell_count) {
    if (g.ik_version < 9) return;
    uint32_t qnext = r.u32("qnext_state");
    if (qnext > 1) throw DataError("bad qnext_state", r.pos() - 4);
    out.add(prefix + "qnext", SectionKind::Meta, 4);
    for (uint32_t il = 0; qnext && il < n_layer; ++il) {
        uint64_t at = r.pos();
        int32_t type_id = r.i32("state header");
        uint64_t row = r.u64("state header");
        uint32_t rows = r.u32("state header");
        out.add(layer_name(prefix, "s", il) + ".hdr", SectionKind::Meta, 16);
        if (type_id == -1) {
            if (row || rows) throw DataError("absent state layer with sizes", at);
            continue;
        }
        ElemType t = ggml_type_checked(type_id, at);
        uint64_t elems = row_elems_checked(t, row, at);
        check_rows_fit(r, rows, row, at);
        if (rows) out.add_rows(layer_name(prefix, "s", il), SectionKind::RecState, t, rows, elems);
        r.skip(uint64_t(rows) * row, "state rows");
    }
    if (g.ik_version < 10) return;
    uint32_t dsa = r.u32("dsa_indexer_state");
    if (dsa > 1) throw DataError("bad dsa_indexer_state", r.pos() - 4);
    out.add(prefix + "dsa", SectionKind::Meta, 4);
    for (uint32_t i = 0; dsa && !r.at_end(); ++i) {
        if (i >= kMaxLayers) throw DataError("too many indexer entries", r.pos());
        row_entry(r, out, prefix, "kr", i, cell_count, SectionKind::KvKey, false, nullptr);
    }
}

void kv_stream(SourceReader& r, SectionList& out, const KvGrammar& g, const std::string& prefix, RecordFacts& facts) {
    uint64_t start = r.pos();
    uint32_t cell_count = r.u32("cell count");
    if (g.n_stream && cell_count == 0) {  // empty stream: just the count
        out.add(prefix + "cells", SectionKind::Cells, r.pos() - start);
        return;
    }
    cells_block(r, cell_count, g.ext_bytes);
    uint32_t v_trans = r.u32("v_trans");
    uint32_t n_layer = r.u32("n_layer");
    if (v_trans > (g.ik ? 2u : 1u)) throw DataError("bad v_trans " + std::to_string(v_trans), r.pos() - 8);
    if (n_layer == 0 || n_layer > kMaxLayers) throw DataError("bad layer count " + std::to_string(n_layer), r.pos() - 4);
    out.add(prefix + "cells", SectionKind::Cells, r.pos() - start);
    facts.cells += cell_count;
    facts.n_layer = std::max<uint64_t>(facts.n_layer, n_layer);
    const bool absent_ok = g.ik && g.ik_version >= 9;
    for (uint32_t il = 0; il < n_layer; ++il)
        row_entry(r, out, prefix, "k", il, cell_count, SectionKind::KvKey, absent_ok, &facts.k_type);
    if (v_trans == 2) return;  // ik: no V cache (MLA)
    // Mainline V-less caches (MLA, since 2026-01) have no V entries: detected by trial.
    uint64_t v_start = r.pos();
    const SectionList::Mark before_v = out.mark();
    try {
        for (uint32_t il = 0; il < n_layer; ++il) {
            if (v_trans == 0) {
                row_entry(r, out, prefix, "v", il, cell_count, SectionKind::KvValue, absent_ok, nullptr);
                continue;
            }
            uint64_t at = r.pos();
            int32_t type_id = r.i32("V header");
            uint32_t elt = r.u32("V header");
            uint32_t n_embd_v = r.u32("V header");
            out.add(layer_name(prefix, "v", il) + ".hdr", SectionKind::Meta, 12);
            if (absent_ok && type_id == -1) {
                if (elt || n_embd_v) throw DataError("absent V layer with sizes", at);
                continue;
            }
            ElemType t = ggml_type_checked(type_id, at);
            const auto& info = elem_type_info(t);
            if (info.block_elems != 1 || elt != info.block_bytes) throw DataError("transposed V element size does not match its type", at);
            if (n_embd_v == 0 || n_embd_v > (1u << 24)) throw DataError("bad V width", at);
            check_rows_fit(r, n_embd_v, uint64_t(cell_count) * elt, at);
            out.add_rows(layer_name(prefix, "v", il), SectionKind::KvValue, t, n_embd_v, cell_count, true);
            r.skip(uint64_t(n_embd_v) * cell_count * elt, "transposed V");
        }
    } catch (const DataError&) {
        if (g.ik) throw;
        r.seek(v_start);  // V-less: the next record (or EOF) follows the K entries
        out.truncate(before_v);
    }
    if (g.ik) ik_tail(r, out, g, prefix, n_layer, cell_count);
}

}  // namespace

std::string parse_arch(SourceReader& r, SectionList& out) {
    uint64_t at = r.pos();
    uint32_t len = r.u32("architecture name");
    if (len == 0 || len > 64) throw DataError("bad architecture name length", at);
    std::string arch = r.str(len, "architecture name");
    for (char c : arch)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            throw DataError("architecture name is not lowercase ASCII", at + 4);
    out.add("arch", SectionKind::Meta, 4 + len);
    return arch;
}

void parse_outputs_block(SourceReader& r, SectionList& out) {
    uint64_t start = r.pos();
    uint32_t n_out = r.u32("output count");
    if (n_out > r.remaining() / 4) throw DataError("output count larger than the file", start);
    r.skip(uint64_t(n_out) * 4, "output ids");
    uint64_t n_logits = r.u64("logits count");
    if (n_logits > r.remaining() / 4) throw DataError("logits count larger than the file", r.pos() - 8);
    out.add("outputs", SectionKind::Meta, r.pos() - start);
    if (n_logits) out.add_rows("logits", SectionKind::Logits, ElemType::F32, 1, n_logits);
    r.skip(n_logits * 4, "logits");
    uint64_t n_embd = r.u64("embeddings count");
    if (n_embd > r.remaining() / 4) throw DataError("embeddings count larger than the file", r.pos() - 8);
    out.add("embeddings.size", SectionKind::Meta, 8);
    if (n_embd) out.add_rows("embeddings", SectionKind::Embeddings, ElemType::F32, 1, n_embd);
    r.skip(n_embd * 4, "embeddings");
}

void parse_kv_record(SourceReader& r, SectionList& out, const KvGrammar& g, const std::string& prefix, RecordFacts& facts) {
    if (!g.n_stream) {
        kv_stream(r, out, g, prefix, facts);
        return;
    }
    uint64_t at = r.pos();
    uint32_t n_stream = r.u32("stream count");
    if (n_stream == 0 || n_stream > kMaxSeq) throw DataError("bad stream count " + std::to_string(n_stream), at);
    out.add(prefix + "streams", SectionKind::Meta, 4);
    for (uint32_t s = 0; s < n_stream; ++s)
        kv_stream(r, out, g, n_stream > 1 ? prefix + "s" + std::to_string(s) + "." : prefix, facts);
}

void parse_rec_record(SourceReader& r, SectionList& out, const std::string& prefix, RecordFacts& facts, bool to_eof) {
    uint64_t start = r.pos();
    uint32_t cell_count = r.u32("recurrent cell count");
    cells_block(r, cell_count, 0);
    uint32_t s_trans = r.u32("s_trans");
    uint32_t n_layer = r.u32("n_layer");
    if (s_trans != 0) throw DataError("bad s_trans", r.pos() - 8);
    if (n_layer == 0 || n_layer > kMaxLayers) throw DataError("bad layer count", r.pos() - 4);
    out.add(prefix + "rec.cells", SectionKind::Cells, r.pos() - start);
    facts.n_layer = std::max<uint64_t>(facts.n_layer, n_layer);
    // Entries {i32 type; u64 row; rows} run to the end of the record; the first half are
    // R (conv) states and the second half S (ssm) states. PLE blocks ({u64 row; rows}) are
    // not supported yet: such files fail here and are stored as opaque bytes.
    uint32_t n = 0;
    while (to_eof ? !r.at_end() : n < 2 * n_layer) {
        row_entry(r, out, prefix, "rec", n, cell_count, SectionKind::RecState, false, nullptr);
        if (++n > 2 * kMaxLayers) throw DataError("too many recurrent entries", r.pos());
    }
    if (n % 2) throw DataError("odd number of recurrent state entries", r.pos());
}

void parse_memory_records(SourceReader& r, SectionList& out, const KvGrammar& g, RecordFacts& facts) {
    for (int rec = 0; !r.at_end(); ++rec) {
        std::string prefix = rec ? "rec" + std::to_string(rec) + "." : "";
        uint64_t at = r.pos();
        const SectionList::Mark saved = out.mark();
        const RecordFacts saved_facts = facts;
        try {
            parse_kv_record(r, out, g, prefix, facts);
            continue;
        } catch (const DataError&) {
            r.seek(at);
            out.truncate(saved);
            facts = saved_facts;
        }
        parse_rec_record(r, out, prefix, facts, true);
    }
}

}  // namespace stz
