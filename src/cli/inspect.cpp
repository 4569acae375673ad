// statezip inspect: the sections of a state file (or of the file inside a .stz).
#include <cstdio>
#include <map>

#include "commands.hpp"
#include "file_io.hpp"
#include "report.hpp"
#include "stats.hpp"

namespace stzcli {

using namespace stz;

namespace {

std::string opt_json(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "null"; }

// Header properties of a .stz (container.hpp), e.g. lossy or reference: {"key": {"value": .., "required": ..}}.
std::string properties_json(const std::vector<HeaderProperty>& props) {
    std::string o = "{";
    for (size_t i = 0; i < props.size(); ++i)
        o += (i ? ", " : "") + json_escape(props[i].key) + ": {\"value\": " + json_escape(props[i].value) +
             ", \"required\": " + (props[i].required ? "true" : "false") + "}";
    return o + "}";
}

void print_json(const std::string& file, const ParsedFile& pf, uint64_t size, const std::vector<ByteStats>* stats,
                const std::vector<uint64_t>* stored, bool last, const std::vector<HeaderProperty>* props = nullptr) {
    std::printf("  {\"file\": %s, \"format\": %s, \"version\": %s, \"detail\": %s, \"note\": %s, \"bytes\": %llu,\n",
                json_escape(file).c_str(), json_escape(pf.format).c_str(),
                pf.version ? std::to_string(*pf.version).c_str() : "null", json_escape(pf.detail).c_str(),
                json_escape(pf.note).c_str(), (unsigned long long)size);
    std::printf("   \"arch\": %s, \"n_tokens\": %s, \"n_cells\": %s, \"n_layer\": %s, \"n_ctx\": %s, \"n_embd\": %s,\n",
                pf.arch.empty() ? "null" : json_escape(pf.arch).c_str(), opt_json(pf.n_tokens).c_str(),
                opt_json(pf.n_cells).c_str(), opt_json(pf.n_layer).c_str(), opt_json(pf.n_ctx).c_str(),
                opt_json(pf.n_embd).c_str());
    if (props) std::printf("   \"properties\": %s,\n", properties_json(*props).c_str());
    std::printf("   \"sections\": [\n");
    for (size_t i = 0; i < pf.sections.size(); ++i) {
        const Section& s = pf.sections[i];
        std::string shape = s.rows ? "[" + std::to_string(s.rows) + ", " + std::to_string(s.row_elems) + "]" : "null";
        std::printf("    {\"name\": %s, \"kind\": %s, \"offset\": %llu, \"bytes\": %llu, \"type\": %s, \"shape\": %s, "
                    "\"transposed\": %s, \"filled\": %s",
                    json_escape(s.name).c_str(), json_escape(section_kind_name(s.kind)).c_str(), (unsigned long long)s.offset,
                    (unsigned long long)s.size, json_escape(s.type_string()).c_str(), shape.c_str(),
                    s.transposed ? "true" : "false", s.filled_elems ? std::to_string(s.filled_elems).c_str() : "null");
        if (stats)
            std::printf(", \"zero_pct\": %s, \"entropy\": %s, \"channel_bound\": %s", fixed(100 * (*stats)[i].zero_fraction, 2).c_str(),
                        fixed((*stats)[i].entropy_bits, 3).c_str(),
                        (*stats)[i].channel_bound ? fixed((*stats)[i].channel_bound, 3).c_str() : "null");
        if (stored) std::printf(", \"stored\": %llu", (unsigned long long)(*stored)[i]);
        std::printf("}%s\n", i + 1 < pf.sections.size() ? "," : "");
    }
    std::printf("   ]}%s\n", last ? "" : ",");
}

void print_table(const std::string& file, const ParsedFile& pf, uint64_t size, const std::vector<ByteStats>* stats,
                 const std::vector<uint64_t>* stored, const std::vector<HeaderProperty>* props = nullptr) {
    std::printf("%s: %s, %s\n", printable(file).c_str(),
                format_line(pf.format, pf.version ? int64_t(*pf.version) : -1, pf.detail).c_str(), human_bytes(size).c_str());
    std::string facts;
    auto fact = [&](const char* k, const std::optional<uint64_t>& v) {
        if (v) facts += std::string(facts.empty() ? "" : ", ") + k + " " + std::to_string(*v);
    };
    if (!pf.arch.empty()) facts = "arch " + pf.arch;
    fact("tokens", pf.n_tokens);
    fact("cells", pf.n_cells);
    fact("layers", pf.n_layer);
    fact("n_ctx", pf.n_ctx);
    fact("n_embd", pf.n_embd);
    if (!facts.empty()) std::printf("  %s\n", printable(facts).c_str());
    if (!pf.note.empty()) std::printf("  note: %s\n", printable(pf.note).c_str());
    if (props)
        for (const auto& p : *props)
            std::printf("  %s: %s%s\n", printable(p.key).c_str(), printable(p.value).c_str(), p.required ? " (needed to decode)" : "");
    std::printf("  %-24s %12s %12s  %-6s %-26s %7s %7s %7s\n", "section", "offset", "bytes", "type", "shape",
                stats ? "zero%" : "stored", stats ? "H0 b/B" : "ratio", stats ? "ch b/el" : "");
    std::map<std::string, std::pair<uint64_t, uint64_t>> totals;
    for (size_t i = 0; i < pf.sections.size(); ++i) {
        const Section& s = pf.sections[i];
        auto& t = totals[section_kind_name(s.kind)];
        t.first += s.size;
        if (stored) t.second += (*stored)[i];
        if (stats) {
            const auto& st = (*stats)[i];
            std::printf("  %-24s %12llu %12llu  %-6s %-26s %7.2f %7.3f %7s\n", printable(s.name).c_str(), (unsigned long long)s.offset,
                        (unsigned long long)s.size, printable(s.type_string()).c_str(), printable(s.shape_string()).c_str(),
                        100 * st.zero_fraction,
                        st.entropy_bits, st.channel_bound ? fixed(st.channel_bound, 2).c_str() : "");
        } else {
            uint64_t k = (*stored)[i];
            std::printf("  %-24s %12llu %12llu  %-6s %-26s %7llu %7.3f\n", printable(s.name).c_str(), (unsigned long long)s.offset,
                        (unsigned long long)s.size, printable(s.type_string()).c_str(), printable(s.shape_string()).c_str(),
                        (unsigned long long)k,
                        k ? double(s.size) / k : 0.0);
        }
    }
    std::printf("  totals by kind:");
    for (auto& [k, v] : totals) {
        std::printf(" %s %s", printable(k).c_str(), human_bytes(v.first).c_str());
        if (stored) std::printf(" (stored %s)", human_bytes(v.second).c_str());
        std::printf(";");
    }
    std::printf("\n");
}

}  // namespace

int run_inspect(const std::vector<std::string>& files, bool json, const ParseHints& hints) {
    int rc = 0;
    const bool array = json && files.size() > 1;  // one file: a single JSON object
    if (array) std::printf("[\n");
    for (size_t fi = 0; fi < files.size(); ++fi) {
        const std::string& f = files[fi];
        try {
            FileSource src(f);
            Bytes head(std::min<uint64_t>(8, src.size()));
            src.read_at(0, head.data(), head.size());
            if (looks_like_stz(head)) {
                ContainerListing L = list_container(src);
                ParsedFile pf;
                pf.format = L.header.format;
                if (L.header.format_version >= 0) pf.version = L.header.format_version;
                pf.detail = L.header.detail;
                pf.note = L.header.note;
                pf.sections = L.header.sections;
                std::vector<uint64_t> stored(pf.sections.size());
                for (const auto& e : L.index) stored[e.section] += e.stored_size;
                if (json) print_json(f, pf, L.header.original_size, nullptr, &stored, fi + 1 == files.size(), &L.header.properties);
                else print_table(f, pf, L.header.original_size, nullptr, &stored, &L.header.properties);
                continue;
            }
            ParsedFile pf = parse_state_file(src, hints);
            std::vector<ByteStats> stats;
            for (const auto& s : pf.sections) stats.push_back(section_stats(src, s, 256u << 10));
            if (json) print_json(f, pf, src.size(), &stats, nullptr, fi + 1 == files.size());
            else print_table(f, pf, src.size(), &stats, nullptr);
        } catch (const std::exception& e) {
            print_error(f, e.what());
            rc = 1;
        }
    }
    if (array) std::printf("]\n");
    return rc;
}

}  // namespace stzcli
