// --patch-from=REF on the command line: opens REF once for all inputs, compresses given it,
// and hands it to every decoder (decompress, test, verification).
#pragma once
#include <memory>
#include <string>

#include "engine.hpp"

namespace stzcli {

// The reference file named by --patch-from, opened once (nullptr when none was given).
// REF cannot be standard input: it is read more than once.
std::shared_ptr<stz::InputSource> open_reference(const std::string& path);

// Compresses `in` given `ref` (named as the user gave it); the result as compress_stream
// reports it, with the original sizes, plus a -v line on sharing in `detail`.
stz::CompressResult compress_with_reference(stz::InputSource& in, stz::InputSource& ref, const std::string& ref_name,
                                            stz::OutputSink& out, const stz::CompressOptions& opt, std::string& detail);

}  // namespace stzcli
