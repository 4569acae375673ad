// Parsers of the self-describing records of 2024+ llama.cpp and ik_llama.cpp states
// (STATE-FORMATS.md §5.10, §7.2-§7.4, §8.3). Each appends sections at the reader's position and
// throws DataError when the bytes do not fit the grammar (callers trial-parse).
#pragma once
#include "sections/section.hpp"
#include "source_reader.hpp"

namespace stz {

struct KvGrammar {
    bool n_stream = true;     // u32 n_stream prefix (mainline since 2025-07-16)
    uint32_t ext_bytes = 0;   // per-cell extension: 0, 8 (v9 M-RoPE) or 12 (v10)
    bool ik = false;          // ik_llama.cpp IkKv: v_state 2 allowed
    int ik_version = 0;       // ik session version (8, 9, 10): 9 adds absent layers and qnext, 10 adds dsa
};

struct RecordFacts {
    uint64_t cells = 0;
    uint64_t n_layer = 0;
    std::optional<ElemType> k_type;
};

void parse_kv_record(SourceReader& r, SectionList& out, const KvGrammar& g, const std::string& prefix, RecordFacts& facts);
void parse_rec_record(SourceReader& r, SectionList& out, const std::string& prefix, RecordFacts& facts, bool to_eof);
// Memory records back to back until EOF: KvRecords (iSWA, DSA, MSA pairs), then an optional RecRecord.
void parse_memory_records(SourceReader& r, SectionList& out, const KvGrammar& g, RecordFacts& facts);
// u32 n_outputs, ids, u64 logits count + f32 logits, u64 embd count + f32 embd (session v5-v9b, ik).
void parse_outputs_block(SourceReader& r, SectionList& out);
// u32 length + lowercase architecture name; returns the name.
std::string parse_arch(SourceReader& r, SectionList& out);

}  // namespace stz
