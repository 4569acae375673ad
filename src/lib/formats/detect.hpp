// Entry point of the format layer: recognise a state file and split it into sections.
// Parsers only read; they never compress.
#pragma once
#include <optional>

#include "base/io.hpp"
#include "sections/section.hpp"

namespace stz {

// Geometry the user may tell us for files that do not record it (2023 blobs).
struct ParseHints {
    std::optional<uint64_t> n_layer, n_ctx, n_embd;
};

// Never throws for a bad or unknown file: such input becomes one opaque section with a note.
ParsedFile parse_state_file(InputSource& in, const ParseHints& hints);

}  // namespace stz
