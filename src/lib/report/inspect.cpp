#include "inspect.hpp"

#include <cstdarg>
#include <cstdio>

#include "container/container.hpp"

namespace stz {

namespace {

std::string opt_json(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "null"; }

// printf onto the end of a string.
[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {
        const size_t at = out.size();
        out.resize(at + size_t(n) + 1);
        std::vsnprintf(out.data() + at, size_t(n) + 1, fmt, ap2);
        out.resize(at + size_t(n));
    }
    va_end(ap2);
}

// Header properties of a .stz (container.hpp), e.g. lossy or reference: {"key": {"value": .., "required": ..}}.
std::string properties_json(const std::vector<HeaderProperty>& props) {
    std::string o = "{";
    for (size_t i = 0; i < props.size(); ++i)
        o += (i ? ", " : "") + json_escape(props[i].key) + ": {\"value\": " + json_escape(props[i].value) +
             ", \"required\": " + (props[i].required ? "true" : "false") + "}";
    return o + "}";
}

}  // namespace

InspectReport inspect_input(InputSource& in, const ParseHints& hints) {
    InspectReport r;
    Bytes head(std::min<uint64_t>(8, in.size()));
    in.read_at(0, head.data(), head.size());
    if (looks_like_stz(head)) {
        ContainerListing L = list_container(in);
        ParsedFile& pf = r.parsed;
        pf.format = L.header.format;
        if (L.header.format_version >= 0) pf.version = L.header.format_version;
        pf.detail = L.header.detail;
        pf.note = L.header.note;
        pf.sections = L.header.sections;
        r.stored.assign(pf.sections.size(), 0);
        for (const auto& e : L.index) r.stored[e.section] += e.stored_size;
        r.properties = L.header.properties;
        r.bytes = rebuilt_size(L.header);  // refuses a patched_size its reference cannot justify
        if (const HeaderProperty* p = L.header.property(kReferenceProperty)) {
            auto id = parse_reference_identity(p->value);
            if (!id) throw DataError("unreadable reference property '" + p->value + "'", 16);
            r.patch = InspectPatch{*id, L.header.original_size};
        }
        r.is_stz = true;
        return r;
    }
    r.parsed = parse_state_file(in, hints);
    for (const auto& s : r.parsed.sections) r.stats.push_back(section_stats(in, s, 256u << 10));
    r.bytes = in.size();
    return r;
}

std::string inspect_json(const std::string& file, const InspectReport& r) {
    const ParsedFile& pf = r.parsed;
    std::string o;
    appendf(o, "  {\"file\": %s, \"format\": %s, \"version\": %s, \"detail\": %s, \"note\": %s, \"bytes\": %llu,\n",
            json_escape(file).c_str(), json_escape(pf.format).c_str(),
            pf.version ? std::to_string(*pf.version).c_str() : "null", json_escape(pf.detail).c_str(),
            json_escape(pf.note).c_str(), (unsigned long long)r.bytes);
    appendf(o, "   \"arch\": %s, \"n_tokens\": %s, \"n_cells\": %s, \"n_layer\": %s, \"n_ctx\": %s, \"n_embd\": %s,\n",
            pf.arch.empty() ? "null" : json_escape(pf.arch).c_str(), opt_json(pf.n_tokens).c_str(),
            opt_json(pf.n_cells).c_str(), opt_json(pf.n_layer).c_str(), opt_json(pf.n_ctx).c_str(),
            opt_json(pf.n_embd).c_str());
    if (r.is_stz) o += "   \"properties\": " + properties_json(r.properties) + ",\n";
    if (r.patch)
        appendf(o, "   \"patch\": {\"reference\": %s, \"reference_bytes\": %llu, \"reference_xxh128\": %s, \"stored_stream_bytes\": %llu},\n",
                json_escape(r.patch->reference.name).c_str(), (unsigned long long)r.patch->reference.size,
                json_escape(r.patch->reference.xxh128).c_str(), (unsigned long long)r.patch->stored_stream_bytes);
    o += "   \"sections\": [\n";
    for (size_t i = 0; i < pf.sections.size(); ++i) {
        const Section& s = pf.sections[i];
        char shape[48] = "null";
        if (s.rows) std::snprintf(shape, sizeof shape, "[%llu, %llu]", (unsigned long long)s.rows, (unsigned long long)s.row_elems);
        appendf(o, "    {\"name\": %s, \"kind\": %s, \"offset\": %llu, \"bytes\": %llu, \"type\": %s, \"shape\": %s, "
                   "\"transposed\": %s, \"filled\": %s",
                json_escape(s.name).c_str(), json_escape(section_kind_name(s.kind)).c_str(), (unsigned long long)s.offset,
                (unsigned long long)s.size, json_escape(s.type_string()).c_str(), shape,
                s.transposed ? "true" : "false", s.filled_elems ? std::to_string(s.filled_elems).c_str() : "null");
        if (!r.is_stz) {
            const ByteStats& st = r.stats[i];
            appendf(o, ", \"zero_pct\": %s, \"entropy\": %s, \"channel_bound\": %s", fixed(100 * st.zero_fraction, 2).c_str(),
                    fixed(st.entropy_bits, 3).c_str(), st.channel_bound ? fixed(st.channel_bound, 3).c_str() : "null");
        } else {
            appendf(o, ", \"stored\": %llu", (unsigned long long)r.stored[i]);
        }
        o += i + 1 < pf.sections.size() ? "},\n" : "}\n";
    }
    o += "   ]}";
    return o;
}

}  // namespace stz
