// The format parsers, tried in order by detect.cpp. Each returns nullopt when the file is
// not its flavour (or does not parse exactly), so the next parser can try.
#pragma once
#include "detect.hpp"
#include "ggml_types.hpp"
#include "source_reader.hpp"

namespace stz {

std::optional<ParsedFile> parse_mainline(InputSource& in, const ParseHints& hints);  // mainline.cpp
std::optional<ParsedFile> parse_legacy(InputSource& in, const ParseHints& hints);    // legacy.cpp

ElemType elem_type_from_ggml_checked(int32_t id, uint64_t at);
uint64_t row_elems_checked(ElemType t, uint64_t row_bytes, uint64_t at);

}  // namespace stz
