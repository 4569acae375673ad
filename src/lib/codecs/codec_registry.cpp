// The one place that lists the codecs. Adding a codec: one file + one line here.
// Ids are part of the container format (docs/FORMAT.md): never reuse or renumber them.
#include <mutex>

#include "codec_impls.hpp"

namespace stz {

static const std::vector<std::unique_ptr<Codec>>& registry() {
    static const std::vector<std::unique_ptr<Codec>> codecs = [] {
        std::vector<std::unique_ptr<Codec>> v;
        v.push_back(make_store_codec());      // id 0
        v.push_back(make_rle_codec());        // id 1
        v.push_back(make_lz4_codec());        // id 2
        v.push_back(make_lz4hc_codec());      // id 3
        v.push_back(make_zstd_codec());       // id 4
        v.push_back(make_lzma_codec());       // id 5
        v.push_back(make_trim_codec());       // id 6
        v.push_back(make_shuffle_codec());    // id 7
        v.push_back(make_transpose_codec());  // id 8
        v.push_back(make_fields_codec());     // id 9
        v.push_back(make_channel_context_codec());  // id 10
        v.push_back(make_row_dedup_codec());  // id 11
        v.push_back(make_rans_codec());       // id 12
        v.push_back(make_plane_split_codec());  // id 13
        return v;
    }();
    return codecs;
}

const Codec* find_codec(uint8_t id) {
    for (const auto& c : registry())
        if (c->id() == id) return c.get();
    return nullptr;
}

const Codec* find_codec(std::string_view name) {
    for (const auto& c : registry())
        if (c->name() == name) return c.get();
    return nullptr;
}

std::vector<const Codec*> all_codecs() {
    std::vector<const Codec*> v;
    for (const auto& c : registry()) v.push_back(c.get());
    return v;
}

int parse_int_arg(const std::string& s, int lo, int hi, std::string_view codec) {
    size_t used = 0;
    int v = 0;
    try {
        v = std::stoi(s, &used);
    } catch (...) {
        used = 0;
    }
    if (used != s.size() || s.empty() || v < lo || v > hi)
        throw Error(std::string(codec) + ": argument '" + s + "' must be a number from " + std::to_string(lo) +
                    " to " + std::to_string(hi));
    return v;
}

}  // namespace stz
