// `--patch-from`: a .stz that stores a file given a reference file (REF) the reader also has.
//
// Cells of the file whose bytes equal a cell of REF (cells.hpp: by content, in any order,
// verified byte by byte), and the token prefix both share, are not stored: a patch map
// (patch_map.hpp) says where in REF they are. What remains (every other section, the new
// cells of each K/V layer, the new tokens) is stored as an ordinary container whose first
// section is the map and whose other sections are the file's sections with only their new
// cells, so each keeps its element type and row structure and gets its usual pipeline.
//
// The header carries the required property `reference` (REF's name as given, size and
// XXH3-128): a reader that does not get REF, or gets another file, refuses with one line
// naming the expected reference before writing anything. The map records the original
// file's size and XXH3-128, checked after rebuilding, so the output is never silently wrong.
#pragma once
#include "engine/engine.hpp"
#include "rebuild/patch_decode.hpp"

namespace stz {

struct PatchResult {
    CompressResult stored;  // the container as written (its sizes are of the stored stream)
    uint64_t original_bytes = 0, compressed_bytes = 0;
    uint64_t file_cells = 0, shared_cells = 0;
    uint64_t shared_token_bytes = 0, map_bytes = 0;
    uint64_t predicted_tokens = 0;  // tokens not stored: predicted from their cells (token_model.hpp)
};

// Compresses `file` given `ref` (any bytes; a state file gives sharing). `ref_name` is
// recorded for the error messages of readers.
PatchResult compress_patch(InputSource& file, InputSource& ref, const std::string& ref_name, OutputSink& out,
                           const CompressOptions& opt);

}  // namespace stz
