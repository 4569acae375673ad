// Repeated KV heads: 2023 llama.cpp wrote the K/V of a GQA model with one KV head per query
// head, so heads come in groups of byte-identical copies. A cheap check on a sample of each
// K/V section (a few rows of K, the first bytes of every channel row of transposed V) finds
// the head size and group; the plan then puts headdup first in those sections' pipelines,
// which checks every chunk in full.
#pragma once
#include <optional>

#include "base/io.hpp"
#include "sections/section.hpp"

namespace stz {

// The parsed file with repeat_seg / repeat_group set where a section's sample shows
// repeated heads; nullopt when none does (the common case: no copy of the section list).
std::optional<ParsedFile> find_head_repeats(InputSource& in, const ParsedFile& parsed);

}  // namespace stz
