// A section is a named, typed byte range of the input file. Parsers produce sections that
// tile the file exactly; the compressor picks a codec pipeline per section.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types.hpp"

namespace stz {

enum class SectionKind : uint8_t {
    Opaque = 0, Header = 1, Tokens = 2, Rng = 3, Logits = 4, Embeddings = 5, Cells = 6,
    KvKey = 7, KvValue = 8, Slack = 9, Meta = 10, RecState = 11,
};
const char* section_kind_name(SectionKind k);
std::optional<SectionKind> section_kind_from_u8(uint8_t v);

struct Section {
    std::string name;
    SectionKind kind = SectionKind::Opaque;
    uint64_t offset = 0;
    uint64_t size = 0;
    ElemType type = ElemType::Bytes;
    uint64_t rows = 0;          // 0 when the section has no row structure
    uint64_t row_elems = 0;     // elements per row
    bool transposed = false;    // V stored channel-major (rows are channels, columns cells)
    uint64_t filled_elems = 0;  // elements of each row that hold data (the rest should be zero); 0 = all/unknown
    // Heads in groups of equal copies (head_repeats.hpp): segments of repeat_seg bytes of the
    // (trimmed) data, each group of repeat_group equal to its first. 0 = none found.
    uint32_t repeat_seg = 0;
    uint8_t repeat_group = 0;

    uint64_t row_bytes() const;
    DataShape shape() const;
    std::string type_string() const;   // "f16", "bytes", ...
    std::string shape_string() const;  // "322x32", "32x322 (transposed)", ""
};

// Facts a parser found (or was told) about the model and the state.
struct ParsedFile {
    std::string format = "opaque";  // "ggsn", "ggsq", "raw", "seqraw", "legacy-full", "legacy-compact", "opaque"
    std::optional<int64_t> version;
    std::string detail;  // e.g. "mainline v9c", "session v0 + full-buffer blob"
    std::string note;    // one line for the user when something was not recognised
    std::vector<Section> sections;
    std::optional<uint64_t> n_tokens, n_cells, n_layer, n_ctx, n_embd;
    std::string arch;
};

// More sections than a .stz header can hold (64 MiB at >= 45 bytes each) and than any real
// state has (512 layers x 256 streams x 4): a parser that gets there is reading a hostile
// file, and stops before its section list costs hundreds of MB.
inline constexpr size_t kMaxParsedSections = size_t(1) << 20;

// Appends sections at a running cursor, so that they tile the file by construction.
class SectionList {
public:
    explicit SectionList(uint64_t start = 0) : cursor_(start) {}
    Section& add(std::string name, SectionKind kind, uint64_t size, ElemType type = ElemType::Bytes);
    Section& add_rows(std::string name, SectionKind kind, ElemType type, uint64_t rows, uint64_t row_elems,
                      bool transposed = false);
    uint64_t cursor() const { return cursor_; }
    std::vector<Section>& sections() { return list_; }

    // Trial parsing: remember where the list ends, and drop what a failed trial added.
    // (Copying the list per trial made parsing quadratic in the number of records.)
    struct Mark {
        size_t count;
        uint64_t cursor;
    };
    Mark mark() const { return {list_.size(), cursor_}; }
    void truncate(Mark m) {
        list_.resize(m.count);
        cursor_ = m.cursor;
    }

private:
    uint64_t cursor_;
    std::vector<Section> list_;
};

// Throws unless the sections tile [0, file_size) in order with no gap or overlap.
void check_tiling(const std::vector<Section>& s, uint64_t file_size);

}  // namespace stz
