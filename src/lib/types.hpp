// Element types a section can hold. The numbering is statezip's own (stored in .stz
// headers); format parsers map their file's type ids onto it.
#pragma once
#include <optional>
#include <string>

#include "codec.hpp"

namespace stz {

enum class ElemType : uint8_t {
    Bytes = 0, I32 = 1, F16 = 2, BF16 = 3, F32 = 4,
    Q8_0 = 5, Q4_0 = 6, Q4_1 = 7, Q5_0 = 8, Q5_1 = 9, IQ4_NL = 10, Q6_0 = 11, Q8_KV = 12,
    U64 = 13,
};

struct ElemTypeInfo {
    const char* name;
    uint32_t block_elems;  // elements per block (1 for scalars)
    uint32_t block_bytes;  // bytes per block
    uint32_t head_bytes;   // per-block scale/min header bytes (block types only)
    ElemKind kind;
};

const ElemTypeInfo& elem_type_info(ElemType t);
std::optional<ElemType> elem_type_from_u8(uint8_t v);
std::optional<ElemType> elem_type_from_name(const std::string& name);

}  // namespace stz
