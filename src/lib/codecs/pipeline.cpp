#include "pipeline.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

#include "base/limits.hpp"

namespace stz {

static std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t p = s.find(sep, start);
        out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
        if (p == std::string_view::npos) break;
        start = p + 1;
    }
    return out;
}

std::vector<std::string> split_top_level(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '(') ++depth;
        else if (s[i] == ')' && --depth < 0) throw Error("unbalanced ')' in '" + std::string(s) + "'");
        else if (s[i] == sep && depth == 0) out.emplace_back(s.substr(start, i - start)), start = i + 1;
    }
    if (depth != 0) throw Error("unbalanced '(' in '" + std::string(s) + "'");
    out.emplace_back(s.substr(start));
    return out;
}

// "name:arg:arg(body)" -> name, then the ':' arguments, then "(body)" as the last argument
// (a graph stage such as planes reads its sub-pipelines from it; other codecs reject it).
static std::vector<std::string> stage_words(std::string_view text) {
    size_t open = text.find('(');
    std::vector<std::string> words = split(text.substr(0, open), ':');
    if (open != std::string_view::npos) {
        if (text.back() != ')') throw Error("text after ')' in '" + std::string(text) + "'");
        words.emplace_back(text.substr(open));
    }
    return words;
}

std::string Pipeline::describe() const {
    if (stages.empty()) return "store";
    std::string s;
    for (const auto& st : stages) {
        if (!s.empty()) s += '+';
        s += st.codec->describe(st.params);
    }
    return s;
}

Pipeline parse_pipeline(std::string_view spec, const DataShape& shape) {
    Pipeline p;
    DataShape cur = shape;
    if (spec.empty()) throw Error("empty codec pipeline");
    for (const auto& stage_text : split_top_level(spec, '+')) {
        auto parts = stage_words(stage_text);
        const Codec* c = find_codec(parts[0]);
        if (!c) throw Error("unknown codec '" + parts[0] + "' in pipeline '" + std::string(spec) + "'");
        std::vector<std::string> args(parts.begin() + 1, parts.end());
        p.stages.push_back({c, c->make_params(args, cur)});
        cur = c->output_shape(cur, p.stages.back().params);
    }
    return p;
}

// The alternatives of a spec for a shape, remembered per thread: a file's plan asks for the same
// few (spec, shape) pairs section after section, file after file, and reading the text again
// was 3 % of a small quantised file's compression. Codecs' parameters are a function of the
// arguments and the shape alone, so a remembered parse is the parse. At most kRememberedParses
// are kept (then forgotten together); a spec that does not parse is not remembered.
constexpr size_t kRememberedParses = 64;

std::vector<Pipeline> parse_alternatives(std::string_view spec, const DataShape& shape) {
    thread_local std::unordered_map<std::string, std::vector<Pipeline>> remembered;
    std::string key(reinterpret_cast<const char*>(&shape.kind), sizeof shape.kind);
    for (uint64_t field : {uint64_t{shape.elem_bytes}, uint64_t{shape.block_head}, shape.row_bytes, shape.keep_bytes,
                           uint64_t{shape.transposed}, shape.record_bytes, uint64_t{shape.record_head}})
        key.append(reinterpret_cast<const char*>(&field), sizeof field);
    key.append(spec);
    if (auto it = remembered.find(key); it != remembered.end()) return it->second;
    std::vector<Pipeline> v;
    for (const auto& alt : split_top_level(spec, '|')) v.push_back(parse_pipeline(alt, shape));
    if (remembered.size() >= kRememberedParses) remembered.clear();
    remembered.emplace(std::move(key), v);
    return v;
}

EncodedChunk encode_pipeline(const Pipeline& p, ByteSpan raw) {
    StagePrefix none;
    return encode_pipeline(p, raw, none, 0);
}

size_t shared_stages(const Pipeline& p, const Pipeline& q) {
    size_t n = 0;
    while (n < p.stages.size() && n < q.stages.size() && p.stages[n].codec == q.stages[n].codec &&
           p.stages[n].params == q.stages[n].params)
        ++n;
    return n;
}

EncodedChunk encode_pipeline(const Pipeline& p, ByteSpan raw, StagePrefix& prefix, size_t keep, bool own_recipe) {
    // The first stage reads the caller's bytes (or the prefix's output) in place; later stages
    // read the previous stage's output. (A chunk is up to 64 MiB: copying it first would be
    // wasted work.)
    if (prefix.stages > p.stages.size() || keep > p.stages.size()) throw Error("pipeline: stage prefix longer than the pipeline");
    EncodedChunk r;
    const size_t first = prefix.stages;
    Bytes cur = std::move(prefix.output), next;
    r.stage_input_sizes = std::move(prefix.input_sizes);
    prefix = StagePrefix{};
    ByteSpan in = first ? ByteSpan(cur) : raw;
    bool in_raw = first == 0;  // `in` is still the caller's bytes: no stage has written yet
    const bool keeps = keep > 0 && keep >= first;  // an earlier stage's output is gone by now
    const bool may_leave_out = own_recipe && first == 0 && keep == 0;
    const auto keep_output = [&](Bytes&& output) {
        prefix.stages = keep, prefix.output = std::move(output);
        prefix.input_sizes.assign(r.stage_input_sizes.begin(), r.stage_input_sizes.begin() + static_cast<ptrdiff_t>(keep));
    };
    for (size_t i = first; i < p.stages.size(); ++i) {
        r.stage_input_sizes.push_back(in.size());
        next.clear();
        const Stage& st = p.stages[i];
        // (Never the last stage: a recipe keeps at least one stage.)
        const bool may_skip = may_leave_out && i + 1 < p.stages.size();
        if (may_skip && !st.codec->encode_unless_unchanged(in, st.params, next)) {
            r.unchanged_stages.push_back(i);  // its output is its input: `in` goes on as it is
            continue;
        }
        if (!may_skip) st.codec->encode(in, st.params, next);
        std::swap(cur, next);
        in = cur, in_raw = false;
        if (keeps && i == keep) keep_output(std::move(next));  // stage i's input: moved, not copied
    }
    if (keeps && keep == p.stages.size()) keep_output(Bytes(cur));  // the payload itself: a copy
    if (in_raw) cur.assign(raw.begin(), raw.end());  // no stage, or none that changed anything
    r.payload = std::move(cur);
    return r;
}

