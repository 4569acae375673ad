// The limits of the .stz container, shared by the writer (which refuses to write what a
// reader would reject) and the reader (which rejects anything larger before allocating).
// The planner and the CLI can call the check functions up front, before any work is done.
#pragma once
#include <cstdint>
#include <string>

#include "bytes.hpp"

namespace stz {

inline constexpr uint32_t kMaxChunkRaw = 64u << 20;      // raw bytes of one chunk
inline constexpr uint32_t kMaxHeaderBytes = 64u << 20;   // header body, stored and unpacked
inline constexpr uint8_t kMaxStages = 8;                 // codec stages of one chunk's pipeline
inline constexpr size_t kMaxParamBytes = 255;            // parameter bytes of one stage (u8 length)
inline constexpr size_t kMaxHeaderString = 65535;        // format, detail, note, section name (u16 length)
// Largest input of any stage and largest stored payload: a chunk plus what any codec may add.
inline constexpr uint64_t kMaxStageBytes = uint64_t(kMaxChunkRaw) + (kMaxChunkRaw >> 1) + 8192;

// Throws stz::Error if a pipeline of `n_stages` stages cannot be stored (0 or more than kMaxStages).
inline void check_pipeline_storable(size_t n_stages) {
    if (n_stages == 0 || n_stages > kMaxStages)
        throw Error("a codec pipeline of " + std::to_string(n_stages) + " stages cannot be stored (a .stz chunk holds 1 to " +
                    std::to_string(kMaxStages) + " stages)");
}

// Throws stz::Error if a header string (format, detail, note, section name) is too long to store.
inline void check_header_string_storable(const std::string& s, const char* what) {
    if (s.size() > kMaxHeaderString)
        throw Error(std::string(what) + " of " + std::to_string(s.size()) + " bytes is too long for a .stz header (limit " +
                    std::to_string(kMaxHeaderString) + ")");
}

// Bytes of an uncompressed header body with these strings and sections (an upper bound of
// what the writer stores: it compresses the body only when that makes it smaller). Each
// section costs its name plus kHeaderSectionFixedBytes. Saturates instead of wrapping.
inline constexpr uint64_t kHeaderFixedBytes = 8 + 2 + 8 + 2 + 2 + 4;
inline constexpr uint64_t kHeaderSectionFixedBytes = 2 + 3 + 5 * 8;
inline uint64_t encoded_header_bound(uint64_t n_sections, uint64_t total_name_bytes, uint64_t string_bytes) {
    const uint64_t cap = UINT64_MAX / 2;
    if (n_sections > cap / kHeaderSectionFixedBytes || total_name_bytes > cap / 2 || string_bytes > cap / 4) return UINT64_MAX;
    return kHeaderFixedBytes + string_bytes + n_sections * kHeaderSectionFixedBytes + total_name_bytes;
}

// Throws stz::Error if a header of that bound exceeds what a reader accepts.
inline void check_header_storable(uint64_t header_bound) {
    if (header_bound > kMaxHeaderBytes)
        throw Error("the section table needs " + std::to_string(header_bound) + " header bytes, more than a .stz reader accepts (" +
                    std::to_string(kMaxHeaderBytes) + "); use fewer sections");
}

}  // namespace stz
