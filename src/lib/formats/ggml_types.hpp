// ggml type ids (as written in llama.cpp state files) mapped to statezip element types.
#pragma once
#include <optional>

#include "../types.hpp"

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

}  // namespace stz
