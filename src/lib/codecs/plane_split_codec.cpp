// planes: a graph stage. It splits its input into byte planes and sends each plane through
// its own sub-pipeline, e.g. `planes(top=rans:1,rest=store)`: the sign/exponent byte of
// every float through order-1 rANS, the near-random mantissa bytes stored.
//
// Planes of a scalar type (f16, bf16, f32, i32): one per byte of the element, `top` being the
// most significant (sign/exponent) byte. Planes of a quant block type: one per header byte
// (`lo`/`hi` = the f16 scale's low/high byte, `top` = `hi`), then one for the quants (`q`).
// Order: channel-major (`cm`, default: channel c's values of every row in turn, so order-1
// context is the same channel's previous token) or storage order (`rm`). Rows that do not
// fill a whole row (e.g. dedup's reference list) and a partial element go to a stored tail.
//
// Parameters carry the layout and every sub-pipeline (codec ids and their parameters), so a
// chunk decodes with no outside knowledge; they are validated whenever they are read.
// Payload: per plane a mode byte {0 stored, 1 coded, 2 constant}; coded = varint input sizes
// of sub-stages 1..n-1, varint length, bytes; constant = the one byte value. Then the tail.
//
// Records (flag 4, set when the shape has records, e.g. K layers each after its 12-byte
// header gathered into one chunk): the input is n records of `record` bytes, each `head`
// bytes of other data then a body. The payload starts with the heads: the first head raw,
// then one plane record (stored or constant) of every later head XORed with the one before
// (equal heads cost two bytes). The concatenated bodies follow, split as above.
#include <algorithm>
#include <cstdint>
#include <map>

#include "pipeline.hpp"
#include "byte_transpose.hpp"
#include "codec_impls.hpp"
#include "varint.hpp"

namespace stz {

namespace {

constexpr uint8_t kPlanesId = 13;
constexpr unsigned kMaxWidth = 4096, kMaxHead = 16, kMaxScalarPlanes = 16, kMaxSubStages = 4;
constexpr uint8_t kFlagChannelMajor = 1, kFlagBlocks = 2, kFlagRecords = 4;
constexpr uint64_t kMaxRecordHead = 64, kMaxRecordBytes = uint64_t{1} << 40;
constexpr uint8_t kModeStored = 0, kModeCoded = 1, kModeConstant = 2;
constexpr size_t kKeptCodedBytes = size_t{8} << 20;

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