Pipeline chunk_recipe(const Pipeline& p, EncodedChunk& e) {
    if (e.unchanged_stages.empty()) return p;
    Pipeline out;
    std::vector<uint64_t> sizes;
    for (size_t i = 0, u = 0; i < p.stages.size(); ++i) {
        if (u < e.unchanged_stages.size() && e.unchanged_stages[u] == i) {
            ++u;
            continue;
        }
        out.stages.push_back(p.stages[i]);
        sizes.push_back(e.stage_input_sizes.at(i));
    }
    e.stage_input_sizes = std::move(sizes);
    e.unchanged_stages.clear();
    return out;
}

void check_stage_sizes(const Pipeline& p, const std::vector<uint64_t>& sizes, uint64_t payload) {
    if (sizes.size() != p.stages.size()) throw Error("pipeline stage count mismatch");
    for (size_t i = 0; i < p.stages.size(); ++i) {
        const Codec& codec = *p.stages[i].codec;
        ByteSpan params = p.stages[i].params;
        // (Named only for an error: a string built for every plane of every chunk was an
        // allocation each, 1.4 % of a quantised cache's decompression.)
        const auto stage = [&] { return "stage " + std::to_string(i + 1) + " (" + std::string(codec.name()) + ")"; };
        const uint64_t in = sizes[i], enc = i + 1 < sizes.size() ? sizes[i + 1] : payload;
        if (in > kMaxStageBytes) throw Error(stage() + ": input size " + std::to_string(in) + " is too large");
        if (enc > codec.max_encoded_size(static_cast<size_t>(in)))
            throw Error(stage() + ": " + std::to_string(enc) + " encoded bytes from " + std::to_string(in) +
                        " is more than the codec can produce");
        if (in > codec.max_decoded_size(params, enc))
            throw Error(stage() + ": " + std::to_string(enc) + " encoded bytes cannot decode to the declared " + std::to_string(in));
    }
}

namespace {

// Decodes stages from the last down to `first` (each stage's input size is sizes[i]): returns
// the output of stage `first`, which lies in `cur` (or is `payload` itself when no stage ran).
ByteSpan decode_stages(const Pipeline& p, ByteSpan payload, const std::vector<uint64_t>& sizes, size_t first, Bytes& cur) {
    ByteSpan in = payload;
    Bytes next;
    for (size_t i = p.stages.size(); i-- > first;) {
        // A stage after the first decoded reads a buffer of its own, which it may keep.
        if (i + 1 < p.stages.size() && p.stages[i].codec->decode_in_place(cur, p.stages[i].params, static_cast<size_t>(sizes[i]))) {
            in = cur;
            continue;
        }
        next.clear();
        p.stages[i].codec->decode(in, p.stages[i].params, static_cast<size_t>(sizes[i]), next);
        if (next.size() != sizes[i]) throw Error("codec " + std::string(p.stages[i].codec->name()) + " produced a wrong size");
        std::swap(cur, next);
        in = cur;
    }
    return in;
}

}  // namespace

Bytes decode_pipeline(const Pipeline& p, ByteSpan payload, const std::vector<uint64_t>& sizes) {
    Bytes cur;
    decode_stages(p, payload, sizes, 0, cur);
    if (p.stages.empty()) return Bytes(payload.begin(), payload.end());
    return cur;  // moved, not copied: a decoded chunk of up to 64 MiB exists once
}

void decode_pipeline_into(const Pipeline& p, ByteSpan payload, const std::vector<uint64_t>& sizes, uint8_t* dst,
                          size_t out_size) {
    if (sizes.size() != p.stages.size()) throw Error("pipeline stage count mismatch");
    const uint64_t decoded = p.stages.empty() ? payload.size() : sizes[0];
    if (decoded != out_size) throw Error("pipeline decodes to " + std::to_string(decoded) + " bytes, not " + std::to_string(out_size));
    Bytes cur;
    ByteSpan in = decode_stages(p, payload, sizes, p.stages.empty() ? 0 : 1, cur);
    if (p.stages.empty()) {
        if (out_size) std::memcpy(dst, in.data(), out_size);
        return;
    }
    const Stage& first = p.stages[0];
    if (first.codec->writes_into()) return first.codec->decode_into(in, first.params, out_size, dst);
    // The first stage's own buffer (or its input, when it decodes in place), then one copy:
    // what a sink's write would have cost.
    if (p.stages.size() == 1 || !first.codec->decode_in_place(cur, first.params, out_size)) {
        Bytes next;
        first.codec->decode(in, first.params, out_size, next);
        cur.swap(next);
    }
    if (cur.size() != out_size) throw Error("codec " + std::string(first.codec->name()) + " produced a wrong size");
    if (out_size) std::memcpy(dst, cur.data(), out_size);
}

}  // namespace stz
