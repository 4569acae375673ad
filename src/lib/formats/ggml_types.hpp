// ggml type ids (as written in llama.cpp state files) mapped to statezip element types.
#pragma once
#include <optional>

#include "base/bytes.hpp"
#include "sections/types.hpp"

namespace stz {

inline std::optional<ElemType> elem_type_from_ggml(int32_t id) {
    switch (id) {
        case 0: return ElemType::F32;
        case 1: return ElemType::F16;
        case 2: return ElemType::Q4_0;
        case 3: return ElemType::Q4_1;
        case 6: return ElemType::Q5_0;
        case 7: return ElemType::Q5_1;
        case 8: return ElemType::Q8_0;
        case 20: return ElemType::IQ4_NL;
        case 30: return ElemType::BF16;
        case 133: return ElemType::Q6_0;   // ik_llama.cpp only
        case 151: return ElemType::Q8_KV;  // ik_llama.cpp only
        default: return std::nullopt;
    }
}

// The type id of a K/V entry, or a DataError at `at`.
inline ElemType ggml_type_checked(int32_t id, uint64_t at) {
    auto t = elem_type_from_ggml(id);
    if (!t) throw DataError("unknown KV type id " + std::to_string(id), at);
    return *t;
}

// Elements per row for rows of `row_bytes` bytes of type t, or a DataError. q8_KV rows
// (ik_llama.cpp) carry an 8-byte prefix and are described as bytes.
inline uint64_t row_elems_checked(ElemType t, uint64_t row_bytes, uint64_t at) {
    const auto& info = elem_type_info(t);
    if (t == ElemType::Q8_KV) {
        if (row_bytes <= 8) throw DataError("bad q8_KV row size", at);
        return row_bytes;
    }
    if (row_bytes == 0 || row_bytes % info.block_bytes) throw DataError("row size does not fit the KV type", at);
    return row_bytes / info.block_bytes * info.block_elems;
}

}  // namespace stz
