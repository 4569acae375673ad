#include "hostile_patch.hpp"

#include <zstd.h>

#include "codecs/varint.hpp"
#include "engine/engine.hpp"
#include "hostile.hpp"
#include "related/patch.hpp"

namespace stzhostile {

using namespace stz;

Bytes patch_ref(uint64_t size) { return noise(static_cast<size_t>(size), 2024); }

Bytes craft_patch(const PatchMap& map_in, const Bytes& meta, const Bytes& ref, const Bytes& stream, uint64_t claimed) {
    PatchMap map = map_in;
    map.meta_raw = meta.size();
    Bytes content = encode_patch_map(map);
    append_bytes(content, meta);
    Bytes head;
    put_varint(head, 0);  // no dictionary
    const size_t at = head.size();
    head.resize(at + ZSTD_compressBound(content.size()));
    const size_t n = ZSTD_compress(head.data() + at, head.size() - at, content.data(), content.size(), 19);
    if (ZSTD_isError(n)) throw Error("zstd failed");
    head.resize(at + n);
    Bytes stored = head;
    append_bytes(stored, stream);
    ParsedFile pf;
    Section s;
    s.name = kPatchMapSection;
    s.kind = SectionKind::Meta;
    s.size = head.size();
    pf.sections.push_back(s);
    if (!stream.empty()) {
        Section rows;
        rows.name = "rows";
        rows.offset = head.size();
        rows.size = stream.size();
        pf.sections.push_back(rows);
    }
    MemorySource refsrc(ref), in(stored);
    CompressOptions o;
    o.properties.push_back({kReferenceProperty, identify_reference(refsrc, "ref.bin").value(), true});
    o.properties.push_back({kPatchedSizeProperty, std::to_string(claimed == UINT64_MAX ? map.original_size : claimed), false});
    MemorySink out;
    compress_parsed(in, pf, out, o);
    return out.out;
}

Bytes patch_byte_copies(uint64_t pieces, const Bytes& ref) {
    PatchMap m;
    m.original_size = pieces;
    m.ref_groups.push_back({1, {{0, 0}}});  // every channel row of REF at offset 0
    PatchGroup g;
    g.n_cells = 1;
    g.parts.push_back({pieces, 1, true, 0, false});
    g.runs.push_back({1, 0u, 0});
    m.groups.push_back(g);
    m.regions.push_back({RegionKind::Part, 0, 0, 0});
    return craft_patch(m, {}, ref);
}

Bytes patch_repeated_copies(uint64_t bytes, const Bytes& ref) {
    const uint64_t row = 4096, cells = ref.size() / row, runs = 16, group_bytes = runs * cells * row;
    PatchMap m;
    m.ref_groups.push_back({cells, {{0, row}}});
    PatchGroup g;
    g.n_cells = runs * cells;
    g.parts.push_back({1, row, false, 0, false});
    for (uint64_t i = 0; i < runs; ++i) g.runs.push_back({cells, 0u, 0});
    const uint64_t groups = std::max<uint64_t>(1, bytes / group_bytes);
    for (uint64_t i = 0; i < groups; ++i) {  // each repeats the previous one's runs (a 2-byte record)
        m.groups.push_back(g);
        m.regions.push_back({RegionKind::Part, 0, static_cast<uint32_t>(i), 0});
    }
    m.original_size = groups * group_bytes;
    return craft_patch(m, {}, ref);
}

Bytes patch_size_claim(uint64_t claimed, const Bytes& ref) {
    PatchMap m;
    const uint64_t row = 64, cells = 40;
    m.ref_groups.push_back({cells, {{4096, row}}});
    PatchGroup g;
    g.n_cells = cells;
    g.parts.push_back({1, row, false, 0, false});
    g.runs.push_back({cells, 0u, 0});
    m.groups.push_back(g);
    const Bytes meta(1024, 0x5a);
    m.regions.push_back({RegionKind::Stream, meta.size()});
    m.regions.push_back({RegionKind::Part, 0, 0, 0});
    m.original_size = meta.size() + cells * row;
    Hasher128 h;
    h.update(meta.data(), meta.size());
    h.update(ref.data() + 4096, cells * row);
    m.original_xxh128 = h.digest();
    return craft_patch(m, meta, ref, {}, claimed);
}

}  // namespace stzhostile
