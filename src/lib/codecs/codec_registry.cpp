// The registry: the id-indexed table expanded from codecs.def, the only list of codecs.
#include <array>
#include <cstring>

#include "codec_impls.hpp"

namespace stz {

namespace {

struct Registry {
    std::vector<std::unique_ptr<Codec>> owned;  // in codecs.def order
    std::array<const Codec*, 256> by_id{};
    Registry() {
        auto add = [&](unsigned id, std::string_view name, std::unique_ptr<Codec> c) {
            // A line whose id or name disagrees with its codec would make files unreadable:
            // refuse to start rather than write them.
            if (!c || c->id() != id || c->name() != name || by_id[id])
                throw Error("codec registry: codecs.def line for '" + std::string(name) + "' (id " + std::to_string(id) +
                            ") does not match its codec or repeats an id");
            by_id[id] = c.get();
            owned.push_back(std::move(c));
        };
#define STZ_CODEC(id, name, factory) add(id, #name, make_##factory##_codec());
#include "codecs.def"
#undef STZ_CODEC
    }
};

const Registry& registry() {
    static const Registry r;
    return r;
}

}  // namespace

const Codec* find_codec(uint8_t id) { return registry().by_id[id]; }

const Codec* find_codec(std::string_view name) {
    for (const auto& c : registry().owned)
        if (c->name() == name) return c.get();
    return nullptr;
}

std::vector<const Codec*> all_codecs() {
    std::vector<const Codec*> v;
    for (const auto& c : registry().owned) v.push_back(c.get());
    return v;
}

void Codec::decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const {
    thread_local Bytes buf;  // reused: a plane per call
    buf.clear();
    decode(in, params, out_size, buf);
    if (buf.size() != out_size) throw Error("codec " + std::string(name()) + " produced a wrong size");
    if (out_size) std::memcpy(dst, buf.data(), out_size);
}

void Codec::check_params(ByteSpan params) const {
    if (!params.empty()) throw Error(std::string(name()) + ": takes no parameters, found " + std::to_string(params.size()) + " bytes");
}

void require_params(bool ok, std::string_view codec, const char* why) {
    if (!ok) throw Error(std::string(codec) + ": bad parameters (" + why + ")");
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
