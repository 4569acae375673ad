// What the planes codec (plane_split_codec.cpp: the plane records, the records' heads, the
// codec) shares with its parameters (plane_split_params.cpp: the spec, the parameter bytes)
// and its transposition (plane_split_permute.cpp: where each byte of a chunk goes in the
// planes, and back). The format is described in plane_split_codec.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace stz::planes {

inline constexpr uint8_t kPlanesId = 13;
inline constexpr unsigned kMaxWidth = 4096, kMaxHead = 16, kMaxScalarPlanes = 16;

struct Field {
    uint32_t start, width;  // bytes [start, start + width) of each element
};

struct PlanesParams {
    bool channel_major = true, blocks = false;
    uint32_t width = 1, head = 0;
    uint64_t cols = 1;
    uint64_t record = 0;  // record size, 0 = no records
    uint32_t record_head = 0;
    std::vector<Pipeline> recipes;
    std::vector<uint8_t> plane_recipe;  // per plane: index into recipes

    size_t n_fields() const { return blocks ? head + (width > head ? 1 : 0) : width; }
    std::vector<Field> fields() const {
        std::vector<Field> f;
        f.reserve(n_fields());
        if (!blocks) {
            for (uint32_t b = 0; b < width; ++b) f.push_back({b, 1});
        } else {
            for (uint32_t b = 0; b < head; ++b) f.push_back({b, 1});
            if (width > head) f.push_back({head, width - head});
        }
        return f;
    }
};

// The parameters (plane_split_params.cpp): read back with every field checked (a chunk's
// parameters are untrusted); made from a spec's arguments for data of `shape`; described as
// the spec that makes them.
PlanesParams read_params(ByteSpan p);
Bytes make_params(const std::vector<std::string>& args, const DataShape& shape);
std::string describe_params(ByteSpan params);

// Where the bytes of one chunk go: rows x cols elements of `width` bytes, then a tail.
struct Geometry {
    uint64_t rows = 0, cols = 1, body = 0;
    std::vector<Field> fields;
    std::vector<uint64_t> offset;  // plane p starts at offset[p] of the plane buffer
    uint64_t plane_size(size_t p) const { return uint64_t{fields[p].width} * rows * cols; }
};

Geometry geometry(const PlanesParams& P, size_t size);

// Moves the g.body bytes of elements at `elems` to the planes (ToPlanes) or back; `plane[p]`
// is where plane p starts (each g.plane_size(p) bytes). Instantiated for both directions in
// plane_split_permute.cpp.
template <bool ToPlanes>
void permute(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g);

// Whether the planes of n record bodies of B bytes are the planes of each body in turn, so
// that each body can be permuted on its own, straight from or into its record: storage order
// (or planes of one-byte fields in one column), and whole elements in every body.
bool planes_split_by_record(const PlanesParams& P, uint64_t B, uint64_t n);

// Permutes every record's body (R bytes a record, the body after H bytes of head) to or from
// its share of the planes (planes_split_by_record).
template <bool ToPlanes>
void permute_records(uint8_t* records, uint8_t* const* plane, const PlanesParams& P, uint64_t n, uint64_t R, uint64_t H);

}  // namespace stz::planes
