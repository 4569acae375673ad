// Synthetic state files (tools/synth.cpp, written per the spec) and parsing them from memory:
// the helpers of the tests that plan or parse whole files.
#pragma once
#include <catch2/catch.hpp>

#include "engine/engine.hpp"
#include "formats/detect.hpp"
#include "synth.hpp"
#include "test_util.hpp"

namespace stztest {

// The bytes of the state file `s` describes.
inline stz::Bytes synth(const stzsynth::Spec& s) {
    stz::MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

// `b` parsed as a state file (throws, as parse_state_file does, on a bad file).
inline stz::ParsedFile parse(const stz::Bytes& b, const stz::ParseHints& h = {}) {
    stz::MemorySource src(b);
    return stz::parse_state_file(src, h);
}

// A file whose plan gathers sections: the same bytes with one and with two threads, both
// decoding to the file, and compress_parsed's statistics still per parsed section of `pf`.
inline void check_gathered_round_trip(const stz::Bytes& file, const stz::ParsedFile& pf) {
    stz::CompressOptions one, two;
    two.threads = 2;
    const stz::Bytes a = compress_bytes(file, one), b = compress_bytes(file, two);
    CHECK(a == b);
    CHECK(decompress_bytes(a) == file);
    CHECK(decompress_bytes(a, 2) == file);
    stz::MemorySource src(file);
    stz::MemorySink sink;
    const stz::CompressResult r = stz::compress_parsed(src, pf, sink, one);
    CHECK(r.sections.size() == pf.sections.size());
    CHECK(sink.out == a);
}

}  // namespace stztest
