// Element types a section can hold. The numbering is statezip's own (stored in .stz
// headers); format parsers map their file's type ids onto it.
#pragma once
#include <optional>
#include <string>

#include "codecs/codec.hpp"

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

// Sizes computed from file or user numbers: a product or sum that does not fit 64 bits is
// bad input (a DataError naming `what` and the offset), never a wrapped value.
inline uint64_t checked_mul(uint64_t a, uint64_t b, const char* what, uint64_t at) {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) throw DataError(std::string(what) + " overflows 64 bits", at);
    return r;
}
inline uint64_t checked_add(uint64_t a, uint64_t b, const char* what, uint64_t at) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) throw DataError(std::string(what) + " overflows 64 bits", at);
    return r;
}
// a * b * c, or nullopt when it does not fit 64 bits (for checking hints against a file).
inline std::optional<uint64_t> product_if_fits(uint64_t a, uint64_t b, uint64_t c = 1) {
    uint64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return std::nullopt;
    return abc;
}

}  // namespace stz
