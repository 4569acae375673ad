// --patch-from=REF on the command line: opens REF once for all inputs, compresses given it,
// and hands it to every decoder (decompress, test, verification).
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "commands.hpp"
#include "engine/engine.hpp"
#include "file_io.hpp"

namespace stzcli {

// The reference file named by --patch-from, opened once (nullptr when none was given).
// REF cannot be standard input nor a FIFO: it is read more than once.
std::shared_ptr<FileSource> open_reference(const std::string& path);

// Every output made with --patch-from needs REF to decode, so no run may remove or replace
// it: returns the line refusing the run when REF (compared by device and inode, after links)
// is an input that --rm would remove, an output file, or standard output; "" when none is.
// `output_of` gives each input's output path ("-" standard output, "" none or unknown).
std::string reference_clash(const Options& o, const struct stat& ref,
                            const std::function<std::string(const std::string&)>& output_of);

// Compresses `in` given `ref` (named as the user gave it); the result as compress_stream
// reports it, with the original sizes, plus a -v line on sharing in `detail`.
stz::CompressResult compress_with_reference(stz::InputSource& in, stz::InputSource& ref, const std::string& ref_name,
                                            stz::OutputSink& out, const stz::CompressOptions& opt, std::string& detail);

}  // namespace stzcli
