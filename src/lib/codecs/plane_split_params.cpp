// The planes codec's parameters: the spec (`planes[:cm|:rm](plane=pipeline,...)`) made into
// parameter bytes for data of a shape, those bytes read back and checked, and described (the
// format is described in plane_split_codec.cpp).
#include <algorithm>
#include <cstdint>
#include <map>

#include "plane_split.hpp"
#include "varint.hpp"

namespace stz::planes {

namespace {

constexpr unsigned kMaxSubStages = 4;
constexpr uint8_t kFlagChannelMajor = 1, kFlagBlocks = 2, kFlagRecords = 4;
constexpr uint64_t kMaxRecordHead = 64, kMaxRecordBytes = uint64_t{1} << 40;

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

}  // namespace

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
        const size_t n_planes = P.n_fields();
        uint8_t n_recipes = r.u8("planes recipe count");
        if (n_recipes == 0 || n_recipes > n_planes) throw Error("planes: bad recipe count");
        P.recipes.reserve(n_recipes);
        for (uint8_t i = 0; i < n_recipes; ++i) {
            Pipeline rec;
            uint8_t n_stages = r.u8("planes recipe");
            if (n_stages == 0 || n_stages > kMaxSubStages) throw Error("planes: bad sub-pipeline length");
            rec.stages.reserve(n_stages);
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

Bytes make_params(const std::vector<std::string>& args, const DataShape& shape) {
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
    const size_t n = P.n_fields();
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

std::string describe_params(ByteSpan params) {
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

}  // namespace stz::planes
