#include "types.hpp"

#include <array>

namespace stz {

static const std::array<ElemTypeInfo, 14> kTypes = {{
    {"bytes", 1, 1, 0, ElemKind::Bytes},
    {"i32", 1, 4, 0, ElemKind::I32},
    {"f16", 1, 2, 0, ElemKind::F16},
    {"bf16", 1, 2, 0, ElemKind::BF16},
    {"f32", 1, 4, 0, ElemKind::F32},
    {"q8_0", 32, 34, 2, ElemKind::Block},
    {"q4_0", 32, 18, 2, ElemKind::Block},
    {"q4_1", 32, 20, 4, ElemKind::Block},
    {"q5_0", 32, 22, 6, ElemKind::Block},
    {"q5_1", 32, 24, 8, ElemKind::Block},
    {"iq4_nl", 32, 18, 2, ElemKind::Block},
    {"q6_0", 32, 26, 10, ElemKind::Block},
    {"q8_kv", 1, 1, 0, ElemKind::Bytes},  // one i8 per element plus an 8-byte row prefix
    {"u64", 1, 8, 0, ElemKind::Bytes},
}};

const ElemTypeInfo& elem_type_info(ElemType t) {
    auto i = static_cast<size_t>(t);
    return i < kTypes.size() ? kTypes[i] : kTypes[0];
}

std::optional<ElemType> elem_type_from_u8(uint8_t v) {
    if (v < kTypes.size()) return static_cast<ElemType>(v);
    return std::nullopt;
}

std::optional<ElemType> elem_type_from_name(const std::string& name) {
    for (size_t i = 0; i < kTypes.size(); ++i)
        if (name == kTypes[i].name) return static_cast<ElemType>(i);
    return std::nullopt;
}

}  // namespace stz
