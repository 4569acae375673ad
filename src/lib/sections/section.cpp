#include "section.hpp"

namespace stz {

static const char* kKindNames[] = {"opaque", "header", "tokens", "rng", "logits", "embeddings", "cells",
                                   "kv-key", "kv-value", "slack", "meta", "recurrent"};

const char* section_kind_name(SectionKind k) {
    auto i = static_cast<size_t>(k);
    return i < std::size(kKindNames) ? kKindNames[i] : "?";
}

std::optional<SectionKind> section_kind_from_u8(uint8_t v) {
    if (v < std::size(kKindNames)) return static_cast<SectionKind>(v);
    return std::nullopt;
}

uint64_t Section::row_bytes() const {
    const auto& t = elem_type_info(type);
    if (rows == 0 || row_elems == 0 || row_elems % t.block_elems) return 0;
    return row_elems / t.block_elems * t.block_bytes;
}

DataShape Section::shape() const {
    const auto& t = elem_type_info(type);
    DataShape s;
    s.kind = t.kind;
    s.elem_bytes = t.block_bytes;
    s.block_head = t.head_bytes;
    s.row_bytes = row_bytes();
    s.transposed = transposed;
    if (s.row_bytes && filled_elems && filled_elems < row_elems && t.block_elems == 1)
        s.keep_bytes = filled_elems * t.block_bytes;
    return s;
}

std::string Section::type_string() const { return elem_type_info(type).name; }

std::string Section::shape_string() const {
    if (rows == 0) return "";
    std::string s = std::to_string(rows) + "x" + std::to_string(row_elems);
    if (transposed) s += " (transposed)";
    if (filled_elems && filled_elems < row_elems) s += " filled " + std::to_string(filled_elems);
    return s;
}

Section& SectionList::add(std::string name, SectionKind kind, uint64_t size, ElemType type) {
    if (list_.size() >= kMaxParsedSections)
        throw DataError("more than " + std::to_string(kMaxParsedSections) + " sections", cursor_);
    Section s;
    s.name = std::move(name);
    s.kind = kind;
    s.offset = cursor_;
    s.size = size;
    s.type = type;
    cursor_ = checked_add(cursor_, size, "section end", cursor_);
    list_.push_back(std::move(s));
    return list_.back();
}

Section& SectionList::add_rows(std::string name, SectionKind kind, ElemType type, uint64_t rows, uint64_t row_elems,
                               bool transposed) {
    const auto& t = elem_type_info(type);
    uint64_t bytes = checked_mul(checked_mul(rows, row_elems / t.block_elems, "section size", cursor_), t.block_bytes,
                                 "section size", cursor_);
    Section& s = add(std::move(name), kind, bytes, type);
    s.rows = rows;
    s.row_elems = row_elems;
    s.transposed = transposed;
    return s;
}

void check_tiling(const std::vector<Section>& s, uint64_t file_size) {
    uint64_t at = 0;
    for (const auto& x : s) {
        if (x.offset != at) throw Error("internal: section '" + x.name + "' does not start where the previous one ended");
        at += x.size;
    }
    if (at != file_size) throw Error("internal: sections cover " + std::to_string(at) + " of " + std::to_string(file_size) + " bytes");
}

}  // namespace stz
