// What `statezip inspect` shows of one input: the parsed sections of a state file with byte
// statistics, or the section table of a .stz with the stored bytes of each section. The JSON
// text is produced here so that the CLI (inspect --json) and the C API (stz_inspect_json) give
// the same document.
#pragma once
#include "container/container.hpp"
#include "formats/detect.hpp"
#include "base/json_text.hpp"
#include "related/patch.hpp"
#include "stats.hpp"

namespace stz {

// A --patch-from .stz (patch.hpp): its sections are those of the stored stream, not of the
// file it rebuilds given the reference.
struct InspectPatch {
    ReferenceIdentity reference;
    uint64_t stored_stream_bytes = 0;
};

struct InspectReport {
    ParsedFile parsed;              // for a .stz: the header's facts and sections
    uint64_t bytes = 0;             // size of the state file (for a .stz: the size it rebuilds)
    std::optional<InspectPatch> patch;
    bool is_stz = false;
    std::vector<ByteStats> stats;   // per section, state files only
    std::vector<uint64_t> stored;   // per section, .stz only
    std::vector<HeaderProperty> properties;  // .stz only (container.hpp)
};

InspectReport inspect_input(InputSource& in, const ParseHints& hints);

// One JSON object, indented as inspect --json prints it, ending without a newline.
std::string inspect_json(const std::string& file, const InspectReport& r);

}  // namespace stz
