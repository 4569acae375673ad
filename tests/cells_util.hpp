// Helpers for tests of the cell core (src/lib/related/cells.hpp) and what is built on it
// (--patch-from, pack): synthetic related state files, corpus lookup, cell edits.
#pragma once
#include <filesystem>

#include "related/cells.hpp"
#include "formats/detect.hpp"
#include "synth.hpp"
#include "test_util.hpp"

namespace stztest {

inline stz::Bytes synth_state(const stzsynth::Spec& s) {
    stz::MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

inline stz::ParsedFile parse_bytes(const stz::Bytes& b) {
    stz::MemorySource src(b);
    return stz::parse_state_file(src, {});
}

// Writes `cell` (g.cell_bytes bytes, in read_cells order) as cell c of group g in `file`.
inline void write_cell(stz::Bytes& file, const stz::CellGroup& g, uint64_t c, const uint8_t* cell) {
    uint64_t at = 0;
    for (const auto& p : g.parts)
        for (uint64_t ch = 0; ch < p.channels; ++ch, at += p.piece_bytes)
            std::memcpy(file.data() + p.piece_offset(c, ch), cell + at, p.piece_bytes);
}

// Path of a corpus file by name, or "" when no corpus folder has it.
inline std::string corpus_file(const std::string& name) {
    for (const auto& d : corpus_folders())
        if (std::filesystem::exists(std::filesystem::path(d) / name)) return (std::filesystem::path(d) / name).string();
    return "";
}

}  // namespace stztest
