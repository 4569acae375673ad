// Tries each format parser in turn; anything unrecognised becomes one opaque section.
#include "parsers.hpp"

namespace stz {

using ParserFn = std::optional<ParsedFile> (*)(InputSource&, const ParseHints&);

// Order matters only where magic numbers are shared: the legacy parser takes session
// files up to v7, the mainline parser v8 and later. Adding a flavour: one line here.
static const ParserFn kParsers[] = {
    parse_mainline,
    parse_legacy,
};

ParsedFile parse_state_file(InputSource& in, const ParseHints& hints) {
    for (ParserFn p : kParsers) {
        try {
            if (auto pf = p(in, hints)) {
                check_tiling(pf->sections, in.size());
                return *pf;
            }
        } catch (const DataError&) {
            // a parser that runs off the data is just not the right one
        }
    }
    ParsedFile pf;
    pf.note = in.size() ? "not a recognised llama.cpp state file: compressed as one opaque section" : "";
    SectionList out;
    if (in.size()) out.add("data", SectionKind::Opaque, in.size());
    pf.sections = std::move(out.sections());
    return pf;
}

}  // namespace stz
