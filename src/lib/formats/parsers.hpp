// The format parsers, tried in order by detect.cpp. Each returns nullopt when the file is
// not its flavour (or does not parse exactly), so the next parser can try.
#pragma once
#include "detect.hpp"
#include "ggml_types.hpp"
#include "source_reader.hpp"

namespace stz {

std::optional<ParsedFile> parse_mainline(InputSource& in, const ParseHints& hints);  // mainline.cpp
std::optional<ParsedFile> parse_legacy(InputSource& in, const ParseHints& hints);    // legacy.cpp


}  // namespace stz