    std::vector<Field> fields() const {
        std::vector<Field> f;
        if (!blocks) {
            for (uint32_t b = 0; b < width; ++b) f.push_back({b, 1});
        } else {
            for (uint32_t b = 0; b < head; ++b) f.push_back({b, 1});
            if (width > head) f.push_back({head, width - head});
        }
        return f;
    }
};

void put_recipe(Bytes& p, const Pipeline& r) {
    p.push_back(static_cast<uint8_t>(r.stages.size()));
    for (const auto& st : r.stages) {
        if (st.params.size() > 255) throw Error("planes: sub-codec parameters too long");
        p.push_back(st.codec->id());
        p.push_back(static_cast<uint8_t>(st.params.size()));
        append_bytes(p, st.params);
    }
}

Bytes write_params(const PlanesParams& P) {
    Bytes p;
    p.push_back(static_cast<uint8_t>((P.channel_major ? kFlagChannelMajor : 0) | (P.blocks ? kFlagBlocks : 0) |
                                     (P.record ? kFlagRecords : 0)));
    append_le<uint16_t>(p, static_cast<uint16_t>(P.width));
    p.push_back(static_cast<uint8_t>(P.head));
    put_varint(p, P.cols);
    if (P.record) {  // only then: parameters without records are what they were before records
        put_varint(p, P.record);
        p.push_back(static_cast<uint8_t>(P.record_head));
    }
    p.push_back(static_cast<uint8_t>(P.recipes.size()));
    for (const auto& r : P.recipes) put_recipe(p, r);
    append_bytes(p, P.plane_recipe);
    if (p.size() > 255) throw Error("planes: the sub-pipelines do not fit in a stage's 255 parameter bytes");
    return p;
}

// Every field checked: a chunk's parameters are untrusted.
PlanesParams read_params(ByteSpan p) {
    SpanReader r(p);
    try {
        PlanesParams P;
        uint8_t flags = r.u8("planes flags");
        if (flags & ~(kFlagChannelMajor | kFlagBlocks | kFlagRecords)) throw Error("planes: unknown flags");
        P.channel_major = flags & kFlagChannelMajor;
        P.blocks = flags & kFlagBlocks;
        P.width = r.u16("planes width");
        P.head = r.u8("planes head");
        size_t pos = r.pos();
        P.cols = get_varint(p, pos, "planes");
        r.need(pos - r.pos(), "planes columns");
        if (flags & kFlagRecords) {
            P.record = get_varint(p, pos, "planes");
            r.need(pos - r.pos(), "planes record size");
            P.record_head = r.u8("planes record head");
            if (P.record <= P.record_head || P.record > kMaxRecordBytes || P.record_head > kMaxRecordHead)
                throw Error("planes: bad record geometry");
        }
        if (P.width == 0 || P.width > kMaxWidth || P.cols == 0 || P.cols > (uint64_t{1} << 40))
            throw Error("planes: bad geometry");
        if (P.blocks ? (P.head > kMaxHead || P.head > P.width) : (P.head != 0 || P.width > kMaxScalarPlanes))
            throw Error("planes: bad geometry");
        const size_t n_planes = P.fields().size();
        uint8_t n_recipes = r.u8("planes recipe count");
        if (n_recipes == 0 || n_recipes > n_planes) throw Error("planes: bad recipe count");
        for (uint8_t i = 0; i < n_recipes; ++i) {
            Pipeline rec;
            uint8_t n_stages = r.u8("planes recipe");
            if (n_stages == 0 || n_stages > kMaxSubStages) throw Error("planes: bad sub-pipeline length");
            for (uint8_t s = 0; s < n_stages; ++s) {
                uint8_t id = r.u8("planes stage");
                const Codec* c = find_codec(id);
                if (!c) throw Error("planes: unknown codec id " + std::to_string(id));
                if (id == kPlanesId) throw Error("planes: a plane cannot be split again");
                ByteSpan sp = r.bytes(r.u8("planes stage"), "planes stage parameters");
                c->check_params(sp);  // sub-recipes are validated like top-level stages
                rec.stages.push_back({c, Bytes(sp.begin(), sp.end())});
            }
            P.recipes.push_back(std::move(rec));
        }
        ByteSpan map = r.bytes(n_planes, "planes recipe map");
        P.plane_recipe.assign(map.begin(), map.end());
        for (uint8_t ri : P.plane_recipe)
            if (ri >= n_recipes) throw Error("planes: bad recipe index");
        if (r.remaining()) throw Error("planes: trailing parameter bytes");
        return P;
    } catch (const DataError& e) {
        throw Error(std::string("planes: bad parameters (") + e.what() + ")");
    }
}

// Where the bytes of one chunk go: rows x cols elements of `width` bytes, then a tail.
struct Geometry {
    uint64_t rows = 0, cols = 1, body = 0;
    std::vector<Field> fields;
    std::vector<uint64_t> offset;  // plane p starts at offset[p] of the plane buffer
    uint64_t plane_size(size_t p) const { return uint64_t{fields[p].width} * rows * cols; }
};

Geometry geometry(const PlanesParams& P, size_t size) {
    Geometry g;
    g.fields = P.fields();
    uint64_t elems = size / P.width;
    g.cols = P.channel_major && P.cols > 1 && elems / P.cols > 0 ? P.cols : 1;
    g.rows = elems / g.cols;
    g.body = g.rows * g.cols * P.width;
    for (const auto& f : g.fields) g.offset.push_back(uint64_t{f.start} * g.rows * g.cols);
    return g;
}

// Moves bytes between the element layout and the planes. Channel-major: for each column,
// plane p holds, per field byte k, that column's rows in order. Storage order: element by
// element. `plane[p]` is where plane p starts (each plane_size(p) bytes; on decode a stored
// plane is read where it lies in the payload, not copied first).

// Storage order of scalars (one column): one straight (vectorisable) pass. A template on the
// element width lets the common float cases unroll.
template <bool ToPlanes, unsigned W>
void permute_scalar_in_order(uint8_t* elems, uint8_t* const* plane, uint64_t R) {
    uint8_t* dst[W];
    for (unsigned j = 0; j < W; ++j) dst[j] = plane[j];
    for (uint64_t r = 0; r < R; ++r)
        for (unsigned j = 0; j < W; ++j) ToPlanes ? void(dst[j][r] = elems[r * W + j]) : void(elems[r * W + j] = dst[j][r]);
}

// Quant blocks in storage order: the header bytes one by one, the payload as one copy. Always
// inlined, so the calls with compile-time sizes for the common blocks (q4_0, q8_0: a 2-byte
// scale) get inlined copies.
template <bool ToPlanes>
[[gnu::always_inline]] inline void permute_blocks(uint8_t* elems, uint8_t* const* plane, uint64_t n, uint64_t W, uint64_t H) {
    const uint64_t body = W - H;
    uint8_t* payload = plane[H];
    for (uint64_t i = 0; i < n; ++i) {
        uint8_t* e = elems + i * W;
        for (uint64_t b = 0; b < H; ++b) ToPlanes ? void(plane[b][i] = e[b]) : void(e[b] = plane[b][i]);
        ToPlanes ? void(std::memcpy(payload + i * body, e + H, body)) : void(std::memcpy(e + H, payload + i * body, body));
    }
}

template <bool ToPlanes>
void permute_blocks_in_order(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g) {
    const uint64_t n = g.rows * g.cols, W = P.width, H = P.head;
    if (H == 2 && W == 18) return permute_blocks<ToPlanes>(elems, plane, n, 18, 2);
    if (H == 2 && W == 34) return permute_blocks<ToPlanes>(elems, plane, n, 34, 2);
    permute_blocks<ToPlanes>(elems, plane, n, W, H);
}

// Channel-major (and scalars of one column): the rows x (cols * width) byte matrix of the
// elements, each byte column of which is a run of `rows` bytes in a plane: byte k of field p
// of column c at plane[p] + (c * field width + k) * rows.
template <bool ToPlanes>
void permute_columns(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g) {
    const uint64_t W = P.width, R = g.rows;
    // Per byte j of an element (W <= kMaxWidth): its plane, and its run's index within a
    // column's share of that plane (field width, byte k of the field).
    std::vector<uint8_t*> base(W);
    std::vector<uint64_t> field_width(W), byte_in_field(W);
    for (size_t p = 0; p < g.fields.size(); ++p)
        for (uint32_t k = 0; k < g.fields[p].width; ++k) {
            const uint32_t j = g.fields[p].start + k;
            base[j] = plane[p], field_width[j] = g.fields[p].width, byte_in_field[j] = k;
        }
    transpose_bytes<ToPlanes>(elems, R, g.cols * W, [&](uint64_t x) {
        const uint64_t c = x / W, j = x % W;
        return base[j] + (c * field_width[j] + byte_in_field[j]) * R;
    });
}

template <bool ToPlanes>
void permute(uint8_t* elems, uint8_t* const* plane, const PlanesParams& P, const Geometry& g) {
    const uint64_t W = P.width;
    const bool scalar = !P.blocks || (P.head == W);
    if (g.body == 0) return;
    if (scalar && W == 1) return ToPlanes ? void(std::copy(elems, elems + g.body, plane[0])) : void(std::copy(plane[0], plane[0] + g.body, elems));
    if (scalar && W == 2 && g.cols == 1) return permute_scalar_in_order<ToPlanes, 2>(elems, plane, g.rows);
    if (scalar && W == 4 && g.cols == 1) return permute_scalar_in_order<ToPlanes, 4>(elems, plane, g.rows);
    // Blocks in storage order (never more than one column: geometry() gives rm one); scalars
    // of one column are the same in both orders.
    if (!scalar && !P.channel_major) return permute_blocks_in_order<ToPlanes>(elems, plane, P, g);
    permute_columns<ToPlanes>(elems, plane, P, g);
}

// The decoder's plane buffer, reused per thread (a fresh zeroed buffer per chunk costs page faults).
// Sub-pipelines never re-enter planes (nesting is refused), so one buffer per thread suffices.
uint8_t* scratch(uint64_t n) {
    thread_local std::unique_ptr<uint8_t[]> buf;
    thread_local uint64_t cap = 0;
    if (n > cap) buf.reset(new uint8_t[n]), cap = n;
    return buf.get();
}

bool is_store(const Pipeline& r) { return r.stages.size() == 1 && r.stages[0].codec->id() == 0; }

// Turns the plane whose bytes lie at out[at + 1, at + 1 + size) into its record at out[w...]
// (w <= at: records before it may have shrunk) and returns where the record ends. A record is
// never longer than the stored one (1 + size bytes), so it never reaches a later plane's bytes;
// a stored plane that has not moved costs nothing (the mantissa planes: no second copy).
size_t place_plane_record(Bytes& out, size_t w, size_t at, uint64_t size, const Pipeline& recipe) {
    const ByteSpan plane(out.data() + at + 1, size);
    if (plane.size() >= 2 && std::all_of(plane.begin(), plane.end(), [&](uint8_t b) { return b == plane[0]; })) {
        const uint8_t value = plane[0];
        out[w] = kModeConstant, out[w + 1] = value;
        return w + 2;
    }
    const bool may_shrink = !recipe.stages.empty() && recipe.stages[0].codec->may_shrink(plane, recipe.stages[0].params);
    if (!plane.empty() && !is_store(recipe) && may_shrink) {
        // One stage (every preset's planes): coded into a buffer reused per thread, not into a
        // fresh one per plane (whose pages the kernel faults in and zeroes every time).
        thread_local Bytes coded;
        EncodedChunk e;
        const bool one_stage = recipe.stages.size() == 1;
        if (one_stage) coded.clear(), recipe.stages[0].codec->encode(plane, recipe.stages[0].params, coded);
        else e = encode_pipeline(recipe, plane);
        const Bytes& payload = one_stage ? coded : e.payload;
        Bytes rec{kModeCoded};
        for (size_t i = 1; i < e.stage_input_sizes.size(); ++i) put_varint(rec, e.stage_input_sizes[i]);
        put_varint(rec, payload.size());
        const bool coded_smaller = rec.size() + payload.size() < 1 + plane.size();
        if (coded_smaller) {  // the plane's bytes are no longer needed
            std::memcpy(out.data() + w, rec.data(), rec.size());
            std::memcpy(out.data() + w + rec.size(), payload.data(), payload.size());
            w += rec.size() + payload.size();
        }
        // Kept for the next plane up to the planes of a default-sized chunk; a larger one
        // (--chunk-size up to 64 MiB) is not held by every worker between chunks.
        if (coded.capacity() > kKeptCodedBytes) Bytes().swap(coded);
        if (coded_smaller) return w;
    }
    out[w] = kModeStored;
    if (w != at && size) std::memmove(out.data() + w + 1, plane.data(), size);
    return w + 1 + size;
}

void encode_plane(ByteSpan plane, const Pipeline& recipe, Bytes& out) {
    const size_t at = out.size();
    out.resize(at + 1 + plane.size());
    if (!plane.empty()) std::memcpy(out.data() + at + 1, plane.data(), plane.size());
    out.resize(place_plane_record(out, at, at, plane.size(), recipe));
}

// Decodes one plane record at `pos` (exactly `size` bytes) and returns where the plane is:
// a stored plane where it lies in `in`, any other in `dst`. `slack`: dst is followed by
// Codec::kDecodeSlack bytes that may be overwritten (the planes decoded after it, in order).
const uint8_t* decode_plane(ByteSpan in, size_t& pos, const Pipeline& recipe, uint8_t* dst, uint64_t size, bool slack) {
    if (pos >= in.size()) throw Error("planes: truncated plane");
    uint8_t mode = in[pos++];
    if (mode == kModeStored || mode == kModeConstant) {
        uint64_t n = mode == kModeStored ? size : 1;
        if (mode == kModeConstant && size < 2) throw Error("planes: bad constant plane");
        if (n > in.size() - pos) throw Error("planes: truncated plane");
        const uint8_t* at = in.data() + pos;
        pos += n;
        if (mode == kModeStored) return at;
        std::fill(dst, dst + size, *at);
        return dst;
    }
    if (mode != kModeCoded || size == 0) throw Error("planes: bad plane mode");
    std::vector<uint64_t> sizes{size};
    for (size_t i = 1; i < recipe.stages.size(); ++i) sizes.push_back(get_varint(in, pos, "planes"));
    uint64_t len = get_varint(in, pos, "planes");
    if (len > in.size() - pos) throw Error("planes: truncated plane");
    check_stage_sizes(recipe, sizes, len);  // nested sizes are as untrusted as a chunk's
    if (recipe.stages.size() == 1) {  // the common case: decoded straight into the plane buffer
        const Codec& codec = *recipe.stages[0].codec;
        // Later records follow (and the record's head lies before: nothing before `in` is read).
        const bool in_slack = in.size() - pos - len >= Codec::kDecodeSlack;
        if (slack) codec.decode_into_slack(in.subspan(pos, len), recipe.stages[0].params, size, dst, in_slack);
        else codec.decode_into(in.subspan(pos, len), recipe.stages[0].params, size, dst);
    } else {
        Bytes plane = decode_pipeline(recipe, in.subspan(pos, len), sizes);
        if (plane.size() != size) throw Error("planes: plane decoded to a wrong size");
        std::copy(plane.begin(), plane.end(), dst);
    }
    pos += len;
    return dst;
}

// Where each plane's stored record goes in `out` (from `base` on), the output grown to hold
// them all (not zero-filled, bytes.hpp: permute writes every plane byte), and the planes' starts.
std::vector<uint8_t*> lay_out_planes(const Geometry& g, Bytes& out, size_t base, std::vector<size_t>& at) {
    at.resize(g.fields.size());
    size_t end = base;
    for (size_t p = 0; p < at.size(); ++p) at[p] = end, end += 1 + g.plane_size(p);
    out.resize(end);
    std::vector<uint8_t*> plane(g.fields.size());
    for (size_t p = 0; p < plane.size(); ++p) plane[p] = out.data() + at[p] + 1;
    return plane;
}

// The permuted planes at `at` turned into their records in order; returns where they end.
size_t place_planes(const Geometry& g, const PlanesParams& P, Bytes& out, size_t base, const std::vector<size_t>& at) {
    size_t w = base;
    for (size_t p = 0; p < g.fields.size(); ++p) w = place_plane_record(out, w, at[p], g.plane_size(p), P.recipes[P.plane_recipe[p]]);
    return w;
}

// Data without records: the planes, then the tail. The planes are permuted straight into
// `out`, each where its stored record would be, and then turned into their records in order.
void encode_body(ByteSpan in, const PlanesParams& P, Bytes& out) {
    Geometry g = geometry(P, in.size());
    const size_t base = out.size();
    std::vector<size_t> at;
    std::vector<uint8_t*> plane = lay_out_planes(g, out, base, at);
    permute<true>(const_cast<uint8_t*>(in.data()), plane.data(), P, g);  // reads only
    out.resize(place_planes(g, P, out, base, at));
    append_bytes(out, in.subspan(g.body));
}

// Decodes the plane records of `in` (data without records, out_size bytes once decoded) into
// the per-thread plane buffer, or finds them where they lie stored; returns the tail.
ByteSpan decode_planes(ByteSpan in, const PlanesParams& P, const Geometry& g, uint64_t out_size, std::vector<uint8_t*>& plane) {
    const uint64_t tail = out_size - g.body;
    if (tail > in.size()) throw Error("planes: truncated tail");
    ByteSpan records = in.first(in.size() - tail);
    // In plane order (the planes lie in the buffer in that order: fields() are in byte order),
    // with slack after the last: what a plane's decoder writes past its end lands in planes
    // not decoded yet.
    uint8_t* planes = scratch(g.body + Codec::kDecodeSlack);
    plane.resize(g.fields.size());
    size_t pos = 0;
    for (size_t p = 0; p < g.fields.size(); ++p)  // permute only reads the planes: const_cast is safe
        plane[p] = const_cast<uint8_t*>(
            decode_plane(records, pos, P.recipes[P.plane_recipe[p]], planes + g.offset[p], g.plane_size(p), true));
    if (pos != records.size()) throw Error("planes: bytes left after the last plane");
    return in.last(tail);
}

void decode_body(ByteSpan in, const PlanesParams& P, uint64_t out_size, Bytes& out) {
    Geometry g = geometry(P, out_size);
    std::vector<uint8_t*> plane;
    ByteSpan tail = decode_planes(in, P, g, out_size, plane);
    size_t base = out.size();
    out.resize(base + g.body);  // not zero-filled (bytes.hpp): permute writes every byte
    permute<false>(out.data() + base, plane.data(), P, g);
    append_bytes(out, tail);
}

// Whether the planes of n record bodies of B bytes are the planes of each body in turn, so
// that each body can be permuted on its own, straight from or into its record: storage order
// (or planes of one-byte fields in one column), and whole elements in every body.
bool planes_split_by_record(const PlanesParams& P, uint64_t B, uint64_t n) {
    if (B % P.width) return false;
    const Geometry g = geometry(P, B * n);
    if (g.cols != 1) return false;
    if (!P.channel_major) return true;
    return std::all_of(g.fields.begin(), g.fields.end(), [](const Field& f) { return f.width == 1; });
}

// Permutes every record's body (R bytes a record, the body after H bytes of head) to or from
// its share of the planes (planes_split_by_record).
template <bool ToPlanes>
void permute_records(uint8_t* records, uint8_t* const* plane, const PlanesParams& P, uint64_t n, uint64_t R, uint64_t H) {
    const Geometry one = geometry(P, R - H);
    std::vector<uint8_t*> share(one.fields.size());
    for (uint64_t i = 0; i < n; ++i) {
        for (size_t p = 0; p < share.size(); ++p) share[p] = plane[p] + i * one.plane_size(p);
        permute<ToPlanes>(records + i * R + H, share.data(), P, one);
    }
}

const Pipeline& store_recipe() {
    static const Pipeline store = [] {
        Pipeline p;
        p.stages.push_back({find_codec(uint8_t{0}), {}});
        return p;
    }();
    return store;
}

// Every head after the first, XORed with the one before.
Bytes head_deltas(ByteSpan in, uint64_t n, uint64_t R, uint64_t H) {
    Bytes deltas;
    deltas.reserve(n ? H * (n - 1) : 0);
    for (uint64_t i = 1; i < n; ++i)
        for (uint64_t k = 0; k < H; ++k) deltas.push_back(in[i * R + k] ^ in[(i - 1) * R + k]);
    return deltas;
}

// Records: the heads (first raw, the others XORed with their predecessor), then the bodies.
void encode_records(ByteSpan in, const PlanesParams& P, Bytes& out) {
    const uint64_t R = P.record, H = P.record_head, B = R - H;
    if (in.size() % R) throw Error("planes: the input is not a whole number of records");
    const uint64_t n = in.size() / R;
    if (n) append_bytes(out, in.first(H));
    encode_plane(head_deltas(in, n, R, H), store_recipe(), out);
    if (planes_split_by_record(P, B, n)) {  // each body permuted straight from its record
        const Geometry g = geometry(P, B * n);
        const size_t base = out.size();
        std::vector<size_t> at;
        std::vector<uint8_t*> plane = lay_out_planes(g, out, base, at);
        permute_records<true>(const_cast<uint8_t*>(in.data()), plane.data(), P, n, R, H);  // reads only
        out.resize(place_planes(g, P, out, base, at));
        return;
    }
    thread_local Bytes bodies;  // reused: a fresh buffer per chunk costs page faults
    bodies.clear();
    bodies.reserve(B * n);
    for (uint64_t i = 0; i < n; ++i) append_bytes(bodies, in.subspan(i * R + H, B));
    encode_body(bodies, P, out);
}

void decode_records(ByteSpan in, const PlanesParams& P, uint64_t out_size, Bytes& out) {
    const uint64_t R = P.record, H = P.record_head, B = R - H;
    if (out_size % R) throw Error("planes: the output is not a whole number of records");
    const uint64_t n = out_size / R;
    const uint64_t first = n ? H : 0;
    if (first >= in.size()) throw Error("planes: truncated record heads");
    Bytes heads(H * n);
    std::copy(in.begin(), in.begin() + first, heads.begin());
    size_t pos = first;
    if (in[pos] == kModeCoded) throw Error("planes: bad record heads mode");
    uint8_t* later = heads.data() + first;
    if (const uint8_t* at = decode_plane(in, pos, store_recipe(), later, H * n - first, false); at != later)
        std::copy(at, at + (H * n - first), later);
    for (uint64_t i = first; i < heads.size(); ++i) heads[i] ^= heads[i - H];
    const size_t base = out.size();
    if (planes_split_by_record(P, B, n)) {  // each body permuted straight into its record
        const Geometry g = geometry(P, B * n);
        std::vector<uint8_t*> plane;
        if (!decode_planes(in.subspan(pos), P, g, B * n, plane).empty()) throw Error("planes: bytes after the record bodies");
        out.resize(base + out_size);  // not zero-filled: every head and body byte is written below
        uint8_t* o = out.data() + base;
        permute_records<false>(o, plane.data(), P, n, R, H);
        if (H)
            for (uint64_t i = 0; i < n; ++i) std::memcpy(o + i * R, heads.data() + i * H, H);
        return;
    }
    // The bodies are decoded in place, then spread out from the last record to the first
    // (record i's body moves from i * B to i * R + H, never before where it was).
    decode_body(in.subspan(pos), P, B * n, out);
    if (out.size() - base != B * n) throw Error("planes: record bodies decoded to a wrong size");
    out.resize(base + out_size);
    uint8_t* o = out.data() + base;
    for (uint64_t i = n; i-- > 0;) {
        std::memmove(o + i * R + H, o + i * B, B);
        if (H) std::memcpy(o + i * R, heads.data() + i * H, H);
    }
}

class PlaneSplitCodec final : public Codec {
public:
    uint8_t id() const override { return kPlanesId; }
    std::string_view name() const override { return "planes"; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) const override;
    void check_params(ByteSpan params) const override { (void)read_params(params); }
    std::vector<std::string> sample_specs() const override {
        return {"planes(all=zstd:1)", "planes(top=rans:1,rest=store)", "planes:rm(top=rans:0,rest=zstd:3)",
                "planes(lo=store,hi=rans:1,q=zstd:3,rest=store)"};
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        PlanesParams P = read_params(params);
        P.record ? encode_records(in, P, out) : encode_body(in, P, out);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        PlanesParams P = read_params(params);
        P.record ? decode_records(in, P, out_size, out) : decode_body(in, P, out_size, out);
    }
    std::string describe(ByteSpan params) const override;
    // + 1: the mode byte of the heads' plane record (the heads themselves are input bytes).
    size_t max_encoded_size(size_t n) const override { return n + 2 * (kMaxHead + kMaxScalarPlanes) + 1; }
    // The output has no records (nor the input's rows), whatever follows sees plain bytes of planes.
    DataShape output_shape(const DataShape& in) const override {
        DataShape s = in;
        s.record_bytes = s.record_head = 0;
        return s;
    }
};

// Plane names a user can give: p<i>, top, rest, all, lo, hi, q. A name the data has no plane
// for (q on floats, p3 on f16) selects nothing, so one spec serves every element type.
std::vector<size_t> planes_named(const std::string& key, const PlanesParams& P, size_t n_planes) {
    auto one = [&](size_t i) { return i < n_planes ? std::vector<size_t>{i} : std::vector<size_t>{}; };
    const size_t none = SIZE_MAX;
    if (key == "top") return one(P.blocks ? (P.head >= 2 ? 1 : 0) : P.width - 1);
    if (key == "lo") return one(P.blocks && P.head >= 1 ? 0 : none);
    if (key == "hi") return one(P.blocks && P.head >= 2 ? 1 : none);
    if (key == "q") return one(P.blocks && P.width > P.head ? P.head : none);
    if (key.size() >= 2 && key[0] == 'p' && std::all_of(key.begin() + 1, key.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) && key.size() <= 4)
        return one(std::stoul(key.substr(1)));
    throw Error("planes: unknown plane '" + key + "' (p<i>, top, rest, all; blocks: lo, hi, q)");
}

Bytes PlaneSplitCodec::make_params(const std::vector<std::string>& args, const DataShape& shape) const {
    PlanesParams P;
    std::string body;
    for (const auto& a : args) {
        if (a == "cm" || a == "rm") P.channel_major = a == "cm";
        else if (!a.empty() && a[0] == '(' && body.empty()) body = a.substr(1, a.size() - 2);
        else throw Error("planes: unknown argument '" + a + "' (planes[:cm|:rm](plane=pipeline,...))");
    }
    if (body.empty()) throw Error("planes needs its sub-pipelines, e.g. planes(top=rans:1,rest=store)");
    P.blocks = shape.kind == ElemKind::Block;
    P.width = shape.kind == ElemKind::Bytes ? 1 : std::clamp<uint32_t>(shape.elem_bytes, 1, P.blocks ? kMaxWidth : kMaxScalarPlanes);
    P.head = P.blocks ? std::min<uint32_t>({shape.block_head, kMaxHead, P.width}) : 0;
    P.cols = !shape.transposed && shape.row_bytes && shape.row_bytes % P.width == 0 ? shape.row_bytes / P.width : 1;
    if (shape.record_bytes) {
        if (shape.record_head > kMaxRecordHead || shape.record_bytes <= shape.record_head ||
            shape.record_bytes > kMaxRecordBytes)
            throw Error("planes: records of " + std::to_string(shape.record_bytes) + " bytes with a head of " +
                        std::to_string(shape.record_head) + " are not supported (head <= 64, body > 0)");
        P.record = shape.record_bytes;
        P.record_head = shape.record_head;
    }
    const size_t n = P.fields().size();
    std::vector<int> chosen(n, -1), rest(n, -1), all(n, -1);
    std::vector<std::string> texts;
    for (const auto& item : split_top_level(body, ',')) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) throw Error("planes: expected plane=pipeline, got '" + item + "'");
        std::string key = item.substr(0, eq), spec = item.substr(eq + 1);
        Pipeline sub = parse_pipeline(spec, DataShape{});
        if (sub.stages.size() > kMaxSubStages) throw Error("planes: a plane's pipeline has more than 4 stages");
        for (const auto& st : sub.stages)
            if (st.codec->id() == kPlanesId) throw Error("planes: a plane cannot be split again");
        std::string canon = sub.describe();
        auto at = std::find(texts.begin(), texts.end(), canon);
        int ri = static_cast<int>(at - texts.begin());
        if (at == texts.end()) texts.push_back(canon), P.recipes.push_back(std::move(sub));
        auto& target = key == "all" ? all : key == "rest" ? rest : chosen;
        std::vector<size_t> which(n);
        for (size_t i = 0; i < n; ++i) which[i] = i;
        if (key != "all" && key != "rest") which = planes_named(key, P, n);
        for (size_t i : which) {
            if (target[i] >= 0) throw Error("planes: plane '" + key + "' given twice");
            target[i] = ri;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        int ri = chosen[i] >= 0 ? chosen[i] : rest[i] >= 0 ? rest[i] : all[i];
        if (ri < 0) throw Error("planes: plane p" + std::to_string(i) + " has no pipeline (add rest=... or all=...)");
        P.plane_recipe.push_back(static_cast<uint8_t>(ri));
    }
    // Drop recipes no plane uses, so the stored parameters hold only what decoding needs.
    std::vector<Pipeline> used;
    std::map<uint8_t, uint8_t> renumber;
    for (auto& ri : P.plane_recipe) {
        if (!renumber.count(ri)) renumber[ri] = static_cast<uint8_t>(used.size()), used.push_back(P.recipes[ri]);
        ri = renumber[ri];
    }
    P.recipes = std::move(used);
    return write_params(P);
}

std::string PlaneSplitCodec::describe(ByteSpan params) const {
    PlanesParams P;
    try {
        P = read_params(params);
    } catch (const Error&) {
        return "planes";
    }
    std::string s = P.channel_major ? "planes(" : "planes:rm(";
    if (P.recipes.size() == 1) return s + "all=" + P.recipes[0].describe() + ")";
    for (size_t i = 0; i < P.plane_recipe.size(); ++i) {
        bool q = P.blocks && i == P.head;
        s += (i ? "," : "") + (q ? std::string("q") : "p" + std::to_string(i)) + "=" + P.recipes[P.plane_recipe[i]].describe();
    }
    return s + ")";
}

}  // namespace

std::unique_ptr<Codec> make_plane_split_codec() { return std::make_unique<PlaneSplitCodec>(); }

}  // namespace stz
